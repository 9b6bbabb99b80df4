"""What the gpu-check trains and asks: the profile with configs/overlays/gpu-check.yaml over it, the model (the tiny
model built locally, or a local folder checked before anything loads it), and the questions: a curriculum of the
bundled data sized for --steps optimizer steps, and held-out questions to score on the device and on the CPU.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from pathlib import Path
from typing import Iterator

from helpers import config, io, rehearse
from helpers.layout import RunLayout
from helpers.records import validate

OVERLAY = config.CONFIG_DIR / "overlays" / "gpu-check.yaml"
QUESTIONS_FILE = "data/general_mcq.jsonl"  # the bundled questions (1,437): the curriculum and the held-out set
HELD_OUT = 24  # questions scored on the device and on the CPU (and generated for): 4 members x 24 in seconds
MIN_STEPS, MAX_STEPS = 2, 500


def model_problem(path: str | os.PathLike) -> str | None:
    """Why `path` is not a model folder the check can load, in one line naming it and what is missing; None if it is.
    The check runs offline, so a hub id (not a folder here) is refused too."""
    p = Path(os.path.expanduser(str(path)))
    if not p.exists():
        return f"{p}: no such folder (gpu-check runs offline: give a local model folder, not a hub id)"
    if not p.is_dir():
        return f"{p}: a file, not a model folder (give the folder that holds config.json)"
    if not (p / "config.json").is_file():
        return (f"{p}: no config.json, so not a model folder (a Hugging Face model folder holds config.json, the "
                "tokenizer's files and *.safetensors weights)")
    try:
        model_type = json.loads((p / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError) as exc:
        return f"{p / 'config.json'}: not a JSON object ({str(exc).splitlines()[0]})"
    if not model_type:
        return f"{p / 'config.json'}: no model_type (transformers cannot tell the architecture)"
    if not any(p.glob("*.safetensors")):
        bins = sorted(x.name for x in p.glob("*.bin"))
        return (f"{p}: no *.safetensors weights" + (f" (only {bins[0]}: the kit loads safetensors only, never a "
                                                     "pickle; save the model again with save_pretrained)" if bins else ""))
    if not any((p / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")):
        return f"{p}: no tokenizer (tokenizer.json, tokenizer_config.json or tokenizer.model)"
    return None


def profile_for_check(profile: str, base: str, run: str,
                      overrides: dict | None = None) -> tuple[config.Profile, list[dict]]:
    """(the profile with the overlay's swaps, model.base and the user's overrides (last, recorded apart) laid over it,
    each checked as any override is; the swaps as recorded: key, from, to, why)."""
    swaps = rehearse.swaps(profile, rehearse.load_overlay(OVERLAY), OVERLAY)
    before = config.load_profile(profile).model.base
    if base != before:
        swaps.append({"key": "model.base", "from": before, "to": base,
                      "why": "the model the check trains: the tiny model built locally, or --model (MODEL=)"})
    return config.load_profile(profile, run, {**{s["key"]: s["to"] for s in swaps}, **(overrides or {})}), swaps


@contextlib.contextmanager
def runs_at(out: Path) -> Iterator[str]:
    """The run name under which RunLayout.of(cfg) is `out` (the stages that take a profile, GRPO's, write there):
    out's name, with $KIT_RUNS_DIR pointed at its parent for the duration when it is not under runs/ already (the
    model cache stays where it was)."""
    out = Path(out).resolve()
    if out.parent == config.runs_root().resolve():
        yield out.name
        return
    saved = {k: os.environ.get(k) for k in ("KIT_RUNS_DIR", "KIT_CACHE_DIR")}
    os.environ["KIT_CACHE_DIR"] = str(config.cache_root().resolve())
    os.environ["KIT_RUNS_DIR"] = str(out.parent)
    try:
        yield out.name
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def bundled_questions(seed: int) -> list[dict]:
    """The bundled questions, validated, in a seeded shuffle (the check's own order, the same on every box)."""
    path = config.resolve_path(QUESTIONS_FILE)
    records = [validate(obj, path, f"line {n}") for n, obj in io.iter_jsonl(path)]
    random.Random(f"gpu-check:{seed}").shuffle(records)
    return records


def training_size(cfg: config.Profile, steps: int) -> int:
    """Fresh examples for about `steps` optimizer steps (batch x accumulation each; replay adds a few more)."""
    if not MIN_STEPS <= steps <= MAX_STEPS:
        raise ValueError(f"--steps: {steps} is not in {MIN_STEPS}..{MAX_STEPS}")
    return steps * cfg.train.batch_size * cfg.train.grad_accum


def write_questions(cfg: config.Profile, lay: RunLayout, steps: int) -> tuple[list[dict], dict]:
    """The curriculum (lay.curriculum: the kit's ordering into cfg.curriculum.chunks) and the held-out questions;
    returns (held-out questions, figures)."""
    from helpers.curriculum.order import order_and_chunk
    records, n_train = bundled_questions(cfg.seed), training_size(cfg, steps)
    if n_train + HELD_OUT > len(records):
        raise ValueError(f"--steps {steps}: {n_train} training questions (batch {cfg.train.batch_size} x accumulation "
                         f"{cfg.train.grad_accum} a step) and {HELD_OUT} held out, but {QUESTIONS_FILE} has "
                         f"{len(records)}: lower --steps")
    train = order_and_chunk(records[:n_train], chunks=cfg.curriculum.chunks, scorer=cfg.curriculum.scorer,
                            seed=cfg.seed)
    lay.made(lay.curriculum_dir)
    io.write_jsonl(lay.curriculum, train)
    held = records[n_train:n_train + HELD_OUT]
    return held, {"source": QUESTIONS_FILE, "training_questions": n_train, "held_out": len(held),
                  "chunks": cfg.curriculum.chunks, "curriculum": lay.rel(lay.curriculum)}
