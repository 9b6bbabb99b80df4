"""The teams a match at home puts up against the kit's: the untrained base model, and the original team's round-0 format."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from helpers.agents import build
from helpers.agents.home.match import SeedsStyleQuestions, Team
from helpers.config import AgentsSettings

BASE_SELECTION = {"members": ["base"], "weights": None, "method": "soft"}  # the same model, adapters off


def base_team(model: Any, tokenizer: Any, topics: dict, agents: AgentsSettings, *, seed: int) -> Team:
    """The untrained base model's team: generated puzzles (another seed) and letter scoring with the adapters off."""
    asker = build.question_agent(tokenizer, topics, replace(agents, model_question_share=0.0), seed=seed, name="base")
    return Team("base", asker, build.answer_agent(model, tokenizer, BASE_SELECTION, agents, name="base", mode="letter"))


def seeds_team(model: Any, tokenizer: Any, topics: dict, agents: AgentsSettings, sel: dict, *, seed: int) -> Team:
    """The original team's round-0 team: the same verified questions written their way (which the format filter rejects),
    answered by the kit's members."""
    asker = build.question_agent(tokenizer, topics, replace(agents, model_question_share=0.0), seed=seed, name="seeds")
    return Team("seeds-format", SeedsStyleQuestions(asker),
                build.answer_agent(model, tokenizer, sel, agents, name="seeds", mode="letter"))

