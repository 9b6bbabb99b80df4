"""One adapter to train: the base model loaded for training with the profile's LoRA / rsLoRA / DoRA attached."""

from __future__ import annotations

import math
from typing import Any

from helpers import env
from helpers.config import AdapterSpec, Profile
from helpers.models import add_adapter, count_parameters, load_model


def adapter_summary(spec: AdapterSpec) -> dict:
    """Method, rank, alpha, the scale of the LoRA update (alpha/r, or alpha/sqrt(r) for rsLoRA) and its Adam step.

    adam_step = scaling x r: Adam moves each entry of B by about lr per step whatever the gradient's size, so
    how far one step moves the loss grows with scaling x r: alpha for LoRA and DoRA, alpha x sqrt(r) for rsLoRA.
    The same scaling at a higher rank is a bigger step: rsLoRA r=16 alpha=8 steps twice as far as LoRA r=8
    alpha=16 (tests/test_train.py measures it), and on the smoke profile that collapsed it to one letter.
    """
    r, alpha, method = spec.r, spec.alpha, spec.method
    scaling = alpha / math.sqrt(r) if method == "rslora" else alpha / r
    out = {"method": method, "r": r, "alpha": alpha, "dropout": spec.dropout, "scaling": round(scaling, 4),
           "adam_step": round(scaling * r, 4)}
    if method == "dora":
        out["magnitude_lr_multiplier"] = spec.magnitude_lr_multiplier
    return out


def check_model_name(cfg: Profile, name: str) -> None:
    """Raise a KeyError naming the profile's adapters when `name` is not one of them."""
    if name not in cfg.models:
        raise KeyError(f"no model '{name}' in the profile (models: {', '.join(cfg.models)})")


def prepare_adapter(cfg: Profile, name: str, recommendation: dict | None = None) -> tuple[Any, Any, dict]:
    """Load the base model for training and attach the profile's adapter: (peft model, tokenizer, info)."""
    check_model_name(cfg, name)
    rec = recommendation if recommendation is not None else env.read_recommendation(cfg)
    model, tokenizer, info = load_model(cfg.model.weights, model=cfg.model, recommendation=rec,
                                        for_training=True, train=cfg.train)
    from transformers import set_seed
    set_seed(cfg.seed)  # LoRA A matrices are random: same seed, same starting adapter
    model = add_adapter(model, cfg.models[name], cfg.train.target_modules, backend=info["backend"],
                        seed=cfg.seed, gradient_checkpointing=info["gradient_checkpointing"])
    trainable, total = count_parameters(model)
    peft_cfg = model.peft_config["default"]
    info.update(recommendation=rec, trainable_params=trainable, total_params=total,
                trainable_share=round(trainable / max(total, 1), 6), adapter=adapter_summary(cfg.models[name]),
                target_modules=sorted(peft_cfg.target_modules), use_rslora=bool(peft_cfg.use_rslora),
                use_dora=bool(peft_cfg.use_dora))
    return model, tokenizer, info
