"""The tournament's format filters (tournament-rules.md), re-implemented, plus the official Q-agent JSON shape.

Token counts use the agent's own tokenizer exactly as the organisers do:
`len(tokenizer.encode(text, add_special_tokens=False))`. Any object with that method works
(a transformers tokenizer, a `tokenizers.Tokenizer`, a test stub). The bounds are an edition's (helpers.edition:
which keys count, the bound, the explanation's allowance, the answer's); a call that passes none is held to the
default edition's (the October 2025 rules: question + answer + choices - 15 under 130, with the explanation at most
1,024; an answer under 50 tokens, with its reasoning under 512).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from helpers import edition as edition_mod
from helpers.edition import AnswerRules, QuestionRules
from helpers.records import RecordError, letter, make_record

QUESTION_KEYS = ("topic", "question", "choices", "answer")
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


def check_question(q: Any, tokenizer: Any, rules: QuestionRules | None = None) -> FilterResult:
    """Apply the Q-agent format filter to one question object (an edition's rules, else the default edition's)."""
    rules = rules or edition_mod.default().question_rules
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
    if "topic" in rules.counts and not isinstance(q["topic"], str):
        return FilterResult(False, "topic_not_string")
    tokens = {key: (sum(count_tokens(c, tokenizer) for c in choices) if key == "choices"
                    else count_tokens(q[key], tokenizer)) for key in rules.counts}
    tokens["core"] = sum(tokens[key] for key in rules.counts) - rules.minus
    if tokens["core"] > rules.max_core:
        return FilterResult(False, "question_too_long", tokens)
    # The rules count the string "None" only when the key is ABSENT (`q.get("explanation", "None")`): a present
    # null reaches the organisers' tokenizer as None and fails there, so it fails here too.
    explanation = q.get("explanation", "None")
    if not isinstance(explanation, str):
        return FilterResult(False, "explanation_not_string", tokens)
    tokens["explanation"] = count_tokens(explanation, tokenizer)
    tokens["total"] = tokens["core"] + tokens["explanation"]
    if tokens["total"] > rules.total_at_most:
        return FilterResult(False, "explanation_too_long", tokens)
    return FilterResult(True, None, tokens)


def check_answer(a: Any, tokenizer: Any, rules: AnswerRules | None = None) -> FilterResult:
    """Apply the A-agent format filter to one answer object (an edition's rules, else the default edition's)."""
    rules = rules or edition_mod.default().answer_rules
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
    if tokens["answer"] >= rules.answer_under:
        return FilterResult(False, "answer_too_long", tokens)
    reasoning = a.get("reasoning", "None")  # absent counts as "None"; a present null fails (see check_question)
    if not isinstance(reasoning, str):
        return FilterResult(False, "reasoning_not_string", tokens)
    tokens["reasoning"] = count_tokens(reasoning, tokenizer)
    tokens["total"] = tokens["answer"] + tokens["reasoning"]
    if tokens["total"] >= rules.total_under:
        return FilterResult(False, "reasoning_too_long", tokens)
    return FilterResult(True, None, tokens)


def filter_questions(questions: list, tokenizer: Any, rules: QuestionRules | None = None) -> tuple[list, Counter]:
    """Keep the format-correct questions; count every dropped one by reason."""
    kept: list = []
    dropped: Counter = Counter()
    for q in questions:
        result = check_question(q, tokenizer, rules)
        if result.ok:
            kept.append(q)
        else:
            dropped[result.reason] += 1
    return kept, dropped


def filter_answers(answers: list, tokenizer: Any, rules: AnswerRules | None = None) -> tuple[list, Counter]:
    """Replace each failing answer by None (as the harness does, so positions still line up); count reasons."""
    out: list = []
    dropped: Counter = Counter()
    for a in answers:
        result = check_answer(a, tokenizer, rules)
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
