"""`make bench`: every benchmark of the kit in one process, one table of figures against their goals, one JSON.

    python bench/bench_all.py [--quick] [--only data,train,scoring,agents,memory,train-real,scoring-real,reason,
                              reason-real] [--out PATH]
    python bench/bench_all.py --ci [--without answer-only-logits|prefix-cache]     (make bench-quick: the CI tier)

Runs, in turn: the dataset build (bench/bench_data.py), training throughput against a plain Trainer and the
seeds' fixed padding (bench/bench_train.py), letter scoring against generate-and-parse (bench/bench_scoring.py),
the agents' per-item latency (bench/bench_agents.py), the memory estimator (helpers/env/memory.py) against the
device memory the seeds measured, then training and scoring again on the real SmolLM2-135M (training against a plain
Trainer + PEFT and TRL's SFTTrainer, with peak RSS), and the A-agent letter-only against reasoning inside the deadline
and without one (bench/bench_reason.py) on both models. A benchmark that fails becomes a row "failed: <error>"; the others still run.
Writes runs/bench/bench.json (under $KIT_RUNS_DIR if set): the rows, each benchmark's full result, the machine.
Exit status 1 when a goal was missed or a benchmark failed, each named on a line of its own after the table; rows
without a goal never fail the run.

--ci is the quick tier CI runs (2-4 minutes on 2 cores): data growth, training throughput and letter scoring on
the tiny model with no trained adapter, and the memory rows, each ratio held to a CI bound (CI_BOUNDS) rather than
the full benchmark's goal; --without NAME measures the kit with one optimisation off, whose row must then fail.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers import config, io  # noqa: E402

Q72 = "Qwen/Qwen2.5-72B-Instruct"
# The seeds' MI300X run (seeds 000 and 003): Qwen2.5-72B-Instruct through Unsloth in 16-bit (4-bit silently off
# on ROCm), LoRA r=64 on every linear layer, batch 4 x 2048 tokens, gradient checkpointing, adamw_torch.
SEED_72B = dict(method="lora", dtype="bf16", rank=64, target_modules="all-linear", batch_size=4, seq_len=2048,
                grad_checkpointing=True, optimizer="adamw_torch", backend="unsloth")
# Seed 004's MI50 runs: Qwen2.5-3B in float32 ("required for ROCm stability"), plain transformers + PEFT on all
# seven projections, gradient checkpointing on (listed among its "working optimizations").
SEED_MI50 = dict(method="lora", dtype="fp32", target_modules="all-linear", grad_checkpointing=True,
                 optimizer="adamw_torch", backend="transformers")
# rocm-smi's "GB" are GiB-like (helpers/env/memory.py: the MI300X's "192 GB" is 191.7 GiB); the MI50's 32 GB HBM2 too.
MI50_GIB = 32.0

# Measured readings, compared as estimate / measured. Seed 002's "~48GB VRAM (with bfloat16)" for the same 72B run
# is left out: the bf16 weights alone are 135 GiB (seed 000's own reading), so 48 cannot be a training reading.
MEMORY_READINGS = [
    # seed 000 (research findings, section 6 "Current Training Progress"): "Memory: 135.44GB VRAM used, 56.56GB
    # free" while training; 72.71e9 bf16 weights = 135.43 GiB, so the reading is the weights part (tolerance 2%).
    {"figure": "72B weights / seed 000's 135.44 GB", "model": Q72, "kwargs": SEED_72B, "part": "weights",
     "measured_gib": 135.44, "tolerance": 0.02},
    # seed 003 (status report, "GPU Metrics", chunk 4/10 training): "VRAM Usage: 159.4GB / 192GB (83%)": the peak
    # the estimator predicts (tolerance 15%, as tests/test_memory.py holds the 135-159 range's middle).
    {"figure": "72B LoRA r=64 peak / seed 003's 159.4 GB", "model": Q72, "kwargs": SEED_72B, "part": "total",
     "measured_gib": 159.4, "tolerance": 0.15},
]
# Measured outcomes (fits or not), compared with the estimator's verdict at its default 5% headroom.
MEMORY_VERDICTS = [
    # seed 000 (section 3 table, "Challenge 3: Memory Offloading") and seed 001 ("Takes 180GB+ VRAM"): Qwen3-235B in
    # 16-bit ran only with max_memory offloading, 180 GB on the 192 GB device: it does not fit.
    {"figure": "Qwen3-235B bf16 LoRA on MI300X (seed 000: offloaded)", "model": "Qwen/Qwen3-235B-A22B",
     "kwargs": SEED_72B, "device": "mi300x", "measured_fits": False},
    # seed 004 ("Memory Configuration Attempts"): batch 4 x 4096, r=16: OOM; batch 2 x 4096: OOM in the training
    # step; batch 1 x 1024, r=8: "Working".
    {"figure": "Qwen2.5-3B fp32 b4 x 4096 r16 on MI50 (seed 004: OOM)", "model": "Qwen/Qwen2.5-3B-Instruct",
     "kwargs": dict(SEED_MI50, rank=16, batch_size=4, seq_len=4096), "device": "mi50", "measured_fits": False},
    {"figure": "Qwen2.5-3B fp32 b2 x 4096 r16 on MI50 (seed 004: OOM)", "model": "Qwen/Qwen2.5-3B-Instruct",
     "kwargs": dict(SEED_MI50, rank=16, batch_size=2, seq_len=4096), "device": "mi50", "measured_fits": False},
    {"figure": "Qwen2.5-3B fp32 b1 x 1024 r8 on MI50 (seed 004: works)", "model": "Qwen/Qwen2.5-3B-Instruct",
     "kwargs": dict(SEED_MI50, rank=8, batch_size=1, seq_len=1024), "device": "mi50", "measured_fits": True},
]


def _row(bench: str, figure: str, value: Any, goal: str = "", met: bool | None = None, unit: str = "") -> dict:
    """One line of the table (met None: a figure without a goal)."""
    return {"benchmark": bench, "figure": figure, "value": value, "unit": unit, "goal": goal, "met": met}


def bench_data(quick: bool) -> tuple[list[dict], dict]:
    """Dataset build + curriculum at 50k and 150k rows (quick: 5k and 15k, no time goal)."""
    import bench_data as b
    sizes = (5_000, 15_000) if quick else (50_000, 150_000)
    res = b.run(sizes, quiet=True)
    first = res["sizes"][sizes[0]]
    limit = res["size_ratio"] * 1.25  # growth within 25% of linear
    rows = [_row("data", f"{sizes[0]:,} rows: build + curriculum", first["total_s"],
                 "< 5 s" if sizes[0] == 50_000 else "", res.get("goal_50k_under_5s"), "s"),
            _row("data", f"{sizes[0]:,} rows: records/s", first["records_per_s"], unit="/s"),
            # growth is judged on CPU time: the build is single-threaded, and on a shared machine (load above the
            # core count) wall time also measures the neighbours (bench/bench_data.py)
            _row("data", f"time {sizes[-1]:,} / time {sizes[0]:,} (cpu)", res["ratio_cpu"],
                 f"<= {limit:.2f} (linear {res['size_ratio']:g})", res["ratio_cpu"] <= limit, "x"),
            _row("data", f"time {sizes[-1]:,} / time {sizes[0]:,} (wall)", res["ratio"], unit="x")]
    return rows, res


def bench_train(quick: bool) -> tuple[list[dict], dict]:
    """Training throughput: the kit's loop vs a plain Trainer (dynamic padding) and fixed padding."""
    import bench_train as b
    res = b.run_benchmark(240 if quick else 640, chunks=3, repeats=1)
    rows = [_row("train", "kit / plain Trainer (real tokens/s)", res["ratios"]["kit_vs_plain"],
                 f">= {b.GOALS['kit_vs_plain']}", res["met"]["kit_vs_plain"], "x"),
            _row("train", f"kit / fixed padding to {res['fixed_len']} (real tokens/s)", res["ratios"]["kit_vs_fixed"],
                 f">= {b.GOALS['kit_vs_fixed']}", res["met"]["kit_vs_fixed"], "x")]
    rows += [_row("train", f"{k} real tokens/s", r["tokens_per_s"], unit="/s") for k, r in res["runs"].items()]
    return rows, res


REAL = "smollm2-135m"
TRAINER_NAMES = {"plain": "plain Trainer + PEFT", "trl": "TRL SFTTrainer, padded", "trl_pf": "TRL SFTTrainer, padding-free"}


def bench_train_real(quick: bool) -> tuple[list[dict], dict]:
    """Training on SmolLM2-135M (cpu profile): the kit vs a plain Trainer + PEFT and TRL's SFTTrainer, tokens/s and
    peak RSS of each in its own child process."""
    import bench_train as b
    res = b.run_benchmark(48 if quick else 160, chunks=2, repeats=1, model=REAL, threads=2)
    rows = []
    for key, ratio in res["ratios"].items():
        other = key.split("_vs_")[1]
        if "rss" in key:
            rows.append(_row("train-real", f"kit / {TRAINER_NAMES[other]} (peak RSS)", ratio, f"<= {b.RSS_GOAL}",
                             res["met"][key], "x"))
        else:
            rows.append(_row("train-real", f"kit / {TRAINER_NAMES[other]} (real tokens/s)", ratio,
                             f">= {res['goals'][key]}", res["met"][key], "x"))
    rows += [_row("train-real", f"{k} real tokens/s, peak RSS {r['peak_rss_mib']:,.0f} MiB", r["tokens_per_s"],
                  unit="/s") for k, r in res["runs"].items()]
    if not res["trl_padding_free_correct"]:
        rows.append(_row("train-real", "TRL padding-free", "not run: this transformers has no per-example mask "
                         "from position ids (needs FlashAttention)"))
    return rows, res


def agreement_row(bench: str, figure: str, agreement: float, parsed: dict[str, float], minimum: float) -> dict:
    """An agreement row: met at 100% only when each method in `parsed` (name -> share of answers parsed) reached
    `minimum`; below it the value names who fell short ("n/a: generate parsed 0%") and the goal is not met."""
    goal = f"100%, parsed >= {minimum:.0%}"
    short = [f"{name} parsed {share:.0%}" for name, share in parsed.items() if not share >= minimum]
    if short:
        return _row(bench, figure, "n/a: " + ", ".join(short), goal, False)
    return _row(bench, figure, agreement, goal, agreement == 1.0, "share")


def _scoring_rows(bench: str, res: dict, goal_ratio: float, min_parsed: float) -> list[dict]:
    """The scoring rows; letter scoring picks on every question, so only generate's parsed share can fall short."""
    return [_row(bench, "letters / generate (questions/s)", res["ratio"], f">= {goal_ratio}",
                 res["ratio"] >= goal_ratio, "x"),
            agreement_row(bench, f"same pick where generate parsed ({res['parsed']}/{res['questions']})",
                          res["agreement"], {"generate": res["baseline_parse_rate"]}, min_parsed),
            _row(bench, "letters questions/s", res["questions_per_s"]["letters"], unit="/s"),
            _row(bench, "model", res["model"])]


def bench_scoring(quick: bool) -> tuple[list[dict], dict]:
    """Letter scoring vs the seeds' generate-and-parse, same model and questions."""
    import bench_scoring as b
    res = b.run_benchmark(32 if quick else 96)
    if "+" not in res["model"]:
        res["model"] = "tiny, untrained (no smoke adapter: few generations parse)"
    return _scoring_rows("scoring", res, b.GOAL_RATIO, b.MIN_PARSED_SHARE), res


def bench_scoring_real(quick: bool) -> tuple[list[dict], dict]:
    """The same comparison on SmolLM2-135M (its base writes "B) ..." so generation parses), 2 threads."""
    import bench_scoring as b
    res = b.run_benchmark(32 if quick else 96, model_name=REAL, threads=2)
    return _scoring_rows("scoring-real", res, b.GOAL_RATIO, b.MIN_PARSED_SHARE), res


def bench_agents(quick: bool) -> tuple[list[dict], dict]:
    """Q-agent and A-agent per-item latency against the organisers' limits."""
    import bench_agents as b
    res = b.run_benchmark(50 if quick else 300)
    rows = []
    for key, goal, label in (("questions", "question_p99_s", "Q-agent"), ("answers", "answer_p99_s", "A-agent")):
        lat = res[key]
        rows += [_row("agents", f"{label} p99 s per item ({lat['items']} items)", lat["p99_s"],
                      f"< {res['goals'][goal]}", res["goals_met"][goal], "s"),
                 # the agents of notebook 10 aim for half their limit (TIME_MARGIN = 0.5)
                 _row("agents", f"{label} p99 / the {lat['limit_s']:g} s limit", lat["p99_share_of_limit"], "< 50%",
                      lat["p99_share_of_limit"] < 0.5, "share")]
    return rows, res


def _reason_rows(bench: str, res: dict) -> list[dict]:
    rows = []
    for mode, label in (("letter", "letter-only"), ("reason", "reasoning, 3 s deadline"),
                        ("unbounded", "reasoning, no deadline (512 tokens)")):
        if mode not in res:
            continue
        m, lat = res[mode], res[mode]["latency"]
        goal = f"< {lat['limit_s']:g}" if mode == "reason" else ""
        rows += [_row(bench, f"{label}: p50 / p99 s per answer ({m['n']} puzzles)", f"{lat['p50_s']:.2f} / {lat['p99_s']:.2f}",
                      goal, lat["p99_s"] < lat["limit_s"] if goal else None, "s"),
                 _row(bench, f"{label}: correct, cut, favourite letter",
                      f"{m['correct']}/{m['n']}, cut {m['cut_share']:.0%}, {m['favourite']['letter']} "
                      f"{m['favourite']['share']:.0%}")]
    return rows + [_row(bench, "reasoner", f"{res['model']}: {res['reasoner']}")]


def bench_reason(quick: bool) -> tuple[list[dict], dict]:
    """The A-agent letter-only against reasoning (3 s deadline) and reasoning without one, on the tiny model."""
    import bench_reason as b
    res = b.run_benchmark(12 if quick else 24)
    return _reason_rows("reason", res), res


def bench_reason_real(quick: bool) -> tuple[list[dict], dict]:
    """The same on SmolLM2-135M, 2 threads (runs/cpu's trained reasoner when notebook 08 ran there)."""
    import bench_reason as b
    res = b.run_benchmark(12 if quick else 24, model_name=REAL, threads=2)
    return _reason_rows("reason-real", res), res


def bench_memory(quick: bool) -> tuple[list[dict], dict]:
    """helpers.env.memory's estimates against what the seeds measured (readings and fit/OOM outcomes)."""
    from helpers.env import memory
    devices = {"mi300x": memory.MI300X_GIB, "mi50": MI50_GIB}
    rows, out = [], {"readings": [], "verdicts": []}
    for case in MEMORY_READINGS:
        est = memory.estimate(case["model"], **case["kwargs"])
        gib = (est.total_bytes if case["part"] == "total" else getattr(est, case["part"])) / memory.GIB
        ratio = gib / case["measured_gib"]
        ok = abs(ratio - 1) <= case["tolerance"]
        rows.append(_row("memory", case["figure"], round(ratio, 3),
                         f"{1 - case['tolerance']:.2f}-{1 + case['tolerance']:.2f}", ok, "x"))
        out["readings"].append({"figure": case["figure"], "estimate_gib": round(gib, 2),
                                "measured_gib": case["measured_gib"], "ratio": round(ratio, 4), "met": ok})
    for case in MEMORY_VERDICTS:
        est = memory.estimate(case["model"], **case["kwargs"])
        device = devices[case["device"]]
        fits = memory.fits(est, device)
        rows.append(_row("memory", case["figure"], f"est. {est.total_gib:.1f} GiB, usable {device * 0.95:.1f} "
                         f"(95% of {device:.1f}): " + ("fits" if fits else "OOM"),
                         "fits" if case["measured_fits"] else "OOM", fits == case["measured_fits"]))
        out["verdicts"].append({"figure": case["figure"], "estimate_gib": round(est.total_gib, 2), "device_gib": device,
                                "estimated_fits": fits, "measured_fits": case["measured_fits"]})
    return rows, out


BENCHMARKS: dict[str, Callable[[bool], tuple[list[dict], dict]]] = {
    "data": bench_data, "train": bench_train, "scoring": bench_scoring, "agents": bench_agents, "memory": bench_memory,
    "train-real": bench_train_real, "scoring-real": bench_scoring_real, "reason": bench_reason,
    "reason-real": bench_reason_real}


# The CI tier (`make bench-quick`; .ci/run calls it after the test tiers): the ratio benchmarks that need no trained
# adapter, at sizes that keep it at 2-4 minutes on 2 cores. Time is CPU time where a process can be descheduled for
# long (data, training), the best of 3 interleaved repeats where runs are short (scoring). Each bound sits 28-50%
# beyond the worst of 6 runs on a 2-core AMD EPYC at load 6-12 (room for a quieter machine, a slower disk or another
# vendor's CPU: CI must fail on a regression, not on a machine), and short of what switching the optimisation off
# gives where the benchmark has a switch (docs/results.md, "The quick tier in CI", has the spread and the failures).
# The training rows catch gross regressions only (the kit falling well behind a plain Trainer, padding to the
# maximum again): a lost answer-only LM head moves kit / plain by less than the noise at this size.
CI_SIZES = {"data": (20_000, 60_000), "train": 240, "scoring": 96}
CI_BOUNDS = {
    "data_growth_cpu": 5.5,      # 6 runs 3.01-3.66 (linear 3); a quadratic stage gives up to 9
    "kit_vs_plain": 0.7,         # 6 runs 1.03-1.22; the kit's fixed costs weigh at 240 questions (1.46x at 640)
    "kit_vs_fixed": 2.5,         # 6 runs 3.74-4.41; padding every sequence to 512 again gives about 1
    "letters_vs_generate": 1.7,  # 6 runs 2.75-2.96; without the shared-head cache 1.21-1.33
    "prefix_cache": 1.3}         # 6 runs 1.96-2.23; the cache off (or never reused) gives 1.0
# --without NAME: the kit's side measured with one optimisation switched off, to show its CI row fails.
SWITCHES = {"answer-only-logits": "train: the kit without train.answer_only_logits (LM head on every position)",
            "prefix-cache": "scoring: letter scoring without the shared-head cache (reuse_prefix=False)"}


def _bound_row(bench: str, figure: str, value: float, key: str, upper: bool = False) -> dict:
    """A CI row: the ratio against its CI_BOUNDS entry (a floor, or a ceiling when `upper`)."""
    bound = CI_BOUNDS[key]
    met = value <= bound if upper else value >= bound
    return _row(bench, figure, value, f"{'<=' if upper else '>='} {bound}", met, "x")


def ci_data(without: str | None) -> tuple[list[dict], dict]:
    """Dataset build + curriculum at CI_SIZES["data"] rows: growth in CPU time (linear is the size ratio)."""
    import bench_data as b
    sizes = CI_SIZES["data"]
    res = b.run(sizes, quiet=True)
    return [_bound_row("data", f"time {sizes[-1]:,} / time {sizes[0]:,} (cpu)", res["ratio_cpu"], "data_growth_cpu",
                       upper=True),
            _row("data", f"time {sizes[-1]:,} / time {sizes[0]:,} (wall)", res["ratio"], unit="x")], res


def ci_train(without: str | None) -> tuple[list[dict], dict]:
    """Training throughput on CI_SIZES["train"] questions: the kit vs a plain Trainer and vs fixed padding."""
    import bench_train as b
    overrides = {"train.answer_only_logits": False} if without == "answer-only-logits" else None
    res = b.run_benchmark(CI_SIZES["train"], chunks=3, repeats=1, overrides=overrides)
    cpu, wall, fixed = res["ratios_cpu"], res["ratios"], f"fixed padding to {res['fixed_len']}"
    rows = [_bound_row("train", "kit / plain Trainer (real tokens per CPU s)", cpu["kit_vs_plain"], "kit_vs_plain"),
            _bound_row("train", f"kit / {fixed} (real tokens per CPU s)", cpu["kit_vs_fixed"], "kit_vs_fixed"),
            _row("train", "kit / plain Trainer (real tokens/s, wall)", wall["kit_vs_plain"], unit="x"),
            _row("train", f"kit / {fixed} (real tokens/s, wall)", wall["kit_vs_fixed"], unit="x")]
    rates = [_row("train", f"{k} real tokens/s", r["tokens_per_s"], unit="/s") for k, r in res["runs"].items()]
    return rows + rates, res


def ci_scoring(without: str | None) -> tuple[list[dict], dict]:
    """Letter scoring vs generate-and-parse on the tiny model with no adapter (speed only: agreement needs a trained
    one), and letter scoring with its shared-head cache against without it."""
    import bench_scoring as b
    res = b.run_benchmark(CI_SIZES["scoring"], adapter=None)
    sec = res["seconds"]
    letters = sec["letters_no_prefix"] if without == "prefix-cache" else sec["letters"]
    return [_bound_row("scoring", "letters / generate (questions/s)", sec["generate"] / letters, "letters_vs_generate"),
            _bound_row("scoring", "letters / letters without the shared-head cache (questions/s)",
                       sec["letters_no_prefix"] / letters, "prefix_cache"),
            _row("scoring", "letters questions/s", CI_SIZES["scoring"] / letters, unit="/s")], res


CI_BENCHMARKS: dict[str, Callable[[str | None], tuple[list[dict], dict]]] = {
    "data": ci_data, "train": ci_train, "scoring": ci_scoring, "memory": lambda without: bench_memory(True)}


def _cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else the architecture."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    """The facts that make timings comparable: CPUs, load, torch threads, versions."""
    import psutil
    import torch
    v = io.versions()
    return {"platform": platform.platform(), "processor": _cpu_model(),
            "cpu_count": os.cpu_count(), "cpu_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count(), "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
            "load_average_start": [round(x, 2) for x in os.getloadavg()], "torch_threads_start": torch.get_num_threads(),
            "python": v["python"], "torch": v["torch"], "transformers": v["transformers"], "peft": v["peft"]}


def _clean(obj: Any) -> Any:
    """JSON-safe: NaN/inf become None (strict JSON has neither), keys become strings."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _fmt(row: dict) -> str:
    """A row's value for the table, in its unit."""
    v, unit = row["value"], row["unit"]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if unit == "share":
        return f"{100 * v:.1f}%"
    if unit == "x":
        return f"{v:.2f}x"
    return f"{v:,.0f}{unit}" if abs(v) >= 100 else f"{v:.3g} {unit}".strip()


def format_table(rows: list[dict]) -> str:
    """One plain-text table: benchmark, figure, value, goal, met?"""
    cells = [("benchmark", "figure", "value", "goal", "met?")] + [
        (r["benchmark"], r["figure"], _fmt(r), r["goal"], {True: "yes", False: "NO", None: ""}[r["met"]]) for r in rows]
    widths = [min(max(len(c[i]) for c in cells), 70) for i in range(5)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(5)).rstrip() for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def missed_goals(rows: list[dict]) -> list[str]:
    """One line per row that fails the run: a benchmark that crashed, or a goal not met (goal-less rows never do)."""
    lines = []
    for r in rows:
        if r["figure"] == "failed":
            lines.append(f"[bench] {r['benchmark']} {r['value']}")
        elif r["goal"] and not r["met"]:
            lines.append(f"[bench] goal missed: {r['benchmark']} / {r['figure']}: {_fmt(r)}, goal {r['goal']}")
    return lines


def exit_status(rows: list[dict]) -> int:
    """0 when every benchmark ran and met its goals, else 1."""
    return 1 if missed_goals(rows) else 0


def _runners(quick: bool, ci: bool, without: str | None) -> dict[str, Callable[[], tuple[list[dict], dict]]]:
    """Each benchmark of the chosen tier, ready to call: the CI tier's (with `without`), else make bench's."""
    if ci:
        return {n: (lambda f=f: f(without)) for n, f in CI_BENCHMARKS.items()}
    return {n: (lambda f=f: f(quick)) for n, f in BENCHMARKS.items()}


def run_all(quick: bool = False, only: list[str] | None = None, out: str | Path | None = None, *, ci: bool = False,
            without: str | None = None) -> dict:
    """Run each benchmark in turn (a failure becomes a row), print the table, write runs/bench/bench.json (the CI
    tier: runs/bench/bench-ci.json), then print each missed goal and failed benchmark."""
    runners = _runners(quick, ci, without)
    names = [n for n in runners if not only or n in only]
    facts = machine()
    rows, results, seconds = [], {}, {}
    for name in names:
        print(f"[bench] {name} ...", flush=True)
        t0 = time.perf_counter()
        try:
            got, results[name] = runners[name]()
            rows += got
        except Exception as exc:  # noqa: BLE001 - one broken benchmark must not hide the others' numbers
            msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
            rows.append(_row(name, "failed", f"failed: {msg}", "", False))
            results[name] = {"error": msg, "traceback": traceback.format_exc()}
        seconds[name] = round(time.perf_counter() - t0, 1)
        print(f"[bench] {name} done in {seconds[name]} s", flush=True)
    import torch
    facts.update(load_average_end=[round(x, 2) for x in os.getloadavg()], torch_threads_end=torch.get_num_threads())
    table = format_table(rows)
    print(f"\n{facts['processor']}, {facts['cpu_usable']} usable CPUs, {facts['ram_gib']} GiB RAM, load average "
          f"{facts['load_average_start'][0]} at start, torch {facts['torch']} (threads: {facts['torch_threads_end']} after "
          f"the benchmarks set them), transformers {facts['transformers']}{_tier_note(quick, ci, without)}\n{table}")
    path = Path(out) if out else config.runs_root() / "bench" / ("bench-ci.json" if ci else "bench.json")
    record = _clean({**io.stamp({"quick": quick, "ci": ci, "without": without, "benchmarks": names}),
                     "machine": facts, "seconds": seconds,
                     "rows": rows, "failed": [n for n in names if "error" in results[n]], "missed": missed_goals(rows),
                     "results": results, "table": table.splitlines()})
    io.write_json(path, record)
    print(f"\nwrote {path}")
    print("\n".join(record["missed"]) or "[bench] every goal met", flush=True)
    return record


def _tier_note(quick: bool, ci: bool, without: str | None) -> str:
    """' (CI tier, without prefix-cache)' and the like, for the table's heading line."""
    if ci:
        return f" (CI tier{', without ' + without if without else ''})"
    return " (quick)" if quick else ""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The flags: --quick or --ci [--without NAME], --only, --out."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke check of the bench, not figures)")
    ap.add_argument("--ci", action="store_true", help=f"the CI tier: {', '.join(CI_BENCHMARKS)} at CI sizes, held "
                    "to CI_BOUNDS (make bench-quick)")
    ap.add_argument("--without", choices=sorted(SWITCHES), default=None,
                    help="with --ci: measure the kit with one optimisation off (prefix-cache: the scoring rows "
                    "fail; answer-only-logits: inside the training rows' noise at CI size): "
                    + "; ".join(f"{k}: {v}" for k, v in SWITCHES.items()))
    ap.add_argument("--only", default=None, help=f"comma list of {', '.join(BENCHMARKS)}")
    ap.add_argument("--out", default=None, help="JSON path (default runs/bench/bench.json; --ci: bench-ci.json)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Command line; exit 1 when a goal was missed or a benchmark could not run."""
    args = parse_args(argv)
    names = CI_BENCHMARKS if args.ci else BENCHMARKS
    only = [s.strip() for s in args.only.split(",")] if args.only else None
    unknown = [s for s in only or [] if s not in names]
    if unknown or (args.without and not args.ci):
        print(f"bench_all: unknown benchmark(s) {unknown}; choose from {', '.join(names)}" if unknown
              else "bench_all: --without needs --ci", file=sys.stderr)
        return 2
    return exit_status(run_all(args.quick, only, args.out, ci=args.ci, without=args.without)["rows"])


if __name__ == "__main__":
    sys.exit(main())
