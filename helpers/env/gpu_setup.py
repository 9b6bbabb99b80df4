"""`make setup-gpu`: Unsloth, pinned, into the kit's venv on a box that already has a ROCm or CUDA torch.

`python -m helpers.env gpu-setup install` downloads the pinned unsloth and unsloth_zoo wheels, reads what they require,
installs them with --no-deps (Unsloth's own AMD instructions) and only the requirements the box does not own, checks
that no package of the box's torch stack changed, then runs the environment check, which says which backend runs.
(make setup records that stack with helpers.env.box); `download` fetches the wheels (make setup, for the wheel test);
`plan` prints what install would do, on this interpreter or on a constraints file's versions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from helpers.env import box, stack

ROOT, GPU_PINS, KIT_PINS = stack.ROOT, stack.GPU_PINS, stack.KIT_PINS


def wheel_dir() -> Path:
    """Where the pinned Unsloth wheels are kept: inside the venv, beside the stack record."""
    return Path(sys.prefix) / "gpu-wheels"


def unsloth_pins() -> dict[str, str]:
    """{'unsloth': version, 'unsloth-zoo': version} from constraints-gpu.txt; a missing one is an error."""
    pins = stack.read_pins(GPU_PINS)
    missing = [n for n in stack.UNSLOTH if n not in pins]
    if missing:
        raise SystemExit(f"{GPU_PINS}: no pin for {', '.join(missing)} (expected lines like 'unsloth==2026.10.9')")
    return {n: pins[n] for n in stack.UNSLOTH}


def pinned_wheels(dest: Path | None = None) -> list[Path]:
    """The pinned unsloth and unsloth_zoo wheels in `dest`; FileNotFoundError naming what is missing."""
    return wheels_in(unsloth_pins(), dest or wheel_dir(), fetch=False)


def download(dest: Path | None = None) -> list[Path]:
    """pip download --no-deps the two pinned wheels into `dest` unless they are already there."""
    return wheels_in(unsloth_pins(), dest or wheel_dir(), fetch=True)


STARTER_PINS = ROOT / "constraints-starter.txt"  # the starter kit's Dockerfile stack (helpers.env.pinsets)
STARTER_TOPS = ("transformers", "trl")  # whose wheels tests/test_starter_stack.py reads


def starter_wheels(dest: Path | None = None, fetch: bool = True) -> list[Path]:
    """The transformers and trl wheels of constraints-starter.txt in `dest` (downloaded --no-deps when missing and
    `fetch`): never installed, read by tests/test_starter_stack.py for the kit's seams on that stack."""
    pins = stack.read_pins(STARTER_PINS)
    return wheels_in({n: pins[n] for n in STARTER_TOPS}, dest or wheel_dir(), fetch)


def wheels_in(wanted: dict[str, str], dest: Path, fetch: bool) -> list[Path]:
    """The wheel of each name==version in `dest`, in `wanted`'s order; with fetch, the missing ones pip-downloaded
    --no-deps first. FileNotFoundError naming those still missing."""
    found = {n: stack.find_wheel(dest, n, v) if dest.is_dir() else None for n, v in wanted.items()}
    missing = [f"{n}=={v}" for n, v in wanted.items() if found[n] is None]
    if missing and fetch:
        dest.mkdir(parents=True, exist_ok=True)
        _pip(["download", "--no-deps", "--only-binary=:all:", "--quiet", "-d", str(dest), *missing])
        return wheels_in(wanted, dest, fetch=False)
    if missing:
        raise FileNotFoundError(f"{dest}: no {', '.join(missing)} wheel: run `python -m helpers.env gpu-setup "
                                f"download` (make setup does)")
    return [p for p in found.values() if p is not None]


def requirements(wheels: list[Path]) -> list:
    """The requirements of the wheels whose markers hold on this machine."""
    out = []
    for wheel in wheels:
        _, _, lines = stack.wheel_metadata(wheel)
        out += stack.applicable(lines, source=str(wheel))
    return out


def pins() -> dict[str, str]:
    """The versions the kit installs: constraints.txt, overridden by constraints-gpu.txt."""
    return {**stack.read_pins(KIT_PINS), **stack.read_pins(GPU_PINS)}


def accelerator_torch() -> str | None:
    """'rocm 6.2' / 'cuda 12.4' for this interpreter's torch build, None for a CPU build or no torch."""
    try:
        import torch
    except ImportError:
        return None
    hip, cuda = getattr(torch.version, "hip", None), getattr(torch.version, "cuda", None)
    return f"rocm {hip}" if hip else f"cuda {cuda}" if cuda else None


def in_venv() -> bool:
    """Whether this interpreter is a venv (its installs shadow, never touch, the base Python's packages)."""
    return sys.prefix != sys.base_prefix


def print_plan(p: stack.Plan) -> None:
    """The plan a person reads before anything is installed."""
    print(f"setup-gpu: already met ({len(p.ok)}): {', '.join(p.ok) or 'nothing'}")
    for name, version in p.install.items():
        moved = f" (replaces {p.replaces[name]} in the kit's venv)" if name in p.replaces else ""
        print(f"setup-gpu: will install {name}{'' if version[:1] in '<>=!~' else '=='}{version}{moved}")
    for finding in p.box:
        print(f"setup-gpu: {'BLOCKS' if finding.blocking else 'note'}: {finding.line}")


def _pip(args: list[str]) -> None:
    cmd = [sys.executable, "-m", "pip", *args]
    proc = subprocess.run(cmd)
    if proc.returncode:
        raise SystemExit(f"setup-gpu: `{' '.join(cmd)}` failed (exit {proc.returncode}); see pip's message above")


def constraints_file(installed: dict[str, str], folder: Path) -> Path:
    """pip constraints: the box's packages and what they require at their installed versions (a resolve cannot move
    them; a ROCm torch's sympy is not the CPU torch's), every other package at the kit's pin."""
    held = {n: installed[n] for n in box.held_names(installed)}
    kit = {n: v for n, v in pins().items() if n not in held and n not in box.GUARDED and n not in stack.UNSLOTH}
    path = folder / "constraints.txt"
    path.write_text("".join(f"{n}=={v}\n" for n, v in {**kit, **held}.items()))
    return path


def resolve(specs: list[str], constraints: Path) -> dict[str, str]:
    """{name: version} pip's resolver picks for `specs` and everything they pull in (pip --dry-run --report: pip 22.2
    or newer, which make setup's venv has)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        _pip(["install", "--dry-run", "--quiet", "--report", str(report), "-c", str(constraints), *specs])
        items = json.loads(report.read_text()).get("install", [])
    return {box.canon(i["metadata"]["name"]): i["metadata"]["version"] for i in items}


def pip_problem() -> str | None:
    """Why this venv's pip cannot plan the install (--dry-run --report needs pip 22.2), else None."""
    from importlib import metadata
    have = stack.public(metadata.version("pip"))
    if have is None or have < stack.Version("22.2"):
        return (f"setup-gpu: pip {metadata.version('pip')} cannot plan the install (--dry-run --report needs 22.2 or "
                f"newer): run `{sys.executable} -m pip install -U pip`, then make setup-gpu. Nothing installed.")
    return None


def without_box_packages(resolved: dict[str, str]) -> dict[str, str]:
    """The resolve minus the box's packages, which are said and left to the box (e.g. cut-cross-entropy pulls
    PyPI's triton; on ROCm the box's pytorch-triton-rocm provides that module)."""
    for name in sorted(set(resolved) & set(box.GUARDED)):
        print(f"setup-gpu: note: the requirements pull {name} {resolved[name]}; not installed: this box's own "
              f"{name} (or its provider) answers them")
    return {n: v for n, v in resolved.items() if n not in box.GUARDED}


def print_not_a_venv(moved: dict[str, str]) -> None:
    """Outside a venv every install lands in the box's own Python: say what Unsloth would have moved, and the way."""
    print("setup-gpu: Unsloth NOT installed: this Python is not a venv and Unsloth would move "
          + ", ".join(f"{n} {v}" for n, v in moved.items()) + ", which this box's Python owns (the challenge container "
          "pins transformers 4.51.3 and trl 0.19.0; Unsloth needs newer). Training runs on transformers + PEFT. For "
          "Unsloth, run make setup (its venv shadows, never changes, these) and then make setup-gpu.")


def box_python() -> str:
    """This Python's version, '3.12.3'."""
    return ".".join(map(str, sys.version_info[:3]))


def stack_blocker(torch: str | None) -> str | None:
    """Why Unsloth's pinned stack cannot go on this box (on torch below 2.6 its transformers 5.x disables PyTorch; on
    Python 3.10 its trl does not install), or None. The pin plan (helpers.env.pinsets) gives such a box the challenge
    container's stack instead."""
    from helpers.env import pinsets
    if not torch:
        return None
    try:
        pinsets.parse_torch(torch)
    except ValueError:
        return None  # an unreadable version: the stack plan below reports what it finds
    blocker = pinsets.unsloth_blocker(box_python(), torch)
    if blocker is None:
        return None
    return (f"its pinned stack (transformers {pins().get('transformers', '5.x')}) cannot go on this box: {blocker} "
            "(`python -m helpers.env box plan` says the same)")


def install(cpu_rehearsal: bool = False) -> int:
    """The whole set-up. Exit 0 whenever the box is left working: Unsloth installed, or not and the reason said (a
    blocker, or a Python that is not a venv); 1 when a package the box owns changed; 2 on a CPU torch."""
    build = accelerator_torch()
    if build is None and not cpu_rehearsal:
        print("setup-gpu: this Python's torch is a CPU build (or absent): make setup-gpu is for a GPU box whose "
              "Python already has a ROCm or CUDA torch. Nothing installed; training runs on transformers + PEFT.")
        return 2
    problem = pip_problem()
    if problem:
        print(problem)
        return 2
    before = box.installed_versions()
    own = box.own_unsloth_stack(before)
    if own and not cpu_rehearsal:
        print(f"setup-gpu: this box holds its own {own} (the starter kit's Dockerfile box): nothing installed. The kit "
              "trains with that Unsloth where it imports and loads, else transformers + PEFT (make gpu-check shows it); the env check "
              "below says which.")
        return subprocess.run([sys.executable, "-m", "helpers.env", "gpu-setup", "check"]).returncode
    blocked = stack_blocker(before.get("torch"))
    if blocked and not cpu_rehearsal:
        print(f"setup-gpu: Unsloth NOT installed: {blocked}; training runs on transformers + PEFT.")
        return 0
    wheels = download()
    p = stack.plan(requirements(wheels), before, pins())
    print_plan(p)
    if p.blockers and not cpu_rehearsal:
        print("setup-gpu: Unsloth NOT installed (see BLOCKS above); training runs on transformers + PEFT.")
        return 0
    specs = [f"{n}=={v}" if v[:1] not in "<>=!~" else f"{n}{v}" for n, v in p.install.items()]
    with tempfile.TemporaryDirectory() as tmp:
        chosen = without_box_packages(resolve(specs, constraints_file(before, Path(tmp)))) if specs else {}
        moved = {n: before[n] for n, v in chosen.items() if n in before and before[n] != v}
        if moved and not in_venv():
            print_not_a_venv(moved)
            return 0
        # --no-deps throughout (Unsloth's own AMD instructions): pip installs exactly this list, nothing it adds.
        _pip(["install", "--quiet", "--no-deps", *map(str, wheels), *(f"{n}=={v}" for n, v in chosen.items())])
    changes = box.compare(box.guarded_versions(before), box.guarded_versions(box.installed_versions()))
    for line in changes:
        print(f"setup-gpu: FAILED: {line}")
    if changes:
        return 1
    print(f"setup-gpu: unsloth {unsloth_pins()['unsloth']} installed; the box's torch stack is unchanged "
          f"({', '.join(f'{n} {v}' for n, v in box.guarded_versions(before).items())})")
    return subprocess.run([sys.executable, "-m", "helpers.env", "gpu-setup", "check"]).returncode


def check() -> int:
    """The environment check after set-up: the backend that will run and why, and every check that did not pass."""
    from helpers import env
    facts = env.collect_facts(hf_budget_s=2.0)
    rec = env.recommend(facts)
    checks = env.evaluate(facts, {"use_unsloth": "auto"})
    item = rec["use_unsloth"]
    print(f"env check: backend {'unsloth' if item['value'] else 'transformers + PEFT'}: {item['reason']}")
    print(env.checks_table(checks))
    return 1 if any(c["status"] == "fail" for c in checks) else 0


def plan_on(versions_file: Path | None) -> int:
    """Print the plan against this interpreter or against a constraints file's versions (e.g. the container's)."""
    installed = box.installed_versions()
    if versions_file:
        installed = {**stack.read_pins(KIT_PINS), **stack.read_pins(versions_file)}
    p = stack.plan(requirements(pinned_wheels()), installed, pins())
    print_plan(p)
    return 0


if __name__ == "__main__":  # the command moved (helpers.moved says where)
    from helpers import moved
    moved.refuse(__spec__.name)
