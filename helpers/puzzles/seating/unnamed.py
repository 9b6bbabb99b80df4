"""The person no clue mentions: how the seating families keep the unnamed strategy (helpers.puzzles.blind) at chance.

A sitter the clues never mention after the seating list is placed by elimination, and the clue search makes that
person the key more often than a random sitter (a clue naming the key beside the asked person proves the answer on
its own and is skipped). Two unmentioned people could trade seats, so an unmentioned key is the only unmentioned
person, and betting on the one unmentioned option won 102 of 252 Q-agent questions that offered one. Two levers, from
rates measured per family, level and question form on the builders' own puzzles (unnamed_table.py, rewritten by
`python bench/bench_variety.py --unnamed`):
- beside a mentioned key, one unmentioned person is offered as a wrong option often enough (target, through
  blind.balanced) that the strategy's wins on unmentioned keys are given back; never two, which would say that the
  key is one of the others;
- where unmentioned keys are too common to give back, a build whose key is unmentioned is kept only part of the time
  (keep chance; counted as "key_unnamed").
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

from helpers.puzzles import blind
from helpers.puzzles.seating import unnamed_table as table

MIN_KEEP = 0.05  # an unmentioned key is never ruled out altogether (a form where nothing can give its wins back)


def use(rates: dict) -> None:
    """Use these rates in this process (the bench measures raw builds with {}), instead of unnamed_table's."""
    table.RATES = rates


def balance(key_unnamed: float, others_unnamed: float) -> tuple[float, float]:
    """(keep chance of an unmentioned key, the unnamed strategy's target beside a mentioned one) that make it pick the
    key 1 time in 4 over a form's name questions, from their raw rates: key_unnamed, the share whose key is
    unmentioned (the strategy's pick, a win); others_unnamed, the share of the rest with an unmentioned wrong
    candidate (offered, a loss where the strategy would have guessed 1 in 4)."""
    excess = key_unnamed * 0.75  # what unmentioned keys win over chance
    room = (1 - key_unnamed) * others_unnamed * 0.25  # what mentioned keys can give back (target 0 instead of 1/4)
    if excess <= room:
        return 1.0, 0.25 - excess / ((1 - key_unnamed) * others_unnamed) if excess else 0.25
    return max(MIN_KEEP, room / excess), 0.0


def _rates(kind: str, level: int, form: str) -> tuple[float, float]:
    """(keep chance, target) for a family, level and form; (1, 1/4) where none is measured."""
    measured = table.RATES.get(kind, {}).get(level, {}).get(form)
    return balance(*measured) if measured else (1.0, 0.25)


def keep(kind: str, level: int, form: str, key: str, away: set[str], rng: random.Random) -> bool:
    """Whether to keep a build whose options will be names: always when its key is mentioned after the opening (not
    in `away`), else with the form's keep chance (one draw of rng only when it is below 1)."""
    chance = _rates(kind, level, form)[0] if key in away else 1.0
    return chance >= 1.0 or rng.random() < chance


def distractors(key: str, pool: Sequence[str], question: str, rng: random.Random, *, kind: str, level: int,
                form: str, weights: Mapping[str, float] | None = None) -> list[str]:
    """Three wrong names from pool by blind.balanced: the mentioned ones and, beside a mentioned key, one unmentioned
    candidate drawn at random, flagged so that the unnamed strategy hits the key at the form's target. Fewer than
    three when the pool has too few mentioned people (the builder rejects the puzzle)."""
    away = blind.unmentioned([key, *pool], question)
    pool = [p for p in pool if p not in away]
    if away and key not in away:
        pool.append(rng.choice(sorted(away)))
    target = {"unnamed": 0.25 if key in away else _rates(kind, level, form)[1]}
    return blind.balanced(key, pool, rng, target=target, weights=weights, unmentioned_names=away)
