"""A built dataset's report shown: a plain-text table for the command line, a PNG of rows and letters."""

from __future__ import annotations

from pathlib import Path


def summary_table(report: dict) -> str:
    """A plain-text per-source table plus the drop reasons, for the command line."""
    cols = ("read", "generated", "unlabeled", "dropped", "kept", "converted", "train", "val")
    width = max([len(s) for s in report["per_source"]] + [6])
    lines = [f"{'source':<{width}} " + " ".join(f"{c:>9}" for c in cols)]
    for name, row in [*report["per_source"].items(), ("TOTAL", report["totals"])]:
        lines.append(f"{name:<{width}} " + " ".join(f"{row[c]:>9,}" for c in cols))
    if report["dropped"]:
        lines.append("dropped: " + ", ".join(f"{r} {n:,}" for r, n in report["dropped"].items()))
    lines.append("letters train " + " ".join(f"{k}={v}" for k, v in report["letters"]["train"].items())
                 + " | val " + " ".join(f"{k}={v}" for k, v in report["letters"]["val"].items()))
    return "\n".join(lines)


def plot_report(report: dict, path: str | Path):
    """Two bar charts, rows per source (train / val / dropped / unlabeled) and answer letters; saves a PNG."""
    from matplotlib.figure import Figure  # no pyplot: works headless and leaks no global figures
    rows = report["per_source"]
    names = list(rows)[::-1]  # first source on top
    fig = Figure(figsize=(12, 0.9 + 0.32 * max(len(names), 6)), layout="constrained")
    ax_s, ax_l = fig.subplots(1, 2, width_ratios=(3, 2))
    left = [0] * len(names)
    for col, color in (("train", "tab:blue"), ("val", "tab:orange"), ("dropped", "tab:red"), ("unlabeled", "0.7")):
        widths = [rows[n][col] for n in names]
        ax_s.barh(names, widths, left=left, color=color, label=col)
        left = [a + b for a, b in zip(left, widths)]
    ax_s.set(xlabel="rows", title="Where every row went, per source")
    ax_s.legend(loc="lower right", fontsize="small")
    letters = sorted(set(report["letters"]["train"]) | set(report["letters"]["val"]))
    top = 0.0
    for k, (side, color) in enumerate((("train", "tab:blue"), ("val", "tab:orange"))):
        total = max(sum(report["letters"][side].values()), 1)
        shares = [report["letters"][side].get(x, 0) / total for x in letters]
        ax_l.bar([i + 0.4 * k for i in range(len(letters))], shares, width=0.4, color=color, label=side)
        top = max([top, *shares])
    ax_l.set_xticks([i + 0.2 for i in range(len(letters))], letters)
    ax_l.set(ylabel="share of the split", title="Answer letters" + (" (balanced per choice count)" if report.get("balance", {}).get("enabled", True)
                                                     else " (choice order kept)"), ylim=(0, top * 1.3 or 1))
    ax_l.legend(loc="upper right", ncols=2, fontsize="small")
    fig.savefig(path, dpi=110)
    return fig
