"""The catalogue of puzzle families (kinds, topics, names) and their entry points: generate, verify and prove.

Each record is a shared record (helpers.records) with origin "generated" plus "subtopic" and
"puzzle" (the structured clues the question text is rendered from). A solver that never sees the
generator's hidden world proves, from those clues alone, that exactly one choice is correct; a
puzzle that fails is regenerated and the rejection counted. Difficulty on the curriculum's 0-10
scale: level 1 -> 3.0, level 2 -> 5.5, level 3 -> 8.0; and each puzzle carries its measured difficulty,
puzzle["work"] (see measure()): the solver's own work, which the Q-agent uses to ask the hardest.

Every family module offers the same five functions: build (hidden world -> proven puzzle), render (the text,
from the puzzle alone), possible_answers (the solver), explain (its deduction, <= 100 words) and work.
"""

from __future__ import annotations

import hashlib
import itertools
import multiprocessing
import os
import random
from typing import Callable, Iterable, Iterator

from helpers.puzzles import families
from helpers.puzzles.kinship import key_shares, kinds as kinship_kinds
from helpers.puzzles.kinship import tree as family_tree
from helpers.puzzles.names import NAMES
from helpers.puzzles.seating import classic as seating_classic
from helpers.puzzles.seating import layouts as seating_layouts
from helpers.records import RecordError, dedupe_key, letter, make_record, validate

# The first three families (the smoke and cpu profiles' data, whose learning tests are on them), then the kinds of
# the organisers' own examples (helpers.puzzles.seating.layouts: seating, on seating.text, seating.solver,
# seating.world and csp; helpers.puzzles.kinship.kinds: blood relations, built in kinship.pointing, kinship.coded and
# kinship.gender on the shared kinship.words and kinship.facts).
CLASSIC_KINDS = ("seating_linear", "seating_circular", "family")
# Families that build a level-3 puzzle in well under 0.1 s at p95 (docs/results.md, "Puzzles"): the Q-agent falls back on them when
# a slower family misses its share of the time limit.
FAST_KINDS = CLASSIC_KINDS + kinship_kinds.KINDS + families.FAST_KINDS
# Then the families of the family contract (helpers.puzzles.families): truth-tellers and liars, syllogisms and
# alphanumeric series.
KINDS = CLASSIC_KINDS + seating_layouts.KINDS + kinship_kinds.KINDS + families.KINDS
LEVELS = (1, 2, 3)
TOPICS = {**{k: ("Puzzles", "Seating Arrangements (Linear, Circular)")
             for k in ("seating_linear", "seating_circular", *seating_layouts.KINDS)},
          "family": ("Blood Relations and Family Tree", "Puzzles involving generations and family tree logic"),
          **{k: ("Blood Relations and Family Tree", "Puzzles involving generations and family tree logic")
             for k in kinship_kinds.KINDS},
          **families.TOPICS}
# Question + answer letter + the four "A) ..." choices stay under 400 characters: English runs ~4
# characters per token in Qwen-class BPE vocabularies, and even at a pessimistic 3 that is 133
# tokens, 118 after the rule's -15, under its limit of 130.
MAX_CHARS = 400
# A family may allow more (none does yet): the Q-agent checks every question with its own tokenizer anyway.
KIND_MAX_CHARS: dict[str, int] = {}
MAX_EXPLANATION_WORDS = 100
MAX_ATTEMPTS = 500
PER_WORKER = 500  # puzzles per build worker at least (build_workers)


def _module(kind: str):
    """The generator/solver module for a puzzle kind."""
    if kind in ("seating_linear", "seating_circular"):
        return seating_classic
    if kind == "family":
        return family_tree
    if kind in seating_layouts.KINDS:
        return seating_layouts
    if kind in kinship_kinds.KINDS:
        return kinship_kinds
    if families.module(kind) is not None:
        return families.module(kind)
    raise ValueError(f"unknown puzzle kind {kind!r}; expected one of {KINDS}")


def max_chars(kind: str) -> int:
    """The length budget of a family's question with its choices (official_length), in characters."""
    return KIND_MAX_CHARS.get(kind, MAX_CHARS)


def score(work: dict) -> float:
    """Measured difficulty on 0-10 from the solver's work: each needed deduction is a point, and each 4 bits of
    possibilities before the first clue another (5 people in a row: 120 seatings, 6.9 bits: +1.7)."""
    return round(min(10.0, work["steps"] + 0.25 * work["log2_space"]), 2)


def measure(puzzle: dict) -> dict:
    """The solver's work on a puzzle (steps, log2_space, ...) and its score(); stored as puzzle["work"]."""
    work = _module(puzzle["kind"]).work(puzzle)
    return {**work, "score": score(work)}


def official_length(question: str, choices: list[str]) -> int:
    """Characters the format filter's token budget covers: question, answer letter and "A) ..." choices."""
    return len(question) + 1 + sum(len(f"{letter(i)}) {c}") for i, c in enumerate(choices))


def question_forms(kind: str, level: int) -> tuple[str, ...]:
    """The question forms a seating kind draws from uniformly at a level (make_puzzle's form=); () for the others."""
    if _module(kind) is seating_layouts:
        return seating_layouts.question_forms(kind, level)
    if _module(kind) is seating_classic:
        return seating_classic.question_forms(kind == "seating_circular", level)
    return ()


def form_shares(kind: str, level: int) -> tuple[tuple[str, float], ...]:
    """Every question form a kind asks at a level with its share: the seating kinds' drawn uniformly, the kinship
    families' by their builders' FORM_SHARES."""
    if kind == "family":
        return family_tree.FORM_SHARES[level]
    if families.module(kind) is not None:
        return families.module(kind).FORM_SHARES[level]
    if _module(kind) is kinship_kinds:
        return kinship_kinds.FORM_SHARES[kind][level]
    forms = question_forms(kind, level)
    return tuple((f, 1 / len(forms)) for f in forms)


def form_at(kind: str, level: int, u: float) -> str:
    """The form at quantile u (0 <= u < 1) of the kind's form shares. A picker that compares several candidates
    (the Q-agent's hardest of N) draws u once per question and asks every candidate this form, so the pick keeps
    each form's share instead of favouring the form that measures hardest."""
    shares = [(f, s) for f, s in form_shares(kind, level) if s > 0]
    total, edge = sum(s for _, s in shares), 0.0
    for f, s in shares:
        edge += s / total
        if u < edge:
            return f
    return shares[-1][0]


def _build(kind: str, level: int, rng: random.Random, stats: dict,
           give_up: Callable[[], bool] | None = None, form: str | None = None) -> dict | None:
    if kind == "family":
        return family_tree.build(rng, list(NAMES), level=level, stats=stats, form=form)
    if _module(kind) is kinship_kinds:
        return kinship_kinds.build(rng, list(NAMES), kind=kind, level=level, stats=stats, form=form)
    if families.module(kind) is not None:
        return families.module(kind).build(rng, list(NAMES), kind=kind, level=level, stats=stats, form=form)
    if _module(kind) is seating_layouts:
        return seating_layouts.build(rng, [n for n, _ in NAMES], kind=kind, level=level, stats=stats,
                                     give_up=give_up, form=form)
    return seating_classic.build(rng, [n for n, _ in NAMES], circular=kind == "seating_circular",
                                 level=level, stats=stats, form=form)


def make_puzzle(kind: str, level: int, target: int, rng: random.Random, stats: dict, id: str,
                give_up: Callable[[], bool] | None = None, form: str | None = None, flatten: bool = True) -> dict:
    """One verified record of `kind` at `level` whose correct choice sits at index `target`, asking a question of
    `form` (one of form_shares(kind, level)); when not given, a seating kind draws it uniformly from question_forms and
    a kinship family by its shares.

    give_up (e.g. a deadline's passed()) is asked before every attempt after the first, and inside the slow
    families' clue search: True raises TimeoutError, so a caller with a time limit never waits long on a family.
    flatten: a kinship key word its family asks too often is kept only part of the time (kinship.key_shares; counted
    as "key_flattened"); False gives the builders' raw keys, as key_shares' table is measured.
    """
    mod = _module(kind)
    shares = dict(form_shares(kind, level))
    if form is not None and form not in shares:
        raise ValueError(f"{kind} at level {level} asks no {form!r} question; its forms are {sorted(shares)}")
    forms = question_forms(kind, level)  # drawn once, so a form rejected more often is not asked less often
    form = form or (rng.choice(forms) if forms else form_at(kind, level, rng.random()))
    for attempt in range(MAX_ATTEMPTS):
        if attempt and give_up is not None and give_up():
            raise TimeoutError(f"gave up on a {kind} puzzle at level {level} after {stats.get('attempts', 0)} attempts")
        stats["attempts"] = stats.get("attempts", 0) + 1
        built = _build(kind, level, rng, stats, give_up, form)
        if built is None:
            continue
        if flatten and not key_shares.keep(kind, level, built["answer"], rng):
            stats["key_flattened"] = stats.get("key_flattened", 0) + 1
            continue
        puzzle = dict(built["puzzle"], level=level)
        choices = list(built["distractors"])
        rng.shuffle(choices)
        choices.insert(target, built["answer"])
        puzzle = in_choice_order(puzzle, choices)
        question = mod.render(puzzle)
        explanation = mod.explain(puzzle, built["answer"])
        if official_length(question, choices) >= max_chars(kind):
            stats["too_long"] = stats.get("too_long", 0) + 1
            continue
        if len(explanation.split()) >= MAX_EXPLANATION_WORDS:
            stats["long_explanation"] = stats.get("long_explanation", 0) + 1
            continue
        puzzle["work"] = measure(puzzle)
        topic, subtopic = TOPICS[kind]
        rec = make_record(id=id, source=f"puzzles/{kind}", question=question, choices=choices, answer=target,
                          explanation=explanation, topic=topic, difficulty=puzzle["work"]["score"],
                          origin="generated")
        rec.update(subtopic=subtopic, puzzle=puzzle)
        return rec
    raise RuntimeError(f"no valid {kind} puzzle at level {level} in {MAX_ATTEMPTS} attempts: {stats}")


def in_choice_order(puzzle: dict, choices: list[str]) -> dict:
    """The puzzle with its options (a blood-relation which-question's expressions or statements) in the order of the
    record's choices, which its explanation follows ("The other options give: ..."); any other puzzle as it is."""
    return kinship_kinds.in_choice_order(puzzle, choices) if puzzle["kind"] in kinship_kinds.KINDS else puzzle


def iter_puzzles(seed: int, *, kinds: tuple[str, ...] = KINDS, levels: tuple[int, ...] = LEVELS,
                 stats: dict | None = None) -> Iterator[dict]:
    """Endless verified puzzles, deterministic for a seed; kinds x levels and answer letters both cycle.

    Item i asks for letter i % 4, so any 4n consecutive items hold exactly n of each letter; `stats`
    (if given) counts attempts, accepted records and every rejection by reason.
    """
    combos = _combos(kinds, levels)
    firsts = map(_first_of_item, ((seed, i, *combos[i % len(combos)]) for i in itertools.count()))
    yield from _in_order(seed, combos, firsts, {} if stats is None else stats)


def generate(n: int, *, seed: int, kinds: tuple[str, ...] = KINDS, levels: tuple[int, ...] = LEVELS,
             stats: dict | None = None, workers: int | None = None) -> list[dict]:
    """The first n puzzles of iter_puzzles(seed, ...), the same records whatever the number of worker processes
    (default build_workers(n)): each item has its own seeded generator, and duplicates are settled in order."""
    combos = _combos(kinds, levels)
    stats = {} if stats is None else stats
    workers = build_workers(n) if workers is None else max(1, int(workers))
    items = [(seed, i, *combos[i % len(combos)]) for i in range(n)]
    if workers == 1:
        return list(_in_order(seed, combos, map(_first_of_item, items), stats))
    with multiprocessing.get_context("spawn").Pool(workers) as pool:  # spawn: no fork of a torch-threaded kernel
        return list(_in_order(seed, combos, pool.imap(_first_of_item, items, chunksize=16), stats))


def build_workers(n: int) -> int:
    """Processes for building n puzzles: one per available core, one per PER_WORKER puzzles at most (a spawned
    worker costs ~1 s to start; the slow families take ~0.1-0.3 s a puzzle), 1 for small builds."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, n // PER_WORKER))


def _combos(kinds: tuple[str, ...], levels: tuple[int, ...]) -> list[tuple[str, int]]:
    """Every (kind, level) in the order items cycle through them; unknown kinds or levels raise ValueError."""
    for kind in kinds:
        _module(kind)
    combos = [(k, lv) for k in kinds for lv in levels]
    if not combos or any(lv not in LEVELS for lv in levels):
        raise ValueError(f"levels must be a non-empty subset of {LEVELS}, got {levels!r}")
    return combos


def _first_of_item(item: tuple[int, int, str, int]) -> tuple[dict, tuple, dict]:
    """Item i's first record, its generator's state after it and the counts it cost (runs in a worker)."""
    seed, i, kind, level = item
    rng, stats = random.Random(f"puzzles:{seed}:{i}"), {}  # string seeds hash the same in every process
    rec = make_puzzle(kind, level, i % 4, rng, stats, id=f"{kind}-s{seed}-{i:06d}")
    return rec, rng.getstate(), stats


def _in_order(seed: int, combos: list[tuple[str, int]], firsts: Iterable[tuple[dict, tuple, dict]],
              stats: dict) -> Iterator[dict]:
    """Records in item order; a duplicate of an earlier one is replaced by the item's next puzzle (its generator
    resumed where it stopped), so the result does not depend on who built the first ones."""
    seen: set[bytes] = set()
    for i, (rec, state, counts) in enumerate(firsts):
        for key, value in counts.items():
            stats[key] = stats.get(key, 0) + value
        digest = _digest(rec)
        if digest in seen:
            rng = random.Random()
            rng.setstate(state)
            kind, level = combos[i % len(combos)]
            while digest in seen:
                stats["duplicate"] = stats.get("duplicate", 0) + 1
                rec = make_puzzle(kind, level, i % 4, rng, stats, id=f"{kind}-s{seed}-{i:06d}")
                digest = _digest(rec)
        seen.add(digest)
        stats["accepted"] = stats.get("accepted", 0) + 1
        yield rec


def _digest(rec: dict) -> bytes:
    """An 8-byte digest of a record's dedupe key: an endless stream's duplicate check costs ~100 MB per million."""
    return hashlib.blake2b(dedupe_key(rec).encode("utf-8"), digest_size=8).digest()


def solve(record: dict) -> set[int]:
    """Indices of the choices the record's structured clues prove correct (a sound puzzle gives exactly one)."""
    puzzle = record["puzzle"]
    proven = _module(puzzle["kind"]).possible_answers(puzzle)
    if len(proven) != 1:
        return set()
    return {i for i, c in enumerate(record["choices"]) if c in proven}


def prove_text(question: str, choices: list[str]) -> tuple[int | None, dict | None, str | None]:
    """Prove a question written in a generator's words (e.g. by a fine-tuned writer): (index of the one choice
    the solver proves, the parsed puzzle, None), else (None, the puzzle or None, the reason). The text is read back
    into its structured puzzle (exactly: it must render to the same text; every family has a reader), then solved."""
    from helpers.puzzles.kinship import parse as kinship_parse  # lazy: only a caller proving free text pays for them
    from helpers.puzzles.seating import parse as seating_parse
    puzzle, own = families.parse(question, choices)  # the contract's families first: each reads only its own setup
    if puzzle is None:
        puzzle, reason = seating_parse.parse(question, choices)
    if puzzle is None and reason in ("no_cast", "unknown_setup"):  # not a seating setup: a blood-relation text?
        puzzle, reason = kinship_parse.parse(question, choices)
    if puzzle is None and own != "unknown_setup":  # a contract family's setup it could not read to the end
        reason = own
    if puzzle is None:
        return None, None, reason
    proven = _module(puzzle["kind"]).possible_answers(puzzle)
    if len(proven) != 1:
        return None, puzzle, "not_unique" if proven else "no_solution"
    hits = [i for i, c in enumerate(choices) if c in proven]
    if len(hits) != 1:
        return None, puzzle, "answer_not_among_choices" if not hits else "answer_repeated"
    return hits[0], puzzle, None


def explain(puzzle: dict, answer: str) -> str:
    """The solver's step-by-step deduction of `answer` (a choice's text) for a structured puzzle of any family."""
    return _module(puzzle["kind"]).explain(puzzle, answer)


def problems(record: dict) -> list[str]:
    """Every reason a generated record is unsound (empty when it verifies)."""
    try:
        validate(record)
    except RecordError as exc:
        return [f"record:{exc.reason}"]
    puzzle = record.get("puzzle")
    if not isinstance(puzzle, dict) or puzzle.get("kind") not in KINDS:
        return ["no_puzzle"]
    mod, out = _module(puzzle["kind"]), []
    if record["source"] != f"puzzles/{puzzle['kind']}" or record["topic"] != TOPICS[puzzle["kind"]][0]:
        out.append("wrong_source_or_topic")
    if mod.render(puzzle) != record["question"]:
        out.append("text_not_from_clues")
    if len(record["choices"]) != 4:
        out.append("not_four_choices")
    proven = mod.possible_answers(puzzle)
    if len(proven) != 1:
        out.append("not_unique" if proven else "no_solution")
    if solve(record) != {record["answer"]}:
        out.append("answer_not_proven")
    if any(c in proven for i, c in enumerate(record["choices"]) if i != record["answer"]):
        out.append("distractor_possible")
    if official_length(record["question"], record["choices"]) >= max_chars(puzzle["kind"]):
        out.append("too_long")
    if len(record["explanation"].split()) >= MAX_EXPLANATION_WORDS:
        out.append("long_explanation")
    return out


def verify(record: dict) -> bool:
    """True when the solver proves the stored answer is the one correct choice and the record fits the limits."""
    return not problems(record)
