"""`make bench`'s verdict on hand-made rows: missed goals and crashed benchmarks fail the run, goal-less rows never."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_all  # noqa: E402

pytestmark = pytest.mark.nolibs

row = bench_all._row


def _met_table() -> list[dict]:
    return [row("data", "50,000 rows: build + curriculum", 2.85, "< 5 s", True, "s"),
            row("scoring", "letters / generate (questions/s)", 2.82, ">= 1.5", True, "x"),
            row("memory", "Qwen2.5-3B fp32 b1 x 1024 r8 on MI50", "est. 14.9 GiB: fits", "fits", True)]


def test_a_table_with_every_goal_met_exits_zero():
    assert bench_all.missed_goals(_met_table()) == []
    assert bench_all.exit_status(_met_table()) == 0


def test_one_missed_goal_exits_non_zero_and_is_named():
    rows = _met_table() + [row("train", "kit / plain Trainer (real tokens/s)", 0.8, ">= 1.0", False, "x")]
    assert bench_all.missed_goals(rows) == [
        "[bench] goal missed: train / kit / plain Trainer (real tokens/s): 0.80x, goal >= 1.0"]
    assert bench_all.exit_status(rows) == 1


def test_a_crashed_benchmark_exits_non_zero_and_is_named():
    rows = _met_table() + [row("agents", "failed", "failed: RuntimeError: no model", "", False)]
    assert bench_all.missed_goals(rows) == ["[bench] agents failed: RuntimeError: no model"]
    assert bench_all.exit_status(rows) == 1


@pytest.mark.parametrize("met", [None, False, True])
def test_a_row_without_a_goal_never_fails_the_run(met):
    rows = _met_table() + [row("data", "5,000 rows: records/s", 120_000.0, "", met, "/s")]
    assert bench_all.missed_goals(rows) == []
    assert bench_all.exit_status(rows) == 0


def test_agreement_with_nothing_parsed_is_not_met():
    got = bench_all.agreement_row("scoring", "same pick", float("nan"), {"generate": 0.0}, 0.5)
    assert (got["value"], got["met"], got["goal"]) == ("n/a: generate parsed 0%", False, "100%, parsed >= 50%")
    assert bench_all.missed_goals([got]) == [
        "[bench] goal missed: scoring / same pick: n/a: generate parsed 0%, goal 100%, parsed >= 50%"]
    assert bench_all.exit_status([got]) == 1


def test_agreement_needs_every_method_over_the_minimum():
    got = bench_all.agreement_row("scoring", "same pick", 1.0, {"letters": 1.0, "generate": 0.49}, 0.5)
    assert (got["value"], got["met"]) == ("n/a: generate parsed 49%", False)


@pytest.mark.parametrize("agreement, met", [(1.0, True), (0.95, False)])
def test_agreement_over_the_minimum_is_judged_on_the_picks(agreement, met):
    got = bench_all.agreement_row("scoring", "same pick", agreement, {"generate": 0.5}, 0.5)
    assert (got["value"], got["met"], got["unit"]) == (agreement, met, "share")
    assert bench_all.exit_status([got]) == (0 if met else 1)


def test_the_scoring_rows_carry_the_parsed_share():
    res = {"ratio": 2.0, "parsed": 3, "questions": 96, "agreement": 1.0, "baseline_parse_rate": 3 / 96,
           "questions_per_s": {"letters": 800.0}, "model": "tiny"}
    same = bench_all._scoring_rows("scoring", res, 1.5, 0.5)[1]
    assert (same["figure"], same["value"], same["met"]) == (
        "same pick where generate parsed (3/96)", "n/a: generate parsed 3%", False)
