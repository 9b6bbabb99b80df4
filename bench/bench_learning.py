"""Learning robustness of the smoke recipe: every adapter, over several seeds and several floating-point setups
(1 and 2 torch threads, and the scalar CPU kernels), judged as the CI test judges it (not collected by pytest).

    python bench/bench_learning.py [--seeds 1234 1 2] [--variants t1 t2 t1-scalar] [--jobs 2] [--score-only]
    (variants: t1 t2 t1-scalar t1-avx2 t1-mkl-compat; the default is the first three)
    make bench-learning

Why: a recipe can learn on one CPU's floating-point kernels and collapse to one answer letter on another's (an Intel
Xeon did, where an AMD EPYC passed). Variants that change the rounding stand in for the other CPU:
- t1, t2: 1 and 2 torch threads (on the 2-core AMD EPYC these trained bit-identical adapters: the tiny model's
  matmuls are not split, so threads alone perturb nothing there);
- t1-scalar: 1 thread with ATEN_CPU_CAPABILITY=default, PyTorch's scalar kernels instead of the CPU's vector ones
  (AVX-512 on the AMD EPYC here): other rounding in the matmuls and the elementwise ops;
- t1-avx2: 1 thread with ATEN_CPU_CAPABILITY=avx2: PyTorch's AVX2 kernels (other rounding in softmax and the
  elementwise ops, as an AVX2-only CPU has);
- t1-mkl-compat: 1 thread with MKL_CBWR=COMPATIBLE: MKL's portable GEMM path instead of the one it picks for this
  CPU (other rounding in every matmul; MKL takes different paths on Intel and AMD CPUs);
- the seeds 1234, 1, 2: each its own data split, curriculum, adapter initialisation and data order.

Per seed: notebooks 00-02 (the pipeline's own path) build that seed's data split and curriculum; per variant,
`python -m helpers.train` trains the profile's three adapters (`seed` and `train.cpu_threads` as overrides, the
variant's environment); then the base and every adapter are scored on that seed's validation questions (one thread,
default kernels) and judged by tests/_learning.py, the rule of tests/test_pipeline.py. 1-thread trainings run --jobs
at a time; multi-thread ones alone (2 threads on 2 busy cores spin-wait). Runs go under runs/bench/learning/; the
table and runs/bench/learning.json hold the figures. Exit status 1 when any adapter fails the rule. About 50 minutes
on 2 cores; --score-only judges adapters a previous run trained.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import _learning  # noqa: E402
import bench_all  # noqa: E402

PROFILE = "smoke"


# name -> (torch threads, environment for the training process)
VARIANTS: dict[str, tuple[int, dict[str, str]]] = {
    "t1": (1, {}), "t2": (2, {}), "t1-scalar": (1, {"ATEN_CPU_CAPABILITY": "default"}),
    "t1-avx2": (1, {"ATEN_CPU_CAPABILITY": "avx2"}), "t1-mkl-compat": (1, {"MKL_CBWR": "COMPATIBLE"})}


def overrides(seed: int, variant: str) -> dict:
    """The profile keys a run changes."""
    return {"seed": seed, "train.cpu_threads": VARIANTS[variant][0]}


def adapter_dir(runs: Path, seed: int, variant: str, model: str) -> Path:
    """runs/bench/learning/s<seed>/models-<variant>/<model>."""
    return runs / f"s{seed}" / f"models-{variant}" / model


def build_data(seed: int) -> None:
    """Notebooks 00-02 for this seed (env check, data split, curriculum)."""
    from helpers import pipeline
    pipeline.run_pipeline(PROFILE, f"s{seed}", {"seed": seed}, only=["00", "01", "02"])


def train_one(runs: Path, seed: int, variant: str, model: str) -> dict:
    """One adapter through `python -m helpers.train` in the variant's environment; returns its training summary."""
    out = adapter_dir(runs, seed, variant, model)
    cmd = [sys.executable, "-m", "helpers.train", "--profile", PROFILE, "--model", model, "--run", f"s{seed}",
           "--overrides", json.dumps(overrides(seed, variant)), "--out-dir", str(out), "--no-resume"]
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **VARIANTS[variant][1]})
    if proc.returncode != 0:
        raise RuntimeError(f"training {model} (seed {seed}, {variant}) failed:\n{proc.stderr[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    print(f"[bench-learning] trained {model} seed {seed} {variant}: loss {summary['chunk_losses']}, "
          f"{time.time() - t0:.0f}s", flush=True)
    return summary


def train_all(runs: Path, seeds: list[int], variants: list[str], models: list[str], jobs: int) -> dict:
    """Every (seed, variant, model): 1-thread jobs `jobs` at a time, multi-thread jobs one at a time."""
    done = {}
    single = [(s, v, m) for s in seeds for v in variants if VARIANTS[v][0] == 1 for m in models]
    multi = [(s, v, m) for s in seeds for v in variants if VARIANTS[v][0] != 1 for m in models]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {key: pool.submit(train_one, runs, *key) for key in single}
        for key, fut in futures.items():
            done[key] = fut.result()
    for key in multi:
        done[key] = train_one(runs, *key)
    return done


def score_seed(runs: Path, seed: int, variants: list[str], models: list[str]) -> dict:
    """Eval rows of the base and of every trained variant on this seed's validation questions."""
    import torch
    from helpers import config, evaluate, models as kit_models
    from helpers.layout import RunLayout
    cfg = config.load_profile(PROFILE, f"s{seed}", overrides(seed, "t1"))
    records = evaluate.load_val(RunLayout.of(cfg).val_data)
    buckets = evaluate.assign_buckets(records)
    model, tokenizer, _ = kit_models.load_model(cfg.model.base, model=cfg.model, recommendation={},
                                                for_training=False)
    names = {}
    for v in variants:
        for m in models:
            names[(v, m)] = f"{m}-{v}"
            model = kit_models.attach_adapter(model, adapter_dir(runs, seed, v, m) / "adapter", names[(v, m)])
    model.eval()
    torch.set_num_threads(1)  # scoring is not what varies: one thread, as the A-agent on the tiny model
    rows = {"base": evaluate.score_member(model, tokenizer, "base", records, buckets)[0]}
    for key, name in names.items():
        rows[key] = evaluate.score_member(model, tokenizer, name, records, buckets)[0]
    return {"records": records, "rows": rows}


def kit_accuracy(rows: list[dict], ids: set[str], learnable: bool) -> float:
    """Accuracy on the bundled (kit/*) questions inside (learnable) or outside the learnable set."""
    sel = [r for r in rows if r["source"].startswith("kit/") and (r["id"] in ids) == learnable]
    return round(_learning.accuracy(sel), 4) if sel else float("nan")


def kit_favourite_share(rows: list[dict]) -> float:
    """Share of all bundled (kit/*) questions given the favourite letter (where the unlearnable ones default)."""
    return round(_learning.favourite([r for r in rows if r["source"].startswith("kit/")])[1], 4)


def judge_all(scored: dict, seeds: list[int], variants: list[str], models: list[str], trained: dict) -> list[dict]:
    """One row per (seed, variant, adapter): the CI rule's verdict plus what the other questions show."""
    out = []
    for seed in seeds:
        records, rows = scored[seed]["records"], scored[seed]["rows"]
        ids = _learning.learnable_ids(records)
        for v in variants:
            for m in models:
                verdict = _learning.judge(rows["base"], rows[(v, m)], ids)
                out.append({"seed": seed, "variant": v, "model": m, **verdict,
                            "sampled_kit_accuracy": kit_accuracy(rows[(v, m)], ids, learnable=False),
                            "sampled_kit_base": kit_accuracy(rows["base"], ids, learnable=False),
                            "kit_favourite_share": kit_favourite_share(rows[(v, m)]),
                            "chunk_losses": trained[(seed, v, m)]["chunk_losses"],
                            "train_seconds": trained[(seed, v, m)]["train_seconds"]})
    return out


def table(rows: list[dict]) -> str:
    """The figures as a Markdown table."""
    head = ("| seed | numerics | adapter | learnable acc. | base | best single letter | margin over base | favourite letter "
            "| other kit questions (base) | verdict |\n|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['variant']} | {r['model']} | {r['accuracy']:.1%} | {r['base']:.1%} | "
                     f"{r['best_single_letter']:.1%} | {r['margin_over_base']:+.1%} | {r['favourite']} {r['favourite_share']:.0%} "
                     f"| {r['sampled_kit_accuracy']:.1%} ({r['sampled_kit_base']:.1%}) | "
                     f"{'ok' if r['ok'] else 'FAIL: ' + '; '.join(r['problems'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Train, score and judge every variant; print the table, write the JSON."""
    ap = argparse.ArgumentParser(prog="python bench/bench_learning.py", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1234, 1, 2])
    ap.add_argument("--variants", nargs="+", default=["t1", "t2", "t1-scalar"], choices=list(VARIANTS))
    ap.add_argument("--jobs", type=int, default=2, help="1-thread trainings at a time (default 2, one per core)")
    ap.add_argument("--out", default=str(ROOT / "runs" / "bench" / "learning.json"))
    ap.add_argument("--score-only", action="store_true", help="judge the adapters a previous run trained, again")
    args = ap.parse_args(argv)
    os.environ.setdefault("KIT_CACHE_DIR", str(ROOT / "runs" / "_cache"))  # the tiny model every run shares
    runs = ROOT / "runs" / "bench" / "learning"
    os.environ["KIT_RUNS_DIR"] = str(runs)
    from helpers import config
    models = list(config.load_profile(PROFILE).models)
    t0 = time.time()
    if args.score_only:
        trained = {(s, v, m): json.loads((adapter_dir(runs, s, v, m) / "summary.json").read_text())
                   for s in args.seeds for v in args.variants for m in models}
    else:
        for seed in args.seeds:
            build_data(seed)
        trained = train_all(runs, args.seeds, args.variants, models, args.jobs)
    scored = {seed: score_seed(runs, seed, args.variants, models) for seed in args.seeds}
    rows = judge_all(scored, args.seeds, args.variants, models, trained)
    failed = [r for r in rows if not r["ok"]]
    print(table(rows))
    print(f"[bench-learning] {len(rows) - len(failed)} of {len(rows)} adapters pass the CI rule "
          f"(margin >= {_learning.MIN_MARGIN:.0%} over the base and the best single letter, favourite letter <= "
          f"{_learning.MAX_FAVOURITE_SHARE:.0%}) in {time.time() - t0:.0f}s")
    from helpers.io import write_json
    write_json(args.out, {"rows": rows, "seeds": args.seeds,
                          "variants": {v: {"threads": VARIANTS[v][0], "env": VARIANTS[v][1]} for v in args.variants},
                          "rule": {"min_margin": _learning.MIN_MARGIN,
                                   "max_favourite_share": _learning.MAX_FAVOURITE_SHARE},
                          "machine": bench_all.machine(),
                          "seconds": round(time.time() - t0)})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
