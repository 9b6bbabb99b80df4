"""A match at home, scored as the organisers score it (tournament-rules.md).

Two innings: team 1's Q-agent asks `n` questions and team 2's A-agent answers; then the sides swap. The edition
judges (helpers.edition; the default edition's when none is given): its filters, limits and pass share.
N = the asker's format-correct questions (filter with the asker's tokenizer, generated inside the edition's
question limit); an asker under the edition's pass share of n (50% in October 2025) is disqualified. A-score = correct / N x 100, Q-score = answers the opponent
got wrong / N x 100 (a null, filtered or too-slow answer is wrong), total = Q + A out of 200. An answer
is correct only when `question["answer"][0] == answer["answer"]` exactly (a lower-case letter loses).

A Q-agent here is anything with `tokenizer`, `topic_schedule(n)` and `ask(topic, subtopic) -> (question,
meta with "seconds")`; an A-agent anything with `tokenizer` and `answer(list) -> (answers, metas)`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from helpers import edition as edition_mod
from helpers import filters
from helpers.agents import timing
from helpers.edition import Edition


@dataclass
class Team:
    """A side in a match: a name, a Q-agent and an A-agent."""

    name: str
    asker: Any
    answerer: Any


def _as_object(q: Any) -> Any:
    """The harness json-parses text outputs; objects pass through (no repair: a broken text stays broken)."""
    if isinstance(q, str):
        try:
            return json.loads(q)
        except ValueError:
            return q
    return q


def score_answer(answer: Any, seconds: float, tokenizer: Any, edition: Edition) -> tuple[dict | None, str | None]:
    """(the answer as scored, or None; why it was dropped, or None): the edition's answer filter, then its limit."""
    check = filters.check_answer(answer, tokenizer, edition.answer_rules)
    if not check.ok:
        return None, check.reason
    if seconds >= edition.answer_s:
        return None, "too_slow"
    return answer, None


def play_inning(asker: Team, answerer: Team, n: int, *, edition: Edition | None = None, batch_size: int = 5) -> dict:
    """One inning: asker's n questions -> filter -> answerer's answers -> filter -> exact-letter scoring."""
    edition = edition or edition_mod.default()
    q_limit_s, a_limit_s = edition.question_s, edition.answer_s
    rows, kept, q_seconds = [], [], []
    q_dropped: Counter = Counter()
    for topic, subtopic in asker.asker.topic_schedule(n):
        question, meta = asker.asker.ask(topic, subtopic)
        question = _as_object(question)
        q_seconds.append(meta["seconds"])
        result = filters.check_question(question, asker.asker.tokenizer, edition.question_rules)
        if not result.ok:
            q_dropped[result.reason] += 1
        elif meta["seconds"] >= q_limit_s:
            q_dropped["too_slow"] += 1
        else:
            kept.append((question, meta))
    answers, a_seconds = [], []
    for start in range(0, len(kept), max(1, batch_size)):
        batch = [q for q, _ in kept[start:start + max(1, batch_size)]]
        got, metas = answerer.answerer.answer(batch)
        answers += got
        a_seconds += [m["seconds"] for m in metas]
    a_dropped: Counter = Counter()
    correct = 0
    for (question, meta), answer, secs in zip(kept, answers, a_seconds):
        scored, dropped = score_answer(answer, secs, answerer.answerer.tokenizer, edition)
        if dropped:
            a_dropped[dropped] += 1
        right = scored is not None and filters.letter_of(question) == scored["answer"]
        correct += right
        rows.append({"topic": meta.get("subtopic"), "source": meta.get("source"), "key": filters.letter_of(question),
                     "answer": scored["answer"] if scored else None, "correct": bool(right),
                     "q_seconds": round(meta["seconds"], 5), "a_seconds": round(secs, 5)})
    n_ok = len(kept)
    return {"asker": asker.name, "answerer": answerer.name, "requested": n, "format_correct": n_ok,
            "disqualified": edition.disqualified(n_ok, n), "questions_dropped": dict(q_dropped),
            "answers_dropped": dict(a_dropped), "correct": correct,
            "a_score": round(100.0 * correct / n_ok, 2) if n_ok else 0.0,
            "q_score": round(100.0 * (n_ok - correct) / n_ok, 2) if n_ok else 0.0,
            "question_latency": timing.latency_summary(q_seconds, q_limit_s),
            "answer_latency": timing.latency_summary(a_seconds, a_limit_s), "rows": rows}


def play_match(team1: Team, team2: Team, n: int, *, edition: Edition | None = None, batch_size: int = 5) -> dict:
    """Both innings and the result, judged by the edition: per-team Q-score, A-score, total /200,
    disqualification, the winner."""
    edition = edition or edition_mod.default()
    kw = {"edition": edition, "batch_size": batch_size}
    innings = [play_inning(team1, team2, n, **kw), play_inning(team2, team1, n, **kw)]
    scores = {}
    for team, asked, answered in ((team1, innings[0], innings[1]), (team2, innings[1], innings[0])):
        scores[team.name] = {"q_score": asked["q_score"], "a_score": answered["a_score"],
                             "total": round(asked["q_score"] + answered["a_score"], 2),
                             "format_correct": asked["format_correct"], "requested": n,
                             "disqualified": asked["disqualified"],
                             "question_p99_s": asked["question_latency"]["p99_s"],
                             "answer_p99_s": answered["answer_latency"]["p99_s"]}
    s1, s2 = scores[team1.name], scores[team2.name]
    if s1["disqualified"] != s2["disqualified"]:
        winner, how = (team2.name if s1["disqualified"] else team1.name), "disqualification"
    elif s1["disqualified"]:
        winner, how = None, "both disqualified"
    elif s1["total"] != s2["total"]:
        winner, how = (team1.name if s1["total"] > s2["total"] else team2.name), "score"
    else:
        winner, how = None, "tie (the organisers break it on closed benchmark questions; not simulated)"
    return {"teams": [team1.name, team2.name], "questions_per_inning": n, "innings": innings, "scores": scores,
            "winner": winner, "decided_by": how, "limits": {"question_s": edition.question_s, "answer_s": edition.answer_s},
            "edition": edition.name, "pass_share": edition.pass_share}


def scoreboard(result: dict) -> list[dict]:
    """One row per team: Q-score, A-score, total /200, format-correct, disqualified, p99 latencies."""
    return [{"team": name, **{k: v for k, v in s.items()}, "winner": name == result["winner"]}
            for name, s in result["scores"].items()]


class SeedsStyleQuestions:
    """The original team's round-0 Q-agent output shape: {id, question, choices: {A..D}, correct_answer}, no topic/answer."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.tokenizer = inner.tokenizer

    def topic_schedule(self, n: int) -> list[tuple[str, str]]:
        """The wrapped agent's schedule."""
        return self.inner.topic_schedule(n)

    def ask(self, topic: str, subtopic: str) -> tuple[dict | None, dict]:
        """The wrapped agent's question re-shaped the original team's way (which the format filter rejects)."""
        question, meta = self.inner.ask(topic, subtopic)
        if question is None:
            return None, meta
        choices = {c[0]: c[3:] for c in question["choices"]}
        return {"id": f"q{meta.get('letter')}", "question": question["question"], "choices": choices,
                "correct_answer": question["answer"]}, meta
