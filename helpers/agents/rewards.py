"""Verifiable rewards for the reasoning A-agent's reinforcement stage (helpers.agents.stages.reasoner_rl), computed
exactly by the kit, in TRL's reward-function form `f(prompts, completions, **dataset_columns) -> list[float]`:

    correct  1 when the letter after "Answer:" (helpers.agents.reasoner's mark) is the solver's key, else 0
    format   1 when the reply, as an answer object, passes the organisers' answer filter (helpers.filters)
    length   1 when the reasoning (the text before the mark, the tokens the agent writes before it scores the letter)
             is inside the token budget, then falling by 1 for each further budget's worth of tokens, down to -1:
             the count the reasoner's chats are held to (helpers.agents.reasoner.token_budget)

Bad input never stops a run: an empty completion or a reply with no letter after the mark gives that completion 0
from every reward, a reward that raises gives 0 from that reward, and each reason is counted in RewardBook.reasons
(the stage reports it).
A completion is a plain string or a conversation (a list of {"role", "content"} messages, as TRL passes
conversational prompts' completions). Nothing here imports torch or transformers.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from helpers import filters
from helpers.agents.reasoner import ANSWER_MARK
from helpers.edition import AnswerRules
from helpers.records import LETTERS

REWARDS = ("correct", "format", "length")  # the reward functions, in the order make_rewards returns them
LENGTH_FLOOR = -1.0  # the length reward's lowest value: 2 budgets over the budget, or more
SAMPLES_KEPT = 64  # completions kept (id, letter, key, rewards) for the stage's report and its test
_LETTER = re.compile(r"^\s*[*(\[]*\s*([A-J])(?![A-Za-z0-9])")  # "Answer: B", "Answer: **B**", "Answer: (B) Hari"


COUNTERS = ("calls", "scored", "reasons", "sums", "kind_scored", "kind_sums", "half_scored", "half_sums")  # kept


@dataclass
class RewardBook:
    """What the rewards saw: calls and completions per reward, zeros by reason, the sum of each reward (overall and
    per puzzle family, "<kind>/<reward>"; and per family in each half of the run, "<half>/<kind>/<reward>", when
    `half` says how many completions the first half scores), and the last SAMPLES_KEPT scored completions (for the
    report: the letters read and the keys they were held against)."""
    calls: Counter = field(default_factory=Counter)
    scored: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)
    sums: Counter = field(default_factory=Counter)
    kind_scored: Counter = field(default_factory=Counter)
    kind_sums: Counter = field(default_factory=Counter)
    half_scored: Counter = field(default_factory=Counter)
    half_sums: Counter = field(default_factory=Counter)
    samples: list = field(default_factory=list)
    half: int = 0  # completions in the run's first half (0: no halves kept)

    def add(self, name: str, value: float, kind: Any) -> None:
        """One completion's reward `name`, counted overall and under its family (when the row names one), and under
        the half of the run it falls in."""
        self.scored[name] += 1
        self.sums[name] += value
        if isinstance(kind, str):
            self.kind_scored[f"{kind}/{name}"] += 1
            self.kind_sums[f"{kind}/{name}"] += value
            if self.half:
                at = f"{'first' if self.scored[name] <= self.half else 'last'}/{kind}/{name}"
                self.half_scored[at] += 1
                self.half_sums[at] += value

    def means(self) -> dict:
        """Each reward's mean over every completion it scored (None before any)."""
        return {name: round(self.sums[name] / self.scored[name], 4) if self.scored[name] else None for name in REWARDS}

    def means_by_kind(self) -> dict:
        """{family: {reward: mean}} over the completions of each puzzle family."""
        out: dict = {}
        for key, n in sorted(self.kind_scored.items()):
            kind, name = key.rsplit("/", 1)
            out.setdefault(kind, {})[name] = round(self.kind_sums[key] / n, 4)
        return out

    def means_by_half(self) -> dict:
        """{family: {"first": {reward: mean}, "last": {reward: mean}}}: each family's rewards in the run's first half
        and in its second (before and after most of the learning)."""
        out: dict = {}
        for key, n in sorted(self.half_scored.items()):
            half, kind, name = key.split("/", 2)
            out.setdefault(kind, {}).setdefault(half, {})[name] = round(self.half_sums[key] / n, 4)
        return out

    def state(self) -> dict:
        """The counters as JSON (a checkpoint keeps them; restore() reads them back)."""
        return {name: dict(getattr(self, name)) for name in COUNTERS}

    def restore(self, saved: dict) -> None:
        """Add the counters a checkpoint kept, so a resumed run reports the whole run."""
        for name in COUNTERS:
            getattr(self, name).update(saved.get(name, {}))


def completion_text(completion: Any) -> str:
    """The text a completion holds: a string as it is; a conversation's assistant turns joined (TRL gives one)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        parts = [m.get("content") for m in completion
                 if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
        if all(isinstance(p, str) for p in parts):
            return "".join(parts)
    raise TypeError(f"completion: expected text or a list of messages, got {type(completion).__name__}")


def answer_letter(text: str) -> str | None:
    """The letter after the first "Answer:" (as helpers.agents.reasoner.reasoning_of reads the mark), else None."""
    _, mark, after = text.partition(ANSWER_MARK)
    if not mark:
        return None
    found = _LETTER.match(after)
    return found.group(1) if found else None


def answer_object(text: str, letter_: str) -> dict:
    """The reply as the A-agent's answer object: the letter, and everything written before the mark as reasoning."""
    return {"answer": letter_, "reasoning": " ".join(text.partition(ANSWER_MARK)[0].split())}


def length_reward(tokens: int, budget: int) -> float:
    """1 for up to `budget` tokens; past it, 1 - (tokens - budget) / budget, never under LENGTH_FLOOR."""
    if tokens <= budget:
        return 1.0
    return max(LENGTH_FLOOR, 1.0 - (tokens - budget) / budget)


class Unscorable(ValueError):
    """A completion with nothing to score: its reason ("empty", "no_letter") is what the book counts."""


def _check(completion: Any) -> tuple[str, str]:
    """(text, letter) of a completion; Unscorable("empty" | "no_letter") when it has none to score."""
    text = completion_text(completion)
    if not text.strip():
        raise Unscorable("empty")
    letter_ = answer_letter(text)
    if letter_ is None:
        raise Unscorable("no_letter")
    return text, letter_


def _row(columns: dict, i: int) -> dict:
    """Row i of the dataset columns TRL passes (each a list over the completions)."""
    return {k: v[i] for k, v in columns.items() if isinstance(v, (list, tuple)) and len(v) > i}


def guarded(name: str, score: Callable[[str, str, dict], float], book: RewardBook) -> Callable[..., list[float]]:
    """A TRL reward function named `name`: score(text, letter, row) per completion; an empty one, one without a letter,
    or a score that raises gives 0, counted in book.reasons as "<name>:<reason>"."""
    def reward(prompts: Sequence[Any] = (), completions: Sequence[Any] = (), **columns: Any) -> list[float]:
        book.calls[name] += 1
        out = []
        for i, completion in enumerate(completions):
            row = _row(columns, i)
            try:
                text, letter_ = _check(completion)
                value = float(score(text, letter_, row))
            except Unscorable as exc:
                value = 0.0
                book.reasons[f"{name}:{exc}"] += 1
            except Exception as exc:  # a reward that raises never stops the run: a counted zero
                value = 0.0
                book.reasons[f"{name}:error:{type(exc).__name__}"] += 1
            book.add(name, value, row.get("kind"))
            out.append(value)
        return out
    reward.__name__ = reward.__qualname__ = name  # TRL logs rewards/<name>/mean by the function's name
    return reward


def make_rewards(tokenizer: Any, budget: int, book: RewardBook | None = None,
                 rules: AnswerRules | None = None) -> tuple[list[Callable], RewardBook]:
    """The three rewards (REWARDS order) for TRL's reward_funcs, and the book they write to. `budget`: the tokens the
    reasoning may take inside the answer time limit (the caller derives it from the limit); `tokenizer` counts them
    as the organisers do (helpers.filters.count_tokens); `rules`: the edition's answer filter (None: the default
    edition's)."""
    if int(budget) < 1:
        raise ValueError(f"budget: expected at least 1 token, got {budget!r}")
    book = book if book is not None else RewardBook()

    def correct(text: str, letter_: str, row: dict) -> float:
        key = row.get("key")
        if not isinstance(key, str) or len(key) != 1 or key not in LETTERS:
            raise KeyError(f"key column: expected a letter, got {key!r}")
        value = float(letter_ == key)
        book.samples.append({"id": row.get("id"), "letter": letter_, "key": key, "correct": value})
        del book.samples[:-SAMPLES_KEPT]
        return value

    def format_(text: str, letter_: str, row: dict) -> float:
        result = filters.check_answer(answer_object(text, letter_), tokenizer, rules)
        if not result.ok:
            book.reasons[f"format:filter:{result.reason}"] += 1
        return float(result.ok)

    def length(text: str, letter_: str, row: dict) -> float:
        return length_reward(filters.count_tokens(text.partition(ANSWER_MARK)[0], tokenizer), int(budget))

    return [guarded("correct", correct, book), guarded("format", format_, book), guarded("length", length, book)], book
