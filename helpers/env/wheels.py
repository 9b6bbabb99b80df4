"""`make gpu-wheels`: the folder of wheels an offline GPU box needs to run the GPU check through Unsloth, GRPO too.

Run where the package index answers, for a box described by its own package list (`python3 -m pip list
--format=freeze` run there: `name==version` lines; a bare `name` means present, version unknown):

    python -m helpers.env gpu-wheels --box FILE --python 3.12 [--cuda 13.0] [--dest DIR]

The list is exact: the pinned unsloth and unsloth_zoo wheels (constraints-gpu.txt), then every requirement of a
carried wheel, read from its METADATA for the box's Python on Linux x86_64, that the box does not answer, each at the
kit's pin (constraints.txt with constraints-gpu.txt over it). A requirement with no pin is refused naming it and who
asks for it: pin it, so the folder is the same on every run. A package the box holds at a version the requirement
admits is not carried; one whose version the list leaves unknown answers only a requirement with no version bound.
The box's torch stack (helpers.env.box.GUARDED) is never carried, with one exception: on a CUDA box (`--cuda`) with no
bitsandbytes, whose absence stops every load through Unsloth, PyPI's bitsandbytes is carried, repacked to the native
library of that CUDA (the wheel holds one per CUDA and ROCm release: 43 MB, 3.6 MB once repacked). The folder must fit
in MAX_MIB (what an offline box is given with the kit is kept small); manifest.json lists every wheel, its size, its sha256 and who
asked for it. On the box, offline, into a folder of its own (the box's site-packages untouched):

    pip install --no-index --no-deps --target kit-wheels DIR/*.whl
    PYTHONPATH=$PWD/kit-wheels make gpu-check PY=python3
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from packaging.requirements import InvalidRequirement, Requirement

from helpers.env import pinsets, stack
from helpers.env.box import GUARDED, canon
from helpers.io import InputError

MAX_MIB = 60  # the folder carried to an offline GPU box beside the kit: the lent H200s took 64 MiB with a run
# --trust-unlisted takes a box package of unlisted version to meet a bound only where carrying it would cost: a pinned
# wheel under this size is carried anyway (pyarrow's 52 MiB is what the option is for; certifi's 0.15 is not).
TRUST_FROM_BYTES = 2**20
BNB = "bitsandbytes"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_24_x86_64", "manylinux2014_x86_64", "linux_x86_64")
NATIVE_LIB = re.compile(r"^bitsandbytes/libbitsandbytes_(cuda|rocm|xpu)(\d+)\.(so|dll|dylib)$")
Fetch = Callable[[str, str], Path]  # (name, version) -> the wheel's path in the folder


@dataclass
class Carried:
    """The folder's plan: every wheel (name -> version), who asked for each, and what the box answers itself."""
    wheels: dict[str, str] = field(default_factory=dict)
    asked_by: dict[str, str] = field(default_factory=dict)
    box_answers: list[str] = field(default_factory=list)
    assumed: dict[str, list[str]] = field(default_factory=dict)  # unlisted versions taken to meet these bounds
    notes: list[str] = field(default_factory=list)
    files: dict[str, Path] = field(default_factory=dict)


def read_box(path: Path) -> dict[str, str | None]:
    """{canonical name: version, or None when the line gives none} from a box's package list; any other line is an
    InputError naming the file and the line."""
    return dict(pinsets.pin_lines(path, bare=True))


def environment(python: str) -> dict[str, str]:
    """The marker environment of a CPython `python` ('3.12' or '3.12.3') on Linux x86_64."""
    parts = python.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"--python {python!r}: expected a version like 3.12")
    return {"python_version": ".".join(parts[:2]), "python_full_version": ".".join((parts + ["0"])[:3]),
            "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def requirements_of(wheel: Path, env: dict[str, str], extras: set[str]) -> list[Requirement]:
    """The wheel's requirements that hold on the box for these extras ("" the package itself, "http" its [http]
    extra): walking a new extra of a package takes only what that extra adds."""
    _, _, lines = stack.wheel_metadata(wheel)
    out: list[Requirement] = []
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise InputError(wheel, None, "Requires-Dist", f"{line!r}: {exc}") from exc
        marker, of_extra = req.marker, req.marker is not None and "extra" in str(req.marker)
        if any((marker is None or marker.evaluate({**env, "extra": e})) and (e == "") != of_extra for e in extras):
            out.append(req)
    return out


def box_answers(req: Requirement, box: dict[str, str | None], trust_unlisted: bool = False) -> bool:
    """Whether the box's own package meets the requirement. One whose version the list leaves out answers only a
    requirement with no version bound, unless trust_unlisted (then any: the manifest lists it as assumed)."""
    name = canon(req.name)
    if name not in box:
        return False
    version = box[name]
    return (trust_unlisted or not req.specifier) if version is None else stack.satisfies(req, version)


class _Walk:
    """One plan's state: the carried wheels, the extras of each package walked so far, and the queue of wheels whose
    requirements are still to read."""

    def __init__(self, box: dict[str, str | None], pins: dict[str, str], python: str, cuda: str | None, fetch: Fetch,
                 trust_unlisted: bool) -> None:
        self.box, self.pins, self.cuda, self.fetch, self.trust = box, pins, cuda, fetch, trust_unlisted
        self.env, self.out = environment(python), Carried()
        self.walked: dict[str, set[str]] = {}
        self.todo: list[tuple[str, Path, set[str]]] = []

    def walk(self, name: str, path: Path, extras: set[str]) -> None:
        """Queue the extras of a package not walked yet ("" the package itself)."""
        new = set(extras) - self.walked.setdefault(name, set())
        if new:
            self.walked[name] |= new
            self.todo.append((name, path, new))

    def carry(self, name: str, version: str, asked_by: str, extras: set[str]) -> None:
        self.out.wheels[name], self.out.asked_by[name] = version, asked_by
        self.out.files[name] = self.fetch(name, version)
        self.walk(name, self.out.files[name], {"", *extras})

    def run(self) -> Carried:
        for name in stack.UNSLOTH:
            self.carry(name, self.pins[name], "the Unsloth pin (constraints-gpu.txt)", set())
        while self.todo:
            parent, path, extras = self.todo.pop(0)
            for req in requirements_of(path, self.env, extras):
                self.consider(req, parent)
        return self.out

    def answered(self, req: Requirement, name: str, parent: str) -> None:
        """The box's own package answers it: said, an unlisted version's bound listed as assumed, and the extras
        asked of it walked from the kit's pin of it (its own wheel is not here to read)."""
        line = f"{name} {self.box[name] or '(version not listed)'}"
        if line not in self.out.box_answers:
            self.out.box_answers.append(line)
        if self.box[name] is None and req.specifier:
            self.out.assumed.setdefault(name, []).append(f"{req.specifier} ({parent})")
        if req.extras and name in self.pins:
            self.walk(name, self.fetch(name, self.pins[name]), set(req.extras))

    def consider(self, req: Requirement, parent: str) -> None:
        """One requirement of a wheel: carried already (its new extras walked), the box's torch stack (never
        carried, bitsandbytes on a CUDA box without it apart), answered by the box, or carried at the kit's pin."""
        name, out, box, pins = canon(req.name), self.out, self.box, self.pins
        if name in out.wheels:
            if not stack.satisfies(req, out.wheels[name]):
                raise ValueError(f"{parent} needs {req} but {name} {out.wheels[name]} is carried for "
                                 f"{out.asked_by[name]}: change the pins in constraints-gpu.txt")
            self.walk(name, out.files[name], set(req.extras))
            return
        if name in GUARDED and not (name == BNB and self.cuda and name not in box):
            if box_answers(req, box, self.trust):
                self.answered(req, name, parent)
                return
            note = (f"{name}: the box's own ({box.get(name) or 'not listed'}; {parent} wants {req.specifier or 'it'});"
                    f" never carried: {stack.MISSING_COST.get(name, 'it belongs to the box torch build')}")
            if note not in out.notes:
                out.notes.append(note)
            return
        fits = name in pins and stack.satisfies(req, pins[name])
        cheap = (fits and self.trust and box.get(name, "") is None and bool(req.specifier)
                 and self.fetch(name, pins[name]).stat().st_size < TRUST_FROM_BYTES)
        if not cheap and box_answers(req, box, self.trust):
            self.answered(req, name, parent)
            return
        if name not in pins:
            raise ValueError(f"{name} (asked for by {parent}: {req}) has no pin in constraints.txt or "
                             "constraints-gpu.txt: pin it there, so the folder is the same on every run")
        if not fits:
            raise ValueError(f"{parent} needs {req} but the kit pins {name}=={pins[name]}: change constraints-gpu.txt")
        self.carry(name, pins[name], parent, set(req.extras))


def plan(box: dict[str, str | None], pins: dict[str, str], python: str, cuda: str | None, fetch: Fetch,
         trust_unlisted: bool = False) -> Carried:
    """Walk the requirements from the pinned Unsloth wheels, fetching each wheel the box lacks at the kit's pin."""
    return _Walk(box, pins, python, cuda, fetch, trust_unlisted).run()


def box_cuda(box: dict[str, str | None]) -> str | None:
    """The CUDA of the box's torch ('2.11.0+cu130' -> '13.0'), None for a ROCm, CPU or unlabelled build."""
    match = re.search(r"\+cu(\d+)(\d)$", box.get("torch") or "")
    return f"{int(match[1])}.{match[2]}" if match else None


def repack_native(wheel: Path, keep: str, dest: Path) -> Path:
    """The wheel with only the native library `keep` (e.g. 'cuda130') of its per-release libraries, its RECORD
    rewritten to match; written beside `dest` and renamed into place. ValueError naming the ones it has."""
    with zipfile.ZipFile(wheel) as zin:
        names = zin.namelist()
        libs = {m[1] + m[2]: n for n in names if (m := NATIVE_LIB.match(n))}
        if keep not in libs:
            raise ValueError(f"{wheel.name}: no native library for {keep}; it has {', '.join(sorted(libs))}")
        dropped = {n for tag, n in libs.items() if tag != keep}
        tmp = dest.with_suffix(".tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                if info.filename in dropped:
                    continue
                data = zin.read(info.filename)
                if info.filename.endswith(".dist-info/RECORD"):
                    data = "".join(line + "\n" for line in data.decode().splitlines()
                                   if line.split(",", 1)[0] not in dropped).encode()
                zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    tmp.replace(dest)
    return dest


def cuda_tag(cuda: str) -> str:
    """'13.0' -> 'cuda130' (bitsandbytes' library names)."""
    match = re.fullmatch(r"(\d+)\.(\d+)", cuda.strip())
    if not match:
        raise ValueError(f"--cuda {cuda!r}: expected a version like 13.0")
    return f"cuda{match[1]}{match[2]}"


def pip_fetch(dest: Path, python: str) -> Fetch:
    """A fetch that runs pip download --no-deps for the box's Python and platform into dest, a download cache (a wheel
    already there is kept)."""
    minor = "".join(environment(python)["python_version"].split("."))
    dest = dest / f"cp{minor}"  # one cache per Python: a wheel for another one is never taken

    def fetch(name: str, version: str) -> Path:
        dest.mkdir(parents=True, exist_ok=True)
        found = stack.find_wheel(dest, name, version)
        if found:
            return found
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
               "--python-version", minor, "--implementation", "cp", "--abi", f"cp{minor}", "--abi", "abi3",
               "--abi", "none", *(a for p in PLATFORMS for a in ("--platform", p)), "--platform", "any",
               "-d", str(dest), f"{name}=={version}"]
        if subprocess.run(cmd).returncode:
            raise SystemExit(f"gpu-wheels: `{' '.join(cmd)}` failed: see pip's message above")
        found = stack.find_wheel(dest, name, version)
        if not found:
            raise SystemExit(f"gpu-wheels: pip downloaded no wheel of {name} {version} into {dest}")
        return found
    return fetch


def write_folder(carried: Carried, dest: Path, cuda: str | None, box_file: str, python: str) -> dict:
    """Copy the fetched wheels into dest (bitsandbytes repacked), drop any other wheel there, write manifest.json;
    the manifest (with `ok`: within MAX_MIB)."""
    dest.mkdir(parents=True, exist_ok=True)
    for path in dest.glob("*.whl"):
        path.unlink()
    placed: dict[str, Path] = {}
    for name, src in sorted(carried.files.items()):
        placed[name] = dest / src.name
        if name == BNB and cuda:
            repack_native(src, cuda_tag(cuda), placed[name])
        else:
            shutil.copyfile(src, placed[name])
    rows = [{"name": n, "version": carried.wheels[n], "file": p.name, "bytes": p.stat().st_size,
             "sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "asked_by": carried.asked_by[n]}
            for n, p in placed.items()]
    total = sum(r["bytes"] for r in rows)
    manifest = {"box": box_file, "python": python, "cuda": cuda, "wheels": rows, "total_bytes": total,
                "total_mib": round(total / 2**20, 1), "max_mib": MAX_MIB, "ok": total <= MAX_MIB * 2**20,
                "box_answers": carried.box_answers, "assumed": carried.assumed, "notes": carried.notes,
                "install": f"pip install --no-index --no-deps --target kit-wheels {dest.name}/*.whl"}
    tmp = dest / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1) + "\n")
    tmp.replace(dest / "manifest.json")
    return manifest


def build(box_file: Path, python: str, cuda: str | None, dest: Path, pins: dict[str, str], fetch: Fetch,
          trust_unlisted: bool = False) -> dict:
    """The whole folder: plan (fetching each wheel), repack, manifest."""
    box = read_box(box_file)
    listed = box_cuda(box)
    if cuda and listed and cuda_tag(cuda) != cuda_tag(listed):
        raise ValueError(f"{box_file}: its torch {box['torch']} is a CUDA {listed} build, not the --cuda {cuda} given")
    cuda = cuda or listed
    return write_folder(plan(box, pins, python, cuda, fetch, trust_unlisted), dest, cuda, str(box_file), python)


def main(box_file: Path, python: str, cuda: str | None, dest: Path, downloads: Path,
         trust_unlisted: bool = False) -> int:
    """Print the list and its size; exit 1 past MAX_MIB naming the largest wheels, 2 on bad input. `downloads`: where
    the wheels pip fetches are kept between runs (never carried)."""
    from helpers.env import gpu_setup
    try:
        manifest = build(box_file, python, cuda, dest, gpu_setup.pins(), pip_fetch(downloads, python), trust_unlisted)
    except (ValueError, InputError, OSError) as exc:
        print(f"gpu-wheels: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    for row in manifest["wheels"]:
        print(f"gpu-wheels: {row['file']}  {row['bytes'] / 2**20:.1f} MiB  ({row['asked_by']})")
    for note in manifest["notes"]:
        print(f"gpu-wheels: note: {note}")
    if manifest["assumed"]:
        print("gpu-wheels: assumed (--trust-unlisted; the box list gives no version): "
              + "; ".join(f"{n} {', '.join(b)}" for n, b in manifest["assumed"].items()))
    print(f"gpu-wheels: {len(manifest['wheels'])} wheels, {manifest['total_mib']} MiB in {dest} "
          f"(at most {MAX_MIB}); the box answers {len(manifest['box_answers'])} requirements itself")
    if not manifest["ok"]:
        big = sorted(manifest["wheels"], key=lambda r: -r["bytes"])[:3]
        print("gpu-wheels: FAILED: over the limit; the largest: "
              + ", ".join(f"{r['name']} {r['bytes'] / 2**20:.1f} MiB" for r in big), file=sys.stderr)
        return 1
    return 0
