"""make setup-gpu's decisions on fabricated boxes: the box's torch stack is never installed or moved, a change to it
is one line with its fix, and the install orchestration stops loudly when pip replaced something."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from helpers.env import box, gpu_setup, stack
from helpers.env.__main__ import main as env_main
from helpers.io import InputError

# A ROCm container: torch and its triton from the ROCm index, a bitsandbytes too old for Unsloth's 4-bit on AMD.
ROCM_BOX = {"torch": "2.5.1+rocm6.2", "pytorch-triton-rocm": "3.1.0", "bitsandbytes": "0.44.1",
            "transformers": "5.23.0", "trl": "1.16.0", "peft": "0.21.2", "numpy": "2.4.6"}
REQS = [Requirement(r) for r in ("torch<2.15.0,>=2.4.0", "triton>=3.0.0", "bitsandbytes!=0.46.0,>=0.45.5",
                                 "xformers>=0.0.27.post2", "transformers<=5.17.0,>=4.52.4", "trl!=0.19.0,<=1.15.0",
                                 "peft>=0.18.0", "numpy", "tyro", "unsloth_zoo>=2026.10.9")]
PINS = {"torch": "2.13.0", "transformers": "5.17.0", "trl": "1.15.0", "tyro": "1.0.17", "bitsandbytes": "0.50.2"}


def test_plan_installs_nothing_the_box_owns():
    p = stack.plan(REQS, ROCM_BOX, PINS)
    assert not set(p.install) & set(stack.GUARDED)  # torch and bitsandbytes are pinned, still never installed
    assert p.install == {"transformers": "5.17.0", "trl": "1.15.0", "tyro": "1.0.17"}
    assert p.replaces == {"transformers": "5.23.0", "trl": "1.16.0"}
    assert "torch 2.5.1+rocm6.2" in p.ok and "triton 3.1.0" in p.ok  # pytorch-triton-rocm provides triton
    box = {f.name: f for f in p.box}
    assert set(box) == {"bitsandbytes", "xformers"} and not p.blockers
    assert "0.44.1 is outside" in box["bitsandbytes"].line and "not installed" in box["xformers"].line
    assert "SDPA" in box["xformers"].line  # what its absence costs
    assert "4-bit" in box["bitsandbytes"].line and "loads no model" not in box["bitsandbytes"].line  # installed


def test_plan_says_a_missing_bitsandbytes_stops_unsloths_loads_without_blocking_the_install():
    p = stack.plan(REQS, {k: v for k, v in ROCM_BOX.items() if k != "bitsandbytes"}, PINS)
    line = next(f.line for f in p.box if f.name == "bitsandbytes")
    assert "not installed" in line and "loads no model" in line and not p.blockers


def test_plan_blocks_on_a_torch_or_triton_unsloth_cannot_use():
    p = stack.plan(REQS, {**ROCM_BOX, "torch": "2.16.0+rocm7.1"}, PINS)
    assert [f.name for f in p.blockers] == ["torch"] and "torch" not in p.install
    p = stack.plan(REQS, {k: v for k, v in ROCM_BOX.items() if k != "pytorch-triton-rocm"}, PINS)
    assert [f.name for f in p.blockers] == ["triton"]


def test_a_pin_outside_unsloths_range_is_a_blocker_naming_the_file():
    p = stack.plan(REQS, ROCM_BOX, {**PINS, "transformers": "5.23.0"})
    assert [f.name for f in p.blockers] == ["transformers"] and "constraints-gpu.txt" in p.blockers[0].line


def test_requirements_of_both_wheels_are_merged():
    merged = stack.merged([Requirement("transformers>=4.52.4"), Requirement("transformers<=5.17.0")])
    assert len(merged) == 1 and stack.satisfies(merged[0], "5.17.0") and not stack.satisfies(merged[0], "5.23.0")


def test_unmet_ignores_optional_box_packages_but_not_triton():
    """bitsandbytes 0.44.1 only turns 4-bit off: the plan notes it, the env check does not rule Unsloth out for it
    (else make setup-gpu, which never moves it, would be the fix in a loop). Missing altogether, it stops every
    Unsloth load: the env check's own rule (unsloth_needs_bitsandbytes) says so and names the box's build."""
    assert stack.unmet(REQS, ROCM_BOX) == ["transformers 5.23.0 (Unsloth wants <=5.17.0,>=4.52.4)",
                                            "trl 1.16.0 (Unsloth wants !=0.19.0,<=1.15.0)", "tyro not installed "
                                            "(Unsloth wants it)"]
    assert any(m.startswith("triton not installed") for m in stack.unmet(REQS, {"torch": "2.5.1"}))


def test_compare_names_each_change_with_its_fix():
    before = {"torch": "2.5.1+rocm6.2", "pytorch-triton-rocm": "3.1.0", "bitsandbytes": "0.44.1"}
    after = {"torch": "2.9.0", "pytorch-triton-rocm": "3.1.0", "triton": "3.5.0"}
    lines = box.compare(before, after)
    assert len(lines) == 3 and all("Fix:" in ln for ln in lines)
    assert any(ln.startswith("torch was 2.5.1+rocm6.2, now 2.9.0") and "pip uninstall -y torch" in ln for ln in lines)
    assert any(ln.startswith("triton 3.5.0 was added") and "pytorch-triton-rocm 3.1.0" in ln for ln in lines)
    assert any(ln.startswith("bitsandbytes 0.44.1 was removed") for ln in lines)
    assert box.compare(before, dict(before)) == []


def test_stack_record_is_written_once_and_changes_are_found(tmp_path):
    path = tmp_path / box.STACK_FILE
    assert box.stack_changes(path, ROCM_BOX) == []  # nothing recorded: nothing to say
    assert box.record_stack(ROCM_BOX, path) is True
    assert box.record_stack({**ROCM_BOX, "torch": "2.9.0"}, path) is False  # the first record stands
    assert box.stack_changes(path, ROCM_BOX) == []
    assert box.stack_changes(path, {**ROCM_BOX, "torch": "2.9.0"})[0].startswith("torch was 2.5.1+rocm6.2")
    path.write_text("{not json")
    with pytest.raises(ValueError, match=f"{path}: field 'guarded'"):
        box.stack_changes(path, ROCM_BOX)


def test_read_pins_names_the_file_and_line(tmp_path):
    good = tmp_path / "c.txt"
    good.write_text("# pins\nUnsloth_Zoo==2026.10.9   # why\n\ntorch==2.13.0\n")
    assert stack.read_pins(good) == {"unsloth-zoo": "2026.10.9", "torch": "2.13.0"}
    good.write_text("torch>=2.4\n")
    with pytest.raises(InputError, match=r"c\.txt: record 1: expected 'name==version'"):
        stack.read_pins(good)


def test_a_wheel_is_found_by_its_project_and_version_whatever_else_the_folder_holds(tmp_path):
    for name in ("partial.whl", "unsloth-2026.10.9.whl", "unsloth_zoo-2026.10.8-py3-none-any.whl",
                 "unsloth_zoo-2026.10.9-py3-none-any.whl"):
        (tmp_path / name).write_bytes(b"")
    assert stack.find_wheel(tmp_path, "unsloth-zoo", "2026.10.9").name == "unsloth_zoo-2026.10.9-py3-none-any.whl"
    assert stack.find_wheel(tmp_path, "unsloth", "2026.10.9") is None  # not a wheel's name: no tags
    with pytest.raises(FileNotFoundError, match=r"no unsloth==2026\.10\.9 wheel"):
        gpu_setup.wheels_in({"unsloth": "2026.10.9", "unsloth-zoo": "2026.10.9"}, tmp_path, fetch=False)


def test_wheel_metadata_reads_requirements_without_the_long_description(tmp_path):
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 1.0\n"
                    "Requires-Dist: torch>=2.4\nRequires-Dist: xformers; sys_platform == 'win32'\n\n"
                    "Requires-Dist: not-a-header\n")
    name, version, lines = stack.wheel_metadata(wheel)
    assert (name, version, lines) == ("demo-pkg", "1.0", ["torch>=2.4", "xformers; sys_platform == 'win32'"])
    linux = {"sys_platform": "linux"}
    assert [r.name for r in stack.applicable(lines, linux)] == ["torch"]


# A box Unsloth's pinned stack can go on (transformers 5.17.0 needs torch >= 2.6: the original team's 2.5.1 cannot take it).
UNSLOTH_BOX = {**ROCM_BOX, "torch": "2.6.0+rocm6.3"}


def _fake_box(monkeypatch, tmp_path, after: dict, before: dict = UNSLOTH_BOX) -> list:
    """gpu_setup.install() on a fabricated ROCm venv whose pip calls are recorded, not run."""
    calls: list = []
    states = iter([before, after])
    monkeypatch.setattr(gpu_setup, "accelerator_torch", lambda: "rocm 6.2")
    monkeypatch.setattr(gpu_setup, "in_venv", lambda: True)
    monkeypatch.setattr(gpu_setup, "box_python", lambda: "3.12.3")  # the original team's Python, whatever runs the tests
    monkeypatch.setattr(gpu_setup, "download", lambda: [tmp_path / "unsloth-1-py3-none-any.whl"])
    monkeypatch.setattr(gpu_setup, "requirements", lambda wheels: REQS)
    monkeypatch.setattr(gpu_setup, "pins", lambda: PINS)
    monkeypatch.setattr(box, "installed_versions", lambda: next(states))
    monkeypatch.setattr(gpu_setup, "resolve", lambda specs, c: {"transformers": "5.17.0", "trl": "1.15.0",
                                                                "tyro": "1.0.17", "triton": "3.5.0"})
    monkeypatch.setattr(gpu_setup, "_pip", calls.append)
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0))
    return calls


def test_install_uses_no_deps_and_leaves_out_what_the_box_owns(monkeypatch, tmp_path, capsys):
    calls = _fake_box(monkeypatch, tmp_path, after=dict(UNSLOTH_BOX))
    assert gpu_setup.install() == 0
    (args,) = calls
    assert args[:2] == ["install", "--quiet"] and "--no-deps" in args
    assert "transformers==5.17.0" in args and not any(a.startswith(("triton", "torch")) for a in args)
    out = capsys.readouterr().out
    assert "pull triton 3.5.0; not installed" in out and "torch stack is unchanged" in out


def test_install_fails_loudly_when_pip_replaced_the_box_torch(monkeypatch, tmp_path, capsys):
    _fake_box(monkeypatch, tmp_path, after={**UNSLOTH_BOX, "torch": "2.9.0", "triton": "3.5.0"})
    assert gpu_setup.install() == 1
    failed = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("setup-gpu: FAILED:")]
    assert len(failed) == 2 and any("torch was 2.6.0+rocm6.3, now 2.9.0" in ln for ln in failed)


def test_setup_gpu_on_a_torch_older_than_its_stack_installs_nothing_and_says_why(monkeypatch, tmp_path, capsys):
    """The original team's MI300X (torch 2.5.1+rocm6.2): Unsloth's pinned transformers 5.17.0 would disable its torch."""
    calls = _fake_box(monkeypatch, tmp_path, after=dict(ROCM_BOX), before=ROCM_BOX)
    assert gpu_setup.install() == 0 and calls == []
    out = capsys.readouterr().out
    assert "setup-gpu: Unsloth NOT installed: its pinned stack (transformers 5.17.0) cannot go on this box: this box " \
           "gets the 'container' pins (torch 2.5.1+rocm6.2 is below 2.6, where transformers 5.x disables PyTorch" in out
    assert "box plan" in out


def test_setup_gpu_on_python_3_10_installs_nothing_and_says_why(monkeypatch, tmp_path, capsys):
    """A Python 3.10 image with a current ROCm torch: trl 1.15.0 (Unsloth's pins) needs Python >= 3.11."""
    calls = _fake_box(monkeypatch, tmp_path, after=dict(UNSLOTH_BOX))
    monkeypatch.setattr(gpu_setup, "box_python", lambda: "3.10.13")
    assert gpu_setup.install() == 0 and calls == []
    out = capsys.readouterr().out
    assert "Unsloth NOT installed" in out and "gets the 'py310' pins" in out and "trl 1.x needs Python >= 3.11" in out


def test_setup_gpu_on_a_box_with_its_own_unsloth_installs_nothing_and_says_the_kit_uses_it(monkeypatch, tmp_path,
                                                                                         capsys):
    """The starter kit's Dockerfile box: Unsloth from git on transformers 4.56.2; the pinned one would shadow it."""
    own = {**UNSLOTH_BOX, "unsloth": "2026.11.1", "unsloth-zoo": "2026.11.1", "transformers": "4.56.2",
           "trl": "0.23.0", "vllm": "0.11.0"}
    calls = _fake_box(monkeypatch, tmp_path, after=own, before=own)
    monkeypatch.setattr(gpu_setup, "download", lambda: pytest.fail("nothing may be downloaded on such a box"))
    assert gpu_setup.install() == 0 and calls == []
    out = capsys.readouterr().out
    assert "holds its own unsloth 2026.11.1 on transformers 4.56.2, trl 0.23.0" in out and "nothing installed" in out


def test_a_box_with_its_own_unsloth_keeps_every_package_it_holds():
    own = {"torch": "2.9.0+rocm7.0", "unsloth": "2026.11.1", "transformers": "4.56.2", "trl": "0.23.0",
           "numpy": "2.2.6", "vllm": "0.11.0"}
    venv = {**own, "papermill": "2.5.0"}  # what an earlier make setup put in the venv: free to move with the pins
    lines = box.constraint_lines(["transformers==4.55.0", "trl==0.23.0", "numpy==2.4.6", "papermill==2.6.0"], venv,
                                 own=own)
    assert lines == ["transformers==4.56.2", "trl==0.23.0", "numpy==2.2.6", "papermill==2.6.0"]
    other = {**own, "transformers": "5.17.0"}  # make setup-gpu's own Unsloth, on 5.x: only the torch stack is held
    assert box.constraint_lines(["numpy==2.4.6"], other, own=other) == ["numpy==2.4.6"]


def test_install_outside_a_venv_never_moves_the_box_packages(monkeypatch, tmp_path, capsys):
    calls = _fake_box(monkeypatch, tmp_path, after=dict(ROCM_BOX))
    monkeypatch.setattr(gpu_setup, "in_venv", lambda: False)
    assert gpu_setup.install() == 0 and calls == []
    assert "Unsloth NOT installed" in capsys.readouterr().out


def test_constraints_never_hold_the_cpu_torch_pin_on_a_gpu_box(monkeypatch, tmp_path):
    monkeypatch.setattr(gpu_setup, "pins", lambda: PINS)
    lines = gpu_setup.constraints_file(ROCM_BOX, tmp_path).read_text().splitlines()
    assert "torch==2.5.1+rocm6.2" in lines and "torch==2.13.0" not in lines and "bitsandbytes==0.44.1" in lines
    assert "transformers==5.17.0" in lines and "bitsandbytes==0.50.2" not in lines


def test_setup_gpu_on_a_cpu_torch_says_so_in_one_line_and_installs_nothing(monkeypatch, capsys):
    monkeypatch.setattr(gpu_setup, "accelerator_torch", lambda: None)  # whatever torch the test box has
    monkeypatch.setattr(gpu_setup, "download", lambda: pytest.fail("nothing may be downloaded on a CPU torch"))
    monkeypatch.setattr(gpu_setup, "_pip", lambda args: pytest.fail("pip may not run on a CPU torch"))
    assert env_main(["gpu-setup", "install"]) == 2
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "CPU build" in out and "Nothing installed" in out


def test_the_recorded_stack_is_json_with_the_guarded_versions(tmp_path):
    path = tmp_path / box.STACK_FILE
    box.record_stack({**ROCM_BOX, "numpy": "2.4.6"}, path)
    assert json.loads(path.read_text()) == {"guarded": {"bitsandbytes": "0.44.1", "pytorch-triton-rocm": "3.1.0",
                                                        "torch": "2.5.1+rocm6.2"}}


def _dist(root, name: str, version: str, requires: tuple = ()) -> None:
    """A fake installed distribution (a .dist-info folder) under root."""
    info = root / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                         + "".join(f"Requires-Dist: {r}\n" for r in requires))


def test_installed_versions_reports_the_copy_python_imports(tmp_path, monkeypatch):
    """In a --system-site-packages venv the venv's copy shadows the box's: the first on sys.path is the one used."""
    _dist(tmp_path / "venv", "kit_demo_pkg", "5.17.0")
    _dist(tmp_path / "box", "kit_demo_pkg", "4.51.3")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "venv"), str(tmp_path / "box"), *sys.path])
    assert box.installed_versions()["kit-demo-pkg"] == "5.17.0"


def test_the_box_torch_and_what_it_requires_are_held_at_their_installed_versions(tmp_path, monkeypatch):
    """torch 2.5.1+rocm6.2 pins sympy==1.13.1: constraints.txt's sympy (the CPU torch's) would make pip's resolve
    impossible, or move it. Unrelated pins stay the kit's."""
    _dist(tmp_path, "torch", "2.5.1+rocm6.2", ("sympy==1.13.1", "filelock", "pytest; extra == 'dev'"))
    _dist(tmp_path, "sympy", "1.13.1")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    installed = box.installed_versions()
    assert {"torch", "sympy", "filelock"} <= box.held_names(installed) and "pytest" not in box.held_names(installed)
    _dist(tmp_path, "filelock", "3.16.1")
    lines = box.constraint_lines(["# pins", "torch==2.13.0", "sympy==1.14.0", "numpy==2.4.6", "filelock==4.2.11", ""],
                                 box.installed_versions())
    # filelock: torch takes any version, so the venv may shadow the box's with the pin set's (the container pins' fsspec)
    assert lines[:5] == ["# pins", "torch==2.5.1+rocm6.2", "sympy==1.13.1", "numpy==2.4.6", "filelock==4.2.11"]
    assert "filelock" in box.held_names(box.installed_versions())  # make setup-gpu still leaves it as the box has it
    monkeypatch.setattr(gpu_setup, "pins", lambda: {"sympy": "1.14.0", "numpy": "2.4.6", "torch": "2.13.0"})
    held = gpu_setup.constraints_file(installed, tmp_path).read_text().splitlines()
    assert "sympy==1.13.1" in held and "sympy==1.14.0" not in held and "numpy==2.4.6" in held


def test_an_unsloth_release_that_renamed_an_argument_is_one_clear_line():
    from helpers.models import unsloth_api

    def from_pretrained(model_name, max_seq_length=2048, dtype=None):  # an older release: no use_exact_model_name
        return model_name
    with pytest.raises(RuntimeError, match=r"takes no use_exact_model_name.*make setup-gpu"):
        unsloth_api.call_checked(from_pretrained, {"model_name": "m", "use_exact_model_name": True}, "from_pretrained")
    assert unsloth_api.call_checked(from_pretrained, {"model_name": "m", "dtype": "bf16"}, "from_pretrained") == "m"

    def get_peft_model(model, r=16, **kwargs):  # Unsloth's take **kwargs: only the kit's known pass-throughs may go
        return kwargs
    passed = unsloth_api.call_checked(get_peft_model, {"model": 1, "use_dora": True}, "get_peft_model")
    assert passed == {"use_dora": True}
    with pytest.raises(RuntimeError, match="takes no use_exact_model_name"):  # else silently absorbed by **kwargs
        unsloth_api.call_checked(get_peft_model, {"model": 1, "use_exact_model_name": True}, "from_pretrained")


def test_an_inference_load_through_unsloth_has_room_to_generate(monkeypatch, tmp_path):
    """Unsloth cuts input past the max_seq_length it loaded with (refuse_overlength says so first): a training load
    keeps the profile's cap, an inference load gets room for the agents' caps, within the model's own positions."""
    import types

    from helpers.models import load
    seen = []
    fast = types.SimpleNamespace(from_pretrained=lambda model_name, max_seq_length, dtype, load_in_4bit,
                                 trust_remote_code, use_exact_model_name, use_gradient_checkpointing:
                                 seen.append(max_seq_length) or ("model", "tokenizer"))
    monkeypatch.setattr(load, "import_unsloth", lambda: types.SimpleNamespace(FastLanguageModel=fast))
    settings = {"max_seq_len": 256, "dtype": "float32", "load_in_4bit": False, "trust_remote_code": False,
                "gradient_checkpointing": True}
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 1024}))
    load._load_unsloth(tmp_path, settings, for_training=True)
    load._load_unsloth(tmp_path, settings, for_training=False)
    load._load_unsloth("Qwen/Qwen2.5-72B-Instruct", settings, for_training=False)  # a hub id: no config to read
    load._load_unsloth("Qwen/Qwen2.5-72B-Instruct", {**settings, "max_seq_len": 4096}, for_training=False)
    assert seen == [256, 1024, load.INFERENCE_SEQ_LEN, 4096]


def test_inference_goes_through_transformers_and_peft_unless_the_profile_asks_for_unsloth(monkeypatch):
    """The answer path on the day (docs/gpu.md): Unsloth trains; scoring and the agents load the same adapters through
    transformers + PEFT, which a GPU check proved end to end, unless model.unsloth_inference is true."""
    import dataclasses

    from helpers import config
    from helpers.models import load
    asked = []

    class Stop(Exception):
        pass

    def backend(model, recommendation=None, facts=None):
        asked.append(model.use_unsloth)
        raise Stop
    monkeypatch.setattr(load, "import_backend", backend)
    model = dataclasses.replace(config.load_profile("mi300x").model, use_unsloth=True)
    for for_training, unsloth_inference in ((True, False), (False, False), (False, True)):
        with pytest.raises(Stop):
            load.load_model("Qwen/Qwen2.5-72B-Instruct", for_training=for_training,
                            model=dataclasses.replace(model, unsloth_inference=unsloth_inference))
    assert asked == [True, False, True]
    assert config.load_profile("mi300x").model.unsloth_inference is False  # the default


def test_a_failing_unsloth_import_is_one_clear_line(monkeypatch, tmp_path):
    import importlib

    from helpers.models import unsloth_api
    monkeypatch.setenv("UNSLOTH_COMPILE_LOCATION", str(tmp_path))  # import_unsloth sets it when unset

    def boom(name):
        raise ImportError("No module named 'unsloth_zoo'")
    monkeypatch.setattr(importlib, "import_module", boom)
    with pytest.raises(RuntimeError, match=r"import unsloth failed \(ImportError: No module named 'unsloth_zoo'\)"
                                           r"\. Fix: make setup-gpu"):
        unsloth_api.import_unsloth()


def _unsloth_stand_in(folder: Path, record: Path) -> Path:
    """A package named unsloth that writes down where Unsloth would put its compiled code, then imports fine."""
    (folder / "unsloth").mkdir(parents=True)
    (folder / "unsloth" / "__init__.py").write_text(
        f"import os\nopen({str(record)!r}, 'w').write(os.environ.get('UNSLOTH_COMPILE_LOCATION') or 'unset')\n")
    return folder


@pytest.fixture
def no_compile_location(monkeypatch):
    """UNSLOTH_COMPILE_LOCATION unset during the test and again after it (import_unsloth sets it)."""
    monkeypatch.setenv("UNSLOTH_COMPILE_LOCATION", "registered for restoring")
    monkeypatch.delenv("UNSLOTH_COMPILE_LOCATION")


def test_unsloth_compiles_under_the_kits_cache_and_a_set_location_wins(monkeypatch, tmp_path, no_compile_location):
    """unsloth_zoo 2026.10.9 writes unsloth_compiled_cache/ where UNSLOTH_COMPILE_LOCATION says, else into the
    working directory (notebooks/ in a notebook): the kit names a folder under its cache before the import."""
    import importlib

    from helpers import config
    from helpers.models import unsloth_api
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "cache"))
    assert unsloth_api.compile_location() == config.cache_root() / "unsloth_compiled_cache"
    seen = []
    monkeypatch.setattr(importlib, "import_module", lambda name: seen.append(os.environ.get(
        "UNSLOTH_COMPILE_LOCATION")) or object())
    unsloth_api.import_unsloth()
    monkeypatch.setenv("UNSLOTH_COMPILE_LOCATION", str(tmp_path / "mine"))  # the user's own choice is kept
    unsloth_api.import_unsloth()
    assert seen == [str(tmp_path / "cache" / "unsloth_compiled_cache"), str(tmp_path / "mine")]


def test_the_env_checks_unsloth_import_probe_compiles_under_the_kits_cache_too(monkeypatch, tmp_path,
                                                                              no_compile_location):
    from helpers.env import facts as env_facts
    record = tmp_path / "seen.txt"
    monkeypatch.setenv("PYTHONPATH", str(_unsloth_stand_in(tmp_path / "fake", record)))
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(env_facts, "package_version", lambda name: "2026.10.9")
    monkeypatch.setattr(env_facts, "_unsloth_install_facts", lambda: {"version": "2026.10.9", "zoo": "2026.10.9"})
    facts = {"backend": "rocm", "unsloth": {}}
    env_facts._probe_unsloth(facts, timeout_s=60)
    assert facts["unsloth"]["importable"] is True, facts
    assert record.read_text() == str(tmp_path / "cache" / "unsloth_compiled_cache")
    assert "UNSLOTH_COMPILE_LOCATION" not in os.environ  # set in the probe's interpreter only


def test_an_old_pip_is_one_line_before_anything_is_downloaded(monkeypatch, capsys):
    from importlib import metadata
    monkeypatch.setattr(gpu_setup, "accelerator_torch", lambda: "rocm 6.2")
    monkeypatch.setattr(metadata, "version", lambda name: "21.3.1" if name == "pip" else "0")
    monkeypatch.setattr(gpu_setup, "download", lambda: pytest.fail("nothing may be downloaded with an old pip"))
    assert gpu_setup.install() == 2
    assert "pip 21.3.1 cannot plan the install" in capsys.readouterr().out
    monkeypatch.setattr(metadata, "version", lambda name: "26.2")
    assert gpu_setup.pip_problem() is None


def test_the_box_commands_run_on_the_standard_library_alone(tmp_path):
    """make setup runs `python -m helpers.env box ...` before pip installs anything: -S hides every site package."""
    pins = tmp_path / "pins.txt"
    pins.write_text("# pins\nnumpy==2.4.6\n")
    root = str(Path(__file__).resolve().parents[1])
    code = (f"import runpy, sys; sys.path.insert(0, {root!r}); sys.argv = ['helpers.env', 'box', 'constraints', "
            f"{str(pins)!r}]; runpy.run_module('helpers.env', run_name='__main__', alter_sys=True)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["# pins", "numpy==2.4.6"]


def test_the_pin_plan_runs_on_the_standard_library_alone():
    """make setup's first step (`box plan --setup`) runs on the box's bare Python, before anything is installed."""
    root = str(Path(__file__).resolve().parents[1])
    code = (f"import runpy, sys; sys.path.insert(0, {root!r}); sys.argv = ['helpers.env', 'box', 'plan', '--python', "
            f"'3.12', '--torch', '2.5.1+rocm6.2']; runpy.run_module('helpers.env', run_name='__main__', alter_sys=True)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("setup: pins 'container'") and "transformers 4.51.3" in done.stdout
