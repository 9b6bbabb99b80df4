"""make gpu-check (helpers.gpu_check): one line and exit 2 without a GPU, bad input said in one line while the check
goes on, each missing package skipping its step, the record's shape; then (`-m gpucheck`, make test-gpu-check, CI) the
whole check on the CPU, once with every package and once on a box with only torch, transformers, peft and accelerate.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from _tiny import tiny_model_dir
from conftest import ROOT
from helpers import config
from helpers.gpu_check import checks, inputs, steps
from helpers.gpu_check import run as gc_run
from helpers.layout import RunLayout

GIB = 1024 ** 3
# What the target GPU box lacks (torch, transformers, peft and accelerate there, with numpy, pyyaml, matplotlib,
# psutil, safetensors, tokenizers and tqdm): each made unimportable, its metadata gone, in a fresh interpreter.
ABSENT = ("datasets", "trl", "papermill", "unsloth", "unsloth_zoo", "pandas", "pyarrow", "scipy", "sklearn", "IPython",
          "ipywidgets", "ipykernel", "nbformat", "nbclient", "jupyter_client", "gguf", "bitsandbytes", "dill",
          "multiprocess", "xxhash")
SITECUSTOMIZE = textwrap.dedent('''
    """Test support: a box without {absent}: none imports, none has metadata."""
    import importlib.metadata as _md
    import sys as _sys
    _ABSENT = {absent!r}
    for _name in _ABSENT:
        _sys.modules[_name] = None  # `import x` raises ModuleNotFoundError; find_spec says None
    _from_name = _md.Distribution.from_name.__func__
    def _gone(cls, name):
        if name.replace("-", "_").lower() in {{a.lower() for a in _ABSENT}}:
            raise _md.PackageNotFoundError(name)
        return _from_name(cls, name)
    _md.Distribution.from_name = classmethod(_gone)
''')
STEP_NAMES = ["env", "backend", "model", "memory", "train_lora", "train_rslora", "train_dora", "letters", "generate",
              "reasoner", "grpo", "fit"]


@pytest.fixture(autouse=True)
def _environment_restored(monkeypatch):
    """run_check hides the GPUs (--device cpu), turns the kit's headless mode on and may point KIT_RUNS_DIR elsewhere
    for the duration: in this process every such change is undone after each test."""
    for var in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "KIT_HEADLESS", "KIT_RUNS_DIR", "KIT_CACHE_DIR",
                *gc_run.OFFLINE):
        was = os.environ.get(var)
        monkeypatch.setenv(var, was or "")
        if was is None:
            monkeypatch.delenv(var)


def offline_env(tmp: Path) -> dict:
    """The environment of a process (and its children) on a box without ABSENT."""
    site = tmp / "offline-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE.format(absent=ABSENT), encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def gpu_check_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "helpers.gpu_check", *args]


def step(record: dict, name: str) -> dict:
    return next(s for s in record["steps"] if s["name"] == name)


# ---------------------------------------------------------------- no GPU: one line, exit 2, nothing written
def test_without_a_gpu_it_says_so_in_one_line_and_exits_2(tmp_path):
    pytest.importorskip("torch")
    import torch
    if torch.cuda.is_available():
        pytest.skip("this box has a GPU")
    done = subprocess.run(gpu_check_command("--out", str(tmp_path / "out")), cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "no GPU" in done.stderr and "DEVICE=cpu" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_gpu_build_of_torch_that_sees_no_gpu_is_named_in_one_line(monkeypatch, tmp_path, capsys):
    import torch
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gc_run.run_check("auto", out=tmp_path / "out", say=lambda line: None) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a CUDA build but sees no GPU" in err[0] and "--gpus all" in err[0], err
    assert "CUDA_VISIBLE_DEVICES" in err[0] and "DEVICE=cpu" in err[0]
    assert not (tmp_path / "out").exists()
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(torch.version, "hip", "6.2.41133")
    assert "is a ROCm build" in inputs.no_gpu_line(torch)


def test_device_cpu_after_torch_saw_a_gpu_is_refused(monkeypatch):
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with pytest.raises(inputs.NoDevice, match="already sees the GPU"):
        inputs.choose("cpu")


def test_bad_arguments_are_one_line_and_exit_2(tmp_path, capsys):
    assert gc_run.run_check("cpu", out=tmp_path / "o", steps=0, say=lambda line: None) == 2
    assert gc_run.run_check("cpu", out=tmp_path / "o", profile="no-such-profile", say=lambda line: None) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--steps: 0" in err[0] and "no-such-profile" in err[1], err
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------- bad input: one line, the check goes on
def not_a_model(tmp: Path, kind: str) -> Path:
    """A path that is not a model folder, in one of the ways a team's could be."""
    files = {"file": {"weights.safetensors": ""}, "empty": {}, "no_type": {"config.json": "{}"},
             "bin_only": {"config.json": '{"model_type": "qwen2"}', "pytorch_model.bin": ""},
             "no_tokenizer": {"config.json": '{"model_type": "llama"}', "model.safetensors": ""}}.get(kind)
    if files is None:
        return tmp / "absent"
    for name, text in files.items():
        (tmp / name).write_text(text)
    return tmp / "weights.safetensors" if kind == "file" else tmp


@pytest.mark.parametrize("kind, expected", [
    ("absent", "no such folder"), ("file", "a file, not a model folder"), ("empty", "no config.json"),
    ("no_type", "no model_type"), ("bin_only", "no *.safetensors weights (only pytorch_model.bin"),
    ("no_tokenizer", "no tokenizer")])
def test_a_path_that_is_not_a_model_is_named_with_what_is_missing(tmp_path, kind, expected):
    path = not_a_model(tmp_path, kind)
    problem = inputs.model_problem(path)
    assert problem is not None and expected in problem and str(path) in problem, problem
    assert "\n" not in problem


def test_a_real_model_folder_has_no_problem():
    assert inputs.model_problem(tiny_model_dir()) is None


def test_a_tiny_model_passed_as_a_folder_keeps_the_tiny_models_one_thread(tmp_path):
    """`--model <the tiny model's folder>` (runs 12-14 carried tiny-pad that way) is still the tiny model: one torch
    thread on a CPU, where a 16-core box's default pool splits its 128-wide matmuls for nothing."""
    from helpers.models import resolve_base
    from helpers.models.members import cpu_threads
    assert resolve_base(str(tiny_model_dir()))[1] == "tiny" and cpu_threads(None, "tiny") == 1
    (tmp_path / "config.json").write_text("{}")
    assert resolve_base(str(tmp_path))[1] == "local" and cpu_threads(None, "local") is None


def quiet_run(*args, **kwargs) -> tuple[int, dict, list[str]]:
    """run_check in this process; (exit status, gpu-check.json, the lines it said)."""
    lines: list[str] = []
    rc = gc_run.run_check(*args, say=lines.append, **kwargs)
    out = Path(kwargs["out"])
    return rc, json.loads((out / "gpu-check.json").read_text()), lines


def test_a_model_path_that_is_not_a_model_fails_its_step_and_skips_what_needs_it(tmp_path):
    bad = tmp_path / "not-a-model"
    bad.mkdir()
    rc, record, lines = quiet_run("cpu", model=str(bad), out=tmp_path / "out", steps=4)
    assert rc == 1 and record["exit_status"] == 1 and record["failed"] == ["model"]
    model = step(record, "model")
    assert model["status"] == "fail" and model["reason"].startswith(f"{bad}: no config.json"), model
    assert "traceback" not in model  # bad input said plainly
    for name in STEP_NAMES[3:]:
        s = step(record, name)
        assert s["status"] == "skip" and "needs the model step, which failed" in s["reason"], s
        assert str(bad) in s["reason"]
    assert step(record, "env")["status"] == "pass" and step(record, "backend")["status"] == "pass"
    assert sum(line.startswith("gpu-check: FAIL model") for line in lines) == 1
    assert (tmp_path / "out" / "report.html").is_file()
    assert record["complete"] is True and "unfinished" not in record


def test_a_check_cut_short_leaves_the_steps_it_got_through_and_says_it_did_not_finish(monkeypatch, tmp_path):
    def killed(self):
        raise KeyboardInterrupt("the box's timeout")  # no Exception: no step can record it, as with a kill
    monkeypatch.setattr(gc_run.Check, "step_model", killed)
    with pytest.raises(KeyboardInterrupt):
        gc_run.run_check("cpu", model=str(tiny_model_dir()), out=tmp_path / "out", steps=4, say=lambda line: None)
    record = json.loads((tmp_path / "out" / "gpu-check.json").read_text())
    assert [s["name"] for s in record["steps"]] == ["env", "backend"]
    assert all(s["status"] == "pass" for s in record["steps"]), record["steps"]
    assert record["complete"] is False and record["ok"] is False and record["exit_status"] is None
    assert "stopped after the backend step" in record["unfinished"]


def test_gpu_memory_nearly_full_skips_training_with_the_numbers(monkeypatch, tmp_path):
    fake = {"kind": "cuda", "name": "Fabricated GPU", "count": 1, "arch": "sm_90", "runtime": "CUDA 13.0",
            "driver": "580.0", "bf16": True, "memory_total_gib": 80.0, "memory_free_gib_at_start": 0.4}
    monkeypatch.setattr(inputs, "choose", lambda requested: fake)
    monkeypatch.setattr(inputs, "free_memory", lambda d: (int(0.4 * GIB), int(80 * GIB)))
    rc, record, _ = quiet_run("auto", model=str(tiny_model_dir()), out=tmp_path / "out", steps=4)
    mem = step(record, "memory")
    assert rc == 1 and mem["status"] == "fail", mem
    assert "GPU memory nearly full: 0.40 GiB free of 80.00 GiB" in mem["reason"], mem["reason"]
    needed = max(mem["estimates_gib"].values())
    assert 0 < needed and f"needs {needed:.2f} GiB" in mem["reason"]
    for name in ("train_lora", "train_rslora", "train_dora", "grpo", "fit"):
        assert step(record, name)["status"] == "skip" and "GPU memory nearly full" in step(record, name)["reason"]
    for name in ("letters", "reasoner"):
        assert step(record, name)["reason"] == "no adapter was trained (see the train_* steps)"
    assert record["device"]["name"] == "Fabricated GPU"


def test_a_missing_package_skips_its_step_with_the_reason(monkeypatch):
    real = steps.importable
    monkeypatch.setattr(steps, "importable", lambda m: m not in ("trl", "datasets") and real(m))
    with pytest.raises(steps.Skip, match="trl and datasets are not installed"):
        checks.grpo_steps(config.load_profile("smoke"), {})
    monkeypatch.setattr(steps, "importable", lambda m: m != "trl" and real(m))
    assert steps.missing("trl", "datasets") == "trl is not installed"
    assert steps.versions()["trl"] == "missing" and steps.versions()["torch"] != "missing"


def test_the_gpu_check_path_imports_without_the_packages_a_gpu_box_may_lack(tmp_path):
    """Every helpers module the check's steps import, in a process where ABSENT cannot be imported: none of them
    imports datasets, trl, papermill, pandas or Unsloth when imported (GRPO imports trl inside its step)."""
    modules = ["helpers.gpu_check", "helpers.env.__main__", "helpers.train", "helpers.models",
               "helpers.models.members", "helpers.evaluate", "helpers.scoring", "helpers.agents.build",
               "helpers.agents.stages.reasoner_measure", "helpers.agents.stages.reasoner_rl", "helpers.report.render",
               "helpers.curriculum.order", "transformers", "peft", "accelerate"]
    code = ("import importlib, sys\n"
            f"for m in {modules!r}:\n    importlib.import_module(m)\n"
            f"print(sorted(m for m in {list(ABSENT)!r} if sys.modules.get(m) is not None))\n"
            "import importlib.util as u; print(u.find_spec('trl'))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=offline_env(tmp_path), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["[]", "None"], done.stdout


# ---------------------------------------------------------------- the record and the comparisons
def test_the_record_catches_a_failure_and_goes_on():
    said: list[str] = []
    rec = steps.Record(say=said.append)
    rec.run("a", lambda: {"summary": "fine", "x": 1})
    rec.run("b", lambda: 1 / 0)
    rec.run("c", lambda: (_ for _ in ()).throw(steps.Skip("no trl here")))
    rec.run("d", lambda: {"summary": "never"}, needs=("b",))
    rec.run("e", lambda: {"summary": "never"}, needs=("d",))
    by = {s["name"]: s for s in rec.steps}
    assert [s["status"] for s in rec.steps] == ["pass", "fail", "skip", "skip", "skip"]
    assert by["a"]["reason"] == "fine" and by["a"]["x"] == 1
    assert by["b"]["reason"] == "ZeroDivisionError: division by zero" and "1 / 0" in by["b"]["traceback"]
    assert by["c"]["reason"] == "no trl here"
    # a skip for want of a skipped step names the root: the step that failed, and why
    assert by["e"]["reason"] == by["d"]["reason"] == "needs the b step, which failed: ZeroDivisionError: division by zero"
    assert rec.failed() == ["b"] and len(said) == 5 and all("\n" not in line for line in said)


# The H200 runs' peaks (docs/results.md): (backend, estimate less its context, measured peak), GiB
H200_PEAKS = [("transformers", 0.023, 0.081), ("transformers", 0.024, 0.077), ("transformers", 0.854, 0.888),
              ("transformers", 1.053, 1.064), ("transformers", 0.830, 0.873), ("unsloth", 0.794, 0.898),
              ("unsloth", 0.836, 0.914), ("unsloth", 0.988, 0.977),  # runs 2-11
              ("unsloth", 0.011, 0.131), ("unsloth", 0.012, 0.132), ("unsloth", 0.020, 0.139),  # runs 12 and 14
              ("transformers", 0.022, 0.075), ("transformers", 0.023, 0.076), ("transformers", 0.022, 0.081)]  # 13


def _fit(backend: str, estimate_gib: float, peak_gib: float) -> dict:
    from types import SimpleNamespace

    from helpers.env import memory
    est = SimpleNamespace(total_bytes=estimate_gib * GIB + memory.CONTEXT_BYTES, settings={},
                          total_gib=estimate_gib + memory.CONTEXT_BYTES / GIB, to_dict=lambda: {"parts_gib": {}})
    trained = {"method": "lora", "adapter": "model1_lora", "backend": backend, "tokens_per_s": 1.0,
               "peak_memory": {"gib": peak_gib, "kind": "vram"}}
    return checks.fit_row(est, trained)


def test_every_peak_is_judged_at_every_size_with_its_backends_factor():
    """Every peak the H200 runs measured, the tiny model's 0.08 GiB (0.13 through Unsloth) and Unsloth's 1.13x of its
    estimate included, is within what the check allows; the same peaks on half the estimate, or 0.3 GiB on the tiny
    model's, are not."""
    assert not checks.fit_warnings([_fit(*row) for row in H200_PEAKS])
    over = checks.fit_warnings([_fit("unsloth", 0.4, 0.898), _fit("transformers", 0.023, 0.3)])
    assert len(over) == 2 and "plus 0.12 GiB of fixed costs" in over[0] and "plus 0.06 GiB" in over[1]
    assert checks.fit_warnings([_fit("transformers", 0.794, 0.96)])  # PEFT is not given Unsloth's fixed costs
    assert not checks.fit_warnings([_fit("unsloth", 0.794, 0.96)])


def test_an_adapters_start_up_is_measured_from_its_steps():
    """A backend's start-up (load, set-up, a first-forward compile, chunk saves) is the total less the steps at their
    steady pace: measured from the logged steps' seconds, not guessed (results.md once guessed 'a compile per
    adapter')."""
    rows = [{"chunk": 0, "wall_s": 30.0}, {"chunk": 0, "wall_s": 30.5}, {"chunk": 0, "wall_s": 31.0},
            {"chunk": 1, "wall_s": 40.0}, {"chunk": 1, "wall_s": 40.5}]
    split = checks.startup_split(rows, 52.0)
    assert split == {"total": 52.0, "first_step": 30.0, "steady_step": 0.5, "startup": 49.5}
    assert checks.startup_split([], 3.0)["startup"] is None


def test_a_dora_generation_past_its_first_tokens_is_compared_teacher_forced():
    """The CPU's greedy DoRA tokens, read by the same model, are predicted at every position; a token the CPU was sure
    of that the device would not pick is a disagreement, not a near tie."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from helpers.models.adapters import _quiet_peft
    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    with _quiet_peft():
        model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], use_dora=True),
                                adapter_name="model3_dora").eval()  # DoRA's magnitudes in the path, the base's text
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir()))
    questions = inputs.bundled_questions(1)[:2]
    cpu_long = checks.long_generation(model, tok, "model3_dora", questions, n=8)
    assert [len(t) for t in cpu_long["tokens"]] == [8, 8] and len(cpu_long["margins"][0]) == 8
    same = checks.compare_long(model, tok, cpu_long, questions, checks.LOGIT_NEAR_TIE["float32"])
    assert same["questions"] == 16 and not same["disagree"] and same["end_of_turn_picks"] == 0, same
    j = max(range(8), key=lambda k: cpu_long["margins"][0][k])  # the CPU's surest pick, another token said
    cpu_long["likeliest"][0][j] = (cpu_long["likeliest"][0][j] + 1) % len(tok)
    assert cpu_long["margins"][0][j] > checks.LOGIT_NEAR_TIE["float32"]
    planted = checks.compare_long(model, tok, cpu_long, questions, checks.LOGIT_NEAR_TIE["float32"])
    assert [(r["question"], r["position"]) for r in planted["disagree"]][:1] == [(0, j)]


def test_letters_differ_only_within_a_near_tie():
    device_side = {"base": {"probs": [[0.40, 0.38, 0.12, 0.10], [0.9, 0.05, 0.03, 0.02], [0.5, 0.3, 0.1, 0.1]],
                            "questions_per_s": 1.0}}
    cpu_side = {"base": {"probs": [[0.38, 0.40, 0.12, 0.10], [0.9, 0.05, 0.03, 0.02], [0.2, 0.6, 0.1, 0.1]],
                         "questions_per_s": 1.0}}
    got = checks.compare_scores(device_side, cpu_side, checks.NEAR_TIE["bfloat16"])["base"]
    assert got["agree"] == 1 and got["questions"] == 3
    assert [(t["question"], t["device"], t["cpu"]) for t in got["near_ties"]] == [(0, "A", "B")]
    assert math.isclose(got["near_ties"][0]["cpu_margin"], 0.02)
    assert [(t["question"], t["device"], t["cpu"]) for t in got["disagree"]] == [(2, "A", "B")]
    line, bad = checks.verdict({"base": got}, "letters", 0.05)
    assert bad == ["base"] and "1 of 3 the same" in line and "1 near ties" in line and "base (1)" in line
    assert math.isclose(got["max_prob_shift"], 0.3)
    assert checks.shift_warnings({"base": got}) and not checks.shift_warnings({"base": {**got, "max_prob_shift": 0.01}})


def test_the_generated_letters_are_compared_per_adapter():
    dev_side = {"base": {"probs": [[0.5, 0.5]]},
                "m": {"probs": [[0.6, 0.4], [0.51, 0.49]], "generated": ["A", None], "texts": ["A", "x"]}}
    cpu_side = {"m": {"probs": [[0.6, 0.4], [0.51, 0.49]], "generated": ["A", "B"], "texts": ["A", "B"]}}
    got = checks.compare_generated(dev_side, cpu_side, 0.05)
    assert list(got) == ["m"] and got["m"]["agree"] == 1 and len(got["m"]["near_ties"]) == 1
    assert got["m"]["parsed_device"] == 1 and got["m"]["parsed_cpu"] == 2


def test_the_overlay_keeps_the_profile_and_records_every_swap():
    cfg, swaps = inputs.profile_for_check("smoke", "tiny", "gpu-check-test")
    keys = {s["key"] for s in swaps}
    assert {"model.dtype", "model.use_unsloth", "curriculum.chunks", "train.epochs_per_chunk"} <= keys
    assert all(s["why"] and s["from"] != s["to"] for s in swaps)
    assert cfg.model.dtype == "auto" and cfg.rl.steps == 2 and cfg.run == "gpu-check-test"
    assert cfg.model.gradient_checkpointing is True  # as the GPU profiles train (smoke's tiny CPU model does not)
    assert cfg.models == config.load_profile("smoke").models  # the adapters are the profile's
    _, swaps = inputs.profile_for_check("mi300x", "/models/qwen", "x")
    assert {"rl.steps", "env.min_free_disk_gb", "curriculum.chunks"} <= {s["key"] for s in swaps}
    assert {"key": "model.base", "from": "Qwen/Qwen2.5-72B-Instruct", "to": "/models/qwen"} == \
        {k: v for k, v in swaps[-1].items() if k != "why"}


def test_a_cpu_rehearsal_never_writes_where_a_gpu_check_does():
    assert gc_run.default_out("cpu") != gc_run.default_out("auto")
    assert gc_run.default_out("auto") == RunLayout.of("gpu-check").root


# ---------------------------------------------------------------- a minimal CPU path, in this process (~15 s)
def test_the_kit_trains_an_adapter_and_compares_its_peak_with_the_estimate(tmp_path):
    """The check's own steps on the CPU, in-process, up to one adapter trained through the kit's chunk loop and its
    fit row: the real figures, not a stand-in."""
    cfg, swaps = inputs.profile_for_check("smoke", str(tiny_model_dir()), "mini")
    # one torch thread, as the kit gives the tiny model by name ("tiny"; a folder could be any model): on 2 shared
    # cores 2 threads spin-wait, 5 steps took 33 s instead of 2
    cfg = config.with_overrides(cfg, {"train.cpu_threads": 1})
    lay = RunLayout(tmp_path / "mini")
    lay.root.mkdir()
    check = gc_run.Check(inputs.cpu_facts(__import__("torch")), cfg, swaps, lay, 4, str(tiny_model_dir()),
                         say=lambda line: None)
    check.record.run("env", check.step_env)
    check.record.run("backend", check.step_backend)
    check.record.run("model", check.step_model, needs=("backend",))
    check.record.run("memory", check.step_memory, needs=("model",))
    check.record.run("train_lora", lambda: check.step_train("lora"), needs=("memory",))
    check.record.run("fit", check.step_fit, needs=("memory",))
    assert [s["status"] for s in check.record.steps] == ["pass"] * 6, check.record.steps
    trained = check.record.get("train_lora")
    assert trained["steps"] >= 4 and trained["backend"] == "transformers" and trained["dtype"] == "float32"
    assert math.isfinite(trained["loss_first"]) and math.isfinite(trained["loss_last"])
    assert trained["loss_first"] != trained["loss_last"] and trained["tokens_per_s"] > 0
    assert (lay.root / trained["plot"]).stat().st_size > 10_000 and (lay.adapter_dir("model1_lora")).is_dir()
    row = check.record.get("fit")["methods"][0]
    assert row["method"] == "lora" and row["measured_kind"] == "cpu-rss" and row["comparable"] is False
    assert 0 < row["estimate_without_context_gib"] < row["estimate_gib"] and row["ratio"] > 0
    data = check.record.get("model")["data"]
    assert data["training_questions"] == 4 * cfg.train.batch_size and data["held_out"] == inputs.HELD_OUT
    assert 0 < data["longest_example_tokens"] <= cfg.model.max_seq_len


@pytest.mark.parametrize("imports", [True, False, "crash", "off"])
def test_unsloth_is_imported_once_in_the_checks_own_process(monkeypatch, tmp_path, imports):
    """The env probe leaves `import unsloth` to the check (tens of seconds on a GPU: it was imported twice, by the
    probe's process and again by the backend step); the env step imports it here, once, and the backend step reuses
    it. A failing import is the env check's finding and the backend falls back to transformers + PEFT, saying why.
    With model.use_unsloth false it is not imported at all: imported, it swaps trl's GRPOTrainer for its own, which
    failed on the H200 with a model transformers + PEFT loaded (docs/results.md, run 13)."""
    from helpers.env import facts as env_facts
    from helpers.models import unsloth_api
    from test_env import HEALTHY_PATCH, fixture
    facts = config.deep_merge(config.deep_merge(fixture("mi300x_seeds"), HEALTHY_PATCH),
                              {"unsloth": {"importable": None, "detail": env_facts.DEFERRED}})
    monkeypatch.setattr(inputs, "collect_facts_apart", lambda path: json.loads(json.dumps(facts)))
    monkeypatch.delitem(sys.modules, "unsloth", raising=False)
    imported = []

    def fake_import(name):
        assert name == "unsloth"
        imported.append(name)
        if imports == "crash":  # a git-head release failing otherwise than on an import
            raise NotImplementedError("triton_key")
        if not imports:
            raise ImportError("triton_key")
        sys.modules["unsloth"] = module = type(sys)("unsloth")
        return module
    monkeypatch.setattr(unsloth_api.importlib, "import_module", fake_import)
    monkeypatch.setattr(unsloth_api, "unsloth_environ", lambda: {})
    off = {"model.use_unsloth": False} if imports == "off" else None
    cfg, swaps = inputs.profile_for_check("smoke", str(tmp_path), "mini", off)
    check = gc_run.Check({"kind": "cuda", "name": "a GPU"}, cfg, swaps, RunLayout(tmp_path / "mini"), 4, None,
                         say=lambda line: None)
    try:
        env_figures, backend = check.step_env(), check.step_backend()
    finally:
        sys.modules.pop("unsloth", None)
    if imports == "off":
        assert imported == [] and env_figures["unsloth_import_seconds"] is None
        assert backend["backend"] == "transformers" and backend["why"] == "model.use_unsloth is false"
        return
    assert imported == ["unsloth"] and env_figures["unsloth_import_seconds"] is not None
    assert backend["backend"] == ("unsloth" if imports is True else "transformers")
    if imports is not True:
        assert "triton_key" in backend["why"] and "transformers + PEFT" in backend["why"]


def test_the_checks_env_probe_leaves_the_unsloth_import_to_the_check(monkeypatch, tmp_path):
    from helpers.env import facts as env_facts
    monkeypatch.setattr(env_facts, "package_version", lambda name: "2026.10.9")
    monkeypatch.setattr(env_facts, "_unsloth_install_facts",
                        lambda: {"version": "2026.10.9", "zoo": "2026.10.9", "pinned": "2026.10.9", "unmet": []})
    monkeypatch.setattr(env_facts, "_run_python", lambda *a, **k: pytest.fail("the probe imported unsloth"))
    facts = env_facts.empty_facts()
    facts["backend"] = "cuda"
    env_facts._probe_unsloth(facts, 1.0, try_import=False)
    assert facts["unsloth"]["importable"] is None and facts["unsloth"]["detail"] == env_facts.DEFERRED
    seen = {}

    class NotRun(Exception):
        pass

    def child(cmd, **kw):
        seen.update(code=cmd[2])
        raise NotRun
    monkeypatch.setattr(subprocess, "run", child)
    with pytest.raises(NotRun):
        inputs.collect_facts_apart(tmp_path / "facts.json")
    assert "import_unsloth=False" in seen["code"]  # the check's probe process never imports it


@pytest.mark.gpucheck
def test_the_sides_score_side_by_side_in_fresh_processes(monkeypatch, tmp_path):
    """Check.run_sides on a GPU, played on the CPU: the device side starts first, scores while the CPU side runs, and
    waits on its stdin for the CPU's DoRA tokens; nothing the parent imported reaches it (Unsloth's patched forward
    did in run 12, where inference ran in the process that trained: a stand-in `unsloth` here)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from helpers.models.adapters import _quiet_peft
    torch.manual_seed(0)
    with _quiet_peft():
        dora = get_peft_model(AutoModelForCausalLM.from_pretrained(str(tiny_model_dir())),
                              LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], use_dora=True))
    dora.save_pretrained(str(tmp_path / "dora"))
    cfg, _ = inputs.profile_for_check("smoke", str(tiny_model_dir()), "sides")
    lay = RunLayout(tmp_path / "sides")
    lay.root.mkdir(parents=True)
    dirs, questions = {"model3_dora": str(tmp_path / "dora")}, inputs.bundled_questions(1)[:3]
    monkeypatch.setitem(sys.modules, "unsloth", type(sys)("unsloth"))
    device = checks.start_side("device", cfg, dirs, questions, lay, checks.cpu_recommendation(cfg.model))
    cpu = checks.finish_side(checks.start_side("cpu", cfg, dirs, questions, lay, threads=1), "cpu", lay)
    assert device.poll() is None  # still there: it waits for the CPU side's tokens
    got = checks.finish_side(device, "device", lay, tell=str(lay.gpu_check_side("cpu", "result")))
    assert got["unsloth_imported"] is False and got["backend"] == cpu["backend"] == "transformers"
    compared = checks.compare_scores(got["members"], cpu["members"], checks.NEAR_TIE["float32"])
    assert all(c["agree"] == c["questions"] == 3 for c in compared.values()), compared
    assert got["long"]["questions"] == 3 * checks.LONG_TOKENS and not got["long"]["disagree"], got["long"]
    assert "reasoner" in got and (lay.root / "device-side.log").is_file()


# ---------------------------------------------------------------- the CI tier: the whole check on the CPU
@pytest.fixture(scope="module")
def cpu_runs(tmp_path_factory):
    """`gpu-check --device cpu` twice at once (one per core): with every package the kit pins, and on a box without
    ABSENT (--steps 6: the skips are what it is about). {name: (exit status, gpu-check.json, stdout, seconds)}."""
    tmp = tmp_path_factory.mktemp("gpu-check")
    runs = {"full": (gpu_check_command("--device", "cpu", "--out", str(tmp / "full")), dict(os.environ)),
            "offline": (gpu_check_command("--device", "cpu", "--out", str(tmp / "offline"), "--steps", "6"),
                        offline_env(tmp))}
    t0, procs = time.time(), {}
    for name, (cmd, environ) in runs.items():
        procs[name] = subprocess.Popen(cmd, cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True)
    out = {}
    for name, proc in procs.items():
        stdout, _ = proc.communicate(timeout=900)
        record_path = tmp / name / "gpu-check.json"
        record = json.loads(record_path.read_text()) if record_path.is_file() else None
        out[name] = (proc.returncode, record, stdout, record["wall_seconds"] if record else None)
    print(f"\ngpu-check on the CPU, side by side: {out['full'][3]} s (full), {out['offline'][3]} s (offline); "
          f"{time.time() - t0:.0f} s both")
    return out


@pytest.mark.gpucheck
def test_the_whole_check_runs_on_the_cpu(cpu_runs):
    rc, record, stdout, seconds = cpu_runs["full"]
    assert rc == 0 and record is not None, stdout[-3000:]
    assert [s["name"] for s in record["steps"]] == STEP_NAMES
    assert all(s["status"] == "pass" for s in record["steps"]), [(s["name"], s["reason"]) for s in record["steps"]]
    assert all(isinstance(s["reason"], str) and s["reason"] and s["seconds"] >= 0 for s in record["steps"])
    assert record["device"]["kind"] == "cpu" and record["ok"] is True and record["failed"] == []
    for key in ("torch", "transformers", "peft", "trl", "unsloth", "accelerate", "datasets"):
        assert key in record["versions"]
    from importlib import metadata
    try:
        unsloth = metadata.version("unsloth")  # a venv after make setup-gpu has it, and on the CPU does not use it
    except metadata.PackageNotFoundError:
        unsloth = "missing"
    assert record["versions"]["unsloth"] == unsloth and record["versions"]["trl"] != "missing"
    assert record["backend"]["name"] == "transformers" and "no GPU" in record["backend"]["why"]
    out = Path(record["out"])
    for method in ("lora", "rslora", "dora"):
        t = step(record, f"train_{method}")
        assert t["method"] == method and t["dtype"] == "float32" and t["steps"] >= 30
        assert math.isfinite(t["loss_last"]) and t["loss_last"] < t["loss_first"] - 0.5, t  # it learned something
        assert t["tokens_per_s"] > 0 and (out / t["plot"]).is_file()
    lt = step(record, "letters")
    assert set(lt["members"]) == {"base", "model1_lora", "model2_rslora", "model3_dora"}
    for member, c in lt["members"].items():
        assert c["questions"] == inputs.HELD_OUT and c["agree"] + len(c["near_ties"]) == c["questions"], (member, c)
        assert c["max_prob_shift"] < 1e-3  # fp32 on both sides: the same numbers to rounding
    assert lt["cpu_dtype"] == "float32" and lt["device_dtype"] == "float32"
    assert lt["device_process"] == "fresh, Unsloth not imported"  # the exported agents' path, not the trainer's
    assert all((out / f"{side}-side-result.json").is_file() for side in ("cpu", "device"))
    gen = step(record, "generate")["members"]
    assert set(gen) == {"model1_lora", "model2_rslora", "model3_dora"}
    assert all(g["parsed_device"] == g["parsed_cpu"] > 0 for g in gen.values()), gen  # the trained form: a letter
    long = step(record, "generate")["long"]["model3_dora"]  # DoRA's decode past its first tokens, teacher-forced
    assert long["questions"] == checks.LONG_TOKENS * checks.LONG_QUESTIONS and not long["disagree"], long
    reasoner = step(record, "reasoner")
    assert reasoner["questions"] == checks.REASONER_QUESTIONS and reasoner["latency"]["over_limit"] == 0
    grpo = step(record, "grpo")
    assert grpo["steps"] == 2 and len(grpo["losses"]) >= 1 and grpo["trl"] == record["versions"]["trl"]
    fit = step(record, "fit")["methods"]
    assert [r["method"] for r in fit] == ["lora", "rslora", "dora"]
    assert all(r["measured_kind"] == "cpu-rss" and r["comparable"] is False and r["ratio"] > 0 for r in fit)
    html = (out / "report.html").read_text()
    assert "READY" in html and "data:image/png;base64," in html and len(html) < 200_000
    assert sum(line.startswith("gpu-check: PASS") for line in stdout.splitlines()) == len(STEP_NAMES), stdout


@pytest.mark.gpucheck
def test_a_box_with_only_torch_transformers_peft_and_accelerate_runs_it_and_skips_what_it_cannot(cpu_runs):
    rc, record, stdout, _ = cpu_runs["offline"]
    assert rc == 0 and record is not None, stdout[-3000:]
    for package in ("trl", "datasets", "papermill", "unsloth"):
        assert record["versions"][package] == "missing", record["versions"]
    grpo = step(record, "grpo")
    assert grpo["status"] == "skip" and grpo["reason"].startswith("trl and datasets are not installed"), grpo
    assert all(s["status"] == "pass" for s in record["steps"] if s["name"] != "grpo"), \
        [(s["name"], s["status"], s["reason"]) for s in record["steps"]]
    assert step(record, "train_dora")["steps"] >= 6 and step(record, "letters")["members"]["model3_dora"]["agree"] > 0
