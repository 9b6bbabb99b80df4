"""Peak training memory for LoRA, rsLoRA, DoRA and full fine-tuning, from a model's config shapes.

Units: bytes, reported as GiB (2**30). The original team's "GB" are rocm-smi readings against the MI300X's
"192 GB" = 205,822,885,888 bytes = 191.7 GiB, so they are read as GiB (0.2% off; decimal GB would be
7% off). Evidence: their "135.44GB used" is Qwen2.5-72B's 72.71e9 bf16 weights = 135.43 GiB.

Peak = weights + trainable copies + gradients + optimizer states + saved activations
     + max(loss/logits peak, one layer's backward working set) + runtime overhead:
the logits peak (end of forward) and a layer's recompute (later in backward) are not alive together.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from helpers.io import InputError, read_json

GIB = 2**30
MI300X_GIB = 205_822_885_888 / GIB  # rocm-smi's "192 GB" = 191.7 GiB
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
METHODS = ("lora", "rslora", "dora", "full")
BACKENDS = ("transformers", "unsloth")
DTYPES = {"bf16": 2, "fp16": 2, "fp32": 4, "4bit": 2}  # bytes per unquantised weight (4bit keeps bf16 parts)
DTYPE_ALIASES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
                  "nf4": "4bit", "4-bit": "4bit", "int4": "4bit", "qlora": "4bit"}
# NF4 with double quantisation (QLoRA; Unsloth's default): 4 bits per weight + an 8-bit absmax per 64-weight
# block (1/64 B) + an fp32 scale per 256 absmax blocks = 0.127 extra bits/weight (QLoRA paper, section 3);
# without double quant the absmax is fp32: 4/64 B = 0.5 extra bits/weight.
NF4_BYTES = 0.5 + 1 / 64 + 4 / (64 * 256)
# Optimizer state bytes per trainable parameter: AdamW keeps fp32 exp_avg + exp_avg_sq (2 x 4 B);
# bitsandbytes 8-bit AdamW keeps both in 1 B + an fp32 absmax per 256-value block (2 x 4/256 B);
# Trainer's "sgd" is torch SGD with momentum 0, i.e. no state.
OPTIMIZERS = {"adamw_torch": 8.0, "adamw_torch_fused": 8.0, "adamw_8bit": 2 + 8 / 256,
              "paged_adamw_8bit": 2 + 8 / 256, "sgd": 0.0}
# PEFT's autocast_adapter_dtype=True (its default) upcasts LoRA A/B and DoRA magnitudes to fp32 on a
# 16-bit base, so adapter weights and their gradients take 4 B each.
ADAPTER_BYTES = 4
# Loss over B x S x V logits, bytes per logit at the peak. transformers' ForCausalLMLoss upcasts to fp32 and
# cross_entropy keeps the fp32 log-softmax (4 B); in backward that saved output, the incoming fp32 grad of
# nll_loss (4 B) and the outgoing fp32 grad of log_softmax (4 B) coexist: 12 B. For Qwen2.5's 152,064 vocab
# at batch 4 x 2048 that is 13.9 GiB, more than any decoder layer. Unsloth's fused cross-entropy works on
# the 16-bit logits in place with no fp32 copies: 2 B logits + 2 B grad.
LOGIT_BYTES = {"transformers": 12, "unsloth": 4}
# Unsloth's gradient checkpointing ("unsloth" mode) moves each layer's saved input to host RAM with
# non-blocking copies; about two layer inputs are on the device at once (one going out, one coming back).
UNSLOTH_INFLIGHT_LAYERS = 2
# In the backward of one (recomputed) layer its saved activations and same-sized gradient buffers coexist:
# 2x the layer's saved activations with checkpointing (recompute + grads), 1x without (grads only).
BACKWARD_FACTOR = {True: 2, False: 1}
# HIP/CUDA context, BLAS workspaces and kernels loaded at start-up: ~0.3-0.8 GiB on CUDA, more on ROCm,
# which loads rocBLAS/hipBLASLt code objects; budget 1 GiB.
CONTEXT_BYTES = 1 * GIB
# The caching allocator's reserved-but-unused memory grows with the churn of activation-sized blocks:
# budget 10% of the dynamic part (saved activations + transient peak); weights are allocated once.
FRAGMENTATION = 0.10


def _cfg(model_type: str, h: int, i: int, layers: int, heads: int, kv: int, vocab: int, tie: bool, **extra: Any) -> dict:
    """One config.json's shape fields."""
    return {"model_type": model_type, "hidden_size": h, "intermediate_size": i, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": vocab,
            "tie_word_embeddings": tie, **extra}


# The published config.json values (Qwen2.5 ties embeddings only up to 3B; 7B+ have a 152,064-row vocab).
KNOWN_MODELS: dict[str, dict] = {
    "Qwen/Qwen2.5-0.5B-Instruct": _cfg("qwen2", 896, 4864, 24, 14, 2, 151936, True),
    "Qwen/Qwen2.5-1.5B-Instruct": _cfg("qwen2", 1536, 8960, 28, 12, 2, 151936, True),
    "Qwen/Qwen2.5-3B-Instruct": _cfg("qwen2", 2048, 11008, 36, 16, 2, 151936, True),
    "Qwen/Qwen2.5-7B-Instruct": _cfg("qwen2", 3584, 18944, 28, 28, 4, 152064, False),
    "Qwen/Qwen2.5-14B-Instruct": _cfg("qwen2", 5120, 13824, 48, 40, 8, 152064, False),
    "Qwen/Qwen2.5-32B-Instruct": _cfg("qwen2", 5120, 27648, 64, 40, 8, 152064, False),
    "Qwen/Qwen2.5-72B-Instruct": _cfg("qwen2", 8192, 29568, 80, 64, 8, 152064, False),
    "Qwen/Qwen3-4B": _cfg("qwen3", 2560, 9728, 36, 32, 8, 151936, True, head_dim=128),
    "Qwen/Qwen3-235B-A22B": _cfg("qwen3_moe", 4096, 12288, 94, 64, 4, 151936, False, head_dim=128,
                                 num_experts=128, num_experts_per_tok=8, moe_intermediate_size=1536),
    "HuggingFaceTB/SmolLM2-135M-Instruct": _cfg("llama", 576, 1536, 30, 9, 3, 49152, True),  # model.base: smollm2-135m
    "meta-llama/Llama-3.1-8B": _cfg("llama", 4096, 14336, 32, 32, 8, 128256, False),
    "meta-llama/Llama-3.1-70B": _cfg("llama", 8192, 28672, 80, 64, 8, 128256, False),
}


def _key(name: str) -> str:
    """Lookup key: no org, no -Instruct/-Instruct-2507 or meta- prefix, only [a-z0-9.]."""
    short = re.sub(r"-instruct(-2507)?$", "", name.strip().lower().rsplit("/", 1)[-1])
    return re.sub(r"[^a-z0-9.]", "", re.sub(r"^meta-", "", short))


_ALIASES = {**{_key(n): n for n in KNOWN_MODELS}, "qwen3235b": "Qwen/Qwen3-235B-A22B"}


@dataclass(frozen=True)
class ModelShape:
    """The config fields that size a decoder-only transformer's memory."""

    name: str
    model_type: str
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    tie_word_embeddings: bool
    attention_bias: bool
    qk_norm: bool
    num_experts: int = 0
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    moe_layers: int = 0  # decoder layers whose MLP is the mixture of experts
    shared_expert_intermediate_size: int = 0

    @property
    def dims(self) -> tuple[int, int, int]:
        """(hidden, query width, key/value width)."""
        return self.hidden_size, self.num_attention_heads * self.head_dim, self.num_key_value_heads * self.head_dim


def _int(cfg: Mapping, key: str, source: str | None, default: Any = None) -> int:
    """A non-negative integer config field, or an InputError naming the file and field."""
    value = cfg.get(key)
    value = default if value is None else value  # transformers' to_dict() writes unset fields as null
    if value is None:
        raise InputError(source, None, key, "missing (needed to size the model)")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(source, None, key, f"expected a non-negative integer, got {value!r}")
    return value


def shape_from_config(cfg: Mapping, name: str = "config", source: str | None = None) -> ModelShape:
    """A ModelShape from config.json fields (a multimodal wrapper's text_config is used if present)."""
    if "hidden_size" not in cfg and isinstance(cfg.get("text_config"), Mapping):
        cfg = cfg["text_config"]
    mt = str(cfg.get("model_type", ""))
    h, heads, layers = (_int(cfg, k, source) for k in ("hidden_size", "num_attention_heads", "num_hidden_layers"))
    if not (h and heads and layers):
        raise InputError(source, None, "hidden_size", "hidden_size, num_attention_heads, num_hidden_layers must be > 0")
    experts = _int(cfg, "num_experts", source, cfg.get("num_local_experts") or 0)  # Qwen / Mixtral names
    step, only = cfg.get("decoder_sparse_step") or 1, set(cfg.get("mlp_only_layers") or [])
    inter = _int(cfg, "intermediate_size", source, cfg.get("moe_intermediate_size") if experts else None)
    return ModelShape(
        name=name, model_type=mt, hidden_size=h, intermediate_size=inter, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=_int(cfg, "num_key_value_heads", source, heads) or heads,
        head_dim=_int(cfg, "head_dim", source, h // heads) or h // heads, vocab_size=_int(cfg, "vocab_size", source),
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        # Qwen2 has q/k/v biases without an attention_bias field; Llama and Qwen3 say attention_bias: false
        attention_bias=mt in ("qwen2", "qwen2_moe") if cfg.get("attention_bias") is None else bool(cfg["attention_bias"]),
        qk_norm=mt.startswith("qwen3"),  # Qwen3 RMS-normalises q and k per head
        num_experts=experts, num_experts_per_tok=_int(cfg, "num_experts_per_tok", source, 0) if experts else 0,
        moe_intermediate_size=_int(cfg, "moe_intermediate_size", source, inter) if experts else 0,
        moe_layers=sum(1 for i in range(layers) if i not in only and (i + 1) % step == 0) if experts else 0,
        shared_expert_intermediate_size=_int(cfg, "shared_expert_intermediate_size", source, 0) if experts else 0)


def get_shape(model: Any) -> ModelShape:
    """A ModelShape from a known name/alias, a config.json path or its folder, a dict or a transformers config."""
    if isinstance(model, ModelShape):
        return model
    if hasattr(model, "to_dict") and not isinstance(model, Mapping):
        model = model.to_dict()
    if isinstance(model, Mapping):
        return shape_from_config(model, str(model.get("_name_or_path") or "config"))
    if not isinstance(model, (str, os.PathLike)):
        raise ValueError(f"expected a model name, config.json path, dict or config object, got {type(model).__name__}")
    path = Path(model)
    if path.exists():  # a local folder wins over a hub-style name, as in from_pretrained
        file = path / "config.json" if path.is_dir() else path
        try:
            cfg = read_json(file)
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(file, None, None, f"cannot read a config.json ({type(exc).__name__})") from None
        if not isinstance(cfg, dict):
            raise InputError(file, None, None, f"expected a JSON object, got {type(cfg).__name__}")
        return shape_from_config(cfg, str(cfg.get("_name_or_path") or file), str(file))
    if str(model).endswith(".json") or str(model).startswith(("/", ".", "~")):
        raise InputError(model, None, None, "config file not found")
    canonical = _ALIASES.get(_key(str(model)))
    if canonical is None:
        raise ValueError(f"unknown model {str(model)!r}; known: {', '.join(KNOWN_MODELS)} (or a config.json path)")
    return shape_from_config(KNOWN_MODELS[canonical], canonical)


def count_params(shape: ModelShape) -> dict[str, int]:
    """Parameters by part, with total, active (top-k experts only) and quantizable (4-bit) linears."""
    s, (h, qd, kvd) = shape, shape.dims
    attn_w = 2 * h * qd + 2 * h * kvd  # q, o: h x qd; k, v: h x kvd
    norms = 2 * h + (2 * s.head_dim if s.qk_norm else 0)  # input + post-attention RMSNorm (+ q_norm, k_norm)
    expert = 3 * h * s.moe_intermediate_size  # gate, up, down
    shared = (3 * h * s.shared_expert_intermediate_size + h) if s.shared_expert_intermediate_size else 0
    out = {"embedding": s.vocab_size * h, "lm_head": 0 if s.tie_word_embeddings else s.vocab_size * h,
           "attention": s.num_hidden_layers * (attn_w + (qd + 2 * kvd if s.attention_bias else 0)),
           "mlp": (s.num_hidden_layers - s.moe_layers) * 3 * h * s.intermediate_size + s.moe_layers * shared,
           "experts": s.moe_layers * s.num_experts * expert, "router": s.moe_layers * h * s.num_experts,
           "norms": s.num_hidden_layers * norms + h}  # + the final norm
    out["total"] = sum(out.values())
    out["active"] = out["total"] - s.moe_layers * (s.num_experts - s.num_experts_per_tok) * expert
    out["quantizable"] = s.num_hidden_layers * attn_w + out["mlp"] + out["experts"] + out["router"]
    return out


def _modules(s: ModelShape, moe: bool) -> list[tuple[str, int, int, int, int]]:
    """One layer's linears as (name, in, out, copies held, copies active per token)."""
    h, qd, kvd = s.dims
    mods = [("q_proj", h, qd, 1, 1), ("k_proj", h, kvd, 1, 1), ("v_proj", h, kvd, 1, 1), ("o_proj", qd, h, 1, 1)]
    mlp = [(s.moe_intermediate_size, s.num_experts, s.num_experts_per_tok)] if moe else [(s.intermediate_size, 1, 1)]
    if moe and s.shared_expert_intermediate_size:
        mlp.append((s.shared_expert_intermediate_size, 1, 1))
    for i, held, active in mlp:
        mods += [("gate_proj", h, i, held, active), ("up_proj", h, i, held, active), ("down_proj", i, h, held, active)]
    return mods


def _targets(target_modules: str | Iterable[str]) -> tuple[str, ...]:
    """Validated LoRA targets; "all-linear" = every linear in the decoder layers (experts too), as PEFT does.

    MoE experts are counted as transformers 4.x builds them, one nn.Linear each (adapted and 4-bit quantised);
    transformers 5.x fuses them into 3-D parameters that all-linear and bitsandbytes skip.
    """
    names = list(TARGETS) if target_modules == "all-linear" else (
        [t.strip() for t in target_modules.split(",")] if isinstance(target_modules, str) else list(target_modules))
    bad = [t for t in names if t not in TARGETS]
    if bad or not names:
        raise ValueError(f"target_modules: unknown {bad or 'empty list'}; use 'all-linear' or some of {', '.join(TARGETS)}")
    return tuple(names)


def adapter_params(shape: ModelShape, rank: int, target_modules: str | Iterable[str] = "all-linear",
                   method: str = "lora") -> int:
    """Trainable adapter parameters: r x (in + out) per adapted linear, + out for DoRA's magnitude vector."""
    targets, total = _targets(target_modules), 0
    for moe, n in ((False, shape.num_hidden_layers - shape.moe_layers), (True, shape.moe_layers)):
        for name, fan_in, fan_out, held, _ in _modules(shape, moe):
            if name in targets:
                total += n * held * (rank * (fan_in + fan_out) + (fan_out if method == "dora" else 0))
    return total


def _layer_bytes_per_token(s: ModelShape, moe: bool, act: int, method: str, targets: tuple[str, ...],
                           rank: int, dropout: float) -> float:
    """Bytes one decoder layer saves for backward, per token (flash/SDPA attention: no S x S scores)."""
    h, qd, kvd = s.dims
    # attention: q/k/v input (norm output), q, k, v for the attention kernel, its output (o_proj input)
    elems = h + 2 * qd + 2 * kvd + (qd + kvd if s.qk_norm else 0)
    if moe:  # norm output, fp32 router probabilities (2E 16-bit units), per routed expert: gathered input,
        # gate, up, act(gate), product, output; a shared expert as a dense SwiGLU
        elems += h + 2 * s.num_experts + s.num_experts_per_tok * (2 * h + 4 * s.moe_intermediate_size)
        elems += 4 * s.shared_expert_intermediate_size + (h if s.shared_expert_intermediate_size else 0)
    else:  # norm output + SwiGLU: gate, up, act(gate), product (down_proj input)
        elems += h + 4 * s.intermediate_size
    total = act * elems + 4 * 2 * h  # HF RMSNorm saves its fp32 upcast input, twice per layer
    for name, fan_in, fan_out, _, active in (_modules(s, moe) if method != "full" else []):
        if name in targets:  # x @ A (r values); a dropout copy of x + its 1-byte mask; DoRA's scaling by
            # magnitude / ||W + BA|| saves both the base and the LoRA outputs (2 x out)
            extra = rank + (fan_in if dropout > 0 else 0) + (2 * fan_out if method == "dora" else 0)
            total += active * (act * extra + (fan_in if dropout > 0 else 0))
    return total


@dataclass
class MemoryEstimate:
    """Peak training memory by part, in bytes; the total is the sum of PARTS."""

    model: str
    settings: dict
    weights: int
    trainable: int  # fp32 copies of what trains (adapters, or full fine-tuning's master weights)
    gradients: int
    optimizer: int
    activations: int  # saved from forward to backward (only layer inputs with checkpointing)
    transient: int  # max(logits/loss peak, one layer's backward working set)
    overhead: int  # runtime context + allocator fragmentation
    logits: int = 0
    layer_backward: int = 0
    host_offload: int = 0  # host RAM, not device memory (Unsloth's offloaded checkpoints)
    params: dict = field(default_factory=dict)
    trainable_params: int = 0

    PARTS = ("weights", "trainable", "gradients", "optimizer", "activations", "transient", "overhead")

    total_bytes = property(lambda self: sum(getattr(self, p) for p in self.PARTS), doc="Sum of the parts.")
    total_gib = property(lambda self: self.total_bytes / GIB, doc="Total in GiB (2**30 bytes).")

    def to_dict(self) -> dict:
        """JSON-ready: parts in bytes and GiB, transients, params and settings."""
        parts = {p: getattr(self, p) for p in self.PARTS}
        return {"model": self.model, "total_gib": round(self.total_gib, 2), "total_bytes": self.total_bytes,
                "parts": parts, "parts_gib": {p: round(v / GIB, 2) for p, v in parts.items()},
                "transients": {"logits": self.logits, "layer_backward": self.layer_backward},
                "host_offload_bytes": self.host_offload, "params": self.params,
                "trainable_params": self.trainable_params, "settings": self.settings}


def activation_bytes(dtype: str) -> int:
    """Bytes per activation (and KV-cache) value: fp32 keeps 4, every other dtype computes in 16 bits."""
    return 4 if dtype == "fp32" else 2


def estimate(model: Any, *, method: str = "lora", dtype: str = "bf16", rank: int = 64,
             target_modules: str | Iterable[str] = "all-linear", batch_size: int = 4, seq_len: int = 2048,
             grad_checkpointing: bool = True, optimizer: str = "adamw_torch", backend: str = "unsloth",
             lora_dropout: float = 0.0) -> MemoryEstimate:
    """Estimate peak device memory of a training step (the model is in the module docstring)."""
    s = get_shape(model)
    dtype = DTYPE_ALIASES.get(str(dtype).lower(), str(dtype).lower())
    for label, value, allowed in (("method", method, METHODS), ("dtype", dtype, tuple(DTYPES)),
                                  ("optimizer", optimizer, tuple(OPTIMIZERS)), ("backend", backend, BACKENDS)):
        if value not in allowed:
            raise ValueError(f"{label}: {value!r} is not one of {', '.join(allowed)}")
    for label, value in (("rank", rank), ("batch_size", batch_size), ("seq_len", seq_len)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{label}: expected a positive integer, got {value!r}")
    if not 0 <= lora_dropout < 1:
        raise ValueError(f"lora_dropout: expected 0 <= p < 1, got {lora_dropout!r}")
    if method == "full" and dtype == "4bit":
        raise ValueError("method 'full' cannot train 4-bit weights; use lora, rslora or dora on a 4-bit base")
    targets, p = _targets(target_modules), count_params(s)
    wb, act, tokens = DTYPES[dtype], activation_bytes(dtype), batch_size * seq_len
    weights = (p["quantizable"] * NF4_BYTES + (p["total"] - p["quantizable"]) * 2 if dtype == "4bit"
               else p["total"] * wb)  # bitsandbytes leaves embeddings, lm_head, norms and biases in bf16
    if method == "full":  # mixed precision: 16-bit working weights and grads + fp32 master; fp32 needs no copy
        n_train = p["total"]
        trainable, grads = n_train * (4 if wb == 2 else 0), n_train * wb
    else:  # rsLoRA differs from LoRA only in its alpha/sqrt(r) scaling: same memory
        n_train = adapter_params(s, rank, targets, method)
        trainable = grads = n_train * ADAPTER_BYTES
    dense_layers = s.num_hidden_layers - s.moe_layers
    per_tok = {moe: _layer_bytes_per_token(s, moe, act, method, targets, rank, lora_dropout) for moe in (False, True)}
    layer_input, host = tokens * s.hidden_size * act, 0
    if not grad_checkpointing:
        saved = tokens * (dense_layers * per_tok[False] + s.moe_layers * per_tok[True])
    elif backend == "unsloth":
        saved, host = UNSLOTH_INFLIGHT_LAYERS * layer_input, s.num_hidden_layers * layer_input
    else:
        saved = s.num_hidden_layers * layer_input
    worst = max(per_tok[False] if dense_layers else 0, per_tok[True] if s.moe_layers else 0)
    layer_back = tokens * worst * BACKWARD_FACTOR[bool(grad_checkpointing)]
    mods = [m for moe in (False, True) for m in _modules(s, moe)]
    if dtype == "4bit":  # bitsandbytes dequantises one linear at a time to bf16
        layer_back += max(i * o for _, i, o, _, _ in mods) * 2
    if method == "dora":  # PEFT builds B@A as B(A(eye(in))) in fp32: an in x in identity + the in x out product
        layer_back += max((4 * i * (i + o) for n, i, o, _, _ in mods if n in targets), default=0)
    logits = tokens * s.vocab_size * LOGIT_BYTES[backend]
    transient = max(logits, layer_back)
    return MemoryEstimate(
        model=s.name, weights=int(weights), trainable=int(trainable), gradients=int(grads),
        optimizer=int(n_train * OPTIMIZERS[optimizer]), activations=int(saved), transient=int(transient),
        overhead=int(CONTEXT_BYTES + FRAGMENTATION * (saved + transient)), logits=int(logits),
        layer_backward=int(layer_back), host_offload=int(host), params=p, trainable_params=int(n_train),
        settings={"method": method, "dtype": dtype, "rank": None if method == "full" else rank,
                  "target_modules": list(targets), "batch_size": batch_size, "seq_len": seq_len,
                  "grad_checkpointing": bool(grad_checkpointing), "optimizer": optimizer, "backend": backend,
                  "lora_dropout": lora_dropout})


def rl_estimate(model: Any, *, completions: int, prompt_len: int, completion_len: int, beta: float,
                **train: Any) -> dict:
    """Peak device memory of one GRPO step (the RL stage, helpers.agents.stages.reasoner_rl), in bytes and GiB: the
    larger of its two phases. Generating: the weights and the adapter's training state, the KV cache of every
    completion of the step at full length (`completions` = prompts_per_step x num_generations, 16-bit) and the last
    position's logits. Training: estimate() over those completions as one batch of prompt + completion tokens,
    plus, with beta > 0, the reference model's per-token log-probabilities (one fp32 number a token; the reference
    is the base with its adapters off on Unsloth, or a frozen copy of the adapter on transformers + PEFT with trl 1.x,
    so the base weights are not held twice; that copy, the adapter's size once more, is not counted). `train` goes
    to estimate()."""
    s, seq = get_shape(model), prompt_len + completion_len
    step = estimate(model, batch_size=completions, seq_len=seq, **train)
    act = activation_bytes(step.settings["dtype"])
    kv = 2 * s.num_hidden_layers * s.num_key_value_heads * s.head_dim * act * completions * seq
    generating = (step.weights + step.trainable + step.gradients + step.optimizer + kv
                  + completions * s.vocab_size * 4 + CONTEXT_BYTES)
    training = step.total_bytes + (completions * seq * 4 if beta > 0 else 0)
    peak = max(generating, training)
    return {"model": step.model, "peak_bytes": int(peak), "peak_gib": round(peak / GIB, 2),
            "phase": "generating" if generating >= training else "training",
            "generating_gib": round(generating / GIB, 2), "training_gib": round(training / GIB, 2),
            "kv_cache_gib": round(kv / GIB, 2), "completions": completions, "seq_len": seq}


# ---------------------------------------------------------------- disk: one chunk checkpoint
# What a chunk checkpoint holds besides the adapter and the optimizer state (helpers.train.outputs.save_chunk):
# scheduler.pt, adapter_config.json, PEFT's README.md, trainer_state.json's counters, per-chunk rows and RNG states
# (~40 KB of JSON), and optimizer.pt's framing (~350 B a tensor: 70 KB on the tiny model; ~1 MB on a 72B LoRA, a
# ten-thousandth of its 10 GB). The replay buffer is counted apart (extra_bytes): its JSON grows with the run.
CHECKPOINT_FIXED_BYTES = 256 * 1024


def checkpoint_bytes(trainable_params: int, optimizer: str = "adamw_torch", extra_bytes: int = 0) -> int:
    """Bytes one chunk checkpoint takes on disk: the adapter's weights (ADAPTER_BYTES each: PEFT and Unsloth keep
    them in fp32, and adapter_model.safetensors stores them so), the optimizer's state (OPTIMIZERS: AdamW's two fp32
    moments, 8 B a parameter; an optimizer the table lacks counts as AdamW), extra_bytes (the replay buffer's JSON)
    and CHECKPOINT_FIXED_BYTES. The disk check before each save (helpers.train.checkpoints.check_disk) uses it."""
    per_param = ADAPTER_BYTES + OPTIMIZERS.get(optimizer, OPTIMIZERS["adamw_torch"])
    return int(trainable_params * per_param + extra_bytes + CHECKPOINT_FIXED_BYTES)


def adapter_checkpoint_bytes(model: Any, *, rank: int, method: str = "lora",
                             target_modules: str | Iterable[str] = "all-linear", optimizer: str = "adamw_torch") -> int:
    """checkpoint_bytes for an adapter of the model's shape (a known name, a config.json, ...): Qwen2.5-72B at r=64
    on all seven projections is 842M parameters x (4 + 8) B = 10.1 GB (9.4 GiB); r=128 twice that."""
    if method not in ("lora", "rslora", "dora"):
        raise ValueError(f"method: {method!r} is not an adapter (lora, rslora or dora)")
    return checkpoint_bytes(adapter_params(get_shape(model), rank, target_modules, method), optimizer)


def checkpoint_table(model: Any, adapters: Mapping[str, Any], *, target_modules: str | Iterable[str] = "all-linear",
                     optimizer: str = "adamw_torch", keep: int = 2) -> list[dict]:
    """One row per adapter (name -> its settings: .method and .r, a profile's `models:` entries): trainable
    parameters, one chunk checkpoint in GiB, and the `keep` kept ones (train.keep_checkpoints; 0 keeps every chunk's:
    None). A save needs twice one checkpoint free beyond env.min_free_disk_gb."""
    rows = []
    for name, spec in adapters.items():
        n = adapter_params(get_shape(model), spec.r, target_modules, spec.method)
        one = checkpoint_bytes(n, optimizer)
        rows.append({"adapter": name, "method": spec.method, "r": spec.r, "trainable_params": n,
                     "checkpoint_gib": round(one / GIB, 2), "kept_gib": round(keep * one / GIB, 2) if keep else None})
    return rows


def fits(est: MemoryEstimate, device_gib: float, headroom: float = 0.05) -> bool:
    """True if the estimate leaves `headroom` (a fraction of the device, default 5%) free."""
    return fits_gib(est.total_gib, device_gib, headroom)


def fits_gib(peak_gib: float, device_gib: float, headroom: float = 0.05) -> bool:
    """True if a peak of peak_gib leaves `headroom` (a fraction of the device, default 5%) free."""
    return peak_gib <= device_gib * (1 - headroom)


def fit_table(models: Iterable[Any], device_gib: float, headroom: float = 0.05, **kwargs: Any) -> list[dict]:
    """One plain row per model (params, parts in GiB, total, fits) for `device_gib`; kwargs go to estimate()."""
    rows = []
    for m in models:
        est = estimate(m, **kwargs)
        g = {p: getattr(est, p) / GIB for p in est.PARTS}
        rows.append({"model": est.model, "params_b": round(est.params["total"] / 1e9, 2),
                     "active_b": round(est.params["active"] / 1e9, 2), "weights_gib": round(g["weights"], 2),
                     "train_state_gib": round(g["trainable"] + g["gradients"] + g["optimizer"], 2),
                     **{f"{k}_gib": round(g[k], 2) for k in ("activations", "transient", "overhead")},
                     "total_gib": round(est.total_gib, 2), "device_gib": round(device_gib, 2),
                     "fits": fits(est, device_gib, headroom), "method": est.settings["method"],
                     "dtype": est.settings["dtype"]})
    return rows


def plot_fit_table(rows: list[dict], device_gib: float, path: str | os.PathLike, headroom: float = 0.05) -> Path:
    """Stacked bars of each row's estimate against the device; saves a PNG (Agg canvas, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 0.5 * len(rows) + 1.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    labels = [f"{r['model'].split('/')[-1]} ({'fits' if r['fits'] else 'OOM'})" for r in rows]
    left = [0.0] * len(rows)
    for key, label in (("weights_gib", "weights"), ("train_state_gib", "trainable + grads + optimizer"),
                       ("activations_gib", "saved activations"), ("transient_gib", "logits / backward peak"),
                       ("overhead_gib", "context + fragmentation")):
        ax.barh(labels, [r[key] for r in rows], left=left, label=label)
        left = [a + r[key] for a, r in zip(left, rows)]
    ax.axvline(device_gib, color="black", label=f"device {device_gib:.1f} GiB")
    ax.axvline(device_gib * (1 - headroom), color="black", linestyle="--", label=f"{headroom:.0%} headroom")
    ax.set_xlim(0, max(left + [device_gib]) * 1.05)
    ax.invert_yaxis()
    ax.set_xlabel("estimated peak training memory (GiB)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


if __name__ == "__main__":  # the command moved (helpers.moved says where)
    from helpers import moved
    moved.refuse(__spec__.name)
