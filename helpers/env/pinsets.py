"""The pin sets the kit is tested with, and which one a box gets: its Python and its torch decide, or one line says why
none fits and what to change.

    python -m helpers.env box plan                                      # this box: this Python, its torch
    python -m helpers.env box plan --python 3.12 --torch 2.5.1+rocm6.2  # a box described, from anywhere [--json]

`make setup` asks before it installs anything (`box plan --setup`) and records the plan in the venv. Standard library
only: it runs before the kit, or even `packaging`, is installed.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from helpers.env.box import OWN_STACK, canon, installed_versions, own_unsloth_stack
from helpers.io import InputError

ROOT = Path(__file__).resolve().parents[2]
PLAN_FILE = "kit-pin-plan.json"  # in the venv, written by make setup
CPU_WHEEL = "2.13.0"  # the CPU torch make setup installs where the Python has no torch (Makefile: TORCH_PIN)


@dataclass(frozen=True)
class PinSet:
    """A tested set of pins: its constraints files (later ones laid over earlier ones), the Pythons and the oldest
    torch it takes, the backend it trains on, and how it is tested. `stack`: the machine-learning stack it carries
    (main: transformers 5.x; container: the challenge container's transformers 4.51.3, trl 0.19.0)."""
    name: str
    stack: str
    files: tuple[str, ...]
    python: tuple[tuple[int, int], tuple[int, int]]
    torch_min: tuple[int, int]
    backend: str
    tested: str
    own_stack: bool = False  # only for a box that holds its own Unsloth stack (helpers.env.box.own_unsloth_stack)


# In order of preference: the first that fits a box is its plan.
PIN_SETS = (
    PinSet("starter", "starter", ("constraints.txt", "constraints-starter.txt"), ((3, 11), (3, 12)), (2, 4),
           "the box's own Unsloth for training where it imports and loads, else transformers + PEFT; the box's "
           "transformers, trl, Unsloth, vLLM, bitsandbytes and every other package it holds stay as they are",
           "the seams of its top versions (constraints-starter.txt: transformers 4.56.2, trl 0.23.0) read from their "
           "wheels by tests/test_starter_stack.py and run through the kit's own choices; the box itself planned only",
           own_stack=True),
    PinSet("main", "main", ("constraints.txt",), ((3, 11), (3, 12)), (2, 6),
           "transformers + PEFT; Unsloth once make setup-gpu lays constraints-gpu.txt over these pins",
           "make test (Python 3.11, torch 2.13.0 CPU, every tier); make test-gpu-stack (Python 3.12 in CI, torch "
           "2.13.0 from PyPI, on the CPU: the static and unit tiers on these pins with constraints-gpu.txt over them)"),
    PinSet("container", "container", ("constraints.txt", "constraints-container.txt"), ((3, 11), (3, 12)), (2, 4),
           "transformers + PEFT (Unsloth 2026.10.9 needs transformers >= 4.52.4, so not on these pins)",
           "make test-container here (Python 3.11, torch 2.13.0 CPU, the static and unit tiers); CI runs that tier on "
           "Python 3.10, the py310 set: the same machine-learning stack on torch 2.5.1, other numerics pins"),
    PinSet("py310", "container", ("constraints.txt", "constraints-container.txt", "constraints-py310.txt"),
           ((3, 10), (3, 10)), (2, 4),
           "transformers + PEFT (trl 1.x, and so Unsloth's pins, need Python >= 3.11)",
           "make test-container on Python 3.10.13 with torch 2.5.1 from PyPI, on the CPU (CI): the static and unit "
           "tiers"),
)
MAIN = next(s for s in PIN_SETS if s.name == "main")  # the kit's own pins, the ones make setup-gpu lays Unsloth's over
# Why Python 3.10 gets the container's stack: what of the main pins has no wheel there (pip --only-binary :all:).
NO_PY310 = ("numpy 2.4.6, pandas 3.1.1, ipython 9.18.1, matplotlib 3.11.2 and others of the main pins have no Python "
            "3.10 wheel (constraints-py310.txt replaces them), and trl 1.x needs Python >= 3.11")
TORCH_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:(?:a|b|rc)\d+)?(?:\.(?:dev|post)\d+)?(?:\+([A-Za-z0-9_.]+))?$")


def parse_torch(version: str) -> tuple[tuple[int, int], str]:
    """'2.5.1+rocm6.2' -> ((2, 5), 'rocm'); '+cu124' 'cuda', '+cpu' 'cpu', no tag 'unlabelled'. ValueError else."""
    match = TORCH_RE.match(version.strip())
    if not match:
        raise ValueError(f"torch {version!r} cannot be read as a version: expected one like 2.5.1+rocm6.2")
    local = (match[4] or "").lower()
    build = ("rocm" if local.startswith("rocm") else "cuda" if local.startswith("cu") else "cpu" if local == "cpu"
             else "unlabelled (PyPI's default build)")
    return (int(match[1]), int(match[2])), build


def parse_python(version: str) -> tuple[int, int]:
    """'3.12.3' or '3.12' -> (3, 12); ValueError naming the text otherwise."""
    match = re.match(r"^(\d+)\.(\d+)(?:\.\d+)?", version.strip())
    if not match:
        raise ValueError(f"Python {version!r} cannot be read as a version: expected one like 3.12")
    return int(match[1]), int(match[2])


def read_pins(path: str | Path) -> dict[str, str]:
    """{canonical name: version} of a constraints file's `name==version` lines (comments and blanks skipped); any
    other line is an InputError naming the file and the line."""
    return {name: version for name, version in pin_lines(path, bare=False) if version is not None}


def pin_lines(path: str | Path, bare: bool) -> list[tuple[str, str | None]]:
    """(canonical name, version) per `name==version` line of a pin or package list (comments and blanks skipped);
    with bare, a line naming no version gives None (pip list --format=freeze writes a few). Any other line is an
    InputError naming the file and the line."""
    pattern = r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*" + (r"(?:==\s*([^\s;]+))?" if bare else r"==\s*([^\s;]+)")
    expected = "'name==version' or a bare name (pip list --format=freeze)" if bare else "'name==version'"
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        match = re.fullmatch(pattern, text)
        if not match:
            raise InputError(path, n, None, f"expected {expected}, got {text!r}")
        out.append((canon(match[1]), match[2]))
    return out


def pins_of(pin_set: PinSet, root: Path = ROOT) -> dict[str, str]:
    """{package: version} of the set's files, a later file's pin replacing an earlier one's."""
    pins: dict[str, str] = {}
    for name in pin_set.files:
        pins.update(read_pins(root / name))
    return pins


def constraint_text(pin_set: PinSet, root: Path = ROOT) -> str:
    """The set as one constraints file (one pin per package), what make setup installs the kit with."""
    return "".join(f"{name}=={version}\n" for name, version in sorted(pins_of(pin_set, root).items()))


def _dotted(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def refusal_for_python(python: tuple[int, int]) -> str | None:
    """Why no set takes this Python, and what to change; None when one may."""
    low, high = min(s.python[0] for s in PIN_SETS), max(s.python[1] for s in PIN_SETS)
    if python < low:
        return (f"Python {_dotted(python)}: no tested pin set installs on it (the oldest takes {_dotted(low)}); use a "
                f"box image with Python {_dotted(low)}-{_dotted(high)} and its own ROCm or CUDA torch")
    if python > high:
        return (f"Python {_dotted(python)}: no pin set is tested on it (they stop at {_dotted(high)}); use Python "
                f"{_dotted(low)}-{_dotted(high)}")
    return None


def plan(python: str, torch: str | None, root: Path = ROOT, stack: str | None = None,
         own: dict[str, str] | None = None) -> dict:
    """The pin set for a box of this Python and torch (None: no torch yet, so make setup installs the CPU wheel):
    {"ok", "pins", "files", "transformers", "trl", "backend", "why", "tested", "python", "torch"}. `stack`: only the
    sets that carry it (make test-container asks for the container's stack on whatever Python runs it). `own`: the
    box's own unsloth, transformers and trl versions (this_box_stack); a box holding its own Unsloth on transformers 4.x
    (the starter kit's Dockerfile) gets the starter set, which keeps them."""
    out: dict = {"ok": False, "pins": None, "files": [], "transformers": None, "trl": None, "backend": None,
                 "tested": None, "python": python, "torch": torch}
    try:
        py = parse_python(python)
        version, build = parse_torch(torch) if torch else ((2, 13), "cpu (the wheel make setup installs)")
    except ValueError as exc:
        return {**out, "why": str(exc)}
    refused = refusal_for_python(py)
    if refused:
        return {**out, "why": refused}
    held = own_unsloth_stack(own or {})
    for pin_set in PIN_SETS:
        if (stack and pin_set.stack != stack) or (pin_set.own_stack and not held and stack != pin_set.stack):
            continue
        if pin_set.python[0] <= py <= pin_set.python[1] and version >= pin_set.torch_min:
            pins = {**pins_of(pin_set, root), **(own if pin_set.own_stack and own else {})}
            return {**out, "ok": True, "pins": pin_set.name, "files": list(pin_set.files),
                    "transformers": pins.get("transformers"), "trl": pins.get("trl"), "backend": pin_set.backend,
                    "tested": pin_set.tested, "build": build,
                    "why": f"this box holds {held}: the starter kit's Dockerfile box" if pin_set.own_stack and held
                    else _why(pin_set, version, torch)}
    oldest = min(s.torch_min for s in PIN_SETS)
    return {**out, "why": f"torch {torch}: older than every tested pin set (the oldest takes torch >= "
                          f"{_dotted(oldest)}: the original team's MI50 ran 2.4.1+rocm6.0); use a box image with torch "
                          f"{_dotted(oldest)} or newer"}


def _why(pin_set: PinSet, version: tuple[int, int], torch: str | None) -> str:
    """Why this set: the torch it needs, and where the preferred one stops."""
    shown = torch or f"{CPU_WHEEL} (CPU, installed by make setup)"
    main = MAIN
    if pin_set is main:
        return f"torch {shown} is >= {_dotted(main.torch_min)}: the main pins"
    if version < main.torch_min:
        return (f"torch {shown} is below {_dotted(main.torch_min)}, where transformers 5.x disables PyTorch; the "
                f"challenge container's pins (transformers 4.51.3) run on torch >= {_dotted(pin_set.torch_min)}")
    if pin_set.python[1] < main.python[0]:
        return f"Python {_dotted(pin_set.python[1])}: {NO_PY310}, so the challenge container's stack"
    return f"the {pin_set.stack} stack was asked for"


def unsloth_blocker(python: str, torch: str | None) -> str | None:
    """Why make setup-gpu cannot lay Unsloth's pins (transformers 5.17, trl 1.15) on this box, or None: only a box the
    main pins fit can take them."""
    p = plan(python, torch)
    if p["ok"] and p["pins"] == MAIN.name:
        return None
    return (f"this box gets the '{p['pins']}' pins ({p['why']}), not the main ones Unsloth's go over"
            if p["ok"] else p["why"])


def parse_has(text: str) -> dict[str, str]:
    """'unsloth==2026.11.1,transformers==4.56.2' -> {canonical name: version}; ValueError naming a bad item."""
    out = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        name, sep, version = item.partition("==")
        if not sep or not name.strip() or not version.strip():
            raise ValueError(f"--has {item!r}: expected name==version, e.g. transformers==4.56.2")
        out[canon(name.strip())] = version.strip()
    return out


def this_box_stack() -> dict[str, str]:
    """This Python's own unsloth, unsloth_zoo, transformers and trl versions, read from metadata, never imported."""
    return {n: v for n, v in installed_versions().items() if n in OWN_STACK}


def this_box() -> tuple[str, str | None]:
    """(this Python's version, its torch's version or None), torch read from its metadata, never imported."""
    from importlib import metadata
    try:
        torch = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch = None
    return ".".join(map(str, sys.version_info[:3])), torch


def describe(p: dict) -> str:
    """The plan in one line."""
    if not p["ok"]:
        return f"setup: REFUSED: {p['why']}"
    return (f"setup: pins '{p['pins']}' ({' + '.join(p['files'])}: transformers {p['transformers']}, trl {p['trl']}) "
            f"for Python {p['python']}: {p['why']}; backend {p['backend']}")


def recorded_torch_change(venv: Path, torch: str | None) -> str | None:
    """Why a venv's recorded plan no longer fits the box (its torch changed since make setup chose the pins), or
    None."""
    path = venv / PLAN_FILE
    if not path.is_file():
        return None
    try:
        was = json.loads(path.read_text(encoding="utf-8"))["torch"]
    except (ValueError, KeyError, TypeError):
        return (f"{path}: field 'torch': unreadable record of the pins make setup chose; remove {venv} and run "
                "make setup")
    if was == torch:
        return None
    return (f"the box's torch changed since make setup chose its pins ({was or 'none'} -> {torch or 'none'}): nothing "
            f"installed; remove {venv} and run make setup again, so the pins are chosen for this torch")


def setup_check(venv: Path, torch: str | None) -> tuple[int, str]:
    """make setup's first step, before anything is installed: (exit status, the one line). `torch`: the one the venv
    will use (the base Python's GPU build, or None where make setup installs its own). Refuses (2) a box no set fits,
    or one whose torch changed since the venv's pins were chosen; else records the plan in the venv."""
    python, _ = this_box()
    p = plan(python, torch, own=this_box_stack())
    changed = recorded_torch_change(venv, torch) if p["ok"] else None
    if changed:
        return 2, f"setup: REFUSED: {changed}"
    if p["ok"]:
        venv.mkdir(parents=True, exist_ok=True)
        tmp = venv / f"{PLAN_FILE}.{os.getpid()}.tmp"  # two makes at once (CI's side-by-side tiers) never share one
        tmp.write_text(json.dumps(p, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(venv / PLAN_FILE)
    return (0 if p["ok"] else 2), describe(p)
