"""Train one adapter (LoRA / rsLoRA / DoRA) through the curriculum chunks with replay, resumable after a crash.

    python -m helpers.train --profile smoke --model model1_lora [--run NAME] [--overrides JSON] [--no-resume]
    torchrun --nproc_per_node 2 -m helpers.train --profile smoke --model model1_lora --run-name NAME  # DDP

Per chunk i (0-based): mixed = mix_chunk(chunk_i, buffer, replay_schedule[i], seed + i), then one
transformers Trainer over it at lr_schedule[i]. Within a chunk the learning rate is constant; only chunk
0 starts with a linear warm-up of ceil(train.warmup_ratio x chunks x chunk-0 steps) optimizer steps (3%
of the run, estimated from chunk 0's size). AdamW's moments carry over from chunk to chunk, so later
chunks need no warm-up, and a resumed run restores them from the checkpoint.

Reproducible: every chunk's Trainer seeds with seed + i (data order, dropout) and replay draws use
seed + i, so a run resumed after chunk k ends with the same adapter as an uninterrupted run.
Under torchrun every rank builds the same mixed chunk; only rank 0 writes checkpoints, metrics and summary.
FSDP (a model too big for one GPU) is not supported yet (checkpoints would hold one rank's shard): the
function refuses to run under it; see README, "Multi-GPU".
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from helpers import config, env
from helpers.curriculum import ReplayBuffer, lr_schedule, mix_chunk, replay_schedule
from helpers.io import stamp, write_json
from helpers import layout
from helpers.layout import RunLayout
from helpers.models import add_adapter, count_parameters, load_adapter_weights, load_model, release
from helpers.models.members import apply_cpu_threads, cpu_threads
from helpers.train import checkpoints as ckpt
from helpers.train import telemetry
from helpers.train.data import build_examples, load_curriculum


def world_size() -> int:
    """Processes in this run (torchrun / accelerate set WORLD_SIZE)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """Rank 0 (or a single process)."""
    return os.environ.get("RANK", "0") == "0"


def adapter_summary(spec: dict) -> dict:
    """Method, rank, alpha, the scale of the LoRA update (alpha/r, or alpha/sqrt(r) for rsLoRA) and its Adam step.

    adam_step = scaling x r: Adam moves each entry of B by about lr per step whatever the gradient's size, so
    how far one step moves the loss grows with scaling x r: alpha for LoRA and DoRA, alpha x sqrt(r) for rsLoRA.
    The same scaling at a higher rank is a bigger step: rsLoRA r=16 alpha=8 steps twice as far as LoRA r=8
    alpha=16 (tests/test_train.py measures it), and on the smoke profile that collapsed it to one letter.
    """
    r, alpha, method = int(spec["r"]), float(spec["alpha"]), str(spec["method"])
    scaling = alpha / math.sqrt(r) if method == "rslora" else alpha / r
    out = {"method": method, "r": r, "alpha": alpha, "dropout": spec.get("dropout", 0.0), "scaling": round(scaling, 4),
           "adam_step": round(scaling * r, 4)}
    if method == "dora":
        out["magnitude_lr_multiplier"] = float(spec.get("magnitude_lr_multiplier", 1.0))
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_fingerprint(cfg: dict, name: str, curriculum_sha: str, world: int) -> dict:
    """What a checkpoint must share with this run to be resumed (anything else would change the adapter)."""
    train = cfg["train"]
    keys = ("batch_size", "grad_accum", "epochs_per_chunk", "lr_start", "lr_end", "replay_start", "replay_end",
            "optim", "warmup_ratio", "weight_decay", "max_grad_norm", "target_modules")
    return ckpt.to_jsonable({
        "model": name, "spec": cfg["models"][name], "base": str(cfg["model"]["base"]),
        "max_seq_len": cfg["model"].get("max_seq_len"), "seed": cfg["seed"],
        "replay_capacity": cfg["curriculum"]["replay_capacity"], "curriculum_sha256": curriculum_sha,
        "world_size": world, **{f"train.{k}": train.get(k) for k in keys}})


def prepare_adapter(cfg: dict, name: str, recommendation: dict | None = None) -> tuple[Any, Any, dict]:
    """Load the base model for training and attach the profile's adapter: (peft model, tokenizer, info)."""
    if name not in cfg.get("models", {}):
        raise KeyError(f"no model '{name}' in the profile (models: {', '.join(cfg.get('models', {}))})")
    rec = recommendation if recommendation is not None else env.read_recommendation(cfg)
    model, tokenizer, info = load_model(cfg["model"]["base"], model_cfg=cfg["model"], recommendation=rec,
                                        for_training=True, train_cfg=cfg["train"])
    from transformers import set_seed
    set_seed(cfg["seed"])  # LoRA A matrices are random: same seed, same starting adapter
    model = add_adapter(model, cfg["models"][name], cfg["train"]["target_modules"], backend=info["backend"],
                        seed=cfg["seed"], gradient_checkpointing=info["gradient_checkpointing"])
    trainable, total = count_parameters(model)
    peft_cfg = model.peft_config["default"]
    info.update(recommendation=rec, trainable_params=trainable, total_params=total,
                trainable_share=round(trainable / max(total, 1), 6), adapter=adapter_summary(cfg["models"][name]),
                target_modules=sorted(peft_cfg.target_modules), use_rslora=bool(peft_cfg.use_rslora),
                use_dora=bool(peft_cfg.use_dora))
    return model, tokenizer, info


def _progress_mode(progress: Any) -> str:
    if progress is False or progress == "off":
        return "off"
    if progress in ("bar", "lines"):
        return progress
    interactive = telemetry.in_notebook() or sys.stderr.isatty()
    return "bar" if interactive and not telemetry.headless() else "lines"


def _chunk_args(cfg: dict, info: dict, *, chunk: int, lr: float, warmup: int, scratch: Path, quiet: bool) -> dict:
    import torch
    train, seed = cfg["train"], cfg["seed"]
    on_gpu = torch.cuda.is_available()
    dtype = info["dtype"]
    return dict(
        output_dir=str(scratch), per_device_train_batch_size=train["batch_size"],
        gradient_accumulation_steps=train["grad_accum"], num_train_epochs=train["epochs_per_chunk"],
        learning_rate=lr, lr_scheduler_type="constant_with_warmup" if warmup else "constant",
        warmup_steps=warmup, weight_decay=train["weight_decay"], max_grad_norm=train["max_grad_norm"],
        optim=info["optim"], logging_steps=train["logging_steps"], logging_first_step=True,
        save_strategy="no", eval_strategy="no", report_to="none", seed=seed + chunk, data_seed=seed + chunk,
        # Mixed precision only on a GPU and only when the weights are 16-bit (never on CPU).
        bf16=on_gpu and dtype == "bfloat16", fp16=on_gpu and dtype == "float16", use_cpu=not on_gpu,
        disable_tqdm=quiet, group_by_length=True, dataloader_num_workers=0, remove_unused_columns=False,
        ddp_backend=None if on_gpu or world_size() == 1 else "gloo", ddp_find_unused_parameters=False,
        log_level="warning", log_level_replica="error")
    # gradient checkpointing is left off here: load_model already enabled it (non-reentrant) on the model


def _steps_per_epoch(n_examples: int, train: dict, world: int) -> int:
    batches = math.ceil(n_examples / (train["batch_size"] * world))
    return max(1, math.ceil(batches / train["grad_accum"]))


@dataclass
class _Run:
    """One adapter's training: what every chunk needs, and what it carries to the next (state, optimizer)."""

    cfg: dict
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
        train, n = self.cfg["train"], len(self.chunks)
        self.spec = self.cfg["models"][self.name]
        self.buffer = ReplayBuffer(self.cfg["curriculum"]["replay_capacity"], self.cfg["seed"])
        self.lrs = lr_schedule(n, train["lr_start"], train["lr_end"])
        self.ratios = replay_schedule(n, train["replay_start"], train["replay_end"])
        self.metrics_path = self.out_dir / layout.METRICS
        self.scratch = self.out_dir / f"_trainer-{os.environ.get('RANK', '0')}"
        self.counter = TokenCounter()
        self.logger = MetricsLogger(self.metrics_path, self.counter, world_size=self.world)
        self.collator = make_collator(self.tokenizer)
        # Unsloth computes its own fused loss; any other forward that takes logits_to_keep skips the prompt's logits.
        self.answer_only = train["answer_only_logits"] and self.info["backend"] != "unsloth" \
            and accepts_logits_to_keep(self.model)
        # The signature is not proof: a patched forward may take logits_to_keep and drop the positions. The guard
        # counts the batches that fell back to the full loss, across chunks.
        self.answer_only_guard = AnswerOnlyGuard()

    @property
    def start(self) -> int:
        """The first chunk this call trains (after the last checkpointed one)."""
        return 0 if self.resumed_from is None else self.resumed_from + 1


def _refuse_fsdp() -> None:
    if os.environ.get("ACCELERATE_USE_FSDP", "").lower() == "true":
        raise NotImplementedError("FSDP is not supported by the chunked trainer yet: its checkpoints would hold one "
                                  "rank's shard. Use one GPU (the seeds' 72B fits one MI300X) or DDP (README, "
                                  "\"Multi-GPU\").")


def _find_checkpoint(out_dir: Path, fingerprint: dict, resume: bool, main: bool) -> tuple[Path, dict] | None:
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
                             "run with RESUME = False (or --no-resume) to start over, or restore them")
    return found


def _restore(run: _Run, found: tuple[Path, dict]) -> None:
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


def _chunk_trainer(run: _Run, i: int, examples: list) -> tuple[Any, int]:
    """The transformers Trainer for chunk i (warm-up steps in chunk 0 only) and its warm-up step count."""
    from helpers.train.data import make_dataset
    from helpers.train.hf import ChunkTrainer, make_training_args, trainer_tokenizer_kwarg
    from helpers.train.telemetry import metrics_callback
    train, n = run.cfg["train"], len(run.chunks)
    steps = _steps_per_epoch(len(examples), train, run.world) * max(1, math.ceil(train["epochs_per_chunk"]))
    warmup = min(steps, math.ceil(train["warmup_ratio"] * n * steps)) if i == 0 else 0
    wanted = _chunk_args(run.cfg, run.info, chunk=i, lr=run.lrs[i], warmup=warmup, scratch=run.scratch,
                         quiet=run.mode != "bar" or not run.main)
    args, _ = make_training_args(**wanted)
    trainer = ChunkTrainer(
        model=run.model, args=args, train_dataset=make_dataset(examples), data_collator=run.collator,
        callbacks=[metrics_callback(run.logger), *run.callbacks], token_counter=run.counter,
        optimizer_state=run.optimizer_state, magnitude_lr_multiplier=run.spec.get("magnitude_lr_multiplier", 1.0),
        answer_only_logits=run.answer_only, answer_only_guard=run.answer_only_guard,
        **trainer_tokenizer_kwarg(run.tokenizer))
    if wanted["disable_tqdm"]:
        from transformers.trainer_callback import PrinterCallback
        trainer.remove_callback(PrinterCallback)  # headless: one line per chunk, not one dict per log
    return trainer, warmup


def _train_chunk(run: _Run, i: int) -> dict:
    """Mix chunk i with replay, train it, checkpoint it (rank 0); returns its row of the summary's per_chunk."""
    t_chunk = time.time()
    max_len = run.cfg["model"]["max_seq_len"]
    mixed = mix_chunk(run.chunks[i], run.buffer, run.ratios[i], run.cfg["seed"] + i)
    examples, dropped = build_examples(run.tokenizer, mixed, max_len)
    if not examples:
        raise ValueError(f"chunk {i}: all {len(mixed)} examples exceed model.max_seq_len={max_len}")
    trainer, warmup = _chunk_trainer(run, i, examples)
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
        _save_chunk(run, i, scheduler_state)
    return row


class _Progress:
    """What a person sees per chunk: a tqdm bar in a notebook or terminal, one line per chunk headless."""

    def __init__(self, run: _Run):
        self.run, self.bar = run, None
        name, spec, info = run.name, run.spec, run.info
        if run.mode == "bar" and run.main:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=len(run.chunks), initial=run.start, desc=f"{name} chunks", unit="chunk")
        if run.mode == "lines" and run.main:
            print(f"[train {name}] {spec['method']} r={spec['r']} alpha={spec['alpha']}: {len(run.chunks)} chunks, "
                  f"{info['trainable_params']:,} trainable of {info['total_params']:,} params, backend "
                  f"{info['backend']}, {info['dtype']}, world {run.world}"
                  + (f"; resuming after chunk {run.resumed_from}" if run.resumed_from is not None else ""), flush=True)

    def chunk_done(self, row: dict) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(loss=row["loss"])
        if self.run.mode == "lines" and self.run.main:
            print(f"[train {self.run.name}] chunk {row['chunk'] + 1}/{len(self.run.chunks)}: {row['examples']} "
                  f"examples ({row['replayed']} replayed), {row['steps']} steps at lr {row['lr']:.2e}, loss "
                  f"{row['loss']:.4f}, {row['tokens'] / max(row['seconds'], 1e-9):,.0f} tok/s, {row['seconds']:.1f}s",
                  flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def train_adapter(cfg: dict, name: str, *, curriculum_path: str | os.PathLike | None = None,
                  out_dir: str | os.PathLike | None = None, resume: bool = True, progress: Any = None,
                  callbacks: Iterable[Any] = (), recommendation: dict | None = None, prepared: tuple | None = None,
                  stop_after_chunk: int | None = None, live_plot: bool | None = None) -> dict:
    """Train adapter `name` (a key of cfg['models']) chunk by chunk; returns the summary (also summary.json).

    prepared: (model, tokenizer, info) from prepare_adapter(), to reuse a model already loaded (the caller keeps it);
    without it the model is loaded here and released before returning (the caller may load the next one).
    stop_after_chunk: stop (checkpointed) after that chunk index; a later call resumes.
    """
    t_start = time.time()
    _refuse_fsdp()
    if name not in cfg.get("models", {}):
        raise KeyError(f"no model '{name}' in the profile (models: {', '.join(cfg.get('models', {}))})")
    curriculum_path = Path(curriculum_path) if curriculum_path else RunLayout.of(cfg).curriculum
    chunks = load_curriculum(curriculum_path)  # fail fast, before loading a 72B model
    out_dir = Path(out_dir) if out_dir else RunLayout.of(cfg).model_dir(name)
    out_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = run_fingerprint(cfg, name, _sha256(curriculum_path), world_size())
    found = _find_checkpoint(out_dir, fingerprint, resume, is_main_process())
    model, tokenizer, info = prepared if prepared is not None else prepare_adapter(cfg, name, recommendation)
    if info.get("trained") and not found:
        raise ValueError("the prepared model already holds a trained adapter and there is no checkpoint to resume "
                         "from: load a fresh one with prepare_adapter() (notebook section 3) first")
    apply_cpu_threads(cpu_threads(cfg["train"], info.get("kind")))
    run = _Run(cfg, name, chunks, out_dir, fingerprint, model, tokenizer, info, _progress_mode(progress),
               tuple(callbacks))
    if found:
        _restore(run, found)
    live = _live_plot(run, live_plot)
    shown, stopped = _Progress(run), False
    for i in range(run.start, len(chunks)):
        shown.chunk_done(_train_chunk(run, i))
        if stop_after_chunk is not None and stop_after_chunk <= i < len(chunks) - 1:
            stopped = True
            break
    shown.close()
    shutil.rmtree(run.scratch, ignore_errors=True)
    info["trained"] = True
    summary = _finish(run, live, stopped, curriculum_path, t_start)
    if prepared is None:  # loaded here: nothing returned holds it, so free it before the caller loads another model
        gone, quiet = release.watch(model), run.mode == "off" or not run.main
        del run, shown, model
        release.free_memory(*gone, label=f"after training {name}", quiet=quiet)
    return summary


def _live_plot(run: _Run, wanted: bool | None) -> Any:
    """The live loss/memory plot (in a notebook with a bar), fed by the metrics logger; rank 0 reads past lines."""
    from helpers.train.telemetry import LivePlot
    enabled = (run.mode == "bar" and telemetry.in_notebook()) if wanted is None else wanted
    live = LivePlot(title=f"{run.name} ({run.spec['method']}, r={run.spec['r']})", enabled=enabled)
    run.logger.live = live
    run.logger.records = telemetry.read_metrics(run.metrics_path) if run.main else []
    return live


def _finish(run: _Run, live: Any, stopped: bool, curriculum_path: Path, t_start: float) -> dict:
    """The summary; on rank 0 also the final adapter (unless stopped early), the training plot and summary.json."""
    summary = _summary(run, stopped, curriculum_path, t_start)
    if run.main:
        if not stopped:
            _save_final_adapter(run.model, run.out_dir)
        records = telemetry.read_metrics(run.metrics_path)
        summary["plot"] = str(live.finish(records, run.out_dir / layout.TRAINING_PLOT)) if records else None
        write_json(run.out_dir / layout.MODEL_SUMMARY, summary)
    return summary


def _save_chunk(run: _Run, chunk: int, scheduler_state: dict) -> Path:
    import torch
    buffer_state = run.buffer.state_dict()
    estimate = ckpt.estimate_checkpoint_bytes(run.info["trainable_params"], extra_bytes=len(json.dumps(buffer_state)))
    ckpt.check_disk(run.out_dir, estimate, run.cfg["env"]["min_free_disk_gb"])

    def write_files(tmp: Path) -> None:
        run.model.save_pretrained(str(tmp))  # adapter_model.safetensors + adapter_config.json
        torch.save(run.optimizer_state, tmp / "optimizer.pt")
        torch.save(scheduler_state, tmp / "scheduler.pt")

    saved = {**run.state, "chunk": chunk, "replay_buffer": buffer_state, "rng": ckpt.rng_state(),
             "fingerprint": run.fingerprint}
    return ckpt.save_checkpoint(run.out_dir, chunk, write_files, saved, keep=run.cfg["train"]["keep_checkpoints"])


def _save_final_adapter(model: Any, out_dir: Path) -> Path:
    tmp = out_dir / f".adapter.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    return ckpt.replace_dir(tmp, out_dir / layout.ADAPTER)


def _summary(run: _Run, stopped: bool, curriculum_path: Path, t_start: float) -> dict:
    import torch
    cfg, info, state, n_chunks = run.cfg, run.info, run.state, len(run.chunks)
    guard = run.answer_only_guard
    records = telemetry.read_metrics(run.metrics_path)
    train = cfg["train"]
    params = {"profile": cfg.get("profile"), "run": cfg.get("run"), "model": run.name, **run.fingerprint,
              "curriculum": str(curriculum_path), "backend": info["backend"], "dtype": info["dtype"],
              "optim": info["optim"], "load_in_4bit": info["load_in_4bit"],
              "attn_implementation": info.get("attn_implementation"), "target_modules_used": info["target_modules"],
              "answer_only_logits": run.answer_only,
              "effective_batch": train["batch_size"] * train["grad_accum"] * run.world,
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


def main(argv: list[str] | None = None) -> int:
    """Command line: train one adapter of a profile (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m helpers.train", description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="smoke", help=f"one of {', '.join(config.available_profiles())}")
    ap.add_argument("--model", required=True, help="a key of the profile's models, e.g. model1_lora")
    # torchrun reads "--run" as an abbreviation of its own --run-path: under torchrun write --run-name.
    ap.add_argument("--run", "--run-name", dest="run", default=None, help="run name (default: the profile's)")
    ap.add_argument("--overrides", default="{}", help='JSON of dotted keys, e.g. \'{"train.batch_size": 8}\'')
    ap.add_argument("--curriculum", default=None, help="curriculum JSONL (default runs/<run>/curriculum/train.jsonl)")
    ap.add_argument("--out-dir", default=None, help="output folder (default runs/<run>/models/<model>)")
    ap.add_argument("--no-resume", action="store_true", help="start over instead of resuming after the last chunk")
    args = ap.parse_args(argv)
    try:
        overrides = json.loads(args.overrides or "{}")
        if not isinstance(overrides, dict):
            raise ValueError("must be a JSON object")
        cfg = config.load_profile(args.profile, args.run, overrides)
    except (KeyError, ValueError) as exc:
        print(f"train: {exc}", file=sys.stderr)
        return 2
    if args.model not in cfg["models"]:
        print(f"train: no model '{args.model}' in profile {args.profile} (models: {', '.join(cfg['models'])})",
              file=sys.stderr)
        return 2
    summary = train_adapter(cfg, args.model, curriculum_path=args.curriculum, out_dir=args.out_dir,
                            resume=not args.no_resume, progress="lines")
    if is_main_process():
        print(f"[train {args.model}] done: {summary['chunks_done']}/{summary['chunks_total']} chunks, loss "
              f"{summary['first_loss']} -> {summary['last_loss']}, {summary['wall_seconds']:.0f}s", flush=True)
    return 0

