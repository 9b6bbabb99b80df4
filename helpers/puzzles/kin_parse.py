"""Read a blood-relation question written in the generators' own words back into its structured puzzle, so the
solver can prove it (the family counterpart of helpers.puzzles.seat_parse). A text parses only when the puzzle
renders back to exactly that text. So far: the stated-facts family (helpers.puzzles.family).
"""

from __future__ import annotations

import re

from helpers.puzzles import family

_FACT = re.compile(r"([A-Z][a-z]*) is ([A-Z][a-z]*)'s (" + "|".join(family.REL_WORDS) + r")\.")
_RELATION = re.compile(r"How is ([A-Z][a-z]*) related to ([A-Z][a-z]*)\?")
_WHO = re.compile(r"Who is ([A-Z][a-z]*)'s ([a-z][a-z -]*)\?")
FACTS_INTRO = "In a family: "


def parse(text: str) -> tuple[dict | None, str | None]:
    """(the structured puzzle whose render is exactly `text`, None) or (None, why not)."""
    if not text.startswith(FACTS_INTRO):
        return None, "unknown_setup"
    body, _, ask = text[len(FACTS_INTRO):].rpartition(". ")
    facts = [[rel, a, b] for a, b, rel in _FACT.findall(body + ".")]
    relation, who = _RELATION.fullmatch(ask), _WHO.fullmatch(ask)
    if relation is None and who is None:
        return None, "unknown_question"
    question = ["relation", *relation.groups()] if relation else ["who", who.group(2), who.group(1)]
    puzzle = {"kind": "family", "facts": facts, "question": question}
    return (puzzle, None) if family.render(puzzle) == text else (None, "unknown_fact")
