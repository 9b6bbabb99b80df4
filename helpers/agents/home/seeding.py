"""The elimination round at home: the A-agent on a seeding set written for the kit, by topic, beside its score on the
kit's own questions.

The February 2026 edition opens with an elimination round: every team's A-agent answers the organisers' own seeding
questions, exam-style and written by hand, not by any team's generator. data/seeding.jsonl stands in for them: 30
questions a topic, for each of the five topics the editions have asked (seating, blood relations, truth-tellers and
liars, syllogisms, alphanumeric series), written for the kit in the exam's phrasing rather than the generators', each
key checked by hand and, at authoring time, by listing every arrangement, assignment or rule the text allows. It never trains or validates anything (helpers.data.readers refuses
it, or a folder holding it, as a source). The gap between the two scores measures how much the A-agent learned the
kit's templates rather than the reading: a large one says it will lose the elimination round it seems to win at home.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from helpers import filters
from helpers import edition as edition_mod
from helpers.agents.home.match import score_answer
from helpers.data.readers import HELD_OUT
from helpers.edition import Edition
from helpers.io import InputError, iter_jsonl
from helpers.records import validate


def read_seeding(path: str | Path | None = None, topics: dict[str, list[str]] | None = None) -> list[dict]:
    """The seeding questions as records (a bad one named by file, line and field); with `topics` (an edition's), only
    those on its topics: an edition's round asks its own."""
    path = Path(path) if path else HELD_OUT
    wanted = None if topics is None else {(t, s) for t, subs in topics.items() for s in subs}
    out = []
    for line, row in iter_jsonl(path):
        rec = validate(row, path, line)
        if len(rec["choices"]) != 4 or not isinstance(rec.get("subtopic"), str) or not rec["subtopic"]:
            raise InputError(path, line, "choices" if len(rec["choices"]) != 4 else "subtopic",
                             "a seeding question has 4 choices and names its subtopic")
        if wanted is None or (rec["topic"], rec["subtopic"]) in wanted:
            out.append(rec)
    return out


def play(answerer: Any, records: list[dict], *, edition: Edition | None = None, batch_size: int = 5) -> dict:
    """The A-agent on the seeding questions as the harness hands them over, scored as the match scores an answer
    (the edition's answer filter and time limit, the exact letter), by topic."""
    edition = edition or edition_mod.default()
    questions = [filters.to_official_question(r, r["subtopic"]) for r in records]
    rows = []
    for start in range(0, len(questions), max(1, batch_size)):
        batch = questions[start:start + max(1, batch_size)]
        answers, metas = answerer.answer(batch)
        for question, answer, meta, rec in zip(batch, answers, metas, records[start:]):
            kept, _ = score_answer(answer, meta["seconds"], answerer.tokenizer, edition)
            scored = kept["answer"] if kept else None
            rows.append({"id": rec["id"], "topic": rec["subtopic"], "key": filters.letter_of(question),
                         "answer": scored, "correct": scored == filters.letter_of(question),
                         "seconds": round(meta["seconds"], 5)})
    return {"questions": len(rows), "correct": sum(r["correct"] for r in rows), "by_topic": by_topic(rows),
            "edition": edition.name, "rows": rows}


def by_topic(rows: list[dict]) -> dict:
    """{topic: {n, correct, accuracy}} over scored rows (each with "topic" and "correct")."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        groups[r["topic"]].append(bool(r["correct"]))
    return {t: {"n": len(v), "correct": sum(v), "accuracy": round(sum(v) / len(v), 4)} for t, v in groups.items()}


def against_own(seeding: dict, match: dict, team: str) -> list[dict]:
    """One row a topic: the team's A-score on the seeding set and on the kit's own questions (the match's innings it
    answered), and the gap between them (own - seeding, in points)."""
    own = by_topic([r for inning in match["innings"] if inning["answerer"] == team for r in inning["rows"]])
    out = []
    for topic, seen in seeding["by_topic"].items():
        mine = own.get(topic)
        row = {"topic": topic, "seeding_n": seen["n"], "seeding_accuracy": seen["accuracy"],
               "own_n": mine["n"] if mine else 0, "own_accuracy": mine["accuracy"] if mine else None}
        row["gap_points"] = (round(100 * (row["own_accuracy"] - seen["accuracy"]), 1)
                             if row["own_accuracy"] is not None else None)
        out.append(row)
    return out
