"""The question writer measured: the base model and the trained writer each answer the same harness requests (every
topic with a generator, every letter) through the Q-agent's own checks (helpers.agents.writer.ModelWriter, on the
question budget), and the share reaching each check is reported: JSON, the format filter, proven with the right key.
That measurement decides `agents.model_question_share: auto` (justified_share); the stage that runs it and writes
agents/writer.json is helpers.agents.stages.writer_train.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Sequence

from helpers import puzzles
from helpers.agents import timing
from helpers.agents import topics as topics_mod
from helpers.agents.writer import LETTERS4, STAGES, ModelWriter
from helpers.config import WRITER
from helpers.edition import QuestionRules
from helpers.models.members import BASE

# A writer earns the Q-agent's questions when it proves at least half of what it writes: below that, most of
# each question's budget goes on attempts that end as a generated puzzle anyway.
MIN_PROVEN_SHARE = 0.5
SHARES = ("json", "filter", "proven")  # reported as "<stage>_share": the share of requests that got that far


def requests(topics: dict, n: int, kinds: Sequence[str] = puzzles.KINDS) -> list[tuple[str, str, str]]:
    """n (topic, subtopic, letter) requests: the topics with a generator among `kinds` in turn, letters cycling A-D."""
    pairs = topics_mod.provable_pairs(topics, kinds)
    if not pairs:
        raise ValueError("no topic in the topics file has a puzzle generator: a writer cannot be proven on it")
    return [(*pairs[i % len(pairs)], LETTERS4[(i // len(pairs)) % 4]) for i in range(n)]


def measure(model: Any, tokenizer: Any, member: str, asks: list[tuple[str, str, str]], budget_s: float,
            seed: int, kinds: Sequence[str] = puzzles.KINDS, candidates: int = 1, gen: dict | None = None,
            rules: QuestionRules | None = None) -> dict:
    """One member's writing, each request on a fresh question budget: shares reaching each check, seconds per
    question, rejections by reason and up to two accepted questions. A question is on topic when it is proven to
    be a puzzle of one of the topic's families among `kinds` (the Q-agent's agents.puzzle_kinds); `candidates`
    replies are sampled per question as the Q-agent samples them (agents.writer_candidates); `rules`: the edition's
    question filter (None: the default edition's)."""
    import torch
    torch.manual_seed(seed)
    writer = ModelWriter(model, tokenizer, member=member, max_failures=len(asks) + 1,  # never switched off here
                         candidates=candidates, gen=gen, rules=rules)
    reached, seconds, accepted = Counter(), [], []
    for topic, subtopic, letter_ in asks:
        t0 = time.perf_counter()
        question, _ = writer.write(topic, subtopic, letter_, timing.Deadline(budget_s, start=t0),
                                   kinds=topics_mod.families(topic, subtopic, kinds))
        seconds.append(time.perf_counter() - t0)
        reached[writer.reached] += 1
        if question is not None and len(accepted) < 2:
            accepted.append(question)
    n = len(asks)
    at_least = {stage: sum(reached[s] for s in STAGES[STAGES.index(stage):]) for stage in STAGES}
    rejected = {k: v for k, v in writer.stats.items() if k not in ("attempts", "accepted")}
    return {"member": member, "requests": n, **{f"{s}_share": round(at_least[s] / n, 4) for s in SHARES},
            "proven": at_least["proven"], "candidates": writer.candidates, "replies": sum(writer.replies.values()),
            "proven_replies": writer.replies["proven"],
            "seconds_mean": round(sum(seconds) / n, 3),
            "seconds_p50": round(timing.percentile(seconds, 50), 3),
            "seconds_p90": round(timing.percentile(seconds, 90), 3), "rejected": rejected, "accepted": accepted,
            "explained": dict(writer.explained)}


def justified_share(report: dict | None) -> tuple[float, str]:
    """The model_question_share a measurement justifies, and why: 1 (the writer first on every question, a
    generated puzzle when it fails) for a trained writer that beats the base and proves at least half, else 0."""
    trained = (report or {}).get(WRITER)
    if not trained:
        return 0.0, "no trained writer was measured (writer.examples 0, or notebooks 08-09 not run for this run)"
    base = report.get(BASE) or {"proven_share": 0.0}
    got, floor = trained["proven_share"], MIN_PROVEN_SHARE
    if got <= base["proven_share"]:
        return 0.0, f"the trained writer proves {got:.0%}, no better than the base's {base['proven_share']:.0%}"
    if got < floor:
        return 0.0, f"the trained writer proves {got:.0%} of its questions (under {floor:.0%}): generated puzzles ask"
    return 1.0, f"the trained writer proves {got:.0%} of its questions (base {base['proven_share']:.0%})"


def describe(report: dict) -> str:
    """Two lines, base then writer: the shares reaching each check and seconds per question; then the share chosen."""
    rows = [f"[writer] {m:>6}: JSON {r['json_share']:.0%}, filter {r['filter_share']:.0%}, proven "
            f"{r['proven_share']:.0%} ({r['proven']}/{r['requests']}), {r['seconds_mean']:.2f} s a question "
            f"(p90 {r['seconds_p90']:.2f} s of {report['budget_s']:.1f} s)"
            for m, r in ((BASE, report[BASE]), (WRITER, report[WRITER]))]
    return "\n".join(rows + [f"[writer] {report['why']}"])
