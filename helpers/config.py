"""Profiles: one YAML file per profile under configs/, the single source of truth for parameters."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

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


def set_dotted(cfg: dict, dotted: str, value: Any) -> None:
    """Set cfg['a']['b'] from 'a.b'; an unknown key is an error, so typos never pass silently."""
    keys = dotted.split(".")
    node = cfg
    for i, key in enumerate(keys[:-1]):
        if not isinstance(node.get(key), dict):
            raise KeyError(f"override '{dotted}': no section '{'.'.join(keys[:i + 1])}' in the profile")
        node = node[key]
    if keys[-1] not in node:
        raise KeyError(f"override '{dotted}': unknown key (known here: {', '.join(sorted(node))})")
    node[keys[-1]] = copy.deepcopy(value)


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
    parent = data.pop("extends", None)
    if parent:
        data = deep_merge(_read_profile_file(parent, seen + (name,)), data)
    return data


def load_profile(profile: str = "smoke", run: str | None = None, overrides: dict | None = None) -> dict:
    """Resolve a profile: base.yaml <- extends chain <- configs/<profile>.yaml <- dotted overrides."""
    cfg = _read_profile_file(profile)
    for dotted, value in (overrides or {}).items():
        set_dotted(cfg, dotted, value)
    cfg["profile"] = profile
    cfg["run"] = run or cfg.get("run") or profile
    return cfg


def apply_params(cfg: dict, section: str, **params: Any) -> dict:
    """Return cfg[section] with every non-None notebook parameter laid over it (and record them in cfg)."""
    for key, value in params.items():
        if value is not None:
            set_dotted(cfg, f"{section}.{key}", value)
    return cfg[section]


def resolve_path(value: str | os.PathLike) -> Path:
    """A profile path: absolute as given, otherwise relative to the project root."""
    path = Path(os.path.expanduser(str(value)))
    return path if path.is_absolute() else ROOT / path
