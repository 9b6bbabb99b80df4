"""The person no clue mentions: how the seating families keep the unnamed strategy (helpers.puzzles.blind) at chance.

A sitter the clues never mention after the seating list is placed by elimination, and the clue search makes that
person the key more often than a random sitter: a clue naming the key beside the asked person proves the answer on
its own and is skipped. So where the four options are people (or attribute values) and one of them is never mentioned
after the opening sentence, betting on it won 38% of such Q-agent questions. Two levers, from rates measured per
family, level and question form on the builders' own puzzles (unnamed_table.py, rewritten by `python
bench/bench_variety.py --unnamed`):
- wrong options are drawn by blind.balanced with the unmentioned candidates flagged: beside an unmentioned key it
  offers other unmentioned people, and beside a mentioned key an unmentioned one often enough (target) that the
  strategy's hits on unmentioned keys are offset over the family's questions;
- where unmentioned keys are too common to offset, a build whose key is unmentioned is kept only part of the time
  (keep_chance; counted as "key_unnamed").
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

from helpers.puzzles import blind
from helpers.puzzles.seating import unnamed_table as table

MIN_KEEP = 0.05  # an unmentioned key is never ruled out altogether (a family where no wrong option can offset it)


def use(rates: dict) -> None:
    """Use these rates in this process (the bench measures raw builds with {}), instead of unnamed_table's."""
    table.RATES = rates


def balance(key_unnamed: float, others_unnamed: float, key_hit: float) -> tuple[float, float]:
    """(keep chance of an unmentioned key, the unnamed strategy's target beside a mentioned one) that make it pick the
    key 1 time in 4, from the raw rates: key_unnamed, the share of name questions whose key is unmentioned;
    others_unnamed, the share of the rest with an unmentioned wrong candidate; key_hit, the strategy's mean chance
    on an unmentioned key (1 / the unmentioned options, balanced offering as many as there are, up to four)."""
    excess = key_unnamed * (key_hit - 0.25)  # what unmentioned keys win over chance
    room = (1 - key_unnamed) * others_unnamed * 0.25  # what mentioned keys can give back (target 0 instead of 1/4)
    if excess <= 0:
        return 1.0, 0.25
    if excess <= room:
        return 1.0, 0.25 - excess / ((1 - key_unnamed) * others_unnamed)
    return max(MIN_KEEP, room / excess), 0.0


def _rates(kind: str, level: int, form: str) -> tuple[float, float]:
    """(keep chance, target) for a family, level and form; (1, 1/4) where none is measured."""
    measured = table.RATES.get(kind, {}).get(level, {}).get(form)
    return balance(*measured) if measured else (1.0, 0.25)


def keep(kind: str, level: int, form: str, key: str, away: set[str], rng: random.Random) -> bool:
    """Whether to keep a build whose options will be names: always when its key is mentioned after the opening (not
    in `away`), else with the family's keep chance (one draw of rng only when it is below 1)."""
    chance = _rates(kind, level, form)[0] if key in away else 1.0
    return chance >= 1.0 or rng.random() < chance


def distractors(key: str, pool: Sequence[str], question: str, rng: random.Random, *, kind: str, level: int,
                form: str, weights: Mapping[str, float] | None = None) -> list[str]:
    """Three wrong names from pool by blind.balanced, the candidates the question text leaves unmentioned after its
    opening flagged, and the unnamed strategy's target set by the family's rates beside a mentioned key."""
    away = blind.unmentioned([key, *pool], question)
    target = {"unnamed": 0.25 if key in away else _rates(kind, level, form)[1]}
    return blind.balanced(key, pool, rng, target=target, weights=weights, unmentioned=away)
