"""The learning tests against a deliberately broken kit: each must fail under each sabotage, and pass without one.

    python bench/broken_kit/run.py [--tests llama form learning writer]
                                   [--sabotages none lr0 shift one_letter not_puzzles]

Sabotages (bench/broken_kit/sitecustomize.py, put first on PYTHONPATH with KIT_SABOTAGE set, so every process the
test starts has it too; no file of the kit changes): lr0 (learning rate 0), shift (labels one token left), one_letter
(every training target the letter A), not_puzzles (the question writer's chats carry bundled general-knowledge
questions, not the generators' puzzles); "none" is the control run, through the same path, which must pass. A
sabotage runs only against the tests whose training passes its seam (APPLIES).
Tests:
- llama: tests/test_packaged_models.py::test_every_method_trains_on_the_llama_architecture (LoRA, rsLoRA, DoRA);
- form: tests/test_packaged_models.py::test_the_real_model_learns_to_answer_with_a_letter_alone (~4 min a run);
- learning: the smoke pipeline's learning rule (tests/_learning.py) on model1_lora, trained by `python -m
  helpers.train` on the smoke profile (seed 1234) and judged as bench/bench_learning.py judges it (~3 min a run);
- writer: tests/test_writer_learns.py, the question writer trained by its stage on the tiny model (~1 min a run).
Each (test, sabotage) runs alone, one after another (the machine's 2 cores are shared). The table prints at the end;
runs/bench/broken_kit.json holds every verdict, the assertion's gist, the figures the tests recorded, and how many
times the sabotaged function ran (0 would mean the sabotage never reached the kit). Exit status 1 when a sabotaged
test passed or a control failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

SABOTAGES = ["none", "lr0", "shift", "one_letter", "not_puzzles"]
PYTEST_TESTS = {
    "llama": "tests/test_packaged_models.py::test_every_method_trains_on_the_llama_architecture",
    "form": "tests/test_packaged_models.py::test_the_real_model_learns_to_answer_with_a_letter_alone",
    "writer": "tests/test_writer_learns.py"}
TESTS = [*PYTEST_TESTS, "learning"]
# The tests a sabotage's seam reaches (any other: every test): the writer trains on chats, never on a multiple-choice
# record's rendered letter, and only the writer's training reads its chats.
APPLIES = {"one_letter": {"llama", "form", "learning"}, "not_puzzles": {"writer"}}
SEED = 1234


def sabotage_env(sabotage: str, log: Path) -> dict:
    """The environment of a run under `sabotage` ("none": the same path, no sabotage)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p),
           "KIT_SABOTAGE_LOG": str(log)}
    env.pop("KIT_SABOTAGE", None)
    if sabotage != "none":
        env["KIT_SABOTAGE"] = sabotage
    return env


def reached(log: Path) -> int:
    """How many times a sabotaged function ran (lines in the sabotage log)."""
    return len(log.read_text().splitlines()) if log.exists() else 0


def gist(text: str, limit: int = 300) -> str:
    """The first line of an assertion message, cut to `limit` characters."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit] + "..."


def junit_cases(xml_path: Path) -> list[dict]:
    """Each test case of a pytest --junitxml file: its id, outcome, assertion gist and recorded properties."""
    cases = []
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        outcome = "failed" if bad is not None else "skipped" if skipped is not None else "passed"
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        cases.append({"case": case.get("name"), "outcome": outcome,
                      "gist": gist((bad.get("message") if bad is not None else None)
                                   or (skipped.get("message") if skipped is not None else "")),
                      "figures": props})
    return cases


def run_pytest(test: str, sabotage: str, scratch: Path) -> list[dict]:
    """One pytest run of a learning test under a sabotage; a row per test case."""
    xml, log = scratch / f"{test}-{sabotage}.xml", scratch / f"{test}-{sabotage}.log"
    cmd = [sys.executable, "-m", "pytest", PYTEST_TESTS[test], "-q", "-p", "no:cacheprovider", f"--junitxml={xml}"]
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=sabotage_env(sabotage, log), capture_output=True, text=True)
    seconds = round(time.time() - t0)
    if not xml.exists():
        return [{"test": test, "case": PYTEST_TESTS[test], "sabotage": sabotage, "outcome": "error",
                 "gist": gist(proc.stderr[-2000:] or proc.stdout[-2000:]), "figures": {},
                 "reached": reached(log), "seconds": seconds}]
    return [{"test": test, "sabotage": sabotage, **case, "reached": reached(log), "seconds": seconds}
            for case in junit_cases(xml)]


@contextlib.contextmanager
def environment(env: dict):
    """os.environ replaced by `env` inside the block (bench_learning's subprocesses inherit it)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def learning_data(runs: Path) -> None:
    """The smoke profile's data split and curriculum for SEED (notebooks 00-02), once, under `runs`."""
    import bench_learning
    if not (runs / f"s{SEED}" / "curriculum" / "train.jsonl").exists():
        with environment({**os.environ, "KIT_RUNS_DIR": str(runs)}):
            bench_learning.build_data(SEED)


def run_learning(sabotage: str, scratch: Path) -> list[dict]:
    """model1_lora trained on the smoke profile under a sabotage, judged by the smoke pipeline's learning rule."""
    import _learning
    import bench_learning
    runs, log = ROOT / "runs" / "bench" / "broken_kit", scratch / f"learning-{sabotage}.log"
    learning_data(runs)
    trained_in = runs / sabotage
    t0 = time.time()
    with environment({**sabotage_env(sabotage, log), "KIT_RUNS_DIR": str(runs)}):
        bench_learning.train_one(trained_in, SEED, "t1", "model1_lora")
    with environment({**os.environ, "KIT_RUNS_DIR": str(runs)}):
        scored = bench_learning.score_seed(trained_in, SEED, ["t1"], ["model1_lora"])
    ids = _learning.learnable_ids(scored["records"])
    verdict = _learning.judge(scored["rows"]["base"], scored["rows"][("t1", "model1_lora")], ids)
    figures = {k: verdict[k] for k in ("accuracy", "base", "best_single_letter", "favourite", "favourite_share")}
    return [{"test": "learning", "case": "model1_lora (tests/_learning.py rule)", "sabotage": sabotage,
             "outcome": "passed" if verdict["ok"] else "failed", "gist": "; ".join(verdict["problems"]),
             "figures": figures, "reached": reached(log), "seconds": round(time.time() - t0)}]


def as_expected(row: dict) -> bool:
    """A control passes; a sabotaged test fails (and the sabotage was reached)."""
    if row["sabotage"] == "none":
        return row["outcome"] == "passed"
    return row["outcome"] == "failed" and row["reached"] > 0


def table(rows: list[dict]) -> str:
    """The verdicts as a Markdown table."""
    lines = ["| test | case | sabotage | outcome | as it must | sabotage ran | seconds | gist |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['test']} | {r['case']} | {r['sabotage']} | {r['outcome']} | "
                     f"{'yes' if as_expected(r) else 'NO'} | {r['reached']} | {r['seconds']} | "
                     f"{r['gist'].replace('|', '/')[:160]} |")
    return "\n".join(lines)


def run_all(tests: list[str], sabotages: list[str]) -> list[dict]:
    """Every (test, sabotage), one at a time, printing each verdict as it comes."""
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="broken-kit-") as tmp:
        for test in tests:
            for sabotage in sabotages:
                if test not in APPLIES.get(sabotage, tests):
                    print(f"[broken-kit] {test} under {sabotage}: not run (its training never passes that seam)")
                    continue
                got = run_learning(sabotage, Path(tmp)) if test == "learning" else run_pytest(test, sabotage, Path(tmp))
                for r in got:
                    print(f"[broken-kit] {r['test']} {r['case']} under {r['sabotage']}: {r['outcome']} "
                          f"({r['seconds']}s) {r['gist'][:120]}", flush=True)
                rows += got
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the chosen tests under the chosen sabotages; print the table, write the JSON."""
    ap = argparse.ArgumentParser(prog="python bench/broken_kit/run.py", description=__doc__.splitlines()[0])
    ap.add_argument("--tests", nargs="+", default=TESTS, choices=TESTS)
    ap.add_argument("--sabotages", nargs="+", default=SABOTAGES, choices=SABOTAGES)
    ap.add_argument("--out", default=str(ROOT / "runs" / "bench" / "broken_kit.json"))
    args = ap.parse_args(argv)
    if os.environ.get("KIT_SABOTAGE"):
        ap.error("run the runner itself without KIT_SABOTAGE: it sets it for each test it starts")
    os.environ.setdefault("KIT_CACHE_DIR", str(ROOT / "runs" / "_cache"))  # the tiny model every run shares
    t0 = time.time()
    rows = run_all(args.tests, args.sabotages)
    print(table(rows))
    from helpers.io import write_json
    out = Path(args.out)
    previous = json.loads(out.read_text())["rows"] if out.exists() else []
    keep = [r for r in previous if (r["test"], r["sabotage"]) not in {(r2["test"], r2["sabotage"]) for r2 in rows}]
    write_json(out, {"rows": keep + rows, "seconds": round(time.time() - t0)})
    return 0 if all(as_expected(r) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
