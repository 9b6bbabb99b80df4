"""The challenge's topics file ({topic: [subtopic, ...]}), which generator serves a topic, and what a
harness prompt asks for (its "<topic>/<subtopic>" and, when it names one, the correct letter).
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import puzzles
from helpers.edition import check_topics
from helpers.puzzles import families
from helpers.io import InputError, read_json

# Keywords that route a team-added subtopic to a verified generator (the editions' own topics match exactly): the
# seating and kinship ones first, then the families of the contract (each names its own, helpers.puzzles.families).
GENERATOR_KEYWORDS = (
    (("nationalit", "attribute", "drink"), ("seating_attributes",)),
    (("facing outward", "facing out", "mixed facing"), ("seating_mixed_facing", "seating_row_facing")),
    (("parallel", "two rows", "facing rows"), ("seating_parallel_rows",)),
    (("square",), ("seating_square",)),
    (("rectangular", "rectangle"), ("seating_rectangle",)),
    (("circular", "round table"), ("seating_circular", "seating_attributes", "seating_mixed_facing")),
    (("linear", "row"), ("seating_linear", "seating_row_facing", "seating_parallel_rows")),
    (("seating", "seat", "sitting"), ("seating_linear", "seating_circular", "seating_attributes",
                                      "seating_mixed_facing", "seating_parallel_rows", "seating_row_facing",
                                      "seating_square", "seating_rectangle")),
    (("coded", "code"), ("family_coded",)),
    (("blood relation", "family", "generation", "kinship"), ("family", "family_pointing", "family_coded",
                                                             "family_gender")),
) + families.KEYWORDS
_LETTER_PATTERNS = (
    re.compile(r"option\s+\(?([A-D])\)?\s+is\s+(?:the\s+)?(?:only\s+)?(?:factually\s+)?correct", re.IGNORECASE),
    re.compile(r"correct\s+(?:answer|option|choice)\s+(?:must\s+be|should\s+be|is)\s+\(?([A-D])\)?\b"),
    re.compile(r"\"answer\"\s*:\s*\"([A-D])\""),
)


def read_topics(path: str | Path) -> dict[str, list[str]]:
    """{topic: [subtopics]} from a topics file; any other shape is an InputError naming the file and key."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "topics file not found")
    return check_topics(read_json(path), path)


def pairs(topics: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Every (topic, subtopic) in file order."""
    return [(t, s) for t, subs in topics.items() for s in subs]


def generator_kinds(topic: str, subtopic: str) -> tuple[str, ...]:
    """Puzzle kinds whose solver-proven questions fit this topic (empty: no generator, model or bank only)."""
    exact = tuple(k for k, ts in puzzles.TOPICS.items() if ts == (topic, subtopic))
    if exact:
        return exact
    text = f"{topic} {subtopic}".lower()
    for words, kinds in GENERATOR_KEYWORDS:
        if any(w in text for w in words):
            return kinds
    return ()


def families(topic: str, subtopic: str, kinds: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The topic's generator families among `kinds` (a profile's agents.puzzle_kinds), in the generator's order."""
    return tuple(k for k in generator_kinds(topic, subtopic) if k in kinds)


def provable_pairs(topics: dict, kinds: tuple[str, ...] | list[str]) -> list[tuple[str, str]]:
    """The (topic, subtopic) pairs of a topics file with a generator among `kinds`: where a writer can be proven."""
    return [(t, s) for t, s in pairs(topics) if set(generator_kinds(t, s)) & set(kinds)]


def resolve_topic(text: str, topics: dict[str, list[str]]) -> tuple[str, str] | None:
    """The (topic, subtopic) a prompt or label names: "topic/subtopic" first, then a subtopic, then a topic."""
    low = (text or "").lower()
    all_pairs = pairs(topics)
    for t, s in all_pairs:
        if f"{t}/{s}".lower() in low:
            return t, s
    for t, s in sorted(all_pairs, key=lambda p: -len(p[1])):  # the longest name first: no prefix steals a match
        if s.lower() in low:
            return t, s
    for t, s in sorted(all_pairs, key=lambda p: -len(p[0])):
        if t.lower() in low:
            return t, s
    return None


def requested_letter(text: str) -> str | None:
    """The correct letter a harness prompt asks for ("option C is the only correct ...", '"answer": "C"')."""
    for pattern in _LETTER_PATTERNS:
        match = pattern.search(text or "")
        if match:
            return match.group(1).upper()
    return None


def unserved_pairs(topics: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The (topic, subtopic) pairs no puzzle family of the kit writes (the Q-agent's writer or refusal takes them)."""
    return [(t, s) for t, s in pairs(topics) if not generator_kinds(t, s)]


def generator_table(topics: dict[str, list[str]]) -> list[dict]:
    """One row per (topic, subtopic): the puzzle generators that serve it, or who does when none fits."""
    return [{"topic": t, "subtopic": s, "generator": ", ".join(generator_kinds(t, s)) or "none: no family of the kit"}
            for t, s in pairs(topics)]
