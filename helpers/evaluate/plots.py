"""Charts for validation (notebook 06) and the ensemble (notebook 07); each saves a PNG and returns the Figure.

matplotlib's object API only (no pyplot): headless-safe and no global figures left open, as helpers.train.telemetry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

COLOURS = ("#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


def _figure(width: float, height: float):
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height), layout="constrained")


def _save(fig, path: str | Path | None):
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=100)
    return fig


def plot_group_accuracy(tables: dict[str, list[dict]], path: str | Path | None = None, *, title: str = "",
                        chance: float | None = None, max_groups: int = 15):
    """Horizontal grouped bars: accuracy per group (rows of evaluate.accuracy_by) for each model, 95% whiskers."""
    names = list(tables)
    order: list[str] = []
    for rows in tables.values():  # the first table's order (largest groups first), then any others
        order += [r["group"] for r in rows if r["group"] not in order]
    order = order[:max_groups]
    height = 0.8 / max(len(names), 1)
    fig = _figure(9, 1.2 + 0.32 * len(order) * max(1, len(names)) ** 0.5)
    ax = fig.subplots()
    for k, name in enumerate(names):
        by = {r["group"]: r for r in tables[name]}
        ys = [i + (k - (len(names) - 1) / 2) * height for i in range(len(order))]
        acc = [by[g]["accuracy"] if g in by else 0.0 for g in order]
        err = [[a - by[g]["ci_low"] if g in by else 0 for g, a in zip(order, acc)],
               [by[g]["ci_high"] - a if g in by else 0 for g, a in zip(order, acc)]]
        ax.barh(ys, acc, height=height, xerr=err, color=COLOURS[k % len(COLOURS)], label=name,
                error_kw={"elinewidth": 0.8, "alpha": 0.6})
    ax.set_yticks(range(len(order)))
    first = {r["group"]: r["n"] for rows in tables.values() for r in rows}
    ax.set_yticklabels([f"{g} (n={first[g]})" for g in order], fontsize="small")
    ax.invert_yaxis()
    if chance is not None:
        ax.axvline(chance, color="black", linestyle=":", linewidth=1, label=f"chance {chance:.2f}")
    ax.set(xlim=(0, 1), xlabel="accuracy (95% interval)", title=title)
    ax.legend(fontsize="small", loc="lower right")
    return _save(fig, path)


def plot_reliability(calibrations: dict[str, dict], path: str | Path | None = None):
    """Reliability diagram per model: accuracy per confidence bin (questions per bin on top) against the diagonal."""
    names = list(calibrations)
    fig = _figure(3.4 * len(names), 3.6)
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    for k, (ax, name) in enumerate(zip(axes, names)):
        cal = calibrations[name]
        bins = [b for b in cal["bins"] if b["n"]]
        width = cal["bins"][0]["high"] - cal["bins"][0]["low"]
        ax.bar([(b["low"] + b["high"]) / 2 for b in bins], [b["accuracy"] for b in bins], width=width * 0.9,
               color=COLOURS[k % len(COLOURS)], alpha=0.8, label="accuracy")
        ax.plot([0, 1], [0, 1], "k--", linewidth=0.8, label="perfect calibration")
        ax.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], "k.", markersize=4)
        for b in bins:  # questions per bin: a bin of 3 questions is no evidence either way
            ax.text((b["low"] + b["high"]) / 2, b["accuracy"] + 0.02, str(b["n"]), ha="center", fontsize="x-small")
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="confidence (top probability)",
               title=f"{name}\nECE {cal['ece']:.3f}", ylabel="accuracy" if k == 0 else None)
    axes[0].legend(fontsize="x-small", loc="upper left")
    return _save(fig, path)


def plot_letter_bias(biases: dict[str, list[dict]], path: str | Path | None = None):
    """Per model: share of predictions per letter (bars) vs share of answers per letter (black ticks)."""
    names = list(biases)
    fig = _figure(3.2 * len(names), 3.2)
    axes = fig.subplots(1, len(names), squeeze=False)[0]
    for k, (ax, name) in enumerate(zip(axes, names)):
        rows = [r for r in biases[name] if r["answer"] or r["predicted"]]
        xs = range(len(rows))
        ax.bar(xs, [r["predicted_share"] for r in rows], color=COLOURS[k % len(COLOURS)], label="predicted")
        ax.scatter(xs, [r["answer_share"] for r in rows], marker="_", s=400, color="black", label="correct answer")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r["letter"] for r in rows])
        ax.set(ylim=(0, 1), title=name, ylabel="share of questions" if k == 0 else None)
    axes[0].legend(fontsize="x-small")
    return _save(fig, path)


def plot_deltas(deltas: dict[str, list[dict]], path: str | Path | None = None, *, title: str = ""):
    """Accuracy change from the base model per group, one bar per model: below zero is forgetting."""
    names = list(deltas)
    order: list[str] = []
    for rows in deltas.values():
        order += [r["group"] for r in rows if r["group"] not in order]
    height = 0.8 / max(len(names), 1)
    fig = _figure(9, 1.2 + 0.32 * len(order) * max(1, len(names)) ** 0.5)
    ax = fig.subplots()
    for k, name in enumerate(names):
        by = {r["group"]: r for r in deltas[name]}
        ys = [i + (k - (len(names) - 1) / 2) * height for i in range(len(order))]
        ax.barh(ys, [by[g]["delta"] if g in by else 0 for g in order], height=height,
                color=COLOURS[(k + 1) % len(COLOURS)], label=name)
    ax.axvline(0, color="black", linewidth=0.8)
    sizes = {r["group"]: r["n"] for rows in deltas.values() for r in rows}
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([f"{g} (n={sizes[g]})" for g in order], fontsize="small")
    ax.invert_yaxis()
    ax.set(xlabel="accuracy change vs base (fine-tuned - base)", title=title, xlim=(-1, 1))
    ax.legend(fontsize="small", loc="lower right")
    return _save(fig, path)


def plot_ensemble(summary: dict, path: str | Path | None = None):
    """Held-out accuracy of each member and each ensemble candidate, the chosen one marked, oracle dashed."""
    members = list(summary["member_scores"])
    cands = list(summary["candidates"])
    labels = members + cands
    acc = [summary["heldout_accuracy"][x] for x in labels]
    colours = [COLOURS[1]] * len(members) + [COLOURS[3]] * len(cands)
    fig = _figure(9, 3.8)
    ax = fig.subplots()
    bars = ax.bar(range(len(labels)), acc, color=colours)
    chosen = labels.index(summary["candidate"])
    bars[chosen].set_edgecolor("black")
    bars[chosen].set_linewidth(2.5)
    for x, a in enumerate(acc):
        ax.text(x, a + 0.01, f"{a:.3f}", ha="center", fontsize="small")
    ax.axhline(summary["oracle_heldout"], color="black", linestyle="--", linewidth=1,
               label=f"oracle (any member right) {summary['oracle_heldout']:.3f}")
    shown = [f"single ({next(iter(summary['candidates']['single']['weights']))})" if x == "single" else x
             for x in labels]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(shown, rotation=20, ha="right", fontsize="small")
    ax.set(ylim=(0, 1.05), ylabel="held-out accuracy",
           title=f"{summary['heldout_items']} held-out questions (weights fitted on {summary['fit_items']} others); "
                 f"chosen: {summary['candidate']}")
    ax.legend(fontsize="small", loc="lower right")
    return _save(fig, path)


def plot_agreement(matrix: dict[str, dict[str, float]], path: str | Path | None = None):
    """Pairwise agreement heatmap (share of questions on which two members pick the same letter)."""
    names = list(matrix)
    values = [[matrix[a][b] for b in names] for a in names]
    fig = _figure(1.6 + 1.3 * len(names), 1.2 + 1.1 * len(names))
    ax = fig.subplots()
    im = ax.imshow(values, vmin=0, vmax=1, cmap="viridis")
    for i in range(len(names)):
        for j in range(len(names)):
            ax.text(j, i, f"{values[i][j]:.2f}", ha="center", va="center",
                    color="white" if values[i][j] < 0.6 else "black", fontsize="small")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize="small")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize="small")
    ax.set_title("agreement on held-out questions")
    fig.colorbar(im, ax=ax, shrink=0.8)
    return _save(fig, path)


def plot_weights(candidates: dict[str, dict], members: Sequence[str], path: str | Path | None = None):
    """Stacked weight of each member in each candidate (single = all on one member)."""
    labels = list(candidates)
    fig = _figure(7, 3.2)
    ax = fig.subplots()
    bottom = [0.0] * len(labels)
    for k, m in enumerate(members):
        w = [candidates[c]["weights"].get(m, 0.0) for c in labels]
        ax.bar(range(len(labels)), w, bottom=bottom, color=COLOURS[(k + 1) % len(COLOURS)], label=m)
        bottom = [b + x for b, x in zip(bottom, w)]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize="small")
    ax.set(ylim=(0, 1), ylabel="weight", title="member weights per candidate (from the fitting part only)")
    ax.legend(fontsize="small", bbox_to_anchor=(1.01, 1), loc="upper left")
    return _save(fig, path)
