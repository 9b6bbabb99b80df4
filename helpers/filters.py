"""The tournament's format filters (tournament-rules.md), re-implemented, plus the official Q-agent JSON shape.

Token counts use the agent's own tokenizer exactly as the organisers do:
`len(tokenizer.encode(text, add_special_tokens=False))`. Any object with that method works
(a transformers tokenizer, a `tokenizers.Tokenizer`, a test stub).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from helpers.records import RecordError, letter, make_record

QUESTION_KEYS = ("topic", "question", "choices", "answer")
# The rules' numbers: question+answer+choices tokens minus 15 must stay under 130, and with the
# explanation at most 1024; an answer under 50 tokens and answer+reasoning under 512.
QUESTION_SLACK = 15
QUESTION_LIMIT = 130
QUESTION_TOTAL_LIMIT = 1024
ANSWER_LIMIT = 50
ANSWER_TOTAL_LIMIT = 512
ANSWER_LETTERS = "ABCDabcd"
_PREFIX = re.compile(r"^\s*([A-Da-d])\s*[).:]\s*")


@dataclass
class FilterResult:
    """Whether one item passes, the short reason code when it does not, and the token counts seen."""

    ok: bool
    reason: str | None = None
    tokens: dict = field(default_factory=dict)


def count_tokens(text: str, tokenizer: Any) -> int:
    """Token count as the organisers take it: encode(text, add_special_tokens=False)."""
    encoded = tokenizer.encode(text, add_special_tokens=False)
    ids = getattr(encoded, "ids", encoded)  # a `tokenizers.Encoding` carries its ids in .ids
    return len(ids)


def check_question(q: Any, tokenizer: Any) -> FilterResult:
    """Apply the Q-agent format filter to one question object."""
    if not isinstance(q, dict):
        return FilterResult(False, "not_an_object")
    for key in QUESTION_KEYS:
        if key not in q:
            return FilterResult(False, f"missing_{key}")
    choices = q["choices"]
    if not isinstance(choices, list):
        return FilterResult(False, "choices_not_list")
    if len(choices) != 4:
        return FilterResult(False, "not_four_choices")
    for choice in choices:
        if not isinstance(choice, str):
            return FilterResult(False, "choice_not_string")
        if len(choice) <= 2:
            return FilterResult(False, "choice_too_short")
        if choice[0].upper() not in "ABCD":
            return FilterResult(False, "choice_bad_letter")
    if not isinstance(q["answer"], str):
        return FilterResult(False, "answer_not_string")
    if not isinstance(q["question"], str):
        return FilterResult(False, "question_not_string")
    tokens = {"question": count_tokens(q["question"], tokenizer), "answer": count_tokens(q["answer"], tokenizer),
              "choices": sum(count_tokens(c, tokenizer) for c in choices)}
    tokens["core"] = tokens["question"] + tokens["answer"] + tokens["choices"] - QUESTION_SLACK
    if tokens["core"] >= QUESTION_LIMIT:
        return FilterResult(False, "question_too_long", tokens)
    # The rules count the string "None" only when the key is ABSENT (`q.get("explanation", "None")`): a present
    # null reaches the organisers' tokenizer as None and fails there, so it fails here too.
    explanation = q.get("explanation", "None")
    if not isinstance(explanation, str):
        return FilterResult(False, "explanation_not_string", tokens)
    tokens["explanation"] = count_tokens(explanation, tokenizer)
    tokens["total"] = tokens["core"] + tokens["explanation"]
    if tokens["total"] > QUESTION_TOTAL_LIMIT:
        return FilterResult(False, "explanation_too_long", tokens)
    return FilterResult(True, None, tokens)


def check_answer(a: Any, tokenizer: Any) -> FilterResult:
    """Apply the A-agent format filter to one answer object."""
    if not isinstance(a, dict):
        return FilterResult(False, "not_an_object")
    if "answer" not in a:
        return FilterResult(False, "missing_answer")
    answer = a["answer"]
    if not isinstance(answer, str):
        return FilterResult(False, "answer_not_string")
    if len(answer) == 1 and answer not in ANSWER_LETTERS:
        return FilterResult(False, "bad_letter")
    tokens = {"answer": count_tokens(answer, tokenizer)}
    if tokens["answer"] >= ANSWER_LIMIT:
        return FilterResult(False, "answer_too_long", tokens)
    reasoning = a.get("reasoning", "None")  # absent counts as "None"; a present null fails (see check_question)
    if not isinstance(reasoning, str):
        return FilterResult(False, "reasoning_not_string", tokens)
    tokens["reasoning"] = count_tokens(reasoning, tokenizer)
    tokens["total"] = tokens["answer"] + tokens["reasoning"]
    if tokens["total"] >= ANSWER_TOTAL_LIMIT:
        return FilterResult(False, "reasoning_too_long", tokens)
    return FilterResult(True, None, tokens)


def filter_questions(questions: list, tokenizer: Any) -> tuple[list, Counter]:
    """Keep the format-correct questions; count every dropped one by reason."""
    kept: list = []
    dropped: Counter = Counter()
    for q in questions:
        result = check_question(q, tokenizer)
        if result.ok:
            kept.append(q)
        else:
            dropped[result.reason] += 1
    return kept, dropped


def filter_answers(answers: list, tokenizer: Any) -> tuple[list, Counter]:
    """Replace each failing answer by None (as the harness does, so positions still line up); count reasons."""
    out: list = []
    dropped: Counter = Counter()
    for a in answers:
        result = check_answer(a, tokenizer)
        out.append(a if result.ok else None)
        if not result.ok:
            dropped[result.reason] += 1
    return out, dropped


def to_official_question(record: dict, topic_label: str) -> dict:
    """A shared record with 4 choices -> the Q-agent JSON: lettered choices, the answer letter, the explanation."""
    choices = record.get("choices")
    if not isinstance(choices, list) or len(choices) != 4:
        n = len(choices) if isinstance(choices, list) else type(choices).__name__
        raise RecordError("not_four_choices", f"the tournament needs exactly 4 choices, got {n}",
                          where=record.get("id"), field="choices")
    out = {"topic": topic_label, "question": record["question"],
           "choices": [f"{letter(i)}) {c}" for i, c in enumerate(choices)],
           "answer": letter(record["answer"])}
    if record.get("explanation"):
        out["explanation"] = record["explanation"]
    return out


def letter_of(official_question: dict) -> str:
    """The correct letter as the reference scorer reads it: the first character of "answer" ("" when empty:
    the filter lets an empty key through, and no answer can match it)."""
    return official_question["answer"][:1]


def from_official_question(q: dict, *, id: str, source: str, origin: str = "converted") -> dict:
    """The Q-agent JSON -> a shared record (letter prefixes stripped, answer letter -> index)."""
    choices = [_PREFIX.sub("", c, count=1) for c in q["choices"]]
    answer = "ABCD".index(letter_of(q).upper())
    return make_record(id=id, source=source, question=q["question"], choices=choices, answer=answer,
                       explanation=q.get("explanation") or "", topic=q.get("topic", ""), origin=origin)
