"""make gpu-wheels (helpers.env.wheels): the exact folder an offline GPU box carries in, planned on fabricated wheels
(no network), bitsandbytes' repack, the size limit, and the real pinned Unsloth wheels against the kit's pins."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from helpers.env import box, gpu_setup, wheels
from helpers.io import InputError

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "configs" / "boxes" / "nvidia-h200.txt"


def make_wheel(folder: Path, name: str, version: str, requires: list[str] = (), files: dict[str, bytes] | None = None,
               extras: tuple[str, ...] = ()) -> Path:
    """A wheel with METADATA (Requires-Dist lines), the given files and a RECORD of their sha256."""
    stem = name.replace("-", "_")
    files = dict(files or {f"{stem}/__init__.py": b""})
    info = f"{stem}-{version}.dist-info"
    files[f"{info}/METADATA"] = ("Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"
                                 + "".join(f"Provides-Extra: {e}\n" for e in extras)
                                 + "".join(f"Requires-Dist: {r}\n" for r in requires) + "\nlong text\n").encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},"
                     f"{len(d)}\n" for n, d in files.items()) + f"{info}/RECORD,,\n"
    path = folder / f"{stem}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
        zf.writestr(f"{info}/RECORD", record)
    return path


class Index:
    """A fabricated package index: fetch(name, version) returns the wheel made for it, and counts the asks."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.wheels, self.asked = folder, {}, []

    def add(self, name: str, version: str, requires: list[str] = (), **kw) -> None:
        self.wheels[(name, version)] = make_wheel(self.folder, name, version, requires, **kw)

    def __call__(self, name: str, version: str) -> Path:
        self.asked.append(name)
        if (name, version) not in self.wheels:
            raise AssertionError(f"fetched {name} {version}, which the index does not hold")
        return self.wheels[(name, version)]


@pytest.fixture
def index(tmp_path: Path) -> Index:
    idx = Index(tmp_path)
    idx.add("unsloth", "1.0", ["unsloth_zoo>=1.0", "trl>=0.18", "torch>=2.4", "bitsandbytes>=0.45",
                               "xformers; python_version < '3.12'", "tyro", "datasets<5"])
    idx.add("unsloth-zoo", "1.0", ["pyarrow>=21", "oldonly; python_version < '3.12'"])
    idx.add("trl", "1.15", ["datasets>=4.7", "accelerate"])
    idx.add("datasets", "4.8.5", ["fsspec[http]<=2026.2.0", "pyarrow>=21"])
    idx.add("fsspec", "2026.2.0", ["aiohttp; extra == 'http'"], extras=("http",))
    idx.add("aiohttp", "3.14.5")
    idx.add("tyro", "1.0.17")
    idx.add("pyarrow", "26.0.1", files={"pyarrow/big.bin": b"x" * 3000})
    idx.add("bitsandbytes", "0.50.2", files={f"bitsandbytes/libbitsandbytes_{t}.so": b"lib" * 99
                                             for t in ("cuda128", "cuda130")})
    idx.add("torch", "2.13.0")
    idx.add("oldonly", "1.0")
    return idx


PINS = {"unsloth": "1.0", "unsloth-zoo": "1.0", "trl": "1.15", "datasets": "4.8.5", "fsspec": "2026.2.0",
        "aiohttp": "3.14.5", "tyro": "1.0.17", "pyarrow": "26.0.1", "bitsandbytes": "0.50.2", "oldonly": "1.0"}


def test_the_folder_is_what_the_box_lacks_at_the_kits_pins(index: Index) -> None:
    box = {"torch": "2.11.0+cu130", "accelerate": "1.15.0", "pyarrow": "21.0.0", "tyro": "0.1"}
    out = wheels.plan(box, PINS, "3.12", None, index)
    # pyarrow 21 meets >=21: not carried; tyro is present but unbounded: the box's own; fsspec's http extra followed
    assert out.wheels == {"unsloth": "1.0", "unsloth-zoo": "1.0", "trl": "1.15", "datasets": "4.8.5",
                          "fsspec": "2026.2.0", "aiohttp": "3.14.5"}
    assert out.asked_by["aiohttp"] == "fsspec" and out.asked_by["datasets"] == "unsloth"
    assert "pyarrow 21.0.0" in out.box_answers and "torch 2.11.0+cu130" in out.box_answers
    # no CUDA given: bitsandbytes is the box's own, said, never carried; xformers' marker is false on 3.12
    assert any(n.startswith("bitsandbytes:") for n in out.notes) and not any("xformers" in n for n in out.notes)
    assert "oldonly" not in index.asked
    on_311 = wheels.plan(box, PINS, "3.11", None, index)
    assert "oldonly" in on_311.wheels and any(n.startswith("xformers:") for n in on_311.notes)


def test_a_box_package_too_old_or_of_unknown_version_is_carried(index: Index) -> None:
    out = wheels.plan({"torch": "2.11.0", "accelerate": None, "pyarrow": None}, PINS, "3.12", None, index)
    assert "pyarrow" in out.wheels and "accelerate" not in out.wheels  # bounded: carried; unbounded: the box's
    out = wheels.plan({"torch": "2.11.0", "accelerate": "1.0", "pyarrow": "20.0.0"}, PINS, "3.12", None, index)
    assert out.wheels["pyarrow"] == "26.0.1"


def test_trusting_unlisted_versions_assumes_only_what_is_costly_to_carry(index: Index, monkeypatch) -> None:
    monkeypatch.setattr(wheels, "TRUST_FROM_BYTES", 2000)  # pyarrow's fabricated wheel is over it, fsspec's under
    box = {"torch": "2.11.0", "accelerate": "1.0", "pyarrow": None, "fsspec": None}
    out = wheels.plan(box, PINS, "3.12", None, index, trust_unlisted=True)
    assert "pyarrow" not in out.wheels and list(out.assumed) == ["pyarrow"]
    assert out.assumed["pyarrow"] == [">=21 (unsloth-zoo)", ">=21 (datasets)"]
    assert "fsspec" in out.wheels  # small: carried rather than assumed


def test_bitsandbytes_is_carried_only_to_a_cuda_box_that_lacks_it(index: Index) -> None:
    box = {"torch": "2.11.0", "accelerate": "1.0"}
    assert "bitsandbytes" in wheels.plan(box, PINS, "3.12", "13.0", index).wheels
    assert "bitsandbytes" not in wheels.plan({**box, "bitsandbytes": "0.49.0"}, PINS, "3.12", "13.0", index).wheels
    assert "torch" not in wheels.plan({"accelerate": "1.0"}, PINS, "3.12", "13.0", index).wheels  # never torch


def test_an_unpinned_or_misfit_requirement_is_refused_naming_it_and_who_asks(index: Index) -> None:
    with pytest.raises(ValueError, match=r"aiohttp \(asked for by fsspec: aiohttp.*\) has no pin"):
        wheels.plan({"torch": "2.11.0", "accelerate": "1.0"}, {k: v for k, v in PINS.items() if k != "aiohttp"},
                    "3.12", None, index)
    index.add("datasets", "4.6.0", ["pyarrow>=21"])
    with pytest.raises(ValueError, match=r"trl needs datasets>=4.7 but datasets 4.6.0 is carried for unsloth"):
        wheels.plan({"torch": "2.11.0", "accelerate": "1.0"}, {**PINS, "datasets": "4.6.0"}, "3.12", None, index)
    with pytest.raises(ValueError, match=r"unsloth needs datasets<5 but the kit pins datasets==5.2.0"):
        wheels.plan({"torch": "2.11.0", "accelerate": "1.0"}, {**PINS, "datasets": "5.2.0"}, "3.12", None, index)


def test_an_extra_asked_later_is_walked_too(index: Index) -> None:
    """fsspec is carried for unsloth-zoo first, plain; datasets then asks fsspec[http], whose aiohttp must come too,
    and so it must where the box holds fsspec itself (the extra is read from the kit's pin of it)."""
    index.add("unsloth-zoo", "1.0", ["fsspec", "pyarrow>=21"])
    box = {"torch": "2.11.0", "accelerate": "1.0", "pyarrow": "26.0.1"}
    out = wheels.plan(box, PINS, "3.12", None, index)
    assert out.asked_by["fsspec"] == "unsloth-zoo" and out.asked_by["aiohttp"] == "fsspec"
    out = wheels.plan({**box, "fsspec": "2026.2.0"}, PINS, "3.12", None, index)
    assert "fsspec" not in out.wheels and out.asked_by["aiohttp"] == "fsspec"


def test_trusting_never_fetches_the_boxs_torch_stack_nor_a_pin_that_does_not_fit(index: Index) -> None:
    index.add("unsloth", "1.0", ["unsloth_zoo>=1.0", "torch>=2.4", "tyro>=2", "trl>=0.18", "datasets<5"])
    box = {"torch": None, "accelerate": "1.0", "tyro": None, "pyarrow": "26.0.1"}
    out = wheels.plan(box, {**PINS, "torch": "2.13.0"}, "3.12", None, index, trust_unlisted=True)
    assert "torch" not in index.asked and "torch" not in out.wheels  # never downloaded to be weighed
    assert "tyro" not in out.wheels and out.assumed["tyro"] == [">=2 (unsloth)"]  # its pin 1.0.17 does not fit


def test_the_cuda_is_read_from_the_boxs_torch_and_a_contrary_one_refused(index: Index, tmp_path: Path) -> None:
    assert [wheels.box_cuda({"torch": t}) for t in ("2.11.0+cu130", "2.8.0+cu128", "2.9.0+rocm7.0", None)] == \
        ["13.0", "12.8", None, None]
    box_file = tmp_path / "box.txt"
    box_file.write_text("torch==2.8.0+cu128\naccelerate==1.0\n")
    manifest = wheels.build(box_file, "3.12", None, tmp_path / "folder", PINS, index)
    assert manifest["cuda"] == "12.8" and any(r["name"] == "bitsandbytes" for r in manifest["wheels"])
    with pytest.raises(ValueError, match=r"a CUDA 12.8 build, not the --cuda 13.0 given"):
        wheels.build(box_file, "3.12", "13.0", tmp_path / "folder", PINS, index)


def test_bitsandbytes_is_repacked_to_one_cuda_and_its_record_matches(tmp_path: Path) -> None:
    libs = {f"bitsandbytes/libbitsandbytes_{t}.so": t.encode() * 50 for t in ("cuda128", "cuda130", "rocm64")}
    src = make_wheel(tmp_path, "bitsandbytes", "0.50.2", files={"bitsandbytes/__init__.py": b"",
                                                                "bitsandbytes/libbitsandbytes_cpu.so": b"c" * 9, **libs})
    (tmp_path / "out").mkdir()
    out = wheels.repack_native(src, wheels.cuda_tag("13.0"), tmp_path / "out" / src.name)
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        record = zf.read("bitsandbytes-0.50.2.dist-info/RECORD").decode().splitlines()
        for line in record:
            path, digest, _ = line.split(",")
            if digest:
                data = zf.read(path)
                assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert "bitsandbytes/libbitsandbytes_cuda130.so" in names and "bitsandbytes/libbitsandbytes_cpu.so" in names
    assert not {"bitsandbytes/libbitsandbytes_cuda128.so", "bitsandbytes/libbitsandbytes_rocm64.so"} & names
    assert {ln.split(",")[0] for ln in record} == names
    with pytest.raises(ValueError, match=r"no native library for cuda126; it has cuda128, cuda130, rocm64"):
        wheels.repack_native(src, "cuda126", tmp_path / "x.whl")


def test_the_folder_and_its_manifest_and_the_size_limit(index: Index, tmp_path: Path, monkeypatch) -> None:
    box_file = tmp_path / "box.txt"
    box_file.write_text("# a box\ntorch==2.11.0+cu130\naccelerate\n")
    dest = tmp_path / "folder"
    dest.mkdir()
    (dest / "stale-1.0-py3-none-any.whl").write_bytes(b"old")
    manifest = wheels.build(box_file, "3.12", "13.0", dest, PINS, index)
    assert manifest["ok"] and {p.name for p in dest.glob("*.whl")} == {r["file"] for r in manifest["wheels"]}
    assert json.loads((dest / "manifest.json").read_text())["total_bytes"] == sum(
        p.stat().st_size for p in dest.glob("*.whl"))
    with zipfile.ZipFile(dest / "bitsandbytes-0.50.2-py3-none-any.whl") as zf:  # the folder's copy is repacked
        assert "bitsandbytes/libbitsandbytes_cuda128.so" not in zf.namelist()
    with zipfile.ZipFile(index.wheels[("bitsandbytes", "0.50.2")]) as zf:  # the download is left whole
        assert "bitsandbytes/libbitsandbytes_cuda128.so" in zf.namelist()
    monkeypatch.setattr(wheels, "MAX_MIB", 0.001)
    assert not wheels.build(box_file, "3.12", "13.0", dest, PINS, index)["ok"]


def test_a_bad_box_list_names_its_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "box.txt"
    bad.write_text("torch==2.11.0\n-e git+https://example/x\n")
    with pytest.raises(InputError, match=r"box.txt.*2"):
        wheels.read_box(bad)


@pytest.mark.unslothwheels
def test_every_requirement_of_the_pinned_unsloth_on_the_h200_box_is_pinned_or_the_boxs(tmp_path: Path) -> None:
    """The real wheels (make setup downloads them) against the kit's pins and the H200 box's list: a new Unsloth that
    asks for a package nobody pinned fails here, not on the day (the wheels past Unsloth's own are fabricated)."""
    real = {w.name.split("-")[0].replace("_", "-"): w for w in gpu_setup.pinned_wheels()}
    pins = gpu_setup.pins()

    def fetch(name: str, version: str) -> Path:
        return real.get(name) or make_wheel(tmp_path, name, version)
    out = wheels.plan(wheels.read_box(H200), pins, "3.12.3", "13.0", fetch, trust_unlisted=True)
    assert {"unsloth", "unsloth-zoo", "trl", "datasets", "bitsandbytes"} <= set(out.wheels)
    assert set(out.wheels) & set(box.GUARDED) == {"bitsandbytes"}  # of the box's torch stack, only bitsandbytes
    assert "transformers 5.17.0" in out.box_answers and "torch 2.11.0+cu130" in out.box_answers
