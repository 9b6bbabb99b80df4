"""Adapters: LoRA / rsLoRA / DoRA added for training, saved ones attached for inference (safetensors only)."""

from __future__ import annotations

import contextlib
import functools
import warnings
from pathlib import Path
from typing import Any, Iterator

from helpers.config import AdapterSpec
from helpers.io import InputError, file_sha256
from helpers.models.unsloth_api import call_checked, unsloth_peft_kwargs


METHODS = ("lora", "rslora", "dora")


def filter_target_modules(module_names: list[str], wanted: list[str]) -> list[str]:
    """The wanted module suffixes that exist among the model's module names (order of `wanted`)."""
    leaves = {name.rsplit(".", 1)[-1] for name in module_names}
    return [w for w in wanted if w in leaves]


def lora_config_kwargs(spec: AdapterSpec, target_modules: list[str]) -> dict:
    """LoraConfig arguments for a profile's adapter (method lora | rslora | dora)."""
    method = spec.method
    if method not in METHODS:
        raise ValueError(f"adapter method {method!r} is not one of {METHODS}")
    r, alpha = spec.r, spec.alpha
    if r < 1:
        raise ValueError(f"adapter rank r must be >= 1, got {r}")
    return {"r": r, "lora_alpha": alpha, "lora_dropout": spec.dropout,
            "target_modules": list(target_modules), "bias": "none", "task_type": "CAUSAL_LM",
            # rsLoRA scales the update by alpha/sqrt(r) instead of alpha/r (r=128, alpha=256: 22.6 vs 2.0).
            "use_rslora": method == "rslora",
            # DoRA splits each weight into a magnitude vector and a direction the LoRA update rotates.
            "use_dora": method == "dora"}


def add_adapter(model: Any, spec: AdapterSpec, target_modules: list[str], *, backend: str = "transformers",
                seed: int = 0, gradient_checkpointing: bool = True) -> Any:
    """Wrap the model in a PeftModel with a LoRA / rsLoRA / DoRA adapter on the target modules that exist."""
    names = [n for n, _ in model.named_modules()]
    present = filter_target_modules(names, list(target_modules))
    if not present:
        linear = sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if type(m).__name__ == "Linear"})
        raise ValueError(f"none of train.target_modules {list(target_modules)} exist in this model; "
                         f"its linear layers are {linear}")
    kwargs = lora_config_kwargs(spec, present)
    if backend == "unsloth":  # Unsloth's adapter set-up (its kernels, its checkpointing, what it does for DDP)
        import unsloth
        peft_kwargs = {"model": model, **unsloth_peft_kwargs(kwargs, gradient_checkpointing, seed)}
        return call_checked(unsloth.FastLanguageModel.get_peft_model, peft_kwargs, "FastLanguageModel.get_peft_model")
    from peft import LoraConfig, get_peft_model
    with _quiet_peft():
        return get_peft_model(model, LoraConfig(**kwargs))


@contextlib.contextmanager
def _quiet_peft() -> Iterator[None]:
    """PEFT calls transformers 5's deprecated is_gradient_checkpointing: a FutureWarning users cannot act on."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        yield


def adapter_state(model: Any) -> dict:
    """The adapter's tensors (LoRA A/B and DoRA magnitude vectors), detached."""
    from peft import get_peft_model_state_dict
    return {k: v.detach() for k, v in get_peft_model_state_dict(model).items()}


def load_adapter_weights(model: Any, adapter_dir: str | Path) -> None:
    """Load adapter_model.safetensors into an existing PeftModel (resume); every adapter tensor must match."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file
    path = Path(adapter_dir) / "adapter_model.safetensors"
    if not path.exists():
        raise InputError(path, None, None, "missing: adapters are only loaded from safetensors")
    state = load_file(str(path))
    expected = set(adapter_state(model))
    if set(state) != expected:
        extra, missing = sorted(set(state) - expected)[:3], sorted(expected - set(state))[:3]
        raise InputError(path, None, None, f"does not match this adapter (missing {missing}, unexpected {extra}): "
                                           "was it trained with another method, rank or base model?")
    set_peft_model_state_dict(model, state)


# A trained adapter folder: config + safetensors weights only (a pickled adapter_model.bin could run code on load).
ADAPTER_WEIGHTS = "adapter_model.safetensors"
ADAPTER_FILES = ("adapter_config.json", ADAPTER_WEIGHTS)


def adapter_sha256(adapter_dir: str | Path) -> str:
    """The sha256 of an adapter folder's weights: which trained adapter a measurement or a checkpoint is of (read
    once per version of the file: a 72B adapter's weights are a gigabyte, and the answer mode asks several times)."""
    path = Path(adapter_dir) / ADAPTER_WEIGHTS
    stat = path.stat()
    return _weights_sha256(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _weights_sha256(path: str, mtime_ns: int, size: int) -> str:
    """file_sha256 of one version (path, modification time, size) of a weights file."""
    return file_sha256(path)


def missing_adapter_files(adapter_dir: str | Path) -> list[Path]:
    """The files of ADAPTER_FILES absent from adapter_dir (empty when the adapter can be loaded)."""
    return [Path(adapter_dir) / f for f in ADAPTER_FILES if not (Path(adapter_dir) / f).exists()]


def _require_adapter(adapter_dir: str | Path, problem: str) -> None:
    """Raise InputError naming the first missing adapter file, with `problem`."""
    missing = missing_adapter_files(adapter_dir)
    if missing:
        raise InputError(missing[0], None, None, problem)


def attach_adapter(model: Any, adapter_dir: str | Path, name: str) -> Any:
    """Load a saved adapter under `name` for inference (the first makes a PeftModel); returns the model."""
    _require_adapter(adapter_dir, f"missing: adapter {name!r} cannot be loaded (train it in notebooks 03-05); "
                                  "only safetensors weights load")
    with _quiet_peft():
        if not hasattr(model, "peft_config"):
            from peft import PeftModel
            return PeftModel.from_pretrained(model, str(adapter_dir), adapter_name=name, is_trainable=False)
        model.load_adapter(str(adapter_dir), adapter_name=name, is_trainable=False)
    return model


def load_adapter(base_model: Any, adapter_dir: str | Path, *, is_trainable: bool = False) -> Any:
    """A trained adapter folder (adapter_config.json + adapter_model.safetensors) on top of a base model."""
    from peft import PeftModel
    adapter_dir = Path(adapter_dir)
    _require_adapter(adapter_dir, "missing: train the adapter first (notebooks 03-05); only safetensors weights load")
    with _quiet_peft():
        return PeftModel.from_pretrained(base_model, str(adapter_dir), is_trainable=is_trainable)
