"""The blood-relation families' deductions (helpers.puzzles.deduction.kinship): every family's own explanation, as
steps, passes the checker and concludes the key at every level; the checker refuses a wrong relation, the wrong
person, a wrong conclusion and a missing step, each naming its step, and bad input with a problem, not a crash. An
explanation that goes through the other options names them in the order the question asks them, wherever the key
is."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest

from helpers.puzzles import catalogue
from helpers.puzzles.deduction import KINSHIP_KINDS, Step, check_kinship, measure, write_kinship
from helpers.puzzles.kinship import coded, gender, kinds
from helpers.puzzles.kinship import tree as fam
from helpers.puzzles.kinship.facts import gender_models, relation_terms


N = 10  # generated puzzles per family and level
# Ben's father is Carl, Carl's brother is Dan: Dan is Ben's uncle (Eva, Ben's sister, is noise).
PUZZLE = {"kind": "family", "facts": [["father", "Carl", "Ben"], ["brother", "Dan", "Carl"], ["sister", "Eva", "Ben"]],
          "question": ["relation", "Dan", "Ben"]}
# swap a claimed relation for a wrong one (father -> uncle, ...)
WRONG = {"father": "uncle", "mother": "aunt", "parent": "sibling", "son": "nephew", "daughter": "niece",
         "brother": "cousin", "sister": "cousin", "husband": "brother-in-law", "wife": "sister-in-law",
         "sibling": "cousin", "spouse": "sibling", "child": "grandchild", "cousin": "uncle"}


def _records(kind: str, level: int) -> list[dict]:
    """N catalogue records of a family and level (seeded)."""
    rng = random.Random(f"test-deduction-kinship:{kind}:{level}")
    return [catalogue.make_puzzle(kind, level, i % 4, rng, {}, id=f"{kind}-{i}") for i in range(N)]


RECORDS = {(k, lv): _records(k, lv) for k in KINSHIP_KINDS for lv in catalogue.LEVELS}


def _key(rec: dict) -> str:
    """A record's key (its correct choice)."""
    return rec["choices"][rec["answer"]]


def _named(problems: list[str], steps: list[Step], at: int, words: str) -> bool:
    """Whether some problem names step `at` (0-based) by number and text and says `words`."""
    return any(p.startswith(f"step {at + 1} ({steps[at].text})") and words in p for p in problems)


def _without(steps: list, at: int) -> list:
    """The deduction with step `at` (0-based) left out: the later steps' citations of earlier steps renumbered, and
    theirs of the step left out dropped."""
    def renumbered(step):
        return replace(step, after=tuple(a - (a > at) for a in step.after if a != at))
    return steps[:at] + [renumbered(s) for s in steps[at + 1:]]


def _wrong_claim(claim: tuple) -> tuple:
    """The claim with its relation (or code, or answer) word swapped for a wrong one."""
    return claim[:-1] + (WRONG.get(claim[-1], "cousin" if claim[-1] != "cousin" else "uncle"),)


def test_the_crafted_deduction_is_the_explanation_and_is_proven():
    steps = write_kinship(PUZZLE, "Uncle")
    assert [s.text for s in steps] == ["Ben's father is Carl.", "Carl's brother is Dan.", "So Dan is Ben's uncle."]
    assert " ".join(s.text for s in steps) == fam.explain(PUZZLE, "Uncle")
    assert steps[0].claims == (("rel", "Carl", "Ben", "father"),) and steps[0].uses == (0,)
    assert steps[-1].answer == "Uncle" and check_kinship(PUZZLE, steps) == []


def test_a_wrong_relation_or_person_is_refused_with_its_step_named():
    steps = write_kinship(PUZZLE, "Uncle")
    uncle = [replace(steps[0], claims=(("rel", "Carl", "Ben", "uncle"),))] + steps[1:]
    problems = check_kinship(PUZZLE, uncle)
    assert _named(problems, uncle, 0, "claims 'Carl is Ben's uncle', which fails in a family fact 1 allow"), problems
    person = steps[:1] + [replace(steps[1], claims=(("rel", "Eva", "Carl", "brother"),))] + steps[2:]
    assert _named(check_kinship(PUZZLE, person), person, 1, "claims 'Eva is Carl's brother'")


def test_a_wrong_conclusion_and_a_missing_step_are_refused():
    steps = write_kinship(PUZZLE, "Uncle")
    problems = check_kinship(PUZZLE, steps[:2] + [replace(steps[2], answer="Cousin")])
    assert _named(problems, steps, 2, "concludes 'Cousin', not the key 'Uncle'"), problems
    assert check_kinship(PUZZLE, steps[:2]) == ["the last step does not conclude the key",
                                                "no step claims 'Dan is Ben's uncle', which the key says"]
    missing = _without(steps, 1)  # Carl's brother is Dan: fact 2 is never cited
    problems = check_kinship(PUZZLE, missing)
    assert _named(problems, missing, 1, "claims 'Dan is Ben's uncle', but Dan is not in step 1; it needs fact 2, "
                                        "which it does not cite"), problems
    assert _named(check_kinship(PUZZLE, steps[:2] + [steps[2]]), steps, 2, "concludes") is False
    problems = check_kinship(PUZZLE, steps[:2] + [replace(steps[2], after=(0, 2))])
    assert _named(problems, steps, 2, "cites a step that is not an earlier one (steps 1 and 3)"), problems


def test_bad_input_gives_a_problem_not_a_crash():
    steps = write_kinship(PUZZLE, "Uncle")
    problems = check_kinship(PUZZLE, [replace(steps[0], uses=(7,))] + steps[1:])
    assert _named(problems, steps, 0, "cites a fact the puzzle does not have (fact 8; it states 3)"), problems
    odd = [Step(uses=(0,), claims=(("rel", "Zed", "Ben", "father"), ("rel", "Carl", "Ben", "stepfather"), ("x",),
                                   ["gender", "Carl", "m"], ("chain", "x", "son")), text="odd")] + steps[1:]
    problems = check_kinship(PUZZLE, odd)
    assert _named(problems, odd, 0, "but Zed is not in fact 1"), problems
    assert _named(problems, odd, 0, "'stepfather' is no relation word"), problems
    assert _named(problems, odd, 0, "which the checker cannot read"), problems
    assert _named(problems, odd, 0, "'chain word x names the speaker's son', which a family puzzle cannot prove")
    assert not _named(problems, odd, 0, "Carl is male"), problems  # a claim as a JSON list is read as a tuple
    contradictory = dict(PUZZLE, facts=PUZZLE["facts"][:2] + [["mother", "Carl", "Eva"]])  # Carl: father and mother
    assert check_kinship(contradictory, steps, key="Uncle") == ["the stated facts allow no family"]
    assert check_kinship(dict(PUZZLE, question=["relation", "Zed", "Ben"]), steps) == [
        "the puzzle does not prove one answer: []"]  # nobody the facts name: no key to conclude
    assert check_kinship(dict(PUZZLE, kind="seating_linear"), steps) == [
        "'seating_linear' is not a blood-relation family (family, family_pointing, family_coded, family_gender)"]
    which = next(r for lv in catalogue.LEVELS for r in RECORDS["family_coded", lv]
                 if r["puzzle"]["question"][0] == "which")
    assert check_kinship(which["puzzle"], steps, key="Z ? Q") == ["the key 'Z ? Q' is none of the puzzle's options"]


@pytest.mark.parametrize("kind", KINSHIP_KINDS)
def test_every_level_s_explanation_is_a_proven_deduction_of_the_key(kind):
    for level in catalogue.LEVELS:
        for rec in RECORDS[kind, level]:
            steps = write_kinship(rec["puzzle"], _key(rec))
            assert " ".join(s.text for s in steps) == rec["explanation"]
            assert steps[-1].answer == _key(rec)
            assert check_kinship(rec["puzzle"], steps) == [], (rec["question"], rec["explanation"])
            assert measure.verdict(rec["puzzle"], _key(rec)) == ("ok", rec["explanation"])


@pytest.mark.parametrize("kind", KINSHIP_KINDS)
def test_one_wrong_claim_or_conclusion_is_refused_in_every_family(kind):
    for level in catalogue.LEVELS:
        for rec in RECORDS[kind, level]:
            puzzle, key = rec["puzzle"], _key(rec)
            steps = write_kinship(puzzle, key)
            at = next(i for i, s in enumerate(steps) if s.claims)
            bad = steps[:at] + [replace(steps[at], claims=(_wrong_claim(steps[at].claims[0]),))] + steps[at + 1:]
            problems = check_kinship(puzzle, bad)
            assert _named(problems, bad, at, "claims '"), (steps[at], problems)
            wrong = next(c for c in rec["choices"] if c != key)
            problems = check_kinship(puzzle, steps[:-1] + [replace(steps[-1], answer=wrong)])
            assert _named(problems, steps, len(steps) - 1, f"concludes '{wrong}', not the key"), problems


FACTUAL = ("family", "family_coded", "family_gender")  # the families whose steps cite facts (pointing: its text)


def _refused_for_missing(problems: list[str], at: int) -> bool:
    """Whether step `at` (0-based) is refused naming the uncited facts it needs."""
    return any(p.startswith(f"step {at + 1} (") and "which it does not cite" in p for p in problems)


@pytest.mark.parametrize("kind", FACTUAL)
def test_every_step_is_proven_from_exactly_what_it_cites(kind):
    """A step stripped of its citations (facts and earlier steps) is refused, naming the facts it needs, though the
    steps before it cite them all: nothing cited earlier counts for it."""
    stripped = 0
    for level in catalogue.LEVELS:
        for rec in RECORDS[kind, level]:
            steps = write_kinship(rec["puzzle"], _key(rec))
            for at, step in enumerate(steps):
                if not (step.uses or step.after) or not any(c[0] in ("rel", "kin", "gender") for c in step.claims):
                    continue
                bare = steps[:at] + [replace(step, uses=(), after=())] + steps[at + 1:]
                assert _refused_for_missing(check_kinship(rec["puzzle"], bare), at), (rec["explanation"], at)
                stripped += 1
    assert stripped >= 3 * N * len(catalogue.LEVELS)  # every deduction has links and a conclusion that cite


@pytest.mark.parametrize("kind", FACTUAL)
def test_a_conclusion_without_a_step_it_cites_is_refused_naming_the_missing_fact(kind):
    """Leaving out a step the conclusion cites (the later citations renumbered) leaves the conclusion unproven,
    naming the fact that step stood on, unless another cited step says the same (a couple's link is also in the
    gender step's "X is married to S")."""
    dropped, refused = 0, 0
    for level in catalogue.LEVELS:
        for rec in RECORDS[kind, level]:
            steps = write_kinship(rec["puzzle"], _key(rec))
            end = max(i for i, s in enumerate(steps) if s.after)
            for at in steps[end].after:
                problems = check_kinship(rec["puzzle"], _without(steps, at))
                named = _refused_for_missing(problems, end - 1)
                assert named or not any(p.startswith(f"step {end} (") for p in problems), problems
                dropped, refused = dropped + 1, refused + named
    assert refused >= (dropped if kind != "family_gender" else 0.7 * dropped) and dropped >= 2 * N, (refused, dropped)


def test_an_open_gender_concludes_cannot_be_determined():
    rng = random.Random("cbd")
    rec = next(r for r in (catalogue.make_puzzle("family_gender", 1, 0, rng, {}, id="g", form="relation")
                           for _ in range(40)) if _key(r) == "Cannot be determined")
    steps = write_kinship(rec["puzzle"], _key(rec))
    assert check_kinship(rec["puzzle"], steps) == [] and "gender is open" in rec["explanation"]
    x = rec["puzzle"]["question"][1]
    opened = next(i for i, s in enumerate(steps) if ("unforced", ("gender", x, "m")) in s.claims)
    problems = check_kinship(rec["puzzle"], steps[:opened] + steps[opened + 1:])
    assert f"no step claims 'not necessarily: {x} is male', which the key says" in problems, problems
    every = tuple(range(len(rec["puzzle"]["facts"])))
    forced = steps[:opened] + [replace(steps[opened], claims=(("gender", x, "m"),), uses=every)] + steps[opened + 1:]
    assert _named(check_kinship(rec["puzzle"], forced), forced, opened, f"claims '{x} is male', which fails")
    bare = steps[:opened] + [replace(steps[opened], claims=(("gender", x, "m"),))] + steps[opened + 1:]
    assert _named(check_kinship(rec["puzzle"], bare), bare, opened, f"claims '{x} is male', but it cites no fact")


def test_a_gendered_word_follows_the_fact_or_step_that_shows_the_gender():
    """A gender-inference explanation words a person as "husband" only once the facts state that person's gender or
    an earlier step has shown it (before the inference is said, a link says "spouse"). Before the mend, 20 of these
    30 explanations worded someone by a gender that no fact stated and no earlier step had shown."""
    from helpers.puzzles.deduction.kinship import WORDS
    from helpers.puzzles.kinship.facts import stated_genders
    for level in catalogue.LEVELS:
        for rec in RECORDS["family_gender", level]:
            known = dict(stated_genders(rec["puzzle"]["facts"]) or {})
            for step in write_kinship(rec["puzzle"], _key(rec)):
                for claim in step.claims:
                    if claim[0] == "rel" and WORDS.get(claim[3], (None, None))[1] is not None:
                        assert known.get(claim[1]) == WORDS[claim[3]][1], (rec["explanation"], step.text)
                known.update({c[1]: c[2] for c in step.claims if c[0] == "gender"})


def test_a_coded_step_is_checked_against_the_code_table_and_a_pointing_step_against_the_readings():
    rec = RECORDS["family_coded", 1][0]
    steps = write_kinship(rec["puzzle"], _key(rec))
    code = next(c for c in steps[0].claims if c[0] == "code")
    wrong = ("code", code[1], "sister" if code[2] != "sister" else "brother")
    problems = check_kinship(rec["puzzle"], [replace(steps[0], claims=(wrong,))] + steps[1:])
    assert _named(problems, steps, 0, f"but the code table says '{code[1]}' means {code[2]}"), problems
    rec = RECORDS["family_pointing", 3][0]
    steps = write_kinship(rec["puzzle"], _key(rec))
    wrong = next(c for c in rec["choices"] if c != _key(rec))
    bad = steps[:-1] + [replace(steps[-1], claims=(("asked", wrong),))]
    problems = check_kinship(rec["puzzle"], bad)
    assert _named(problems, bad, len(bad) - 1, "but the readings of the text give"), problems
    assert f"no step claims 'the answer is {_key(rec)}', which the key says" in problems


OTHERS = "The other options give: "
OPTION_TEXT = {"family_coded": coded.expr_text, "family_gender": gender.statement_text}


def _listings(explanation: str) -> list[list[str]]:
    """The words of each "The other options give: a, b, c." sentence of an explanation."""
    return [part.split(".")[0].split(", ") for part in explanation.split(OTHERS)[1:]]


def _option_meaning(puzzle: dict, choice: str) -> str:
    """What a which-question's expression means for the two people asked about (the coded solver's words)."""
    a, b = puzzle["question"][1], puzzle["question"][2]
    terms = relation_terms(gender_models(coded.expr_facts(puzzle["codes"], choice.split())), b, a)
    return " or ".join(sorted(t.lower() for t in terms))


def _every_form(kind: str, level: int, target: int, n: int) -> list[dict]:
    """n records of each question form a family asks at a level, the key at index target (seeded)."""
    rng = random.Random(f"options-order:{kind}:{level}:{target}")
    forms = [f for f, share in catalogue.form_shares(kind, level) if share > 0]
    return [catalogue.make_puzzle(kind, level, target, rng, {}, id=f"{kind}-{i}", form=form)
            for form in forms for i in range(n)]


@pytest.mark.parametrize("kind", KINSHIP_KINDS)
def test_the_other_options_are_listed_in_the_order_asked_with_the_key_at_every_letter(kind):
    listed = 0
    for level in catalogue.LEVELS:
        for target in range(4):
            for rec in _every_form(kind, level, target, 3):
                puzzle, key = rec["puzzle"], _key(rec)
                assert rec["answer"] == target
                if "options" in puzzle:  # a which-question keeps its options as the choices give them
                    assert [OPTION_TEXT[kind](o) for o in puzzle["options"]] == rec["choices"]
                for words in _listings(rec["explanation"]):
                    assert words == [_option_meaning(puzzle, c) for c in rec["choices"] if c != key], rec["choices"]
                    listed += 1
    # the coded which-questions (levels 2 and 3, every letter) list the other options; no other family lists any
    assert listed >= 2 * 4 * 3 if kind == "family_coded" else listed == 0


def test_a_which_question_read_back_in_any_choice_order_lists_its_options_in_that_order():
    rec = _every_form("family_coded", 2, 0, 1)[0]
    key, orders = _key(rec), list(itertools.permutations(rec["choices"]))
    assert len(orders) == 24  # every order of the four choices: the key at each letter six times
    for choices in orders:
        index, puzzle, reason = catalogue.prove_text(rec["question"], list(choices))
        assert reason is None and choices[index] == key
        moved = catalogue.in_choice_order(rec["puzzle"], list(choices))
        text = catalogue.explain(moved, key)
        assert text == catalogue.explain(puzzle, key) and check_kinship(moved, write_kinship(moved, key)) == []
        assert _listings(text) == [[_option_meaning(puzzle, c) for c in choices if c != key]]
    with pytest.raises(ValueError, match="are not the family_coded puzzle's options"):
        kinds.in_choice_order(rec["puzzle"], rec["choices"][:3] + ["Z # Y # X"])
    seating = {"kind": "seating_linear", "clues": []}
    assert catalogue.in_choice_order(seating, ["Ana", "Ben", "Cy", "Dee"]) is seating
