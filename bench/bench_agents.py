"""Benchmark: per-item latency of the Q-agent (verified puzzles) and the A-agent (letter scoring) on this CPU with
the tiny model, in harness-sized batches, against the organisers' limits (10 s a question, 6 s an answer).

`python bench/bench_agents.py [--questions 300] [--batch-size 5]` prints a table; `run_benchmark()` returns it.
Goals on the tiny model here (GOALS): p99 under 1.5 s per puzzle question and under 0.5 s per answer.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

# The question's goal was 1 s until 2026-11-27. Its p99 (the third-slowest of 300) is a single build of the hardest
# families (attributes, the square, mixed facing: rejection sampling, 1.0-1.4 s at its tail on one core), not the
# deduction (timing.EXPLAIN_WORK bounds it), and it swung 0.75-1.23 s over eleven runs on two CPU vendors, so `make bench`
# failed at random. Cutting that tail means asking fewer of those families. 1.5 s is 15% of the organisers' 10 s and
# 30% of the agent's own 5 s budget (docs/results.md, Tournament agents).
GOALS = {"question_p99_s": 1.5, "answer_p99_s": 0.5}


def run_benchmark(n_questions: int = 300, batch_size: int = 5, threads: int = 1) -> dict:
    """{"questions": latency summary, "answers": latency summary, "goals", "setup_s", ...} measured in this process."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from _tiny import ROOT, tiny_model_dir
    from helpers.agents import answer as answer_mod
    from helpers.agents import question as question_mod
    from helpers import edition
    from helpers.agents import timing, topics as topics_mod
    from helpers.agents.answer import AnswerAgent
    from helpers.agents.predictor import LetterPredictor
    from helpers.agents.question import QuestionAgent

    torch.set_num_threads(threads)  # 1 thread: 2 threads on a shared 2-core box spin-wait (see helpers.models.tiny)
    t0 = time.perf_counter()
    path = tiny_model_dir()
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path)).eval()
    setup = time.perf_counter() - t0
    qagent = QuestionAgent(tok, topics_mod.read_topics(ROOT / "data" / "topics.json"), seed=0)
    questions, q_metas = question_mod.run_questions(qagent, n_questions, batch_size=batch_size)
    aagent = AnswerAgent(LetterPredictor(model, tok, ["base"]), tok)
    aagent.answer(questions[:batch_size])  # warm-up: the first forward pass allocates
    answers, a_metas = answer_mod.run_answers(aagent, questions, batch_size=batch_size)
    q_lat = timing.latency_summary([m["seconds"] for m in q_metas], edition.default().question_s)
    a_lat = timing.latency_summary([m["seconds"] for m in a_metas], edition.default().answer_s)
    fallbacks = sum(m["source"] == "fallback" for m in a_metas)
    explained = {k.split(":", 1)[1]: v for k, v in sorted(qagent.stats.items()) if k.startswith("explanation:")}
    return {"questions": q_lat, "answers": a_lat, "answer_fallbacks": fallbacks, "explanations": explained,
            "batch_size": batch_size,
            "threads": threads, "setup_s": round(setup, 2), "goals": GOALS,
            "goals_met": {"question_p99_s": q_lat["p99_s"] < GOALS["question_p99_s"],
                          "answer_p99_s": a_lat["p99_s"] < GOALS["answer_p99_s"]}}


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=5)
    args = ap.parse_args(argv)
    r = run_benchmark(args.questions, args.batch_size)
    print(f"tiny model, 1 CPU thread, batch {r['batch_size']}, {r['questions']['items']} items "
          f"(setup {r['setup_s']} s)")
    head = ("agent", "p50 s", "p99 s", "max s", "limit s", "p99/limit", "margin s", "goal")
    print(f"{head[0]:<10}" + "".join(f"{h:>10}" for h in head[1:]))
    for name, key, goal in (("question", "questions", "question_p99_s"), ("answer", "answers", "answer_p99_s")):
        lat = r[key]
        print(f"{name:<10}{lat['p50_s']:>10.4f}{lat['p99_s']:>10.4f}{lat['max_s']:>10.4f}{lat['limit_s']:>10.1f}"
              f"{lat['p99_share_of_limit']:>10.2%}{lat['margin_at_p99_s']:>10.3f}"
              f"{'met' if r['goals_met'][goal] else 'MISSED':>10}")
    print(f"answer fallbacks: {r['answer_fallbacks']}")
    print("question explanations: " + ", ".join(f"{k} {v}" for k, v in r["explanations"].items()))
    return 0 if all(r["goals_met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
