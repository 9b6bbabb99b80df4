"""Profiles: one YAML file per profile under configs/, the single source of truth for parameters.

Every section is typed here (SCHEMA) and checked once, when a profile loads: a key no section knows, a value of
the wrong type or range, an override or notebook parameter that does either, stops with the file and the dotted
key named. configs/base.yaml holds every key's default (and must hold every key), so nothing downstream supplies
defaults or casts: an int where a float is expected becomes a float here, a float never becomes an int.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Callable

import yaml

from helpers.io import InputError

ROOT = Path(__file__).resolve().parent.parent
CONFIG_DIR = ROOT / "configs"


def project_root() -> Path:
    """The kit's checkout (helpers/ lives directly below it)."""
    return ROOT


def runs_root() -> Path:
    """Where runs go: $KIT_RUNS_DIR, else <project>/runs."""
    return Path(os.environ.get("KIT_RUNS_DIR") or ROOT / "runs")


def cache_root() -> Path:
    """Built artifacts shared by every run (the tiny model): $KIT_CACHE_DIR, else <runs>/_cache."""
    return Path(os.environ.get("KIT_CACHE_DIR") or runs_root() / "_cache")


# ---------------------------------------------------------------- the typed sections
Check = Callable[[Any], Any]  # returns the value (cast where allowed) or raises ValueError saying what was expected


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def integer(low: int | None = None, high: int | None = None) -> Check:
    """An int (not a bool), at least `low` and at most `high`."""
    def check(value: Any) -> int:
        if not _is_int(value):
            raise ValueError(f"expected a whole number, got {value!r}")
        if low is not None and value < low:
            raise ValueError(f"expected at least {low}, got {value}")
        if high is not None and value > high:
            raise ValueError(f"expected at most {high}, got {value}")
        return value
    return check


def number(low: float | None = None, high: float | None = None) -> Check:
    """An int or float (not a bool) inside [low, high], returned as a float."""
    def check(value: Any) -> float:
        if isinstance(value, str) and _looks_numeric(value):
            raise ValueError(f"expected a number, got the text {value!r}: YAML reads a number written without a dot "
                             f"(1e-4) as text; write it with one (1.0e-4)")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number, got {value!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError(f"expected a number in [{low if low is not None else '-inf'}, "
                             f"{high if high is not None else 'inf'}], got {value}")
        return float(value)
    return check


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def flag(value: Any) -> bool:
    """true or false."""
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def flag_or_auto(value: Any) -> bool | str:
    """true, false or auto (decided by the env check)."""
    if value == "auto" or isinstance(value, bool):
        return value
    raise ValueError(f"expected true, false or auto, got {value!r}")


def share_or_auto(value: Any) -> float | str:
    """A share in [0, 1], or auto (decided by a measurement, e.g. the question writer's in notebook 08)."""
    return value if value == "auto" else number(0, 1)(value)


def mode_or_auto(value: Any) -> str:
    """An A-agent answer mode (letter, reason), or auto (decided by notebook 08's measurement)."""
    return one_of("auto", *ANSWER_MODES)(value)


def text(value: Any) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected text, got {value!r}")
    return value


def one_of(*choices: str) -> Check:
    """One of the given strings."""
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return value
    return check


def puzzle_kind(value: Any) -> str:
    """A puzzle family helpers.puzzles generates (imported on use: numpy is not needed to read a profile)."""
    from helpers import puzzles
    return one_of(*puzzles.KINDS)(value)


def one_of_int(*choices: int) -> Check:
    """One of the given whole numbers."""
    def check(value: Any) -> int:
        if not _is_int(value) or value not in choices:
            raise ValueError(f"expected one of {', '.join(map(str, choices))}, got {value!r}")
        return value
    return check


def optional(inner: Check) -> Check:
    """null, or what `inner` accepts."""
    return lambda value: None if value is None else inner(value)


def list_of(inner: Check) -> Check:
    """A list whose every item `inner` accepts."""
    def check(value: Any) -> list:
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {value!r}")
        return [inner(v) for v in value]
    return check


# An adapter of the `models:` section; magnitude_lr_multiplier is DoRA's (absent means 1.0: the base learning rate).
ADAPTER_SCHEMA: dict[str, Check] = {"method": one_of("lora", "rslora", "dora"), "r": integer(1),
                                    "alpha": number(low=0), "dropout": number(0, 1),
                                    "magnitude_lr_multiplier": number(low=0)}
ADAPTER_REQUIRED = ("method", "r", "alpha", "dropout")
WRITER = "writer"  # the question writer's adapter name (runs/<run>/models/writer/): not an ensemble member
REASONER = "reasoner"  # the reasoning A-agent's adapter ("reason, then the letter"): not an ensemble member
RESERVED = {WRITER: "the question writer (the writer section)", REASONER: "the reasoning A-agent (the reasoner section)"}
ANSWER_MODES = ("letter", "reason")  # agents.answer_mode, or auto: chosen by notebook 08's measurement
MODELS = "adapters"  # marks the `models:` section: any adapter names, each an ADAPTER_SCHEMA mapping

# An agent's own adapter section (writer:, reasoner:; helpers.agents.stages.own_adapter): chats, adapter, training.
OWN_ADAPTER_SCHEMA: dict[str, Check] = {"examples": integer(0), "levels": list_of(one_of_int(1, 2, 3)),
                                        "adapter": ADAPTER_SCHEMA, "lr": number(low=0), "epochs": number(low=0.01),
                                        "max_seq_len": integer(1), "measure": integer(1)}

SCHEMA: dict[str, Any] = {
    "seed": integer(0),
    "run": text,
    "env": {"min_free_disk_gb": number(low=0), "hf_cache_warn_gb": number(low=0)},
    "model": {"base": text, "max_seq_len": integer(1), "dtype": text, "load_in_4bit": flag_or_auto,
              "attn_implementation": text, "trust_remote_code": flag, "use_unsloth": flag_or_auto,
              "gradient_checkpointing": flag},
    "data": {"sources": list_of(text), "puzzles": integer(0), "puzzle_kinds": list_of(puzzle_kind),
             "val_fraction": number(0, 0.9), "tolerant": flag, "balance_letters": flag},
    "curriculum": {"chunks": integer(1), "replay_capacity": integer(0), "scorer": text},
    "train": {"epochs_per_chunk": number(low=0.01), "batch_size": integer(1), "grad_accum": integer(1),
              "lr_start": number(low=0), "lr_end": number(low=0), "replay_start": number(0, 1),
              "replay_end": number(0, 1), "optim": text, "warmup_ratio": number(0, 1), "weight_decay": number(low=0),
              "logging_steps": integer(1), "max_grad_norm": number(low=0), "target_modules": list_of(text),
              "keep_checkpoints": integer(0), "answer_only_logits": flag, "cpu_threads": optional(integer(1))},
    "models": MODELS,
    "eval": {"batch_size": integer(1), "max_questions": integer(0)},
    # The Q-agent's question writer: its own adapter (trained in notebook 08, helpers.agents.stages.writer_train).
    "writer": OWN_ADAPTER_SCHEMA,
    # The reasoning A-agent's adapter, "a short deduction, then the letter" (helpers.agents.stages.reasoner_train).
    "reasoner": OWN_ADAPTER_SCHEMA,
    "agents": {"topics_file": text, "num_questions": integer(1), "answer_time_limit_s": number(low=0.1),
               "question_time_limit_s": number(low=0.1), "time_margin": number(0.05, 1),
               "model_question_share": share_or_auto, "writer_max_failures": integer(1),
               "writer_candidates": integer(1),
               "puzzle_kinds": list_of(puzzle_kind), "puzzle_levels": list_of(one_of_int(1, 2, 3)),
               "puzzle_candidates": integer(1), "answer_chunk_size": integer(1),
               "answer_mode": mode_or_auto, "reason_max_tokens": integer(1, 512)},
}


def _schema_at(keys: list[str]) -> Any:
    """The schema node at a dotted path (None when no section knows it)."""
    node: Any = SCHEMA
    for key in keys:
        if node == MODELS:  # `key` names an adapter: what follows are its settings
            node = ADAPTER_SCHEMA
            continue
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def check_section(values: Any, schema: Any, where: Any, prefix: str = "") -> Any:
    """`values` checked against `schema` (a dict of checks, MODELS or a check); returns it with values cast.

    Raises InputError(where, key=<dotted key>) for an unknown key, a wrong type or a value out of range.
    """
    if schema == MODELS:
        if not isinstance(values, dict):
            raise InputError(where, None, prefix, f"expected adapters by name, got {values!r}")
        return {name: check_section(spec, ADAPTER_SCHEMA, where, f"{prefix}.{name}") for name, spec in values.items()}
    if isinstance(schema, dict):
        if not isinstance(values, dict):
            raise InputError(where, None, prefix or None, f"expected a section of keys, got {values!r}")
        out = {}
        for key, value in values.items():
            dotted = f"{prefix}.{key}" if prefix else str(key)
            if key not in schema:
                raise InputError(where, None, dotted, f"unknown key (known here: {', '.join(sorted(schema))})")
            out[key] = check_section(value, schema[key], where, dotted)
        return out
    try:
        return schema(values)
    except ValueError as exc:
        raise InputError(where, None, prefix, str(exc)) from None


def check_complete(cfg: dict, where: Any) -> None:
    """Every key of SCHEMA is set (base.yaml's job) and every adapter names its method, r, alpha and dropout."""
    def walk(schema: dict, node: dict, prefix: str) -> None:
        for key, sub in schema.items():
            dotted = f"{prefix}{key}"
            if key not in node:
                raise InputError(where, None, dotted, "missing: configs/base.yaml must give every key its default")
            if isinstance(sub, dict) and sub is not ADAPTER_SCHEMA:
                walk(sub, node[key], f"{dotted}.")
    walk(SCHEMA, cfg, "")
    adapters = {f"models.{name}": spec for name, spec in cfg["models"].items()}
    for dotted, spec in {**adapters, **{f"{n}.adapter": cfg[n]["adapter"] for n in RESERVED}}.items():
        missing = [k for k in ADAPTER_REQUIRED if k not in spec]
        if missing:
            raise InputError(where, None, dotted, f"missing {', '.join(missing)}")
    for name, owner in RESERVED.items():
        if name in cfg["models"]:
            raise InputError(where, None, f"models.{name}", f"reserved for {owner}")


def available_profiles() -> list[str]:
    """Profile names (configs/*.yaml, minus the shared base)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml") if p.stem != "base")


def deep_merge(base: dict, over: dict) -> dict:
    """Recursively merge `over` into a copy of `base` (dicts merge, everything else replaces)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def set_dotted(cfg: dict, dotted: str, value: Any, where: str = "overrides") -> None:
    """Set cfg['a']['b'] from 'a.b', checked against the schema: an unknown key or a wrong type raises InputError
    naming `where` (e.g. "overrides", "notebook parameters") and the dotted key, never passes silently."""
    keys = dotted.split(".")
    node = cfg
    for i, key in enumerate(keys[:-1]):
        if key not in node or not isinstance(node[key], dict):
            sections = sorted(k for k, v in node.items() if isinstance(v, dict))
            raise InputError(where, None, dotted, f"no section '{'.'.join(keys[:i + 1])}' in the profile "
                                                  f"(known here: {', '.join(sections)})")
        node = node[key]
    if keys[-1] not in node:
        raise InputError(where, None, dotted, f"unknown key (known here: {', '.join(sorted(node))})")
    node[keys[-1]] = check_section(copy.deepcopy(value), _schema_at(keys), where, dotted)


def _read_profile_file(name: str, seen: tuple[str, ...] = ()) -> dict:
    path = CONFIG_DIR / f"{name}.yaml"
    if not path.exists():
        raise InputError(path, None, None,
                         f"no profile '{name}' (available: {', '.join(available_profiles())})")
    if name in seen:
        raise InputError(path, None, "extends", f"circular 'extends' chain {' -> '.join(seen + (name,))}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise InputError(path, None, None, f"not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(path, None, None, f"expected sections of keys, got {type(data).__name__}")
    parent = data.pop("extends", None)
    data = check_section(data, SCHEMA, path)
    if parent:
        data = deep_merge(_read_profile_file(parent, seen + (name,)), data)
    return data


def load_profile(profile: str = "smoke", run: str | None = None, overrides: dict | None = None) -> dict:
    """Resolve a profile: base.yaml <- extends chain <- configs/<profile>.yaml <- dotted overrides (all checked)."""
    cfg = _read_profile_file(profile)
    cfg["run"] = run or cfg.get("run") or profile
    check_complete(cfg, CONFIG_DIR / f"{profile}.yaml")
    for dotted, value in (overrides or {}).items():
        set_dotted(cfg, dotted, value)
    cfg["profile"] = profile
    return cfg


def apply_params(cfg: dict, section: str, **params: Any) -> dict:
    """Return cfg[section] with every non-None notebook parameter laid over it (and record them in cfg)."""
    for key, value in params.items():
        if value is not None:
            set_dotted(cfg, f"{section}.{key}", value, where="notebook parameters")
    return cfg[section]


def resolve_path(value: str | os.PathLike) -> Path:
    """A profile path: absolute as given, otherwise relative to the project root."""
    path = Path(os.path.expanduser(str(value)))
    return path if path.is_absolute() else ROOT / path
