"""Every seating family's keys proven a second time: tests/_proof_seating.py, written apart from the generators and
solvers, gives each stored clue and question kind the meaning its words have, lists every arrangement the clues
allow and must find the key the only answer, for every family at every level, on puzzles built as the Q-agent
builds them (the sentences themselves are checked by the readers' round trip, not here)."""

from __future__ import annotations

import functools
import math

import pytest

import _proof_seating as proof
from helpers import puzzles
from helpers.puzzles.seating import layouts


SEED = 29
PER_PAIR = 8  # records per family x level: building them is most of this file's ~10 s of CPU
SEATING = tuple(k for k in puzzles.KINDS if puzzles.TOPICS[k][0] == "Puzzles")
PAIRS = [(kind, level) for kind in SEATING for level in puzzles.LEVELS]


@functools.cache
def records(kind: str, level: int) -> tuple[dict, ...]:
    """PER_PAIR records of one family at one level, built by make_puzzle (as the Q-agent does) from a fixed seed."""
    return tuple(puzzles.generate(PER_PAIR, seed=SEED, kinds=(kind,), levels=(level,), workers=1))


def key_of(record: dict) -> str:
    """The text of a record's correct choice."""
    return record["choices"][record["answer"]]


def without_clue(record: dict, i: int) -> dict:
    """The record's puzzle with clue i left out."""
    puzzle = record["puzzle"]
    return dict(puzzle, clues=puzzle["clues"][:i] + puzzle["clues"][i + 1:],
                phrasing=puzzle["phrasing"][:i] + puzzle["phrasing"][i + 1:])


def test_every_seating_family_has_an_independent_reading():
    assert len(SEATING) >= 8 and {"seating_linear", "seating_circular", "seating_square"} <= set(SEATING)
    assert set(SEATING) <= set(proof.SHAPES), "a new seating family needs its reading in tests/_proof_seating.py"


@pytest.mark.parametrize("kind,level", PAIRS)
def test_the_key_is_the_only_answer(kind, level):
    checked = 0
    for rec in records(kind, level):
        assert rec["puzzle"]["kind"] == kind and rec["puzzle"]["level"] == level
        found = proof.prove(rec["puzzle"], rec["choices"])
        assert found.worlds >= 1, rec["id"]
        assert found.answers == {key_of(rec)}, (rec["id"], rec["question"], sorted(found.answers))
        checked += 1
    assert checked >= PER_PAIR  # never an empty sample


@pytest.mark.parametrize("kind,level", PAIRS)
def test_the_key_holds_when_not_next_to_is_read_as_two_people(kind, level):
    """The solvers read "X does not sit next to the tea drinker" literally (X may drink tea); a reader may take it as
    two people. The key must be the only answer then too, with a seating left, and no offered statement of that
    kind may name an attribute (one seating could make it true, another false, by the reading alone)."""
    for rec in records(kind, level):
        found = proof.prove(proof.read_as_two_people(rec["puzzle"]), rec["choices"])
        assert found.answers == {key_of(rec)}, (rec["id"], rec["question"], sorted(found.answers))
        q = rec["puzzle"]["question"]
        offered = q[1] if q[0] == "statement" else []
        assert all(s[0] not in proof.NEGATIVE_PAIRS or {s[1], s[2]} <= set(rec["puzzle"]["people"])
                   for s in offered), rec["id"]


@pytest.mark.parametrize("kind,level", PAIRS)
def test_arrangement_counts_match_the_solvers(kind, level):
    """The kit's solver counts arrangements with the table's turns factored out; this proof lists them all."""
    for rec in records(kind, level):
        work = rec["puzzle"]["work"]
        worlds = proof.prove(rec["puzzle"], rec["choices"]).worlds / proof.symmetries(rec["puzzle"])
        assert math.log2(worlds) == pytest.approx(work["log2_after"][-1], abs=1e-3), rec["id"]
        assert worlds == work.get("worlds", worlds), rec["id"]


@pytest.mark.parametrize("kind,level", PAIRS)
def test_every_clue_is_needed_in_this_reading_too(kind, level):
    rec = records(kind, level)[0]
    for i in range(len(rec["puzzle"]["clues"])):
        assert len(proof.prove(without_clue(rec, i), rec["choices"]).answers) > 1, (rec["id"], i)


def test_a_wrong_key_is_caught():
    for kind in SEATING:
        rec = records(kind, 1)[0]
        assert proof.proves_key(rec)
        for wrong in set(range(4)) - {rec["answer"]}:
            assert not proof.proves_key(dict(rec, answer=wrong)), (rec["id"], wrong)


def test_contradictory_clues_leave_no_arrangement():
    row = {"kind": "seating_linear", "people": ["Ana", "Ben", "Cal"], "facing": "centre",
           "clues": [["pos", "Ana", 1], ["pos", "Ben", 1]], "question": ["at", 2]}
    assert proof.prove(row, ["Ana", "Ben", "Cal", "Dev"]) == proof.Proof(frozenset(), 0)


def test_a_table_counts_the_turns_that_keep_its_seats():
    sizes = {"seating_circular": 7, "seating_square": 8, "seating_rectangle": 10, "seating_row_facing": 6,
             "seating_parallel_rows": 8}
    turns = {kind: proof.symmetries({"kind": kind, "people": list("EFGHJKLMNP"[:n])}) for kind, n in sizes.items()}
    assert turns == {"seating_circular": 7, "seating_square": 4, "seating_rectangle": 2, "seating_row_facing": 1,
                     "seating_parallel_rows": 1}


# ---- crafted puzzles, solved by hand from the words --------------------------------------------------------

def test_at_a_mixed_table_left_is_the_sitters_own():
    """P faces the centre, the others outward. Q is P's left neighbour, R sits opposite P. Put P at the south
    side facing north: Q is west, R north. Q faces outward (west), so Q's left is south: P."""
    puzzle = {"kind": "seating_mixed_facing", "people": ["P", "Q", "R", "S"], "groups": {}, "half": False,
              "facing": {"P": 1, "Q": 0, "R": 0, "S": 0},
              "clues": [["left", "Q", "P", 1], ["opp", "R", "P"]], "question": ["who", "left", "Q", 1]}
    assert proof.prove(puzzle, ["P", "Q", "R", "S"]) == proof.Proof(frozenset({"P"}), 4)  # 4 turns of the table


def test_two_rows_face_each_other_and_the_north_row_has_its_left_to_the_east():
    """W sits in the row facing north (the south row), at its own left end: west. X faces W, Y shares W's row, so
    Z sits in the north row's east seat, which is that row's left end (its sitters face south)."""
    puzzle = {"kind": "seating_parallel_rows", "people": ["W", "X", "Y", "Z"], "groups": {}, "facing": {},
              "half": False, "clues": [["row", "W", 1], ["lend", "W"], ["faces", "X", "W"], ["same_row", "Y", "W"]],
              "question": ["at_end", 0, "left"]}
    assert proof.prove(puzzle, ["W", "X", "Y", "Z"]) == proof.Proof(frozenset({"Z"}), 1)


def test_opposite_at_a_rectangle_is_straight_across():
    """Six at a rectangle: A at an end, B on A's left (the long side's seat by A), C straight across from B, so C
    is the other long side's seat by A and A is on C's left. D, E and F are free: 2 ends x 3! = 12 arrangements."""
    puzzle = {"kind": "seating_rectangle", "people": ["A", "B", "C", "D", "E", "F"], "groups": {}, "facing": {},
              "half": False, "clues": [["end", "A"], ["left", "B", "A", 1], ["opp", "C", "B"]],
              "question": ["who", "left", "C", 1]}
    assert proof.prove(puzzle, ["A", "B", "D", "E"]) == proof.Proof(frozenset({"A"}), 12)


def test_not_next_to_is_read_literally_by_both_proofs():
    """At a table of four, R opposite Q, "Q does not sit next to the tea drinker": R drinks tea, or Q does (nobody
    sits next to themselves). Both readers leave both open, so no key can rest on the two being different people
    (the kit's solver once read them as two sitters, and 9 of 13 attribute-table puzzles with such a clue did)."""
    puzzle = {"kind": "seating_attributes", "people": ["Q", "R", "S", "T"], "facing": {}, "half": False,
              "groups": {"drink": ["tea", "milk", "soda", "cola"]},
              "clues": [["not_adj", "Q", "tea"], ["opp", "R", "Q"]], "question": ["who", "same", "tea", 0]}
    assert proof.prove(puzzle, ["Q", "R", "S", "T"]) == proof.Proof(frozenset({"Q", "R"}), 96)
    assert layouts.possible_answers(puzzle) == {"Q", "R"}
