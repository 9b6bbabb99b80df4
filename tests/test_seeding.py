"""The elimination round at home (helpers/agents/home/seeding.py, data/seeding.jsonl): the seeding set is what it says,
is held out of every dataset, and is scored by topic beside the A-agent's own questions."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from helpers import config, edition, puzzles
from helpers.agents.home import seeding
from helpers.data import readers
from helpers.io import InputError

ROOT = Path(__file__).resolve().parent.parent


class Words:
    def encode(self, text, add_special_tokens=True):
        return text.split()


def test_the_seeding_set_holds_30_questions_a_topic_of_every_edition_with_balanced_keys():
    recs = seeding.read_seeding()
    asked = {(t, s) for name in edition.names() for t, subs in edition.load(name).topics.items() for s in subs}
    assert Counter((r["topic"], r["subtopic"]) for r in recs) == {pair: 30 for pair in asked}
    assert len({r["id"] for r in recs}) == len(recs) == 150 and all(r["source"] == "kit/seeding" for r in recs)
    for subtopic in {r["subtopic"] for r in recs}:
        keys = Counter(r["answer"] for r in recs if r["subtopic"] == subtopic)
        assert set(keys) == {0, 1, 2, 3} and max(keys.values()) - min(keys.values()) <= 1  # no letter to bet on
    assert all(r["explanation"] and len(set(r["choices"])) == 4 for r in recs)


def test_no_seeding_question_is_in_the_generators_words():
    """Written in the exam's phrasing, not the kit's templates: none reads back as a family's own text, so a score
    on them measures the reading, not the templates."""
    read = [r["id"] for r in seeding.read_seeding() if puzzles.prove_text(r["question"], r["choices"])[1] is not None]
    assert read == []


def test_an_editions_round_asks_its_own_topics():
    july = edition.load("2025-07-aaipl")
    recs = seeding.read_seeding(topics=july.topics)
    assert len(recs) == 90 and {r["subtopic"] for r in recs} == {s for subs in july.topics.values() for s in subs}


def test_the_seeding_set_is_held_out_of_every_dataset():
    for spec in (readers.HELD_OUT, readers.HELD_OUT.parent):
        with pytest.raises(InputError, match="held out"):
            readers.read_source(str(spec))
    for profile in sorted(p.stem for p in config.CONFIG_DIR.glob("*.yaml")):
        for spec in config.load_profile(profile).data.sources:
            if not spec.startswith("hub:"):
                path = config.resolve_path(spec).resolve()
                assert path != readers.HELD_OUT and not readers.HELD_OUT.is_relative_to(path), (profile, spec)


def test_a_bad_seeding_line_is_named(tmp_path):
    path = tmp_path / "seeding.jsonl"
    path.write_text('{"question": "Who?", "choices": ["a", "b", "c", "d"], "answer": 1, "topic": "Puzzles"}\n')
    with pytest.raises(InputError) as err:
        seeding.read_seeding(path)
    assert err.value.where == 1 and err.value.field == "subtopic"


class Scripted:
    """Right on seating, wrong on blood relations; one answer in 7 s."""

    tokenizer = Words()

    def answer(self, questions):
        out = []
        for q in questions:
            key = q["answer"]
            out.append({"answer": key if "sit" in q["question"] else "ABCD"[("ABCD".index(key) + 1) % 4]})
        return out, [{"seconds": 7.0 if q is questions[0] else 0.01} for q in questions]


def test_the_round_is_scored_by_topic_under_the_editions_rules_against_the_teams_own_questions():
    recs = seeding.read_seeding()
    seating, family = recs[0]["subtopic"], next(r["subtopic"] for r in recs if r["topic"].startswith("Blood"))
    feb = seeding.play(Scripted(), recs, edition=edition.load("2026-02-aaipl-iitd"), batch_size=10)  # 9 s answers
    assert feb["by_topic"][seating]["accuracy"] == 1.0 and feb["by_topic"][family]["accuracy"] == 0.0
    october = seeding.play(Scripted(), recs, batch_size=10)  # 6 s: the first answer of each batch of ten too slow
    assert october["by_topic"][seating]["correct"] == 27 and october["edition"] == "2025-10-aiac"
    match = {"innings": [{"answerer": "kit", "rows": [{"topic": seating, "correct": True},
                                                      {"topic": family, "correct": True}]},
                         {"answerer": "base", "rows": [{"topic": family, "correct": False}]}]}
    rows = {r["topic"]: r for r in seeding.against_own(feb, match, "kit")}
    assert rows[family]["own_accuracy"] == 1.0 and rows[family]["gap_points"] == 100.0
    assert rows[seating]["gap_points"] == 0.0 and rows[seating]["seeding_n"] == 30
