"""A dress rehearsal of a GPU profile on CPU: the profile's notebooks 00..10 with only the base model, what the tiny
model needs, what an offline CPU box cannot do and the sizes swapped, every other setting as the profile has it.

    make rehearse PROFILE=mi300x                       # = python -m helpers.pipeline --profile mi300x --rehearse

The swaps are defined once, in configs/overlays/rehearsal.yaml (each with its reason). They reach every notebook as
dotted overrides (so every JSON a stage writes carries them in its params) and are recorded, key by key with the
profile's value, the rehearsal's and why, in runs/rehearse-<profile>/rehearsal.json, in pipeline.json and at the top
of the run report: a rehearsal proves the profile's settings run end to end, never what they do on a GPU.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from helpers import config
from helpers.io import InputError, read_json
from helpers.layout import RunLayout

OVERLAY = config.CONFIG_DIR / "overlays" / "rehearsal.yaml"
GPU_PROFILES = ("mi300x", "tournament", "aaipl", "laptop")  # the profiles the rehearsal tier runs (tests/test_rehearsal.py)
RUN_PREFIX = "rehearse-"
NOTE = ("A dress rehearsal on CPU with the tiny model's weights standing in for the profile's model, not a GPU result: "
        "the profile's settings ran end to end; accuracy, speed, memory and the GPU-only paths (Unsloth, mixed "
        "precision, 4-bit) are not measured here.")
# Which of a rehearsal's figures are the profile's real model's and which the stand-in's (rehearsal.json "figures").
FIGURES = {
    "profile_model": [
        "env.json fit: the training-memory estimate and the will-it-fit table of model.base against this machine",
        "env.json rl_memory: one GRPO step's memory for model.base, at the profile's own rl settings",
        "env.json reasoning_tokens: the reasoning budget from agents.decode_ms_per_token (the target machine's)",
        "env.json time_plan: examples, steps and hours an adapter for the profile as meant (its own sources and "
        "sizes, before the overlay's) at train.step_seconds; notebook 01 prints it too (notebook 03 plans the "
        "rehearsal's own small curriculum)",
    ],
    "stand_in": [
        "every loss, accuracy, letter, token count, tokens/s, step time, peak memory, latency and match score",
        "what was dropped as too long: counted with the stand-in's tokenizer",
    ],
}


def load_overlay(path: Path | None = None) -> dict[str, dict]:
    """The overlay's entries by dotted key, each {"to": value} or {"drop_prefix": text}, with "why"; a malformed entry
    raises InputError naming the file and the key (the values themselves are checked against a profile by swaps())."""
    path = Path(path or OVERLAY)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(path, None, None, f"unreadable ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(path, None, None, f"expected dotted keys, got {type(data).__name__}")
    for key, entry in data.items():
        if not isinstance(entry, dict) or set(entry) not in ({"to", "why"}, {"drop_prefix", "why"}):
            raise InputError(path, None, str(key), "expected {to: value, why: text} or {drop_prefix: text, why: text}")
        if not isinstance(entry["why"], str) or not entry["why"].strip():
            raise InputError(path, None, str(key), "why: expected the reason for the swap")
        if "drop_prefix" in entry and not (isinstance(entry["drop_prefix"], str) and entry["drop_prefix"]):
            raise InputError(path, None, str(key), "drop_prefix: expected text")
    return data


def get_dotted(values: dict, dotted: str) -> Any:
    """values['a']['b'] for 'a.b' (a profile as plain data, Profile.as_dict())."""
    node: Any = values
    for key in dotted.split("."):
        node = node[key]
    return node


def swaps(profile: str, overlay: dict[str, dict] | None = None, path: Path | None = None) -> list[dict]:
    """The overlay applied to `profile`: [{"key", "from", "to", "why"}] in the overlay's order, one per key whose value
    it changes (a key the profile already sets to the rehearsal's value is no swap). Each new value is checked and cast
    by the profile schema, as an override is."""
    path = Path(path or OVERLAY)
    overlay = load_overlay(path) if overlay is None else overlay
    cfg = config.load_profile(profile).as_dict()  # plain data: each swap is tried on a copy with set_dotted
    out = []
    for key, entry in overlay.items():
        try:
            before = get_dotted(cfg, key)
        except (KeyError, TypeError):
            raise InputError(path, None, key, f"not a key of profile {profile!r}") from None
        if "drop_prefix" in entry:
            if not isinstance(before, list):
                raise InputError(path, None, key, f"drop_prefix needs a list; profile {profile!r} has {before!r}")
            after: Any = [x for x in before if not str(x).startswith(entry["drop_prefix"])]
        else:
            after = entry["to"]
        trial = copy.deepcopy(cfg)
        config.set_dotted(trial, key, after, where=str(path))  # type and range as any override; casts 1 -> 1.0
        after = get_dotted(trial, key)
        if after != before:
            out.append({"key": key, "from": copy.deepcopy(before), "to": after, "why": " ".join(entry["why"].split())})
    return out


# Settings only a GPU can honour: a profile (or override) asking for one cannot rehearse on CPU, and says why.
GPU_ONLY = (
    ("model.use_unsloth", lambda v: v is True, "Unsloth is the kit's GPU path (use auto: on a CPU it falls back to "
                                               "transformers + PEFT, on the GPU it is used)"),
    ("model.load_in_4bit", lambda v: v is True, "4-bit weights need bitsandbytes on a GPU (use auto)"),
    ("train.optim", lambda v: "8bit" in str(v), "8-bit AdamW needs bitsandbytes on a GPU (use auto or adamw_torch)"),
)
# The rehearsal's kernels see no GPU even on a GPU box, so what it records ("on CPU") is what ran.
HIDDEN_DEVICES = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}


def gpu_only_settings(cfg: config.Profile) -> list[str]:
    """'model.use_unsloth is True: why' for each setting of the resolved profile that cannot run on a CPU."""
    values = cfg.as_dict()
    return [f"{key} is {get_dotted(values, key)!r}: {why}" for key, needs_gpu, why in GPU_ONLY
            if needs_gpu(get_dotted(values, key))]


def hide_accelerators(environ: dict) -> dict:
    """Hide every GPU from the kernels the pipeline starts (they inherit this environment); returns what it set."""
    environ.update(HIDDEN_DEVICES)
    return dict(HIDDEN_DEVICES)


def run_name(profile: str) -> str:
    """The rehearsal's run folder under runs/: rehearse-<profile>."""
    return f"{RUN_PREFIX}{profile}"


def plan(profile: str, run: str | None = None, overrides: dict | None = None) -> tuple[str, dict, dict]:
    """(run name, the overrides every notebook gets, the rehearsal record). `overrides` (the user's own) are laid over
    the swaps and recorded apart from them."""
    done = swaps(profile)
    merged = {**{s["key"]: s["to"] for s in done}, **(overrides or {})}
    blocked = gpu_only_settings(config.load_profile(profile, None, merged))
    if blocked:
        raise ValueError(f"profile {profile!r} cannot rehearse on CPU: {'; '.join(blocked)}")
    run = run or run_name(profile)
    model = config.load_profile(profile, None, merged).model
    record = {"rehearsal": True, "profile": profile, "run": run, "note": NOTE,
              "overlay": OVERLAY.relative_to(config.project_root()).as_posix(), "swaps": done,
              "overrides": dict(overrides or {}), "hidden_devices": dict(HIDDEN_DEVICES),
              "stand_in": {"weights": model.weights, "for": model.base}, "figures": FIGURES}
    return run, merged, record


def as_meant(cfg: config.Profile) -> config.Profile:
    """The profile a rehearsal stands in for (its own settings and the user's overrides, none of the overlay's
    swaps), read from the run's rehearsal.json; a real run's profile as it is. The time plan is made from it."""
    record_path = RunLayout.of(cfg).rehearsal_record
    if not record_path.is_file():
        return cfg
    record = read_json(record_path)
    return config.load_profile(record["profile"], cfg.run, record.get("overrides") or {})


def describe(record: dict) -> str:
    """One line per swap, for the console."""
    lines = [f"rehearsal of {record['profile']} on CPU ({record['overlay']}): {len(record['swaps'])} key(s) swapped, "
             "everything else as the profile has it"]
    if record.get("stand_in"):
        lines.append(f"  weights: {record['stand_in']['weights']} stands in for {record['stand_in']['for']} (every "
                     "estimate, budget and time plan is the latter's; losses, accuracies and timings the former's)")
    lines += [f"  {s['key']}: {s['from']!r} -> {s['to']!r}" for s in record["swaps"]]
    if record.get("overrides"):
        lines.append(f"  and your overrides on top: {record['overrides']}")
    return "\n".join(lines)
