"""What "the smoke adapters learned" means, shared by the pipeline test and the learning benchmark.

The task the tiny model can learn is the bundled general-knowledge questions whose four choices are a fixed list
in a fixed order that other bundled questions share (743 of 1,437; data/README.md, "Fixed set"): "this fact ->
this letter" is learnable at 1M parameters, and the answers sit on all four letters. The bundled questions with
sampled distractors and the generated puzzles need reading the choices, which the tiny model cannot do: they stay
near chance (reported by the benchmark, not judged).

On those questions an adapter passes when all three hold:
- its accuracy is at least MIN_MARGIN over the untrained base;
- and at least MIN_MARGIN over the best single letter (always answering the key's most common letter, ~28-35%
  of these questions), so no share of the margin can come from a letter preference;
- and its most frequent answer letter is given on at most MAX_FAVOURITE_SHARE of the questions. An adapter
  that answered "B" on 72% of them still scored 50% against the base's 28%; a collapse to one letter gives it
  on 100%. A learner gives its favourite letter on its share of the key (~0.2-0.35) plus the errors it
  defaults on: 0.29-0.46 over 3 seeds x 3 floating-point setups (bench/bench_learning.py).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from helpers.evaluate import COLLAPSE_SHARE

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "data" / "general_mcq.jsonl"
MIN_MARGIN = 0.15            # accuracy points over the base and the best single letter; measured 0.26-0.48
# learners measured 0.29-0.46; the old recipe's DoRA 0.72, its rsLoRA 1.0 (collapse): the kit's own flag's bound
MAX_FAVOURITE_SHARE = COLLAPSE_SHARE


def fixed_lists(path: Path = BUNDLED) -> set[tuple[str, ...]]:
    """Choice lists (in order) that two or more bundled questions share."""
    counts = Counter(tuple(json.loads(line)["choices"]) for line in path.read_text(encoding="utf-8").splitlines())
    return {choices for choices, n in counts.items() if n >= 2}


def learnable_ids(val_records: list[dict]) -> set[str]:
    """Ids of the validation questions the tiny model can learn: bundled (kit/*) ones on a fixed choice list."""
    fixed = fixed_lists()
    return {r["id"] for r in val_records if r["source"].startswith("kit/") and tuple(r["choices"]) in fixed}


def accuracy(rows: list[dict]) -> float:
    """Share of rows answered correctly."""
    return sum(bool(r["correct"]) for r in rows) / len(rows)


def chance(rows: list[dict]) -> float:
    """Mean 1/n_choices: the accuracy of a uniform guess."""
    return sum(1 / len(r["probs"]) for r in rows) / len(rows)


def best_single_letter(rows: list[dict]) -> float:
    """The accuracy of always answering the key's most common letter (never below chance)."""
    keys = Counter(r["answer"] for r in rows)
    return max(keys.most_common(1)[0][1] / len(rows), chance(rows))


def favourite(rows: list[dict]) -> tuple[str, float]:
    """The most often predicted letter and the share of rows it is given on."""
    letter, n = Counter(r["pred_letter"] for r in rows).most_common(1)[0]
    return str(letter), n / len(rows)


def judge(base_rows: list[dict], rows: list[dict], ids: set[str]) -> dict:
    """Accuracy, margins, favourite letter and the verdict for one adapter against the base, on the rows in ids."""
    base, mine = [r for r in base_rows if r["id"] in ids], [r for r in rows if r["id"] in ids]
    if len(mine) < 60:
        raise ValueError(f"only {len(mine)} learnable questions: too few for a margin to mean anything")
    if [r["id"] for r in mine] != [r["id"] for r in base]:
        raise ValueError("the adapter and the base were scored on different questions")
    acc, base_acc, guess, one_letter = accuracy(mine), accuracy(base), chance(mine), best_single_letter(mine)
    letter, share = favourite(mine)
    problems = []
    if acc < one_letter + MIN_MARGIN:
        problems.append(f"accuracy {acc:.3f} < best single letter {one_letter:.3f} + {MIN_MARGIN}")
    if acc < base_acc + MIN_MARGIN:
        problems.append(f"accuracy {acc:.3f} < base {base_acc:.3f} + {MIN_MARGIN}")
    if share > MAX_FAVOURITE_SHARE:
        problems.append(f"answers {letter} on {share:.0%} of questions (limit {MAX_FAVOURITE_SHARE:.0%})")
    return {"n": len(mine), "accuracy": round(acc, 4), "base": round(base_acc, 4), "chance": round(guess, 4),
            "best_single_letter": round(one_letter, 4), "margin_over_base": round(acc - base_acc, 4),
            "margin_over_best_letter": round(acc - one_letter, 4),
            "favourite": letter, "favourite_share": round(share, 4), "ok": not problems, "problems": problems}
