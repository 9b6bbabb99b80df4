"""Which backend loads a model (Unsloth or transformers) and the profile's model settings with "auto" resolved.

Pure: never imports torch, transformers or Unsloth, so every choice is tested on fabricated environment facts.
"""

from __future__ import annotations

from typing import Any

from helpers.config import ModelSettings, TrainSettings

DTYPES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float16": "float16", "fp16": "float16", "half": "float16"}


def falsy(value: Any) -> bool:
    """A profile or recommendation value meaning off (false, "no", "0", ...: helpers.env.rules.OFF_WORDS)."""
    from helpers.env.rules import OFF_WORDS
    return value is False or str(value).strip().lower() in OFF_WORDS


def truthy(value: Any) -> bool:
    """A profile or recommendation value meaning on (true, "yes", "1", ...)."""
    return value is True or str(value).strip().lower() in ("true", "yes", "on", "1")


def rec_value(recommendation: dict | None, key: str, default: Any = None) -> Any:
    """A recommended setting's value; accepts {"key": value} and {"key": {"value": v, "reason": r}}."""
    if not recommendation or key not in recommendation:
        return default
    item = recommendation[key]
    return item.get("value", default) if isinstance(item, dict) else item


def _unsloth_possible(env_info: dict | None) -> tuple[bool, str]:
    """Whether Unsloth can run, and why, from env.collect_facts() or env.recommend() output."""
    info = env_info or {}
    if "use_unsloth" not in info and isinstance(info.get("unsloth"), dict):  # env.collect_facts() record
        from helpers.env.rules import unsloth_choice  # the one backend rule, also behind env.recommend()
        return unsloth_choice(info)
    value = rec_value(info, "use_unsloth")  # env.recommend() output: already decided from the facts
    if value is None:
        return False, "no environment facts: transformers is the safe default"
    said = info["use_unsloth"].get("reason") if isinstance(info.get("use_unsloth"), dict) else None
    return truthy(value), said or "the environment recommendation"


# Seen on an NVIDIA H200 (make gpu-check, docs/results.md): Unsloth will not pad with the eos and takes a pad-named token
# of the vocabulary instead; the tiny model has none (its pad is its eos, as in Qwen's base models; every Qwen2.5 has
# <|fim_pad|>), so Unsloth refused to load it. tests/test_tinymodel.py holds the pinned unsloth_zoo to this.
TINY_REFUSED = ("Unsloth refuses the kit's tiny model (its pad token is its eos and it has no pad-named token: "
                "'Could not find a valid pad token'): transformers + PEFT")


def unsloth_refuses(model: ModelSettings) -> str | None:
    """Why Unsloth cannot load these weights although it runs here, or None."""
    return TINY_REFUSED if str(model.weights) == "tiny" else None


def choose_backend(env_info: dict | None, model: ModelSettings) -> str:
    """'unsloth' on an accelerator with Unsloth importable and model.use_unsloth true/auto, else 'transformers'
    (backend_choice says why)."""
    return backend_choice(env_info, model)[0]


def backend_choice(env_info: dict | None, model: ModelSettings) -> tuple[str, str]:
    """(backend, why): 'unsloth' on an accelerator with Unsloth importable and model.use_unsloth true/auto, unless
    Unsloth refuses these weights; else 'transformers'.

    env_info is either env.collect_facts() or env.recommend(); pure (never imports anything), so it is
    tested on fabricated facts. An explicit use_unsloth: true that cannot be honoured raises.
    """
    want = model.use_unsloth
    if falsy(want):
        return "transformers", "model.use_unsloth is false"
    possible, why = _unsloth_possible(env_info)
    refused = unsloth_refuses(model)
    if possible and refused:
        if truthy(want):
            raise RuntimeError(f"model.use_unsloth is true but {refused}; set model.use_unsloth: auto")
        return "transformers", refused
    if possible:
        return "unsloth", why
    if truthy(want):
        raise RuntimeError(f"model.use_unsloth is true but Unsloth cannot be used here ({why}); "
                           "set model.use_unsloth: auto to fall back to transformers + PEFT")
    return "transformers", why


def resolve_settings(model: ModelSettings, recommendation: dict | None, train: TrainSettings | None = None) -> dict:
    """The profile's model settings with every "auto" replaced by the recommendation (or a safe default)."""
    def pick(value: Any, rec_key: str, default: Any) -> Any:
        if value is None or str(value).lower() == "auto":
            value = rec_value(recommendation, rec_key, default)
        return default if value is None else value

    dtype = str(pick(model.dtype, "dtype", "float32")).lower()
    if dtype not in DTYPES:
        raise ValueError(f"model.dtype: {dtype!r} is not one of {sorted(set(DTYPES))} or auto")
    want_4bit = model.load_in_4bit
    rec_4bit = truthy(rec_value(recommendation, "load_in_4bit", False))
    # 4-bit only when requested (true/auto) AND recommended: bitsandbytes must really work (not on ROCm 6.2).
    load_in_4bit = (not falsy(want_4bit)) and rec_4bit
    attn = pick(model.attn_implementation, "attn_implementation", None)
    # Without a train section (loading for inference) the optimizer is the recommendation's, as for "auto".
    optim = pick("auto" if train is None else train.optim, "optim", None)
    if optim is None:
        optim = rec_value(recommendation, "optimizer", "adamw_torch")
    return {
        "dtype": DTYPES[dtype], "load_in_4bit": bool(load_in_4bit),
        "load_in_4bit_requested": want_4bit, "attn_implementation": attn, "optim": str(optim),
        "trust_remote_code": truthy(model.trust_remote_code),
        "gradient_checkpointing": truthy(pick(model.gradient_checkpointing, "gradient_checkpointing", True)),
        "max_seq_len": model.max_seq_len,
    }
