"""Load a base model + tokenizer (tiny, packaged, hub id or local dir; Unsloth or transformers), attach adapters.

Import seam: Unsloth patches transformers/peft/trl when it is imported, so it must be imported BEFORE
them in the process. Nothing in this module (nor helpers.train / helpers.train.telemetry / helpers.prompts)
imports transformers or peft at import time; load_model() imports Unsloth first when choose_backend()
picks it, and only then transformers. In a notebook, call load_model() before importing transformers
or peft yourself.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import warnings
from pathlib import Path
from typing import Any, Iterator

from helpers.io import InputError, package_version
from helpers.models.compat import dtype_kwarg, quiet_progress_if_headless
from helpers.models.packaged import ensure_packaged_model, is_packaged

DTYPES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "float16": "float16", "fp16": "float16", "half": "float16"}
METHODS = ("lora", "rslora", "dora")



# ---------------------------------------------------------------- pure selection logic (tested on fabricated facts)
def _falsy(value: Any) -> bool:
    return value is False or str(value).strip().lower() in ("false", "no", "off", "0", "none")


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "yes", "on", "1")


def rec_value(recommendation: dict | None, key: str, default: Any = None) -> Any:
    """A recommended setting's value; accepts {"key": value} and {"key": {"value": v, "reason": r}}."""
    if not recommendation or key not in recommendation:
        return default
    item = recommendation[key]
    return item.get("value", default) if isinstance(item, dict) else item


def _unsloth_possible(env_info: dict | None) -> tuple[bool, str]:
    info = env_info or {}
    if "use_unsloth" not in info and isinstance(info.get("unsloth"), dict):  # env.collect_facts() record
        from helpers.env.rules import unsloth_choice  # the one backend rule, also behind env.recommend()
        return unsloth_choice(info)
    value = rec_value(info, "use_unsloth")  # env.recommend() output: already decided from the facts
    if value is None:
        return False, "no environment facts: transformers is the safe default"
    return _truthy(value), "the environment recommendation"


def choose_backend(env_info: dict | None, model_cfg: dict) -> str:
    """'unsloth' on an accelerator with Unsloth importable and model.use_unsloth true/auto, else 'transformers'.

    env_info is either env.collect_facts() or env.recommend(); pure (never imports anything), so it is
    tested on fabricated facts. An explicit use_unsloth: true that cannot be honoured raises.
    """
    want = model_cfg.get("use_unsloth", "auto")
    if _falsy(want):
        return "transformers"
    possible, why = _unsloth_possible(env_info)
    if possible:
        return "unsloth"
    if _truthy(want):
        raise RuntimeError(f"model.use_unsloth is true but Unsloth cannot be used here ({why}); "
                           "set model.use_unsloth: auto to fall back to transformers + PEFT")
    return "transformers"


def resolve_settings(model_cfg: dict, recommendation: dict | None, train_cfg: dict | None = None) -> dict:
    """The profile's model settings with every "auto" replaced by the recommendation (or a safe default)."""
    def pick(key: str, rec_key: str, default: Any, cfg: dict) -> Any:
        value = cfg.get(key, "auto")
        if value is None or str(value).lower() == "auto":
            value = rec_value(recommendation, rec_key, default)
        return default if value is None else value

    dtype = str(pick("dtype", "dtype", "float32", model_cfg)).lower()
    if dtype not in DTYPES:
        raise ValueError(f"model.dtype: {dtype!r} is not one of {sorted(set(DTYPES))} or auto")
    want_4bit = model_cfg.get("load_in_4bit", "auto")
    rec_4bit = _truthy(rec_value(recommendation, "load_in_4bit", False))
    # 4-bit only when requested (true/auto) AND recommended: bitsandbytes must really work (not on ROCm 6.2).
    load_in_4bit = (not _falsy(want_4bit)) and rec_4bit
    attn = pick("attn_implementation", "attn_implementation", None, model_cfg)
    optim = pick("optim", "optim", None, train_cfg or {})
    if optim is None:
        optim = rec_value(recommendation, "optimizer", "adamw_torch")
    return {
        "dtype": DTYPES[dtype], "load_in_4bit": bool(load_in_4bit),
        "load_in_4bit_requested": want_4bit, "attn_implementation": attn, "optim": str(optim),
        "trust_remote_code": _truthy(model_cfg.get("trust_remote_code", False)),
        "gradient_checkpointing": _truthy(pick("gradient_checkpointing", "gradient_checkpointing", True, model_cfg)),
        "max_seq_len": int(model_cfg.get("max_seq_len", 512)),
    }


def filter_target_modules(module_names: list[str], wanted: list[str]) -> list[str]:
    """The wanted module suffixes that exist among the model's module names (order of `wanted`)."""
    leaves = {name.rsplit(".", 1)[-1] for name in module_names}
    return [w for w in wanted if w in leaves]


# ---------------------------------------------------------------- loading
def import_unsloth() -> Any:
    """Import Unsloth (must come before transformers/peft in the process; see the module docstring)."""
    import sys
    late = [m for m in ("transformers", "peft", "trl") if m in sys.modules]
    if late:
        print(f"[models] warning: {', '.join(late)} imported before Unsloth; its patches may not all apply "
              "(restart the kernel and call load_model() first)")
    try:
        return importlib.import_module("unsloth")
    except ImportError as exc:  # e.g. unsloth_zoo missing, or PyPI's triton over the box's (triton_key)
        raise RuntimeError(f"import unsloth failed ({type(exc).__name__}: {exc}). Fix: make setup-gpu (installs the "
                           "pinned unsloth and unsloth_zoo, checks the torch stack), or set model.use_unsloth: false"
                           ) from exc


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


def resolve_base(base: str | Path, tiny_kwargs: dict | None = None) -> tuple[Path | str, str]:
    """(where to load from, kind): the built tiny model or a converted packaged one (built on first use), a local
    folder, or a hub id as it is."""
    if str(base) == "tiny":
        from helpers.models.tiny import ensure_tiny_model
        return ensure_tiny_model(**(tiny_kwargs or {})), "tiny"
    if is_packaged(str(base)):  # a real model from a wheel, converted once into the cache
        return ensure_packaged_model(str(base)), "packaged"
    path = Path(os.path.expanduser(str(base)))
    if path.exists():
        if not (path / "config.json").exists():
            raise InputError(path, None, None, "is a directory without config.json: not a model folder")
        return path, "local"
    if str(base).startswith((".", "/", "~")):
        raise InputError(path, None, None, "model folder not found")
    return str(base), "hub"


def prepare_tokenizer(tokenizer: Any, *, for_training: bool) -> Any:
    """Right padding for training (labels line up), left for scoring/generation; a pad token always."""
    if tokenizer.pad_token is None:
        # Qwen has <|endoftext|> as pad; Llama-style tokenizers have none, so reuse EOS (labels are
        # padded with -100 by the collator, never derived from pad ids, so EOS in the answer still trains).
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    tokenizer.padding_side = "right" if for_training else "left"
    return tokenizer


def enable_checkpointing(model: Any) -> None:
    """Gradient checkpointing the PEFT-safe way: non-reentrant, inputs requiring grad, no KV cache."""
    if hasattr(model, "activation_checkpointing_enable"):  # transformers 5.x name; the old one warns there
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if hasattr(model, "enable_input_require_grads"):
        model.enable_input_require_grads()  # frozen embeddings would otherwise cut the graph (reentrant path)
    if getattr(model, "config", None) is not None:
        model.config.use_cache = False


def count_parameters(model: Any) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    trainable = total = 0
    for p in model.parameters():
        n = p.numel()
        total += n
        trainable += n if p.requires_grad else 0
    return trainable, total


def load_model(base: str | Path, *, model_cfg: dict, recommendation: dict | None = None, for_training: bool = True,
               facts: dict | None = None, train_cfg: dict | None = None, tiny_kwargs: dict | None = None,
               ) -> tuple[Any, Any, dict]:
    """(model, tokenizer, info): base "tiny" | a packaged model ("smollm2-135m") | hub id | local dir, on the chosen
    backend with the recommended settings."""
    settings = resolve_settings(model_cfg, recommendation, train_cfg)
    backend = choose_backend(facts if facts is not None else recommendation, model_cfg)
    if recommendation:
        from helpers import env
        env.apply_env(recommendation)  # TORCH_COMPILE=0 etc. on ROCm, before torch compiles anything
    if backend == "unsloth":
        import_unsloth()  # before anything below imports transformers (the tiny builder does)
    source, kind = resolve_base(base, tiny_kwargs)
    info: dict[str, Any] = {"base": str(base), "source": str(source), "kind": kind, "backend": backend,
                            **settings, "warnings": []}
    if settings["load_in_4bit_requested"] is True and not settings["load_in_4bit"]:
        info["warnings"].append("load_in_4bit requested but not recommended here (bitsandbytes unusable): 16-bit")
    if backend == "unsloth":
        model, tokenizer = _load_unsloth(source, settings)
    else:
        model, tokenizer = _load_transformers(source, settings, for_training)
    import torch
    if for_training and settings["gradient_checkpointing"] and backend != "unsloth":
        enable_checkpointing(model)  # Unsloth applies its own (unsloth_checkpointing) at load and in add_adapter
    elif getattr(model, "config", None) is not None:
        model.config.use_cache = not for_training
    if not for_training:
        model.eval()
    prepare_tokenizer(tokenizer, for_training=for_training)
    trainable, total = count_parameters(model)
    info.update(total_params=total, device=str(next(model.parameters()).device),
                torch_dtype=str(next(model.parameters()).dtype).replace("torch.", ""),
                transformers=package_version("transformers"), cuda=torch.cuda.is_available())
    return model, tokenizer, info


def unsloth_checkpointing(enabled: bool) -> str | bool:
    """Unsloth's use_gradient_checkpointing value for the profile's setting: its offloading "unsloth" mode, or off."""
    return "unsloth" if enabled else False


def unsloth_load_kwargs(source: Path | str, settings: dict, dtype: Any) -> dict:
    """FastLanguageModel.from_pretrained's arguments (tests/test_unsloth_wheel.py holds them to the pinned wheel).

    use_exact_model_name: without it Unsloth maps e.g. Qwen/Qwen2.5-72B-Instruct to unsloth/Qwen2.5-72B-Instruct, a
    second 145 GB download into the cache (the seeds' full disk) and an adapter whose base is not the profile's."""
    return {"model_name": str(source), "max_seq_length": settings["max_seq_len"], "dtype": dtype,
            "load_in_4bit": settings["load_in_4bit"], "trust_remote_code": settings["trust_remote_code"],
            "use_exact_model_name": True,
            "use_gradient_checkpointing": unsloth_checkpointing(settings["gradient_checkpointing"])}


def _load_unsloth(source: Path | str, settings: dict) -> tuple[Any, Any]:
    unsloth = import_unsloth()  # first: before transformers/peft are imported below
    import torch
    return call_checked(unsloth.FastLanguageModel.from_pretrained,
                        unsloth_load_kwargs(source, settings, getattr(torch, settings["dtype"])),
                        "FastLanguageModel.from_pretrained")


def load_tokenizer(base: str | Path, model_cfg: dict) -> Any:
    """The base model's tokenizer alone, for inference (the Q-agent's puzzles need no weights); remote code as
    load_model decides it (off unless the profile turns it on)."""
    from transformers import AutoTokenizer
    source, _ = resolve_base(base)
    trust = _truthy(model_cfg.get("trust_remote_code", False))
    return prepare_tokenizer(AutoTokenizer.from_pretrained(str(source), trust_remote_code=trust), for_training=False)


def _load_transformers(source: Path | str, settings: dict, for_training: bool) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    dtype = getattr(torch, settings["dtype"])
    kwargs: dict[str, Any] = {**dtype_kwarg(dtype), "trust_remote_code": settings["trust_remote_code"]}
    if settings["attn_implementation"]:
        kwargs["attn_implementation"] = settings["attn_implementation"]
    if settings["load_in_4bit"]:
        from transformers import BitsAndBytesConfig
        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=dtype)
    if torch.cuda.is_available():
        # Straight onto this process's GPU: a 72B in bf16 is ~145 GB, staging it in CPU RAM first doubles the peak.
        kwargs["device_map"] = {"": int(os.environ.get("LOCAL_RANK", 0))}
    quiet_progress_if_headless()
    tokenizer = AutoTokenizer.from_pretrained(str(source), trust_remote_code=settings["trust_remote_code"])
    model = AutoModelForCausalLM.from_pretrained(str(source), **kwargs)
    if settings["load_in_4bit"] and for_training:
        from peft import prepare_model_for_kbit_training
        model = prepare_model_for_kbit_training(
            model, use_gradient_checkpointing=settings["gradient_checkpointing"],
            gradient_checkpointing_kwargs={"use_reentrant": False})
    return model, tokenizer


# ---------------------------------------------------------------- adapters
def lora_config_kwargs(spec: dict, target_modules: list[str]) -> dict:
    """LoraConfig arguments for a profile's model spec (method lora | rslora | dora)."""
    method = str(spec.get("method", "lora")).lower()
    if method not in METHODS:
        raise ValueError(f"adapter method {method!r} is not one of {METHODS}")
    r, alpha = spec["r"], spec["alpha"]
    if r < 1:
        raise ValueError(f"adapter rank r must be >= 1, got {r}")
    return {"r": r, "lora_alpha": alpha, "lora_dropout": float(spec.get("dropout", 0.0)),
            "target_modules": list(target_modules), "bias": "none", "task_type": "CAUSAL_LM",
            # rsLoRA scales the update by alpha/sqrt(r) instead of alpha/r (r=128, alpha=256: 22.6 vs 2.0).
            "use_rslora": method == "rslora",
            # DoRA splits each weight into a magnitude vector and a direction the LoRA update rotates.
            "use_dora": method == "dora"}


def unsloth_peft_kwargs(lora_kwargs: dict, gradient_checkpointing: bool, seed: int) -> dict:
    """FastLanguageModel.get_peft_model's arguments for lora_config_kwargs(): DoRA included (Unsloth builds it
    through PEFT and keeps DoRA layers off its fused LoRA kernels), the profile's checkpointing honoured."""
    keep = ("r", "lora_alpha", "lora_dropout", "target_modules", "bias", "use_rslora", "use_dora")
    return {**{k: lora_kwargs[k] for k in keep},
            "use_gradient_checkpointing": unsloth_checkpointing(gradient_checkpointing), "random_state": seed}


def add_adapter(model: Any, spec: dict, target_modules: list[str], *, backend: str = "transformers",
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
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


def missing_adapter_files(adapter_dir: str | Path) -> list[Path]:
    """The files of ADAPTER_FILES absent from adapter_dir (empty when the adapter can be loaded)."""
    return [Path(adapter_dir) / f for f in ADAPTER_FILES if not (Path(adapter_dir) / f).exists()]


def _require_adapter(adapter_dir: str | Path, problem: str) -> None:
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


def unsloth_available() -> bool:
    """Whether an `unsloth` distribution is installed (not imported: the kit imports it only on a GPU)."""
    return importlib.util.find_spec("unsloth") is not None
