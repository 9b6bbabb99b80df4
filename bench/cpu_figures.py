"""The cpu profile's figures that docs/results.md quotes, printed from a finished run's own reports.

    make cpu-figures                          # make pipeline PROFILE=cpu RUN=cpu (skipped when runs/cpu is
                                              # complete), then this script on runs/cpu (about 38 min on 2 cores)
    python bench/cpu_figures.py [RUN]         # RUN: a run folder, or a run name under runs/ (default cpu)
    python bench/cpu_figures.py --complete RUN   # exit 0 when the run is a complete cpu run of this code, else 1

One block per section of docs/results.md ("A real model on a CPU", its "Cost" paragraph, "The question writer",
"The reasoning A-agent"), each figure in the form the page quotes it, read from the files the notebooks wrote
(helpers.layout.RunLayout): data/report.json, models/<name>/summary.json, eval/summary.json, ensemble/summary.json,
agents/tournament.json, agents/writer.json and writer_train.jsonl, agents/reasoner.json and reasoner_train.jsonl,
pipeline.json. A missing or unreadable file turns its block into one line saying which; the others still print.
Nothing is measured here: the run is the measurement.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import config, io, pipeline  # noqa: E402
from helpers.report.sections import pct  # noqa: E402
from helpers.layout import RunLayout  # noqa: E402

METHODS = {"lora": "LoRA", "rslora": "rsLoRA", "dora": "DoRA"}
ADAPTERS = tuple(config.load_profile("cpu").models)  # the profile's adapters, in order


def run_folder(arg: str) -> Path:
    """A run folder as given, or a run name under config.runs_root() ($KIT_RUNS_DIR honoured)."""
    path = Path(arg)
    return path if path.is_dir() or "/" in arg else RunLayout.of(arg).root


def why_not_current(lay: RunLayout) -> str | None:
    """Why the run is not a complete plain cpu run of this code (None when it is, so its figures are this kit's)."""
    return pipeline.why_not_current(lay.root, "cpu")


def member_label(lay: RunLayout, name: str) -> str:
    """'base', or 'LoRA r 8' from the adapter's training summary (its name when there is none)."""
    if name == "base":
        return name
    try:
        s = io.read_json(lay.model_summary(name))
        return f"{METHODS.get(s['method'], s['method'])} r {s['params']['spec']['r']}"
    except (OSError, ValueError, KeyError, TypeError):
        return name


def favourite(fav: dict, with_key: bool) -> str:
    """'B on 54% (key 26%)' (the key's share only on the first row, as the page prints it)."""
    key = f" (key {pct(fav['key_share'], 0)})" if with_key and fav.get("key_share") is not None else ""
    return f"{fav['letter']} on {pct(fav['share'], 0)}{key}"


def generate_mode(cmp: dict | None, name: str) -> str:
    """'96% / 0%': generation's parsed share and its 'a letter alone' share, for the base and the timed member."""
    if not cmp:
        return ""
    if name == "base" and "base_parse_rate" in cmp:
        return f"{pct(cmp['base_parse_rate'], 0)} / {pct(cmp['base_letter_only_rate'], 0)}"
    if name == cmp.get("member"):
        return f"{pct(cmp['baseline_parse_rate'], 0)} / {pct(cmp['letter_only_rate'], 0)}"
    return ""


def accuracy_block(lay: RunLayout) -> list[str]:
    """'What it learns': the questions, the steps, the member table, the ensemble search's held-out range."""
    rep, ev = io.read_json(lay.data_report), io.read_json(lay.eval_summary)
    steps = {n: io.read_json(lay.model_summary(n))["global_steps"] for n in ADAPTERS if lay.model_summary(n).is_file()}
    out = [f"{rep['totals']['train']:,} training and {rep['totals']['val']:,} validation questions; optimizer steps "
           "per adapter: " + ", ".join(f"{n} {s}" for n, s in steps.items()),
           "| member | validation accuracy (95% interval) | favourite letter "
           "| generate mode: parsed / a letter alone |"]
    for i, (name, m) in enumerate(ev["models"].items()):
        lo, hi = m["ci95"]
        out.append(f"| {member_label(lay, name)} | {pct(m['accuracy'])} ({pct(lo)[:-1]}-{pct(hi)}) | "
                   f"{favourite(m['favourite'], i == 0)} | {generate_mode(ev.get('comparison'), name)} |")
    out += source_table(ev)
    ens = io.read_json(lay.ensemble_summary) if lay.ensemble_summary.is_file() else {}
    held = [c["heldout_accuracy"] for c in (ens.get("candidates") or {}).values()
            if c.get("heldout_accuracy") is not None]
    if held:
        out.append(f"The {len(held)}-way ensemble search of notebook 07 ends at {pct(min(held))[:-1]}-{pct(max(held))} "
                   "on its held-out half.")
    return out


def source_table(ev: dict) -> list[str]:
    """Per source (the report's table): questions, the base's accuracy -> the adapters' range, and whether every
    member's 95% interval includes chance, from each member's by_source rows in eval/summary.json."""
    chance = ev.get("chance") or 0.25
    by = {name: {g["group"]: g for g in m["by_source"]} for name, m in ev["models"].items()}
    base, members = by.get("base", {}), [n for n in by if n != "base"]
    out = ["| source | questions | base -> adapters | every interval includes chance |"]
    for src, b in base.items():
        accs = [by[m][src]["accuracy"] for m in members if src in by[m]]
        lo, hi = (pct(min(accs), 0), pct(max(accs), 0)) if accs else ("-", "-")
        inside = all(by[m][src]["ci_low"] <= chance <= by[m][src]["ci_high"] for m in by if src in by[m])
        out.append(f"| {src} | {b['n']} | {pct(b['accuracy'], 0)} -> {lo if lo == hi else lo[:-1] + '-' + hi} | "
                   f"{'yes' if inside else 'NO'} |")
    return out


def notebook_minutes(lay: RunLayout) -> str:
    """'2,277 s in the notebooks: 03 9.1 min, ...' from pipeline.json (notebooks under 10 s summed as 'the rest')."""
    stages = io.read_json(lay.pipeline_record)["stages"]
    total = sum(s["seconds"] for s in stages)
    long = [f"{s['notebook'][:2]} {s['seconds'] / 60:.1f} min" for s in stages if s["seconds"] >= 10]
    return f"{total:,.0f} s ({total / 60:.0f} min) in the notebooks: " + ", ".join(long) + "; the rest under 10 s each"


def training_cost(lay: RunLayout) -> str:
    """'~3.0 s a step; real tokens/s ...; peak RSS ...' from each adapter's training summary."""
    sums = {n: io.read_json(lay.model_summary(n)) for n in ADAPTERS if lay.model_summary(n).is_file()}
    per_step = [s["train_seconds"] / s["global_steps"] for s in sums.values() if s["global_steps"]]
    label = {n: METHODS.get(s["method"], n) for n, s in sums.items()}
    return (f"~{sum(per_step) / max(1, len(per_step)):.1f} s a step; loss "
            + ", ".join(f"{label[n]} {s['first_loss']:.2f} -> {s['last_loss']:.2f}" for n, s in sums.items())
            + "; real tokens/s "
            + ", ".join(f"{label[n]} {s['tokens_per_s']:.0f}" for n, s in sums.items()) + "; peak RSS "
            + ", ".join(f"{label[n]} {s['peak_memory']['gib']:.1f} GiB" for n, s in sums.items()))


def letter_timing(lay: RunLayout) -> str:
    """'Letter scoring ran 1.49x ... (6.1 against 4.1) with the same letter on 48 of 48' from eval/summary.json."""
    cmp = io.read_json(lay.eval_summary).get("comparison")
    if not cmp:
        return "letter scoring against generate-and-parse: not timed in this run (eval.compare_questions 0)"
    qps = cmp["questions_per_s"]
    return (f"Letter scoring ran {cmp['ratio']:.2f}x the questions/s of generate-and-parse on {cmp['member']} "
            f"({qps['letters']:.1f} against {qps['generate']:.1f}) with the same letter on {cmp['agreeing']} of "
            f"{cmp['parsed']}")


def match_line(lay: RunLayout) -> str:
    """'the kit 105, the base 95 of 200, ... p99 4.6 s per question and 1.9 s per answer' from tournament.json."""
    scores = io.read_json(lay.tournament)["match"]["scores"]
    teams = ", ".join(f"the {t} {s['total']:g}" for t, s in scores.items())
    correct = all(s.get("format_correct") == s.get("requested") for s in scores.values())
    kit = scores.get("kit") or next(iter(scores.values()))  # the kit's agents: the match's first team
    return (f"The match at home: {teams} of 200; "
            f"{'every' if correct else 'NOT every'} question and answer format-correct; p99 "
            f"{kit['question_p99_s']:.1f} s per question and {kit['answer_p99_s']:.1f} s per answer")


def cost_block(lay: RunLayout) -> list[str]:
    """The 'Cost' paragraph: notebook minutes, training speed and memory, letter timing, the match."""
    return [notebook_minutes(lay), training_cost(lay), letter_timing(lay), match_line(lay)]


def count_lines(path: Path) -> int:
    """Records in a JSONL file."""
    return len(io.read_jsonl(path))


def training_line(lay: RunLayout, name: str, chats: Path) -> str:
    """'480 chats, 60 steps in 5.2 min (loss 2.37 to 0.67)' from the stage's chats and its adapter's summary."""
    s = io.read_json(lay.model_summary(name))
    return (f"{count_lines(chats):,} chats, {s['global_steps']} steps in {s['train_seconds'] / 60:.1f} min "
            f"(loss {s['first_loss']:.2f} to {s['last_loss']:.2f})")


def rejections(rejected: dict) -> str:
    """'not four choices 7, no JSON 6' (most first); '-' for none."""
    pairs = sorted(rejected.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k.replace('_', ' ').replace('json', 'JSON')} {v}" for k, v in pairs) or "-"


def writer_block(lay: RunLayout) -> list[str]:
    """'The question writer': training, then the base and the trained writer on the same requests."""
    rep = io.read_json(lay.writer_report)
    out = [training_line(lay, config.WRITER, lay.writer_data) + f"; {rep['base']['requests']} requests for each "
           f"model, each on the {rep['budget_s']:g} s budget",
           "| model | JSON | passes the filter | proven, right key | s a question (p50 / p90) | rejections |"]
    for name, label in (("base", "base"), (config.WRITER, "trained writer")):
        r = rep.get(name)
        if r:
            out.append(f"| {label} | {pct(r['json_share'], 0)} | {pct(r['filter_share'], 0)} | "
                       f"{pct(r['proven_share'], 0)} ({r['proven']}/{r['requests']}) | {r['seconds_p50']:.2f} / "
                       f"{r['seconds_p90']:.2f} | {rejections(r.get('rejected') or {})} |")
    return out


def by_level(mode: dict) -> str:
    """'5/24, 4/12, 5/12' in level order."""
    levels = mode.get("by_level") or {}
    return ", ".join(f"{v['correct']}/{v['n']}" for _, v in sorted(levels.items()))


def answer_budget(rep: dict) -> float:
    """The reasoning budget of an answer: agents.time_margin x the answer limit (3 s of 6 by default)."""
    agents = (rep.get("params") or {}).get("agents") or {}
    limit = agents.get("answer_time_limit_s", rep["reason"]["latency"]["limit_s"])
    return agents.get("time_margin", 0.5) * limit


def reasoner_block(lay: RunLayout) -> list[str]:
    """'The reasoning A-agent': training, then letter-only against reasoning on the same held-out puzzles."""
    rep = io.read_json(lay.reasoner_report)
    out = [training_line(lay, config.REASONER, lay.reasoner_data)
           + f"; {rep['letter']['n']} held-out puzzles each way",
           "| mode | correct | 95% interval | p50 / p99 s per answer | cut by the deadline | tokens written | "
           "favourite letter |"]
    for mode, label in (("letter", "letter-only"), ("reason", f"reasoning, {answer_budget(rep):g} s")):
        m = rep[mode]
        lo, hi = m["ci95"]
        cut = pct(m["cut_share"], 0) if mode == "reason" else "-"
        tokens = f"{m['tokens_mean']:.0f}" if mode == "reason" else "-"
        out.append(f"| {label} | {m['correct']}/{m['n']} ({pct(m['accuracy'], 0)}) | {pct(lo, 0)[:-1]}-"
                   f"{pct(hi, 0)} | {m['latency']['p50_s']:.2f} / {m['latency']['p99_s']:.2f} | {cut} | {tokens} | "
                   f"{m['favourite']['letter']} {pct(m['favourite']['share'], 0)} |")
    levels = ", ".join(sorted(rep["letter"].get("by_level") or {}))
    out.append(f"By level, letter-only {by_level(rep['letter'])} and reasoning {by_level(rep['reason'])} "
               f"(levels {levels})")
    return out


BLOCKS: dict[str, Callable[[RunLayout], list[str]]] = {
    "A real model on a CPU (profile `cpu`)": accuracy_block, "Cost": cost_block,
    "The question writer": writer_block, "The reasoning A-agent": reasoner_block}


def figures(run_dir: Path) -> list[str]:
    """Every block's lines under its section title; a block whose files are missing or malformed says so."""
    lay = RunLayout(Path(run_dir))
    out = [f"run {lay.root}: {run_heading(lay)}"]
    for title, block in BLOCKS.items():
        out += ["", f"## {title}"]
        try:
            out += block(lay)
        except (OSError, ValueError, KeyError, TypeError, IndexError, ZeroDivisionError) as exc:
            out.append(f"not available: {type(exc).__name__}: {exc}")
    return out


def run_heading(lay: RunLayout) -> str:
    """'profile cpu, current' (or 'NOT current: why') from pipeline.json."""
    try:
        params = io.read_json(lay.pipeline_record).get("params") or {}
    except (OSError, ValueError):
        return "no pipeline.json (the notebooks were not run by make pipeline)"
    why = why_not_current(lay)
    return f"profile {params.get('PROFILE', '?')}, " + ("current" if why is None else f"NOT current: {why}")


def main(argv: list[str] | None = None) -> int:
    """Print the figures of a run (exit 1 when the run folder does not exist), or with --complete only check it."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", nargs="?", default="cpu", help="a run folder, or a run name under runs/ (default cpu)")
    ap.add_argument("--complete", action="store_true", help="exit 0 when the run is a complete run of the plain cpu profile by this code, else 1")
    args = ap.parse_args(argv)
    lay = RunLayout(run_folder(args.run))
    if args.complete:
        return 0 if why_not_current(lay) is None else 1
    if not lay.root.is_dir():
        print(f"cpu_figures: no run folder {lay.root} (make pipeline PROFILE=cpu RUN=cpu makes it)", file=sys.stderr)
        return 1
    print("\n".join(figures(lay.root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
