"""The curriculum stage's files: data/train.jsonl read and checked, curriculum/ written (records, stats, plots)."""

from __future__ import annotations

from pathlib import Path

from helpers import io
from helpers.config import Profile, as_dict
from helpers.curriculum.plots import plot_chunk_mix, plot_difficulty
from helpers.curriculum.stats import curriculum_stats
from helpers.io import InputError
from helpers.layout import RunLayout
from helpers.records import validate
from helpers.curriculum.schedule import lr_schedule, replay_schedule


def load_train(path: str | Path) -> list[dict]:
    """Read data/train.jsonl from notebook 01, every line validated (a bad one names file, line and field)."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "not found: run notebooks/01_dataset_build.ipynb first (same PROFILE and RUN)")
    out = []
    for lineno, obj in io.iter_jsonl(path):
        out.append(validate(obj, path, f"line {lineno}"))  # a RecordError names file, line and field
    if not out:
        raise InputError(path, None, None, "has no records: notebook 01 kept nothing (see data/report.json)")
    return out


def write_curriculum(cfg: Profile, records: list[dict]) -> dict:
    """Write curriculum/train.jsonl, stats.json (stamped) and the two PNGs under runs/<run>/; return stats.json."""
    lay = RunLayout.of(cfg)
    lay.made(lay.curriculum_dir)
    stats = curriculum_stats(records)  # also checks every record has difficulty, bucket and chunk
    n_chunks = len(stats["per_chunk"])
    train = cfg.train
    io.write_jsonl(lay.curriculum, records)
    plot_difficulty(records, lay.difficulty_plot)
    plot_chunk_mix(stats, lay.chunk_mix_plot)
    params = {"profile": cfg.profile, "run": cfg.run, "seed": cfg.seed, "curriculum": as_dict(cfg.curriculum),
              "train": {k: getattr(train, k) for k in ("lr_start", "lr_end", "replay_start", "replay_end")}}
    doc = {
        **io.stamp(params),
        "files": {"train": lay.rel(lay.curriculum), "difficulty_plot": lay.rel(lay.difficulty_plot),
                  "chunk_mix_plot": lay.rel(lay.chunk_mix_plot)},
        "schedule": {"lr": lr_schedule(n_chunks, train.lr_start, train.lr_end),
                     "replay": replay_schedule(n_chunks, train.replay_start, train.replay_end)},
        "stats": stats,
    }
    io.write_json(lay.curriculum_stats, doc)
    return doc
