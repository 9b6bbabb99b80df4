"""Turn whatever reaches the A-agent into (question, plain choices), noting every repair made on the way.

Accepted: the official question JSON (choices "A) ..."), the shared record, choices as a dict
{"A": ...} (the original team's format) or without letter prefixes, a JSON string of any of those, and the
harness's prompt text with its `Question: ...` and `Choices: A) ... B) ...` lines. Anything that
cannot give a question and at least two choices comes back as a reason, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from helpers.agents.json_repair import extract_json
from helpers.prompts import MAX_CHOICES
from helpers.records import LETTERS

# ~4 characters per token: 6,000 characters keep a question near 1,500 tokens, enough for any real
# puzzle (the filter's own limit is 130 tokens) while a 1 MB blob cannot stall a 6 s answer.
MAX_QUESTION_CHARS = 6000
MAX_CHOICE_CHARS = 600
_PREFIX = re.compile(r"^\s*[\(\[]?([A-Ja-j])\s*[).:\]]\s*")
_QUESTION = re.compile(r"(?:^|\n)\s*\**Question\**\s*[:\-]\s*", re.IGNORECASE)
_CHOICES = re.compile(r"\n\s*\**(?:Choices|Options)\**\s*[:\-]?\s*", re.IGNORECASE)


@dataclass
class ParsedQuestion:
    """A question ready for letter scoring (`ok`), or the reason it is not; `notes` lists repairs made."""

    question: str = ""
    choices: list[str] = field(default_factory=list)
    reason: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the question can be scored."""
        return self.reason is None

    def item(self) -> dict:
        """The {"question", "choices"} item letter scoring takes."""
        return {"question": self.question, "choices": list(self.choices)}


def _clip(text: str, limit: int, notes: list[str], note: str) -> str:
    if len(text) <= limit:
        return text
    notes.append(note)
    half = limit // 2  # keep the start (the setting) and the end (the ask): both matter in a puzzle
    return text[:half] + " ... " + text[-half:]


def strip_prefix(choice: str) -> str:
    """'B) Ben' -> 'Ben'; text without a letter prefix is returned unchanged."""
    return _PREFIX.sub("", choice, count=1)


def split_lettered(text: str) -> list[str]:
    """'A) x B) y C) z' (one line or several) -> ['x', 'y', 'z']: markers must run A, B, C... in order."""
    starts: list[tuple[int, int]] = []
    pos = 0
    for letter_ in LETTERS:
        pattern = re.compile(rf"(?:^|(?<=\s)|(?<=[(\[]))[\(\[]?{letter_}\s*[).:\]]\s*")
        match = pattern.search(text, pos)
        if not match:
            break
        starts.append((match.start(), match.end()))
        pos = match.end()
    out = []
    for k, (_, body) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(text)
        out.append(text[body:end].strip())
    return out


def parse_prompt_text(text: str) -> tuple[str, list[str]] | None:
    """The harness's A-side prompt -> (question, choices) from its 'Question:' and 'Choices:' lines."""
    q = _QUESTION.search("\n" + text)
    if not q:
        return None
    rest = ("\n" + text)[q.end():]
    c = _CHOICES.search(rest)
    if not c:
        return None
    question = rest[:c.start()].strip()
    block = rest[c.end():]
    block = re.split(r"\n\s*\n", block, maxsplit=1)[0]  # the choices end at the first blank line
    choices = split_lettered(block)
    if choices and "\n" in choices[-1]:
        choices[-1] = choices[-1].split("\n", 1)[0].strip()  # instructions glued under the last choice
    return question, choices


def _choices_from(value: Any, notes: list[str]) -> list[str] | None:
    if isinstance(value, dict):
        notes.append("choices_dict")
        keys = sorted((k for k in value if isinstance(k, str) and k.strip().upper() in LETTERS),
                      key=lambda k: k.strip().upper())
        return [str(value[k]) for k in keys] or [str(v) for v in value.values()]
    if isinstance(value, str):
        notes.append("choices_text")
        return split_lettered(value)
    if isinstance(value, (list, tuple)):
        out = []
        for c in value:
            if not isinstance(c, str):
                notes.append("choice_not_text")
                c = "" if c is None else str(c)
            out.append(c)
        if out and not all(_PREFIX.match(c) for c in out):
            notes.append("choices_unlettered")
        return [strip_prefix(c).strip() for c in out]
    return None


def parse_question(obj: Any) -> ParsedQuestion:
    """Any A-agent input -> ParsedQuestion (ok, or a reason such as missing_question / too_few_choices)."""
    notes: list[str] = []
    if isinstance(obj, (bytes, bytearray)):
        obj = obj.decode("utf-8", errors="replace")
    if isinstance(obj, str):
        parsed, how = extract_json(obj)
        # The harness's prompt carries a JSON example ({"answer": ...}) too: its Question/Choices lines win
        # unless the JSON itself is a question.
        found = None if isinstance(parsed, dict) and "question" in parsed else parse_prompt_text(obj)
        if found is not None:
            notes.append("prompt_text")
            obj = {"question": found[0], "choices": [f"{LETTERS[i]}) {c}" for i, c in enumerate(found[1])]}
        elif parsed is not None:
            notes.append(f"json_{how}")
            obj = parsed
        else:
            return ParsedQuestion(reason="unparseable_text", notes=notes)
    if not isinstance(obj, dict):
        return ParsedQuestion(reason="not_an_object", notes=notes)
    question = obj.get("question")
    if question is None:
        return ParsedQuestion(reason="missing_question", notes=notes)
    if not isinstance(question, str):
        notes.append("question_not_text")
        question = str(question)
    question = question.strip()
    if not question:
        return ParsedQuestion(reason="empty_question", notes=notes)
    question = _clip(question, MAX_QUESTION_CHARS, notes, "question_clipped")
    if "choices" not in obj or obj["choices"] is None:
        return ParsedQuestion(question=question, reason="missing_choices", notes=notes)
    choices = _choices_from(obj["choices"], notes)
    if choices is None:
        return ParsedQuestion(question=question, reason="choices_not_a_list", notes=notes)
    choices = [_clip(c.strip(), MAX_CHOICE_CHARS, notes, "choice_clipped") for c in choices]
    if len(choices) < 2:
        return ParsedQuestion(question=question, choices=choices, reason="too_few_choices", notes=notes)
    if len(choices) != 4:
        notes.append(f"{len(choices)}_choices")
    if len(choices) > MAX_CHOICES:
        choices = choices[:MAX_CHOICES]
    return ParsedQuestion(question=question, choices=choices, notes=notes)
