"""The pipeline's terminal log and its record of the code it ran: what lets `make test` check the smoke run that
`make pipeline` just made instead of running the pipeline a second time, and only when that run is this code's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import layout, pipeline
from helpers.io import versions, write_json
from helpers.layout import RunLayout

import conftest


def _complete_run(run_dir: Path) -> RunLayout:
    """A run folder whose record says: every notebook ok, plain smoke profile, this code, these packages."""
    lay = RunLayout(run_dir)
    stages = [{"notebook": nb.name, "status": "ok", "seconds": 1.0} for nb in pipeline.discover_notebooks()]
    write_json(lay.pipeline_record, {"stages": stages, "source": pipeline.source_fingerprint(),
                                     "params": {"PROFILE": "smoke", "RUN": run_dir.name, "OVERRIDES": {}},
                                     "versions": versions()})
    lay.terminal_log.write_text("[pipeline] done\n")
    return lay


def _edit_record(lay: RunLayout, **changes) -> None:
    """Rewrite pipeline.json with some keys changed."""
    record = json.loads(lay.pipeline_record.read_text())
    write_json(lay.pipeline_record, {**record, **changes})


def test_a_complete_run_of_this_code_is_current(tmp_path):
    _complete_run(tmp_path / "smoke")
    assert pipeline.why_not_current(tmp_path / "smoke", "smoke") is None


@pytest.mark.parametrize("change,needle", [
    ({"params": {"PROFILE": "smoke", "RUN": "smoke", "OVERRIDES": {"seed": 1}}}, "parameters"),
    ({"params": {"PROFILE": "cpu", "RUN": "smoke", "OVERRIDES": {}}}, "parameters"),
    ({"rehearsal": {"profile": "mi300x"}}, "rehearsal"),
    ({"source": "0" * 64}, "files changed"),
    ({"versions": {**versions(), "torch": "0.0.1"}}, "packages changed"),
])
def test_a_run_of_other_settings_code_or_packages_is_not_current(tmp_path, change, needle):
    lay = _complete_run(tmp_path / "smoke")
    _edit_record(lay, **change)
    assert needle in pipeline.why_not_current(tmp_path / "smoke", "smoke")


@pytest.mark.parametrize("cut", ["failed", "missing"])
def test_a_run_with_a_failed_or_missing_notebook_is_not_current(tmp_path, cut):
    lay = _complete_run(tmp_path / "smoke")
    stages = json.loads(lay.pipeline_record.read_text())["stages"]
    stages = stages[:-1] if cut == "missing" else [*stages[:-1], {**stages[-1], "status": "failed"}]
    _edit_record(lay, stages=stages)
    assert "notebook" in pipeline.why_not_current(tmp_path / "smoke", "smoke")


def test_a_run_without_its_record_or_terminal_log_is_not_current(tmp_path):
    assert "pipeline.json" in pipeline.why_not_current(tmp_path / "smoke", "smoke")
    lay = _complete_run(tmp_path / "smoke")
    lay.terminal_log.unlink()
    assert "terminal.txt" in pipeline.why_not_current(tmp_path / "smoke", "smoke")


def test_the_fingerprint_follows_the_kits_files_and_skips_caches(tmp_path):
    (tmp_path / "helpers" / "__pycache__").mkdir(parents=True)
    (tmp_path / "helpers" / "a.py").write_text("x = 1\n")
    before = pipeline.source_fingerprint(tmp_path)
    (tmp_path / "helpers" / "__pycache__" / "a.pyc").write_bytes(b"compiled")
    (tmp_path / "helpers" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "helpers" / ".ipynb_checkpoints" / "a.py").write_text("x = 3\n")
    assert pipeline.source_fingerprint(tmp_path) == before
    (tmp_path / "helpers" / "a.py").write_text("x = 2\n")
    assert pipeline.source_fingerprint(tmp_path) != before
    (tmp_path / "helpers" / "a.py").write_text("x = 1\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "smoke.yaml").write_text("seed: 1\n")
    assert pipeline.source_fingerprint(tmp_path) != before


def test_the_fingerprint_follows_the_pins_but_not_the_tools_settings(tmp_path):
    """A pytest marker or a mypy setting decides no run, so make test still takes the smoke run make pipeline made."""
    project = '[project]\nname = "kit"\ndependencies = ["peft==0.15.2"]\n\n'
    tools = '[tool.pytest.ini_options]\nmarkers = ["a: one"]\n\n[[tool.mypy.overrides]]\nmodule = "x"\n'
    (tmp_path / "pyproject.toml").write_text(project + tools)
    before = pipeline.source_fingerprint(tmp_path)
    (tmp_path / "pyproject.toml").write_text(project + tools.replace("a: one", "a: two") + "[tool.mypy]\nstrict = true\n")
    assert pipeline.source_fingerprint(tmp_path) == before
    (tmp_path / "pyproject.toml").write_text(project.replace("0.15.2", "0.15.3") + tools)
    assert pipeline.source_fingerprint(tmp_path) != before
    (tmp_path / "pyproject.toml").write_text(tools + project)  # a [project] table after the tools' still counts
    assert pipeline.source_fingerprint(tmp_path) == before
    (tmp_path / "pyproject.toml").write_text(tools + project.replace("0.15.2", "0.15.3"))
    assert pipeline.source_fingerprint(tmp_path) != before


def test_the_terminal_log_keeps_what_child_processes_print_and_lets_go_after(tmp_path, capfd):
    log = tmp_path / "terminal.txt"
    with pipeline.tee_terminal(log):
        subprocess.run([sys.executable, "-c", "import sys; print('out-line'); print('err-line', file=sys.stderr)"],
                       check=True)
        os.write(1, b"parent-line\n")
    os.write(1, b"after-line\n")
    text = log.read_text()
    assert "out-line" in text and "err-line" in text and "parent-line" in text and "after-line" not in text
    shown = capfd.readouterr()
    assert "out-line" in shown.out and "err-line" in shown.err and "after-line" in shown.out  # still shown


def test_a_child_that_outlives_the_tee_still_reaches_the_log_and_nothing_else(tmp_path, capfd):
    log = tmp_path / "terminal.txt"
    with pipeline.tee_terminal(log):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1); print('late-line', flush=True)"])
    unrelated = tmp_path / "next.txt"
    with open(unrelated, "w") as fh:  # takes the lowest free descriptor, as pipeline.json's write would
        fh.write("mine\n")
    child.wait()
    assert "late-line" in log.read_text() and unrelated.read_text() == "mine\n"


def test_make_test_takes_the_made_run_only_when_it_is_current(tmp_path, monkeypatch):
    monkeypatch.setattr(conftest, "USER_RUNS", tmp_path)
    monkeypatch.delenv("KIT_FRESH_PIPELINE", raising=False)
    assert conftest.smoke_run_to_check()[0] is None and "pipeline.json is missing" in conftest.smoke_run_to_check()[1]
    _complete_run(tmp_path / "smoke")
    assert conftest.smoke_run_to_check()[0] == tmp_path / "smoke"
    monkeypatch.setenv("KIT_FRESH_PIPELINE", "1")
    assert conftest.smoke_run_to_check() == (None, "KIT_FRESH_PIPELINE=1")


def test_an_unreadable_record_is_a_reason_not_a_crash(tmp_path):
    lay = _complete_run(tmp_path / "smoke")
    lay.pipeline_record.write_text("{not json")
    assert "unreadable" in pipeline.why_not_current(tmp_path / "smoke", "smoke")
    write_json(lay.pipeline_record, {"stages": [{"notebook": "00_env_check.ipynb"}]})
    assert "unreadable" in pipeline.why_not_current(tmp_path / "smoke", "smoke")


def test_a_rerun_drops_the_old_record_before_its_first_notebook(tmp_path, monkeypatch):
    """A re-run killed part way must not leave the last complete run's record to vouch for half-rewritten files."""
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    lay = _complete_run(tmp_path / "smoke")
    seen = []
    monkeypatch.setattr(pipeline, "_run_notebooks", lambda *a: seen.append(lay.pipeline_record.exists()))
    monkeypatch.setattr(pipeline, "_write_report", lambda run_dir: None)
    pipeline.run_pipeline("smoke", "smoke")
    assert seen == [False]


# ---------------------------------------------------------------- the training notebooks side by side
def test_only_the_training_notebooks_go_side_by_side():
    names = [Path(n) for n in ("02_curriculum.ipynb", "03_a.ipynb", "04_b.ipynb", "05_c.ipynb", "06_v.ipynb",
                               "07_e.ipynb", "08_t.ipynb", "09_m.ipynb")]
    assert pipeline.side_by_side(names) == names[:1]
    assert pipeline.side_by_side(names[1:]) == names[1:4] + names[6:7]  # 08 joins 03-05
    assert pipeline.side_by_side(names[3:]) == [names[3], names[6]]
    assert pipeline.side_by_side(names[4:]) == names[4:5]


def _run_order(jobs: int) -> list[list[str]]:
    """The groups the pipeline runs the stage table's notebooks in, `jobs` of a group at a time."""
    notebooks = [Path(f"{nb}.ipynb") for nb in sorted(layout.NOTEBOOKS.values())]
    return [[p.stem for p in group] for group, _, _ in pipeline.run_order(notebooks, lambda n: (jobs, ""))]


@pytest.mark.parametrize("jobs", [1, 3])
def test_every_notebook_runs_once_after_the_notebooks_whose_files_it_reads(jobs):
    groups = _run_order(jobs)
    assert sorted(nb for g in groups for nb in g) == sorted(layout.NOTEBOOKS.values())
    written_by = {path: stage for stage in layout.STAGES for path in stage.writes}
    done: set[str] = set()
    for group in groups:
        for nb in group:
            stage = next(s for s in layout.STAGES if nb in s.notebooks)
            early = {path: written_by[path].notebooks for path in stage.reads
                     if path in written_by and not set(written_by[path].notebooks) & done}
            assert not early, (nb, "reads before its writer ran", early)
        done |= set(group)
    if jobs > 1:
        assert set(groups[3]) == {layout.NOTEBOOKS[n] for n in ("03", "04", "05", "08")}, groups


@pytest.mark.parametrize("backend,weights,threads,cores,jobs", [
    ("cpu", "tiny", None, 2, 3),         # the tiny model trains on one thread: all three on 2 cores
    ("cpu", "tiny", None, 1, 1),         # one core: one at a time
    ("cpu", "smollm2-135m", 2, 2, 1),    # the cpu profile's 2 threads take both cores
    ("cpu", "smollm2-135m", None, 16, 1),  # torch's default threads take every core
    ("cuda", "tiny", None, 16, 1),       # a GPU's memory is planned for one training
    (None, "tiny", None, 2, 1),          # no env.json: nothing known, one at a time
])
def test_the_trainings_run_side_by_side_only_on_a_cpu_with_cores_to_spare(tmp_path, monkeypatch, backend, weights,
                                                                           threads, cores, jobs):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    monkeypatch.delenv("KIT_TRAINING_JOBS", raising=False)
    cfg = pipeline.config.load_profile("smoke", "jobs", {"model.stand_in": weights} if weights != "tiny" else {})
    cfg = pipeline.config.with_overrides(cfg, {"train.cpu_threads": threads})
    if backend:
        write_json(RunLayout.of(cfg).env, {"recommendation": {"backend": backend}})
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert pipeline.training_jobs(cfg, 3)[0] == jobs
    monkeypatch.setenv("KIT_TRAINING_JOBS", "1")
    assert pipeline.training_jobs(cfg, 3) == (1, "KIT_TRAINING_JOBS")


def test_fresh_starts_every_training_over_and_passes_resume_only_where_a_notebook_declares_it(tmp_path, monkeypatch):
    """make pipeline FRESH=1: RESUME = False reaches each notebook whose parameters cell declares RESUME (the
    trainings, which refuse to resume once their data or settings changed), and no other (papermill would warn of an
    unknown parameter); without it, nothing but the run's own three parameters is passed."""
    import papermill

    def notebook(name: str, params: str) -> None:
        cell = {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": params, "outputs": []}
        (tmp_path / name).write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    run_params = 'PROFILE = "smoke"  # a profile\nRUN = None\nOVERRIDES: dict = {}  # keys\n'
    notebook("00_env_check.ipynb", run_params)
    notebook("03_train_model1_lora.ipynb", run_params + "RESUME = True  # continue\nSANITY_QUESTIONS = 3\n")
    assert pipeline.declared_parameters(tmp_path / "03_train_model1_lora.ipynb") == {
        "PROFILE", "RUN", "OVERRIDES", "RESUME", "SANITY_QUESTIONS"}
    notebook("99_odd.ipynb", "X: int\nY = 1  # = not a name\nA, B = 1, 2\nC == 3\n")
    assert pipeline.declared_parameters(tmp_path / "99_odd.ipynb") == {"X", "Y", "A", "B"}
    (tmp_path / "99_odd.ipynb").unlink()
    trainings = {nb.name[:2] for nb in pipeline.discover_notebooks() if "RESUME" in pipeline.declared_parameters(nb)}
    assert trainings == {"03", "04", "05", "08"}  # every notebook that trains takes it, and no other
    seen: dict = {}
    monkeypatch.setattr(papermill, "execute_notebook",
                        lambda src, out, parameters, **kw: seen.__setitem__(Path(src).name, parameters))
    monkeypatch.setattr(pipeline, "_write_report", lambda run_dir: None)
    for fresh in (True, False):
        pipeline.run_pipeline("smoke", "fresh-run", nb_dir=tmp_path, fresh=fresh)
        assert set(seen["00_env_check.ipynb"]) == {"PROFILE", "RUN", "OVERRIDES"}
        assert seen["03_train_model1_lora.ipynb"].get("RESUME", "absent") == (False if fresh else "absent")
        record = json.loads(RunLayout.of("fresh-run").pipeline_record.read_text())
        assert record["params"] == {"PROFILE": "smoke", "RUN": "fresh-run", "OVERRIDES": {}}
        assert record.get("fresh", False) is fresh
