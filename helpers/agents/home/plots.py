"""Charts for notebook 10: the match scoreboard and per-item latency against the organisers' limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence


def plot_match(result: dict, path: str | Path) -> Path:
    """Scores per team (Q + A stacked, out of 200) and every item's latency against its limit; saved as PNG."""
    import matplotlib.pyplot as plt
    names = list(result["scores"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    q = [result["scores"][n]["q_score"] for n in names]
    a = [result["scores"][n]["a_score"] for n in names]
    ax1.bar(names, q, label="Q-score", color="#4C72B0")
    ax1.bar(names, a, bottom=q, label="A-score", color="#DD8452")
    for i, name in enumerate(names):
        s = result["scores"][name]
        ax1.text(i, q[i] + a[i] + 3, f"{s['total']:.0f}" + (" DQ" if s["disqualified"] else ""), ha="center")
    ax1.set_ylim(0, 215)
    ax1.set_ylabel("points (max 200)")
    ax1.set_title(f"match: winner {result['winner'] or '-'} ({result['decided_by'].split(' (')[0]})")
    ax1.legend(loc="upper right")
    for k, inning in enumerate(result["innings"]):
        qs = [r["q_seconds"] for r in inning["rows"]]
        ans = [r["a_seconds"] for r in inning["rows"]]
        ax2.scatter([k * 2] * len(qs), qs, s=8, alpha=0.6, label=f"questions by {inning['asker']}")
        ax2.scatter([k * 2 + 1] * len(ans), ans, s=8, alpha=0.6, label=f"answers by {inning['answerer']}")
    ax2.axhline(result["limits"]["question_s"], color="red", ls="--", lw=1, label="limits (10 s / 6 s)")
    ax2.axhline(result["limits"]["answer_s"], color="red", ls="--", lw=1)
    ax2.set_yscale("log")
    ax2.set_xticks([0, 1, 2, 3], ["Q1", "A1", "Q2", "A2"])
    ax2.set_ylabel("seconds per item (log)")
    ax2.set_title("per-item latency against the limits")
    ax2.legend(fontsize=7, loc="center right")
    return _save(fig, path)


def plot_latency(series: dict[str, Sequence[float]], limits: dict[str, float], path: str | Path) -> Path:
    """Histogram per agent of seconds per item (log scale) with its limit and p99 marked; saved as PNG."""
    import matplotlib.pyplot as plt
    import numpy as np
    from helpers.agents.timing import percentile
    fig, axes = plt.subplots(1, len(series), figsize=(5.5 * len(series), 3.4), squeeze=False)
    for ax, (name, values) in zip(axes[0], series.items()):
        values = [max(v, 1e-5) for v in values] or [1e-5]
        limit = limits[name]
        bins = np.logspace(np.log10(min(values)) - 0.1, np.log10(max(limit, max(values))) + 0.1, 40)
        ax.hist(values, bins=bins, color="#4C72B0")
        ax.axvline(limit, color="red", ls="--", lw=1.2, label=f"limit {limit:g} s")
        p99 = percentile(values, 99)
        ax.axvline(p99, color="black", ls=":", lw=1.2, label=f"p99 {p99:.3g} s")
        ax.set_xscale("log")
        ax.set_xlabel("seconds per item (log)")
        ax.set_ylabel("items")
        ax.set_title(f"{name}: {len(values)} items, p99 at {p99 / limit:.1%} of the limit")
        ax.legend(fontsize=8)
    return _save(fig, path)


def _save(fig: Any, path: str | Path) -> Path:
    """Lay out, write the PNG (folders made) and close the figure."""
    import matplotlib.pyplot as plt
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
