"""Load a base model + tokenizer: tiny, packaged, hub id or local dir, on Unsloth or transformers.

Import seam: Unsloth patches transformers/peft/trl when it is imported, so it must be imported BEFORE
them in the process. Nothing in helpers.models (nor helpers.train / helpers.train.telemetry / helpers.prompts)
imports transformers or peft at import time; import_backend() is the one place that rule lives: it imports
Unsloth when choose_backend() picks it. load_model() starts with it, and a stage that imports trl or
transformers before it loads a model (the RL stage) calls it first. In a notebook, call load_model() before
importing transformers or peft yourself.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from helpers.config import ModelSettings, TrainSettings
from helpers.io import InputError, package_version
from helpers.models.compat import dtype_kwarg, quiet_progress_if_headless
from helpers.models.packaged import ensure_packaged_model, is_packaged
from helpers.models.settings import choose_backend, resolve_settings, truthy
from helpers.models.unsloth_api import call_checked, import_unsloth, unsloth_load_kwargs


def resolve_base(base: str | Path, tiny_kwargs: dict | None = None) -> tuple[Path | str, str]:
    """(where to load from, kind): the built tiny model or a converted packaged one (built on first use), a local
    folder (kind "tiny" where it is a tiny model's build, carried to another box: its threads are the tiny model's),
    or a hub id as it is."""
    if str(base) == "tiny":
        from helpers.models.tiny import ensure_tiny_model
        return ensure_tiny_model(**(tiny_kwargs or {})), "tiny"
    from helpers.models.tiny import MARKER, TINY_PAD, ensure_padded_tiny
    if str(base) == TINY_PAD:  # the tiny model with a pad-named token, which Unsloth takes (make gpu-check's)
        return ensure_padded_tiny(progress=(tiny_kwargs or {}).get("progress", True)), "tiny"
    if is_packaged(str(base)):  # a real model from a wheel, converted once into the cache
        return ensure_packaged_model(str(base)), "packaged"
    path = Path(os.path.expanduser(str(base)))
    if path.exists():
        if not (path / "config.json").exists():
            raise InputError(path, None, None, "is a directory without config.json: not a model folder")
        return path, "tiny" if (path / MARKER).is_file() else "local"
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


def import_backend(model: ModelSettings, recommendation: dict | None = None, facts: dict | None = None) -> str:
    """The backend choose_backend() picks for the profile's `model` settings ('unsloth' or 'transformers'), made
    ready in the order Unsloth needs: the recommendation's environment variables set (TORCH_COMPILE=0 etc. on ROCm,
    before torch compiles anything), then Unsloth imported when it is the backend, before trl, transformers or peft.
    Idempotent: a second call imports nothing new."""
    backend = choose_backend(facts if facts is not None else recommendation, model)
    if recommendation:
        from helpers import env
        env.apply_env(recommendation)
    if backend == "unsloth":
        import_unsloth()
    return backend


def load_model(base: str | Path, *, model: ModelSettings, recommendation: dict | None = None, for_training: bool = True,
               facts: dict | None = None, train: TrainSettings | None = None, tiny_kwargs: dict | None = None,
               ) -> tuple[Any, Any, dict]:
    """(model, tokenizer, info): base "tiny" | a packaged model ("smollm2-135m") | hub id | local dir, on the chosen
    backend with the profile's `model` settings, "auto" resolved against the recommendation."""
    settings = resolve_settings(model, recommendation, train)
    # Inference goes through transformers + PEFT unless model.unsloth_inference (docs/gpu.md, "The answer path")
    chosen = model if for_training or truthy(model.unsloth_inference) else dataclasses.replace(model, use_unsloth=False)
    backend = import_backend(chosen, recommendation, facts)  # before anything below imports transformers (tiny does)
    source, kind = resolve_base(base, tiny_kwargs)
    info: dict[str, Any] = {"base": str(base), "source": str(source), "kind": kind, "backend": backend,
                            **settings, "warnings": []}
    if settings["load_in_4bit_requested"] is True and not settings["load_in_4bit"]:
        info["warnings"].append("load_in_4bit requested but not recommended here (bitsandbytes unusable): 16-bit")
    if backend == "unsloth":
        net, tokenizer = _load_unsloth(source, settings, for_training)
    else:
        net, tokenizer = _load_transformers(source, settings, for_training)
    import torch
    if for_training and settings["gradient_checkpointing"] and backend != "unsloth":
        enable_checkpointing(net)  # Unsloth applies its own (unsloth_checkpointing) at load and in add_adapter
    elif getattr(net, "config", None) is not None:
        net.config.use_cache = not for_training
    if not for_training:
        net.eval()
    prepare_tokenizer(tokenizer, for_training=for_training)
    trainable, total = count_parameters(net)
    info.update(total_params=total, device=str(next(net.parameters()).device),
                torch_dtype=str(next(net.parameters()).dtype).replace("torch.", ""),
                transformers=package_version("transformers"), cuda=torch.cuda.is_available())
    return net, tokenizer, info


# An inference load's length through Unsloth (which cuts longer input: refuse_overlength): room for the Q-agent's
# 1,024 new tokens after its prompt, the A-agent's 512 of reasoning after a question and its choices (the organisers'
# caps), never past the model's own positions (Unsloth would stretch its RoPE to reach them).
INFERENCE_SEQ_LEN = 2048


def inference_length(source: Path | str, max_seq_len: int) -> int:
    """The max_seq_length an inference load gets: the profile's training cap, raised to INFERENCE_SEQ_LEN within the
    model's max_position_embeddings (read from its config.json where it is a local folder)."""
    import json
    positions = INFERENCE_SEQ_LEN
    config_file = Path(str(source)) / "config.json"
    if config_file.is_file():
        positions = int(json.loads(config_file.read_text(encoding="utf-8")).get("max_position_embeddings") or positions)
    return max(max_seq_len, min(INFERENCE_SEQ_LEN, positions))


def _load_unsloth(source: Path | str, settings: dict, for_training: bool = True) -> tuple[Any, Any]:
    """Model and tokenizer through FastLanguageModel.from_pretrained; an inference load with room to generate."""
    unsloth = import_unsloth()  # first: before transformers/peft are imported below
    import torch
    length = settings["max_seq_len"] if for_training else inference_length(source, settings["max_seq_len"])
    return call_checked(unsloth.FastLanguageModel.from_pretrained,
                        unsloth_load_kwargs(source, {**settings, "max_seq_len": length},
                                            getattr(torch, settings["dtype"])),
                        "FastLanguageModel.from_pretrained")


def load_tokenizer(base: str | Path, model: ModelSettings) -> Any:
    """The base model's tokenizer alone, for inference (the Q-agent's puzzles need no weights); remote code as
    load_model decides it (off unless the profile turns it on)."""
    from transformers import AutoTokenizer
    source, _ = resolve_base(base)
    trust = truthy(model.trust_remote_code)
    return prepare_tokenizer(AutoTokenizer.from_pretrained(str(source), trust_remote_code=trust), for_training=False)


def _load_transformers(source: Path | str, settings: dict, for_training: bool) -> tuple[Any, Any]:
    """Model and tokenizer through transformers' Auto classes (4-bit through bitsandbytes when settled on)."""
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
