"""Benchmark: letter scoring vs the seeds' generate-and-parse (not collected by pytest: no test_ prefix).

    python bench/bench_scoring.py [--model tiny|smollm2-135m] [--questions 96] [--adapter PATH]

One process, one model (the kit's tiny one, or SmolLM2-135M-Instruct: a real model whose base already answers with a
letter and goes on, "B) September ..."), the same questions: questions/s of `helpers.scoring.score_letters` (one batched forward,
last position only) against `generate_letters` (greedy generate up to 64 new tokens, then the regex), and the
share of questions on which both pick the same letter where the generation parsed. Goal on the tiny model on a
2-core CPU (and on SmolLM2-135M): letter scoring >= 1.5x the questions/s of generation, with identical picks wherever the baseline
parsed and the baseline parsing at least MIN_PARSED_SHARE of the questions. `run_benchmark(n_questions)` returns the
numbers as a dict (for `make bench`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import config  # noqa: E402

from helpers import io  # noqa: E402
from helpers.records import validate  # noqa: E402

GOAL_RATIO = 1.5
# Same picks say something only where most generations parsed: below half (an untrained model rarely writes a
# letter) the agreement goal is not met, whatever the few parsed answers show. Letter scoring picks on every question.
MIN_PARSED_SHARE = 0.5


BUNDLED = ROOT / "data" / "general_mcq.jsonl"

# float32, no 4-bit, no Unsloth (the smoke profile's model section), with the 512-token context these timings used
SMOKE_MODEL = dataclasses.replace(config.load_profile("smoke").model, max_seq_len=512)


def _questions(n: int, path: str | Path = BUNDLED) -> list[dict]:
    """The first n questions of a JSONL of records (default: the bundled general-knowledge set)."""
    recs = io.read_jsonl(path)[:n]
    return [validate(r, path, f"line {i + 1}") for i, r in enumerate(recs)]


PROFILES = {"tiny": "smoke", "smollm2-135m": "cpu"}  # the profile whose run trains adapters for each model


def default_adapter(model: str = "tiny") -> str | None:
    """Model 1's adapter from the model's profile run (smoke, cpu) when notebooks 00-03 have run, else None."""
    path = config.runs_root() / PROFILES[model] / "models" / "model1_lora" / "adapter"
    return str(path) if (path / "adapter_model.safetensors").exists() else None


def run_benchmark(n_questions: int = 96, *, adapter: str | None = "auto", questions_file: str | Path = BUNDLED,
                  batch_size: int = 16, gen_batch_size: int = 8, max_new_tokens: int = 64, threads: int = 1,
                  model_name: str = "tiny") -> dict:
    """Time both methods on one model (with a trained adapter: "auto" = its profile run's model 1, if any)."""
    import torch
    adapter = default_adapter(model_name) if adapter == "auto" else adapter
    torch.set_num_threads(threads)  # 1 thread: 2 threads on 2 shared cores were up to 50x slower in training
    from helpers import models, scoring
    model, tokenizer, _ = models.load_model(model_name, model=SMOKE_MODEL, for_training=False)
    if adapter:
        model = models.load_adapter(model, adapter)
    items = _questions(n_questions, questions_file)
    out = scoring.compare_methods(model, tokenizer, items, batch_size=batch_size, gen_batch_size=gen_batch_size,
                                  max_new_tokens=max_new_tokens)
    out.update(model=model_name + (f" + {adapter}" if adapter else ""), questions_file=str(questions_file),
               threads=threads, batch_size=batch_size, gen_batch_size=gen_batch_size, max_new_tokens=max_new_tokens,
               goal_ratio=GOAL_RATIO,
               meets_goal=out["ratio"] >= GOAL_RATIO and out["baseline_parse_rate"] >= MIN_PARSED_SHARE
               and out["agreement"] == 1.0)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Print the table and return the numbers."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(PROFILES), default="tiny")
    ap.add_argument("--questions", type=int, default=96)
    ap.add_argument("--adapter", default="auto", help="a trained adapter folder; 'auto' = runs/smoke's model1_lora "
                    "(runs/cpu's for smollm2-135m) if trained (the untrained tiny model rarely writes a letter, so little parses), "
                    "'none' = base only")
    ap.add_argument("--questions-file", default=str(BUNDLED), help="JSONL of records, e.g. runs/smoke/data/val.jsonl")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    r = run_benchmark(args.questions, adapter=None if args.adapter == "none" else args.adapter,
                      questions_file=args.questions_file, threads=args.threads, model_name=args.model)
    print(f"model: {r['model']}, {r['questions']} questions from {r['questions_file']}, {r['threads']} thread(s), "
          f"best of {r['repeats']}")
    print(f"{'method':<34}{'seconds':>9}{'questions/s':>14}")
    rows = (("letters", "letters (1 forward, last position)"), ("letters_no_prefix", "letters, no shared-head cache"),
            ("generate", "generate (<= 64 tokens) + regex"))
    for key, label in rows:
        print(f"{label:<34}{r['seconds'][key]:>9.2f}{r['questions_per_s'][key]:>14.1f}")
    print(f"speed-up {r['ratio']:.2f}x ({r['ratio_no_prefix']:.2f}x without the cache; goal >= {GOAL_RATIO}x); "
          f"baseline parsed {r['baseline_parse_rate']:.1%} (goal >= {MIN_PARSED_SHARE:.0%}); agreement where parsed "
          f"{r['agreement']:.1%} ({r['agreeing']}/{r['parsed']})")
    for d in r["disagreements"]:
        print(f"  differs: question {d['index']}: letters {d['letters']}, generate {d['generate']} ({d['text']!r})")
    print("goal met" if r["meets_goal"] else "goal NOT met")
    return r


if __name__ == "__main__":
    main()
