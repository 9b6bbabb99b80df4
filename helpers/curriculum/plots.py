"""The curriculum's charts: difficulty stacked by bucket, and each chunk's mix by bucket and source; PNGs too."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from helpers.difficulty import BUCKETS, EASY_BELOW, HARD_FROM


_COLORS = {"easy": "#4caf50", "medium": "#ff9800", "hard": "#e53935"}


def plot_difficulty(records: list[dict], path: str | Path):
    """Histogram of difficulty stacked by bucket, threshold lines; saves a PNG and returns the figure."""
    from matplotlib.figure import Figure  # no pyplot: works headless (Agg) and leaks no global figures
    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.subplots()
    edges = [i / 10 for i in range(101)]  # 0.1-wide bins: both thresholds (5.3, 6.6) fall on an edge
    data = [[float(r["difficulty"]) for r in records if r["bucket"] == b] for b in BUCKETS]
    ax.hist(data, bins=edges, stacked=True, color=[_COLORS[b] for b in BUCKETS],
            label=[f"{b} ({len(x)}, {len(x) / max(len(records), 1):.1%})" for b, x in zip(BUCKETS, data)])
    for x in (EASY_BELOW, HARD_FROM):
        ax.axvline(x, color="black", linestyle="--", linewidth=1)
    ax.set(xlabel="difficulty (0 = trivial, 10 = hardest)", ylabel="records", xlim=(0, 10),
           title=f"Difficulty of {len(records)} records (the original team's: 52.6% easy / 42.3% medium / 5.1% hard)")
    ax.legend()
    fig.savefig(path, dpi=110)
    return fig


def _family(source: str) -> str:
    return re.split(r"[/:]", source, maxsplit=1)[0] or "unknown"


def plot_chunk_mix(stats: dict, path: str | Path, max_sources: int = 8):
    """Stacked bars per chunk, by bucket (with mean difficulty) and by source family; saves a PNG."""
    from matplotlib.figure import Figure
    rows = stats["per_chunk"]
    xs = [r["chunk"] for r in rows]
    fig = Figure(figsize=(12, 4.2), layout="constrained")
    ax_b, ax_s = fig.subplots(1, 2)
    bottom = [0] * len(rows)
    for b in BUCKETS:
        h = [r["buckets"].get(b, 0) for r in rows]
        ax_b.bar(xs, h, bottom=bottom, color=_COLORS[b], label=b)
        bottom = [x + y for x, y in zip(bottom, h)]
    ax_m = ax_b.twinx()
    ax_m.plot(xs, [r["mean_difficulty"] for r in rows], "ko-")
    ax_m.set(ylim=(0, 10), ylabel="mean difficulty (black line)")
    top_n = max([r["n"] for r in rows] + [1])
    ax_b.set(xlabel="chunk", ylabel="records", title="Per chunk, by bucket", xticks=xs, ylim=(0, top_n * 1.3))
    ax_b.legend(loc="upper left", ncols=3, fontsize="small")
    fams: Counter = Counter()
    per = []
    for r in rows:
        c = Counter()
        for src, k in r["sources"].items():
            c[_family(src)] += k
        per.append(c)
        fams.update(c)
    top = [f for f, _ in fams.most_common(max_sources)]
    groups = top + (["other"] if len(fams) > len(top) else [])
    bottom = [0] * len(rows)
    for f in groups:
        h = [sum(k for g, k in c.items() if g not in top) if f == "other" else c.get(f, 0) for c in per]
        ax_s.bar(xs, h, bottom=bottom, label=f)
        bottom = [x + y for x, y in zip(bottom, h)]
    ax_s.set(xlabel="chunk", ylabel="records", title="Per chunk, by source", xticks=xs, ylim=(0, top_n * 1.3))
    ax_s.legend(loc="upper left", ncols=3, fontsize="small")
    fig.savefig(path, dpi=110)
    return fig
