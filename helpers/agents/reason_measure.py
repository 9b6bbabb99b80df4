"""Letter-only against reasoning, measured: the same held-out puzzles (every family of agents.puzzle_kinds x
reasoner.levels, every key letter) answered by the letter-scoring A-agent and by the reasoning one, through the
A-agent itself in harness-sized batches. Reported: accuracy overall and by family and level, seconds per answer
(p50/p99) against the 6 s limit, the share of reasonings cut by the deadline or the token cap, the favourite letter
(a collapse shows there, not in a loss), and the answer filter's verdict. That decides `agents.answer_mode: auto`
(justified_mode); the stage that runs it and writes agents/reasoner.json is helpers.agents.reason_train.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import Any, Sequence

from helpers import filters, io, puzzles
from helpers.agents import timing
from helpers.agents.answer import run_answers
from helpers.agents.reason import STOPS
from helpers.config import REASONER
from helpers.evaluate import favourite_letter, wilson
from helpers.layout import RunLayout
from helpers.models.members import missing_adapter_files
from helpers.records import LETTERS

MODES = ("letter", "reason")
HARNESS_BATCH = 5  # the organisers' default --batch_size


def held_out(n: int, *, seed: int, kinds: Sequence[str], levels: Sequence[int]) -> list[dict]:
    """n solver-proven puzzles as the harness's questions (lettered choices, the key a letter) with their "kind" and
    "level": every family x level in turn, the key letter moving on each round; drawn from their own seed stream, so
    they are not the training chats' puzzles (the stream differs; a level-1 twin by chance is possible)."""
    rng, out, combos = random.Random(f"reasoner-measure:{seed}"), [], len(kinds) * len(levels)
    for i in range(n):
        kind, level = kinds[i % len(kinds)], levels[(i // len(kinds)) % len(levels)]
        rec = puzzles.make_puzzle(kind, level, (i // combos + i) % 4, rng, {}, id=f"measure-{seed}-{i:04d}")
        question = filters.to_official_question(rec, rec["topic"])
        question.pop("explanation", None)  # the deduction is the answer's: an A-agent never sees it
        out.append({**question, "kind": kind, "level": level})
    return out


def _accuracy(rows: list[dict]) -> dict:
    k, n = sum(r["correct"] for r in rows), len(rows)
    low, high = wilson(k, n)
    return {"n": n, "correct": k, "accuracy": round(k / n, 4) if n else None, "ci95": [round(low, 4), round(high, 4)]}


def measure(agent: Any, questions: list[dict], *, batch_size: int = HARNESS_BATCH, limit_s: float | None = None) -> dict:
    """One A-agent on the questions: accuracy (overall, by family, by level), latency against the limit (the agent's,
    or limit_s), why each reasoning stopped, the favourite letter, answers failing the filter, fallbacks, and two
    answers to read."""
    answers, metas = run_answers(agent, questions, batch_size=batch_size)
    rows = [{"kind": q["kind"], "level": q["level"], "correct": a["answer"] == q["answer"],
             "pred": LETTERS.index(a["answer"]), "answer": LETTERS.index(q["answer"])} for q, a in zip(questions, answers)]
    by_kind, by_level = defaultdict(list), defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
        by_level[str(r["level"])].append(r)
    _, dropped = filters.filter_answers(answers, agent.tokenizer)
    stops = Counter(m.get("stop") for m in metas if m.get("stop"))
    fav = favourite_letter(rows)
    return {**_accuracy(rows), "by_kind": {k: _accuracy(v) for k, v in by_kind.items()},
            "by_level": {k: _accuracy(v) for k, v in sorted(by_level.items())},
            "latency": timing.latency_summary([m["seconds"] for m in metas], limit_s or agent.time_limit_s),
            "stops": {s: round(stops[s] / len(rows), 4) for s in STOPS if stops[s]},
            "cut_share": round((stops["deadline"] + stops["token_cap"] + stops["no_time"]) / len(rows), 4),
            "tokens_mean": round(sum(m.get("tokens", 0) for m in metas) / len(rows), 1),
            "favourite": {**fav, "share": round(fav["share"], 4), "key_share": round(fav["key_share"], 4)},
            "filter_failed": sum(dropped.values()), "fallbacks": dict(Counter(m["reason"] for m in metas
                                                                            if m["source"] == "fallback")),
            "examples": [{"question": q["question"], "key": q["answer"], **a} for q, a in zip(questions[:2], answers)]}


def justified_mode(report: dict | None) -> tuple[str, str]:
    """The answer mode a measurement justifies, and why: reason when the reasoner answered more held-out puzzles
    correctly than letter scoring, with every answer passing the filter, p99 under the limit and its letters not
    collapsed onto one (helpers.evaluate.favourite_letter); else letter."""
    reason, letter_ = (report or {}).get("reason"), (report or {}).get("letter")
    if not reason or not letter_:
        return "letter", "no reasoner was measured (reasoner.examples 0, or notebook 08 not run for this run)"
    if reason["filter_failed"]:
        return "letter", f"{reason['filter_failed']} reasoning answer(s) failed the answer filter"
    p99, limit = reason["latency"]["p99_s"], reason["latency"]["limit_s"]
    if p99 >= limit:
        return "letter", f"reasoning p99 {p99:.2f} s is over the {limit:g} s limit"
    fav = reason.get("favourite") or {}
    if fav.get("collapsed"):
        return "letter", f"reasoning answered {fav['letter']} on {fav['share']:.0%} of the puzzles (collapsed)"
    if reason["correct"] <= letter_["correct"]:
        return "letter", (f"reasoning answered {reason['correct']}/{reason['n']} ({reason['accuracy']:.0%}), no more "
                          f"than letter-only's {letter_['correct']}/{letter_['n']} ({letter_['accuracy']:.0%})")
    return "reason", (f"reasoning answered {reason['correct']}/{reason['n']} ({reason['accuracy']:.0%}) against "
                      f"letter-only's {letter_['correct']} ({letter_['accuracy']:.0%}), p99 {p99:.2f} s")


def mode_for_run(cfg: dict) -> tuple[str, str]:
    """agents.answer_mode resolved for a run: the mode set, or for "auto" the run's measurement, trusted only while
    the measured reasoner adapter is there and the profile's reasoner settings are the measured ones."""
    mode = cfg["agents"]["answer_mode"]
    if mode != "auto":
        return mode, "set in the profile"
    if "run" not in cfg:
        return "letter", "no run to read a reasoner measurement from"
    path = RunLayout.of(cfg).reasoner_report
    report = io.read_json(path) if path.exists() else None
    missing = missing_adapter_files(cfg, REASONER) if report is not None else []
    if missing:
        return "letter", f"the measured reasoner's adapter is missing ({missing[0]})"
    if report is not None and (report.get("params") or {}).get("reasoner") not in (None, cfg.get("reasoner")):
        return "letter", f"{path.name} measured other reasoner settings than the profile's: run notebook 08 again"
    return justified_mode(report)


def describe(report: dict) -> str:
    """One line per mode (accuracy, p50/p99 against the limit, cut share, favourite letter), then the mode chosen."""
    rows = []
    for mode in MODES:
        r = report[mode]
        lat, fav = r["latency"], r["favourite"]
        rows.append(f"[reasoner] {mode:>6}: {r['correct']}/{r['n']} correct ({r['accuracy']:.0%}, 95% "
                    f"{r['ci95'][0]:.0%}-{r['ci95'][1]:.0%}), p50 {lat['p50_s']:.2f} s p99 {lat['p99_s']:.2f} s of "
                    f"{lat['limit_s']:g} s, cut {r['cut_share']:.0%}, favourite {fav['letter']} {fav['share']:.0%}")
    return "\n".join(rows + [f"[reasoner] {report['why']}"])
