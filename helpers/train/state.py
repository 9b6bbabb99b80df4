"""One adapter's training run: what every chunk needs, what it carries to the next, and how it resumes."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import layout
from helpers.io import file_sha256
from helpers.config import Profile, as_dict
from helpers.models import load_adapter_weights
from helpers.train import checkpoints as ckpt
from helpers.train.replay import ReplayBuffer
from helpers.curriculum.schedule import lr_schedule, replay_schedule
from helpers.train.world import is_main_process, world_size


def run_fingerprint(cfg: Profile, name: str, curriculum_sha: str, world: int) -> dict:
    """What a checkpoint must share with this run to be resumed (anything else would change the adapter)."""
    keys = ("batch_size", "grad_accum", "epochs_per_chunk", "lr_start", "lr_end", "replay_start", "replay_end",
            "optim", "warmup_ratio", "weight_decay", "max_grad_norm", "target_modules")
    return ckpt.to_jsonable({
        "model": name, "spec": as_dict(cfg.models[name]), "base": cfg.model.weights,  # what loads
        "max_seq_len": cfg.model.max_seq_len, "seed": cfg.seed,
        "replay_capacity": cfg.curriculum.replay_capacity, "curriculum_sha256": curriculum_sha,
        "world_size": world, **{f"train.{k}": getattr(cfg.train, k) for k in keys}})


@dataclass
class ChunkRun:
    """One adapter's training: what every chunk needs, and what it carries to the next (state, optimizer)."""

    cfg: Profile
    name: str
    chunks: dict
    out_dir: Path
    fingerprint: dict
    model: Any
    tokenizer: Any
    info: dict
    mode: str
    callbacks: tuple
    world: int = field(default_factory=world_size)
    main: bool = field(default_factory=is_main_process)
    state: dict = field(default_factory=lambda: {"chunks": [], "global_step": 0, "metrics_lines": 0, "tokens": 0,
                                                 "train_s": 0.0})
    optimizer_state: dict | None = None
    resumed_from: int | None = None

    def __post_init__(self) -> None:
        from helpers.train.data import make_collator
        from helpers.train.hf import AnswerOnlyGuard, accepts_logits_to_keep
        from helpers.train.telemetry import MetricsLogger, TokenCounter
        train, n = self.cfg.train, len(self.chunks)
        self.spec = self.cfg.models[self.name]
        self.buffer = ReplayBuffer(self.cfg.curriculum.replay_capacity, self.cfg.seed)
        self.lrs = lr_schedule(n, train.lr_start, train.lr_end)
        self.ratios = replay_schedule(n, train.replay_start, train.replay_end)
        self.metrics_path = self.out_dir / layout.METRICS
        self.scratch = self.out_dir / f"_trainer-{os.environ.get('RANK', '0')}"
        self.counter = TokenCounter()
        self.logger = MetricsLogger(self.metrics_path, self.counter, world_size=self.world)
        self.collator = make_collator(self.tokenizer)
        # Unsloth computes its own fused loss; any other forward that takes logits_to_keep skips the prompt's logits.
        self.answer_only = train.answer_only_logits and self.info["backend"] != "unsloth" \
            and accepts_logits_to_keep(self.model)
        # The signature is not proof: a patched forward may take logits_to_keep and drop the positions. The guard
        # counts the batches that fell back to the full loss, across chunks.
        self.answer_only_guard = AnswerOnlyGuard()

    @property
    def start(self) -> int:
        """The first chunk this call trains (after the last checkpointed one)."""
        return 0 if self.resumed_from is None else self.resumed_from + 1


def find_checkpoint(out_dir: Path, fingerprint: dict, resume: bool, main: bool) -> tuple[Path, dict] | None:
    """The last chunk checkpoint to resume from (None to start over, which clears the folder's outputs)."""
    if not resume:
        if main:
            ckpt.clear_outputs(out_dir)
        return None
    if main:
        ckpt.clean_stale(out_dir)
    found = ckpt.latest_checkpoint(out_dir)
    if found:
        diff = ckpt.fingerprint_diff(found[1].get("fingerprint", {}), fingerprint)
        if diff:
            raise ValueError(f"{found[0]} was trained with different settings ({', '.join(diff)}): "
                             "run with RESUME = False in its notebook (make pipeline FRESH=1, or --no-resume) to start "
                             "over, or restore them")
    return found


def restore(run: ChunkRun, found: tuple[Path, dict]) -> None:
    """Adapter weights, optimizer moments, replay buffer, counters and metrics as the checkpoint left them."""
    import torch
    ckpt_dir, saved = found
    load_adapter_weights(run.model, ckpt_dir)
    run.optimizer_state = torch.load(ckpt_dir / "optimizer.pt", weights_only=True, map_location="cpu")
    run.buffer.load_state_dict(saved["replay_buffer"])
    run.state.update({k: saved[k] for k in run.state})
    run.resumed_from = int(saved["chunk"])
    if run.main:
        ckpt.truncate_lines(run.metrics_path, int(saved["metrics_lines"]))
