"""The curriculum's numbers: counts per bucket, chunk and source, the difficulty histogram, means per chunk."""

from __future__ import annotations

from collections import Counter
from typing import Any

from helpers.difficulty import BUCKETS, EASY_BELOW, HARD_FROM
from helpers.io import InputError


def _field(rec: dict, i: int, name: str) -> Any:
    if name not in rec:
        raise InputError(None, f"{i} (id {rec.get('id')!r})", name, "missing: run order_and_chunk() first")
    return rec[name]


def curriculum_stats(records: list[dict], bins: int = 20) -> dict:
    """Counts per bucket, chunk x bucket, chunk x source and source; difficulty histogram; mean per chunk."""
    n = len(records)
    by_bucket = Counter(_field(r, i, "bucket") for i, r in enumerate(records))
    per_chunk: dict[int, dict] = {}
    per_source: dict[str, dict] = {}
    hist = [0] * bins
    for i, rec in enumerate(records):
        d, b, c = float(_field(rec, i, "difficulty")), rec["bucket"], int(_field(rec, i, "chunk"))
        src = str(rec.get("source") or "unknown")
        hist[min(max(int(d / 10.0 * bins), 0), bins - 1)] += 1
        row = per_chunk.setdefault(c, {"chunk": c, "n": 0, "buckets": dict.fromkeys(BUCKETS, 0), "sources": {},
                                       "replayed": 0, "_sum": 0.0, "min": d, "max": d})
        row["n"] += 1
        row["buckets"][b] = row["buckets"].get(b, 0) + 1
        row["sources"][src] = row["sources"].get(src, 0) + 1
        row["replayed"] += bool(rec.get("replay"))
        row["_sum"] += d
        row["min"], row["max"] = min(row["min"], d), max(row["max"], d)
        s = per_source.setdefault(src, {"n": 0, "buckets": dict.fromkeys(BUCKETS, 0), "_sum": 0.0})
        s["n"] += 1
        s["buckets"][b] = s["buckets"].get(b, 0) + 1
        s["_sum"] += d
    for row in list(per_chunk.values()) + list(per_source.values()):
        row["mean_difficulty"] = round(row.pop("_sum") / row["n"], 4)
    return {
        "n": n,
        "thresholds": {"easy_below": EASY_BELOW, "hard_from": HARD_FROM},
        "buckets": {b: by_bucket.get(b, 0) for b in BUCKETS},
        "bucket_share": {b: round(by_bucket.get(b, 0) / n, 4) if n else 0.0 for b in BUCKETS},
        "per_chunk": [per_chunk[c] for c in sorted(per_chunk)],
        "per_source": dict(sorted(per_source.items(), key=lambda kv: -kv[1]["n"])),
        "histogram": {"edges": [round(10.0 * i / bins, 4) for i in range(bins + 1)], "counts": hist},
        "mean_difficulty": round(sum(float(r["difficulty"]) for r in records) / n, 4) if n else None,
    }
