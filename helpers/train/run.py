"""The chunk loop: train one adapter through the curriculum chunks with replay, resumable after a crash.

Per chunk i (0-based): mixed = mix_chunk(chunk_i, buffer, replay_schedule[i], seed + i), then one
transformers Trainer over it at lr_schedule[i]. Within a chunk the learning rate is constant; only chunk
0 starts with a linear warm-up of ceil(train.warmup_ratio x chunks x chunk-0 steps) optimizer steps (3%
of the run, estimated from chunk 0's size). AdamW's moments carry over from chunk to chunk, so later
chunks need no warm-up, and a resumed run restores them from the checkpoint.

Reproducible: every chunk's Trainer seeds with seed + i (data order, dropout) and replay draws use
seed + i, so a run resumed after chunk k ends with the same adapter as an uninterrupted run.
Under torchrun every rank builds the same mixed chunk; only rank 0 writes checkpoints, metrics and summary.
FSDP (a model too big for one GPU) is not supported yet (checkpoints would hold one rank's shard): the
function refuses to run under it; see docs/gpu.md, "Several GPUs".
"""

from __future__ import annotations

import gc
import math
import os
import shutil
import time
from pathlib import Path
from typing import Any, Iterable

from helpers.config import Profile
from helpers.layout import RunLayout
from helpers.models import release
from helpers.models.members import apply_cpu_threads, cpu_threads
from helpers.train import outputs, telemetry
from helpers.train.adapter import check_model_name, prepare_adapter
from helpers.train.data import build_examples, load_curriculum
from helpers.train.plan import steps_per_epoch
from helpers.train.progress import Progress, progress_mode
from helpers.train.replay import mix_chunk
from helpers.train.state import ChunkRun, file_sha256, find_checkpoint, restore, run_fingerprint
from helpers.train.world import is_main_process, refuse_fsdp, world_size


def chunk_args(cfg: Profile, info: dict, *, chunk: int, lr: float, warmup: int, scratch: Path, quiet: bool) -> dict:
    """The TrainingArguments chunk `chunk` asks for: constant lr, seed + chunk, mixed precision only on a GPU."""
    import torch
    train, seed = cfg.train, cfg.seed
    on_gpu = torch.cuda.is_available()
    dtype = info["dtype"]
    return dict(
        output_dir=str(scratch), per_device_train_batch_size=train.batch_size,
        gradient_accumulation_steps=train.grad_accum, num_train_epochs=train.epochs_per_chunk,
        learning_rate=lr, lr_scheduler_type="constant_with_warmup" if warmup else "constant",
        warmup_steps=warmup, weight_decay=train.weight_decay, max_grad_norm=train.max_grad_norm,
        optim=info["optim"], logging_steps=train.logging_steps, logging_first_step=True,
        save_strategy="no", eval_strategy="no", report_to="none", seed=seed + chunk, data_seed=seed + chunk,
        # Mixed precision only on a GPU and only when the weights are 16-bit (never on CPU).
        bf16=on_gpu and dtype == "bfloat16", fp16=on_gpu and dtype == "float16", use_cpu=not on_gpu,
        disable_tqdm=quiet, group_by_length=True, dataloader_num_workers=0, remove_unused_columns=False,
        ddp_backend=None if on_gpu or world_size() == 1 else "gloo", ddp_find_unused_parameters=False,
        log_level="warning", log_level_replica="error")
    # gradient checkpointing is left off here: load_model already enabled it (non-reentrant) on the model


def chunk_trainer(run: ChunkRun, i: int, examples: list) -> tuple[Any, int]:
    """The transformers Trainer for chunk i (warm-up steps in chunk 0 only) and its warm-up step count."""
    from helpers.train.data import make_dataset
    from helpers.train.hf import ChunkTrainer, make_training_args, trainer_tokenizer_kwarg
    from helpers.train.telemetry import metrics_callback
    train, n = run.cfg.train, len(run.chunks)
    steps = steps_per_epoch(len(examples), train, run.world) * max(1, math.ceil(train.epochs_per_chunk))
    warmup = min(steps, math.ceil(train.warmup_ratio * n * steps)) if i == 0 else 0
    wanted = chunk_args(run.cfg, run.info, chunk=i, lr=run.lrs[i], warmup=warmup, scratch=run.scratch,
                         quiet=run.mode != "bar" or not run.main)
    args, _ = make_training_args(**wanted)
    trainer = ChunkTrainer(
        model=run.model, args=args, train_dataset=make_dataset(examples), data_collator=run.collator,
        callbacks=[metrics_callback(run.logger), *run.callbacks], token_counter=run.counter,
        optimizer_state=run.optimizer_state, magnitude_lr_multiplier=run.spec.magnitude_lr_multiplier,
        answer_only_logits=run.answer_only, answer_only_guard=run.answer_only_guard,
        **trainer_tokenizer_kwarg(run.tokenizer))
    if wanted["disable_tqdm"]:
        from transformers.trainer_callback import PrinterCallback
        trainer.remove_callback(PrinterCallback)  # headless: one line per chunk, not one dict per log
    return trainer, warmup


def train_chunk(run: ChunkRun, i: int) -> dict:
    """Mix chunk i with replay, train it, checkpoint it (rank 0); returns its row of the summary's per_chunk."""
    t_chunk = time.time()
    max_len = run.cfg.model.max_seq_len
    mixed = mix_chunk(run.chunks[i], run.buffer, run.ratios[i], run.cfg.seed + i)
    examples, dropped = build_examples(run.tokenizer, mixed, max_len)
    if not examples:
        raise ValueError(f"chunk {i}: all {len(mixed)} examples exceed model.max_seq_len={max_len}")
    trainer, warmup = chunk_trainer(run, i, examples)
    run.logger.begin_chunk(i, run.state["global_step"])
    counter_before, fallbacks_before = run.counter.total, run.answer_only_guard.fallbacks
    result = trainer.train()
    run.optimizer_state = trainer.raw_optimizer.state_dict()
    scheduler_state = trainer.lr_scheduler.state_dict() if trainer.lr_scheduler is not None else {}
    seconds, tokens = time.time() - t_chunk, (run.counter.total - counter_before) * run.world
    row = {"chunk": i, "fresh": len(run.chunks[i]), "replayed": sum(bool(r.get("replay")) for r in mixed),
           "examples": len(examples), "dropped": dict(dropped), "steps": trainer.state.global_step,
           "warmup_steps": warmup, "lr": run.lrs[i], "replay_ratio": round(run.ratios[i], 4),
           "loss": round(float(result.training_loss), 5), "tokens": tokens, "seconds": round(seconds, 2),
           "answer_only_fallbacks": run.answer_only_guard.fallbacks - fallbacks_before}
    run.state["global_step"] += trainer.state.global_step
    run.state["tokens"] += tokens
    run.state["train_s"] += seconds
    run.state["chunks"].append(row)
    is_zero = trainer.is_world_process_zero()
    del trainer, result
    gc.collect()
    if is_zero:
        run.state["metrics_lines"] = len(telemetry.read_metrics(run.metrics_path))
        outputs.save_chunk(run, i, scheduler_state)
    return row


def train_adapter(cfg: Profile, name: str, *, curriculum_path: str | os.PathLike | None = None,
                  out_dir: str | os.PathLike | None = None, resume: bool = True, progress: Any = None,
                  callbacks: Iterable[Any] = (), recommendation: dict | None = None, prepared: tuple | None = None,
                  stop_after_chunk: int | None = None, live_plot: bool | None = None) -> dict:
    """Train adapter `name` (a key of cfg.models) chunk by chunk; returns the summary (also summary.json).

    prepared: (model, tokenizer, info) from prepare_adapter(), to reuse a model already loaded (the caller keeps it);
    without it the model is loaded here and released before returning (the caller may load the next one).
    stop_after_chunk: stop (checkpointed) after that chunk index; a later call resumes.
    """
    t_start = time.time()
    refuse_fsdp()
    check_model_name(cfg, name)
    curriculum_path = Path(curriculum_path) if curriculum_path else RunLayout.of(cfg).curriculum
    chunks = load_curriculum(curriculum_path)  # fail fast, before loading a 72B model
    out_dir = Path(out_dir) if out_dir else RunLayout.of(cfg).model_dir(name)
    out_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = run_fingerprint(cfg, name, file_sha256(curriculum_path), world_size())
    found = find_checkpoint(out_dir, fingerprint, resume, is_main_process())
    model, tokenizer, info = prepared if prepared is not None else prepare_adapter(cfg, name, recommendation)
    if info.get("trained") and not found:
        raise ValueError("the prepared model already holds a trained adapter and there is no checkpoint to resume "
                         "from: load a fresh one with prepare_adapter() (notebook section 3) first")
    apply_cpu_threads(cpu_threads(cfg.train, info.get("kind")))
    run = ChunkRun(cfg, name, chunks, out_dir, fingerprint, model, tokenizer, info, progress_mode(progress),
               tuple(callbacks))
    if found:
        restore(run, found)
    live = outputs.live_plot(run, live_plot)
    shown, stopped = Progress(run), False
    for i in range(run.start, len(chunks)):
        shown.chunk_done(train_chunk(run, i))
        if stop_after_chunk is not None and stop_after_chunk <= i < len(chunks) - 1:
            stopped = True
            break
    shown.close()
    shutil.rmtree(run.scratch, ignore_errors=True)
    info["trained"] = True
    summary = outputs.finish(run, live, stopped, curriculum_path, t_start)
    if prepared is None:  # loaded here: nothing returned holds it, so free it before the caller loads another model
        gone, quiet = release.watch(model), run.mode == "off" or not run.main
        del run, shown, model
        release.free_memory(*gone, label=f"after training {name}", quiet=quiet)
    return summary
