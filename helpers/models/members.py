"""Members: the base model with its trained adapters attached for inference, and the CPU-thread rule.

Validation (06), the agents (08-10), the export and the harness all load a run's adapters through here, and
training (03-05) sets its torch threads with the same rule, so both live in this one place.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

from helpers.config import AGENT_ADAPTERS, ModelSettings, Profile, TrainSettings
from helpers.io import InputError
from helpers.layout import RunLayout
from helpers.models import adapters
from helpers.models.load import load_model

BASE = "base"  # the member name that means "adapters switched off"


# ---------------------------------------------------------------- the CPU-thread rule
def cpu_threads(train: TrainSettings | None, kind: str | None) -> int | None:
    """Torch threads for a CPU run: train.cpu_threads when set, else 1 for the tiny model, else torch's default.

    The tiny model's 128-wide matmuls are too small to split across threads: on 2 cores shared with other work,
    2 torch threads ran 4 s/step against 0.08 s with 1 in training, and scoring ran up to 50x slower.
    """
    threads = None if train is None else train.cpu_threads
    return threads if threads else (1 if kind == "tiny" else None)


def apply_cpu_threads(threads: int | None) -> int:
    """Set torch's threads when `threads` is given and no accelerator is in use; returns the count in force."""
    import torch
    if threads and not torch.cuda.is_available():
        torch.set_num_threads(int(threads))
    return torch.get_num_threads()


# ---------------------------------------------------------------- a run's members
def missing_adapter_files(cfg: Profile, name: str) -> list[Path]:
    """The files member `name`'s trained adapter needs that are not there (empty when it can be loaded)."""
    return adapters.missing_adapter_files(RunLayout.of(cfg).adapter_dir(name))


def _trained_members(cfg: Profile, names: list[str], skip_missing: bool) -> tuple[list[str], dict[str, str]]:
    """The names that can load, and {name: reason} for the missing ones (or InputError without skip_missing)."""
    skipped: dict[str, str] = {}
    wanted = []
    for name in dict.fromkeys(names):
        if name != BASE and name not in AGENT_ADAPTERS and name not in cfg.models:
            raise InputError(None, None, "models", f"{name!r} is not an adapter of the profile "
                                                   f"(known: {', '.join(cfg.models)})")
        missing = [] if name == BASE else missing_adapter_files(cfg, name)
        if missing and not skip_missing:
            where = "notebook 08" if name in AGENT_ADAPTERS else "notebooks 03-05"
            raise InputError(missing[0], None, None, f"missing: adapter {name!r} is not trained (run {where})")
        if missing:
            skipped[name] = f"missing {missing[0]}"
        else:
            wanted.append(name)
    return wanted, skipped


def load_members(cfg: Profile, names: list[str], recommendation: dict | None = None, *,
                 skip_missing: bool = False) -> tuple[Any, Any, dict]:
    """The base loaded once, each named adapter attached under its own name ("base" = adapters off).

    A missing adapter raises InputError naming the file; with skip_missing=True it is left out and listed in
    info["skipped"] ({name: reason}) instead, so nothing disappears silently. info["members"] lists what loaded.
    """
    wanted, skipped = _trained_members(cfg, names, skip_missing)
    lay = RunLayout.of(cfg)
    adapter_dirs = {name: lay.adapter_dir(name) for name in wanted if name != BASE}
    model, tokenizer, info = load_with_adapters(cfg.model.weights, cfg.model, adapter_dirs, recommendation,
                                                train=cfg.train)
    info.update(members=wanted, skipped=skipped)
    return model, tokenizer, info


def load_with_adapters(base: str, model: ModelSettings, adapter_dirs: dict[str, str | Path],
                       recommendation: dict | None = None, *, train: TrainSettings | None = None,
                       threads: int | None = None) -> tuple[Any, Any, dict]:
    """The base loaded once for inference with each adapter folder attached under its name (safetensors only).

    Torch threads: `threads` when given (an export's config), else the thread rule on `train`.
    """
    net, tokenizer, info = load_model(base, model=model, recommendation=recommendation, for_training=False)
    for name, path in adapter_dirs.items():
        net = adapters.attach_adapter(net, path, name)  # a missing file names itself
    net.eval()
    chosen = threads if threads is not None else cpu_threads(train, info.get("kind"))
    info.update(members=[BASE] + list(adapter_dirs), torch_threads=apply_cpu_threads(chosen))
    return net, tokenizer, info


@contextlib.contextmanager
def use_member(model: Any, name: str) -> Iterator[Any]:
    """Within the block, `model` answers as member `name` ("base" = every adapter switched off)."""
    has_adapters = hasattr(model, "peft_config")
    if name == BASE:
        with (model.disable_adapter() if has_adapters else contextlib.nullcontext()):
            yield model
        return
    if not has_adapters or name not in model.peft_config:
        raise KeyError(f"member {name!r} is not loaded (loaded: {sorted(getattr(model, 'peft_config', {}))})")
    model.set_adapter(name)
    yield model
