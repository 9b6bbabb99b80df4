"""How long the written deductions are: per family and level, puzzles built by the catalogue, each deduction
written, checked, and its words counted against the tournament's 100-word explanation limit (and its tokens, when
a tokenizer is given). A puzzle with no checked deduction within the limit is counted by reason, not used.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Callable

from helpers.puzzles import catalogue, families
from helpers.puzzles.deduction.checker import check
from helpers.puzzles.deduction.kinship import KINSHIP_KINDS, check_kinship, write_kinship
from helpers.puzzles.deduction.steps import SEATING
from helpers.puzzles.deduction.writer import KINDS, NoDeduction, write

LIMIT = catalogue.MAX_EXPLANATION_WORDS  # words an explanation may have (the tournament's rule)
WRITE_RESERVE_S = 2.5  # seconds a question must have left for its deduction to be written (explanation)


def deduction_text(steps: list) -> str:
    """A deduction's steps as one text."""
    return " ".join(s.text for s in steps)


def verdict(puzzle: dict, key: str, work: int | None = None) -> tuple[str, str]:
    """(outcome, text) for one puzzle: "ok", "over_budget", "failed_check" or the writer's reason for none (a
    kinship family's deduction is its own explanation's steps, checked by check_kinship); a seating writer still
    looking past the work budget stops ("no_deduction:work_budget": deduction.writer.work_budget)."""
    outcome, text, _ = timed_verdict(puzzle, key, work)
    return outcome, text


def timed_verdict(puzzle: dict, key: str, work: int | None = None) -> tuple[str, str, dict]:
    """verdict, with the deduction's steps and the seconds spent writing it: {"steps": n, "write_s": s}."""
    start = time.perf_counter()
    writer, checker = _writer_and_checker(puzzle, work)
    try:
        steps = writer(puzzle, key)
    except NoDeduction as exc:
        return f"no_deduction:{exc}", "", {"steps": 0, "write_s": time.perf_counter() - start}
    text = deduction_text(steps)
    trace = getattr(writer, "split", {})
    left = None if work is None else work - trace.get("spent", 0)  # one allowance for both writes
    if len(text.split()) >= LIMIT and trace.get("in_two") and (left is None or left > 0):  # the big steps kept whole
        try:
            whole = write(puzzle, key, work=left, split_big=False)
        except NoDeduction:
            whole = steps
        steps, text = (whole, deduction_text(whole)) if len(deduction_text(whole).split()) < len(text.split()) \
            else (steps, text)
    info = {"steps": len(steps), "write_s": time.perf_counter() - start}
    if checker(puzzle, steps, key):
        return "failed_check", text, info
    return ("ok" if len(text.split()) <= LIMIT else "over_budget"), text, info


def _writer_and_checker(puzzle: dict, work: int | None) -> tuple[Callable, Callable]:
    """The family's deduction writer (puzzle, key) -> steps and checker (puzzle, steps, key) -> problems: a family
    of the contract's own (helpers.puzzles.families), the blood-relation families', or the seating writer's."""
    own = families.module(puzzle["kind"])
    if own is not None:
        def deduce(p: dict, key: str) -> list:
            try:
                return own.deduce(p, key)
            except ValueError as exc:
                raise NoDeduction(str(exc)) from exc
        return deduce, own.check
    if puzzle["kind"] in KINSHIP_KINDS:
        return write_kinship, check_kinship
    trace: dict = {}

    def seating(p: dict, key: str) -> list:
        return write(p, key, work=work, trace=trace)
    seating.split = trace  # type: ignore[attr-defined]  (how many big steps it said in two: Writer.in_two)
    return seating, check


def explanation(puzzle: dict, key: str, *, seconds_left: float | None = None,
                work: int | None = None) -> tuple[str, str]:
    """(the explanation a question carries, where it came from): the puzzle's checked deduction, under LIMIT words
    ("deduction"), else the solver's own text (catalogue.explain: a seating puzzle's count over every seating,
    "count:<why no deduction>", "count:error:<type>" when writing or checking raised; a blood-relation puzzle's
    unchecked chain of links, "links:<why>"). A seating deduction is tried only with at least WRITE_RESERVE_S left
    (a big board can take a second or two on a busy CPU), else "count:no_time", and its writer stops once it has
    done `work` ("count:no_deduction:work_budget": the agents' timing.EXPLAIN_WORK, a count, so alike on every CPU)."""
    seating = puzzle["kind"] in SEATING
    if seating and seconds_left is not None and seconds_left < WRITE_RESERVE_S:
        return catalogue.explain(puzzle, key), "count:no_time"
    try:
        outcome, text = verdict(puzzle, key, work)
    except Exception as exc:  # noqa: BLE001 - the question is proven already; its explanation may fall back, counted
        outcome, text = f"error:{type(exc).__name__}", ""
    if outcome == "ok" and len(text.split()) >= LIMIT:  # a record's explanation stays under it (catalogue.verify)
        outcome = "over_budget"
    if outcome == "ok":
        return text, "deduction"
    return catalogue.explain(puzzle, key), f"{'count' if seating else 'links'}:{outcome}"


def records(kind: str, level: int, n: int, seed: int) -> list[dict]:
    """n catalogue records of a family and level (deterministic for the seed)."""
    rng = random.Random(f"deduction:{seed}:{kind}:{level}")
    return [catalogue.make_puzzle(kind, level, i % 4, rng, {}, id=f"{kind}-{i}") for i in range(n)]


def measure_one(kind: str, level: int, n: int, seed: int, tokens: Callable[[str], int] | None = None) -> dict:
    """Outcome counts, steps, word (and token) lengths, time to write a deduction (each) and to write and check
    one (mean), for one family and level."""
    counts: dict[str, int] = {}
    words, toks, steps, writes, spent = [], [], [], [], 0.0
    for rec in records(kind, level, n, seed):
        start = time.perf_counter()
        outcome, text, info = timed_verdict(rec["puzzle"], rec["choices"][rec["answer"]])
        spent += time.perf_counter() - start
        counts[outcome] = counts.get(outcome, 0) + 1
        writes.append(info["write_s"])
        if text:
            words.append(len(text.split()))
            steps.append(info["steps"])
            toks += [tokens(text)] if tokens else []
    return {"kind": kind, "level": level, "puzzles": n, "counts": counts, "words": words, "tokens": toks,
            "steps": steps, "write_s": writes, "seconds": spent / max(n, 1)}


def _at(values: list, share: float) -> float:
    """The value at a share of the sorted values (0.5: the median's upper neighbour, 0.99: p99); 0 for none."""
    v = sorted(values)
    return v[min(len(v) - 1, int(share * len(v)))] if v else 0


def summary_row(row: dict) -> str:
    """One markdown table row: family, level, puzzles, median steps, median/p90/max words (tokens), share over the
    limit, other outcomes, ms to write (p50 / p99) and to write and check (mean)."""
    w = sorted(row["words"]) or [0]
    p90 = _at(w, 0.9)
    over = row["counts"].get("over_budget", 0)
    other = {k: v for k, v in row["counts"].items() if k not in ("ok", "over_budget")}
    tok = f" | {statistics.median(row['tokens']):.0f} / {max(row['tokens'])}" if row["tokens"] else ""
    ms = [1000 * s for s in row["write_s"]]
    return (f"| {row['kind']} | {row['level']} | {row['puzzles']} | {statistics.median(row['steps'] or [0]):.0f} "
            f"| {statistics.median(w):.0f} / {p90} / {w[-1]}{tok} | {over} ({over / row['puzzles']:.1%}) "
            f"| {other or '-'} | {_at(ms, 0.5):.0f} / {_at(ms, 0.99):.0f} | {1000 * row['seconds']:.0f} |")


def table(rows: list[dict]) -> str:
    """The measured rows as a markdown table."""
    tok = " | tokens median / max" if any(r["tokens"] for r in rows) else ""
    head = (f"| family | level | puzzles | steps median | words median / p90 / max{tok} | over {LIMIT} words "
            f"| other outcomes | ms to write p50 / p99 | ms to write and check |")
    rule = "|" + "---|" * (head.count("|") - 1)
    return "\n".join([head, rule, *map(summary_row, rows)])


def measure(n: int, seed: int = 0, kinds: tuple[str, ...] = KINDS + KINSHIP_KINDS,
            levels: tuple[int, ...] = catalogue.LEVELS, tokens: Callable[[str], int] | None = None) -> list[dict]:
    """measure_one for every family and level the writers cover (the seating writer's and the kinship families)."""
    return [measure_one(k, lv, n, seed, tokens) for k in kinds for lv in levels]
