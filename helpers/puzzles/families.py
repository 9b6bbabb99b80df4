"""The family contract, and the families registered under it in one module each (docs/new-topic.md walks a team
through adding one; tests/test_family_contract.py holds every registered family to each clause).

A family module has:
- KINDS (its kind, one name), TOPIC (the organisers' (topic, subtopic) it serves), KEYWORDS (words of a team's own
  subtopic that route it here, lower case), FAST (True when a level-3 puzzle builds in well under 0.1 s), and
  FORM_SHARES ({level: ((question form, share), ...)} for levels 1, 2 and 3, shares summing to 1);
- build(rng, names, *, kind, level, stats, form=None) -> {"puzzle", "answer", "distractors"} or None (stats counts
  why): a puzzle dict holding "kind" and everything its text is rendered from, the key's text and three wrong
  options, each proven wrong, drawn so that no blind strategy (helpers.puzzles.blind) finds the key above chance;
- render(puzzle) -> the question text, from the puzzle alone;
- parse(question, choices) -> (puzzle, None) when the text is in the family's words (render gives it back exactly),
  else (None, reason); "unknown_setup" means not this family's text at all;
- possible_answers(puzzle) -> every answer the text allows, found by listing every case (one when sound);
- deduce(puzzle, answer) -> steps, and check(puzzle, steps, answer) -> problems (empty: each step proven from
  exactly what it cites, the last concluding the answer); explain(puzzle, answer) -> the steps' text, under 100 words;
- work(puzzle) -> {"steps", "log2_space", ...}: the measured difficulty catalogue.score() reads, rising with the level.

The seating and blood-relation families (helpers.puzzles.seating, helpers.puzzles.kinship) came first and keep their
own dispatch in the catalogue; their deductions are helpers.puzzles.deduction's.
"""

from __future__ import annotations

from types import ModuleType

from helpers.puzzles import direction, series, syllogism, truth

MODULES: tuple[ModuleType, ...] = (truth, syllogism, series, direction)
BY_KIND: dict[str, ModuleType] = {kind: m for m in MODULES for kind in m.KINDS}
KINDS: tuple[str, ...] = tuple(BY_KIND)
TOPICS: dict[str, tuple[str, str]] = {kind: m.TOPIC for kind, m in BY_KIND.items()}
FAST_KINDS: tuple[str, ...] = tuple(kind for kind, m in BY_KIND.items() if m.FAST)
# Keywords of a team's own subtopic -> the families that serve it (helpers.agents.topics routes by them).
KEYWORDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = tuple((m.KEYWORDS, m.KINDS) for m in MODULES)


def module(kind: str) -> ModuleType | None:
    """The registered family module of a kind, or None for the first twelve families."""
    return BY_KIND.get(kind)


def parse(question: str, choices: list[str]) -> tuple[dict | None, str | None]:
    """The puzzle one registered family reads from a text, or (None, the reason of the family whose setup it is, or
    "unknown_setup")."""
    reason = "unknown_setup"
    for m in MODULES:
        puzzle, why = m.parse(question, choices)
        if puzzle is not None:
            return puzzle, None
        if why != "unknown_setup":
            reason = why or reason
    return None, reason
