"""An agent's own adapter (the question writer's, the reasoner's): a section of the profile (`writer:`,
`reasoner:`) with its examples, adapter, rate, epochs and length limit, trained by the machinery of notebooks 03-05
(helpers.train.train_adapter: same checkpoints, resume and loss plot) under runs/<run>/models/<name>/."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from helpers import config, curriculum, io
from helpers.layout import RunLayout


def own_adapter_profile(cfg: config.Profile, name: str) -> config.Profile:
    """The profile train_adapter sees for section `name`: its adapter the only model, one chunk, the section's own
    rate (constant after the warm-up), epochs and length limit; the rest (batch, optimizer, threads) the profile's."""
    own: config.OwnAdapterSettings = getattr(cfg, name)
    # replace, not with_overrides: a reserved name (writer, reasoner) is no member of `models:` in a profile file
    return replace(cfg, models={name: own.adapter}, curriculum=replace(cfg.curriculum, chunks=1),
                   model=replace(cfg.model, max_seq_len=own.max_seq_len),
                   train=replace(cfg.train, lr_start=own.lr, lr_end=own.lr, epochs_per_chunk=own.epochs))


def write_chats(cfg: config.Profile, name: str, path: Path, make_records: Callable[[int], list[dict]]) -> Path:
    """Section `name`'s training chats, make_records(<name>.examples), written to `path` as one curriculum chunk
    (deterministic for the profile's seed, so a rebuild resumes the same training)."""
    n = getattr(cfg, name).examples
    if n <= 0:
        raise ValueError(f"{name}.examples is 0: this profile trains no {name}")
    path.parent.mkdir(parents=True, exist_ok=True)
    io.write_jsonl(path, curriculum.order_and_chunk(make_records(n), chunks=1, seed=cfg.seed))
    return path


def train_own_adapter(cfg: config.Profile, name: str, data: Path, *, recommendation: dict | None = None,
                      progress: Any = None, resume: bool = True) -> dict:
    """Train section `name`'s adapter on the chats in `data` (resumable like the others); its training summary."""
    from helpers.train import train_adapter
    return train_adapter(own_adapter_profile(cfg, name), name, curriculum_path=data,
                         out_dir=RunLayout.of(cfg).model_dir(name), resume=resume, progress=progress,
                         recommendation=recommendation)
