"""Letter-only against reasoning, measured: the same held-out puzzles (every family the edition asks, build.asked_kinds,
x reasoner.levels, every key letter) answered by the letter-scoring A-agent and by the reasoning one, through the
A-agent itself in harness-sized batches. Reported: accuracy overall and by family and level, seconds per answer
(p50/p99) against the 6 s limit, the share of reasonings cut by the deadline or the token cap, the favourite letter
(a collapse shows there, not in a loss), the answer filter's verdict, whether each reasoning's first step is true
(read back and proven by the deduction checker: first_steps); and accuracy apart on the puzzles whose wording the
training chats never used (a sentence template none of them has: mark_wordings), so learning to read is told apart
from learning the templates. That decides `agents.answer_mode: auto` (justified_mode); the stage that runs it and
writes agents/reasoner.json is helpers.agents.stages.reasoner_train. """

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from typing import Any, Sequence

from helpers import config, filters, puzzles
from helpers.puzzles import variety
from helpers.puzzles.deduction import reading
from helpers.agents import timing
from helpers.agents.answer import run_answers
from helpers.agents.reasoner import STOPS, Reasoner
from helpers.agents.stages.reasoner_data import puzzle_cycle
from helpers.config import ANSWER_MODES, REASONER, REASONER_RL
from helpers.evaluate import favourite_letter, wilson
from helpers.records import LETTERS

MODES = ANSWER_MODES  # letter, reason
HARNESS_BATCH = 5  # the organisers' default --batch_size
MAX_P = 0.05  # reasoning must beat letter-only on the same puzzles at this one-sided significance (sign test)
NO_DEADLINE_S = 1e6  # seconds no batch reaches: only the token cap or a reply's own end stops it (reply_shape)
MEASURED_AGENTS = ("answer_time_limit_s", "time_margin", "answer_chunk_size", "reason_max_tokens",
                   "decode_ms_per_token")  # the last sets the chats' token budget


def measured_settings(cfg: config.Profile) -> dict:
    """What a measurement depends on besides the model: the reasoner's settings, the answer budget's and the families
    its edition asks (recorded in agents/reasoner.json; helpers.agents.build trusts its decision only while the
    profile still has them)."""
    from helpers.agents import build
    return {"reasoner": config.as_dict(cfg.reasoner), "agents": {k: getattr(cfg.agents, k) for k in MEASURED_AGENTS},
            "rl": config.as_dict(cfg.rl), "kinds": list(build.asked_kinds(cfg))}


def held_out(n: int, *, seed: int, kinds: Sequence[str], levels: Sequence[int]) -> list[dict]:
    """n solver-proven puzzles as the harness's questions (lettered choices, the key a letter) with their "kind",
    "level" and structured "puzzle" (to read a reasoning's first step against: first_steps): every family x level
    in turn, the key letter moving on each round; drawn from their own seed stream, so they are not the training
    chats' puzzles (the stream differs; a level-1 twin by chance is possible)."""
    rng, out = random.Random(f"reasoner-measure:{seed}"), []
    for i, (kind, level, target) in enumerate(puzzle_cycle(n, kinds, levels)):
        rec = puzzles.make_puzzle(kind, level, target, rng, {}, id=f"measure-{seed}-{i:04d}")
        question = filters.to_official_question(rec, rec["topic"])
        question.pop("explanation", None)  # the deduction is the answer's: an A-agent never sees it
        out.append({**question, "kind": kind, "level": level, "templates": variety.templates(rec),
                    "puzzle": rec["puzzle"]})
    return out


def mark_wordings(questions: list[dict], training: Sequence[dict]) -> Counter:
    """Mark each held-out question's "wording": "new" when one of its sentence templates (names, numbers, relation
    words and directions masked: helpers.puzzles.variety) is in none of the training records, else "seen"; the
    counts of each."""
    seen = {t for rec in training for t in variety.templates(rec)}
    for q in questions:
        q["wording"] = "new" if set(q["templates"]) - seen else "seen"
    return Counter(q["wording"] for q in questions)


def first_steps(questions: list[dict], answers: list[dict], metas: list[dict]) -> dict:
    """How the reasonings' first sentences read (helpers.puzzles.deduction.reading.first_step): the count of each
    verdict overall and per family; {} when the model wrote no reasoning (letter-only: no answer says why it
    stopped)."""
    if not any(m.get("stop") for m in metas):
        return {}
    verdicts = [(q["kind"], reading.first_step(q["puzzle"], a.get("reasoning") or ""))
                for q, a in zip(questions, answers)]
    per_kind: dict[str, Counter] = defaultdict(Counter)
    for kind, v in verdicts:
        per_kind[kind][v] += 1
    return {"all": dict(Counter(v for _, v in verdicts)), "by_kind": {k: dict(c) for k, c in per_kind.items()}}


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
             "pred": LETTERS.index(a["answer"]), "answer": LETTERS.index(q["answer"]), "wording": q.get("wording")}
            for q, a in zip(questions, answers)]
    by_kind, by_level, by_wording = defaultdict(list), defaultdict(list), defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
        by_level[str(r["level"])].append(r)
        if r["wording"]:
            by_wording[r["wording"]].append(r)
    _, dropped = filters.filter_answers(answers, agent.tokenizer, getattr(agent, "rules", None))
    stops = Counter(m.get("stop") for m in metas if m.get("stop"))
    fav = favourite_letter(rows)
    return {**_accuracy(rows), "by_kind": {k: _accuracy(v) for k, v in by_kind.items()},
            "by_level": {k: _accuracy(v) for k, v in sorted(by_level.items())},
            "by_wording": {k: _accuracy(v) for k, v in sorted(by_wording.items())},
            "latency": timing.latency_summary([m["seconds"] for m in metas], limit_s or agent.time_limit_s),
            "stops": stop_shares(stops, len(rows)),
            "cut_share": round((stops["deadline"] + stops["token_cap"] + stops["no_time"]) / len(rows), 4),
            "first_step": first_steps(questions, answers, metas),
            "tokens_mean": round(sum(m.get("tokens", 0) for m in metas) / len(rows), 1),
            "favourite": {**fav, "share": round(fav["share"], 4), "key_share": round(fav["key_share"], 4)},
            "item_correct": [int(r["correct"]) for r in rows],
            "filter_failed": sum(dropped.values()), "fallbacks": dict(Counter(m["reason"] for m in metas
                                                                            if m["source"] == "fallback")),
            "examples": [{"question": q["question"], "key": q["answer"], **a} for q, a in zip(questions[:2], answers)]}


def reply_shape(reasoner: Reasoner, questions: list[dict], *, batch_size: int = HARNESS_BATCH) -> dict:
    """How the reasoner's replies end with the deadline lifted (only the token cap or their own end stops them): each
    stop (STOPS) and the mean tokens of reasoning. This is the shape training taught, whatever the machine's decode
    speed: measure's stops are under the answer budget, where a slow or busy CPU cuts replies a fast one finishes."""
    size, metas = max(1, batch_size), []
    for start in range(0, len(questions), size):
        metas += reasoner.answer(questions[start:start + size], NO_DEADLINE_S)
    return {"n": len(metas), "stops": stop_shares(Counter(m["stop"] for m in metas), len(metas)),
            "tokens_mean": round(sum(m["tokens"] for m in metas) / len(metas), 1)}


def stop_shares(stops: Counter, n: int) -> dict:
    """{stop: share of the n replies} for each of STOPS that occurred."""
    return {s: round(stops[s] / n, 4) for s in STOPS if stops[s]}


def sign_test(wins: int, losses: int) -> float:
    """One-sided exact sign test (McNemar's exact test): P(at least `wins` of the wins + losses puzzles where the two
    modes differ go to one side by chance)."""
    n = wins + losses
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n if n else 1.0


def paired(one: dict, other: dict) -> tuple[int, int]:
    """(puzzles only `one` answered correctly, puzzles only `other` did): two measurements of the same puzzles."""
    pairs = list(zip(one.get("item_correct", []), other.get("item_correct", [])))
    return sum(a > b for a, b in pairs), sum(a < b for a, b in pairs)


def rl_earned(report: dict) -> tuple[bool, str]:
    """Whether the reinforced reasoner ("rl", helpers.agents.stages.reasoner_rl) answers: it must earn reasoning mode
    by the same rule against letter-only (justified_mode: filter, p99 under the limit, no collapse, significantly
    more correct) and, when the supervised reasoner earns it too, answer significantly more of the same puzzles
    correctly than the supervised one (sign test, p < MAX_P)."""
    rl, supervised = report.get("rl"), report.get("reason")
    if not rl:
        return False, "no reinforced reasoner was measured (rl.prompts 0, or its stage not run for this run)"
    mode, why = justified_mode({"letter": report.get("letter"), "reason": rl})
    if mode != "reason":
        return False, f"the reinforced reasoner against letter-only: {why}"
    if justified_mode(report)[0] != "reason":  # the supervised reasoner does not earn it: letter-only is the rival
        return True, f"the reinforced reasoner against letter-only (the supervised reasoner does not earn it): {why}"
    wins, losses = paired(rl, supervised)
    p = sign_test(wins, losses)
    said = (f"the reinforced reasoner answered {rl['correct']}/{rl['n']} against the supervised reasoner's "
            f"{supervised['correct']} (right alone on {wins}, wrong alone on {losses}, sign test p {p:.3f})")
    if rl["correct"] <= supervised["correct"] or p >= MAX_P:
        return False, said + f": not significantly more (p < {MAX_P})"
    return True, said + f" and beat letter-only: {why}"


def justified_answer(report: dict) -> tuple[str, str, str]:
    """(answer mode, reasoner adapter, why) a measurement justifies: the reinforced reasoner when rl_earned, else the
    supervised reasoner's mode by justified_mode."""
    earned, why_rl = rl_earned(report)
    if earned:
        return "reason", REASONER_RL, why_rl
    mode, why = justified_mode(report)
    return mode, REASONER, why + (f"; {why_rl}" if report.get("rl") else "")


def justified_mode(report: dict | None) -> tuple[str, str]:
    """The answer mode a measurement justifies, and why: reason when the reasoner answered significantly more of the
    same held-out puzzles correctly than letter scoring (sign test on the puzzles where they differ, p < MAX_P), with
    every answer passing the filter, p99 under the limit and its letters not collapsed onto one
    (helpers.evaluate.favourite_letter); else letter."""
    reason, letter_ = (report or {}).get("reason"), (report or {}).get("letter")
    if not reason or not letter_:
        return "letter", "no reasoner was measured (reasoner.examples 0, or notebooks 08-09 not run for this run)"
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
    wins, losses = paired(reason, letter_)
    p = sign_test(wins, losses)
    if p >= MAX_P:
        return "letter", (f"reasoning answered {reason['correct']}/{reason['n']} against letter-only's "
                          f"{letter_['correct']}: right alone on {wins} puzzles, wrong alone on {losses} (sign test "
                          f"p {p:.2f}, not under {MAX_P})")
    return "reason", (f"reasoning answered {reason['correct']}/{reason['n']} ({reason['accuracy']:.0%}) against "
                      f"letter-only's {letter_['correct']} ({letter_['accuracy']:.0%}; right alone on {wins}, wrong "
                      f"alone on {losses}, p {p:.3f}), p99 {p99:.2f} s")


def measured(report: dict) -> list[str]:
    """The answerers a report measured: letter, reason, and "rl" (the reinforced reasoner) when it was."""
    return [*MODES, *(["rl"] if report.get("rl") else [])]


def describe(report: dict) -> str:
    """One line per mode (accuracy, p50/p99 against the limit, cut share, favourite letter; the reinforced reasoner
    too when it was measured), then the mode chosen."""
    rows = []
    for mode in measured(report):
        r = report[mode]
        lat, fav = r["latency"], r["favourite"]
        first = reading.summary((r.get("first_step") or {}).get("all") or {})
        rows.append(f"[reasoner] {mode:>6}: {r['correct']}/{r['n']} correct ({r['accuracy']:.0%}, 95% "
                    f"{r['ci95'][0]:.0%}-{r['ci95'][1]:.0%}), p50 {lat['p50_s']:.2f} s p99 {lat['p99_s']:.2f} s of "
                    f"{lat['limit_s']:g} s, cut {r['cut_share']:.0%}, favourite {fav['letter']} {fav['share']:.0%}"
                    + (f", first step true {first}" if first else ""))
    return "\n".join(rows + [f"[reasoner] {report['why']}"])
