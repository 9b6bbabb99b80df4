"""Validation metrics on per-question rows: accuracy by group, calibration, letter bias, collapse, deltas."""

from __future__ import annotations

import math
from collections import Counter

from helpers.records import LETTERS

GROUPS = ("source", "topic", "bucket")
ECE_BINS = 10  # equal-width confidence bins; with 352 smoke questions that is ~35 per bin on average
Z95 = 1.96
# A member that gives one letter on more than this share of the questions is flagged as collapsed. On a key
# balanced over four letters a learner gives its favourite on ~25-46% (the smoke adapters: 29-46% over 3 seeds x
# 3 floating-point setups); a collapse gives it on 100%, and a real 135M model's base gives "B" on ~54%.
COLLAPSE_SHARE = 0.55
COLLAPSE_OVER_KEY = 0.25  # ... and more than this above the key's share of it (an unbalanced key or 2 choices is not a collapse)
COLLAPSE_ADVICE = ("its loss can fall while it learns only a letter: halve train.lr_start, keep "
                   "data.balance_letters on, check the loss goes below the uniform-guess line, compare with the base; "
                   "a loss that stays on that line whatever the recipe means the base is too small for the questions "
                   "(SmolLM2-135M, docs/results.md): use a larger one")


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson interval of a proportion k/n (sane at 0/n and n/n, unlike the normal one)."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def accuracy_by(rows: list[dict], key: str | None = None) -> list[dict]:
    """Accuracy with a 95% interval per value of `key` (None = overall), largest groups first."""
    groups: dict[str, list[bool]] = {}
    for row in rows:
        groups.setdefault("all" if key is None else str(row[key]), []).append(bool(row["correct"]))
    out = []
    for name, hits in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        k, n = sum(hits), len(hits)
        lo, hi = wilson(k, n)
        out.append({"group": name, "n": n, "correct": k, "accuracy": k / n, "ci_low": lo, "ci_high": hi})
    return out


def calibration(rows: list[dict], bins: int = ECE_BINS) -> dict:
    """Expected calibration error and reliability bins of (confidence = top probability, hit = correct)."""
    edges = [i / bins for i in range(bins + 1)]
    table = [{"low": edges[i], "high": edges[i + 1], "n": 0, "confidence": 0.0, "accuracy": 0.0} for i in range(bins)]
    for row in rows:
        b = min(int(float(row["confidence"]) * bins), bins - 1)
        table[b]["n"] += 1
        table[b]["confidence"] += float(row["confidence"])
        table[b]["accuracy"] += float(bool(row["correct"]))
    total = sum(t["n"] for t in table)
    ece = 0.0
    for t in table:
        if t["n"]:
            t["confidence"] /= t["n"]
            t["accuracy"] /= t["n"]
            ece += t["n"] / total * abs(t["accuracy"] - t["confidence"])
        else:
            t["confidence"] = t["accuracy"] = None
    mean_conf = sum(float(r["confidence"]) for r in rows) / total if total else float("nan")
    return {"ece": ece if total else float("nan"), "mean_confidence": mean_conf, "bins": table}


def letter_bias(rows: list[dict]) -> list[dict]:
    """Per letter: how often it is predicted vs how often it is the answer (a model stuck on "A" shows here)."""
    n_letters = max(len(r["probs"]) for r in rows)
    predicted = Counter(r["pred"] for r in rows if r["pred"] is not None)
    answered = Counter(r["answer"] for r in rows)
    total = len(rows)
    out = []
    for j in range(n_letters):
        hits = sum(1 for r in rows if r["pred"] == j and r["correct"])
        out.append({"letter": LETTERS[j], "predicted": predicted[j], "answer": answered[j],
                    "predicted_share": predicted[j] / total, "answer_share": answered[j] / total,
                    "precision": hits / predicted[j] if predicted[j] else None})
    unparsed = total - sum(predicted.values())
    if unparsed:
        out.append({"letter": "none", "predicted": unparsed, "answer": 0, "predicted_share": unparsed / total,
                    "answer_share": 0.0, "precision": None})
    return out


def favourite_letter(rows: list[dict]) -> dict:
    """The letter a member gives most often, on what share of the questions, how often the key is that letter,
    and whether that is a collapse (over COLLAPSE_SHARE, and over the key's share by COLLAPSE_OVER_KEY)."""
    picks = Counter(r["pred"] for r in rows if r["pred"] is not None)
    if not picks:
        return {"letter": None, "share": 0.0, "key_share": 0.0, "collapsed": False}
    j, n = picks.most_common(1)[0]
    share, key_share = n / len(rows), sum(r["answer"] == j for r in rows) / len(rows)
    return {"letter": LETTERS[j], "share": share, "key_share": key_share,
            "collapsed": share > COLLAPSE_SHARE and share - key_share > COLLAPSE_OVER_KEY}


def summarise(rows: list[dict], bins: int = ECE_BINS) -> dict:
    """Everything notebook 06 reports for one member: overall, per group, calibration, letter bias, parse rate."""
    overall = accuracy_by(rows)[0]
    return {"n": overall["n"], "accuracy": overall["accuracy"], "ci95": [overall["ci_low"], overall["ci_high"]],
            "parse_rate": sum(bool(r.get("parsed", True)) for r in rows) / len(rows),
            **{f"by_{g}": accuracy_by(rows, g) for g in GROUPS},
            "calibration": calibration(rows, bins), "letter_bias": letter_bias(rows), "favourite": favourite_letter(rows)}


def deltas(base_rows: list[dict], rows: list[dict], key: str = "source") -> list[dict]:
    """Accuracy change from the base model per group, on the same questions: a negative delta is forgetting."""
    base_by = {r["id"]: r for r in base_rows}
    missing = [r["id"] for r in rows if r["id"] not in base_by]
    if missing:
        raise ValueError(f"{len(missing)} question(s) not scored for the base model, e.g. {missing[:3]}")
    groups: dict[str, list[tuple[bool, bool]]] = {}
    for r in rows:
        groups.setdefault(str(r[key]), []).append((bool(base_by[r["id"]]["correct"]), bool(r["correct"])))
    out = []
    for name, pairs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        n = len(pairs)
        base_acc, acc = sum(b for b, _ in pairs) / n, sum(m for _, m in pairs) / n
        out.append({"group": name, "n": n, "base": base_acc, "model": acc, "delta": acc - base_acc,
                    "lost": sum(b and not m for b, m in pairs), "gained": sum(m and not b for b, m in pairs)})
    return out
