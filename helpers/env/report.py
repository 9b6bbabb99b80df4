"""env.json: the environment check's report, written by notebook 00 and read back by later stages."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from helpers.env.facts import collect_facts
from helpers.env.recommend import recommend
from helpers.env.rules import summarize
from helpers.io import read_json, stamp, write_json

if TYPE_CHECKING:  # importing helpers.config needs yaml
    from helpers.config import Profile


def read_recommendation(cfg: Profile) -> dict:
    """The run's recommended settings: env.json's from notebook 00 when present, else a fresh check of this machine."""
    from helpers.layout import RunLayout
    saved = RunLayout.of(cfg).env
    if saved.exists():
        rec = read_json(saved).get("recommendation")
        if isinstance(rec, dict):
            return rec
    return recommend(collect_facts(hf_budget_s=2.0), cfg.model)


def write_env_report(path: str | os.PathLike, facts: dict, checks: list[dict], recommendation: dict,
                     params: dict | None, extra: dict | None = None) -> Path:
    """Write env.json (a directory gets env.json inside it) with the provenance stamp."""
    path = Path(path)
    if path.is_dir():
        from helpers.layout import RunLayout
        path = RunLayout(path).env
    return write_json(path, {**stamp(params), "summary": summarize(checks), "facts": facts,
                             "checks": checks, "recommendation": recommendation, **(extra or {})})
