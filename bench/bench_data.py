"""Benchmark of the dataset build on synthetic upstream files (not collected by pytest: no test_ prefix).

    python bench/bench_data.py [--sizes 50000 150000] [--seed 0]

Writes N rows in the seeds' mix (37% open-ended, as their 18,518 of 50,000) as MMLU CSV files, ARC JSONL,
kit JSONL and a TriviaQA-style JSON, then times read -> convert -> validate -> dedupe -> split (with letter
balancing) -> write, plus the curriculum's order_and_chunk. Goal: 50,000 rows
in under 5 s on a 2-core machine, and linear growth (150k / 50k time close to 3). `run(sizes)` returns the
numbers as a dict (for `make bench`).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import data, io  # noqa: E402

SHARES = {"mmlu": 0.25, "arc": 0.20, "kit": 0.18, "trivia": 0.37}
WORDS = ("energy cell river planet market theory king battle molecule island poem engine climate law "
         "protein empire signal music ocean forest volcano language number triangle economy bridge "
         "mirror comet virus harvest treaty glacier orbit novel painting circuit desert").split()
FIRST = "Anna Ben Clara David Elena Frank Grace Henry Iris Jack Karen Leo Maria Nick Olga Paul".split()
LAST = "Adams Brown Clarke Davies Evans Foster Green Hughes Irving Jones Khan Lewis Moore Norton".split()


def _question(rng: random.Random, i: int) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 22)))
    return f"Question {i}: which statement about the {words} is correct?"


def _choices(rng: random.Random, i: int) -> list[str]:
    return [f"the {rng.choice(WORDS)} of {rng.choice(WORDS)} {i}-{k}" for k in range(4)]


def _answer(rng: random.Random, i: int) -> tuple[str, str]:
    """A TriviaQA-like (question, answer) of a random type."""
    r = rng.random()
    if r < 0.15:
        return "How many miles long is it?", str(rng.randint(2, 9000))
    if r < 0.25:
        return "In what year did it happen?", str(rng.randint(1500, 2020))
    if r < 0.30:
        month = rng.choice(["March", "July", "October"])
        return "On what date was it signed?", f"{month} {rng.randint(1, 28)}, {rng.randint(1700, 2000)}"
    if r < 0.50:
        return "Who wrote the book?", f"{rng.choice(FIRST)} {rng.choice(LAST)}{i % 400 or ''}"
    if r < 0.62:
        return "In which city is the museum?", f"Port {rng.choice(LAST)}{i % 300}"
    return "What is it called?", f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i % 5000}"


def synthesize(n: int, folder: Path, seed: int = 0) -> list[Path]:
    """Write about n rows across the four formats (2% duplicates, 0.5% broken rows); return the files."""
    rng = random.Random(seed)
    counts = {k: round(n * v) for k, v in SHARES.items()}
    counts["trivia"] = n - sum(v for k, v in counts.items() if k != "trivia")
    folder.mkdir(parents=True, exist_ok=True)
    files, i = [], 0
    subjects = [f"subject_{s}" for s in range(10)]
    per = counts["mmlu"] // len(subjects)
    for s, subject in enumerate(subjects):
        path = folder / f"{subject}_test.csv"
        m = per if s < len(subjects) - 1 else counts["mmlu"] - per * (len(subjects) - 1)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            for _ in range(m):
                i += 1
                row = [_question(rng, i), *_choices(rng, i), rng.choice("ABCD")]
                w.writerow(row[:5] if rng.random() < 0.005 else row)  # a broken row now and then
        files.append(path)
    with open(folder / "arc.jsonl", "w", encoding="utf-8") as fh:
        prev = None
        for _ in range(counts["arc"]):
            i += 1
            q, ch = (prev if prev and rng.random() < 0.02 else (_question(rng, i), _choices(rng, i)))
            prev = (q, ch)
            labels = "ABCD"
            fh.write(json.dumps({"id": f"arc-{i}", "question": {"stem": q, "choices": [
                {"text": t, "label": lab} for t, lab in zip(rng.sample(ch, 4), labels)]},
                "answerKey": rng.choice(labels)}) + "\n")
    files.append(folder / "arc.jsonl")
    with open(folder / "kit.jsonl", "w", encoding="utf-8") as fh:
        for _ in range(counts["kit"]):
            i += 1
            fh.write(json.dumps({"id": f"kit-{i}", "source": rng.choice(["kit/a", "kit/b", "kit/c"]),
                                 "question": _question(rng, i), "choices": _choices(rng, i),
                                 "answer": rng.randrange(4), "topic": rng.choice(WORDS)}) + "\n")
    files.append(folder / "kit.jsonl")
    trivia = []
    for _ in range(counts["trivia"]):
        i += 1
        q, a = _answer(rng, i)
        trivia.append({"Answer": {"Aliases": [a, a.lower()], "NormalizedAliases": [a.lower()], "Value": a},
                       "Question": f"{q} (item {i})", "QuestionId": f"tq_{i}"})
    (folder / "trivia.json").write_text(json.dumps({"Data": trivia, "Domain": "Web", "Version": 1.0}),
                                        encoding="utf-8")
    files.append(folder / "trivia.json")
    return files


def _time_one(n: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench_data_") as tmp:
        files = synthesize(n, Path(tmp) / "in", seed=seed)
        t0, c0 = time.perf_counter(), time.process_time()
        train, val, report = data.build_splits([str(f) for f in files], puzzles=0, val_fraction=0.1, seed=seed)
        t1, c1 = time.perf_counter(), time.process_time()
        io.write_jsonl(Path(tmp) / "out" / "train.jsonl", train)
        io.write_jsonl(Path(tmp) / "out" / "val.jsonl", val)
        wall = dict(report["seconds"], write=time.perf_counter() - t1)
        cpu = dict(report["cpu_seconds"], write=time.process_time() - c1)
        t = report["totals"]
        read_drops = sum(report["dropped_by_stage"].get("read", {}).values())
        work = {"read": t["read"], "convert": sum(r["open_ended"] for r in report["inputs"]),
                "validate": t["read"] - t["unlabeled"] - read_drops - sum(
                    report["dropped_by_stage"].get("convert", {}).values()),
                "dedupe": t["kept"] + sum(report["dropped_by_stage"].get("dedupe", {}).values()),
                "split": t["kept"], "write": t["kept"]}
        from helpers.curriculum import order_and_chunk
        t2, c2 = time.perf_counter(), time.process_time()
        order_and_chunk(train, chunks=10, scorer="heuristic", seed=seed)
        wall["curriculum"], cpu["curriculum"] = time.perf_counter() - t2, time.process_time() - c2
        work["curriculum"] = len(train)
        build = (t1 - t0 + wall["write"], c1 - c0 + cpu["write"])
    for d in (wall, cpu):
        d.pop("generate", None)
    stages = {k: {"seconds": round(s, 3), "cpu_seconds": round(cpu[k], 3),
                  "records_per_s": round(work[k] / s) if s > 0 else None} for k, s in wall.items()}
    total = (build[0] + wall["curriculum"], build[1] + cpu["curriculum"])
    return {"rows": t["read"], "kept": t["kept"], "dropped": report["dropped"], "stages": stages,
            "build_s": round(build[0], 3), "build_cpu_s": round(build[1], 3), "total_s": round(total[0], 3),
            "total_cpu_s": round(total[1], 3), "records_per_s": round(t["read"] / total[0]),
            "load_average": round(os.getloadavg()[0], 2)}


def run(sizes: list[int] | tuple[int, ...] = (50_000, 150_000), seed: int = 0, quiet: bool = False) -> dict:
    """Time the build at each size; returns {"sizes": {n: numbers}, "ratio": time(last) / time(first), ...}.

    Wall and CPU seconds both: on a shared machine (load average above the core count) wall time
    also measures the neighbours; the build is single-threaded, so on an idle machine the two agree.
    """
    out: dict = {"sizes": {}}
    for n in sizes:
        res = _time_one(n, seed)
        out["sizes"][n] = res
        if not quiet:
            print(f"\n{n:,} rows ({res['kept']:,} kept; dropped {res['dropped']}; load average {res['load_average']})")
            print(f"  {'stage':<11}{'wall s':>9}{'cpu s':>9}{'records/s':>12}")
            for stage, v in res["stages"].items():
                print(f"  {stage:<11}{v['seconds']:>9.3f}{v['cpu_seconds']:>9.3f}{v['records_per_s'] or 0:>12,}")
            print(f"  {'build':<11}{res['build_s']:>9.3f}{res['build_cpu_s']:>9.3f}   (read .. write)")
            print(f"  {'total':<11}{res['total_s']:>9.3f}{res['total_cpu_s']:>9.3f}{res['records_per_s']:>12,}"
                  "   (with curriculum)")
    if len(sizes) >= 2:
        first, last = out["sizes"][sizes[0]], out["sizes"][sizes[-1]]
        out["ratio"] = round(last["total_s"] / first["total_s"], 2)
        out["ratio_cpu"] = round(last["total_cpu_s"] / first["total_cpu_s"], 2)
        out["size_ratio"] = round(sizes[-1] / sizes[0], 2)
        if not quiet:
            print(f"\ntime {sizes[-1]:,} / time {sizes[0]:,} = {out['ratio']} wall, {out['ratio_cpu']} cpu "
                  f"(linear: {out['size_ratio']})")
    goal = out["sizes"].get(50_000)
    if goal is not None:
        out["goal_50k_under_5s"] = goal["total_s"] < 5.0
        if not quiet:
            print(f"50,000 rows: {goal['total_s']:.2f} s wall, {goal['total_cpu_s']:.2f} s cpu: goal (< 5 s) "
                  f"{'met' if out['goal_50k_under_5s'] else 'missed'} on wall time")
    return out


def main(argv: list[str] | None = None) -> dict:
    """Command line: --sizes N [N ...] --seed S."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50_000, 150_000])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    return run(args.sizes, seed=args.seed)


if __name__ == "__main__":
    main()
