"""How often each relation word is a kinship family's key, per level: the prior its wrong options are drawn by.

A model fine-tuned on many questions learns which words are usually the key (before this prior, "Father" was the key
in 67 of the 85 level-1 pointing questions that offered it) and bets on them without reading a clue. Two levers:
- keys flattened: a word keyed more often than MAX_SHARE of its gender's questions (the builders' raw shares, SHARES)
  is kept only part of the time (keep_chance), so no word can be the key more than about 1 time in 4 it is offered;
- wrong options drawn by the flattened shares (weights, through blind.balanced) times a per-word offer factor
  (OFFER), so a word is offered about three times as often as it is the key. The length balance tilts which triples
  are drawn, so shares alone leave some words offered too rarely; OFFER corrects that.
Both tables are measured, not written by hand: key_share_table.py is rewritten by `python bench/bench_variety.py
--key-shares`, which measures SHARES on raw builds (no flattening), then fits OFFER over a few rounds of builds (each
word's factor times (its keyed / offered rate over 1/4) ** OFFER_STEP). tests/test_blind_strategies.py plays the
usual-key strategy (blind.play_usual_key) against every family.
"""

from __future__ import annotations

import functools
import random
from typing import Iterable, Mapping

from helpers.puzzles import blind
from helpers.puzzles.kinship import key_share_table as table

FLOOR = 0.002  # a word the sample never keyed keeps this much weight: rarely a wrong option, never impossible
MAX_SHARE = 0.2  # the most one word may be keyed among the relation questions of its gender, after flattening
# ... but never below SPREAD / n for a gender with n key words: 4 words cannot each be under 1 in 4, and a cap at the
# uniform share would keep only the rarest word's rate of every puzzle
SPREAD = 1.25


def use(shares: dict, offer: dict) -> None:
    """Use these tables in this process (the bench's fitting rounds), instead of key_share_table's."""
    table.SHARES, table.OFFER = shares, offer
    _caps.cache_clear()


def gender_of(word: str) -> str:
    """'f' for a female relation word, 'm' for a male one, '' for one that says no gender (Cousin)."""
    w = word.lower()
    if any(f in w for f in ("mother", "daughter", "sister", "wife", "aunt", "niece", "herself")):
        return "f"
    if any(m in w for m in ("father", "son", "brother", "husband", "uncle", "nephew", "himself")):
        return "m"
    return ""


@functools.cache
def _caps(kind: str, level: int) -> dict[str, float]:
    """Per gender, the share c a word is cut to so that, renormalised, no word exceeds MAX_SHARE (or SPREAD / n) of its
    gender."""
    at = table.SHARES.get(kind, {}).get(level, {})
    caps = {"": float("inf")}  # Cousin names either gender: never cut
    for g in ("m", "f"):
        shares = [s for w, s in at.items() if gender_of(w) == g]
        most = max(MAX_SHARE, SPREAD / max(1, len(shares)))
        if not shares or max(shares) <= most * sum(shares):
            caps[g] = float("inf")
            continue
        low, high = 0.0, max(shares)
        for _ in range(40):  # the largest cap c with c <= most * sum(min(s, c))
            mid = (low + high) / 2
            low, high = (mid, high) if mid <= most * sum(min(s, mid) for s in shares) else (low, mid)
        caps[g] = low
    return caps


def flattened(kind: str, level: int, word: str) -> float:
    """A word's key share after flattening (its raw share, cut to its gender's cap)."""
    share = table.SHARES.get(kind, {}).get(level, {}).get(word, 0.0)
    return min(share, _caps(kind, level)[gender_of(word)])


def keep_chance(kind: str, level: int, key: str) -> float:
    """The chance a built puzzle keyed `key` is kept: 1 unless the word is keyed above its gender's cap. A key that
    names no relation ("Cannot be determined") is kept as often as the relation keys are on average, so cutting them
    does not make it the key more often than its builder asks (family_gender level 1: 27% of kept questions, not 25)."""
    if blind.undetermined(key):
        return kept_share(kind, level)
    share = table.SHARES.get(kind, {}).get(level, {}).get(key, 0.0)
    return 1.0 if share <= 0 else flattened(kind, level, key) / share


def kept_share(kind: str, level: int) -> float:
    """The share of a family's relation keys at a level that flattening keeps (1 where no word is over its cap)."""
    at = table.SHARES.get(kind, {}).get(level, {})
    total = sum(at.values())
    return 1.0 if total <= 0 else sum(flattened(kind, level, w) for w in at) / total


def keep(kind: str, level: int, key: str, rng: random.Random) -> bool:
    """Whether to keep a built puzzle keyed `key` (one draw of rng only when the word is over its cap)."""
    chance = keep_chance(kind, level, key)
    return chance >= 1.0 or rng.random() < chance


def weights(kind: str, level: int, words: Iterable[str], near: Mapping[str, float] | None = None) -> dict[str, float]:
    """Each candidate word's weight as a wrong option: its flattened share of the family's keys at the level (at
    least FLOOR), times its fitted offer factor and its nearness weight (a relation near the key's; both default 1)."""
    offer = table.OFFER.get(kind, {}).get(level, {})
    return {w: max(flattened(kind, level, w), FLOOR) * offer.get(w, 1.0) * (near or {}).get(w, 1.0) for w in words}
