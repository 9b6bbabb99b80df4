"""Test support: the kit's tiny model built once per test process (no warm-up: weights random, tokenizer real)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from helpers import io
from helpers.records import validate

ROOT = Path(__file__).resolve().parent.parent
_CACHE: dict[str, Path] = {}


def one_torch_thread():
    """Fixture body: one torch thread (on 2 shared cores the tiny model trains ~3x faster than with 2 contending)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tiny_model_dir() -> Path:
    """A tiny Qwen2 model + ChatML tokenizer (helpers.tinymodel, warm-up 0 steps), built once per process."""
    if "dir" not in _CACHE:
        from helpers.tinymodel import build_tiny_model
        root = Path(tempfile.mkdtemp(prefix="kit-tiny-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _CACHE["dir"] = build_tiny_model(out_dir=root / "tiny", warmup_steps=0, progress=False)
    return _CACHE["dir"]


def bundled_records(n: int, offset: int = 0) -> list[dict]:
    """n validated records from the kit's bundled data/general_mcq.jsonl."""
    recs = io.read_jsonl(ROOT / "data" / "general_mcq.jsonl")[offset:offset + n]
    return [validate(r) for r in recs]


def write_curriculum(path: Path, n_chunks: int, per_chunk: int, offset: int = 0) -> Path:
    """A curriculum JSONL of bundled records with chunk = position // per_chunk."""
    recs = bundled_records(n_chunks * per_chunk, offset)
    for i, rec in enumerate(recs):
        rec.update(chunk=i // per_chunk, bucket="easy", difficulty=float(i))
    io.write_jsonl(path, recs)
    return path


def cpu_recommendation() -> dict:
    """env.recommend() for a fabricated CPU-only machine (no probing of this one)."""
    from helpers import env
    return env.recommend({"backend": "cpu", "torch": {"sdpa": True}, "unsloth": {"importable": False}})
