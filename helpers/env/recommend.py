"""Settings recommended for this machine from its facts (dtype, optimizer, 4-bit, attention, Unsloth, env vars).

Standard library only, so `apply_env` can run before torch is imported.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, MutableMapping

from helpers.env.rules import (BF16_ROCM_GFX, UNSLOTH_ROCM_ALLOCATOR, bf16_capable, bnb_usable, get, hw_gfx,
                               unsloth_choice, unsloth_drops_expandable_segments, unsloth_keeps_4bit)

if TYPE_CHECKING:  # importing helpers.config needs yaml
    from helpers.config import ModelSettings


def _item(value: Any, reason: str) -> dict:
    return {"value": value, "reason": reason}


def _dtype(facts: dict) -> dict:
    backend, gfx, cc = facts.get("backend"), hw_gfx(facts), get(facts, "gpu.compute_capability")
    if backend == "rocm":
        if gfx == "gfx906":
            return _item("float32", "MI50/gfx906 has no bf16 units; the MI50 team only trained stably in fp32")
        if gfx in BF16_ROCM_GFX:
            return _item("bfloat16", f"{gfx} has bf16 matrix cores; the seeds trained 72B in bf16 on MI300X")
        if bf16_capable(facts):
            return _item("bfloat16", f"torch reports bf16 support on {gfx}")
        return _item("float32", f"{gfx} has no bf16; fp16 was unstable on older AMD GPUs (the MI50 report)")
    if backend == "cuda":
        if bf16_capable(facts):
            return _item("bfloat16", f"sm_{''.join(map(str, cc or []))} (Ampere+) has bf16 tensor cores: "
                                     "fp32's range at half the memory, no loss scaling")
        return _item("float16", f"sm_{''.join(map(str, cc or []))} predates bf16 (sm_80); fp16 with loss "
                                "scaling halves memory vs fp32")
    if backend == "mps":
        return _item("float32", "mixed-precision training on MPS is partial; a 0.5B model is ~2 GB in fp32")
    return _item("float32", "CPU: bf16 matmuls are slow on most CPUs and the smoke model is tiny")


def recommend(facts: dict, model: ModelSettings | None = None) -> dict:
    """Settings for this machine, each {'value', 'reason'}; the profile's "auto" values resolve to these."""
    backend, gpu = facts.get("backend"), facts.get("backend") in ("rocm", "cuda")
    rocm, bnb_ok = backend == "rocm", bnb_usable(facts)
    use_unsloth, unsloth_why = unsloth_choice(facts)
    if backend == "cuda" and bnb_ok:
        optim = _item("adamw_8bit", "bitsandbytes works here: 8-bit AdamW states take ~2 bytes per trainable "
                                    "parameter instead of 8 (839M LoRA params: 6.7 GB -> 1.7 GB)")
    elif rocm:
        optim = _item("adamw_torch", "bitsandbytes loads, so adamw_8bit is allowed, but adamw_torch stays the "
                                     "ROCm default: the original team's only stable MI300X run used it" if bnb_ok else
                      f"bitsandbytes is unusable on ROCm ({get(facts, 'bitsandbytes.detail', '?')}): the seeds "
                      "switched adamw_8bit -> adamw_torch")
    else:
        optim = _item("adamw_torch", "no working bitsandbytes here, so no 8-bit optimizer" if not bnb_ok else
                      "plain AdamW; bitsandbytes' 8-bit optimizer pays off only on a CUDA GPU")
    optim["allowed"] = ["adamw_torch", "adamw_8bit"] if bnb_ok else ["adamw_torch"]
    if not (gpu and bnb_ok):
        four = _item(False, "needs a working bitsandbytes on a GPU" + (
            " (the seeds: no binary for ROCm 6.2)" if rocm else ""))
    elif rocm and use_unsloth and not unsloth_keeps_4bit(facts):
        four = _item(False, f"Unsloth on ROCm loads 16-bit with bitsandbytes "
                            f"{get(facts, 'packages.bitsandbytes')} (it keeps 4-bit from 0.48.2 on; the seeds: "
                            "135 GB instead of ~40-50 GB for 72B); plan for 16-bit")
    else:
        four = _item(True, "bitsandbytes works on this GPU: 4-bit weights take ~0.5 bytes per parameter")
    if backend == "cuda" and get(facts, "flash_attn.importable") is True and bf16_capable(facts):
        attn = _item("flash_attention_2", "flash_attn imports on an Ampere+ CUDA GPU")
    elif get(facts, "torch.sdpa"):
        attn = _item("sdpa", "torch has scaled_dot_product_attention (fused kernels, no extra package)")
    else:
        attn = _item("eager", "this torch has no scaled_dot_product_attention")
    if use_unsloth:
        attn["reason"] += "; Unsloth picks its own kernels, this applies to the transformers path"
    rec: dict[str, Any] = {
        "backend": backend,
        "dtype": _dtype(facts),
        "optim": optim,
        "load_in_4bit": four,
        "attn_implementation": attn,
        "use_unsloth": _item(use_unsloth, unsloth_why),
        "gradient_checkpointing": _item(True, "recomputes activations: ~20-30% slower steps for far less "
                                              "memory; the seeds trained 72B with it on") if gpu else
        _item(False, "no GPU memory to save; recomputing activations would only cost time"),
        "env": _recommend_env(facts, model),
    }
    if unsloth_drops_expandable_segments(facts, model.use_unsloth if model is not None else "auto"):
        rec["env_not_set"] = {"PYTORCH_HIP_ALLOC_CONF": f"expandable_segments:True would not reach torch: "
                                                        f"{UNSLOTH_ROCM_ALLOCATOR}"}
    for key, value in (asdict(model) if model is not None else {}).items():
        if key in rec and isinstance(rec[key], dict) and value != "auto" and value != rec[key].get("value"):
            rec[key]["profile"] = value
            rec[key]["reason"] += f" (the profile sets {value!r}, which wins)"
    return rec


def _recommend_env(facts: dict, model: ModelSettings | None) -> dict:
    """The variables apply_env sets; on ROCm with Unsloth no allocator variable (recommend's env_not_set says why)."""
    env = {"TOKENIZERS_PARALLELISM": _item("false", "tokenizing before DataLoader workers fork makes the Rust "
                                                    "tokenizers warn on every fork and risks a deadlock")}
    if facts.get("backend") == "rocm":
        env["TORCH_COMPILE"] = _item("0", "the original team's compiled run reached into bitsandbytes and failed")
        env["TORCHDYNAMO_DISABLE"] = _item("1", "torch's own switch that turns torch.compile into a no-op")
        if not unsloth_drops_expandable_segments(facts, model.use_unsloth if model is not None else "auto"):
            env["PYTORCH_HIP_ALLOC_CONF"] = _item("expandable_segments:True",
                                                  "less fragmentation as batch shapes vary (the MI50 report)")
        if hw_gfx(facts) == "gfx906":
            env["HSA_OVERRIDE_GFX_VERSION"] = _item("9.0.6", "the MI50 team's working native gfx906 setting")
    elif facts.get("backend") == "cuda":
        env["PYTORCH_CUDA_ALLOC_CONF"] = _item("expandable_segments:True",
                                               "less fragmentation as batch shapes vary")
    return env


def apply_env(recommendation: dict, environ: MutableMapping[str, str] | None = None) -> dict:
    """Set the recommended variables that are not already set; returns {name: value} of those it set.

    Call it before importing torch: allocator and dynamo settings are read once, at first use.
    """
    env = os.environ if environ is None else environ
    done = {}
    for var, item in (recommendation.get("env") or {}).items():
        value = str(item["value"] if isinstance(item, dict) else item)
        if var not in env:
            env[var] = value
            done[var] = value
    return done
