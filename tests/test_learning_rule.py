"""The smoke learning rule (tests/_learning.py) rejects the failures seen on real runs and accepts real learning."""

from __future__ import annotations

import random

import pytest

import _learning


def _rows(keys: list[int], preds: list[int]) -> list[dict]:
    return [{"id": f"q{i}", "source": "kit/categories", "probs": [0.25] * 4, "answer": k, "pred_letter": "ABCD"[p],
             "correct": p == k} for i, (k, p) in enumerate(zip(keys, preds))]


KEYS = [i % 4 for i in range(120)]
IDS = {f"q{i}" for i in range(120)}
BASE = _rows(KEYS, [0 if i % 2 else 3 for i in range(120)])  # a base that leans on A and D: 25%


def test_collapse_to_one_letter_fails():
    verdict = _learning.judge(BASE, _rows(KEYS, [2] * 120), IDS)
    assert not verdict["ok"] and verdict["favourite"] == "C" and verdict["favourite_share"] == 1.0


def test_a_letter_preference_that_clears_the_margin_still_fails():
    # Right on every B question and on a third of the others, "B" everywhere else: 50% accuracy, B on 75%.
    preds = [k if k == 1 or i % 3 == 0 else 1 for i, k in enumerate(KEYS)]
    verdict = _learning.judge(BASE, _rows(KEYS, preds), IDS)
    assert verdict["accuracy"] >= verdict["base"] + _learning.MIN_MARGIN
    assert not verdict["ok"] and any("answers B" in p for p in verdict["problems"])


def test_learning_spread_over_the_letters_passes():
    rng = random.Random(0)
    preds = [k if rng.random() < 0.6 else rng.randrange(4) for k in KEYS]
    verdict = _learning.judge(BASE, _rows(KEYS, preds), IDS)
    assert verdict["ok"], verdict["problems"]


def test_the_margin_is_over_the_best_single_letter_not_only_chance():
    # A key that puts half the questions on A: answering A everywhere scores 50%, 25 points over chance.
    keys = [0 if i % 2 else 1 + i % 3 for i in range(120)]
    base = _rows(keys, [3] * 120)
    verdict = _learning.judge(base, _rows(keys, [0 if i % 7 else k for i, k in enumerate(keys)]), IDS)
    assert verdict["best_single_letter"] == 0.5 and verdict["accuracy"] >= verdict["chance"] + _learning.MIN_MARGIN
    assert not verdict["ok"] and any("best single letter" in p for p in verdict["problems"])


def test_rows_on_different_questions_are_refused():
    with pytest.raises(ValueError, match="different questions"):
        _learning.judge(BASE, _rows(KEYS, KEYS)[1:] + _rows(KEYS, KEYS)[:1], IDS)


def test_learnable_questions_are_the_bundled_fixed_choice_lists():
    fixed = next(iter(_learning.fixed_lists()))
    records = [{"id": "a", "source": "kit/x", "choices": list(fixed)},
               {"id": "b", "source": "kit/x", "choices": ["w", "x", "y", "z"]},
               {"id": "c", "source": "puzzles/family", "choices": list(fixed)}]
    assert _learning.learnable_ids(records) == {"a"}
    assert len(_learning.fixed_lists()) >= 10
