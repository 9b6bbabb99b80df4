"""What the pinned Unsloth wheels ask of a box: pins, the wheels' requirements, the install plan. Pure (no pip, no
torch import), so every decision is tested on fabricated versions; the box's own stack is helpers.env.box.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from helpers.env.box import GUARDED, TRITON_PROVIDERS, canon
from helpers.env.pinsets import read_pins  # noqa: F401  (make setup-gpu reads its pins with it)
from helpers.io import InputError

UNSLOTH = ("unsloth", "unsloth-zoo")
# What a missing box package costs (Unsloth imports xformers and torchao only when present; bitsandbytes on every load).
MISSING_COST = {
    "triton": "Unsloth's kernels are Triton kernels: it will not import",
    "torchvision": "Unsloth's vision paths need it; text LoRA does not import it",
    "bitsandbytes": ("Unsloth imports but loads no model, a 16-bit one included (its loader imports bitsandbytes; "
                     "seen on an H200), so the env check keeps transformers + PEFT until the box's build is in"),
    "xformers": "Unsloth uses torch's SDPA attention instead",
    "torchao": "no torchao quantisation (the kit does not use it)",
}
# What a box package outside Unsloth's range costs, where that differs from its absence.
OUTSIDE_COST = {
    "bitsandbytes": "no 4-bit loading on AMD below 0.48.2 and maybe no 8-bit optimizer (the kit trains 16-bit)",
}
# Box packages Unsloth cannot run without; the others only switch a feature off when absent or at another version.
BLOCKING = ("torch", "triton")
ROOT = Path(__file__).resolve().parents[2]
GPU_PINS = ROOT / "constraints-gpu.txt"  # the Unsloth pins and the stack they need (make setup-gpu)
KIT_PINS = ROOT / "constraints.txt"


def public(version: str) -> Version | None:
    """The version without its local part ('2.5.1+rocm6.2' -> 2.5.1), None when unparseable."""
    try:
        return Version(Version(version).public)
    except InvalidVersion:
        return None



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
        blocking = name in BLOCKING
        line = (f"{name}: not installed; Unsloth wants {wants}. The kit never installs it (it must match this box's "
                f"torch build): {MISSING_COST.get(name, 'Unsloth may not import without it')}.")
        return Finding(name, wants, None, blocking, line)
    if name in BLOCKING:
        then = "Pick the Unsloth release that supports it (constraints-gpu.txt) or keep the transformers + PEFT backend"
    elif name in OUTSIDE_COST:
        then = f"Unsloth runs with it: {OUTSIDE_COST[name]}"
    else:
        then = f"Unsloth runs without it: {MISSING_COST.get(name, 'a feature is off')}"
    line = (f"{name} {have} is outside Unsloth's {wants}: the kit will not replace it (it belongs to this box's torch "
            f"build). {then}.")
    return Finding(name, wants, have, name in BLOCKING, line)


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
    """'transformers 4.51.3 (Unsloth wants >=4.52.4,...)' for each requirement the installed packages miss that stops
    Unsloth (a box package it runs without, like xformers or bitsandbytes, only switches a feature off: not counted)."""
    out = []
    for req in merged(requirements):
        name = canon(req.name)
        have = have_version(name, installed)
        optional = name in GUARDED and name not in BLOCKING
        if name not in UNSLOTH and not optional and not satisfies(req, have):
            out.append(f"{name} {have or 'not installed'} (Unsloth wants {req.specifier or 'it'})")
    return out


def find_wheel(folder: Path, name: str, version: str) -> Path | None:
    """The wheel of name==version in folder, if there (its file name's project spelled any way PEP 427 allows)."""
    stem = re.sub(r"[-_.]+", "_", name).lower()
    for path in sorted(folder.glob("*.whl")):
        parts = path.name.split("-")
        if len(parts) >= 3 and re.sub(r"[-_.]+", "_", parts[0]).lower() == stem and parts[1] == version:
            return path
    return None
