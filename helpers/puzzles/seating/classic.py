"""The first two seating kinds (a row facing north, a round table): hidden world, clues, text and deduction.

A puzzle is a plain dict: {"kind", "people", "facing", "clues", "question"}; clues and question are
lists like ["left_adj", "Ana", "Ben"] ("Ana sits immediately to Ben's left"). They are proven by the
shared seating solver (helpers.puzzles.seating.solver, on helpers.puzzles.csp): shared() states the
puzzle in its terms, and a round table fixes people[0] at seat 0, since rotations are the same
seating; it never sees the generator's hidden seating.
Left and right are each sitter's own: in a row facing north, left is towards seat 0; at a round table
facing the centre, a person's left is the next seat clockwise (seen from above), facing out it is
the previous one.
"""

from __future__ import annotations

import random
from functools import lru_cache

import numpy as np

from helpers.puzzles import blind, csp
from helpers.puzzles.seating import solver, unnamed
from helpers.puzzles.seating.solver import Model
from helpers.puzzles.seating.text import NO_ANSWER, cast, next_to_variants, where_texts

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
NUMS = ("", "one", "two", "three", "four", "five", "six", "seven")
# People per level: seatings to list are 5!=120 .. 7!=5040 for a row and (n-1)! = 24 .. 5040
# for a table, so the generator's clue masks over all of them stay in the low milliseconds.
LINEAR_SIZES = {1: (5,), 2: (6,), 3: (7,)}
CIRCULAR_SIZES = {1: (5, 6), 2: (6, 7), 3: (7, 8)}
# Clue-type weights per level: level 1 leans on fixed positions and neighbours, level 3 on
# negative and distance clues, which need more chaining to combine.
LINEAR_WEIGHTS = {
    1: {"pos": 2, "pos_right": 1, "end": 1, "left_adj": 2, "right_adj": 2, "adj": 1, "gap": 1, "between": 1},
    2: {"pos": 1, "pos_right": 1, "end": 1, "not_end": 1, "left_adj": 2, "right_adj": 2, "adj": 1,
        "not_adj": 1, "gap": 2, "between": 1, "kth_left": 1, "kth_right": 1, "left_of": 1},
    3: {"pos": 0.3, "pos_right": 0.3, "end": 1, "not_end": 1, "left_adj": 1, "right_adj": 1, "adj": 1,
        "not_adj": 2, "gap": 2, "between": 1, "kth_left": 1.5, "kth_right": 1.5, "left_of": 2},
}
CIRCULAR_WEIGHTS = {
    1: {"left_adj": 2, "right_adj": 2, "adj": 1, "between": 1, "opposite": 2},
    2: {"left_adj": 2, "right_adj": 2, "adj": 1, "between": 1, "opposite": 2, "not_adj": 1,
        "kth_left": 1, "kth_right": 1},
    3: {"left_adj": 1, "right_adj": 1, "adj": 1, "between": 1, "opposite": 1, "not_adj": 2,
        "kth_left": 1.5, "kth_right": 1.5},
}
# Clues after pruning (each one needed): fewer than MIN means a one-step puzzle; MAX bounds the text
# (7 clues of ~35 characters plus the cast is about 330 of the 400-character budget).
MIN_CLUES = {1: 2, 2: 3, 3: 3}
# Question and choices in under 340 characters, not the catalogue's 400: given names from many languages cost a
# small tokenizer ~2.6 characters a token (a 600-token BPE trained on these puzzles: 400 characters ~ 150 tokens).
MAX_CHARS = 340
MAX_CLUES = {1: 5, 2: 6, 3: 7}


def shared_clue(clue: list) -> list:
    """A clue in the shared solver's terms (helpers.puzzles.seating.solver.Model); the meaning is the same."""
    kind, args = clue[0], clue[1:]
    if kind in ("pos", "pos_right"):  # counted from the left (west) or right (east) end of a row facing north
        return ["pos", args[0], "west" if kind == "pos" else "east", args[1]]
    if kind in ("left_adj", "right_adj"):
        return [kind.removesuffix("_adj"), args[0], args[1], 1]
    if kind in ("kth_left", "kth_right"):
        return [kind.removeprefix("kth_"), *args]
    if kind == "opposite":
        return ["opp", *args]
    if kind in ("end", "not_end", "adj", "not_adj", "between", "gap", "left_of"):
        return list(clue)
    raise ValueError(f"unknown seating clue {clue!r}")


def shared_question(question: list) -> list:
    """The question in the shared solver's terms ("who" sits rel/k from x, "at_pos", "count_between")."""
    kind = question[0]
    if kind in ("at", "at_right"):
        return ["at_pos", "west" if kind == "at" else "east", question[1]]
    if kind == "count_q":
        return ["count_between", question[1], question[2]]
    if kind == "opposite_q":
        return ["who", "opp", question[1], 0]
    if kind == "where_q":
        return ["where", question[1], question[2] if len(question) > 2 else ""]
    rel = "left" if "left" in kind else "right"
    return ["who", rel, question[1], question[2] if kind.startswith("kth") else 1]


def shared(puzzle: dict) -> dict:
    """The puzzle in the shared solver's terms: same people, facing, clues and question."""
    question = puzzle.get("question")
    return {"kind": puzzle["kind"], "people": puzzle["people"], "facing": puzzle.get("facing", "centre"),
            "clues": [shared_clue(c) for c in puzzle.get("clues", [])],
            "question": shared_question(question) if question else None}


def _seat_rows(model: Model, table: csp.Table) -> np.ndarray:
    """A table's worlds as rows seat_of[person] in lexicographic order (read-only): the order conclusions list."""
    rows = np.stack([table.col(model.seat[p]) for p in model.puzzle["people"]], axis=1)
    rows = rows[np.lexsort(rows.T[::-1])]
    rows.setflags(write=False)
    return rows


def _table(model: Model, seats: np.ndarray) -> csp.Table:
    """Rows seat_of[person] as a table of the model's seat variables."""
    return csp.Table(model.problem, [model.seat[p] for p in model.puzzle["people"]], seats.astype(np.int16))


@lru_cache(maxsize=None)
def seatings(n: int, circular: bool) -> np.ndarray:
    """Every seating as rows seat_of[person] (read-only), as the shared solver lists them; a round table pins
    person 0 to seat 0."""
    model = Model({"kind": "seating_circular" if circular else "seating_linear", "people": [str(i) for i in range(n)]})
    return _seat_rows(model, csp.solve(model.problem, model.premises, keep=list(model.seat.values())))


def clue_mask(clue: list, puzzle: dict, seats: np.ndarray) -> np.ndarray:
    """The meaning of one clue: which rows of `seats` (seat_of[person]) satisfy it."""
    model = Model(shared(puzzle))
    return model.holds(shared_clue(clue), _table(model, seats))


def answers(question: list, puzzle: dict, seats: np.ndarray) -> list:
    """The question's answer in each seating row (a name, a count as text, or None when no one fits)."""
    model = Model(shared(dict(puzzle, question=question)))
    codes, names, _ = model.codes(_table(model, seats))
    return [names[c] if c >= 0 else None for c in codes.tolist()]


def consistent(puzzle: dict) -> np.ndarray:
    """The seatings (rows seat_of[person]) that satisfy all the clues, solved by the shared solver."""
    model = Model(shared(puzzle))
    cons = model.premises + [model.constraint(c) for c in model.puzzle["clues"]]
    return _seat_rows(model, csp.solve(model.problem, cons, keep=list(model.seat.values())))


def possible_answers(puzzle: dict) -> set:
    """The set of answers over all seatings consistent with the clues (a proof needs exactly one)."""
    return {None if a == NO_ANSWER else a for a in solver.possible_answers(shared(puzzle))}


def work(puzzle: dict) -> dict:
    """The solver's work: seatings before any clue and after each clue in order (log2), and the clues it needs."""
    _, counts = solver.trace(shared(puzzle))
    after = [round(float(np.log2(max(c, 1))), 3) for c in counts[1:]]
    return {"steps": len(puzzle["clues"]), "log2_space": round(float(np.log2(counts[0])), 3), "log2_after": after}


def _ord(k: int) -> str:
    return ORDINALS[k - 1]


INTROS = {
    ("seating_linear", "centre"): (
        "{names} sit in a row, all facing north; left and right are their own.",
        "{names} sit in a straight row facing north, in some order; left/right are their own.",
        "{names} are seated in one row, all facing north. Left and right are each sitter's own.",
        "In a row, all facing north, sit {names}; left and right are their own."),
    ("seating_circular", "centre"): (
        "{names} sit at a round table facing the centre; left and right are their own.",
        "{names} sit round a circular table, all facing in; left/right are their own.",
        "{names} are seated at a round table, facing the centre. Left and right are each sitter's own.",
        "Round a table, all facing the centre, sit {names}; left and right are their own."),
    ("seating_circular", "out"): (
        "{names} sit at a round table facing away from the centre; left and right are their own.",
        "{names} sit round a circular table, all facing outward; left/right are their own.",
        "{names} are seated at a round table, facing away from the centre. Left and right are each sitter's own.",
        "Round a table, all facing outward, sit {names}; left and right are their own."),
}


def intro_variants(puzzle: dict) -> list[str]:
    """Every phrasing of the setup sentence."""
    people = puzzle["people"]
    names = ", ".join(people[:-1]) + " and " + people[-1]
    return [t.format(names=names) for t in INTROS[(puzzle["kind"], puzzle.get("facing", "centre"))]]


def clue_variants(clue: list) -> list[str]:
    """Every phrasing of one clue as an English sentence (the puzzle stores which one it uses)."""
    kind, x = clue[0], clue[1]
    if kind in ("pos", "pos_right"):
        side, k = ("left" if kind == "pos" else "right"), clue[2]
        if k == 1:
            return [f"{x} sits at the {side} end.", f"{x} is at the {side} end of the row.",
                    f"{x} takes the {side}most seat."]
        return [f"{x} sits {_ord(k)} from the {side}.", f"{x} is {_ord(k)} from the {side} end.",
                f"{x} takes the {_ord(k)} seat from the {side}."]
    if kind == "end":
        return [f"{x} sits at an end.", f"{x} is at one end of the row.", f"{x} sits at one of the two ends."]
    if kind == "not_end":
        return [f"{x} does not sit at an end.", f"{x} is at neither end.", f"{x} is not at either end of the row."]
    y = clue[2]
    if kind in ("left_adj", "right_adj"):
        side = kind.removesuffix("_adj")
        return [f"{x} sits immediately to {y}'s {side}.", f"{x} is {y}'s {side} neighbour.",
                f"{x} sits just to the {side} of {y}."]
    text = {
        "left_of": [f"{x} sits somewhere to {y}'s left.", f"{x} is somewhere left of {y}.",
                    f"{y} sits somewhere to {x}'s right."],
        **next_to_variants(x, y),
        "opposite": [f"{x} sits opposite {y}.", f"{x} and {y} sit opposite each other.",
                     f"{x} is seated directly across from {y}."],
    }
    if kind in text:
        return text[kind]
    if kind == "between":
        z = clue[3]
        return [f"{x} sits between {y} and {z}, next to both.", f"{x} has {y} on one side and {z} on the other.",
                f"{x} sits next to both {y} and {z}."]
    if kind in ("kth_left", "kth_right"):
        side, k = ("left" if kind == "kth_left" else "right"), clue[3]
        return [f"{x} sits {_ord(k)} to {y}'s {side}.", f"{x} is {_ord(k)} to the {side} of {y}.",
                f"{x} sits {NUMS[k]} seats to {y}'s {side}."]
    if kind == "gap":
        k = clue[3]
        folk, are = ("person", "is") if k == 1 else ("people", "are")
        return [f"Exactly {k} {'person sits' if k == 1 else 'people sit'} between {x} and {y}.",
                f"{x} and {y} have exactly {k} {folk} between them.",
                f"There {are} exactly {k} {folk} between {x} and {y}."]
    raise ValueError(f"unknown seating clue {clue!r}")


def render_clue(clue: list, variant: int = 0) -> str:
    """One clue as an English sentence (its first phrasing unless told)."""
    return clue_variants(clue)[variant]


def question_variants(question: list) -> list[str]:
    """Every phrasing of the question sentence."""
    kind = question[0]
    if kind in ("at", "at_right"):
        side, k = ("left" if kind == "at" else "right"), question[1]
        if k == 1:
            return [f"Who sits at the {side} end?", f"Who is at the {side} end of the row?",
                    f"Who takes the {side}most seat?"]
        return [f"Who sits {_ord(k)} from the {side}?", f"Who is {_ord(k)} from the {side} end?",
                f"Who takes the {_ord(k)} seat from the {side}?"]
    x = question[1]
    if kind == "count_q":
        y = question[2]
        return [f"How many people sit between {x} and {y}?", f"How many people are seated between {x} and {y}?",
                f"How many people are there between {x} and {y}?"]
    if kind == "opposite_q":
        return [f"Who sits opposite {x}?", f"Who is seated directly across from {x}?", f"Who is opposite {x}?"]
    if kind == "where_q" and len(question) > 2:
        y = question[2]
        return [f"Where does {x} sit relative to {y}?", f"Where is {x} seated in relation to {y}?",
                f"Which seat does {x} take, counted from {y}?"]
    if kind == "where_q":
        return [f"Where does {x} sit?", f"Where is {x} seated?", f"Which seat does {x} take?"]
    side = "left" if "left" in kind else "right"
    if kind.startswith("kth"):
        k = question[2]
        return [f"Who sits {_ord(k)} to {x}'s {side}?", f"Who is {_ord(k)} to the {side} of {x}?",
                f"Who sits {NUMS[k]} seats to {x}'s {side}?"]
    return [f"Who sits immediately to {x}'s {side}?", f"Who is {x}'s {side} neighbour?",
            f"Who sits just to the {side} of {x}?"]


def render_question(question: list, variant: int = 0) -> str:
    """The question sentence (its first phrasing unless told)."""
    return question_variants(question)[variant]


def render(puzzle: dict) -> str:
    """The full question text, rendered only from the structured puzzle (first phrasings where none is stored)."""
    clues = puzzle["clues"]
    phrasing = puzzle.get("phrasing") or [0] * len(clues)
    return " ".join([intro_variants(puzzle)[puzzle.get("intro", 0)]]
                    + [render_clue(c, v) for c, v in zip(clues, phrasing)]
                    + [render_question(puzzle["question"], puzzle.get("q_phrasing", 0))])


def answer_sentence(question: list, value: str) -> str:
    """The answer as a sentence, for the explanation."""
    kind = question[0]
    if kind == "where_q":
        return f"{question[1]} sits {value[0].lower()}{value[1:]}."
    if kind == "count_q":
        k = int(value)
        who = "No one sits" if k == 0 else ("1 person sits" if k == 1 else f"{k} people sit")
        return f"{who} between {question[1]} and {question[2]}."
    return value + render_question(question)[len("Who"):-1] + "."


def _line(puzzle: dict, seat_of: np.ndarray) -> str:
    """One seating as text: left to right for a row; for a table, leftwards from people[0]."""
    people, n = puzzle["people"], len(seat_of)
    by_seat = sorted(range(n), key=lambda i: int(seat_of[i]))
    if puzzle["kind"] == "seating_circular" and puzzle.get("facing", "centre") == "out":
        by_seat = [by_seat[0]] + by_seat[1:][::-1]
    return ", ".join(people[i] for i in by_seat)


def deduction(puzzle: dict) -> list[tuple[int, int]]:
    """The solver's steps: clues taken strongest first, each as (clue index, seatings left after it)."""
    n, circular = len(puzzle["people"]), puzzle["kind"] == "seating_circular"
    model = Model(shared(puzzle))
    table = _table(model, seatings(n, circular))
    masks = [model.holds(clue, table) for clue in model.puzzle["clues"]]
    keep, left, steps = np.ones(len(table.rows), dtype=bool), set(range(len(masks))), []
    while left:
        i = min(sorted(left), key=lambda j: int((keep & masks[j]).sum()))
        keep &= masks[i]
        steps.append((i, int(keep.sum())))
        left.remove(i)
    return steps


def _trace(puzzle: dict, full: bool) -> str:
    """The deduction as text: each clue (its words, or its number) and the seatings it leaves."""
    n, circular = len(puzzle["people"]), puzzle["kind"] == "seating_circular"
    parts = []
    phrasing = puzzle.get("phrasing") or [0] * len(puzzle["clues"])
    for i, count in deduction(puzzle):
        said = render_clue(puzzle["clues"][i], phrasing[i]).rstrip(".") if full else f"clue {i + 1}"
        parts.append(f"{said} -> {count:,}")
    return f"Of {len(seatings(n, circular)):,} seatings: " + "; ".join(parts) + "."


def explain(puzzle: dict, value: str) -> str:
    """The solving steps (clues strongest first, seatings left after each) and the seatings that remain (< 100 words)."""
    ending = _conclusion(puzzle, value)
    text = f"{_trace(puzzle, True)} {ending}"
    return text if len(text.split()) < 90 else f"{_trace(puzzle, False)} {ending}"


def _conclusion(puzzle: dict, value: str) -> str:
    """The seatings that fit every clue and the answer they share."""
    worlds = consistent(puzzle)
    order = "left to right" if puzzle["kind"] == "seating_linear" else f"going left from {puzzle['people'][0]}"
    count, clues = len(worlds), len(puzzle["clues"])
    sentence = answer_sentence(puzzle["question"], value)
    if count == 1:
        return f"Only one seating fits all {clues} clues ({order}): {_line(puzzle, worlds[0])}. {sentence}"
    shown = "; ".join(_line(puzzle, p) for p in worlds[:2])
    lead = "Two seatings fit" if count == 2 else f"{count} seatings fit"
    sample = "" if count == 2 else ", for example"
    sentence = sentence[0].lower() + sentence[1:] if sentence.startswith("No one") else sentence
    return f"{lead} all {clues} clues{sample} ({order}): {shown}. In each, {sentence}"


def true_clues(seat_of: tuple, people: list[str], circular: bool, facing: str) -> list[list]:
    """Every candidate clue true in the hidden seating, built from seat numbers directly."""
    n = len(people)
    at = {s: people[i] for i, s in enumerate(seat_of)}
    out: list[list] = []
    d = 1 if facing == "centre" else -1
    for i, name in enumerate(people):
        s = seat_of[i]
        if not circular:
            # counted from the nearer end only ("fifth from the right" of five is just the left end)
            out += [c for c in (["pos", name, s + 1], ["pos_right", name, n - s]) if 2 * c[2] <= n + 1]
            out.append(["end", name] if s in (0, n - 1) else ["not_end", name])
        for k in (1, 2, 3):
            # the person k seats to `name`'s left / right
            left = (s + d * k) % n if circular else s - k
            right = (s - d * k) % n if circular else s + k
            if k == 1 and (circular or 0 <= left and right < n):
                out.append(["between", name, at[left], at[right]])
            if circular and 2 * k >= n:
                continue
            for kind, seat in (("left", left), ("right", right)):
                if 0 <= seat < n:
                    out.append([f"{kind}_adj", at[seat], name] if k == 1 else [f"kth_{kind}", at[seat], name, k])
        for j, other in enumerate(people):
            if j == i:
                continue
            gap = abs(seat_of[i] - seat_of[j])
            ring = min(gap, n - gap)
            near = ring == 1 if circular else gap == 1
            if j > i:
                out.append(["adj", name, other] if near else ["not_adj", name, other])
                if circular and n % 2 == 0 and gap == n // 2:
                    out.append(["opposite", name, other])
                if not circular and 2 <= gap <= 4:
                    out.append(["gap", name, other, gap - 1])
            if not circular and seat_of[i] < seat_of[j] - 1:
                out.append(["left_of", name, other])
    return out


def question_forms(circular: bool, level: int) -> tuple[str, ...]:
    """The question forms a kind asks at a level: who sits beside / k seats from X, who sits at a position, where X
    sits (a row: which seat; a table: relative to Y), how many sit between X and Y (a row), who sits opposite X (an
    even table)."""
    if circular:
        return ("side", "opposite", "where") + (("kth",) if level >= 2 else ())
    return ("side", "at", "where") + (("kth", "count") if level >= 2 else ())


def _questions(people: list[str], circular: bool, level: int, form: str, rng: random.Random) -> list:
    """Candidate questions of one form in random order (some may have no answer in the hidden seating)."""
    n = len(people)
    if form == "side":
        pool = [[q, x] for q in ("left_q", "right_q") for x in people]
    elif form == "kth":
        ks = [k for k in ((2, 3) if level == 3 else (2,)) if not circular or 2 * k < n]
        pool = [[q, x, k] for q in ("kth_left_q", "kth_right_q") for x in people for k in ks]
    elif form == "at":
        pool = [[q, k] for q in ("at", "at_right") for k in range(1, (n + 1) // 2 + 1)]
    elif form == "count":
        pool = [["count_q", x, y] for x in people for y in people if x != y]
    elif form == "where":
        pool = [["where_q", x, y] for x in people for y in people if x != y] if circular else \
            [["where_q", x] for x in people]
    else:
        pool = [["opposite_q", x] for x in people]
    return rng.sample(pool, len(pool))


def count_options(truth: int, rank: int, top: int) -> list[int] | None:
    """Four consecutive counts within 0..top with the true one at `rank` (0 = smallest), or None when they do
    not fit: drawing the rank uniformly leaves no "middle number" or "largest number" prior."""
    low = truth - rank
    return list(range(low, low + 4)) if low >= 0 and low + 3 <= top else None


def _weighted_order(items: list[list], weights: dict, rng: random.Random) -> list[list]:
    """Shuffle so heavier clue types tend to come first (Efraimidis-Spirakis keys)."""
    keyed = [(rng.random() ** (1.0 / weights[c[0]]), c) for c in items if weights.get(c[0], 0) > 0]
    return [c for _, c in sorted(keyed, key=lambda kc: -kc[0])]


def build(rng: random.Random, names: list[str], *, circular: bool, level: int, stats: dict,
          form: str | None = None) -> dict | None:
    """One proven puzzle as {"puzzle", "answer", "distractors"}, or None with stats[reason] += 1. The question
    form is drawn first, uniformly over question_forms() (or given), so forms are equally common."""
    form = form or rng.choice(question_forms(circular, level))
    sizes = (CIRCULAR_SIZES if circular else LINEAR_SIZES)[level]
    n = rng.choice([s for s in sizes if form != "opposite" or s % 2 == 0] or sizes)
    people = cast(rng, names, n)
    facing = "out" if circular and level == 3 and rng.random() < 1 / 3 else "centre"
    kind = "seating_circular" if circular else "seating_linear"
    seat_of = rng.sample(range(n), n)
    if circular:  # pin people[0] to seat 0 (rotations are the same seating), as the solver does
        seat_of = [(s - seat_of[0]) % n for s in seat_of]
    hidden = np.array([seat_of], dtype=np.int8)
    puzzle = {"kind": kind, "people": people, "facing": facing, "clues": [], "question": None}
    truth, rank = None, rng.randrange(4)
    for question in _questions(people, circular, level, form, rng):
        # e.g. "who sits to X's left" has no answer when X sits at the left end: ask something else
        truth = answers(question, puzzle, hidden)[0]
        if truth is not None and (question[0] != "count_q" or count_options(int(truth), rank, n - 2)):
            break
        truth = None
    if truth is None:
        stats["no_answer_in_world"] = stats.get("no_answer_in_world", 0) + 1
        return None
    puzzle["question"] = question
    model = Model(shared(puzzle))
    seats, world = _table(model, seatings(n, circular)), _table(model, hidden)
    codes, _, _ = model.codes(seats)
    candidates = true_clues(tuple(seat_of), people, circular, facing)
    weights = (CIRCULAR_WEIGHTS if circular else LINEAR_WEIGHTS)[level]
    keep = np.ones(len(seats.rows), dtype=bool)
    chosen: list[tuple[list, np.ndarray]] = []
    for clue in _weighted_order(candidates, weights, rng):
        mask = model.holds(shared_clue(clue), seats)
        if not model.holds(shared_clue(clue), world)[0]:  # generator and solver disagree on a clue: never ship it
            raise AssertionError(f"clue {clue} is false in the seating it was read from")
        if np.unique(codes[mask]).size == 1:
            continue  # gives the answer away on its own (e.g. "X sits to Y's right" for "who is left of X")
        narrowed = keep & mask
        if narrowed.sum() == keep.sum():
            continue  # adds nothing
        chosen.append((clue, mask))
        keep = narrowed
        if np.unique(codes[keep]).size == 1 or len(chosen) >= MAX_CLUES[level]:
            break
    if np.unique(codes[keep]).size != 1:
        stats["undetermined"] = stats.get("undetermined", 0) + 1
        return None
    clues = _prune(chosen, codes, rng)
    if len(clues) < MIN_CLUES[level]:
        stats["too_easy"] = stats.get("too_easy", 0) + 1
        return None
    rng.shuffle(clues)
    puzzle.update(clues=clues, intro=rng.randrange(len(INTROS[(kind, facing)])),
                  phrasing=[rng.randrange(len(clue_variants(c))) for c in clues],
                  q_phrasing=rng.randrange(len(question_variants(question))))
    text = render(puzzle)
    if not unnamed.keep(kind, level, form, truth, blind.unmentioned([truth, *_others(question, truth, people)], text),
                        rng):
        stats["key_unnamed"] = stats.get("key_unnamed", 0) + 1
        return None
    distractors = _distractors(question, truth, people, seat_of, circular, rank, rng, text=text, level=level, form=form)
    if len(set(distractors) | {truth}) != 4:  # too few mentioned people to go with at most one unmentioned
        stats["few_choices"] = stats.get("few_choices", 0) + 1
        return None
    if len(render(puzzle)) + sum(len(c) + 3 for c in [truth, *distractors]) >= MAX_CHARS:
        stats["too_long"] = stats.get("too_long", 0) + 1
        return None
    return {"puzzle": puzzle, "answer": truth, "distractors": distractors}


def _prune(chosen: list[tuple[list, np.ndarray]], codes: np.ndarray, rng: random.Random) -> list[list]:
    """Drop clues the answer does not need (shorter text, every clue matters)."""
    kept = list(chosen)
    for item in rng.sample(chosen, len(chosen)):
        trial = [c for c in kept if c is not item]
        if not trial:
            continue
        keep = np.logical_and.reduce([m for _, m in trial])
        if np.unique(codes[keep]).size == 1:
            kept = trial
    return [c for c, _ in kept]


def _others(question: list, truth: str, people: list[str]) -> list[str]:
    """The people a person question may offer as wrong: all but the key and the person asked about."""
    subject = question[1] if isinstance(question[1], str) else None
    return [p for p in people if p not in (truth, subject)]


def _distractors(question: list, truth: str, people: list[str], seat_of: list[int], circular: bool, rank: int,
                 rng: random.Random, *, text: str, level: int, form: str) -> list[str]:
    """Three wrong choices: the other counts of a run with the key at `rank`, or other people, those seated nearer
    the key likelier, drawn by blind.balanced with the people the text leaves unmentioned flagged (seating.unnamed)."""
    n = len(people)
    if question[0] == "count_q":
        return [str(v) for v in count_options(int(truth), rank, n - 2) if str(v) != truth]
    if question[0] == "where_q":  # any other seat: the key's seat is uniform, so no answer text is likelier
        shared_puzzle = {"kind": "seating_circular" if circular else "seating_linear", "people": people,
                         "question": shared_question(question)}
        texts = where_texts(shared_puzzle)[1 if circular else 0:]
        return rng.sample([t for t in texts if t != truth], 3)
    t = seat_of[people.index(truth)]
    ring = (lambda s: min(abs(s - t), n - abs(s - t))) if circular else (lambda s: abs(s - t))
    others = _others(question, truth, people)
    near = {p: 1 / ring(seat_of[people.index(p)]) for p in others}  # plausible: a neighbour of the key twice as likely
    return unnamed.distractors(truth, others, text, rng, kind="seating_circular" if circular else "seating_linear",
                               level=level, form=form, weights=near)

