"""The reasoner's answer mode (notebook 10's A-agent, reasoning then the letter, inside the answer budget) and two GRPO
steps of the reasoner's reinforcement stage (helpers.agents.stages.reasoner_rl), where trl and datasets are installed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from helpers import config
from helpers.gpu_check.steps import Skip, finite, missing

REASONER_QUESTIONS = 4  # held-out puzzles answered in one harness batch
GRPO_NEEDS = ("trl", "datasets")


def reasoner_answers(cfg: config.Profile, model: Any, tokenizer: Any, member: str) -> dict:
    """Held-out puzzles answered by `member` in answer mode "reason" (build.answer_agent), measured as notebook 09
    measures it; fails when an answer misses the filter, falls back, or is over the answer limit."""
    from helpers.agents import build
    from helpers.agents.stages import reasoner_measure
    agents = dataclasses.replace(cfg.agents, model_question_share=0.0)
    questions = reasoner_measure.held_out(REASONER_QUESTIONS, seed=cfg.seed, kinds=agents.puzzle_kinds,
                                          levels=cfg.reasoner.levels)
    agent = build.answer_agent(model, tokenizer, {"members": [member], "reasoner": member}, agents, mode="reason")
    report = reasoner_measure.measure(agent, questions)
    lat, fallbacks = report["latency"], sum(report["fallbacks"].values())
    problems = ([f"{report['filter_failed']} answers failed the answer filter"] if report["filter_failed"] else []) + \
        ([f"{fallbacks} answers fell back ({report['fallbacks']})"] if fallbacks else []) + \
        ([f"{lat['over_limit']} answers over the {lat['limit_s']} s limit"] if lat["over_limit"] else [])
    if problems:
        raise RuntimeError(f"reasoner ({member}): " + "; ".join(problems))
    return {"member": member, "questions": len(questions), "accuracy": report["accuracy"], "stops": report["stops"],
            "tokens_mean": report["tokens_mean"], "latency": lat, "examples": report["examples"],
            "summary": f"{len(questions)} puzzles reasoned then answered by {member}: every answer through the "
                       f"filter, p99 {lat['p99_s']} s of the {lat['limit_s']} s limit, {report['tokens_mean']} "
                       f"tokens of reasoning on average, stops {report['stops']}"}


def grpo_steps(cfg: config.Profile, recommendation: dict) -> dict:
    """Two GRPO steps (the overlay's rl sizes) through reasoner_rl.train; skipped with the reason when trl or datasets
    is missing or the installed trl cannot run GRPO here (reasoner_rl.grpo_blocker)."""
    gone = missing(*GRPO_NEEDS)
    if gone:
        raise Skip(f"{gone}: GRPO needs trl and datasets (README, \"Is this box ready?\": carry their wheels)")
    from helpers.agents.stages import reasoner_rl
    blocker = reasoner_rl.grpo_blocker(cfg, recommendation)
    if blocker:
        raise Skip(blocker)
    report = reasoner_rl.train(cfg, recommendation=recommendation, resume=False, quiet=True)
    losses = [r["loss"] for r in report["per_step"] if r.get("loss") is not None]
    if report["steps"] != cfg.rl.steps:
        raise RuntimeError(f"GRPO ran {report['steps']} steps, not {cfg.rl.steps}")
    if not finite(losses):
        raise FloatingPointError(f"GRPO loss not finite: {losses}")
    return {"steps": report["steps"], "trl": report["trl"], "backend": report["backend"],
            "seconds_per_step": report["seconds_per_step"], "rewards": report["rewards"],
            "kl_reference": report["kl_reference"], "losses": losses, "zero_reasons": report["zero_reasons"],
            "start": report["start"], "plot": report["plot"],
            "summary": f"{report['steps']} GRPO steps on trl {report['trl']} ({report['backend']}): "
                       f"{report['seconds_per_step']} s a step, loss {losses}, last rewards "
                       f"{(report['rewards'] or {}).get('last')}"}
