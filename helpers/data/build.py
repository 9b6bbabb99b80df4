"""Build the multiple-choice dataset: read, convert, generate, validate, dedupe, split, balance, write.

Every row read lands in exactly one bucket, and build_dataset asserts it:
    read + generated == kept (train + val) + unlabeled + dropped (every reason, every stage)
both in total and per source. Conversion is not a bucket: a converted open-ended question is kept
(or dropped later) like any other record.
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from helpers import io, layout
from helpers.data import convert
from helpers.data.balance import balance_letters, letter_table
from helpers.records import RecordError, dedupe_key, validate

BAD_INPUT = ("empty_question", "empty_answer", "non_text_field")  # the file's fault, not the pool's: strict stops


@dataclass
class Ledger:
    """Where every row went: counts per source and per drop reason, and the first message of each reason."""

    sources: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    dropped: Counter = field(default_factory=Counter)
    stages: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    examples: dict[str, str] = field(default_factory=dict)
    files: list[dict] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    cpu_seconds: dict[str, float] = field(default_factory=dict)

    def drop(self, stage: str, reason: str, source: str, message: str, n: int = 1) -> None:
        """Count n rows of `source` dropped at `stage` for `reason`."""
        self.dropped[reason] += n
        self.stages[stage][reason] += n
        self.sources[source]["dropped"] += n
        self.examples.setdefault(reason, message)

    def count(self, sources: Iterable[str], *columns: str) -> None:
        """Add one to each of `columns` per source name in `sources` (tallied first: one update per source)."""
        for source, n in Counter(sources).items():
            row = self.sources[source]
            for column in columns:
                row[column] += n


@dataclass(slots=True)  # no per-instance __dict__: one object less per record for the collector, quicker fields
class Item:
    """A record on its way through the build, with the file it came from (for located messages)."""

    rec: dict
    path: str
    checked: bool = False  # validated already (readers validate every record as they read it)
    qkey: str = ""
    key: str = ""


def _src(rec: dict) -> str:
    """The source a row is counted under (validate() names an empty one 'unknown' too)."""
    return str(rec.get("source") or "unknown")


def _hash(seed: int, text: str) -> bytes:
    """A seeded sort key: 8 bytes of blake2b (bytes of one length sort as their big-endian integers would)."""
    return hashlib.blake2b(f"{seed}\x1f{text}".encode("utf-8", "surrogatepass"), digest_size=8).digest()


def read_sources(sources: list[str], ledger: Ledger, *, tolerant: bool, fmt: str | None = None,
                 progress: bool = False) -> tuple[list[Item], list[Item]]:
    """Read every source (file, folder, hub:...) into native records and open-ended items."""
    from helpers.data import readers  # the readers import `datasets` lazily; keep this module light too

    native, open_ended = [], []
    specs = sources
    if progress:
        from tqdm.auto import tqdm
        specs = tqdm(sources, desc="reading", unit="source")
    for spec in specs:
        for res in readers.read_source(str(spec), fmt, tolerant=tolerant):
            res.check()
            # a bad row's own source is unknown: in a multi-source file it is counted under the file's name
            owner = res.source if res.source and "," not in res.source else Path(res.path).name
            native += [Item(rec, res.path, checked=True) for rec in res.records]
            open_ended += [Item(q, res.path) for q in res.open_ended]
            ledger.count(map(_src, res.records), "read")
            ledger.count(map(_src, res.open_ended), "read", "open_ended")
            if res.unlabeled or res.dropped:
                ledger.sources[owner]["read"] += res.unlabeled + sum(res.dropped.values())
                ledger.sources[owner]["unlabeled"] += res.unlabeled
            for reason, n in res.dropped.items():
                ledger.drop("read", reason, owner, res.examples.get(reason, reason), n)
            ledger.files.append({"path": res.path, "format": res.fmt, "source": res.source, "read": res.read,
                                 "records": len(res.records), "open_ended": len(res.open_ended),
                                 "unlabeled": res.unlabeled, "dropped": dict(res.dropped)})
    return native, open_ended


def convert_items(items: list[Item], ledger: Ledger, *, seed: int, tolerant: bool = True) -> tuple[list[Item], Counter]:
    """Open-ended items to 'converted' records; returns them and the answer-type counts."""
    kinds = convert.classify_items([it.rec for it in items])
    pool = convert.build_pool([it.rec for it in items], kinds)
    out = []
    for it, kind in zip(items, kinds):
        try:
            rec = convert.convert_item(it.rec, pool, seed=seed, kind=kind)
        except RecordError as exc:
            exc = RecordError(exc.reason, exc.problem, it.path, exc.where, exc.field)
            if not tolerant and exc.reason in BAD_INPUT:
                raise exc from None
            ledger.drop("convert", exc.reason, _src(it.rec), str(exc))
            continue
        out.append(Item(rec, it.path))
    ledger.count((_src(it.rec) for it in out), "converted")
    return out, pool.types


def generate_puzzles(n: int, ledger: Ledger, *, seed: int, kinds: Sequence[str] | None = None) -> list[Item]:
    """n generated puzzles (helpers.puzzles; of `kinds`, default every kind), counted as 'generated'."""
    if n <= 0:
        return []
    puzzles = importlib.import_module("helpers.puzzles")  # lazy: only builds that ask for puzzles pay for it
    kinds = tuple(kinds) if kinds else puzzles.KINDS
    out = [Item(rec, "helpers.puzzles") for rec in puzzles.generate(n, seed=seed, kinds=kinds)]
    ledger.count((_src(it.rec) for it in out), "generated")
    return out


def validate_items(items: list[Item], ledger: Ledger, *, tolerant: bool = True) -> list[Item]:
    """Schema-check every record not yet checked; a bad one is dropped by reason (tolerant) or raised (strict).

    Records from the readers were validated as they were read (helpers.data.readers.collect), with the file's
    line numbers; validating them again would cost ~0.4 s CPU per 30,000 records for nothing.
    """
    out = []
    for it in items:
        if it.checked:
            out.append(it)
            continue
        try:
            out.append(Item(validate(it.rec, it.path, f"id {it.rec.get('id')!r}"), it.path, checked=True))
        except RecordError as exc:
            if not tolerant:
                raise
            ledger.drop("validate", exc.reason, _src(it.rec), str(exc))
    return out


def dedupe_items(items: list[Item], ledger: Ledger) -> list[Item]:
    """Keep the first of each question + choice set (shuffled choices are still duplicates)."""
    first: dict[str, Item] = {}
    out = []
    for it in items:
        rec = it.rec
        it.key = dedupe_key(rec)
        it.qkey = it.key.split("\x1f", 1)[0]  # dedupe_key starts with the normalised question
        kept = first.get(it.key)
        if kept is None:
            first[it.key] = it
            out.append(it)
        else:
            ledger.drop("dedupe", "duplicate", rec["source"],
                        f"{it.path}: record id {rec['id']!r}: same question and choices as id {kept.rec['id']!r} "
                        f"({kept.path})")
    return out


def split_items(items: list[Item], *, val_fraction: float, seed: int) -> tuple[list[Item], list[Item], int]:
    """Stratified split: per source about round(n * f) to validation, at least 1 where n >= 2 and f > 0, never all.

    Questions with the same normalised text (same stem, other choices) go to one side together, in an order
    seeded by hashing that text, so a question's side depends on neither the input order nor other sources.
    A validation question whose text is also in train through another source moves to train:
    returns (train, val, moved).
    """
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    by_source: dict[str, dict[str, list[Item]]] = defaultdict(lambda: defaultdict(list))
    for it in items:
        by_source[it.rec["source"]][it.qkey].append(it)
    train, val = [], []
    for source in sorted(by_source):
        groups = sorted(by_source[source].items(), key=lambda kv: _hash(seed, kv[0]))
        n = sum(len(g) for _, g in groups)
        quota = 0 if n < 2 or val_fraction == 0 else min(n - 1, max(1, round(n * val_fraction)))
        taken = 0
        for _, group in groups:  # greedy fill: a group that would overshoot the quota stays in train
            if taken + len(group) <= quota:
                val += group
                taken += len(group)
            else:
                train += group
        if quota and not taken:  # every stem group is larger than the quota: hold out the smallest one
            smallest = min((g for _, g in groups), key=len)
            if len(smallest) < n:
                val += smallest
                held = {id(it) for it in smallest}
                train = [it for it in train if id(it) not in held]
    train_q = {it.qkey for it in train}
    moved = [it for it in val if it.qkey in train_q]
    if moved:
        val = [it for it in val if it.qkey not in train_q]
        train += moved
    order = lambda it: _hash(seed + 1, it.key)  # noqa: E731 - mix sources in the written files
    return sorted(train, key=order), sorted(val, key=order), len(moved)


def build_splits(sources: list[str], *, puzzles: int, val_fraction: float, seed: int, tolerant: bool = True,
                 fmt: str | None = None, progress: bool = False, balance: bool = True,
                 log: Callable[[str], None] | None = None, puzzle_kinds: Sequence[str] | None = None,
                 ) -> tuple[list[dict], list[dict], dict]:
    """The whole build in memory: (train, val, report without provenance); build_dataset writes it."""
    with io.gc_paused():  # ~1M small acyclic objects per 50,000 rows: the collector's passes over them cost ~10% CPU
        return _build_splits(sources, puzzles=puzzles, val_fraction=val_fraction, seed=seed, tolerant=tolerant,
                             fmt=fmt, progress=progress, log=log, balance=balance, puzzle_kinds=puzzle_kinds)


def _build_splits(sources: list[str], *, puzzles: int, val_fraction: float, seed: int, tolerant: bool,
                  fmt: str | None, progress: bool, log: Callable[[str], None] | None,
                  balance: bool = True, puzzle_kinds: Sequence[str] | None = None,
                  ) -> tuple[list[dict], list[dict], dict]:
    if not 0.0 <= val_fraction < 1.0:  # fail before minutes of reading, not after
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    if puzzles < 0:
        raise ValueError(f"puzzles must be 0 or more, got {puzzles}")
    ledger = Ledger()
    say = log or (lambda _msg: None)

    clock = [time.perf_counter(), time.process_time()]

    def timed(stage: str, n: int) -> None:
        now = [time.perf_counter(), time.process_time()]
        ledger.seconds[stage] = round(now[0] - clock[0], 4)
        ledger.cpu_seconds[stage] = round(now[1] - clock[1], 4)  # wall time also measures a busy machine's neighbours
        clock[:] = now
        say(f"{stage:>9}: {n:,} records in {ledger.seconds[stage]:.2f} s")

    native, open_ended = read_sources(sources, ledger, tolerant=tolerant, fmt=fmt, progress=progress)
    timed("read", len(native) + len(open_ended))
    converted, types = convert_items(open_ended, ledger, seed=seed, tolerant=tolerant)
    timed("convert", len(open_ended))
    generated = generate_puzzles(puzzles, ledger, seed=seed, kinds=puzzle_kinds)
    timed("generate", len(generated))
    items = validate_items(native + converted + generated, ledger, tolerant=tolerant)
    timed("validate", len(items))
    items = dedupe_items(items, ledger)
    timed("dedupe", len(items))
    train_items, val_items, moved = split_items(items, val_fraction=val_fraction, seed=seed)
    train, val = [it.rec for it in train_items], [it.rec for it in val_items]
    fixed = balance_letters(train, seed=seed) + balance_letters(val, seed=seed + 1) if balance else None
    timed("split", len(items))
    for side, recs in (("train", train), ("val", val)):
        ledger.count((rec["source"] for rec in recs), side, "kept")
    report = _report(ledger, train, val, types=types, moved=moved, fixed=fixed, val_fraction=val_fraction)
    return train, val, report


def _report(ledger: Ledger, train: list[dict], val: list[dict], *, types: Counter, moved: int, fixed: int,
            val_fraction: float) -> dict:
    cols = ("read", "generated", "unlabeled", "dropped", "kept", "converted", "train", "val")
    per_source = {s: {c: ledger.sources[s][c] for c in cols} for s in sorted(ledger.sources)}
    totals = {c: sum(row[c] for row in per_source.values()) for c in cols}
    for name, row in [("total", totals), *per_source.items()]:  # raise, not assert: holds under python -O too
        if row["read"] + row["generated"] != row["kept"] + row["unlabeled"] + row["dropped"]:
            raise AssertionError(f"{name}: rows went missing: read {row['read']} + generated {row['generated']} != "
                                 f"kept {row['kept']} + unlabeled {row['unlabeled']} + dropped {row['dropped']}")
    if totals["dropped"] != sum(ledger.dropped.values()) or totals["kept"] != len(train) + len(val):
        raise AssertionError(f"ledger out of step: {totals} vs {sum(ledger.dropped.values())} dropped by reason, "
                             f"{len(train) + len(val)} written")
    sides = {"train": train, "val": val}
    # both letter tables from one pass per side: (choice count, answer index) -> records
    pairs = {side: Counter((len(r["choices"]), r["answer"]) for r in recs) for side, recs in sides.items()}
    return {
        "invariant": "read + generated == kept + unlabeled + dropped (in total and per source)",
        "totals": totals,
        "dropped": dict(ledger.dropped.most_common()),
        "dropped_by_stage": {stage: dict(c) for stage, c in ledger.stages.items()},
        "examples": {reason: ledger.examples[reason] for reason in ledger.dropped},
        "per_source": per_source,
        "inputs": ledger.files,
        "answer_types": dict(types.most_common()),
        "letters": {side: letter_table(p) for side, p in pairs.items()},
        "letters_by_choice_count": {side: {str(n): letter_table(p, n) for n in sorted({n for n, _ in p})}
                                    for side, p in pairs.items()},
        "split": {"val_fraction": val_fraction, "moved_to_train": moved,
                  "rule": "per source about round(n*f) to val in whole same-stem groups, at least 1 if n >= 2, "
                          "never all; a val question whose normalised text is also in train moves to train"},
        "balance": {"enabled": fixed is not None, "fixed_order": fixed},
        "seconds": ledger.seconds,
        "cpu_seconds": ledger.cpu_seconds,
    }


def build_dataset(sources: list[str], *, out_dir: str | Path, puzzles: int, val_fraction: float, seed: int,
                  tolerant: bool = True, fmt: str | None = None, params: dict | None = None,
                  progress: bool = False, log: Callable[[str], None] | None = None, balance: bool = True,
                  puzzle_kinds: Sequence[str] | None = None) -> dict:
    """Build and write out_dir/train.jsonl, val.jsonl and report.json (stamped); return the report.

    balance=False keeps every record's choice order (no answer-letter balancing); the report says so."""
    train, val, report = build_splits(sources, puzzles=puzzles, val_fraction=val_fraction, seed=seed,
                                      tolerant=tolerant, fmt=fmt, progress=progress, log=log, balance=balance,
                                      puzzle_kinds=puzzle_kinds)
    out = Path(out_dir)
    t0 = time.perf_counter()
    io.write_jsonl(out / layout.TRAIN_DATA, train)
    io.write_jsonl(out / layout.VAL_DATA, val)
    report["seconds"]["write"] = round(time.perf_counter() - t0, 4)
    params = params if params is not None else {"sources": [str(s) for s in sources], "puzzles": puzzles,
                                                "val_fraction": val_fraction, "seed": seed, "tolerant": tolerant,
                                                "format": fmt}
    report = {**io.stamp(params), "outputs": {"train": layout.TRAIN_DATA, "val": layout.VAL_DATA}, **report}
    io.write_json(out / layout.DATA_REPORT, report)
    return report
