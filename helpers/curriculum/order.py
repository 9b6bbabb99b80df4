"""Order records easy to hard by their difficulty and cut them into near-equal chunks."""

from __future__ import annotations

import contextlib
import math
import random
from typing import Any, Iterable

from helpers import io
from helpers.difficulty import Scorer, bucket, get_scorer, heuristic_score
from helpers.io import InputError


def chunk_sizes(n: int, chunks: int) -> list[int]:
    """Near-equal chunk sizes (the first n % chunks get one more)."""
    q, r = divmod(n, chunks)
    return [q + 1 if i < r else q for i in range(chunks)]


def _checked_score(d: Any, i: int, rec: dict) -> float:
    """A scorer's value as a float in 0..10, or a located InputError saying what is wrong with it."""
    if isinstance(d, bool) or not isinstance(d, (int, float)) or not math.isfinite(d):
        raise InputError(None, f"{i} (id {rec.get('id')!r})", "difficulty", f"scorer returned {d!r}, not a finite number")
    if not 0.0 <= d <= 10.0:
        raise InputError(None, f"{i} (id {rec.get('id')!r})", "difficulty",
                         f"scorer returned {d}, outside 0..10 (map model scores onto 0..10, e.g. 10 * (1 - p))")
    return float(d)


def order_and_chunk(records: list[dict], *, chunks: int, scorer: Scorer | str = "heuristic", seed: int,
                    progress: bool = False) -> list[dict]:
    """Copies of the records, easy to hard (ties in seeded-shuffle order), with difficulty, bucket and chunk."""
    if chunks < 1:
        raise ValueError(f"chunks must be at least 1, got {chunks}")
    if len(records) < chunks:
        raise ValueError(f"{len(records)} records cannot fill {chunks} chunks: lower curriculum.chunks")
    fn = get_scorer(scorer)
    items: Iterable[dict] = records
    if progress:
        from tqdm.auto import tqdm
        items = tqdm(records, desc="scoring", unit="q")
    # One new dict and list per record (see gc_paused); a model-based scorer keeps the collector on (its tensors).
    with io.gc_paused() if fn is heuristic_score else contextlib.nullcontext():
        scored = []
        for i, rec in enumerate(items):
            d = fn(rec)
            if type(d) is not float or not 0.0 <= d <= 10.0:  # a float in range (the usual) needs no more checks
                d = _checked_score(d, i, rec)
            scored.append(d)
        order = list(range(len(records)))
        random.Random(seed).shuffle(order)  # ties follow this shuffle, never the input order
        order.sort(key=scored.__getitem__)  # stable sort keeps the shuffled order within a tie
        out, pos = [], 0
        for c, size in enumerate(chunk_sizes(len(records), chunks)):
            for i in order[pos:pos + size]:
                rec, d = records[i], scored[i]  # shallow copy, 10x cheaper than deepcopy; choices copied too
                out.append({**rec, "choices": list(rec["choices"]), "difficulty": d, "bucket": bucket(d), "chunk": c})
            pos += size
    return out
