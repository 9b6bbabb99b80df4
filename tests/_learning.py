"""What "the smoke adapters learned" means, shared by the pipeline test and the learning benchmark.

The task the tiny model can learn is the bundled general-knowledge questions whose four choices are a fixed list
in a fixed order that other bundled questions share (743 of 1,437; data/README.md, "Fixed set"): "this fact ->
this letter" is learnable at 1M parameters, and the answers sit on all four letters. The bundled questions with
sampled distractors and the generated puzzles need reading the choices, which the tiny model cannot do: they stay
near chance (reported by the benchmark, not judged).

On those questions an adapter passes when both hold:
- its accuracy is at least MIN_MARGIN over chance and over the untrained base;
- it has no letter preference: its most frequent answer letter is given on at most MAX_FAVOURITE_SHARE of the
  questions (the key's own most common letter covers ~28%). Accuracy alone does not show the task was learned:
  an adapter that answers "B" on 72% of them still scored 50% (base 28%) by getting the B questions right.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "data" / "general_mcq.jsonl"
MIN_MARGIN = 0.15            # accuracy points over both chance and the base; measured 0.30-0.40 (bench_learning.py)
MAX_FAVOURITE_SHARE = 0.45   # the key's most common letter is ~0.28; measured 0.30-0.41; a collapse is 0.7-1.0


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
    acc, base_acc, guess = accuracy(mine), accuracy(base), chance(mine)
    letter, share = favourite(mine)
    problems = []
    if acc < guess + MIN_MARGIN:
        problems.append(f"accuracy {acc:.3f} < chance {guess:.3f} + {MIN_MARGIN}")
    if acc < base_acc + MIN_MARGIN:
        problems.append(f"accuracy {acc:.3f} < base {base_acc:.3f} + {MIN_MARGIN}")
    if share > MAX_FAVOURITE_SHARE:
        problems.append(f"answers {letter} on {share:.0%} of questions (limit {MAX_FAVOURITE_SHARE:.0%})")
    return {"n": len(mine), "accuracy": round(acc, 4), "base": round(base_acc, 4), "chance": round(guess, 4),
            "margin_over_base": round(acc - base_acc, 4), "margin_over_chance": round(acc - guess, 4),
            "favourite": letter, "favourite_share": round(share, 4), "ok": not problems, "problems": problems}
