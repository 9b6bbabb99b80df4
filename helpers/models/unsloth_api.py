"""Unsloth's seam: imported first (its patches need transformers/peft/trl not yet loaded), called with checked
keywords, and the arguments the kit gives its loader and adapter set-up (held to the pinned wheel by
tests/test_unsloth_wheel.py)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from helpers.env.facts import COMPILE_LOCATION_VAR, compile_location, unsloth_environ  # noqa: F401 (re-exported)
from helpers.io import package_version

# What Unsloth patches when it is imported, so what must not be imported before it (unsloth 2026.10.9 warns about
# these three: critical_modules in unsloth/_gpu_init.py).
PATCHED_ON_IMPORT = ("trl", "transformers", "peft")


def import_unsloth() -> Any:
    """Import Unsloth (must come before transformers/peft in the process; see the module docstring), its compiled
    code sent under the kit's cache (unsloth_environ)."""
    import sys
    if "unsloth" in sys.modules:  # imported already (make gpu-check's env step): once per process
        return sys.modules["unsloth"]
    for var, value in unsloth_environ().items():
        os.environ.setdefault(var, value)
    late = [m for m in PATCHED_ON_IMPORT if m in sys.modules]
    if late:
        print(f"[models] warning: {', '.join(late)} imported before Unsloth; its patches may not all apply "
              "(restart the kernel and call load_model() first)")
    try:
        return importlib.import_module("unsloth")
    except ImportError as exc:  # e.g. unsloth_zoo missing, or PyPI's triton over the box's (triton_key)
        raise RuntimeError(f"import unsloth failed ({type(exc).__name__}: {exc}). Fix: make setup-gpu (installs the "
                           "pinned unsloth and unsloth_zoo, checks the torch stack), or set model.use_unsloth: false"
                           ) from exc


class CutByUnsloth(ValueError):
    """An input longer than the max_seq_length Unsloth loaded the model with: Unsloth's fast forward would cut it."""


def refuse_overlength(model: Any, tokens: int, what: str) -> None:
    """Raise CutByUnsloth when `tokens` (a prompt, plus what will be generated after it) are more than the
    max_seq_length a model loaded through Unsloth carries: its fast forward (unsloth/models/llama.py, the overlength
    branch of the 2026.10.9 wheel) cuts such input with only a warning, so every answer after it would be scored on a
    truncated prompt. A model loaded through transformers carries no such limit and is never refused."""
    limit = getattr(model, "max_seq_length", None)
    if isinstance(limit, int) and not isinstance(limit, bool) and tokens > limit:
        raise CutByUnsloth(f"{what}: {tokens} tokens, more than the max_seq_length of {limit} the model was loaded "
                           f"with through Unsloth, which would cut the input without an error. Fix: raise "
                           f"model.max_seq_len in the profile (now {limit}), or shorten the prompt")


# Keywords Unsloth reads from **kwargs rather than naming (get_peft_model forwards use_dora to LoraConfig;
# tests/test_unsloth_wheel.py checks that against the pinned wheel).
UNSLOTH_VIA_KWARGS = ("use_dora",)


def call_checked(fn: Any, kwargs: dict, what: str) -> Any:
    """fn(**kwargs) after checking every keyword against fn's signature: an Unsloth release other than the pinned one
    may rename an argument, and this says so in one line instead of a TypeError deep in a notebook."""
    import inspect
    params = inspect.signature(fn).parameters  # follows functools.wraps to the real signature
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    # Both Unsloth calls take **kwargs, which would absorb a renamed argument silently (a dropped
    # use_exact_model_name is a second 145 GB download): only the keywords known to travel through it pass.
    unknown = [k for k in kwargs if k not in params and not (takes_any and k in UNSLOTH_VIA_KWARGS)]
    if unknown:
        raise RuntimeError(f"{what} of unsloth {package_version('unsloth')} takes no {', '.join(unknown)} (the kit was "
                           "checked against constraints-gpu.txt's pin). Fix: make setup-gpu, or set "
                           "model.use_unsloth: false")
    return fn(**kwargs)


def unsloth_checkpointing(enabled: bool) -> str | bool:
    """Unsloth's use_gradient_checkpointing value for the profile's setting: its offloading "unsloth" mode, or off."""
    return "unsloth" if enabled else False


def unsloth_load_kwargs(source: Path | str, settings: dict, dtype: Any) -> dict:
    """FastLanguageModel.from_pretrained's arguments (tests/test_unsloth_wheel.py holds them to the pinned wheel).

    use_exact_model_name: without it Unsloth maps e.g. Qwen/Qwen2.5-72B-Instruct to unsloth/Qwen2.5-72B-Instruct, a
    second 145 GB download into the cache (the original team's full disk) and an adapter whose base is not the profile's."""
    return {"model_name": str(source), "max_seq_length": settings["max_seq_len"], "dtype": dtype,
            "load_in_4bit": settings["load_in_4bit"], "trust_remote_code": settings["trust_remote_code"],
            "use_exact_model_name": True,
            "use_gradient_checkpointing": unsloth_checkpointing(settings["gradient_checkpointing"])}


def unsloth_peft_kwargs(lora_kwargs: dict, gradient_checkpointing: bool, seed: int) -> dict:
    """FastLanguageModel.get_peft_model's arguments for lora_config_kwargs(): DoRA included (Unsloth builds it
    through PEFT and keeps DoRA layers off its fused LoRA kernels), the profile's checkpointing honoured."""
    keep = ("r", "lora_alpha", "lora_dropout", "target_modules", "bias", "use_rslora", "use_dora")
    return {**{k: lora_kwargs[k] for k in keep},
            "use_gradient_checkpointing": unsloth_checkpointing(gradient_checkpointing), "random_state": seed}
