"""What a training run writes: chunk checkpoints, the final adapter, the loss plot and summary.json."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

from helpers import layout
from helpers.io import stamp, write_json
from helpers.train import checkpoints as ckpt
from helpers.train import telemetry
from helpers.train.state import ChunkRun


def live_plot(run: ChunkRun, wanted: bool | None) -> Any:
    """The live loss/memory plot (in a notebook with a bar), fed by the metrics logger; rank 0 reads past lines."""
    from helpers.train.telemetry import LivePlot
    enabled = (run.mode == "bar" and telemetry.in_notebook()) if wanted is None else wanted
    live = LivePlot(title=f"{run.name} ({run.spec.method}, r={run.spec.r})", enabled=enabled)
    run.logger.live = live
    run.logger.records = telemetry.read_metrics(run.metrics_path) if run.main else []
    return live


def save_chunk(run: ChunkRun, chunk: int, scheduler_state: dict) -> Path:
    """Checkpoint chunk `chunk`: adapter, optimizer and scheduler state, replay buffer, counters, RNG, fingerprint."""
    import torch

    from helpers.env.memory import checkpoint_bytes
    buffer_state = run.buffer.state_dict()
    estimate = checkpoint_bytes(run.info["trainable_params"], run.info["optim"],
                                extra_bytes=len(json.dumps(buffer_state)))
    ckpt.check_disk(run.out_dir, estimate, run.cfg.env.min_free_disk_gb)

    def write_files(tmp: Path) -> None:
        run.model.save_pretrained(str(tmp))  # adapter_model.safetensors + adapter_config.json
        torch.save(run.optimizer_state, tmp / "optimizer.pt")
        torch.save(scheduler_state, tmp / "scheduler.pt")

    saved = {**run.state, "chunk": chunk, "replay_buffer": buffer_state, "rng": ckpt.rng_state(),
             "fingerprint": run.fingerprint}
    return ckpt.save_checkpoint(run.out_dir, chunk, write_files, saved, keep=run.cfg.train.keep_checkpoints)


def save_final_adapter(model: Any, out_dir: Path) -> Path:
    """The trained adapter under <out_dir>/adapter, replaced atomically."""
    tmp = out_dir / f".adapter.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    return ckpt.replace_dir(tmp, out_dir / layout.ADAPTER)


def finish(run: ChunkRun, live: Any, stopped: bool, curriculum_path: Path, t_start: float) -> dict:
    """The summary; on rank 0 also the final adapter (unless stopped early), the training plot and summary.json."""
    summary = run_summary(run, stopped, curriculum_path, t_start)
    if run.main:
        if not stopped:
            save_final_adapter(run.model, run.out_dir)
        records = telemetry.read_metrics(run.metrics_path)
        summary["plot"] = str(live.finish(records, run.out_dir / layout.TRAINING_PLOT)) if records else None
        write_json(run.out_dir / layout.MODEL_SUMMARY, summary)
    return summary


def run_summary(run: ChunkRun, stopped: bool, curriculum_path: Path, t_start: float) -> dict:
    """summary.json: the resolved parameters, per-chunk rows, losses, throughput, peak memory and warnings."""
    import torch
    cfg, info, state, n_chunks = run.cfg, run.info, run.state, len(run.chunks)
    guard = run.answer_only_guard
    records = telemetry.read_metrics(run.metrics_path)
    train = cfg.train
    params = {"profile": cfg.profile, "run": cfg.run, "model": run.name, **run.fingerprint,
              "curriculum": str(curriculum_path), "backend": info["backend"], "dtype": info["dtype"],
              "optim": info["optim"], "load_in_4bit": info["load_in_4bit"],
              "attn_implementation": info.get("attn_implementation"), "target_modules_used": info["target_modules"],
              "answer_only_logits": run.answer_only,
              "effective_batch": train.batch_size * train.grad_accum * run.world,
              "lr_schedule": run.lrs, "replay_schedule": run.ratios,
              "lr_within_chunk": "constant; linear warm-up in chunk 0 only", "adapter": info["adapter"]}
    on_gpu = torch.cuda.is_available()
    peak = {"kind": "vram", "gib": round(torch.cuda.max_memory_allocated() / 1024 ** 3, 3)} if on_gpu else \
        {"kind": "rss", "gib": telemetry.peak_rss_gib()}
    chunk_losses = [c["loss"] for c in state["chunks"]]
    return {
        **stamp(params),
        "model": run.name, "method": info["adapter"]["method"], "complete": len(state["chunks"]) == n_chunks,
        "chunks_done": len(state["chunks"]), "chunks_total": n_chunks, "resumed_from": run.resumed_from,
        "stopped_early": stopped, "trainable_params": info["trainable_params"], "total_params": info["total_params"],
        "trainable_share": info["trainable_share"], "global_steps": state["global_step"],
        "first_loss": records[0]["loss"] if records else None, "last_loss": records[-1]["loss"] if records else None,
        "chunk_losses": chunk_losses, "per_chunk": state["chunks"],
        # .get: a row checkpointed before the guard existed has no count
        "answer_only_fallbacks": sum(c.get("answer_only_fallbacks", 0) for c in state["chunks"]),
        "answer_only_fallback_reason": guard.reason,
        "dropped": dict(sum((Counter(c["dropped"]) for c in state["chunks"]), Counter())),
        "tokens": state["tokens"], "tokens_per_s": round(state["tokens"] / max(state["train_s"], 1e-9), 1),
        "train_seconds": round(state["train_s"], 2), "wall_seconds": round(time.time() - t_start, 2),
        "peak_memory": peak, "world_size": run.world, "torch_threads": torch.get_num_threads(),
        "warnings": info.get("warnings", []) + ([guard.reason] if guard.reason else []),
        "outputs": {"adapter": f"{layout.ADAPTER}/", "metrics": layout.METRICS, "latest": ckpt.LATEST,
                    "plot": layout.TRAINING_PLOT},
    }
