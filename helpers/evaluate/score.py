"""Score one member (an adapter, or the base) on the validation records: its rows and its timing."""

from __future__ import annotations

from typing import Any, Sequence

from helpers.evaluate.rows import make_rows


def score_member(model: Any, tokenizer: Any, name: str, records: list[dict], buckets: Sequence[str], *,
                 method: str = "letters", batch_size: int = 16, max_new_tokens: int = 64) -> tuple[list[dict], dict]:
    """Rows for one member (its adapter switched on by name, "base" = off) and its timing.

    method "letters": one forward per batch (helpers.scoring.score_letters). "generate": the original team's baseline;
    a parsed letter becomes probability 1 on that choice and an unparsed answer counts as wrong.
    """
    import time
    from helpers import scoring
    from helpers.records import index_of
    t0 = time.perf_counter()
    with scoring.use_member(model, name):
        if method == "letters":
            probs: list[list[float] | None] = scoring.score_letters(model, tokenizer, records, batch_size=batch_size)
        elif method == "generate":
            gens = scoring.generate_letters(model, tokenizer, records, max_new_tokens=max_new_tokens,
                                            batch_size=max(1, batch_size // 2))
            probs = [None if g["letter"] is None else
                     [float(j == index_of(g["letter"])) for j in range(len(rec["choices"]))]
                     for g, rec in zip(gens, records)]
        else:
            raise ValueError(f"method {method!r} is not 'letters' or 'generate'")
    seconds = time.perf_counter() - t0
    rows = make_rows(records, probs, buckets)
    for row in rows:
        row.update(member=name, method=method)
    return rows, {"seconds": round(seconds, 3), "questions_per_s": round(len(records) / max(seconds, 1e-9), 2),
                  "parse_rate": sum(r["parsed"] for r in rows) / len(rows)}
