"""Reading questions back into their structured puzzles (helpers.puzzles.seating.parse, kinship.parse) and proving them
(puzzles.prove_text): every generated text round-trips exactly; an edited text is refused by reason; a wrong key
is caught by the solver."""

from __future__ import annotations

import random

import pytest

from helpers import puzzles
from helpers.puzzles.seating import layouts
from helpers.puzzles.seating import parse as seating_parse

pytestmark = pytest.mark.nolibs  # no ML library: the container tier skips it (see pyproject.toml)

NAMES = [n for n, _ in puzzles.NAMES]
COMBOS = [(k, lv) for k in layouts.KINDS for lv in (1, 2, 3)]


def built(kind: str, level: int, n: int = 3) -> list[dict]:
    rng, out = random.Random(f"parse:{kind}:{level}"), []
    while len(out) < n:
        b = layouts.build(rng, NAMES, kind=kind, level=level, stats={})
        if b is not None:
            out.append(b)
    return out


@pytest.mark.parametrize("kind,level", COMBOS)
def test_generated_text_reads_back_to_the_same_puzzle_and_is_proven(kind, level):
    for b in built(kind, level):
        text, choices = layouts.render(b["puzzle"]), [b["answer"], *b["distractors"]]
        back, reason = seating_parse.parse(text, choices)
        assert reason is None and layouts.render(back) == text
        assert back["kind"] == kind and back["clues"] == b["puzzle"]["clues"]
        assert back["question"] == b["puzzle"]["question"]
        shuffled = [choices[2], choices[0], choices[3], choices[1]]
        index, puzzle, why = puzzles.prove_text(text, shuffled)
        assert why is None and shuffled[index] == b["answer"] and puzzle["kind"] == kind


def test_edited_texts_are_refused_by_reason():
    b = built("seating_mixed_facing", 2, 1)[0]
    text, choices = layouts.render(b["puzzle"]), [b["answer"], *b["distractors"]]
    first_clue = layouts.clue_variants(b["puzzle"], b["puzzle"]["clues"][0])[b["puzzle"]["phrasing"][0]]
    changed = first_clue.replace(" sits ", " lounges ").replace(" is ", " was ").rstrip(".") + " today."
    assert seating_parse.parse(text.replace(first_clue, changed), choices) == (None, "unknown_clue")
    assert seating_parse.parse("Somebody sits somewhere. Who?", choices) == (None, "no_cast")
    assert seating_parse.parse(text.rsplit(" ", 1)[0] + " tomorrow?", choices)[1] == "unknown_question"
    assert seating_parse.parse(text.replace("table", "desk", 1), choices)[1] == "unknown_setup"


def test_a_wrong_key_or_an_open_question_is_caught():
    b = built("seating_rectangle", 2, 1)[0]
    p = b["puzzle"]
    text, choices = layouts.render(p), [b["answer"], *b["distractors"]]
    assert puzzles.prove_text(text, choices)[0] == 0
    assert puzzles.prove_text(text, b["distractors"] + ["nobody"])[2] == "answer_not_among_choices"
    fewer = dict(p, clues=p["clues"][1:], phrasing=p["phrasing"][1:])  # a clue the proof needs is gone
    index, puzzle, why = puzzles.prove_text(layouts.render(fewer), choices)
    assert index is None and why == "not_unique" and puzzle["clues"] == fewer["clues"]


def test_statement_questions_read_their_statements_from_the_choices():
    rng, stats = random.Random("st"), {}
    while True:
        b = layouts.build(rng, NAMES, kind="seating_row_facing", level=3, stats=stats)
        if b and b["puzzle"]["question"][0] == "statement":
            break
    text, choices = layouts.render(b["puzzle"]), [b["distractors"][0], b["answer"], *b["distractors"][1:]]
    index, puzzle, why = puzzles.prove_text(text, choices)
    assert why is None and index == 1 and puzzle["question"][0] == "statement"
    assert puzzles.prove_text(text, choices[:3] + ["P sits at the moon"])[2] == "unknown_statement"


@pytest.mark.parametrize("kind", ["seating_linear", "seating_circular"])
def test_the_first_two_seating_families_read_back_too(kind):
    for level in (1, 2, 3):
        for rec in puzzles.generate(4, seed=level, kinds=(kind,), levels=(level,), workers=1):
            index, puzzle, why = puzzles.prove_text(rec["question"], rec["choices"])
            assert why is None and index == rec["answer"]
            assert {k: puzzle[k] for k in ("kind", "people", "clues", "question")} == \
                {k: rec["puzzle"][k] for k in ("kind", "people", "clues", "question")}
    rec = puzzles.generate(1, seed=1, kinds=(kind,), levels=(2,), workers=1)[0]
    assert puzzles.prove_text(rec["question"].replace(" sits ", " stands ", 1), rec["choices"])[0] is None


def test_the_stated_facts_family_reads_back():
    for level in (1, 2, 3):
        for rec in puzzles.generate(6, seed=level, kinds=("family",), levels=(level,), workers=1):
            index, puzzle, why = puzzles.prove_text(rec["question"], rec["choices"])
            assert why is None and index == rec["answer"]
            assert puzzle["facts"] == rec["puzzle"]["facts"] and puzzle["question"] == rec["puzzle"]["question"]
            wrong = [c for i, c in enumerate(rec["choices"]) if i != rec["answer"]] + ["Nobody"]
            assert puzzles.prove_text(rec["question"], wrong)[2] == "answer_not_among_choices"
    for text in ("In a family: Ann is Bob's cousin. How is Ann related to Bob?",  # not a word the facts use
                 "Ann is the cousin of Bob. What is Ann to Bob?", "In a code, P # Q means P is Q's pal. If A # B, how "
                 "is A related to B?"):
        assert puzzles.prove_text(text, ["Cousin", "Aunt", "Uncle", "Niece"]) == (None, None, "unknown_text")


@pytest.mark.parametrize("kind", ["family_coded", "family_gender", "family_pointing"])
def test_coded_relations_gender_inference_and_pointing_chains_read_back(kind):
    for level in (1, 2, 3):
        for rec in puzzles.generate(6, seed=level, kinds=(kind,), levels=(level,), workers=1):
            index, puzzle, why = puzzles.prove_text(rec["question"], rec["choices"])
            assert why is None and index == rec["answer"], rec["question"]
            same = {k: v for k, v in rec["puzzle"].items() if k not in ("level", "work", "options")}
            assert {k: v for k, v in puzzle.items() if k != "options"} == same
            assert sorted(puzzle.get("options", [])) == sorted(rec["puzzle"].get("options", []))  # in choice order


def test_blood_relation_edits_are_refused():
    rec = puzzles.generate(1, seed=3, kinds=("family_coded",), levels=(2,), workers=1)[0]
    assert puzzles.prove_text(rec["question"].replace(" means ", " says ", 1), rec["choices"]) == \
        (None, None, "unknown_text")
    gender = puzzles.generate(1, seed=3, kinds=("family_gender",), levels=(1,), workers=1)[0]
    assert puzzles.prove_text(gender["question"].replace(" is ", " was ", 1), gender["choices"])[2] == "unknown_text"
    pointing = puzzles.generate(1, seed=3, kinds=("family_pointing",), levels=(3,), workers=1)[0]
    assert puzzles.prove_text(pointing["question"], pointing["choices"])[0] == pointing["answer"]
    for old, new in ((" said, ", " whispered, "), ("'s ", "'s best friend's "), (' is ', ' was ')):
        assert puzzles.prove_text(pointing["question"].replace(old, new, 1), pointing["choices"])[0] is None
