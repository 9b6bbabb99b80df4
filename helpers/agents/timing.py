"""Time budgets and latency summaries for the agents (the limits themselves are the edition's: helpers.edition)."""

from __future__ import annotations

import time
from typing import Sequence

# Aim for half the limit: the tournament box may be slower or busier than the one the team measured on,
# and a forward pass cannot be interrupted once started, so the margin must absorb one slow step.
DEFAULT_MARGIN = 0.5
# The work a question's checked deduction may take before the solver's own text stands in as its explanation (optional
# and unscored: the rules ask only for a valid question in time), in seatings visited: the writer's steps so far, plus
# 20 for the board's listing, times the seatings the board lists (deduction.writer.work_budget). Counted, not timed,
# so a question gets the same explanation on every CPU (except one near its deadline: WRITE_RESERVE_S). The listing
# itself is charged once it is done: a board over ~190,000 seatings is listed, then refused at once. Measured on 96
# level-3 seating puzzles (a 2-core AMD EPYC): the slowest deduction written within it took 0.31 s, and 15 of the 96
# went past it (the big layouts' case splits). The Q-agent keeps its speed goal (the question p99 of
# bench/bench_agents.py GOALS), and the report counts each question that went without
# (explanation:count:no_deduction:work_budget).
EXPLAIN_WORK = 4_000_000


class Deadline:
    """A monotonic deadline: seconds left, whether it passed, whether an estimated step still fits."""

    def __init__(self, seconds: float, start: float | None = None):
        self.start = time.perf_counter() if start is None else start
        self.end = self.start + max(0.0, float(seconds))

    def left(self) -> float:
        """Seconds remaining (never negative)."""
        return max(0.0, self.end - time.perf_counter())

    def passed(self) -> bool:
        """True once the deadline is reached."""
        return time.perf_counter() >= self.end

    def fits(self, estimate_s: float) -> bool:
        """True when a step estimated at estimate_s seconds would still finish in time."""
        return time.perf_counter() + max(0.0, estimate_s) <= self.end


def budget(limit_s: float, margin: float) -> float:
    """The per-item budget: the organisers' limit times the safety margin (0 < margin <= 1)."""
    if not 0 < margin <= 1:
        raise ValueError(f"margin must be in (0, 1], got {margin}")
    return float(limit_s) * float(margin)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation; 0.0 for no values."""
    xs = sorted(float(v) for v in values)
    if not xs:
        return 0.0
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_summary(seconds: Sequence[float], limit_s: float) -> dict:
    """p50/p99/max per item, the limit, the margin left at p99 (seconds and share), items over the limit."""
    p99 = percentile(seconds, 99)
    return {"items": len(seconds), "p50_s": round(percentile(seconds, 50), 4), "p99_s": round(p99, 4),
            "max_s": round(max(seconds), 4) if seconds else 0.0, "limit_s": float(limit_s),
            "margin_at_p99_s": round(limit_s - p99, 4), "p99_share_of_limit": round(p99 / limit_s, 4),
            "over_limit": sum(1 for s in seconds if s >= limit_s)}
