"""Round tables with attributes and with mixed facing: every key proven, every clue needed, facing per sitter."""

from __future__ import annotations

import random

import numpy as np
import pytest

from helpers import puzzles
from helpers.puzzles import tables

TABLE_KINDS = ("seating_attributes", "seating_mixed_facing")


@pytest.fixture(scope="module")
def made() -> dict:
    """12 records per table family and level, with the stats of making them."""
    out = {}
    for kind in TABLE_KINDS:
        for level in puzzles.LEVELS:
            stats: dict = {}
            out[kind, level] = (puzzles.generate(12, seed=31, kinds=(kind,), levels=(level,), stats=stats), stats)
    return out


def test_every_table_record_verifies_with_a_single_proven_key(made):
    for (kind, level), (recs, stats) in made.items():
        assert stats["accepted"] == 12 and stats["attempts"] >= 12
        for rec in recs:
            assert puzzles.problems(rec) == [], (kind, level, rec["question"])
            assert tables.possible_answers(rec["puzzle"]) == {rec["choices"][rec["answer"]]}
            assert rec["puzzle"]["level"] == level and rec["source"] == f"puzzles/{kind}"


def test_every_clue_is_needed(made):
    for (kind, _), (recs, _) in made.items():
        for rec in recs[:6]:
            p = rec["puzzle"]
            for i in range(len(p["clues"])):
                fewer = {**p, "clues": p["clues"][:i] + p["clues"][i + 1:], "styles": p["styles"][:i] + p["styles"][i + 1:]}
                assert len(tables.possible_answers(fewer)) > 1, (kind, p["clues"][i])


def test_text_fits_and_explanations_are_the_solvers_deduction(made):
    for (kind, level), (recs, _) in made.items():
        for rec in recs:
            assert puzzles.official_length(rec["question"], rec["choices"]) < puzzles.max_chars(kind)
            words = rec["explanation"].split()
            assert 10 < len(words) < 100 and rec["explanation"].startswith("Of ")
            counts = [c for _, c in tables.deduction(rec["puzzle"])]
            assert counts[-1] == int(tables.consistent(rec["puzzle"]).sum()) and f"-> {counts[0]:,}" in rec["explanation"]


def test_clues_are_written_more_than_one_way(made):
    styles = {kind: set() for kind in TABLE_KINDS}
    for (kind, _), (recs, _) in made.items():
        for rec in recs:
            styles[kind] |= {(c[0], s) for c, s in zip(rec["puzzle"]["clues"], rec["puzzle"]["styles"])}
    for kind, seen in styles.items():
        assert len({k for k, s in seen if s > 0}) >= 3, kind  # several clue kinds used a second phrasing


def test_left_and_right_are_each_sitters_own():
    """Six at a table: A faces out, so A's left is the previous seat; the same clue flips if A faced in."""
    puzzle = {"kind": "seating_mixed_facing", "people": ["A", "B", "C", "D", "E", "F"], "values": [],
              "clues": [], "styles": [], "question": ["left_q", ["p", 0], 1]}
    w = tables.worlds("seating_mixed_facing", 6)
    seat, facing = np.array([[0, 1, 2, 3, 4, 5]], dtype=np.int8), np.array([[-1, 1, 1, 1, 1, 1]], dtype=np.int8)
    one = tables.with_entities({"seat": seat, "dir": facing}, 6)
    assert tables.answers(puzzle["question"], puzzle, one) == ["F"]  # facing out: left is anticlockwise
    flipped = tables.with_entities({"seat": seat, "dir": -facing}, 6)
    assert tables.answers(puzzle["question"], puzzle, flipped) == ["B"]
    assert tables.clue_mask(["left", ["p", 5], ["p", 0], 1], puzzle, one)[0]
    assert not tables.clue_mask(["left", ["p", 1], ["p", 0], 1], puzzle, one)[0]
    assert len(w["seat"]) == 120 * 64


def test_an_ambiguous_table_is_found_ambiguous():
    puzzle = {"kind": "seating_attributes", "people": ["Ana", "Ben", "Cal", "Dev"], "values": [[0, 1, 2, 3]] * 2,
              "clues": [["same", ["p", 0], ["a", 1, 0]]], "styles": [0], "question": ["attr_of", ["p", 1], 1]}
    assert len(tables.possible_answers(puzzle)) == 3  # Ana drinks the first drink: Ben may drink any other
    puzzle["clues"] += [["same", ["p", 1], ["a", 1, 2]]]
    assert tables.possible_answers(puzzle) == {"milk"}


def test_the_mixed_facing_table_of_eight_is_half_and_half_and_says_so(made):
    recs, _ = made["seating_mixed_facing", 3]
    assert all("four facing in and four out" in r["question"] for r in recs)
    w = tables.worlds("seating_mixed_facing", 8)
    assert len(w["seat"]) == 5040 * 70 and set((w["dir"] == 1).sum(axis=1).tolist()) == {4}


def test_same_seed_same_table_puzzles():
    a = puzzles.generate(6, seed=3, kinds=TABLE_KINDS)
    assert a == puzzles.generate(6, seed=3, kinds=TABLE_KINDS)


def test_a_table_build_is_fast_enough_for_the_q_agent():
    """One proven level-3 puzzle (with its rejected attempts) well inside the Q-agent's 5 s budget."""
    import time
    for kind in TABLE_KINDS:
        rng, worst = random.Random(7), 0.0
        tables.worlds(kind, tables.SIZES[kind][3])  # built once per process, ~0.1 s
        for i in range(5):
            start = time.process_time()
            puzzles.make_puzzle(kind, 3, i % 4, rng, {}, id=f"t{i}")
            worst = max(worst, time.process_time() - start)
        assert worst < 2.5, (kind, worst)


def test_a_caller_with_a_deadline_is_not_kept_waiting(monkeypatch):
    """After the first failed attempt make_puzzle asks give_up() and stops with TimeoutError when it says so."""
    asked = []
    monkeypatch.setattr(puzzles, "_build", lambda kind, level, rng, stats: None)  # every attempt fails
    with pytest.raises(TimeoutError, match="seating_attributes"):
        puzzles.make_puzzle("seating_attributes", 3, 0, random.Random(1), {}, id="x",
                            give_up=lambda: asked.append(1) or True)
    assert asked == [1]
    with pytest.raises(RuntimeError, match="500 attempts"):
        puzzles.make_puzzle("seating_attributes", 3, 0, random.Random(1), {}, id="x")
