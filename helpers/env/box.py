"""The torch stack a GPU box owns (torch, its triton, bitsandbytes, ...): what is installed, a record of it, what changed.

Standard library only, so `make setup` can record the stack and filter its pins before the kit (or `packaging`) is
installed: `python -m helpers.env box record` and `python -m helpers.env box constraints FILE`.
Why: a plain pip install on the ROCm container can put PyPI's triton over pytorch-triton-rocm (the original team's
`triton_key` ImportError) or swap the ROCm torch for a CUDA one. The kit never installs or replaces these.
"""

from __future__ import annotations

import json
import re
import sys
from importlib import metadata
from pathlib import Path

# Owned by the box (built for its ROCm/CUDA torch): reported, never installed or replaced by the kit.
GUARDED = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm", "pytorch-triton", "bitsandbytes",
           "xformers", "torchao")
# The `triton` module comes from one of these distributions (ROCm wheels ship it as pytorch-triton-rocm).
TRITON_PROVIDERS = ("triton", "pytorch-triton-rocm", "pytorch-triton")
STACK_FILE = "kit-accelerator-stack.json"  # in the venv (sys.prefix), written by make setup


def canon(name: str) -> str:
    """PyPI's canonical name: 'Unsloth_Zoo' -> 'unsloth-zoo'."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_versions() -> dict[str, str]:
    """{canonical name: version} of what this interpreter imports: where a venv shadows the box's copy (made with
    --system-site-packages), the first on sys.path, as import finds it."""
    out: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            out.setdefault(canon(name), dist.version)
    return out


# The starter kit's Dockerfile builds a box that holds Unsloth itself, on transformers 4.51.3-4.56.2 and trl <= 0.23.0
# (tournament-rules.md): the kit keeps that stack as the box has it (helpers.env.pinsets' "starter" set).
OWN_STACK = ("unsloth", "unsloth-zoo", "transformers", "trl")


def own_unsloth_stack(installed: dict[str, str]) -> str | None:
    """'unsloth X on transformers Y, trl Z' when the box holds its own Unsloth on a transformers 4.x (the starter kit's
    Dockerfile box, whose stack the kit keeps), else None. The kit's own make setup-gpu puts Unsloth on 5.x."""
    transformers = installed.get("transformers")
    if "unsloth" not in installed or not transformers or not transformers.split(".")[0].isdigit() \
            or int(transformers.split(".")[0]) >= 5:
        return None
    return f"unsloth {installed['unsloth']} on transformers {transformers}, trl {installed.get('trl', 'none')}"


def base_versions() -> dict[str, str]:
    """{canonical name: version} of the box's own Python only: what a venv made with --system-site-packages sees
    beneath its own packages (in a plain Python, everything installed)."""
    if sys.prefix == sys.base_prefix:
        return installed_versions()
    paths = [p for p in sys.path if p and not str(Path(p).resolve()).startswith(str(Path(sys.prefix).resolve()))]
    out: dict[str, str] = {}
    for dist in metadata.distributions(path=paths):
        name = dist.metadata["Name"]
        if name:
            out.setdefault(canon(name), dist.version)
    return out


def guarded_versions(installed: dict[str, str]) -> dict[str, str]:
    """The box's own packages as installed now: {name: version}."""
    return {n: installed[n] for n in GUARDED if n in installed}


def held_names(installed: dict[str, str], *, pinned_only: bool = False) -> set[str]:
    """The box's packages and everything they require (torch 2.5.1+rocm6.2 pins sympy==1.13.1, its triton, ...):
    the names a pip step must leave at their installed versions. pinned_only: of what they require, only what they pin
    exactly (sympy==1.13.1, pytorch-triton-rocm==3.1.0), not what any version satisfies (fsspec, filelock), which a
    venv may shadow with the pin set's own (datasets 3.6.0 needs fsspec <= 2025.3.0)."""
    names = set(guarded_versions(installed))
    for pkg in list(names):
        try:
            requires = metadata.requires(pkg) or []
        except metadata.PackageNotFoundError:
            continue
        names |= {canon(re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0]) for r in requires
                  if "extra ==" not in r and (not pinned_only or "==" in r.split(";")[0])}
    return {n for n in names if n in installed}


def constraint_lines(lines: list[str], installed: dict[str, str], own: dict[str, str] | None = None) -> list[str]:
    """A constraints file's lines for this box: a pin of the box's package, or of what it pins exactly, becomes its
    installed version (constraints.txt's torch==2.13.0 is the CPU wheel; a ROCm torch's sympy is not the CPU torch's).
    The venv may shadow the rest: the box's own copies are never touched. On a box with its own Unsloth stack
    (own_unsloth_stack of `own`, the box's own packages: base_versions() by default) every package the box itself
    holds is held at its version, and only those: what the venv installed before stays free to move with the pins."""
    held = held_names(installed, pinned_only=True) if guarded_versions(installed) else set()
    versions = dict(installed)
    own = base_versions() if own is None else own
    if own_unsloth_stack(own):
        held, versions = set(own), {**installed, **own}  # the starter kit's box: what it holds stays as it is
    out = []
    for line in lines:
        name = canon(re.split(r"[\s#;<>=!~\[]", line.strip(), maxsplit=1)[0]) if line.strip() else ""
        out.append(f"{name}=={versions[name]}" if name in held else line)
    return out


def compare(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """One line with its fix for each box package that a step replaced, removed or added."""
    lines = []
    for name in sorted(set(before) | set(after)):
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        if was and now:
            what = f"{name} was {was}, now {now}: pip replaced this box's build."
            fix = (f"`pip uninstall -y {name}` in the kit's venv (the box's own {was} shows through again when the "
                   f"venv was made with --system-site-packages), else reinstall {name}=={was} from your torch's index")
        elif now:
            what = f"{name} {now} was added beside this box's stack."
            boxed = [f"{p} {before[p]}" for p in TRITON_PROVIDERS if p in before]
            fix = f"`pip uninstall -y {name}`" + (f" (the box's triton is {', '.join(boxed)})"
                                                  if name in TRITON_PROVIDERS and boxed else "")
        else:
            what = f"{name} {was} was removed."
            fix = f"reinstall {name}=={was} from your torch's index"
        lines.append(f"{what} Fix: {fix}.")
    return lines


def stack_path(prefix: str | Path | None = None) -> Path:
    """Where make setup recorded the box's stack: in the venv itself."""
    return Path(prefix or sys.prefix) / STACK_FILE


def record_stack(installed: dict[str, str], path: Path, *, overwrite: bool = False) -> bool:
    """Write the box's stack once (the first make setup, before the kit's own installs); True when written."""
    if path.exists() and not overwrite:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"guarded": guarded_versions(installed)}, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)  # atomic: a reader sees the old record or the whole new one
    return True


def stack_changes(path: Path, installed: dict[str, str]) -> list[str]:
    """compare() against the recorded stack; [] when nothing was recorded (a venv made before this check)."""
    if not path.exists():
        return []
    try:
        recorded = json.loads(path.read_text())["guarded"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: field 'guarded': unreadable stack record ({exc}): delete it and rerun make setup")
    return compare(recorded, guarded_versions(installed))
