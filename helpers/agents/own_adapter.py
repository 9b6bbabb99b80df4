"""An agent's own adapter (the question writer's, the reasoner's): a section of the profile (`writer:`,
`reasoner:`) with its examples, adapter, rate, epochs and length limit, trained by the machinery of notebooks 03-05
(helpers.train.train_adapter: same checkpoints, resume and loss plot) under runs/<run>/models/<name>/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.layout import RunLayout


def own_adapter_profile(cfg: dict, name: str) -> dict:
    """The profile train_adapter sees for section `name`: its adapter the only model, one chunk, the section's own
    rate (constant after the warm-up), epochs and length limit; the rest (batch, optimizer, threads) the profile's."""
    own = cfg[name]
    return {**cfg, "models": {name: own["adapter"]}, "curriculum": {**cfg["curriculum"], "chunks": 1},
            "model": {**cfg["model"], "max_seq_len": own["max_seq_len"]},
            "train": {**cfg["train"], "lr_start": own["lr"], "lr_end": own["lr"], "epochs_per_chunk": own["epochs"]}}


def train_own_adapter(cfg: dict, name: str, data: Path, *, recommendation: dict | None = None, progress: Any = None,
                      resume: bool = True) -> dict:
    """Train section `name`'s adapter on the chats in `data` (resumable like the others); its training summary."""
    from helpers.train import train_adapter
    return train_adapter(own_adapter_profile(cfg, name), name, curriculum_path=data,
                         out_dir=RunLayout.of(cfg).model_dir(name), resume=resume, progress=progress,
                         recommendation=recommendation)
