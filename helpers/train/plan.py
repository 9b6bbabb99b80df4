"""The time plan: examples, optimizer steps and hours an adapter on the profile's target machine, before training.

    sources' rows (helpers.data.sizes) + data.puzzles -> examples -> train split -> curriculum.chunks chunks, each
    mixed with replay as the trainer mixes it -> optimizer steps (batch x accumulation, epochs_per_chunk) ->
    x train.step_seconds (the profile's machine) x the method's cost -> hours an adapter

Notebook 00 and 01 print it from the sources' sizes, notebook 03 from the curriculum notebook 02 wrote. The rows are
counted before the build drops or converts anything, so the examples are an upper bound within a few percent; a
source whose size is unknown is named with why, and the plan counts without it ("at least"). Steps per epoch round
up, as transformers 5.x's Trainer does; 4.51 (the challenge container's) rounds down, one step fewer per chunk where
train.grad_accum > 1 (mi300x: 3,090 trained against 3,099 planned).
"""

from __future__ import annotations

import math
from typing import Iterable

from helpers import config
from helpers.config import Profile, TrainSettings
from helpers.curriculum.order import chunk_sizes
from helpers.data.sizes import SourceSize, source_size
from helpers.train.replay import replay_count
from helpers.curriculum.schedule import replay_schedule

# A step's cost per method against LoRA's: DoRA recomputes each adapted weight's norm in every forward pass
# (the cpu profile measured notebook 05 at 11.1 min against notebook 03's 9.1, 1.22x); rsLoRA is LoRA's cost.
METHOD_COST = {"lora": 1.0, "rslora": 1.0, "dora": 1.2}


def steps_per_epoch(n_examples: int, train: TrainSettings, world: int = 1) -> int:
    """Optimizer steps one pass over n_examples takes (batches over all ranks, then gradient accumulation)."""
    batches = math.ceil(n_examples / (train.batch_size * world))
    return max(1, math.ceil(batches / train.grad_accum))


def chunk_steps(cfg: Profile, fresh_per_chunk: Iterable[int]) -> list[dict]:
    """Per chunk: fresh examples, replayed ones (the schedule's share, capped by what the reservoir holds), the
    mixed total and its optimizer steps at train.epochs_per_chunk."""
    fresh = list(fresh_per_chunk)
    if not fresh:
        return []
    ratios = replay_schedule(len(fresh), cfg.train.replay_start, cfg.train.replay_end)
    out, seen = [], 0
    for n, ratio in zip(fresh, ratios):
        replayed = min(replay_count(n, ratio), min(cfg.curriculum.replay_capacity, seen))
        examples = n + replayed
        out.append({"fresh": n, "replayed": replayed, "examples": examples,
                    "steps": math.ceil(cfg.train.epochs_per_chunk * steps_per_epoch(examples, cfg.train))})
        seen += n
    return out


def hours(cfg: Profile, steps: int) -> dict[str, float]:
    """Hours an adapter of `models:` takes for `steps` optimizer steps at train.step_seconds."""
    return {name: round(steps * cfg.train.step_seconds * METHOD_COST[spec.method] / 3600, 3)
            for name, spec in cfg.models.items()}


def from_chunks(cfg: Profile, fresh_per_chunk: Iterable[int]) -> dict:
    """The plan for a curriculum already cut into chunks (notebook 03: the counts notebook 02 wrote)."""
    chunks = chunk_steps(cfg, fresh_per_chunk)
    steps = sum(c["steps"] for c in chunks)
    return {"train": sum(c["fresh"] for c in chunks), "chunks": chunks, "steps": steps,
            "step_seconds": cfg.train.step_seconds, "hours": hours(cfg, steps)}


def source_sizes(cfg: Profile) -> list[SourceSize]:
    """Each of data.sources' rows before the build (profile paths are relative to the project root)."""
    specs = [s if str(s).startswith("hub:") else str(config.resolve_path(s)) for s in cfg.data.sources]
    return [SourceSize(shown, size.rows, size.how)
            for shown, size in zip(cfg.data.sources, map(source_size, specs))]


def from_sources(cfg: Profile, sizes: list[SourceSize] | None = None) -> dict:
    """The plan from the sources' sizes and data.puzzles: the build's split, the curriculum's chunks, the steps."""
    sizes = source_sizes(cfg) if sizes is None else sizes
    rows = sum(s.rows or 0 for s in sizes)
    examples = rows + cfg.data.puzzles
    train = examples - round(examples * cfg.data.val_fraction)
    plan = from_chunks(cfg, chunk_sizes(train, cfg.curriculum.chunks) if train >= cfg.curriculum.chunks else [])
    return {"sources": [{"source": s.source, "rows": s.rows, "how": s.how} for s in sizes],
            "puzzles": cfg.data.puzzles, "examples": examples, "val": examples - train, "chunks_wanted":
            cfg.curriculum.chunks, "unknown": [s.source for s in sizes if s.rows is None], **plan}


def _h(value: float) -> str:
    """Hours as a person reads them: minutes under an hour (tenths under ten minutes)."""
    minutes = value * 60
    return f"{value:.1f} h" if value >= 1 else f"{minutes:.0f} min" if minutes >= 10 else f"{minutes:.1f} min"


def describe(plan: dict) -> list[str]:
    """The plan in a few lines: what could not be counted and why, then examples, steps and time per adapter."""
    lines = [f"no size for {s['source']}: {s['how']}" for s in plan.get("sources", []) if s["rows"] is None]
    least = "at least " if plan.get("unknown") else ""
    if "examples" in plan:
        lines.append(f"examples: {least}{plan['examples']:,} ({plan['puzzles']:,} puzzles), {plan['train']:,} to "
                     f"train, {plan['val']:,} held out (rows before the build's drops and dedupe)")
    if not plan["chunks"]:
        return lines + [f"no steps: {plan.get('train', 0):,} training examples cannot fill curriculum.chunks="
                        f"{plan.get('chunks_wanted', '?')} (notebook 02 stops there too)"]
    replayed = sum(c["replayed"] for c in plan["chunks"])
    lines.append(f"optimizer steps an adapter: {least}{plan['steps']:,} over {len(plan['chunks'])} chunk(s) "
                 f"({replayed:,} replayed examples) at {plan['step_seconds']:g} s a step (train.step_seconds)")
    lines.append("time an adapter: " + ", ".join(f"{name} {least}{_h(h)}" for name, h in plan["hours"].items()))
    return lines
