"""Chunk checkpoints that survive a crash: written whole into a temp dir, renamed into place, then pointed at.

Layout under models/<name>/:
    checkpoints/chunk-00/ ... chunk-NN/   adapter_model.safetensors + adapter_config.json, optimizer.pt,
                                          scheduler.pt, trainer_state.json (chunk, offsets, replay buffer, RNG)
    latest.json                           {"chunk": i, "path": "checkpoints/chunk-XX", ...}
A chunk directory only ever appears complete (os.replace of a finished temp dir), and latest.json is
rewritten atomically after it, so a crash at any point leaves "latest" on the previous good chunk.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from helpers import layout
from helpers.io import InputError, read_json, write_json

GIB = 1024 ** 3
LATEST = "latest.json"
STATE = "trainer_state.json"
REQUIRED = ("adapter_model.safetensors", "adapter_config.json", "optimizer.pt", STATE)


class DiskSpaceError(OSError):
    """Not enough free disk for a checkpoint: names the path, the GiB needed and the GiB free."""

    def __init__(self, path: str | os.PathLike, needed_gb: float, free_gb: float):
        self.path, self.needed_gb, self.free_gb = str(path), needed_gb, free_gb
        super().__init__(f"not enough free disk at {self.path}: need {needed_gb:.2f} GiB (checkpoint x 2 + "
                         f"env.min_free_disk_gb), {free_gb:.2f} GiB free. Free space (old runs/ checkpoints, "
                         "the HF cache) or point KIT_RUNS_DIR at a bigger disk, then re-run: training resumes "
                         "after the last saved chunk.")


def chunk_dir_name(chunk: int) -> str:
    """'chunk-03' for chunk index 3."""
    return f"chunk-{chunk:02d}"


def _existing_parent(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_disk(path: str | os.PathLike, estimate_bytes: int, margin_gb: float) -> dict:
    """Raise DiskSpaceError unless free space >= estimate x 2 + margin; returns the numbers checked."""
    usage = shutil.disk_usage(_existing_parent(Path(path)))
    needed = 2 * estimate_bytes + float(margin_gb) * GIB
    out = {"path": str(path), "needed_gb": round(needed / GIB, 3), "free_gb": round(usage.free / GIB, 3)}
    if usage.free < needed:
        raise DiskSpaceError(path, needed / GIB, usage.free / GIB)
    return out


def rng_state() -> dict:
    """Python, NumPy and torch RNG states as JSON (restored for provenance; chunks reseed from seed + i)."""
    import numpy as np
    import torch
    version, internal, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()
    out = {"python": [version, list(internal), gauss], "numpy": [name, keys.tolist(), pos, has_gauss, cached],
           "torch": torch.get_rng_state().tolist()}
    if torch.cuda.is_available():
        out["cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return out


def set_rng_state(state: dict) -> None:
    """Restore rng_state() output."""
    import numpy as np
    import torch
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([torch.tensor(s, dtype=torch.uint8) for s in state["cuda"]])


def _fsync_tree(path: Path) -> None:
    for p in sorted(path.rglob("*")):
        if p.is_file():
            with open(p, "rb") as fh:
                os.fsync(fh.fileno())
    _fsync_dir(path)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # some filesystems do not allow opening directories; the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save_checkpoint(model_dir: str | os.PathLike, chunk: int, write_files: Callable[[Path], None], state: dict,
                    keep: int = 2) -> Path:
    """Write one chunk checkpoint atomically and move latest.json onto it; keep the newest `keep` chunks.

    write_files(tmp_dir) writes the adapter, optimizer and scheduler files; `state` goes to trainer_state.json.
    """
    model_dir = Path(model_dir)
    root = model_dir / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    final = root / chunk_dir_name(chunk)
    tmp = root / f".{final.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        write_files(tmp)
        (tmp / STATE).write_text(json.dumps(state, default=str), encoding="utf-8")
        missing = [n for n in REQUIRED if not (tmp / n).exists()]
        if missing:
            raise RuntimeError(f"checkpoint for chunk {chunk} is missing {missing} after writing")
        _fsync_tree(tmp)
        old = None
        if final.exists():  # a re-run over a finished chunk: move the old one aside, never mix files
            old = root / f".{final.name}.old-{os.getpid()}"
            os.replace(final, old)
        os.replace(tmp, final)
        _fsync_dir(root)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    write_json(model_dir / LATEST, {"chunk": chunk, "path": f"checkpoints/{final.name}",
                                    "saved": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    prune_checkpoints(root, keep=keep, protect=final.name)
    return final


def prune_checkpoints(root: Path, keep: int, protect: str) -> list[str]:
    """Delete all but the newest `keep` chunk-XX dirs (never `protect`); keep <= 0 keeps everything."""
    if keep <= 0:
        return []
    dirs = sorted(p for p in root.glob("chunk-*") if p.is_dir())
    doomed = [p for p in dirs[:-keep] if p.name != protect]
    for p in doomed:
        shutil.rmtree(p, ignore_errors=True)
    return [p.name for p in doomed]


def clean_stale(model_dir: str | os.PathLike) -> list[str]:
    """Remove temp dirs left by a crash mid-save (they were never pointed at)."""
    root = Path(model_dir) / "checkpoints"
    stale = [p for p in root.glob(".chunk-*") if p.is_dir()] if root.exists() else []
    for p in stale:
        shutil.rmtree(p, ignore_errors=True)
    return [p.name for p in stale]


def latest_checkpoint(model_dir: str | os.PathLike) -> tuple[Path, dict] | None:
    """(checkpoint dir, its trainer_state) that latest.json points at, or None when there is none."""
    model_dir = Path(model_dir)
    pointer = model_dir / LATEST
    if not pointer.exists():
        return None
    latest = read_json(pointer)
    if not isinstance(latest, dict) or "path" not in latest:
        raise InputError(pointer, None, "path", "missing: delete latest.json to start over")
    ckpt = model_dir / latest["path"]
    missing = [n for n in REQUIRED if not (ckpt / n).exists()]
    if missing:
        raise InputError(ckpt, None, None, f"checkpoint named by {pointer.name} lacks {missing}: "
                                           "delete the model folder (or run with RESUME = False) to start over")
    return ckpt, read_json(ckpt / STATE)


def clear_outputs(model_dir: str | os.PathLike) -> None:
    """Start over: remove checkpoints, latest.json, metrics.jsonl, adapter/ and summary.json."""
    model_dir = Path(model_dir)
    for name in ("checkpoints", "adapter"):
        shutil.rmtree(model_dir / name, ignore_errors=True)
    for name in (LATEST, layout.METRICS, layout.MODEL_SUMMARY, layout.TRAINING_PLOT):
        (model_dir / name).unlink(missing_ok=True)


def replace_dir(src: Path, dst: Path) -> Path:
    """Move a finished temp dir onto dst (old dst removed after the rename)."""
    old = None
    if dst.exists():
        old = dst.with_name(f".{dst.name}.old-{os.getpid()}")
        os.replace(dst, old)
    os.replace(src, dst)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return dst


def truncate_lines(path: str | os.PathLike, n_lines: int) -> int:
    """Keep the first n lines of a text file (metrics logged after the last checkpoint are dropped)."""
    path = Path(path)
    if not path.exists():
        return 0
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = lines[:n_lines]
    from helpers.io import atomic_write_text
    atomic_write_text(path, "".join(kept))
    return len(lines) - len(kept)


def fingerprint_diff(old: dict, new: dict) -> list[str]:
    """Keys whose values differ between two run fingerprints."""
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def to_jsonable(obj: Any) -> Any:
    """Round-trip through JSON (drops tuples/numpy types) so fingerprints compare equal after reload."""
    return json.loads(json.dumps(obj, default=str))
