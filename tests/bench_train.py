"""Benchmark of training throughput (not collected by pytest: no test_ prefix).

    python tests/bench_train.py [--questions 960] [--repeats 1]

Trains the same LoRA (the smoke profile's model1_lora) on the warmed-up tiny model over the same questions
(the smoke profile's data build: bundled questions and generated puzzles, so lengths vary as in a real mix) three ways, in one process, one torch thread each, and reports real (non-pad) tokens per second:
  kit     helpers.train.train_adapter: curriculum chunks, replay, length grouping, telemetry, atomic
          checkpoints after every chunk (everything a real run pays for);
  plain   transformers Trainer + PEFT with dynamic padding (pad each batch to its longest example);
  fixed   the seeds' style: every sequence padded to a fixed length (512 here; the seeds used 2048).
Goals: kit / plain >= 1.0 (the kit's extras cost nothing) and kit / fixed >= 2.5. Keep the default 640 questions:
at 120 the kit's fixed cost per chunk (a Trainer and a checkpoint each) is a tenth of the run and it fell to 0.9x. `run_benchmark()` returns
the numbers as a dict (for `make bench`).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import config  # noqa: E402

GOALS = {"kit_vs_plain": 1.0, "kit_vs_fixed": 2.5}


def _cfg(work: Path, chunks: int) -> dict:
    return config.load_profile("smoke", "bench-train", {
        "train.epochs_per_chunk": 1, "train.logging_steps": 5, "train.cpu_threads": 1, "curriculum.chunks": chunks})


def _plain_run(cfg: dict, examples: list[dict], *, fixed: int | None, out: Path) -> dict:
    """One epoch of a stock Trainer + PEFT LoRA over `examples`; fixed=N pads every sequence to N tokens."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import DataCollatorForSeq2Seq, Trainer

    from helpers import models
    from helpers.train_data import IGNORE_INDEX, make_dataset
    from helpers.train_hf import make_training_args, trainer_tokenizer_kwarg

    torch.manual_seed(int(cfg["seed"]))
    model, tok, _ = models.load_model(cfg["model"]["base"], model_cfg=cfg["model"],
                                      recommendation=_recommendation(), for_training=True)
    spec, train = cfg["models"]["model1_lora"], cfg["train"]
    targets = models.filter_target_modules([n for n, _ in model.named_modules()], train["target_modules"])
    model = get_peft_model(model, LoraConfig(r=spec["r"], lora_alpha=spec["alpha"], lora_dropout=0.0,
                                             target_modules=targets, task_type="CAUSAL_LM"))
    collator = DataCollatorForSeq2Seq(tok, padding="max_length" if fixed else "longest", max_length=fixed,
                                      label_pad_token_id=IGNORE_INDEX, return_tensors="pt")
    args, _ = make_training_args(output_dir=str(out), per_device_train_batch_size=int(train["batch_size"]),
                                 gradient_accumulation_steps=int(train["grad_accum"]), num_train_epochs=1.0,
                                 learning_rate=float(train["lr_start"]), logging_steps=50, save_strategy="no",
                                 report_to=[], disable_tqdm=True, use_cpu=True, seed=int(cfg["seed"]),
                                 remove_unused_columns=False, dataloader_num_workers=0)
    trainer = Trainer(model=model, args=args, train_dataset=make_dataset(examples), data_collator=collator,
                      **trainer_tokenizer_kwarg(tok))
    from transformers.trainer_callback import PrinterCallback
    trainer.remove_callback(PrinterCallback)  # no log dicts in the benchmark's table
    t0 = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - t0
    tokens = sum(len(e["input_ids"]) for e in examples)
    return {"tokens": tokens, "seconds": round(seconds, 3), "tokens_per_s": round(tokens / seconds, 1),
            "steps": trainer.state.global_step}


def _recommendation() -> dict:
    from helpers import env
    return env.recommend({"backend": "cpu", "torch": {"sdpa": True}, "unsloth": {"importable": False}})


def _kit_run(cfg: dict, curriculum: Path, out: Path) -> dict:
    from helpers import train
    s = train.train_adapter(cfg, "model1_lora", curriculum_path=curriculum, out_dir=out, resume=False,
                            progress=False, recommendation=_recommendation(), live_plot=False)
    # train_s covers each chunk from replay mixing to its checkpoint on disk, not just Trainer.train().
    return {"tokens": s["tokens"], "seconds": round(s["train_seconds"], 3),
            "tokens_per_s": round(s["tokens"] / s["train_seconds"], 1),
            "steps": sum(c["steps"] for c in s["per_chunk"]), "replayed": sum(c["replayed"] for c in s["per_chunk"])}


def _smoke_curriculum(cfg: dict, path: Path, n_questions: int) -> Path:
    """The smoke profile's own training data (bundled questions and generated puzzles: short and long examples
    mixed, as in any real build), first n_questions of it, ordered and chunked by helpers.curriculum."""
    from helpers import data, io
    from helpers.curriculum import order_and_chunk
    d = cfg["data"]
    train, _, _ = data.build_splits([str(config.resolve_path(s)) for s in d["sources"]], puzzles=int(d["puzzles"]),
                                    val_fraction=float(d["val_fraction"]), seed=int(cfg["seed"]),
                                    balance=bool(d.get("balance_letters", True)))
    random.Random(int(cfg["seed"])).shuffle(train)
    ordered = order_and_chunk(train[:n_questions], chunks=int(cfg["curriculum"]["chunks"]), seed=int(cfg["seed"]))
    io.write_jsonl(path, ordered)
    return path


# The seeds padded every sequence to their max_seq_length of 2048 (configs/mi300x.yaml keeps it); 512 is the
# shortest max length of any real profile (base, laptop), and 2048 on this CPU would take minutes per run.
FIXED_LEN = 512


def run_benchmark(n_questions: int = 640, chunks: int = 3, repeats: int = 1, fixed_len: int = FIXED_LEN) -> dict:
    """Train the three ways (best of `repeats` each) and return tokens/s and the ratios against the goals."""
    import torch

    from helpers import models
    from helpers.tinymodel import ensure_tiny_model
    from helpers.train_data import build_examples, load_curriculum

    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="bench-train-"))
    cfg = _cfg(work, chunks)
    cfg["model"]["base"] = str(ensure_tiny_model(progress=False))
    curriculum = _smoke_curriculum(cfg, work / "curriculum.jsonl", n_questions)
    records = [r for recs in load_curriculum(curriculum).values() for r in recs]
    _, tok, _ = models.load_model(cfg["model"]["base"], model_cfg=cfg["model"], recommendation=_recommendation(),
                                  for_training=True)
    examples, _ = build_examples(tok, records, int(cfg["model"]["max_seq_len"]))
    _plain_run(cfg, examples[:32], fixed=None, out=work / "warm-up")  # untimed: one-time start-up costs
    runs: dict[str, dict] = {}
    for rep in range(repeats):
        for name, fn in (("plain", lambda: _plain_run(cfg, examples, fixed=None, out=work / f"plain{rep}")),
                         ("fixed", lambda: _plain_run(cfg, examples, fixed=fixed_len, out=work / f"fixed{rep}")),
                         ("kit", lambda: _kit_run(cfg, curriculum, work / f"kit{rep}"))):
            result = fn()
            if name not in runs or result["tokens_per_s"] > runs[name]["tokens_per_s"]:
                runs[name] = result
    mean_len = sum(len(e["input_ids"]) for e in examples) / len(examples)
    ratios = {"kit_vs_plain": round(runs["kit"]["tokens_per_s"] / runs["plain"]["tokens_per_s"], 2),
              "kit_vs_fixed": round(runs["kit"]["tokens_per_s"] / runs["fixed"]["tokens_per_s"], 2)}
    return {"questions": len(examples), "mean_tokens": round(mean_len, 1), "max_seq_len": cfg["model"]["max_seq_len"],
            "fixed_len": fixed_len,
            "runs": runs, "ratios": ratios, "goals": GOALS,
            "met": {k: ratios[k] >= GOALS[k] for k in GOALS}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=640)
    ap.add_argument("--fixed-len", type=int, default=FIXED_LEN, help="the fixed-padding baseline's length")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    a = ap.parse_args(argv)
    res = run_benchmark(a.questions, repeats=a.repeats, fixed_len=a.fixed_len)
    if a.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"training throughput: {res['questions']} questions, mean {res['mean_tokens']} tokens, "
          f"max_seq_len {res['max_seq_len']}, fixed padding to {res['fixed_len']}, 1 torch thread")
    for name, r in res["runs"].items():
        print(f"  {name:6s} {r['tokens_per_s']:>10,.0f} real tokens/s  ({r['tokens']:,} tokens, {r['steps']} steps, "
              f"{r['seconds']:.1f} s)")
    for k, v in res["ratios"].items():
        print(f"  {k:14s} {v:5.2f}x  (goal >= {GOALS[k]}x: {'met' if res['met'][k] else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
