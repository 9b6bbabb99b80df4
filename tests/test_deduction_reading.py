"""A model's first step read back and proven (helpers.puzzles.deduction.reading): the writer's own first steps read as
true, a step altered to a false one reads as false, and what is not a deduction's sentence is not read at all."""

import random
import re

import pytest

from helpers import puzzles
from helpers.puzzles import deduction
from helpers.puzzles.deduction import reading
from helpers.puzzles.deduction.measure import verdict

import _pool


COVERED = deduction.KINDS  # every seating family
# Puzzles per family and level whose written first step is read back: every readable one must read as true, so a
# reader that misreads 1 step in 6 of a family's (10-24 written) fails with p >= 0.84 at 10, 0.987 at 24 (1 - (5/6)^n).
PER_LEVEL = 8


def _written(kind: str, level: int, n: int) -> list[tuple[dict, str]]:
    """(puzzle, checked deduction) for the first n puzzles of a family and level in the shared pool (tests/_pool.py)
    that have one: written once and kept with the pool, for every test and run that reads them (the writer's search
    takes ~40 s over them all)."""
    def write() -> list[tuple[dict, str]]:
        out = []
        for rec in _pool.records(kind, level, n):
            outcome, text = verdict(rec["puzzle"], rec["choices"][rec["answer"]])
            if outcome == "ok":
                out.append((rec["puzzle"], text))
        return out
    written = _pool.cached(f"written-{kind}-{level}-{n}", write, roots=("helpers.puzzles.deduction.measure",))
    return [(puzzle, text) for puzzle, text in written]


@pytest.mark.parametrize("kind", COVERED)
def test_the_writers_first_steps_read_back_as_true(kind):
    """Every first step reads back as true, but a block ("R, V and H sit together, going left") or a case, which the
    reader leaves unreadable by design (a floor, never a guess in the model's favour)."""
    written = [(p, text) for level in (1, 2, 3) for p, text in _written(kind, level, PER_LEVEL)]
    assert len(written) >= 10  # most are written under the 100-word limit (a rectangle's and mixed facing's the fewest)
    found = [(reading.first_step(p, text), _by_design_unreadable(text)) for p, text in written]
    assert all(verdict == ("unreadable" if block else "valid") for verdict, block in found), found
    assert sum(not block for _, block in found) >= 10, found


def _by_design_unreadable(text: str) -> bool:
    """Whether a deduction's first sentence is one the reader leaves unreadable: a block of three or more side by side,
    or a case."""
    first = reading.first_sentence(text)
    return " sit together, " in first or first.lower().startswith("if ")


# A link's side ("to U's left", "to the right of R"): turned round it is false, where a seat counted from one end of a
# row may be the same seat counted from the other ("third from the right" of five).
_LINK = re.compile(r"'s (left|right)\b|\b(left|right) of\b")


def _swap(sentence: str) -> str:
    """left <-> right: a link stated the wrong way round."""
    return sentence.replace("left", "\0").replace("right", "left").replace("\0", "right")


@pytest.mark.parametrize("kind", ("seating_linear", "seating_circular", "seating_attributes"))
def test_a_first_step_turned_the_wrong_way_reads_as_false(kind):
    swapped = [(p, _swap(reading.first_sentence(t)) + ".") for lv in (1, 2)
               for p, t in _written(kind, lv, PER_LEVEL)
               if " or " not in reading.first_sentence(t) and _LINK.search(reading.first_sentence(t))]
    assert len(swapped) >= 4
    verdicts = [reading.first_step(p, s) for p, s in swapped]
    assert verdicts.count("invalid") >= len(verdicts) - 1, list(zip([s for _, s in swapped], verdicts))


def test_a_step_true_from_every_clue_but_not_from_the_one_cited_is_false():
    puzzle, text = _written("seating_linear", 2, PER_LEVEL)[0]
    sentence = reading.first_sentence(text)
    cited = int(sentence.split(",")[0].split()[-1])
    other = 1 if cited != 1 else 2
    claim = sentence.split(", ", 1)[1]
    assert reading.first_step(puzzle, f"By clue {cited}, {claim}.") == "valid"
    moved = reading.first_step(puzzle, f"By clue {other}, {claim}.")
    all_clues = reading.first_step(puzzle, f"So {claim}.")  # no clue cited: read against every clue
    assert moved == "invalid" and all_clues == "valid"


def test_what_is_not_a_deductions_sentence_is_not_read():
    puzzle, _ = _written("seating_circular", 1, PER_LEVEL)[0]
    assert reading.first_step(puzzle, "") == "empty"
    assert reading.first_step(puzzle, "Let me think about who sits where.") == "unreadable"
    assert reading.first_step(puzzle, "By clue 9, Ana sits at the left end.") == "unreadable"  # no clue 9
    family = puzzles.make_puzzle("family", 1, 0, random.Random(1), {}, id="f")["puzzle"]
    assert reading.first_step(family, "Ana's father is Ben.") == "unreadable"  # no Ana or Ben in this family
    pointing = puzzles.make_puzzle("family_pointing", 1, 0, random.Random(1), {}, id="p")["puzzle"]
    assert reading.first_step(pointing, "Her father is my son.") == "no_reader"


def test_a_split_reads_as_one_claim_of_alternatives():
    puzzle, text = next((p, t) for lv in (1, 2, 3) for p, t in _written("seating_linear", lv, 12)
                        if " or " in reading.first_sentence(t))
    step = reading.read_step(puzzle, reading.first_sentence(text))
    assert step is not None and step.claims[0][0] == "or" and len(step.claims[0]) >= 3
    assert reading.first_step(puzzle, text) == "valid"


@pytest.mark.parametrize("kind", reading.LINKED)
def test_a_families_first_link_reads_as_true_and_a_changed_link_as_false(kind):
    rng, found = random.Random(f"reading:links:{kind}"), []
    for i in range(12):
        rec = puzzles.make_puzzle(kind, 1 + i % 3, i % 4, rng, {}, id=f"k-{i}")
        outcome, text = verdict(rec["puzzle"], rec["choices"][rec["answer"]])
        step = reading.read_link(rec["puzzle"], reading.first_sentence(text)) if outcome == "ok" else None
        if step is not None:
            found.append((rec["puzzle"], text, step.claims[0]))
    assert len(found) >= 8
    assert all(reading.first_step(p, t) == "valid" for p, t, _ in found)
    for puzzle, _, (_, who, of, word) in found:
        other = "grandson" if word != "grandson" else "uncle"  # another relation between the same two people
        assert reading.first_step(puzzle, f"{of}'s {other} is {who}.") == "invalid", (word, other)


def test_three_premises_read_whole():
    """ "Since A, B and C, by clue 2, ..." names three premises (the words join three with commas): all three read,
    not the first alone with the rest left to the sentence."""
    from helpers.puzzles.deduction.steps import premise_names
    from helpers.puzzles.deduction.words import join, premise_text
    rng = random.Random(3)
    for i in range(60):
        puzzle = puzzles.make_puzzle("seating_mixed_facing", 1 + i % 3, 0, rng, {}, id=f"p{i}")["puzzle"]
        names = premise_names(puzzle)
        if len(names) >= 3:
            break
    assert len(names) >= 3, names
    names = names[:3]
    sentence = f"Since {join([premise_text(puzzle, n) for n in names])}, by clue 1, something follows"
    assert reading.read_premises(puzzle, sentence) == (tuple(names), "by clue 1, something follows")
