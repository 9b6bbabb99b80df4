"""LoRA, rsLoRA and DoRA trained through the kit's chunk loop (helpers.train.train_adapter), each with its loss and
memory plot (models/<name>/training.png), and the "will it fit" estimate (helpers.env.memory) for the model it trained
against the peak it measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import config
from helpers.env import memory
from helpers.gpu_check import device as dev
from helpers.gpu_check.steps import finite
from helpers.layout import RunLayout

METHODS = ("lora", "rslora", "dora")
# The estimate counts the runtime context (CONTEXT_BYTES: HIP/CUDA context, BLAS workspaces, kernels); torch's
# max_memory_allocated never sees it, so the ratio compares the measured peak with the estimate less that budget.
UNDER_ESTIMATE = 1.10  # a measured peak above 1.1x the estimate is reported: plan that model with more headroom
# Below this the estimate is of fixed costs the model does not set (BLAS workspaces, the allocator's blocks): the tiny
# model's is ~0.03 GiB. Its ratio is recorded; only a model whose own terms reach 1 GiB is held to UNDER_ESTIMATE.
JUDGED_FROM_GIB = 1.0


def adapter_for(cfg: config.Profile, method: str) -> str | None:
    """The profile's first adapter of `method` (smoke: model1_lora, model2_rslora, model3_dora), or None."""
    return next((name for name, spec in cfg.models.items() if spec.method == method), None)


def longest_example(cfg: config.Profile, tokenizer: Any, curriculum: Path) -> int:
    """Tokens in the curriculum's longest training example (prompt + answer), as the chunk loop tokenises it."""
    from helpers.train.data import build_examples, load_curriculum
    records = [r for chunk in load_curriculum(curriculum).values() for r in chunk]
    examples, _ = build_examples(tokenizer, records, cfg.model.max_seq_len)
    return max((len(e["input_ids"]) for e in examples), default=cfg.model.max_seq_len)


def estimate(cfg: config.Profile, name: str, settings: dict, backend: str, model_dir: Path,
             seq_len: int) -> memory.MemoryEstimate:
    """The peak training memory helpers.env.memory estimates for adapter `name` of this model, at the settings that
    ran (dtype, 4-bit, gradient checkpointing, optimizer, backend) and the longest example's length."""
    spec = cfg.models[name]
    dtype = "4bit" if settings["load_in_4bit"] else memory.DTYPE_ALIASES.get(settings["dtype"], settings["dtype"])
    return memory.estimate(str(model_dir), method=spec.method, dtype=dtype, rank=spec.r,
                           target_modules=cfg.train.target_modules, batch_size=cfg.train.batch_size,
                           seq_len=seq_len, grad_checkpointing=settings["gradient_checkpointing"],
                           optimizer=settings["optim"], backend=backend, lora_dropout=spec.dropout)


def train_method(cfg: config.Profile, name: str, recommendation: dict, lay: RunLayout, device: dict) -> dict:
    """Train adapter `name` through train_adapter (loaded, trained through every chunk, saved, released) and return
    its figures; a loss that is not finite fails the step."""
    from helpers.train import telemetry, train_adapter
    dev.reset_peak()
    summary = train_adapter(cfg, name, curriculum_path=lay.curriculum, out_dir=lay.model_dir(name), resume=False,
                            progress="off", recommendation=recommendation, live_plot=False)
    peak = dev.peak_memory(device)
    losses = [r["loss"] for r in telemetry.read_metrics(lay.metrics(name))]
    if not losses:
        raise RuntimeError(f"{name}: no loss was logged ({lay.rel(lay.metrics(name))} is empty)")
    if not finite(losses):
        bad = next(i for i, v in enumerate(losses) if not finite([v]))
        raise FloatingPointError(f"{name}: loss {losses[bad]} at logged step {bad + 1} of {len(losses)} "
                                 f"({summary['params']['dtype']}, {summary['params']['backend']})")
    figures = {
        "adapter": name, "method": summary["method"], "backend": summary["params"]["backend"],
        "dtype": summary["params"]["dtype"], "optim": summary["params"]["optim"], "steps": summary["global_steps"],
        "chunks": summary["chunks_done"], "loss_first": round(losses[0], 4), "loss_last": round(losses[-1], 4),
        "loss_min": round(min(losses), 4), "tokens": summary["tokens"], "tokens_per_s": summary["tokens_per_s"],
        "train_seconds": summary["train_seconds"], "trainable_params": summary["trainable_params"],
        "total_params": summary["total_params"], "peak_memory": peak,
        "plot": lay.rel(lay.training_plot(name)) if lay.training_plot(name).is_file() else None,
        "adapter_dir": lay.rel(lay.adapter_dir(name)), "warnings": summary["warnings"]}
    figures["summary"] = (f"{summary['method']} r={cfg.models[name].r} on {figures['backend']}, {figures['dtype']}: "
                          f"{figures['steps']} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}, "
                          f"{figures['tokens_per_s']:.0f} tokens/s, peak {peak['gib']} GiB ({peak['kind']})")
    return figures


def fit_row(est: memory.MemoryEstimate, trained: dict) -> dict:
    """One method's estimate against its measured peak, and its throughput."""
    peak = trained["peak_memory"]
    device_part = max(est.total_bytes - memory.CONTEXT_BYTES, 1) / memory.GIB
    row = {"method": trained["method"], "adapter": trained["adapter"], "estimate_gib": round(est.total_gib, 3),
           "estimate_without_context_gib": round(device_part, 3), "measured_gib": peak["gib"],
           "measured_kind": peak["kind"], "tokens_per_s": trained["tokens_per_s"],
           "estimate_parts_gib": est.to_dict()["parts_gib"], "settings": est.settings}
    if peak["kind"] == "vram":
        row.update(ratio=round(peak["gib"] / device_part, 3), comparable=True,
                   reserved_gib=peak.get("reserved_gib"))
        if device_part < JUDGED_FROM_GIB:
            row["note"] = (f"an estimate under {JUDGED_FROM_GIB} GiB is of fixed costs more than of the model (the tiny "
                           "model's): the ratio is recorded, not judged; MODEL= a real model to judge it")
    else:  # the estimate is of device memory; a CPU's RSS holds Python, torch and the libraries too
        row.update(ratio=round(peak["gib"] / device_part, 3), comparable=False,
                   note="CPU: the process's peak RSS (Python, torch and every library, all methods so far), not "
                        "device memory: the ratio is recorded, not judged")
    return row


def fit_warnings(rows: list[dict]) -> list[str]:
    """A line for each method whose measured GPU peak is over UNDER_ESTIMATE x the estimate."""
    return [f"{r['method']}: measured {r['measured_gib']} GiB is {r['ratio']:.2f}x the estimate's "
            f"{r['estimate_without_context_gib']} GiB (without its 1 GiB context): plan with more headroom"
            for r in rows if r.get("comparable") and r["estimate_without_context_gib"] >= JUDGED_FROM_GIB
            and r["ratio"] > UNDER_ESTIMATE]
