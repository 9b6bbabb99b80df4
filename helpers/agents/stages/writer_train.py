"""The question writer's stage: training chats (helpers.agents.stages.writer_data) -> its own adapter (config.WRITER
under runs/<run>/models/), trained by the machinery of notebooks 03-05 (helpers.agents.stages.own_adapter) with the
profile's `writer:` settings, then measured against the base (helpers.agents.stages.writer_measure), whose decision
(`justified_share`, for agents.model_question_share: auto) goes into agents/writer.json for helpers.agents.build to
read. Notebook 08 trains it and notebook 09 measures it; so can a shell:

    python -m helpers.agents.stages writer --profile cpu [--run NAME] [--overrides JSON]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from helpers import config, io
from helpers.agents import build, timing
from helpers.agents.stages import writer_data, writer_measure
from helpers.agents.stages.own_adapter import train_own_adapter, write_chats
from helpers.config import WRITER
from helpers.io import stamp
from helpers.layout import RunLayout
from helpers.models.members import BASE


def build_data(cfg: config.Profile) -> Path:
    """runs/<run>/agents/writer_train.jsonl: writer.examples chats over the Q-agent's families x writer.levels x
    letters."""
    return write_chats(cfg, WRITER, RunLayout.of(cfg).writer_data, lambda n: writer_data.writer_records(
        n, seed=cfg.seed, topics=build.read_topics(cfg), kinds=tuple(cfg.agents.puzzle_kinds),
        levels=tuple(cfg.writer.levels)))


def train(cfg: config.Profile, *, recommendation: dict | None = None, progress: Any = None,
          resume: bool = True) -> dict:
    """Build the chats and train the writer's adapter (resumable like the others); returns its training summary."""
    return train_own_adapter(cfg, WRITER, build_data(cfg), recommendation=recommendation, progress=progress,
                             resume=resume)


def measure_members(cfg: config.Profile, model: Any, tokenizer: Any, members: Sequence[str],
                    gen: dict | None = None) -> dict:
    """Each of `members` (the base, the writer) on the same writer.measure requests, in the question budget: {member:
    its measurement, "budget_s": the budget}."""
    agents = cfg.agents
    budget = timing.budget(agents.question_time_limit_s, agents.time_margin)
    asks = writer_measure.requests(build.read_topics(cfg), cfg.writer.measure, agents.puzzle_kinds)
    return {**{m: writer_measure.measure(model, tokenizer, m, asks, budget, cfg.seed, agents.puzzle_kinds,
                                         agents.writer_candidates, gen, rules=agents.rules.question_rules)
               for m in members}, "budget_s": budget}


def measure_run(cfg: config.Profile, *, model: Any = None, tokenizer: Any = None, recommendation: dict | None = None,
                gen: dict | None = None) -> dict:
    """Base against trained writer on writer.measure requests; writes agents/writer.json and returns it.
    model/tokenizer: a team model that already holds the writer's adapter (else the base and writer are loaded);
    gen: sampling settings over the writer's defaults (e.g. a lower max_new_tokens)."""
    if model is None:
        model, tokenizer, info = build.load_team_model(cfg, [BASE, WRITER], recommendation)
        if WRITER not in info["members"]:
            raise io.InputError(RunLayout.of(cfg).adapter_dir(WRITER), None, None,
                                f"missing: the question writer is not trained ({info['skipped'].get(WRITER)})")
    report = measure_members(cfg, model, tokenizer, (BASE, WRITER), gen)
    share, why = writer_measure.justified_share(report)
    report.update(justified_share=share, why=f"model_question_share {share:g}: {why}")
    lay = RunLayout.of(cfg)
    lay.made(lay.agents_dir)
    io.write_json(lay.writer_report, {**report, **stamp({"writer": config.as_dict(cfg.writer)})})
    return report
