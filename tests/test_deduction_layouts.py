"""Deductions of the layouts whose left/right depend on the sitter (helpers.puzzles.deduction.layouts): the square
table, two facing rows, a round table and a row with mixed facing. The written deductions pass the checker and
conclude the key for most catalogue puzzles of every level; a board too big to list whole is built with its first
clues, which the first step cites; a deduction with one claim altered is refused with its step named; a seat in one
of two rows means what its words say."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from helpers.puzzles import csp
from helpers.puzzles import deduction
from helpers.puzzles.deduction import check, measure, write
from helpers.puzzles.deduction import board as boards
from helpers.puzzles.deduction import layouts
from helpers.puzzles.deduction.board import MAX_WORLDS, NoDeduction
from helpers.puzzles.deduction.layouts import LAYOUTS, LayoutBoard
from helpers.puzzles.deduction.words import fact_text
from helpers.puzzles.seating.solver import Model


PER_COMBO = 6  # catalogue puzzles per family and level (~0.5 s each at most)


def test_the_writer_covers_the_four_layouts():
    assert set(LAYOUTS) <= set(deduction.KINDS)


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("level", (1, 2, 3))
def test_written_layout_deductions_pass_the_checker_and_conclude_the_key(kind, level):
    outcomes = []
    for rec in measure.records(kind, level, PER_COMBO, seed=27):
        key = rec["choices"][rec["answer"]]
        try:
            steps = write(rec["puzzle"], key)
        except NoDeduction as exc:
            outcomes.append(f"no_deduction:{exc}")
            continue
        assert check(rec["puzzle"], steps, key) == [], measure.deduction_text(steps)
        assert steps[-1].answer == key and not steps[-1].case
        outcomes.append("ok" if len(measure.deduction_text(steps).split()) <= measure.LIMIT else "over_budget")
    # most are written and short enough; at level 3 a third: each step applies one clue to what was said, so the
    # case splits a big board needs are written out (docs/deductions.md, Case splits written as cases)
    assert outcomes.count("ok") >= PER_COMBO // (2 if level < 3 else 3), outcomes


@pytest.mark.parametrize("kind", ("seating_parallel_rows", "seating_row_facing"))
def test_a_board_too_big_to_list_is_built_with_its_first_clues_cited_first(kind, monkeypatch):
    """Two rows of ten or twelve, a row of seven or eight with open facing: too big to list whole (10! to 12!
    seatings), so the board lists those its first clues allow, and the first step cites them."""
    built = 0
    for rec in measure.records(kind, 3, 3, seed=27):
        key = rec["choices"][rec["answer"]]
        try:
            board = layouts.LayoutBoard(rec["puzzle"])
        except NoDeduction:  # four clues may leave too many seatings still (counted too_big)
            continue
        built += 1
        assert board.given and len(board.table.rows) <= MAX_WORLDS
        steps = write(rec["puzzle"], key)
        assert set(board.given) <= set(steps[0].uses) and check(rec["puzzle"], steps, key) == []
        monkeypatch.setattr(boards, "MAX_GIVEN", 0)  # with no clue to build it with, it is too big
        assert measure.verdict(rec["puzzle"], key) == ("no_deduction:too_big", "")
        monkeypatch.undo()
    assert built >= 2


@pytest.mark.parametrize("kind", LAYOUTS)
def test_a_deduction_with_one_claim_altered_is_refused_with_its_step_named(kind):
    refused = 0
    for rec in measure.records(kind, 1, 4, seed=27):
        key = rec["choices"][rec["answer"]]
        steps = write(rec["puzzle"], key)
        at = next((i for i, s in enumerate(steps) if s.claims), None)
        if at is None:
            continue
        wrong = ("not", steps[at].claims[0])  # the claim turned false: it holds in every arrangement
        bad = steps[:at] + [replace(steps[at], claims=(wrong,) + steps[at].claims[1:])] + steps[at + 1:]
        problems = check(rec["puzzle"], bad, key)
        said = fact_text(rec["puzzle"], wrong)
        assert any(p.startswith(f"step {at + 1} ({steps[at].text})") and f"claims '{said}'" in p
                   for p in problems), problems
        refused += 1
    assert refused >= 2


def test_a_seat_in_two_rows_is_the_row_and_the_end_its_words_name():
    rec = measure.records("seating_parallel_rows", 1, 1, seed=27)[0]
    puzzle, who = rec["puzzle"], rec["puzzle"]["people"][0]
    board = LayoutBoard(puzzle)
    north_west = board.holds(("row_pos", who, 1, "west", 1))  # the west end of the row facing north: its left end
    assert north_west.any() and not north_west.all()
    assert (north_west == (board.holds(("row", who, 1)) & board.holds(("lend", who)))).all()
    assert fact_text(puzzle, ("row_pos", who, 0, "east", 2)) == f"{who} sits second from the east end of the row " \
                                                                "facing south"
    model = Model(puzzle)
    table = csp.solve(model.problem, model.premises, keep=[model.seat[who]])
    assert np.array_equal(np.unique(table.col(model.seat[who])), np.arange(len(puzzle["people"])))


def test_left_and_right_are_counted_from_the_sitters_own_facing():
    """At a round table where one sitter faces out, "second to X's left" is counted the other way round."""
    puzzle = {"kind": "seating_mixed_facing", "people": ["Ana", "Ben", "Cy", "Dee", "Eli", "Fay"],
              "facing": {"Ana": 1, "Ben": 0, "Cy": 1, "Dee": 1, "Eli": 1, "Fay": 1}, "groups": {},
              "clues": [["left", "Ben", "Ana", 1], ["right", "Cy", "Ben", 1], ["opp", "Dee", "Ana"],
                        ["left", "Eli", "Dee", 1]],
              "question": ["who", "left", "Eli", 1]}
    steps = write(puzzle, "Fay")
    text = measure.deduction_text(steps)
    assert check(puzzle, steps, "Fay") == [] and text.endswith(
        "So, since Ana faces the centre and Eli faces the centre, Fay sits immediately to the left of Eli."), text
    assert "by clue 2, Cy sits second to the left of Ana." in text, text  # Ben faces out: his right is Ana's left
    assert "going round to Ana's left: Ben, Cy, Dee, Eli and Fay" in text, text


def test_a_square_table_clue_turned_round_says_why_and_reads_back():
    """ "J sits three seats to L's right" written as "L sits third to the right of J" keeps the side word: true only
    because the two, an odd number of seats apart, face opposite ways, and the step says so. The reasoner's reader
    reads the sentence back and the checker proves it."""
    from helpers.puzzles.deduction import reading
    from helpers.puzzles.deduction.words import OPPOSITE_WAYS
    puzzle = {"kind": "seating_square", "people": ["E", "F", "H", "J", "K", "L", "S", "Y"], "groups": {},
              "facing": {}, "half": False, "corner_face": None, "phrasing": [1, 1, 1, 1, 0], "intro": 3,
              "clues": [["right", "Y", "J", 2], ["right", "H", "J", 1], ["right", "J", "L", 3], ["left", "F", "K", 2],
                        ["adj", "E", "J"]],
              "question": ["who", "right", "K", 3], "q_phrasing": 2}
    steps = write(puzzle, "H")
    assert check(puzzle, steps, "H") == []
    turned = [s for s in steps if s.uses == (2,)]
    assert [s.claims for s in turned] == [(("right", "L", "J", 3),)]
    assert turned[0].text.endswith(f"L sits third to the right of J{OPPOSITE_WAYS}."), turned[0].text
    assert all(OPPOSITE_WAYS not in s.text for s in steps if s not in turned)  # a clue said its own way round
    sentence = reading.first_sentence(turned[0].text)
    assert reading.read_step(puzzle, sentence).claims == turned[0].claims
    assert reading.first_step(puzzle, turned[0].text) == "valid"
    # the reason stands right after its own clause, wherever that is in the sentence, and the reader reads past it
    two = f"By clues 3 and 2, L sits third to the right of J{OPPOSITE_WAYS} and H sits immediately to the right of J"
    assert reading.read_step(puzzle, two).claims == (("right", "L", "J", 3), ("right", "H", "J", 1))
    # an answer that turns its clue round says why too
    asked = dict(puzzle, question=["who", "right", "J", 3], clues=puzzle["clues"][:3])
    last = write(asked, "L")[-1]
    assert last.answer == "L" and last.text.endswith(f"L sits third to the right of J{OPPOSITE_WAYS}."), last.text


def test_a_case_opens_on_a_clause_not_a_capitalised_sentence():
    """ "If exactly 2 people sit between A and B:", where the clue's sentence starts "Exactly": a case opens on the
    fact as a clause, its first word lowercased unless it is a name."""
    rec = measure.records("seating_row_facing", 1, 1, seed=27)[0]
    puzzle = rec["puzzle"]
    a, b = puzzle["people"][:2]
    assert fact_text(puzzle, ("gap", a, b, 2)) == f"exactly 2 people sit between {a} and {b}"
    classic_row = {"kind": "seating_linear", "people": [a, b, "Cy"], "facing": "centre", "clues": [],
                   "question": ["at", 1]}
    assert fact_text(classic_row, ("gap", a, b, 1)).startswith("exactly 1 person sits between")
    assert fact_text(classic_row, ("pos", a, "west", 1)).startswith(a)  # a name keeps its capital


def test_a_step_says_each_fact_once():
    """A row-facing case's step listed "James sits fourth to the right of Irene" twice (a seat and a link)."""
    from helpers import puzzles
    r = next(x for x in puzzles.generate(6, seed=11, kinds=("seating_row_facing",)) if x["id"].endswith("005"))
    steps = write(r["puzzle"], r["choices"][r["answer"]])
    assert all(len(set(s.claims)) == len(s.claims) for s in steps), [s.text for s in steps]
    assert any("If exactly 3 people sit between James and Irene:" in s.text for s in steps)

