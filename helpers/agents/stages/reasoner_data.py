"""Training chats for the reasoner: solver-proven puzzles under the reasoning prompt and, as the reply, a deduction a
person could follow, then "Answer: <letter>" (helpers.agents.reasoner writes and scores the same way).

The reasoning is, per family: for the seating families the deduction writer covers (helpers.puzzles.deduction:
place or link by a clue, split into the cases a clue leaves, close each failing case, conclude), its deduction,
every step proven by the checker and at most 100 words; for the blood-relation families, their own explanation, the
chain of links from one person to the other, each link proven from the facts it cites (deduction.check_kinship). A
seating family the writer does not cover
has only the solver's count over every seating ("Of 5,040 seatings: ... -> 600"), which no model can follow: it is
left out of the chats, and so is a puzzle whose deduction could not be written, checked or kept short (another is
drawn). Given the profile's reasoning token budget (reasoner.token_budget: what finishes inside the 3 s answer budget
on the target machine), a chat whose reasoning is longer is redrawn too, and when none of REDRAWS fits, the shortest
drawn is kept (a model that can finish nothing in time still learns the shortest reasoning). All are counted by
reason (reasoner_records' `stats`).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Callable, Iterator, Sequence

from helpers import puzzles
from helpers.agents.reasoner import reasoner_messages, reasoner_reply
from helpers.puzzles import deduction
from helpers.puzzles.deduction.measure import verdict
from helpers.puzzles.deduction.steps import SEATING
from helpers.records import LETTERS

REDRAWS = 8  # puzzles drawn for one chat before its family and level are given up on for that chat
NOT_COVERED = "no_deduction:family_not_covered"  # a seating family the deduction writer does not cover


def puzzle_cycle(n: int, kinds: Sequence[str], levels: Sequence[int]) -> Iterator[tuple[str, int, int]]:
    """n (family, level, key index): every family x level in turn, a combination's key letter moving on each round
    (so every family and level gets every letter)."""
    combos = len(kinds) * len(levels)
    for i in range(n):
        yield kinds[i % len(kinds)], levels[(i // len(kinds)) % len(levels)], (i // combos + i) % 4


def taught(kinds: Sequence[str]) -> list[str]:
    """The families whose reasoning a model can learn: every blood-relation family, and the seating families the
    deduction writer covers."""
    return [k for k in kinds if k not in SEATING or k in deduction.KINDS]


def reasoning(rec: dict) -> tuple[str | None, str]:
    """(the reply's reasoning, "deduction") for a built puzzle with a checked deduction of at most 100 words (a
    blood-relation puzzle's is its explanation, each link proven), or (None, why not)."""
    kind = rec["puzzle"]["kind"]
    if kind in SEATING and kind not in deduction.KINDS:
        return None, NOT_COVERED
    outcome, text = verdict(rec["puzzle"], rec["choices"][rec["answer"]])
    return (text, "deduction") if outcome == "ok" else (None, outcome)


def reasoner_records(n: int, *, seed: int, kinds: Sequence[str], levels: Sequence[int],
                     stats: Counter | None = None, tokens: Callable[[str], int] | None = None,
                     budget: int | None = None) -> list[dict]:
    """n training records: each a generated puzzle's shared record with "chat": the reasoning prompt and, as the
    reply, its reasoning (reasoning()) then "Answer: <letter>" ("task": "reasoner"; "reasoning": its source). Every
    taught family x level in turn; a combination's key letter moves on each round, so every family and level learns
    every letter. With `tokens` (a tokenizer's count) and `budget`, reasoning over the budget is redrawn (the
    shortest of REDRAWS kept when none fits). stats counts the sources, each puzzle redrawn and each family left
    out, by reason."""
    stats = Counter() if stats is None else stats
    kept = taught(kinds)
    for kind in kinds:
        if kind not in kept:
            stats[f"left_out:{kind}:{NOT_COVERED}"] += 1
    if not kept:
        raise ValueError(f"none of the families {list(kinds)} has reasoning a model can learn: the deduction writer "
                         f"covers {list(deduction.KINDS)} of the seating ones")
    rng, out = random.Random(f"reasoner:{seed}"), []
    for i, (kind, level, target) in enumerate(puzzle_cycle(n, kept, levels)):
        drawn = _draw(rng, kind, level, target, f"reasoner-{seed}-{i:06d}", stats, tokens, budget)
        if drawn is None:
            stats[f"dropped:{kind}:{level}"] += 1
            continue
        rec, text, source = drawn
        stats[f"source:{source}"] += 1
        chat = reasoner_messages(rec) + [{"role": "assistant", "content": reasoner_reply(text, LETTERS[rec["answer"]])}]
        out.append({**rec, "chat": chat, "task": "reasoner", "reasoning": source})
    return out


def _draw(rng: random.Random, kind: str, level: int, target: int, name: str, stats: Counter,
          tokens: Callable[[str], int] | None, budget: int | None) -> tuple[dict, str, str] | None:
    """(record, reasoning, source) of the first of REDRAWS puzzles with reasoning inside the token budget (the
    shortest when none fits), or None when none has reasoning at all; each redraw counted by reason."""
    shortest: tuple[int, tuple[dict, str, str]] | None = None
    for attempt in range(REDRAWS):
        rec = puzzles.make_puzzle(kind, level, target, rng, {}, id=f"{name}-{attempt}")
        text, source = reasoning(rec)
        if text is None:
            stats[f"redrawn:{source}"] += 1
            continue
        length = tokens(text) if tokens and budget else 0
        if not budget or length <= budget:
            return rec, text, source
        stats["redrawn:over_token_budget"] += 1
        if shortest is None or length < shortest[0]:
            shortest = (length, (rec, text, source))
    if shortest is not None:
        stats["kept_shortest:over_token_budget"] += 1
        return shortest[1]
    return None
