"""Blood-relation puzzles beyond tree.py's stated facts: pointing chains, coded relations, gender inference.

Kinds (each at levels 1-3):
- "family_pointing": 'Pointing to a photograph, Ravi said, "He is the son of the only sister of my mother's
  husband."' The chain is read from the speaker outwards (mother, husband, only sister, son); the question asks
  how the pointed-at person is related to the speaker, the speaker to them, or them to the speaker's father,
  mother, husband or wife. Form B states a relative of the pointed-at person: "Her mother is my only daughter."
- "family_coded": "P # Q means P is the father of Q; ..." then "A # B @ C", read A # B and B @ C; the question
  asks how A is related to C, or which of four expressions means "X is Y's grandmother". Level 3 may state the last
  link in words beside the code ("If A # B @ C and D is C's wife, ..."); people are lettered, or named (Ravi, Meena)
  where no gender is left to infer.
- "family_gender": facts worded partly without gender ("X is the child of Y", "Y is the spouse of Z"); the
  question needs a gender that only follows from other facts, or is not fixed at all ("Cannot be determined"),
  or asks which of four statements is definitely true.

Conventions (tree.py's, written out; the solvers use nothing else):
- Siblings are full siblings. The two parents of a child are married to each other, a married person's spouse
  is the other parent of their children and everyone marries at most once, so "my mother's husband" is my
  father (no step-families). Relatives do not marry each other. Distinct names or letters are distinct people.
- Gender is known only from a gendered word said about a person (father, sister, He, his friend, "a man") or
  about their partner: a couple is a man and a woman (tree.py already forbids two fathers), so "C is D's
  wife" makes D male. The solvers never read a gender off a name or letter (a name's gender always agrees with
  the words said of its person, and the families that test gender inference use letters).
- "the son of N" may be any son of N, someone already mentioned included when the text already makes them N's
  son: "my father's son", said by a man, is himself or a brother. Nobody is taken to be a relative the text does
  not make them (my uncle's wife is not also my father's sister). "the only son of N" says N has exactly one
  son: it is the son already known if there is one ("my father's only son", said by a man, is himself) and no
  second son may appear later. Only son, daughter, brother and sister take "only"; father, mother, husband and
  wife are unique anyway.
- "grandfather" and "great-grandfather" without "paternal"/"maternal" may be on either side; "father-in-law"
  is the spouse's father, "son-in-law" a daughter's husband, "grandson" a child's son.
- A photograph or portrait may show the speaker; a person introduced or met in the street is someone else.
- "Cannot be determined" is right only when the facts fix the relation but not the person's gender, so each
  gendered word (Uncle, Aunt) holds in some reading and neither in all.

Solvers see only the stated text. possible_answers enumerates every reading: for a pointing chain every
"already mentioned or someone new" and "either side" choice, then every gender of the people no word sexes
(checked against couples and "only" claims); for named facts every assignment of unstated genders, each closed by
family.close. The relation in a reading is named by its shortest kinship paths (family.PATHS). Generators draw
a hidden tree (family.random_tree), word it, and keep a puzzle only when the solver's single answer equals the hidden
tree's relation computed a different way (family.true_relation, by common ancestors); stats count each reason.

work(puzzle) -> {"steps", "hops", "log2_space", ...}: hops = kinship links the solver follows; steps = hops
plus every deduction on top (a person identified through "only" or a convention, a link derived by closure, a
gender inferred). log2_space = log2 of the answers open before any deduction: the answer vocabulary (VOCAB
relation words, or the 4 options of a which-question) times the readings the text admits before they are
pruned (pointing: the complete readings of the chain; coded: the m codes listed, any of which a symbol may be;
gender: the 2^u gender assignments of the u people no gendered word names).

This module is the families' public face; the work is done in pointing, coded and gender, on what
they share in words (vocabulary, the last checks) and facts (named facts solved by gender assignment).
"""

from __future__ import annotations

import random

from helpers.puzzles.kinship.coded import FORM_SHARES as CODED_FORMS
from helpers.puzzles.kinship.coded import (build_coded, coded_facts, explain_coded, expr_text, possible_coded,
                                           render_coded, work_coded)
from helpers.puzzles.kinship.facts import gender_models, relation_terms
from helpers.puzzles.kinship.gender import FORM_SHARES as GENDER_FORMS
from helpers.puzzles.kinship.gender import (CBD, build_gender, explain_gender, possible_gender, render_gender,
                                            statement_text, work_gender)
from helpers.puzzles.kinship.pointing import FORM_SHARES as POINTING_FORMS
from helpers.puzzles.kinship.pointing import (INLAW, build_pointing, explain_pointing, possible_pointing,
                                              render_pointing, work_pointing)

# CBD and INLAW are re-exported: tests and callers name them as kinship.CBD, kinship.INLAW
__all__ = ["KINDS", "CBD", "INLAW", "BUILDERS", "FORM_SHARES", "build", "render", "possible_answers", "relation_words",
           "explain", "in_choice_order", "work"]

KINDS = ("family_pointing", "family_coded", "family_gender")


# ---- the module interface -----------------------------------------------------------------------------------

BUILDERS = {"family_pointing": build_pointing, "family_coded": build_coded, "family_gender": build_gender}
FORM_SHARES = {"family_pointing": POINTING_FORMS, "family_coded": CODED_FORMS, "family_gender": GENDER_FORMS}


def build(rng: random.Random, names: list[tuple[str, str]], *, kind: str, level: int, stats: dict,
          form: str | None = None) -> dict | None:
    """One proven puzzle {"puzzle", "answer", "distractors"} of `kind` at `level`, or None (stats[reason] += 1); a
    question of `form` (one of FORM_SHARES[kind][level]), drawn by its share when not given."""
    if kind not in BUILDERS or level not in (1, 2, 3):
        raise ValueError(f"unknown kind/level {kind!r}/{level!r}; kinds are {KINDS}, levels 1-3")
    return BUILDERS[kind](rng, names, level, stats, form)


def render(puzzle: dict) -> str:
    """The question text, rendered only from the puzzle dict."""
    return {"family_pointing": render_pointing, "family_coded": render_coded,
            "family_gender": render_gender}[puzzle["kind"]](puzzle)


def possible_answers(puzzle: dict) -> set[str]:
    """Every answer the stated text allows (one element when the puzzle is sound)."""
    return {"family_pointing": possible_pointing, "family_coded": possible_coded,
            "family_gender": possible_gender}[puzzle["kind"]](puzzle)


def relation_words(puzzle: dict) -> set[str]:
    """Every relation word some reading of a relation question allows (before "Cannot be determined" sums it up)."""
    q = puzzle["question"]
    if puzzle["kind"] == "family_pointing":
        return possible_pointing(puzzle)
    if q[0] != "relation":
        raise ValueError(f"{puzzle['kind']} {q[0]!r} questions have options, not relation words")
    facts = coded_facts(puzzle) if puzzle["kind"] == "family_coded" else puzzle["facts"]
    return relation_terms(gender_models(facts), q[2], q[1])


def explain(puzzle: dict, answer: str) -> str:
    """The solver's deduction in a few sentences (under 100 words)."""
    return {"family_pointing": explain_pointing, "family_coded": explain_coded,
            "family_gender": explain_gender}[puzzle["kind"]](puzzle, answer)


def in_choice_order(puzzle: dict, choices: list[str]) -> dict:
    """The puzzle with a which-question's options (expressions, statements) in the order of the question's choices,
    so that its explanation lists them as the reader sees them (A-D); a puzzle without options as it is. ValueError
    when the choices are not its options."""
    if "options" not in puzzle:
        return puzzle
    text = {"family_coded": expr_text, "family_gender": statement_text}[puzzle["kind"]]
    by_text = {text(o): o for o in puzzle["options"]}
    if sorted(by_text) != sorted(choices):
        raise ValueError(f"the choices {choices} are not the {puzzle['kind']} puzzle's options {sorted(by_text)}")
    return dict(puzzle, options=[by_text[c] for c in choices])


def work(puzzle: dict) -> dict:
    """The solver's work: steps, hops and log2_space (defined in the module docstring), plus per-kind counts."""
    return {"family_pointing": work_pointing, "family_coded": work_coded,
            "family_gender": work_gender}[puzzle["kind"]](puzzle)
