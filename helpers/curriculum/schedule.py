"""Per-chunk schedules: the learning rate and the replay share of each curriculum chunk, linear from first to last
(the curriculum stage writes them into each chunk; the trainer follows them)."""

from __future__ import annotations


def _linear(n_chunks: int, start: float, end: float) -> list[float]:
    if n_chunks < 1:
        raise ValueError(f"n_chunks must be at least 1, got {n_chunks}")
    if n_chunks == 1:
        return [float(start)]
    return [start + (end - start) * i / (n_chunks - 1) for i in range(n_chunks)]


def replay_schedule(n_chunks: int, start: float, end: float) -> list[float]:
    """Replay share per chunk, linear from start (first chunk) to end (last)."""
    ratios = _linear(n_chunks, start, end)
    if any(not 0.0 <= r < 1.0 for r in ratios):
        raise ValueError(f"replay ratios must be in [0, 1), got start={start}, end={end}")
    return ratios


def lr_schedule(n_chunks: int, start: float, end: float) -> list[float]:
    """Learning rate per chunk, linear from start (first chunk) to end (last chunk), reaching `end` exactly
    (docs/history.md: the original team's formula never did)."""
    return _linear(n_chunks, start, end)
