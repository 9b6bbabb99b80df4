"""Training chats for the reasoner: solver-proven puzzles under the reasoning prompt and, as the reply, the solver's
step-by-step deduction then "Answer: <letter>" (helpers.agents.reasoner writes and scores the same way)."""

from __future__ import annotations

import random
from typing import Iterator, Sequence

from helpers import puzzles
from helpers.agents.reasoner import reasoner_messages, reasoner_reply
from helpers.records import LETTERS


def puzzle_cycle(n: int, kinds: Sequence[str], levels: Sequence[int]) -> Iterator[tuple[str, int, int]]:
    """n (family, level, key index): every family x level in turn, a combination's key letter moving on each round
    (so every family and level gets every letter)."""
    combos = len(kinds) * len(levels)
    for i in range(n):
        yield kinds[i % len(kinds)], levels[(i // len(kinds)) % len(levels)], (i // combos + i) % 4


def reasoner_records(n: int, *, seed: int, kinds: Sequence[str], levels: Sequence[int]) -> list[dict]:
    """n training records: each a generated puzzle's shared record with "chat": the reasoning prompt and, as the reply,
    the solver's deduction then "Answer: <letter>" ("task": "reasoner"). Every family x level in turn; a combination's
    key letter moves on each round, so every family and level learns every letter."""
    rng, out = random.Random(f"reasoner:{seed}"), []
    for i, (kind, level, target) in enumerate(puzzle_cycle(n, kinds, levels)):
        rec = puzzles.make_puzzle(kind, level, target, rng, {}, id=f"reasoner-{seed}-{i:06d}")
        chat = reasoner_messages(rec) + [{"role": "assistant",
                                          "content": reasoner_reply(rec["explanation"], LETTERS[rec["answer"]])}]
        out.append({**rec, "chat": chat, "task": "reasoner"})
    return out
