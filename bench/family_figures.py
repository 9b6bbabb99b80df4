"""Each puzzle family's figures (docs/results.md, "Every topic to one contract"): per level its measured difficulty,
the blind strategies' hit rates over its questions, the share of explanations that are checked deductions, and
the share passing each edition's question filter, counted with Qwen's vocabulary (see bench/edition_figures.py for
how to make it importable; without it the kit's tiny tokenizer stands in and the output says so).

    PYTHONPATH=/tmp/qwtok .venv/bin/python bench/family_figures.py [--per-level 200] [--kinds truth_liars ...]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import edition, filters, puzzles  # noqa: E402
from helpers.puzzles import blind, families  # noqa: E402
from helpers.puzzles.deduction.measure import explanation  # noqa: E402

from edition_figures import tokenizer  # noqa: E402


def figures(kind: str, per_level: int, seed: int, tok: object) -> dict:
    t0 = time.perf_counter()
    recs = puzzles.generate(per_level * len(puzzles.LEVELS), seed=seed, kinds=(kind,))
    out: dict = {"kind": kind, "questions": len(recs), "levels": {}}
    for level in puzzles.LEVELS:
        at = [r for r in recs if r["puzzle"]["level"] == level]
        out["levels"][level] = {"difficulty": round(statistics.mean(r["difficulty"] for r in at), 2)}
    out["blind"] = {k: round(v, 3) for k, v in blind.play(recs, random.Random(f"figures:{kind}")).items()}
    out["blind"]["usual_key"] = round(blind.play_usual_key(recs, random.Random(f"usual:{kind}")), 3)
    sample = recs[:60]
    sources = [explanation(r["puzzle"], r["choices"][r["answer"]])[1] for r in sample]
    out["checked_deduction_share"] = round(sum(s == "deduction" for s in sources) / len(sources), 3)
    subtopic = puzzles.TOPICS[kind][1]
    for name in edition.names():
        rules = edition.load(name).question_rules
        for level in puzzles.LEVELS:
            at = [r for r in recs if r["puzzle"]["level"] == level]
            passed = sum(filters.check_question(filters.to_official_question(r, subtopic), tok, rules).ok for r in at)
            out["levels"][level][f"filter:{name}"] = round(passed / len(at), 3)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-level", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", nargs="*", default=list(families.KINDS))
    args = ap.parse_args(argv)
    tok, counted_with = tokenizer()
    rows = [figures(k, args.per_level, args.seed, tok) for k in args.kinds]
    print(json.dumps({"counted_with": counted_with, "families": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
