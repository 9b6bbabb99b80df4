"""Tier 3: the smoke pipeline end to end over whatever notebooks exist, plus the runner's failure path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from helpers import config, pipeline
from helpers.layout import NOTEBOOKS, RunLayout, filtered_name
from helpers.puzzles import deduction

import _learning
from conftest import smoke_run_to_check

ROOT = Path(__file__).resolve().parent.parent

# What each stage must leave under runs/<run>/: its files, named by the run layout (helpers.layout).
LAY = RunLayout(Path("."))
TRAINED = {nn: NOTEBOOKS[nn].removeprefix(f"{nn}_train_") for nn in ("03", "04", "05")}  # "03" -> "model1_lora"
STAGE_ARTIFACTS = {nn: [LAY.rel(p) for p in paths] for nn, paths in {
    "00": [LAY.env, LAY.executed_notebook(NOTEBOOKS["00"])],
    "01": [LAY.train_data, LAY.val_data, LAY.data_report],
    "02": [LAY.curriculum, LAY.curriculum_stats],
    **{nn: [LAY.model_summary(name), LAY.metrics(name)] for nn, name in TRAINED.items()},
    "06": [LAY.eval_summary],
    "07": [LAY.ensemble_summary],
    "08": [LAY.writer_data, LAY.adapter_dir(config.WRITER) / "adapter_config.json",
           LAY.reasoner_data, LAY.reasoner_data_counts, LAY.adapter_dir(config.REASONER) / "adapter_config.json"],
    "09": [LAY.writer_report, LAY.reasoner_report],
    "10": [LAY.tournament, LAY.filtered_questions, filtered_name(LAY.answers)],
}.items()}


def _notebook(path: Path, cells: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('PROFILE = "smoke"  # profile\nRUN = None  # run\nOVERRIDES = {}  # dotted')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params] + [nbformat.v4.new_code_cell(src) for src in cells]
    nbformat.write(nb, str(path))
    return path


def test_failure_names_the_notebook_and_the_cell(tmp_path):
    _notebook(tmp_path / "00_ok.ipynb", ["x = 1"])
    _notebook(tmp_path / "01_boom.ipynb", ["y = 2", "# the failing cell\nraise ValueError('deliberate failure 42')"])
    _notebook(tmp_path / "02_never.ipynb", ["open('should-not-run', 'w')"])
    with pytest.raises(pipeline.StageFailed) as info:
        pipeline.run_pipeline("smoke", "failtest", nb_dir=tmp_path)
    msg = str(info.value)
    assert "01_boom.ipynb" in msg and "deliberate failure 42" in msg and "ValueError" in msg
    assert "cell 3" in msg and "raise ValueError" in msg  # params, injected params, y=2, then the failing cell
    assert not (tmp_path / "should-not-run").exists()
    record = json.loads((config.runs_root() / "failtest" / "pipeline.json").read_text())
    assert [s["status"] for s in record["stages"]] == ["ok", "failed"]


def test_cli_rejects_bad_arguments_in_one_line():
    for args, needle in ((["--overrides", "[1]"], "JSON object"), (["--profile", "nope"], "no profile 'nope'"),
                         (["--overrides", '{"train.nosuch": 1}'], "unknown key")):
        proc = subprocess.run([sys.executable, "-m", "helpers.pipeline", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert needle in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """The smoke run `make pipeline` made of this very code (conftest.smoke_run_to_check), else every notebook run
    once on the smoke profile into a temp folder, whose record must then pass for current (what the other path
    takes); what the kernels print is in the run's terminal.txt either way."""
    made, _ = smoke_run_to_check()
    if made is not None:
        yield made, json.loads(RunLayout(made).pipeline_record.read_text())["stages"]
        return
    mp = pytest.MonkeyPatch()
    mp.setenv("KIT_RUNS_DIR", str(tmp_path_factory.mktemp("pipeline-runs")))
    try:
        results = pipeline.run_pipeline("smoke", "smoke")
        run = config.runs_root() / "smoke"
        assert pipeline.why_not_current(run, "smoke") is None, pipeline.why_not_current(run, "smoke")
        yield run, results
    finally:
        mp.undo()


@pytest.mark.pipeline
def test_smoke_pipeline_runs_every_notebook(smoke_run):
    run, results = smoke_run
    names = [p.name for p in pipeline.discover_notebooks()]
    assert sorted(r["notebook"] for r in results) == names and all(r["status"] == "ok" for r in results)
    for name in names:
        executed = nbformat.read(str(run / "notebooks" / name), as_version=4)
        errors = [o for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.get("output_type") == "error"]
        assert not errors, f"{name}: error outputs in the executed copy"
        for artifact in STAGE_ARTIFACTS[name[:2]]:
            assert (run / artifact).exists(), f"{name} did not write {artifact}"
    # the run report (helpers.report): every stage's section filled, links to each executed notebook, plots inlined
    report_md, report_html = run / "report.md", run / "report.html"
    assert report_md.is_file() and report_html.is_file(), "the pipeline did not write report.md / report.html"
    text = report_md.read_text(encoding="utf-8")
    for needle in ("not run:", "unreadable:", "unexpected content:", "plot missing:", "failed**"):
        assert needle not in text, f"report.md says {needle!r}"
    assert all(f"(notebooks/{name})" in text for name in names)
    assert "data:image/png;base64," in report_html.read_text(encoding="utf-8")


@pytest.mark.pipeline
def test_a_passing_pipeline_prints_no_error_or_traceback(smoke_run):
    """Kernels write to the terminal the pipeline runs in: a passing run shows no ERROR line and no traceback
    there (one did: "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.", see helpers.pipeline)."""
    run, _ = smoke_run
    lines = RunLayout(run).terminal_log.read_text(encoding="utf-8", errors="replace").splitlines()
    bad = [line for line in lines if "ERROR" in line or "Traceback" in line]
    assert not bad, "\n".join(bad[:10])


@pytest.mark.pipeline
def test_the_smoke_writer_is_trained_measured_and_fielded_as_its_measurement_says(smoke_run):
    from helpers.agents.stages.writer_measure import justified_share
    run, _ = smoke_run
    rep = json.loads((run / "agents" / "writer.json").read_text())
    share, _ = justified_share(rep)
    assert rep["base"]["requests"] == rep["writer"]["requests"] == 8 and rep["justified_share"] == share
    assert json.loads((run / "models" / "writer" / "summary.json").read_text())["chunks_done"] == 1
    sources = json.loads((run / "agents" / "tournament.json").read_text())["questions"]["sources"]
    assert ("model" in sources) <= (share > 0), sources  # auto: the writer asks only if its measurement earned it
    conf = json.loads((run / "agents" / "export" / "kit_agent.json").read_text())
    assert conf["agents"]["model_question_share"] == share and (conf["writer"] is not None) == (share > 0)


# What the smoke reasoner's training must show (configs/smoke.yaml: 6 epochs at 2e-3 teach the tiny model the reply's
# shape, words then "Answer: X"; one epoch at 5e-4 wrote one word and stopped, and on deductions that cite every step's
# grounds 3 epochs finished 5 of 12). The shape is judged on the measurement's own held-out puzzles with the deadline
# lifted (reasoner_measure.reply_shape: only the token cap or the reply's own end stops it), so it does not depend on
# the CPU's decode speed: under the 3 s budget, on a 2-core EPYC without AVX-512 and beside other tests, seeds 7, 11
# and 3 finished 2, 8 and 5 of 12 (the rest cut at 94-174 tokens), while on a 2-core Xeon seeds 7, 11 and 3 finished
# 12 of 12 with or without the deadline (14-131 tokens a reply; docs/results.md, The smoke reasoner's reply shape
# across seeds). At the profile's seed (6 epochs, a fresh clone on that Xeon): loss 9.63 -> 2.85 (last/first 0.30);
# deadline lifted, 12/12 replies finished, 93.4 tokens of reasoning on average (82.8 under the budget).
REASONER_MAX_LOSS_RATIO = 0.8     # last logged loss / first; 0.30 measured
REASONER_MIN_FINISHED = 0.75      # share of the 12 replies that stopped on their own, deadline lifted; 1.0 measured
REASONER_MIN_TOKENS = 10          # mean tokens of reasoning before the answer, deadline lifted; 93.4 measured


def _reply_shape_without_deadline(run: Path) -> dict:
    """The trained reasoner on the measurement's held-out puzzles, the deadline lifted
    (reasoner_measure.reply_shape)."""
    from helpers.agents import build
    from helpers.agents.stages import reasoner_measure, reasoner_train
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KIT_RUNS_DIR", str(run.parent))
        cfg = config.load_profile("smoke", run.name)
        model, tokenizer, info = build.load_team_model(cfg, [config.REASONER])
        assert config.REASONER in info["members"], info
        agent = build.answer_agent(model, tokenizer, {"reasoner": config.REASONER}, cfg.agents, mode="reason")
        return reasoner_measure.reply_shape(agent.reasoner, reasoner_train.measure_questions(cfg))


def _reasoner_trained_its_shape(run: Path, reason: dict) -> None:
    """The smoke reasoner's loss fell and its replies have the trained shape: reasoning text that ends by itself
    (helpers.agents.reasoner: at "Answer:" or the turn's end, not the token cap), then the letter."""
    summary = json.loads((run / "models" / "reasoner" / "summary.json").read_text())
    assert summary["chunks_done"] == 1
    assert summary["last_loss"] < REASONER_MAX_LOSS_RATIO * summary["first_loss"], \
        ("the reasoner's training loss did not fall", summary["first_loss"], summary["last_loss"])
    shape = _reply_shape_without_deadline(run)
    assert shape["n"] == reason["n"] and "deadline" not in shape["stops"], shape
    assert shape["stops"].get("finished", 0.0) >= REASONER_MIN_FINISHED, (shape, "under the budget:", reason["stops"])
    assert shape["tokens_mean"] >= REASONER_MIN_TOKENS, shape
    assert all(ex["reasoning"].strip() and ex["answer"] in "ABCD" for ex in reason["examples"]), reason["examples"]


@pytest.mark.pipeline
def test_the_smoke_reasoner_is_trained_measured_and_answers_as_its_measurement_says(smoke_run):
    from helpers.agents.stages.reasoner_measure import justified_mode
    run, _ = smoke_run
    rep = json.loads((run / "agents" / "reasoner.json").read_text())
    mode, _ = justified_mode(rep)
    assert rep["letter"]["n"] == rep["reason"]["n"] == 12 and rep["justified_mode"] == mode
    assert rep["reason"]["filter_failed"] == 0 and rep["reason"]["latency"]["p99_s"] < 6.0
    assert sum(rep["reason"]["stops"].values()) == pytest.approx(1.0)
    _reasoner_trained_its_shape(run, rep["reason"])
    chats = [json.loads(line) for line in (run / "agents" / "reasoner_train.jsonl").read_text().splitlines()]
    sources = Counter(c["reasoning"] for c in chats)  # seating by a checked deduction, never a count of seatings
    assert set(sources) == {"deduction"} and {c["puzzle"]["kind"] for c in chats} & set(deduction.KINSHIP_KINDS)
    assert not any("seatings" in c["chat"][-1]["content"] for c in chats)
    assert rep["training_chats"]["source:deduction"] == sources["deduction"], rep["training_chats"]
    assert json.loads((run / "agents" / "tournament.json").read_text())["answer_mode"] == mode
    conf = json.loads((run / "agents" / "export" / "kit_agent.json").read_text())
    assert conf["agents"]["answer_mode"] == mode and (conf["reasoner"] is not None) == (mode == "reason")


@pytest.mark.pipeline
def test_the_agents_notebooks_release_each_model_before_the_next_loads(smoke_run):
    """The writer's and the reasoner's training copies (08), the team model before the export check and the
    exported Q-agent's copy (10) are each released with nothing left holding them (helpers.models.release says when
    one is); 09 and 10 find nothing held before they load the team model."""
    run, _ = smoke_run
    expected = {"08": ("after training writer", "after training reasoner"),
                "09": ("before loading the team model",),
                "10": ("before loading the team model", "the team model, before the export check",
                       "the exported Q-agent's model")}
    for nn, labels in expected.items():
        executed = nbformat.read(str(run / LAY.rel(LAY.executed_notebook(NOTEBOOKS[nn]))), as_version=4)
        text = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code"
                       for o in c.get("outputs", []))
        lines = [line for line in text.splitlines() if line.startswith("[release]")]
        for label in labels:
            assert any(line.startswith(f"[release] {label}:") for line in lines), (nn, label, lines)
        assert not [line for line in lines if "still referenced" in line], (nn, lines)


@pytest.mark.pipeline
def test_smoke_env_json_has_the_verdict(smoke_run):
    run, _ = smoke_run
    env = json.loads((run / "env.json").read_text())
    assert env["facts"]["backend"] == "cpu"
    assert env["checks"] and {c["status"] for c in env["checks"]} <= {"pass", "warn", "fail", "info"}
    assert env["recommendation"]["dtype"]["value"] == "float32"
    assert env["params"]["profile"] == "smoke" and env["versions"]["torch"]


@pytest.mark.pipeline
def test_smoke_adapters_learn_the_learnable_task(smoke_run):
    """Each adapter beats chance and the base on the questions the tiny model can learn, without a letter
    preference (the rule and its numbers: tests/_learning.py; across seeds and threads: bench/bench_learning.py)."""
    run, _ = smoke_run
    ids = _learning.learnable_ids([json.loads(line) for line in (run / "data" / "val.jsonl").read_text().splitlines()])
    read = lambda name: [json.loads(line) for line in (run / "eval" / f"{name}.jsonl").read_text().splitlines()]
    base = read("base")
    verdicts = {name: _learning.judge(base, read(name), ids) for name in config.load_profile("smoke").models}
    assert len(verdicts) == 3
    failed = {name: v["problems"] for name, v in verdicts.items() if not v["ok"]}
    assert not failed, f"{failed}; all: {verdicts}"


def test_kernels_started_at_once_never_share_a_socket():
    """TCP ports are picked free and bound later, so kernels started together could pick the same one (seen: 08 beside
    03-05 died with "Address already in use"); each kernel gets Unix sockets of its own instead."""
    manager = pipeline.quiet_shutdown_kernel_manager()
    a, b = manager(kernel_name="python3"), manager(kernel_name="python3")
    if os.name != "posix":  # no Unix sockets: TCP, as jupyter_client starts it
        assert a.transport == "tcp"
        return
    assert (a.transport, b.transport) == ("ipc", "ipc") and a.ip != b.ip
    assert os.path.isabs(a.ip)  # not the shared default "kernel-ipc" in the working directory


def test_pipeline_kernels_shut_down_without_an_interrupt():
    """jupyter_client interrupts a kernel before shutting it down; papermill shuts down right after the kernel's
    last reply, so that SIGINT raced the kernel's handler and logged "ERROR | KeyboardInterrupt caught in kernel."
    for a passing notebook. The pipeline's kernel manager skips it at shutdown and keeps it when asked for."""
    import asyncio
    import signal

    async def lifecycle() -> tuple[list, bool]:
        km = pipeline.quiet_shutdown_kernel_manager()(kernel_name=pipeline.kernel_name())
        sent: list = []
        real = km._async_signal_kernel

        async def spy(signum):
            sent.append(signum)
            await real(signum)

        km._async_signal_kernel = spy
        await km.start_kernel(extra_arguments=["--IPKernelApp.log_level=ERROR"])
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=120)
            await km.interrupt_kernel()  # asked for (nbclient's interrupt_on_timeout does this): still sent
            await km.shutdown_kernel()
        finally:
            kc.stop_channels()
        return sent, await km.is_alive()

    sent, alive = asyncio.run(lifecycle())
    assert sent == [signal.SIGINT], f"signals sent to the kernel: {sent}"
    assert not alive
