"""Reading questions back into their structured puzzles (helpers.puzzles.seating.parse, kinship.parse) and proving them
(puzzles.prove_text): every generated text round-trips exactly; an edited text is refused by reason; a wrong key
is caught by the solver."""

from __future__ import annotations

import random

import pytest

from helpers import puzzles
from helpers.puzzles.seating import classic, layouts
from helpers.puzzles.seating import parse as seating_parse


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
    b = next(b for b in built("seating_rectangle", 2, 6) if b["puzzle"]["question"][0] != "statement")
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


def reworded(puzzle: dict, intros: int, clue_count, questions: int) -> list[dict]:
    """The puzzle in each of its setups, each wording of each clue (one at a time) and each question wording."""
    out = [dict(puzzle, intro=i) for i in range(intros)] + [dict(puzzle, q_phrasing=i) for i in range(questions)]
    phrasing = list(puzzle["phrasing"])
    for j, clue in enumerate(puzzle["clues"]):
        out += [dict(puzzle, phrasing=phrasing[:j] + [i] + phrasing[j + 1:]) for i in range(clue_count(clue))]
    return out


@pytest.mark.parametrize("kind", layouts.KINDS)
def test_every_wording_reads_back(kind):
    """Each setup, each wording of each clue and statement and each question wording reads back to the same puzzle."""
    for level in (1, 3):
        b = built(kind, level, 1)[0]
        p = b["puzzle"]
        for v in reworded(p, len(layouts.intro_variants(p)), lambda c: len(layouts.clue_variants(p, c)),
                          len(layouts.question_variants(p))):
            text, choices = layouts.render(v), layouts.statement_texts(v) if p["question"][0] == "statement" else \
                [b["answer"], *b["distractors"]]
            back, reason = seating_parse.parse(text, choices)
            assert reason is None and layouts.render(back) == text, (reason, text)
            assert back["clues"] == p["clues"] and back["question"] == p["question"]
        if p["question"][0] == "statement":
            for j, s in enumerate(p["question"][1]):
                for i in range(len(layouts.clue_variants(p, s))):
                    v = dict(p, s_phrasing=p["s_phrasing"][:j] + [i] + p["s_phrasing"][j + 1:])
                    index, _, why = puzzles.prove_text(layouts.render(v), layouts.statement_texts(v))
                    assert why is None and index == 0


def test_no_wording_of_one_clue_is_another_clues_text():
    """A clue sentence reads back to one meaning: texts shared by two clues only where they say the same thing
    (a square table's stated facing: "X faces the centre" is also "X sits at a corner" when corners face in)."""
    for kind in layouts.KINDS:
        for level in (1, 2, 3):
            p = built(kind, level, 1)[0]["puzzle"]
            table = seating_parse._clue_table(p)
            for clue in layouts.all_clues(p):
                for text in layouts.clue_variants(p, clue):
                    read = table[text][0]
                    same = layouts._key(read) == layouts._key(clue)
                    assert same or {read[0], clue[0]} <= {"face", "corner", "mid"}, (kind, text, clue, read)


@pytest.mark.parametrize("kind", ["seating_linear", "seating_circular"])
def test_every_classic_wording_reads_back(kind):
    """The first two families: each setup, clue wording and question wording reads back."""
    for level in (1, 3):
        for rec in puzzles.generate(2, seed=level, kinds=(kind,), levels=(level,), workers=1):
            p = rec["puzzle"]
            for v in reworded(p, len(classic.intro_variants(p)), lambda c: len(classic.clue_variants(c)),
                              len(classic.question_variants(p["question"]))):
                text = classic.render(v)
                index, back, why = puzzles.prove_text(text, rec["choices"])
                assert why is None and index == rec["answer"] and classic.render(back) == text, text


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
    text, scene = pointing["question"], pointing["question"].split(" ", 1)[0]  # the scene's first word: "Pointing"
    for old, new in ((scene, "Glancing"), ("'s ", "'s best friend's "), (' is ', ' was ')):
        assert old in text  # each edit changes the text, whichever scene and wording the generator drew
        assert puzzles.prove_text(text.replace(old, new, 1), pointing["choices"])[0] is None
    family = puzzles.generate(1, seed=3, kinds=("family",), levels=(3,), workers=1)[0]
    text, first_fact = family["question"], family["puzzle"]["facts"][0]
    assert puzzles.prove_text(text, family["choices"])[0] == family["answer"]
    for old, new in ((f" {first_fact[0]}", " friend"), (" is ", " was "), ("?", ".")):
        assert old in text
        assert puzzles.prove_text(text.replace(old, new, 1), family["choices"]) == (None, None, "unknown_text")


def test_every_blood_relation_wording_reads_back():
    """Each intro, fact wording and question wording of the stated-facts family, each gender-inference intro and
    each pointing scene is read back to exactly its puzzle and proven."""
    import itertools

    from helpers.puzzles.kinship import gender, pointing, tree
    from helpers.puzzles.kinship import parse as kinship_parse
    uncle = [["mother", "Meena", "Ben"], ["brother", "Ravi", "Meena"]]
    grandfather = [["mother", "Meena", "Ben"], ["father", "Ravi", "Meena"]]
    for intro, style, ask in itertools.product(*(range(len(t)) for t in (tree.INTROS, tree.FACT_STYLES, tree.ASK))):
        styles = [style, (style + 1) % len(tree.FACT_STYLES)]
        p = {"kind": "family", "facts": uncle, "question": ["relation", "Ravi", "Ben"], "intro": intro,
             "styles": styles, "ask": ask}
        who = dict(p, facts=grandfather, question=["who", "maternal grandfather", "Ben"])
        for puzzle, choices in ((p, ["Father", "Uncle", "Cousin", "Nephew"]), (who, ["Tom", "Ravi", "Ben", "Amit"])):
            text = tree.render(puzzle)
            assert kinship_parse.parse(text, choices) == (puzzle, None), text
            assert puzzles.prove_text(text, choices)[:2] == (1, puzzle)
    for intro, ask in itertools.product(range(len(gender.GENDER_INTROS)), range(len(tree.ASK))):
        p = {"kind": "family_gender", "facts": [["mother", "B", "C"], ["sibling", "A", "B"], ["wife", "D", "A"]],
             "styles": [0, 1, 2], "intro": intro, "question": ["relation", "A", "C"], "ask": ask}
        text = gender.render_gender(p)
        assert puzzles.prove_text(text, ["Aunt", "Uncle", "Cousin", "Cannot be determined"])[:2] == (1, p), text
    for opening, (_, _, pronoun, named, _) in enumerate(pointing.OPENINGS):
        p = {"kind": "family_pointing", "speaker": "Ravi", "target": "Amit" if named else None, "opening": opening,
             "speaker_gender": "m" if pronoun else None, "pronoun": "m", "form": "is", "rel": None,
             "chain": [["mother", False], ["brother", True], ["son", False]], "split": 2, "question": ["to_speaker"],
             "ask": opening % len(tree.ASK)}
        text = pointing.render_pointing(p)
        assert puzzles.prove_text(text, ["Brother", "Cousin", "Nephew", "Uncle"])[:2] == (1, p), text


def test_named_and_mixed_coded_relations_read_back():
    """People named rather than lettered, and a fact in words beside the code, read back and are proven."""
    from helpers.puzzles.kinship import coded
    p = {"kind": "family_coded", "codes": [["#", "father"], ["@", "sister"], ["$", "son"]], "style": 1, "intro": 2,
         "ask": 1, "expr": ["Ravi", "#", "Meena", "@", "Tom"], "question": ["relation", "Ravi", "Amit"],
         "stated": [["son", "Amit", "Tom"]]}
    text = coded.render_coded(p)
    assert text == ("Suppose P # Q means P is Q's father; P @ Q means P is Q's sister; P $ Q means P is Q's son. "
                    "Given Ravi # Meena @ Tom and Amit is Tom's son, what is Ravi to Amit?")
    assert puzzles.prove_text(text, ["Great-grandfather", "Grandfather", "Uncle", "Father"]) == (1, p, None)
    assert puzzles.prove_text(text.replace(" and Amit is", " and Amit was"), ["Uncle"] * 4)[2] == "unknown_text"
