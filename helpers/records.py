"""The one record everything shares: a multiple-choice question as one JSON line.

`{"id", "source", "question", "choices": [..], "answer": <index>, "explanation", "topic",
"difficulty", "origin": "native"|"converted"|"generated"}`. Letters are derived from the index.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from helpers.io import InputError

LETTERS = "ABCDEFGHIJ"
ORIGINS = ("native", "converted", "generated")
FIELDS = ("id", "source", "question", "choices", "answer", "explanation", "topic", "difficulty", "origin")


class RecordError(InputError):
    """A record that breaks the schema; `reason` is the short code the drop report counts by."""

    def __init__(self, reason: str, problem: str, path: Any = None, where: Any = None, field: str | None = None):
        self.reason = reason
        super().__init__(path, where, field, problem)


def letter(index: int) -> str:
    """The letter of a choice index (0 -> 'A')."""
    return LETTERS[index]


def index_of(letter_: str) -> int:
    """The choice index of a letter ('b' -> 1)."""
    return LETTERS.index(letter_.strip().upper())


def normalize_text(text: str) -> str:
    """Comparison key for dedupe and distractor checks: NFKC, casefold, single spaces, no edge punctuation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(text.split()).strip(" .,;:!?\"'")


def contains_any(text: str, parts: tuple[str, ...]) -> bool:
    """True if any of the parts occurs in text (a plain loop: twice as quick as any() over a generator)."""
    for part in parts:
        if part in text:
            return True
    return False


def choice_key(text: str) -> str:
    """Key for duplicate choices: capitalisation folds ("Water" = "water"), case inside a word is meaning.

    ARC offers "CC only" and "Cc only" (genotypes) and chemistry has "Co" vs "CO": those stay distinct.
    """
    text = unicodedata.normalize("NFKC", text)
    if text == text.lower():  # nothing to fold (most choices): skip the per-word pass, same result
        return " ".join(text.split()).strip(" .,;:!?\"'")
    words = (w[0].lower() + w[1:] if w[1:] == w[1:].lower() else w for w in text.split())
    return " ".join(words).strip(" .,;:!?\"'")


def make_record(*, id: str, source: str, question: str, choices: list[str], answer: int,
                explanation: str = "", topic: str = "", difficulty: float | None = None,
                origin: str = "native") -> dict:
    """Build a record in the canonical field order."""
    return {"id": id, "source": source, "question": question, "choices": list(choices), "answer": answer,
            "explanation": explanation, "topic": topic, "difficulty": difficulty, "origin": origin}


# U+FFFD is what a failed decode leaves behind; lone surrogates come from `surrogateescape` reads.
_UNDECODABLE = re.compile("[\ufffd\ud800-\udfff]")
_FIELD_SET = frozenset(FIELDS)


def undecodable(text: str) -> bool:
    """True if text holds U+FFFD or a lone surrogate; ASCII text cannot (a flag on the string: no scan)."""
    return not text.isascii() and _UNDECODABLE.search(text) is not None


def _text(value: Any, field: str, path: Any, where: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise RecordError("non_text_field", f"expected text, got {type(value).__name__}", path, where, field)
    if undecodable(value):
        raise RecordError("bad_encoding", "contains undecodable characters (U+FFFD or surrogates)", path, where, field)
    value = value.strip()
    if not value and not allow_empty:
        raise RecordError("empty_text", "is empty", path, where, field)
    return value


def _optional_text(value: Any, field: str, path: Any, where: Any) -> str:
    """_text() of a field that may be empty or missing (any false value is "")."""
    return _text(value, field, path, where, allow_empty=True) if value else ""


def _choice_texts(choices: list, path: Any, where: Any) -> list[str]:
    """_text() of every choice; the common case (non-empty, decodable str) skips formatting a field name."""
    out = []
    for i, c in enumerate(choices):
        s = c.strip() if type(c) is str and not undecodable(c) else ""
        out.append(s or _text(c, f"choices[{i}]", path, where))
    return out


def validate(rec: Any, path: Any = None, where: Any = None) -> dict:
    """Check a record against the schema and return it normalised; raise RecordError with a reason code."""
    if not isinstance(rec, dict):
        raise RecordError("not_an_object", f"expected an object, got {type(rec).__name__}", path, where)
    for field in ("question", "choices", "answer"):
        if field not in rec or rec[field] is None:
            raise RecordError("missing_field", "is missing", path, where, field)
    question = _text(rec["question"], "question", path, where)
    choices = rec["choices"]
    if not isinstance(choices, list):
        raise RecordError("non_text_field", f"expected a list, got {type(choices).__name__}", path, where, "choices")
    choices = _choice_texts(choices, path, where)
    if len(choices) < 2:
        raise RecordError("too_few_choices", f"has {len(choices)} choice(s), need at least 2", path, where, "choices")
    if len(choices) > len(LETTERS):
        raise RecordError("too_many_choices", f"has {len(choices)} choices, at most {len(LETTERS)}", path, where, "choices")
    if len(set(map(choice_key, choices))) != len(choices):
        raise RecordError("duplicate_choices", "two choices are the same after normalisation", path, where, "choices")
    answer = rec["answer"]
    if isinstance(answer, bool) or not isinstance(answer, int):
        raise RecordError("non_integer_answer", f"expected a choice index, got {answer!r}", path, where, "answer")
    if not 0 <= answer < len(choices):
        raise RecordError("answer_out_of_range", f"index {answer} but {len(choices)} choices", path, where, "answer")
    origin = rec.get("origin") or "native"
    if origin not in ORIGINS:
        raise RecordError("bad_origin", f"{origin!r} is not one of {ORIGINS}", path, where, "origin")
    difficulty = rec.get("difficulty")
    if difficulty is not None and (isinstance(difficulty, bool) or not isinstance(difficulty, (int, float))):
        raise RecordError("non_numeric_difficulty", f"expected a number or null, got {difficulty!r}", path, where, "difficulty")
    out = make_record(
        id=str(rec.get("id") or ""), source=str(rec.get("source") or "unknown"), question=question,
        choices=choices, answer=answer,
        explanation=_optional_text(rec.get("explanation"), "explanation", path, where),
        topic=_optional_text(rec.get("topic"), "topic", path, where),
        difficulty=None if difficulty is None else float(difficulty), origin=origin,
    )
    if not rec.keys() <= _FIELD_SET:  # extra keys (chunk, replay flags, ...) ride along untouched
        out.update({k: v for k, v in rec.items() if k not in _FIELD_SET})
    return out


def dedupe_key(rec: dict) -> str:
    """Normalised question + sorted normalised choices: the same question with shuffled choices is a duplicate."""
    return normalize_text(rec["question"]) + "\x1f" + "\x1f".join(sorted(map(normalize_text, rec["choices"])))
