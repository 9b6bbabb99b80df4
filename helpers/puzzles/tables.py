"""Round-table puzzles the organisers' examples describe: people with attributes, and people facing both ways.

Two kinds, one engine:
- "seating_attributes": 4-5 people at a round table, all facing the centre, each with a nationality and a drink
  (every value held by exactly one person). Clues mix people and attributes ("the Italian sits second to the left
  of the tea drinker", "Ana does not drink coffee"); the question asks for an attribute or a person.
- "seating_mixed_facing": 6-8 people at a round table, some facing the centre and some facing outward (half and
  half at level 3). Left and right are each sitter's own, so "X sits third to the left of Y" depends on Y's facing;
  a facing is stated for some people and inferred for the rest.

Conventions (stated in every question): seats are numbered clockwise seen from above; a person facing the centre
has their left at the next seat clockwise, a person facing outward at the next seat anticlockwise; "k-th to the
left of Y" counts k seats from Y towards Y's own left; "opposite" only at an even table.

The solver enumerates every world (seating x facings x attribute assignments, one person pinned to seat 0 since
rotations are the same seating: 4! x 5! x 5! = 345,600 worlds for five people with two attributes; 7! x 70 =
352,800 for eight people facing half and half) and keeps those every clue allows; it never sees the hidden world.
An entity is a person ("p", i) or an attribute value ("a", k, j): attribute k's value j.
"""

from __future__ import annotations

import itertools
import math
import random
from functools import lru_cache

import numpy as np

NATIONALITIES = ("Indian", "Italian", "German", "Briton", "French", "Japanese")
DRINKS = ("tea", "coffee", "milk", "juice", "water", "cocoa")
ATTRIBUTES = (("nationality", NATIONALITIES), ("drink", DRINKS))
SIZES = {"seating_attributes": {1: 4, 2: 4, 3: 5}, "seating_mixed_facing": {1: 6, 2: 7, 3: 8}}
# Clues left after pruning (each one needed): more than MAX does not fit 400 characters; fewer than MIN is a
# one-step puzzle. Candidate clues are drawn strong kinds first (a position fixes more than a "not next to").
MAX_CLUES = {1: 4, 2: 5, 3: 7}
MIN_CLUES = {1: 2, 2: 3, 3: 4}
WEIGHTS = {"left": 3, "right": 3, "same": 3, "opposite": 2, "adj": 2, "faces": 2, "same_facing": 1, "not_adj": 1,
           "not_same": 1}
MAX_TRIED = 24  # clues taken before pruning; the pruned set is what the question states
ORDINALS = ("", "immediately", "second", "third")


# ---------------------------------------------------------------- the worlds
@lru_cache(maxsize=None)
def worlds(kind: str, n: int) -> dict[str, np.ndarray]:
    """Every world of a kind: "seat" (W x n seat of each person), "dir" (W x n: +1 centre, -1 out), "attr0/1"."""
    seatings = np.array([(0,) + p for p in itertools.permutations(range(1, n))], dtype=np.int8)
    if kind == "seating_mixed_facing":
        # eight people sit half and half (70 facings); fewer may face any way (2^n facings)
        facings = np.array([f for f in itertools.product((1, -1), repeat=n)
                            if n < 8 or sum(x == 1 for x in f) == n // 2], dtype=np.int8)
        s_idx, f_idx = np.meshgrid(np.arange(len(seatings)), np.arange(len(facings)), indexing="ij")
        out = {"seat": seatings[s_idx.ravel()], "dir": facings[f_idx.ravel()]}
    else:
        perms = np.array(list(itertools.permutations(range(n))), dtype=np.int8)
        s, a, b = (g.ravel() for g in np.meshgrid(np.arange(len(seatings)), np.arange(len(perms)),
                                                   np.arange(len(perms)), indexing="ij"))
        out = {"seat": seatings[s], "dir": np.ones((len(s), n), dtype=np.int8), "attr0": perms[a], "attr1": perms[b]}
    out = with_entities(out, n)
    for key in out:
        out[key].setflags(write=False)
    return out


def with_entities(w: dict, n: int) -> dict:
    """Add per-entity columns: "who" (the person an entity is), "pos" (their seat), "edir" (their facing).

    Entities: people 0..n-1, then each attribute's values (attribute k value j is column n + k*n + j).
    """
    people = np.broadcast_to(np.arange(n, dtype=np.int8), w["seat"].shape)
    owners = [np.argsort(w[f"attr{k}"], axis=1).astype(np.int8) for k in range(2) if f"attr{k}" in w]
    who = np.concatenate([people, *owners], axis=1)
    return {**w, "who": who, "pos": np.take_along_axis(w["seat"], who, axis=1),
            "edir": np.take_along_axis(w["dir"], who, axis=1)}


def _col(entity: list, n: int) -> int:
    """The entity's column in "who"/"pos"/"edir"."""
    return entity[1] if entity[0] == "p" else n + entity[1] * n + entity[2]


def _holder(w: dict, entity: list) -> np.ndarray:
    """Per world, the person index an entity names."""
    return w["who"][:, _col(entity, w["seat"].shape[1])]


def _pick(table: np.ndarray, who: np.ndarray) -> np.ndarray:
    return table[np.arange(len(table)), who].astype(np.int16)


def clue_mask(clue: list, puzzle: dict, w: dict) -> np.ndarray:
    """Which worlds satisfy one clue."""
    n, kind = len(puzzle["people"]), clue[0]
    ia = _col(clue[1], n)
    if kind == "faces":
        return w["edir"][:, ia] == (1 if clue[2] == "centre" else -1)
    ib = _col(clue[2], n)
    if kind in ("same", "not_same"):
        same = w["who"][:, ia] == w["who"][:, ib]
        return same if kind == "same" else ~same
    if kind == "same_facing":
        return w["edir"][:, ia] == w["edir"][:, ib]
    a, b = w["who"][:, ia], w["who"][:, ib]
    pa, pb = w["pos"][:, ia].astype(np.int16), w["pos"][:, ib].astype(np.int16)
    if kind in ("left", "right"):
        sign = 1 if kind == "left" else -1
        return pa == (pb + sign * clue[3] * w["edir"][:, ib]) % n
    gap = (pa - pb) % n
    if kind == "adj":
        return (gap == 1) | (gap == n - 1)
    if kind == "not_adj":
        return (gap != 1) & (gap != n - 1) & (a != b)
    if kind == "opposite":
        return gap == n // 2
    raise ValueError(f"unknown clue {clue!r}")


def answer_codes(question: list, puzzle: dict, w: dict) -> tuple[np.ndarray, list[str]]:
    """The question's answer in every world, as codes into a list of answer texts (numpy all the way)."""
    n, kind = len(puzzle["people"]), question[0]
    attr_labels = [[ATTRIBUTES[k][1][j] for j in puzzle["values"][k]] for k in range(len(puzzle["values"]))]
    if kind == "attr_of":
        return _pick(w[f"attr{question[2]}"], _holder(w, question[1])), attr_labels[question[2]]
    if kind == "who_is":
        return _holder(w, question[1]), puzzle["people"]
    b = _holder(w, question[1])
    sign = {"left_q": 1, "right_q": -1, "opposite_q": 0}[kind]
    seat = (_pick(w["seat"], b) + (sign * question[2] * _pick(w["dir"], b) if sign else n // 2)) % n
    person = np.argmax(w["seat"] == seat[:, None], axis=1)
    if len(question) > 3:  # ... and that person's attribute
        return _pick(w[f"attr{question[3]}"], person), attr_labels[question[3]]
    return person, puzzle["people"]


def answers(question: list, puzzle: dict, w: dict) -> list[str]:
    """The question's answer in every world."""
    codes, labels = answer_codes(question, puzzle, w)
    return [labels[c] for c in codes.tolist()]


def _settled(codes: np.ndarray) -> bool:
    """Whether every world left gives one answer."""
    return codes.size > 0 and codes.min() == codes.max()


def consistent(puzzle: dict) -> np.ndarray:
    """The worlds (as a boolean mask over worlds()) that every clue allows."""
    w = worlds(puzzle["kind"], len(puzzle["people"]))
    keep = np.ones(len(w["seat"]), dtype=bool)
    for clue in puzzle["clues"]:
        keep &= clue_mask(clue, puzzle, w)
    return keep


def possible_answers(puzzle: dict) -> set:
    """Every answer some world allowed by the clues gives (a proof needs exactly one)."""
    w = worlds(puzzle["kind"], len(puzzle["people"]))
    keep = consistent(puzzle)
    sub = {k: v[keep] for k, v in w.items()}
    return set(answers(puzzle["question"], puzzle, sub))


def work(puzzle: dict) -> dict:
    """Worlds before any clue and after each (log2), and the clues the proof needs."""
    w = worlds(puzzle["kind"], len(puzzle["people"]))
    keep, after = np.ones(len(w["seat"]), dtype=bool), []
    for clue in puzzle["clues"]:
        keep &= clue_mask(clue, puzzle, w)
        after.append(round(math.log2(max(int(keep.sum()), 1)), 3))
    return {"steps": len(puzzle["clues"]), "log2_space": round(math.log2(len(w["seat"])), 3), "log2_after": after}


# ---------------------------------------------------------------- text
def _name(entity: list, puzzle: dict) -> str:
    if entity[0] == "p":
        return puzzle["people"][entity[1]]
    value = ATTRIBUTES[entity[1]][1][puzzle["values"][entity[1]][entity[2]]]
    return f"the {value}" if entity[1] == 0 else f"the {value} drinker"


def _side(k: int, side: str) -> str:
    return f"immediately to the {side} of" if k == 1 else f"{ORDINALS[k]} to the {side} of"


TEMPLATES = {
    "left": ("{a} sits {side} {b}.", "{A} is {nth} to {b}'s left."),
    "right": ("{a} sits {side} {b}.", "{A} is {nth} to {b}'s right."),
    "adj": ("{a} sits next to {b}.", "{A} and {b} are neighbours.", "{A} sits beside {b}."),
    "not_adj": ("{a} is not next to {b}.", "{A} and {b} are not neighbours."),
    "opposite": ("{a} sits opposite {b}.", "{A} faces {b} across the table."),
    "same": ("{a} is {b}.", "{b} is {a}."),
    "not_same": ("{a} is not {b}.", "{b} is not {a}."),
    "faces": ("{a} faces {b}.", "{A} sits facing {b}."),
    "same_facing": ("{a} and {b} face the same way.", "{A} faces the way {b} does."),
}


def render_clue(clue: list, style: int, puzzle: dict) -> str:
    """One clue in the words of the style chosen for it."""
    kind = clue[0]
    if kind in ("same", "not_same") and clue[2][0] == "p":  # a person first: "Eli drinks water", "Eli is the German"
        clue = [kind, clue[2], clue[1]]
    a = _name(clue[1], puzzle)
    if kind == "opposite" and puzzle["kind"] == "seating_mixed_facing":
        return f"{a} sits opposite {_name(clue[2], puzzle)}." if style % 2 == 0 else \
            f"{a} and {_name(clue[2], puzzle)} sit opposite each other."
    if kind == "faces":
        b = "the centre" if clue[2] == "centre" else "outward"
        b = b if style == 0 else ("the middle" if clue[2] == "centre" else "away from the table")
    elif kind in ("same", "not_same") and clue[2][0] == "a" and clue[2][1] == 1:
        b = _name(clue[2], puzzle).removeprefix("the ").replace(" drinker", "")
        text = {"same": (f"{a} drinks {b}.", f"{a} has {b}."), "not_same": (f"{a} does not drink {b}.",
                                                                              f"{a} has no {b}.")}[kind][style % 2]
        return text[0].upper() + text[1:]
    else:
        b = _name(clue[2], puzzle)
    templates = TEMPLATES[kind]
    side = _side(clue[3], kind) if kind in ("left", "right") else ""
    nth = (ORDINALS[clue[3]] if clue[3] > 1 else "immediately") if kind in ("left", "right") else ""
    text = templates[style % len(templates)].format(a=a, A=a, b=b, side=side, nth=nth)
    return text[0].upper() + text[1:]


def render_question(question: list, puzzle: dict) -> str:
    """The question sentence."""
    kind = question[0]
    who = _name(question[1], puzzle)
    if kind == "attr_of":
        return f"What does {who} drink?" if question[2] == 1 else f"What is {who}'s nationality?"
    if kind == "who_is":
        return f"Who is {who}?"
    where = f"opposite {who}" if kind == "opposite_q" else _side(question[2], "left" if kind == "left_q" else "right") \
        + f" {who}"
    if len(question) > 3:
        return f"What does the person {where} drink?" if question[3] == 1 else \
            f"What is the nationality of the person {where}?"
    return f"Who sits {where}?"


def render(puzzle: dict) -> str:
    """The question text, from the structured puzzle only."""
    people, n = puzzle["people"], len(puzzle["people"])
    cast = ", ".join(people[:-1]) + f" and {people[-1]}"
    if puzzle["kind"] == "seating_attributes":
        head = f"{cast} sit round a table facing in, each with a different nationality and drink."
    else:
        split = "four facing in and four out" if n == 8 else "some facing in, some out"
        head = f"{cast} sit round a table, {split}; left and right are each one's own."
    clues = " ".join(render_clue(c, s, puzzle) for c, s in zip(puzzle["clues"], puzzle["styles"]))
    return f"{head} {clues} {render_question(puzzle['question'], puzzle)}"


def deduction(puzzle: dict) -> list[tuple[int, int]]:
    """The solver's steps: clues strongest first, each as (clue index, worlds left after it)."""
    w = worlds(puzzle["kind"], len(puzzle["people"]))
    masks = [clue_mask(c, puzzle, w) for c in puzzle["clues"]]
    keep, left, steps = np.ones(len(w["seat"]), dtype=bool), set(range(len(masks))), []
    while left:
        i = min(sorted(left), key=lambda j: int((keep & masks[j]).sum()))
        keep &= masks[i]
        steps.append((i, int(keep.sum())))
        left.remove(i)
    return steps


def explain(puzzle: dict, value: str) -> str:
    """The deduction: clues strongest first with the arrangements each leaves, then the answer (< 100 words)."""
    total = len(worlds(puzzle["kind"], len(puzzle["people"]))["seat"])
    steps = deduction(puzzle)
    ask = render_question(puzzle["question"], puzzle)
    tail = f"Every arrangement left gives the same answer to \"{ask}\": {value}."

    def trace(full: bool) -> str:
        parts = [(render_clue(puzzle["clues"][i], puzzle["styles"][i], puzzle).rstrip(".") if full
                  else f"clue {i + 1}") + f" -> {count:,}" for i, count in steps]
        return f"Of {total:,} arrangements: " + "; ".join(parts) + "."
    text = f"{trace(True)} {tail}"
    return text if len(text.split()) < 95 else f"{trace(False)} {tail}"


# ---------------------------------------------------------------- the generator
def _entities(puzzle: dict) -> list[list]:
    n = len(puzzle["people"])
    out = [["p", i] for i in range(n)]
    if puzzle["kind"] == "seating_attributes":
        out += [["a", k, j] for k in range(2) for j in range(n)]
    return out


def true_clues(puzzle: dict, hidden: dict, rng: random.Random) -> list[list]:
    """Candidate clues true in the hidden world (checked against it by the solver's own masks)."""
    n, ents = len(puzzle["people"]), _entities(puzzle)
    pairs = [(a, b) for a in ents for b in ents if a != b]
    cands: list[list] = []
    for a, b in pairs:
        if a[0] == "a" and b[0] == "a" and a[1] == b[1]:
            continue  # two values of one attribute: always different people
        cands += [["same", a, b], ["not_same", a, b]] if (a[0], b[0]) != ("p", "p") else []
        cands += [["adj", a, b], ["not_adj", a, b]] + [[s, a, b, k] for s in ("left", "right") for k in (1, 2, 3)
                                                       if k < n - 1]
        if n % 2 == 0:
            cands.append(["opposite", a, b])
        if puzzle["kind"] == "seating_mixed_facing":
            cands.append(["same_facing", a, b])
    if puzzle["kind"] == "seating_mixed_facing":
        cands += [["faces", ["p", i], f] for i in range(n) for f in ("centre", "out")]
    truth = [c for c in cands if clue_mask(c, puzzle, hidden)[0]]
    rng.shuffle(truth)
    return truth


def _questions(puzzle: dict, level: int) -> list[list]:
    n, ents = len(puzzle["people"]), _entities(puzzle)
    if puzzle["kind"] == "seating_attributes":
        out = [["attr_of", e, k] for e in ents for k in range(2) if not (e[0] == "a" and e[1] == k)]
        out += [["who_is", e] for e in ents if e[0] == "a"]
        out += [["left_q", e, k, a] for e in ents for k in (1, 2) for a in range(2) if level >= 2]
        return out
    out = [[q, ["p", i], k] for i in range(n) for q in ("left_q", "right_q") for k in (1, 2, 3) if k <= level + 1]
    out += [["opposite_q", ["p", i], 0] for i in range(n) if n % 2 == 0]
    return out


def _hidden(puzzle: dict, level: int, rng: random.Random) -> dict:
    n = len(puzzle["people"])
    seat = [0] + rng.sample(range(1, n), n - 1)
    out = {"seat": np.array([seat], dtype=np.int8)}
    if puzzle["kind"] == "seating_mixed_facing":
        half = [1] * (n // 2) + [-1] * (n - n // 2)
        facing = rng.sample(half, n) if n == 8 else [rng.choice((1, -1)) for _ in range(n)]
        out["dir"] = np.array([facing], dtype=np.int8)
    else:
        out["dir"] = np.ones((1, n), dtype=np.int8)
        out["attr0"] = np.array([rng.sample(range(n), n)], dtype=np.int8)
        out["attr1"] = np.array([rng.sample(range(n), n)], dtype=np.int8)
    return with_entities(out, n)


def build(rng: random.Random, names: list[str], *, kind: str, level: int, stats: dict) -> dict | None:
    """One proven puzzle as {"puzzle", "answer", "distractors"}, or None with stats[reason] += 1."""
    n = SIZES[kind][level]
    puzzle = {"kind": kind, "people": rng.sample(names, n), "clues": [], "styles": [], "question": None,
              "values": [sorted(rng.sample(range(len(v)), n)) for _, v in ATTRIBUTES]
              if kind == "seating_attributes" else []}
    hidden = _hidden(puzzle, level, rng)
    if kind == "seating_mixed_facing" and n == 8 and sum(hidden["dir"][0] == 1) != 4:
        raise AssertionError("level 3 mixed facing must be half and half")
    w = worlds(kind, n)
    question = rng.choice(_questions(puzzle, level))
    puzzle["question"] = question
    truth = answers(question, puzzle, hidden)[0]
    codes, labels = answer_codes(question, puzzle, w)
    keep, chosen = np.ones(len(w["seat"]), dtype=bool), []
    candidates = true_clues(puzzle, hidden, rng)
    candidates.sort(key=lambda c: -rng.random() ** (1 / WEIGHTS[c[0]]))  # weighted shuffle: strong kinds first
    for clue in candidates:
        mask = clue_mask(clue, puzzle, w)
        narrowed = keep & mask
        if _settled(codes[mask]) or narrowed.sum() == keep.sum():
            continue  # gives the answer away alone, or adds nothing
        chosen.append((clue, mask))
        keep = narrowed
        if _settled(codes[keep]) or len(chosen) >= MAX_TRIED:
            break
    if not _settled(codes[keep]):
        stats["undetermined"] = stats.get("undetermined", 0) + 1
        return None
    clues = _prune(chosen, codes, rng)
    if len(clues) > MAX_CLUES[level]:
        stats["too_many_clues"] = stats.get("too_many_clues", 0) + 1
        return None
    if len(clues) < MIN_CLUES[level]:
        stats["too_easy"] = stats.get("too_easy", 0) + 1
        return None
    puzzle["clues"] = clues
    puzzle["styles"] = [rng.randrange(len(TEMPLATES[c[0]])) for c in clues]
    subject = puzzle["people"][question[1][1]] if question[1][0] == "p" else None
    possible = set(labels) - {subject}  # "who sits left of Roy?": never "Roy"
    return {"puzzle": puzzle, "answer": truth, "distractors": _distractors(puzzle, truth, possible, rng)}


def _prune(chosen: list[tuple[list, np.ndarray]], codes: np.ndarray, rng: random.Random) -> list[list]:
    """Drop clues the answer does not need, so every clue left matters."""
    kept = list(chosen)
    for item in rng.sample(chosen, len(chosen)):
        trial = [c for c in kept if c is not item]
        if trial and _settled(codes[np.logical_and.reduce([m for _, m in trial])]):
            kept = trial
    return [c for c, _ in kept]


def _distractors(puzzle: dict, truth: str, possible: set, rng: random.Random) -> list[str]:
    """Three other values the question admits before any clue (all proven wrong by the clues)."""
    others = sorted(v for v in possible if v != truth)
    rng.shuffle(others)
    return others[:3]
