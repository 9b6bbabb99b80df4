"""What all three blood-relation families (pointing, coded, gender) share.

The answer vocabulary (relation words by key and gender, Himself/Herself, nearby relations for distractors), the
question wordings and tree sizes, the relation key of a set of shortest paths, and the last checks every built
puzzle passes (accept: distractors, length and explanation limits; check: the solver proves the hidden answer).
Kind bundles a family's render, solver and explanation, which accept and check call back.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import NamedTuple

from helpers.puzzles import blind
from helpers.puzzles.kinship import key_shares, tree as fam

MAX_CHARS = 400  # question + answer letter + "A) ..." choices, counted as puzzles.official_length does
MAX_WORDS = 100  # explanations stay under the organisers' 100 words
UNNAMED = "No single word"
SELF = ("Himself", "Herself")
OPP = {"m": "f", "f": "m"}
INV = {"P": "C", "C": "P", "S": "S", "H": "H"}
# tree.py's TERMS plus the speaker himself: 15 keys x 2 genders + Himself/Herself = 32 answer words
VOCAB = 2 * len(fam.TERMS) + 2
NEAR = {**fam.NEAR, "self": ("sibling", "child", "parent", "cousin"),
        "parent": ("uncle", "grandparent", "parent-in-law", "sibling"),
        "child": ("nephew", "grandchild", "child-in-law", "sibling"),
        "sibling": ("self", "cousin", "sibling-in-law", "nephew"),
        "spouse": ("sibling-in-law", "sibling", "child-in-law", "cousin")}
NEAR_WEIGHT = 3.0  # a nearby relation is this much likelier a distractor than any other word (plausible traps)
ASK = fam.ASK  # the relation question's wordings, shared with the stated-facts family
GENS = {1: 3, 2: 3, 3: 4}  # hidden-tree generations: level 3 reaches great-grandparents


class Kind(NamedTuple):
    """One puzzle family's text, solver and explanation, as accept and check call them."""

    render: Callable[[dict], str]
    possible: Callable[[dict], set[str]]
    explain: Callable[[dict, str], str]


def reject(stats: dict, reason: str) -> None:
    """Count one rejection by reason."""
    stats[reason] = stats.get(reason, 0) + 1


def term_for(key: str, g: str | None) -> str:
    """The relation word for a key and the gender of the person it names."""
    if key == "self":
        return SELF[g == "f"]
    return fam.TERMS[key][g == "f"]


def _length(question: str, choices: list[str]) -> int:
    """Characters the 130-token filter covers: question, answer letter and the four "A) ..." choices."""
    return len(question) + 1 + sum(3 + len(c) for c in choices)


def near_terms(key: str, g: str, rng: random.Random, exclude: set[str], *, kind: str, level: int,
               with_self: bool = False, target: dict[str, float] | None = None) -> list[str]:
    """Three wrong relation words of gender g, each weighted by how often it is the family's key at this level
    (key_shares) and nearby relations (uncle for cousin, ...) NEAR_WEIGHT times more (Himself/Herself too where the
    speaker may be the answer), drawn by blind.balanced so that each option-only rule (most similar, longest, ...)
    finds the key 1 time in 4, or as often as target says."""
    keys = sorted(fam.TERMS) + ["self"] * with_self
    pool = [term_for(k, g) for k in keys if term_for(k, g) not in exclude]
    near = {term_for(k, g): NEAR_WEIGHT for k in NEAR.get(key, ())}
    return blind.balanced(term_for(key, g), pool, rng, weights=key_shares.weights(kind, level, pool, near),
                          target=target)


def key_of(labels: set[str]) -> str | None:
    """The one relation key all shortest paths agree on ("" is the person himself), or None."""
    keys = {"self" if s == "" else fam.PATHS.get(s) for s in labels}
    return keys.pop() if len(keys) == 1 and None not in keys else None


def accept(p: dict, answer: str, distractors: list[str], stats: dict, kind: Kind) -> dict | None:
    """The built puzzle once it fits: 3 distractors, under MAX_CHARS, explanation under MAX_WORDS."""
    if len(set(distractors)) < 3 or answer in distractors:
        return reject(stats, "few_distractors")
    if _length(kind.render(p), [answer] + distractors) >= MAX_CHARS:
        return reject(stats, "too_long")
    if len(kind.explain(p, answer).split()) >= MAX_WORDS:
        return reject(stats, "long_explanation")
    return {"puzzle": p, "answer": answer, "distractors": distractors[:3]}


def check(p: dict, truth: str, distractors: list[str], stats: dict, kind: Kind) -> dict | None:
    """Keep the puzzle only when the solver proves exactly the hidden tree's answer."""
    proven = kind.possible(p)
    if proven != {truth}:
        return reject(stats, "solver_disagrees" if len(proven) == 1 and UNNAMED not in proven else "undetermined")
    if any(d in proven for d in distractors):
        return reject(stats, "distractor_possible")
    return accept(p, truth, distractors, stats, kind)
