"""The boxes teams bring, each given a tested pin set or one line saying why none fits (helpers/env/pinsets.py,
`python -m helpers.env box plan`, make setup's first step): the original team's MI300X and MI50, the challenge container, a
current ROCm image, a Python 3.10 image, and input that cannot be read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.env import pinsets

ROOT = Path(__file__).resolve().parent.parent
MAIN = {"pins": "main", "transformers": "5.23.0", "trl": "1.16.0"}
CONTAINER = {"pins": "container", "transformers": "4.51.3", "trl": "0.19.0"}
PY310 = {"pins": "py310", "transformers": "4.51.3", "trl": "0.19.0"}

BOXES = [  # (what it is, Python, torch, the set it gets)
    ("the original team's MI300X", "3.12.3", "2.5.1+rocm6.2", CONTAINER),
    ("the original team's MI50 (gfx906 needs torch 2.4.1)", "3.12.3", "2.4.1+rocm6.0", CONTAINER),
    ("the challenge container on a ROCm torch older than 2.6", "3.11.13", "2.5.1+rocm6.2", CONTAINER),
    ("the challenge container on a ROCm torch from 2.6", "3.12.9", "2.6.0+rocm6.3", MAIN),
    ("a current rocm/pytorch image", "3.12.10", "2.7.1+rocm6.4.1.git2a215e4a", MAIN),
    ("a current rocm/pytorch image", "3.12", "2.9.0", MAIN),
    ("a CUDA box", "3.11.9", "2.8.0+cu128", MAIN),
    ("a CPU box before make setup (no torch yet)", "3.11.7", None, MAIN),
    ("a Python 3.10 ROCm image of 2024", "3.10.14", "2.4.1+rocm6.1", PY310),
    ("a Python 3.10 image with a current torch", "3.10.13", "2.6.0+rocm6.3", PY310),
    ("a Python 3.10 CPU box before make setup", "3.10.13", None, PY310),
]


@pytest.mark.parametrize("what, python, torch, wanted", BOXES, ids=[f"{b[0]} {b[2]}" for b in BOXES])
def test_each_box_gets_the_set_that_runs_there(what, python, torch, wanted):
    p = pinsets.plan(python, torch)
    assert p["ok"], (what, p["why"])
    assert {k: p[k] for k in wanted} == wanted, what
    assert p["backend"].startswith("transformers + PEFT") and p["why"] and p["tested"]
    if wanted is CONTAINER:
        assert "below 2.6" in p["why"] and "Unsloth" in p["backend"]
    if wanted is PY310:
        assert "Python >= 3.11" in p["backend"] and p["files"][-1] == "constraints-py310.txt"
        old_torch = torch is not None and pinsets.parse_torch(torch)[0] < (2, 6)
        assert ("below 2.6" if old_torch else "Python 3.10: numpy 2.4.6") in p["why"]


STARTER_OWN = {"unsloth": "2026.11.1", "unsloth-zoo": "2026.11.1", "transformers": "4.56.2", "trl": "0.23.0"}


@pytest.mark.parametrize("own, wanted", [
    (STARTER_OWN, "starter"),                                          # the starter kit's Dockerfile box
    ({**STARTER_OWN, "transformers": "4.51.3", "trl": "0.18.2"}, "starter"),  # the bottom of its range
    ({"unsloth": "2026.10.9", "transformers": "5.17.0", "trl": "1.15.0"}, "main"),  # make setup-gpu's own Unsloth
    ({"transformers": "4.56.2", "trl": "0.23.0"}, "main"),            # transformers 4.x but no Unsloth of its own
])
def test_a_box_with_its_own_unsloth_on_transformers_4_keeps_it(own, wanted):
    """The Dockerfile's box (a ROCm vLLM image, Python 3.12, a current torch) gets the starter set, which keeps the
    box's stack: its transformers and trl are the plan's; any other box of that Python and torch gets the main pins."""
    p = pinsets.plan("3.12.3", "2.9.0+rocm7.0", own=own)
    assert p["ok"] and p["pins"] == wanted, p
    if wanted == "starter":
        assert (p["transformers"], p["trl"]) == (own["transformers"], own["trl"])
        assert "starter kit's Dockerfile box" in p["why"] and "box's own Unsloth" in p["backend"]
        assert "unsloth 2026.11.1 on transformers" in pinsets.describe(p)
    assert pinsets.plan("3.12.3", "2.9.0+rocm7.0")["pins"] == "main"  # no stack of its own described


def test_the_starter_stack_is_what_the_dockerfile_allows_and_unsloth_needs():
    """constraints-starter.txt: the Dockerfile's tops (transformers <= 4.56.2, trl <= 0.23.0, 0.19.0 excluded) and
    Unsloth's datasets < 5; `make test-container CSTACK=starter` builds its venv from `box plan --stack starter`."""
    starter = next(s for s in pinsets.PIN_SETS if s.name == "starter")
    pins = pinsets.pins_of(starter)
    assert (pins["transformers"], pins["trl"]) == ("4.56.2", "0.23.0") and int(pins["datasets"].split(".")[0]) < 5
    p = pinsets.plan("3.11.7", None, stack="starter")
    assert p["ok"] and p["pins"] == "starter" and p["files"] == ["constraints.txt", "constraints-starter.txt"]


def test_box_plan_reads_a_described_boxs_own_stack_and_refuses_a_bad_one(capsys):
    from helpers.env.__main__ import main
    has = ",".join(f"{n}=={v}" for n, v in STARTER_OWN.items())
    assert main(["box", "plan", "--python", "3.12", "--torch", "2.9.0+rocm7.0", "--has", has]) == 0
    assert "pins 'starter'" in capsys.readouterr().out
    assert main(["box", "plan", "--python", "3.12", "--torch", "2.9.0+rocm7.0", "--has", "unsloth"]) == 2
    assert "--has 'unsloth': expected name==version" in capsys.readouterr().err


@pytest.mark.parametrize("python, torch, needle", [
    ("3.13.0", "2.9.0", "Python 3.13: no pin set is tested on it (they stop at 3.12); use Python 3.10-3.12"),
    ("3.9.18", "2.4.1+rocm6.0", "Python 3.9: no tested pin set installs on it (the oldest takes 3.10)"),
    ("3.10", "2.3.1+rocm5.7", "torch 2.3.1+rocm5.7: older than every tested pin set"),
    ("3.12", "2.3.1+rocm5.7", "torch 2.3.1+rocm5.7: older than every tested pin set"),
    ("3.12", "two.five", "torch 'two.five' cannot be read as a version: expected one like 2.5.1+rocm6.2"),
    ("three", "2.6.0", "Python 'three' cannot be read as a version"),
])
def test_a_box_no_set_fits_is_refused_in_one_line_with_the_fix(python, torch, needle):
    p = pinsets.plan(python, torch)
    line = pinsets.describe(p)
    assert not p["ok"] and p["pins"] is None and needle in p["why"]
    assert line.startswith("setup: REFUSED: ") and "\n" not in line


def test_a_sets_versions_are_read_from_its_files():
    """One place for each fact: the plan's transformers and trl are the constraints files' own pins."""
    container = next(s for s in pinsets.PIN_SETS if s.name == "container")
    pins = pinsets.pins_of(container)
    assert pins["transformers"] == "4.51.3" and pins["trl"] == "0.19.0" and pins["peft"] == "0.15.2"
    main_pins = pinsets.pins_of(pinsets.MAIN)
    assert pins["numpy"] == main_pins["numpy"], "the container set keeps the main pins it does not name"
    text = pinsets.constraint_text(container).splitlines()
    names = [line.split("==")[0] for line in text]
    assert len(names) == len(set(names)) and "transformers==4.51.3" in text


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "helpers.env", "box", "plan", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_the_command_plans_a_described_box_as_text_and_json():
    done = _cli("--python", "3.12", "--torch", "2.5.1+rocm6.2", "--json")
    plan = json.loads(done.stdout)
    assert done.returncode == 0 and {"pins", "transformers", "trl", "backend", "ok", "why"} <= set(plan)
    assert (plan["pins"], plan["transformers"], plan["trl"], plan["ok"]) == ("container", "4.51.3", "0.19.0", True)
    refused = _cli("--python", "3.13", "--torch", "2.9.0")
    assert refused.returncode == 2 and refused.stdout.startswith("setup: REFUSED: Python 3.13")
    pins = _cli("--python", "3.12", "--torch", "2.5.1+rocm6.2", "--pins")
    assert pins.returncode == 0 and "transformers==4.51.3\n" in pins.stdout
    py310 = _cli("--python", "3.10", "--torch", "none", "--pins")
    assert py310.returncode == 0 and "numpy==2.2.6\n" in py310.stdout and "numpy==2.4.6" not in py310.stdout
    assert _cli("--python", "3.13", "--torch", "none", "--pins").returncode == 2
    # make test-container asks for the container's stack on the Python that runs it, whatever the torch
    stack = _cli("--python", "3.11", "--torch", "2.9.0", "--stack", "container", "--json")
    assert json.loads(stack.stdout)["pins"] == "container"


def test_setup_records_the_plan_and_refuses_a_torch_that_changed(tmp_path, monkeypatch):
    venv = tmp_path / "venv"
    monkeypatch.setattr(pinsets, "this_box", lambda: ("3.12.3", "2.5.1+rocm6.2"))
    status, line = pinsets.setup_check(venv, "2.5.1+rocm6.2")
    assert status == 0 and "pins 'container'" in line
    assert json.loads((venv / pinsets.PLAN_FILE).read_text())["torch"] == "2.5.1+rocm6.2"
    assert pinsets.setup_check(venv, "2.5.1+rocm6.2")[0] == 0  # the same box again: the same pins
    status, line = pinsets.setup_check(venv, "2.6.0+rocm6.3")
    assert status == 2 and "torch changed since make setup chose its pins (2.5.1+rocm6.2 -> 2.6.0+rocm6.3)" in line
    assert "nothing installed" in line and str(venv) in line
    (venv / pinsets.PLAN_FILE).write_text("{")
    assert "unreadable record" in pinsets.setup_check(venv, "2.5.1+rocm6.2")[1]
    # a base Python with a CPU torch 2.3: the venv installs its own, so make setup plans for none (no refusal)
    cpu = tmp_path / "cpu"
    assert pinsets.setup_check(cpu, None)[0] == 0 and "pins 'main'" in pinsets.setup_check(cpu, None)[1]
    fresh = tmp_path / "other"
    monkeypatch.setattr(pinsets, "this_box", lambda: ("3.13.0", "2.6.0+rocm6.3"))
    refused = pinsets.setup_check(fresh, "2.6.0+rocm6.3")
    assert refused[0] == 2 and not fresh.exists(), "a refused box must get nothing written"


def _python(minor: int) -> str:
    """A Python 3.<minor> interpreter (the machine's pyenv has 3.9 to 3.13; CI's too)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", "/root/.pyenv"))
    candidates = [str(p) for p in sorted(pyenv.glob(f"versions/3.{minor}.*/bin/python"))]
    candidates.append(shutil.which(f"python3.{minor}") or "")
    check = f"import sys; assert sys.version_info[:2] == (3, {minor})"
    found = next((c for c in candidates if c and subprocess.run([c, "-c", check], capture_output=True).returncode == 0),
                 None)
    if not found:
        if os.environ.get("CI"):
            pytest.fail(f"no Python 3.{minor} here: CI's machine has one in its pyenv")
        pytest.skip(f"no Python 3.{minor} interpreter on this machine")
    return found


def test_make_setup_on_python_3_13_refuses_before_installing_anything(tmp_path):
    venv = tmp_path / "venv"
    done = subprocess.run(["make", "setup", f"PYTHON={_python(13)}", f"VENV={venv}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0 and "setup: REFUSED: Python 3.13: no pin set is tested on it" in done.stderr
    assert not venv.exists(), "make setup made or installed something before refusing"


def test_every_pin_of_the_py310_set_was_chosen_for_python_3_10():
    """constraints-py310.txt replaces only pins of the container set it lies over (the ones with no 3.10 wheel): no
    stale line, and none of its versions equal to the pin it replaces."""
    py310 = next(s for s in pinsets.PIN_SETS if s.name == "py310")
    own = pinsets.read_pins(ROOT / py310.files[-1])
    under = pinsets.pins_of(next(s for s in pinsets.PIN_SETS if s.name == "container"))
    assert own and all(name in under and under[name] != version for name, version in own.items()), own
    assert pinsets.pins_of(py310)["transformers"] == "4.51.3" and pinsets.pins_of(py310)["numpy"] == "2.2.6"
