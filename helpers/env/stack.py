"""The accelerator stack a box owns and what Unsloth asks of it: pins, wheel requirements, the install plan, the
before/after comparison. Pure (no pip, no torch import), so every decision is tested on fabricated versions.

Why: Unsloth's wheel declares torch, triton, bitsandbytes, xformers and torchao. A plain `pip install unsloth` on the
ROCm container would put PyPI's triton over pytorch-triton-rocm (the seeds' `triton_key` ImportError) and could swap
the ROCm torch for a CUDA one. Those packages belong to the box: the kit never installs or replaces them.
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from helpers.io import InputError, atomic_write_text

# Owned by the box (built for its ROCm/CUDA torch): reported, never installed or replaced by the kit.
GUARDED = ("torch", "torchvision", "torchaudio", "triton", "pytorch-triton-rocm", "pytorch-triton", "bitsandbytes",
           "xformers", "torchao")
# The `triton` module comes from one of these distributions (ROCm wheels ship it as pytorch-triton-rocm).
TRITON_PROVIDERS = ("triton", "pytorch-triton-rocm", "pytorch-triton")
UNSLOTH = ("unsloth", "unsloth-zoo")
# What a missing guarded package costs (Unsloth imports xformers, bitsandbytes and torchao only when present).
MISSING_COST = {
    "triton": "Unsloth's kernels are Triton kernels: it will not import",
    "torchvision": "Unsloth's vision paths need it; text LoRA does not import it",
    "bitsandbytes": "no 4-bit loading and no 8-bit optimizer (the kit trains 16-bit with adamw_torch)",
    "xformers": "Unsloth uses torch's SDPA attention instead",
    "torchao": "no torchao quantisation (the kit does not use it)",
}
BLOCKING_MISSING = ("torch", "triton")
STACK_FILE = "kit-accelerator-stack.json"  # in the venv (sys.prefix), written by make setup
ROOT = Path(__file__).resolve().parents[2]
GPU_PINS = ROOT / "constraints-gpu.txt"  # the Unsloth pins and the stack they need (make setup-gpu)
KIT_PINS = ROOT / "constraints.txt"


def canon(name: str) -> str:
    """PyPI's canonical name: 'Unsloth_Zoo' -> 'unsloth-zoo'."""
    return canonicalize_name(name)


def public(version: str) -> Version | None:
    """The version without its local part ('2.5.1+rocm6.2' -> 2.5.1), None when unparseable."""
    try:
        return Version(Version(version).public)
    except InvalidVersion:
        return None


def read_pins(path: str | Path) -> dict[str, str]:
    """{canonical name: version} of a constraints file's `name==version` lines (comments and blanks skipped)."""
    pins = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;]+)", text)
        if not match:
            raise InputError(path, n, None, f"expected 'name==version', got {text!r}")
        pins[canon(match.group(1))] = match.group(2)
    return pins


def wheel_metadata(wheel: str | Path) -> tuple[str, str, list[str]]:
    """(name, version, Requires-Dist lines) read from a wheel's METADATA, without installing or importing it."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        if len(names) != 1:
            raise InputError(wheel, None, "METADATA", f"expected one *.dist-info/METADATA, found {len(names)}")
        text = zf.read(names[0]).decode("utf-8")
    head = text.split("\n\n", 1)[0]  # the headers; the long description follows a blank line
    field_values = lambda key: [ln.split(":", 1)[1].strip() for ln in head.splitlines() if ln.startswith(key + ":")]
    return canon(field_values("Name")[0]), field_values("Version")[0], field_values("Requires-Dist")


def applicable(lines: list[str], environment: dict | None = None, source: str = "?") -> list[Requirement]:
    """The requirements whose markers hold here (or in `environment`), with no extra asked for."""
    out = []
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise InputError(source, None, "Requires-Dist", f"{line!r}: {exc}") from exc
        if req.marker is None or req.marker.evaluate({**(environment or {}), "extra": ""}):
            out.append(req)
    return out


def installed_versions() -> dict[str, str]:
    """{canonical name: version} of every distribution this interpreter sees."""
    return {canon(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}


def have_version(name: str, installed: dict[str, str]) -> str | None:
    """The installed version that answers `name` (the triton module may come from pytorch-triton-rocm)."""
    name = canon(name)
    if name == "triton":
        return next((installed[p] for p in TRITON_PROVIDERS if p in installed), None)
    return installed.get(name)


def satisfies(req: Requirement, version: str | None) -> bool:
    """Whether an installed version meets the requirement (local build tags like +rocm6.2 ignored)."""
    v = public(version) if version else None
    return v is not None and req.specifier.contains(v, prereleases=True)


@dataclass
class Finding:
    """One requirement of the wheels that the box's own packages answer, or fail to."""
    name: str
    wants: str
    have: str | None
    blocking: bool
    line: str


@dataclass
class Plan:
    """What `make setup-gpu` would do: install (name -> version), what is already fine, what the box must answer."""
    install: dict[str, str] = field(default_factory=dict)
    replaces: dict[str, str] = field(default_factory=dict)  # name -> the installed version the install moves
    ok: list[str] = field(default_factory=list)
    box: list[Finding] = field(default_factory=list)
    unpinned: list[str] = field(default_factory=list)

    @property
    def blockers(self) -> list[Finding]:
        return [f for f in self.box if f.blocking]


def _box_finding(req: Requirement, have: str | None) -> Finding:
    name, wants = canon(req.name), str(req.specifier) or "any version"
    if have is None:
        blocking = name in BLOCKING_MISSING
        line = (f"{name}: not installed; Unsloth wants {wants}. The kit never installs it (it must match this box's "
                f"torch build): {MISSING_COST.get(name, 'Unsloth may not import without it')}.")
        return Finding(name, wants, None, blocking, line)
    line = (f"{name} {have} is outside Unsloth's {wants}: the kit will not replace it (it belongs to this box's torch "
            "build). Pick the Unsloth release that supports it (constraints-gpu.txt) or keep the transformers + PEFT "
            "backend.")
    return Finding(name, wants, have, name in BLOCKING_MISSING or name == "triton", line)


def merged(requirements: list[Requirement]) -> list[Requirement]:
    """One requirement per package, its specifiers intersected (unsloth and unsloth_zoo both name transformers)."""
    by_name: dict[str, Requirement] = {}
    for req in requirements:
        name = canon(req.name)
        if name in by_name:
            by_name[name].specifier &= req.specifier
        else:
            by_name[name] = Requirement(f"{name}{req.specifier}")
    return list(by_name.values())


def plan(requirements: list[Requirement], installed: dict[str, str], pins: dict[str, str]) -> Plan:
    """Sort the wheels' requirements: met already, to install at a pin, or the box's own to answer."""
    out = Plan()
    for req in merged(requirements):
        name = canon(req.name)
        if name in UNSLOTH:
            continue  # installed from the pinned wheels themselves
        have = have_version(name, installed)
        if name in GUARDED:
            if satisfies(req, have):
                out.ok.append(f"{name} {have}")
            else:
                out.box.append(_box_finding(req, have))
        elif satisfies(req, have):
            out.ok.append(f"{name} {have}")
        elif name in pins and satisfies(req, pins[name]):
            out.install[name] = pins[name]
            if have is not None:
                out.replaces[name] = have
        elif name in pins:
            out.box.append(Finding(name, str(req.specifier), have, True,
                                   f"{name}: Unsloth wants {req.specifier} but the kit pins {pins[name]}: "
                                   "change constraints-gpu.txt"))
        else:
            out.install[name] = str(req.specifier)
            out.unpinned.append(name)
    return out


def unmet(requirements: list[Requirement], installed: dict[str, str]) -> list[str]:
    """'transformers 4.51.3 (Unsloth wants >=4.52.4,...)' for each requirement the installed packages miss (a box
    package Unsloth runs without, like xformers or bitsandbytes, only when it is there at a wrong version)."""
    out = []
    for req in merged(requirements):
        name = canon(req.name)
        have = have_version(name, installed)
        optional = name in GUARDED and name not in BLOCKING_MISSING and have is None
        if name not in UNSLOTH and not optional and not satisfies(req, have):
            out.append(f"{name} {have or 'not installed'} (Unsloth wants {req.specifier or 'it'})")
    return out


def guarded_versions(installed: dict[str, str]) -> dict[str, str]:
    """The box's own packages as installed now: {name: version}."""
    return {n: installed[n] for n in GUARDED if n in installed}


def compare(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """One line with its fix for each box package that a step replaced, removed or added."""
    lines = []
    for name in sorted(set(before) | set(after)):
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        if was and now:
            what = f"{name} was {was}, now {now}: pip replaced this box's build."
            fix = f"`pip uninstall -y {name}` in the kit's venv (the box's own {was} shows through again when the " \
                  f"venv was made with --system-site-packages), else reinstall {name}=={was} from your torch's index"
        elif now:
            what = f"{name} {now} was added beside this box's stack."
            fix = f"`pip uninstall -y {name}`" + (" (the box's triton is " + ", ".join(
                f"{p} {before[p]}" for p in TRITON_PROVIDERS if p in before) + ")" if name in TRITON_PROVIDERS and
                any(p in before for p in TRITON_PROVIDERS) else "")
        else:
            what = f"{name} {was} was removed."
            fix = f"reinstall {name}=={was} from your torch's index"
        lines.append(f"{what} Fix: {fix}.")
    return lines


def stack_path(prefix: str | Path | None = None) -> Path:
    """Where make setup recorded the box's stack: in the venv itself."""
    return Path(prefix or sys.prefix) / STACK_FILE


def record_stack(installed: dict[str, str], path: Path, *, overwrite: bool = False) -> bool:
    """Write the box's stack once (the first make setup); True when written."""
    if path.exists() and not overwrite:
        return False
    atomic_write_text(path, json.dumps({"guarded": guarded_versions(installed)}, indent=1, sort_keys=True) + "\n")
    return True


def stack_changes(path: Path, installed: dict[str, str]) -> list[str]:
    """compare() against the recorded stack; [] when nothing was recorded (a venv made before this check)."""
    if not path.exists():
        return []
    try:
        recorded = json.loads(path.read_text())["guarded"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(path, None, "guarded", f"unreadable stack record ({exc}): delete it and rerun make setup")
    return compare(recorded, guarded_versions(installed))
