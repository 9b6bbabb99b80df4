"""More seating families: attributes at a round table, mixed facing at a round table, two facing rows, one row
with mixed facing, a square table (corners and side middles facing different ways) and a rectangular one (ends and
long sides). Hidden world -> true clues -> solver-proven, pruned puzzle; text, explanation and work.

Kinds: "seating_attributes", "seating_mixed_facing", "seating_parallel_rows", "seating_row_facing",
"seating_square", "seating_rectangle". This module builds puzzles and is the families' public face; the words are
in helpers.puzzles.seating.text, the solver (on helpers.puzzles.csp) in helpers.puzzles.seating.solver, the
hidden world's plain-Python truths in helpers.puzzles.seating.world.

Conventions (the rendered text states the ones a reader needs):
- Round table of n: seats 0..n-1 clockwise seen from above; people[0] is pinned to seat 0 (rotations are the
  same seating). A sitter facing the centre has the next seat clockwise (+1) on their left; facing outward
  the previous one (-1). "k-th to the left of Y" counts k seats from Y towards Y's own left, so it depends on
  Y's facing only. "Opposite" exists only at even tables (seat + n/2). In "seating_attributes" everyone
  faces the centre.
- One row (seating_row_facing): seats 0..n-1 from west to east. Facing north, a sitter's left is west (lower
  seats); facing south it is east. "At an (extreme) end": seat 0 or n-1; "k-th from the west end": seat k-1.
  "How many people sit between X and Y": |seat X - seat Y| - 1.
- Two rows (seating_parallel_rows) of m: columns 0..m-1 from west to east; row 0 sits north and faces south,
  row 1 sits south and faces north, so each sitter faces the one in the same column of the other row: that
  is "X faces Y". Left/right are each sitter's own and count within their own row (north-facing row: left is
  west; south-facing row: left is east); "next to" means the same row. "Diagonally opposite corners": one at
  the west end of one row, the other at the east end of the other row. "Extreme end": column 0 or m-1.
- Square table of 8: seats 0..7 clockwise, even seats the corners, odd seats the middles of the sides. The
  corners all face one way and the middles the other ("corner_face": 1 = corners face the centre; None = not
  stated, a variable of the solver at level 3), so a sitter's left follows from their seat. Quarter turns are
  the same seating: people[0] is pinned to seat 0 or 1. "Opposite" is four seats on.
- Rectangular table of n = 2m: seats 0..n-1 clockwise, seat 0 and seat m the two ends, the others along the
  long sides; everyone faces the centre. "Opposite" is straight across: the ends face each other and along the
  long sides seat i faces seat n - i. A half turn is the same seating: people[0] is pinned to seats 0..m-1.
  A rectangle puzzle must use its shape (an end or "opposite" in a clue, statement or the question).
- "Where does X sit?" (one row): X's seat counted from the nearer end ("Second from the west end"). "Where does X
  sit relative to Y?" (round and square tables): k seats round to Y's own left for k <= (n-1)/2, to Y's right beyond
  that, "Opposite Y" at n/2.
- "Next to" = neighbouring seats. "Not next to" (and "does not face") = not neighbouring seats, nothing more, as the
  solver reads it: "the Greek does not sit next to the tea drinker" leaves the Greek free to drink tea. The
  generator states it only of two people (NEGATIVE_PAIRS), so a reader who takes it as two people finds the same
  key. "X sits between Y and Z, next to both" = X is a neighbour of both. Attribute values (nationality, drink, pet, sport, job) are distinct per person.

A puzzle dict: {"kind", "people", "groups": {group: [values]}, "facing": {person: 1|0} stated in the setup
(1 = centre/north), "half": four-and-four style facing premise, "intro": int, "clues": [[type, ...]],
"phrasing": [int per clue], "question": [...], "q_phrasing": int, "s_phrasing": [int] (statement
questions)}. The solver (Model + helpers.puzzles.csp) reads only these fields, never the hidden world.
"""

from __future__ import annotations

import random
from typing import Callable

import numpy as np

from helpers.puzzles import blind, csp
from helpers.puzzles.seating.text import (LAYOUT, CYCLIC, FACING_KINDS, NO_ANSWER, GROUPS, UNARY, LETTERS, group_of,
                                          members, cast, clue_variants, statement_texts, question_variants,
                                          intro_variants, render, where_texts)
from helpers.puzzles.seating.classic import count_options
from helpers.puzzles.seating.solver import Model, pin_seats, solve
from helpers.puzzles.seating.solver import explain, opposite, possible_answers, work
from helpers.puzzles.seating import unnamed
from helpers.puzzles.seating.text import KINDS

# the families' public face: what helpers.puzzles and the tests read from this module
__all__ = ["KINDS", "LAYOUT", "FACING_KINDS", "NO_ANSWER", "Model", "build", "render", "explain", "possible_answers",
           "work", "clue_variants", "question_variants", "intro_variants", "statement_texts", "official_length",
           "pin_seats", "opposite", "min_clues", "all_clues", "question_forms"]
from helpers.puzzles.seating.world import holds_in_world, answer_in_world


MAX_CHARS = 400  # question + answer letter + four "A) ..." choices: ~100 tokens at 4 characters a token
# Rows one solve may expand while generating: 4M rows is a few tens of ms of numpy; a clue that needs more is
# skipped and a pruning solve that needs more rejects the puzzle ("too_big"), keeping level-3 builds < 0.5 s.
BUDGET = 4_000_000
MAX_TRIES = 200  # candidate clues looked at before giving up (a typical proof takes 5-9)
LOOK = 8  # candidates compared at each step of the clue search
BIG_TABLE = 20_000  # rows beyond which a step compares only 2 candidates (each costs ~1 ms per 50k rows)
PRUNE_ORDERS = 3  # removal orders tried when the first leaves more clues than the text can hold
SPARE = 4  # clues the search may add beyond MAX_CLUES before giving up (pruning removes the spare ones)
SIZES = {"seating_attributes": {1: (4,), 2: (5,), 3: (5,)},
         "seating_mixed_facing": {1: (6,), 2: (6, 7), 3: (8,)},
         "seating_parallel_rows": {1: (6,), 2: (8,), 3: (10, 12)},
         "seating_row_facing": {1: (5,), 2: (6,), 3: (7, 8)},
         "seating_square": {1: (8,), 2: (8,), 3: (8,)},
         "seating_rectangle": {1: (6,), 2: (8,), 3: (8, 10)}}
KS = {1: (1,), 2: (1, 2), 3: (1, 2, 3)}  # "k-th to the left" distances per level
# Clue-type weights per kind and level: level 1 leans on direct links (same person, neighbours, faces), levels
# 2-3 add distances of 2-3 seats, negatives, facing relations and composite "faces the person left of" clues,
# which need more chaining to combine (negatives stay light: they are weak, so proofs get long).
WEIGHTS = {
    "seating_attributes": {
        1: {"same": 3, "not_same": 1, "left": 2, "right": 2, "opp": 2, "adj": 1},
        2: {"same": 2, "not_same": 1.5, "left": 2, "right": 2, "adj": 1.5, "not_adj": 1},
        3: {"same": 1.5, "not_same": 0.7, "left": 2, "right": 2, "adj": 1, "not_adj": 0.7}},
    "seating_mixed_facing": {
        1: {"left": 2, "right": 2, "adj": 1, "not_adj": 0.5, "opp": 1.5, "same": 2, "not_same": 1},
        2: {"left": 2, "right": 2, "adj": 1, "not_adj": 1, "opp": 1, "same": 1.5, "not_same": 1, "face": 1.5,
            "same_face": 1, "diff_face": 1},
        3: {"left": 2, "right": 2, "adj": 1, "not_adj": 1, "opp": 1, "same": 1, "not_same": 1, "face": 1,
            "same_face": 1.2, "diff_face": 1.2}},
    "seating_parallel_rows": {
        1: {"faces": 2, "end": 1, "not_end": 1, "left": 1.5, "right": 1.5, "adj": 1, "same_row": 1,
            "diff_row": 1, "row": 1.5},
        2: {"faces": 1.5, "end": 1, "not_end": 1, "left": 1.5, "right": 1.5, "adj": 1, "same_row": 0.5,
            "diff_row": 0.5, "row": 1, "diag": 1, "faces_rel": 1, "not_faces": 0.5, "lend": 0.5, "rend": 0.5},
        3: {"faces": 1, "end": 0.7, "not_end": 1, "left": 1.5, "right": 1.5, "adj": 1, "not_adj": 0.7,
            "same_row": 0.5, "diff_row": 0.5, "row": 0.7, "diag": 1, "faces_rel": 1.5, "not_faces": 1,
            "lend": 0.5, "rend": 0.5}},
    "seating_row_facing": {
        1: {"left": 2, "right": 2, "end": 1, "not_end": 1, "pos": 1.5, "adj": 1, "gap": 1.5, "between": 0.5},
        2: {"left": 2, "right": 2, "end": 1, "not_end": 1, "pos": 1, "adj": 1, "not_adj": 0.7, "gap": 1.5,
            "face": 1.5, "same_face": 1, "diff_face": 1},
        3: {"left": 2, "right": 2, "end": 0.7, "not_end": 1, "pos": 0.5, "adj": 1, "not_adj": 1, "gap": 1.5,
            "face": 0.7, "same_face": 1, "diff_face": 1}},
    "seating_square": {
        1: {"left": 2, "right": 2, "adj": 1, "opp": 1.5, "corner": 1, "mid": 1, "same": 2, "not_same": 1},
        2: {"left": 2, "right": 2, "adj": 1, "not_adj": 1, "opp": 1, "corner": 1, "mid": 1, "same": 1.5,
            "not_same": 1},
        3: {"left": 2, "right": 2, "adj": 1, "not_adj": 1, "opp": 1, "corner": 0.7, "mid": 0.7, "face": 1,
            "same": 1, "not_same": 1}},
    "seating_rectangle": {
        1: {"left": 2, "right": 2, "adj": 1, "opp": 3, "end": 1.5, "not_end": 1, "same": 2, "not_same": 1},
        2: {"left": 2, "right": 2, "adj": 1, "not_adj": 1, "opp": 2.5, "end": 1.5, "not_end": 1, "same": 1.5,
            "not_same": 1},
        3: {"left": 2, "right": 2, "adj": 1, "not_adj": 1, "opp": 2.5, "end": 1.2, "not_end": 1, "same": 1,
            "not_same": 1}},
}
# Question forms per kind and level, drawn uniformly: "attr" asks a sitter's attribute ("What does Ann drink?", "Who is
# the chef?" is "who"), "attr_near" a neighbour's ("What does the person left of Ann drink?"; from level 2 on, "attr"
# asks either, as only 1 in 15 such level-2 builds fits five clues in the text), "where" a seat (a row's,
# from its end) or a seat relative to another sitter (round and square tables, 5+ people: 4+ answers), "statement" =
# "Which statement is true?". A table whose attribute is optional gets one when "attr" is drawn. Left out where fewer
# than 1 in 10 builds fit the text budget with enough clues (30 tries per form): an attribute at a square table, at a
# rectangular one beyond level 1 and at a level-3 mixed-facing one; at a level-3 square table all but "who" (its
# proofs need 5+ clues). A level-3 mixed-facing table asks no "where": 1 in 3 builds fit at ~0.1 s each (p95 > 1 s).
QUESTIONS = {
    "seating_attributes": {1: ("attr", "attr_near", "who"), 2: ("attr", "who"), 3: ("attr", "who")},
    "seating_mixed_facing": {1: ("who", "attr", "where"), 2: ("who", "attr", "where", "count_face", "statement"),
                             3: ("who", "statement")},
    "seating_parallel_rows": {1: ("faces", "who", "nbr", "at_end"), 2: ("faces", "who", "nbr", "at_end", "faces_rel"),
                              3: ("faces", "who", "nbr", "at_end", "faces_rel", "statement")},
    "seating_row_facing": {1: ("who", "where", "count_between", "at_pos"),
                           2: ("who", "where", "count_between", "at_pos", "count_face"),
                           3: ("who", "where", "count_between", "statement")},
    "seating_square": {1: ("who", "where"), 2: ("who", "where", "statement"), 3: ("who",)},
    "seating_rectangle": {1: ("who", "attr"), 2: ("who", "statement"), 3: ("who", "statement")},
}
# Statement choices use only clue types that read short ("P faces Q"): four of them must fit with the puzzle.
STATEMENT_TYPES = ("left", "right", "adj", "opp", "faces", "same", "face", "end", "same_face", "diff_face",
                   "same_row", "diff_row", "row", "corner", "mid")
# Tables whose people also have one attribute (a job at mixed facing and square tables; any group with a value
# for everyone at a rectangle): the share per level, and the groups drawn from.
GROUP_SHARE = {"seating_mixed_facing": {1: 0.3, 2: 0.3, 3: 0.3}, "seating_square": {1: 0.0, 2: 0.2, 3: 0.2},
               "seating_rectangle": {1: 0.5, 2: 0.4, 3: 0.3}}
TABLE_GROUP = {"seating_mixed_facing": ("job",), "seating_square": ("job",),
               "seating_rectangle": ("nation", "drink", "pet", "sport", "job")}
# Clues left after pruning (each one needed): fewer than MIN is too direct for the level; MAX bounds the text
# (a round table with two listed attribute sets spends ~130 of its 400 characters on the setup: 5 clues fit).
MIN_CLUES = {1: 2, 2: 3, 3: 4}
MAX_CLUES = {1: 5, 2: 7, 3: 8}
MAX_CLUES_KIND = {"seating_attributes": {1: 4, 2: 5, 3: 5}}
MIN_CLUES_KIND = {"seating_square": {1: 2, 2: 3, 3: 5}}  # a square's space is small: level 3 needs a longer proof
# Level-3 attribute puzzles prefer clues linking two attributes ("the Thai sits left of the tea drinker"),
# which the reader must chain through people; level 1 prefers clues about named people.
INDIRECT = {1: 0.5, 2: 1.0, 3: 1.5}
SYMMETRIC = ("opp", "adj", "not_adj", "same_face", "diff_face", "gap", "faces", "not_faces", "same_row",
             "diff_row", "diag")
# A rectangular table must matter to the proof, else the puzzle is a round one in disguise: a kept clue, a
# statement or the question uses what only that shape has (its ends, "straight across"). A square table always
# does: its corners and middles face different ways, so every left/right depends on where the sitter is.
SHAPE_TYPES = {"rect": ("opp", "end", "not_end")}


def _ks(puzzle: dict, level: int) -> list[int]:
    """Distances "k-th to the left" may use: round tables up to (n-1)/2 (beyond it left and right meet),
    two rows up to m-1, one row up to n-1."""
    n, layout = len(puzzle["people"]), LAYOUT[puzzle["kind"]]
    top = (n - 1) // 2 if layout in CYCLIC else (n // 2 - 1 if layout == "rows2" else n - 1)
    return [k for k in KS[level] if k <= top]


def _syntax(puzzle: dict, level: int, t: str) -> list[list]:
    """Every well-formed clue of type t over the puzzle's tokens (true or false in the world)."""
    kind, people = puzzle["kind"], list(puzzle["people"])
    attrs = [v for vals in puzzle.get("groups", {}).values() for v in vals]
    tokens, n = people + attrs, len(people)
    anchors = people if kind in FACING_KINDS else tokens
    ks = _ks(puzzle, level)
    if t == "opp" and (n % 2 or LAYOUT[kind] not in CYCLIC):
        return []
    if t in ("left", "right"):
        return [[t, a, b, k] for a in tokens for b in anchors if a != b for k in ks]
    if t == "faces_rel":
        return [[t, a, b, r, k] for a in people for b in people if a != b for r in ("left", "right") for k in ks]
    if t in ("same", "not_same"):
        order = ["people", *puzzle.get("groups", {})]
        return [[t, a, b] for a in tokens for b in attrs
                if order.index(group_of(puzzle, a)) < order.index(group_of(puzzle, b))]
    if t in ("face", "row"):
        return [[t, a, f] for a in people for f in (0, 1)]
    if t in UNARY:
        return [[t, a] for a in people]
    if t == "pos":
        return [[t, a, side, k] for a in people for side in ("west", "east") for k in range(1, (n + 1) // 2 + 1)]
    if t == "between":
        return [[t, a, b, c] for a in people for b in people for c in people if len({a, b, c}) == 3 and b < c]
    pool = people if t in ("same_face", "diff_face") or LAYOUT[kind] not in CYCLIC else tokens
    pairs = [(a, b) for i, a in enumerate(pool) for b in pool[i + 1:]]
    if t == "gap":
        return [[t, a, b, k] for a, b in pairs for k in range(1, n - 1)]
    return [[t, a, b] for a, b in pairs]


def all_clues(puzzle: dict) -> list[list]:
    """Every well-formed clue of every type the puzzle's kind uses at any level (what a reader of the text can
    meet; helpers.puzzles.seating.parse looks clue sentences up among their phrasings)."""
    types = dict.fromkeys(t for weights in WEIGHTS[puzzle["kind"]].values() for t in weights)
    return [c for t in types for c in _syntax(puzzle, 3, t)]


def _weighted_order(items: list[list], weight: dict, rng: random.Random, indirect: dict | None = None) -> list[list]:
    """Shuffle so heavier clue types tend to come first (Efraimidis-Spirakis keys); `indirect` maps a clue
    to an extra factor."""
    keyed = [(rng.random() ** (1.0 / (weight[c[0]] * (indirect or {}).get(id(c), 1.0))), c)
             for c in items if weight.get(c[0], 0) > 0]
    return [c for _, c in sorted(keyed, key=lambda kc: -kc[0])]


def _key(clue: list) -> tuple:
    """A clue's identity up to argument order of symmetric types (to keep statements out of the clues)."""
    if clue[0] in SYMMETRIC or clue[0] in ("same", "not_same"):
        return (clue[0], frozenset(clue[1:3]), tuple(clue[3:]))
    return tuple(clue)


def question_forms(kind: str, level: int) -> tuple[str, ...]:
    """The question forms a kind asks at a level (build draws one uniformly unless told)."""
    return QUESTIONS[kind][level]


def _skeleton(rng: random.Random, names: list, kind: str, level: int, form: str) -> tuple[dict, dict]:
    """A puzzle without clues or question, and the hidden world it is read from."""
    sizes = SIZES[kind][level]
    if form == "attr" and kind in TABLE_GROUP:  # a table of 10 is too big for any attribute list (7-8 values)
        sizes = [n for n in sizes if any(len(GROUPS[g]["values"]) >= n for g in TABLE_GROUP[kind])] or sizes
    n = rng.choice(sizes)
    people = cast(rng, names, n)
    puzzle: dict = {"kind": kind, "people": people, "groups": {}, "facing": {}, "half": False}
    if kind == "seating_attributes":
        chosen = ["nation", "drink"] if rng.random() < 0.5 else rng.sample(["nation", "drink", "pet", "sport"], 2)
        puzzle["groups"] = {g: rng.sample(GROUPS[g]["values"], n) for g in chosen}
    choices = [g for g in TABLE_GROUP.get(kind, ()) if len(GROUPS[g]["values"]) >= n]
    if choices and (form == "attr" or rng.random() < GROUP_SHARE[kind][level]):
        g = choices[0] if len(choices) == 1 else rng.choice(choices)
        puzzle["groups"] = {g: rng.sample(GROUPS[g]["values"], n)}
    if kind == "seating_square":
        puzzle["corner_face"] = rng.choice([0, 1])
    world = {"seat": {}, "face": {}, "corner_face": puzzle.get("corner_face")}
    if kind == "seating_square" and level == 3:  # only "corners one way, middles the other" is stated
        puzzle["corner_face"] = None
    for g in ["people", *puzzle["groups"]]:
        seats = rng.sample(range(n), n)
        if g == "people":  # turn the table so people[0] sits where the solver pins them
            seats = _pinned(LAYOUT[kind], n, seats)
        world["seat"].update(zip(members(puzzle, g), seats))
    if kind in FACING_KINDS:
        k = n // 2 if level == 3 and kind == "seating_mixed_facing" else rng.randint(1, n - 1)
        ones = set(rng.sample(people, k))
        world["face"] = {p: int(p in ones) for p in people}
        puzzle["half"] = level == 3 and kind == "seating_mixed_facing"
        if level == 1:
            puzzle["facing"] = dict(world["face"])
    return puzzle, world


def _pinned(layout: str, n: int, seats: list[int]) -> list[int]:
    """The same seating turned by a symmetry of the table so that the first seat is one pin_seats allows."""
    allowed, first = pin_seats(layout, n), seats[0]
    if first in allowed:
        return seats
    turn = {"round": first, "square": first - first % 2, "rect": n // 2}[layout]
    return [(s - turn) % n for s in seats]


def _question(rng: random.Random, puzzle: dict, world: dict, level: int, form: str, rank: int) -> list | None:
    """A question of the form with an answer in the hidden world (None after a few misses)."""
    for _ in range(8):
        q = _question_of(rng, puzzle, world, level, form, rank)
        if q is None:
            continue
        puzzle["question"] = q
        if q[0] == "statement" or answer_in_world(puzzle, world) != NO_ANSWER:
            return q
    return None


def _question_of(rng: random.Random, puzzle: dict, world: dict, level: int, form: str, rank: int) -> list | None:
    """One random question of a form (statements are filled in later); a count question's answer leaves room
    for four consecutive options with the key at `rank`."""
    people, n, kind = puzzle["people"], len(puzzle["people"]), puzzle["kind"]
    attrs = [v for vals in puzzle["groups"].values() for v in vals]
    k = rng.choice(_ks(puzzle, level))
    side = rng.choice(["left", "right"])
    if form in ("who", "attr", "attr_near"):
        rels = [side] * 3 + (["opp"] if n % 2 == 0 and LAYOUT[kind] in CYCLIC else [])
        if attrs and form != "attr_near":
            rels.append("same")
        rel = "same" if form == "attr" and kind == "seating_attributes" and level == 1 else rng.choice(rels)
        form = "attr" if form == "attr_near" else form
        if form == "attr" and not puzzle["groups"]:
            return None
        group = rng.choice(list(puzzle["groups"])) if form == "attr" else "people"
        pool = people if kind in FACING_KINDS or LAYOUT[kind] == "rows2" else people + attrs
        if rel == "same":  # across groups: "What does the Thai drink?", "Who is the chef?", "What is P's job?"
            skip = (group, "people") if form == "who" else (group,)
            pool = [t for t in people + attrs if group_of(puzzle, t) not in skip]
        if not pool:
            return None
        x = rng.choice(pool)
        return ["who", rel, x, k if rel in ("left", "right") else 0] if form == "who" else \
            ["attr", group, rel, x, k if rel in ("left", "right") else 0]
    if form == "where":  # a row: "Where does X sit?"; a table: "Where does X sit relative to Y?"
        return ["where", rng.choice(people), ""] if LAYOUT[kind] == "row" else ["where", *rng.sample(people, 2)]
    if form in ("faces", "nbr"):
        return ["who", form, rng.choice(people), 0]
    if form == "faces_rel":
        return ["who", "faces_" + side, rng.choice(people), k]
    if form == "at_end":
        return ["at_end", rng.choice([0, 1]), side]
    if form == "at_pos":
        return ["at_pos", rng.choice(["west", "east"]), rng.randint(1, (n + 1) // 2)]
    if form == "count_between":
        seat = world["seat"]
        pairs = [(x, y) for x in people for y in people
                 if x != y and count_options(abs(seat[x] - seat[y]) - 1, rank, n - 2)]
        return ["count_between", *rng.choice(pairs)] if pairs else None
    if form == "count_face":
        ones = sum(world["face"].values())
        fits = [f for f in (0, 1) if count_options(ones if f else n - ones, rank, n)]
        return ["count_face", rng.choice(fits)] if fits else None
    return _statements(rng, puzzle, world, level)


# Negative two-sided clues a literal reader takes as true of one sitter ("X does not sit next to X"). The solvers
# read them so; the generator keeps them to two people, so a reader who takes the words as two people agrees.
NEGATIVE_PAIRS = ("not_adj", "not_faces")


def _two_sitters(world: dict, clue: list) -> bool:
    """A negative two-sided clue names two people in the hidden world (any other clue: True)."""
    return clue[0] not in NEGATIVE_PAIRS or world["seat"][clue[1]] != world["seat"][clue[2]]


def _statable(puzzle: dict, level: int, t: str) -> list[list]:
    """The statements of type t a "which is true" question may offer: a negative two-sided one only of two people
    by name, so no seating makes its two sides one sitter."""
    return [c for c in _syntax(puzzle, level, t)
            if c[0] not in NEGATIVE_PAIRS or {c[1], c[2]} <= set(puzzle["people"])]


def _statements(rng: random.Random, puzzle: dict, world: dict, level: int) -> list | None:
    """A "which is true" question: one true statement and three false ones about the hidden world, of two kinds, two
    statements each (the true one's kind and one other). With one kind doubled and two odd ones out, the true one was
    always one of the alike two, and a reader guessing between them won half of these questions
    (blind.closest_pair_scores)."""
    weights = {t: w for t, w in WEIGHTS[puzzle["kind"]][level].items() if t in STATEMENT_TYPES}
    if puzzle.get("facing"):
        weights.pop("face", None)
    if len(weights) < 2:
        return None
    types = rng.sample(list(weights), 2)
    true = [c for c in _statable(puzzle, level, types[0]) if holds_in_world(puzzle, world, c)]
    if not true:
        return None
    picked = [rng.choice(true)]
    for t in (types[0], types[1], types[1]):
        false = [c for c in _statable(puzzle, level, t) if not holds_in_world(puzzle, world, c) and c not in picked]
        if not false:
            return None
        picked.append(rng.choice(false))
    puzzle["s_phrasing"] = [rng.randrange(len(clue_variants(puzzle, s))) for s in picked]
    return ["statement", picked]


def _candidates(puzzle: dict, world: dict, level: int, rng: random.Random) -> list[list]:
    """Every true clue in the hidden world, heavier types first, statements' own clues left out."""
    weights = WEIGHTS[puzzle["kind"]][level]
    if puzzle.get("facing"):
        weights = {t: w for t, w in weights.items() if t not in ("face", "same_face", "diff_face")}
    banned = {_key(s) for s in puzzle["question"][1]} if puzzle["question"][0] == "statement" else set()
    true = [c for t in weights for c in _syntax(puzzle, level, t)
            if holds_in_world(puzzle, world, c) and _two_sitters(world, c) and _key(c) not in banned]
    people = set(puzzle["people"])
    factor = {id(c): INDIRECT[level] for c in true
              if puzzle["groups"] and not people & {x for x in c[1:] if isinstance(x, str)}}
    return _weighted_order(true, weights, rng, factor)


def min_clues(kind: str, level: int) -> int:
    """The fewest clues a puzzle of this kind and level may keep."""
    return MIN_CLUES_KIND.get(kind, MIN_CLUES)[level]


def _max_clues(kind: str, level: int) -> int:
    """The most clues a puzzle of this kind and level may keep."""
    return MAX_CLUES_KIND.get(kind, MAX_CLUES)[level]


def _bump(stats: dict, reason: str) -> None:
    """Count one rejection."""
    stats[reason] = stats.get(reason, 0) + 1


def _choose(model: Model, world_table: csp.Table, cands: list[list], truth: str, level: int,
            stats: dict, give_up: Callable[[], bool] | None = None) -> list[list] | None:
    """Add true clues until the answer is unique: of the next LOOK candidates (weighted order) take the one
    leaving the smallest share of worlds with a wrong answer, then fewest worlds; skip clues that add
    nothing or prove the answer alone."""
    qvars = model.question_vars()
    statement = model.puzzle["question"][0] == "statement"
    key_statement = next((s for s in model.puzzle["question"][1] if model.holds(s, world_table)[0]), None) \
        if statement else None
    base = csp.solve(model.problem, model.premises, keep=() if statement else qvars, budget=BUDGET)

    def wrong(t: csp.Table) -> float:
        """Share of wrong worlds; a statement question waits (1.0) until clues name all statements' people."""
        return model.wrong_share(t, truth) if all(t.has(v) for v in qvars) else 1.0
    table, chosen, pool, tries = base, [], list(cands), 0
    while pool and tries < MAX_TRIES and len(chosen) < _max_clues(model.puzzle["kind"], level) + SPARE:
        _check_time(give_up)
        scored = []
        for clue in pool[:LOOK if len(table.rows) < BIG_TABLE else 2]:  # big tables: compare fewer
            tries += 1
            if not model.holds(clue, world_table)[0]:  # generator and solver disagree: never ship such a clue
                raise AssertionError(f"clue {clue} is false in the world it was read from")
            try:
                nxt = csp.add(table, model.constraint(clue), BUDGET)
            except csp.TooBig:
                nxt = table
            if nxt.count() == table.count():
                pool.remove(clue)  # adds nothing (or too costly to list)
            else:
                scored.append((wrong(nxt), nxt.count(), clue, nxt))
        if not scored:
            continue
        left, _, clue, nxt = min(scored, key=lambda s: s[:2])
        pool.remove(clue)
        if wrong(csp.add(base, model.constraint(clue))) == 0 or (statement and proves_alone(model, clue, key_statement)):
            continue  # proves the answer on its own (or the true statement restates it): too direct
        table = nxt
        chosen.append(clue)
        if left == 0:
            return chosen
    _bump(stats, "undetermined")
    return None


def proves_alone(model: Model, clue: list, statement: list) -> bool:
    """Whether one clue with the set-up proves a statement ("X sits next to Y" from "Y is X's left neighbour"): a true
    statement that only restates a clue asks no reasoning, so a clue that does is never kept beside it."""
    c = model.constraint(statement)

    def false(*cols):
        return ~np.broadcast_to(np.asarray(c.test(*cols), dtype=bool), np.shape(cols[0]))
    try:
        table = csp.solve(model.problem, [*model.premises, model.constraint(clue), csp.Constraint(c.vars, false)],
                          budget=BUDGET)
    except csp.TooBig:
        return False
    return len(table.rows) == 0


def _check_time(give_up: Callable[[], bool] | None) -> None:
    """Raise TimeoutError when the caller's deadline has passed (a slow build stops mid-search)."""
    if give_up is not None and give_up():
        raise TimeoutError("the caller's deadline passed during a seating puzzle's clue search")


def _prune(model: Model, chosen: list[list], rng: random.Random,
           give_up: Callable[[], bool] | None = None) -> list[list]:
    """Drop every clue the proof does not need (each one left is necessary). Raises csp.TooBig."""
    kept = list(chosen)
    for clue in rng.sample(chosen, len(chosen)):
        _check_time(give_up)
        trial = [c for c in kept if c is not clue]
        if trial and len(model.answers(solve(model, trial, BUDGET))) == 1:
            kept = trial
    return kept


def _uses_shape(puzzle: dict, clues: list[list]) -> bool:
    """Whether the proof needs the table's shape (always true for round tables and rows; see SHAPE_TYPES)."""
    shape = SHAPE_TYPES.get(LAYOUT[puzzle["kind"]])
    if shape is None:
        return True
    q = puzzle["question"]
    asked = [s[0] for s in q[1]] if q[0] == "statement" else [q[-3]] if q[0] in ("who", "attr") else []
    return any(t in shape for t in [c[0] for c in clues] + asked)


def _distractors(rng: random.Random, puzzle: dict, truth: str, rank: int, level: int, form: str) -> list[str]:
    """Three wrong choices; the answer is proven unique, so each is proven impossible. Counts: four consecutive
    numbers with the key at `rank`; people and values by blind.balanced, those the text leaves unmentioned after the
    seating list flagged (seating.unnamed)."""
    q, n = puzzle["question"], len(puzzle["people"])
    if q[0] == "statement":
        return [t for t in statement_texts(puzzle) if t != truth]
    if q[0].startswith("count"):
        top = n - 2 if q[0] == "count_between" else n
        return [str(v) for v in count_options(int(truth), rank, top) if str(v) != truth]
    if q[0] == "where":  # any other seat: the key's seat is uniform, so no answer text is likelier than another
        others = [t for t in where_texts(puzzle)[0 if not q[2] else 1:] if t != truth]
        return rng.sample(others, 3)
    others = _name_pool(puzzle, truth)
    if len(others) < 3:  # a table of four: the asked person fills the place
        if len(blind.unmentioned([truth, *others], render(puzzle))) > 1:
            return others  # two unmentioned people would say the key is another: too few choices, rejected
        return (others + [q[-2] if q[0] in ("who", "attr") else None])[:3]
    return unnamed.distractors(truth, others, render(puzzle), rng, kind=puzzle["kind"], level=level, form=form)


def _name_pool(puzzle: dict, truth: str) -> list[str]:
    """A question's wrong people (or values, for a which-value question): the group's members but the key and the
    person or value asked about."""
    q = puzzle["question"]
    group = q[1] if q[0] == "attr" else "people"
    anchor = q[-2] if q[0] in ("who", "attr") else None
    return [t for t in members(puzzle, group) if t not in (truth, anchor)]


def _renamed(value, mapping: dict):
    """A JSON-like value with every token (a whole string) renamed."""
    if isinstance(value, list):
        return [_renamed(v, mapping) for v in value]
    if isinstance(value, dict):
        return {_renamed(k, mapping): _renamed(v, mapping) for k, v in value.items()}
    return mapping.get(value, value) if isinstance(value, str) else value


def _lettered(puzzle: dict, rng: random.Random, names: list) -> dict:
    """Rename the cast to single letters drawn at random, in alphabetical order (shorter text); returns the mapping."""
    people = puzzle["people"]
    if all(len(p) == 1 for p in people):
        return {}
    mapping = dict(zip(people, sorted(rng.sample(LETTERS, len(people)))))
    for key in ("people", "clues", "question", "facing"):
        puzzle[key] = _renamed(puzzle[key], mapping)
    return mapping


def _short_named(puzzle: dict, rng: random.Random, names: list) -> dict:
    """Rename the cast to given names of three letters (shorter text); returns the mapping."""
    people = puzzle["people"]
    pool = sorted({x[0] if isinstance(x, (tuple, list)) else x for x in names} - set(people))
    pool = [x for x in pool if len(x) == 3]
    if all(len(p) <= 3 for p in people) or len(pool) < len(people):
        return {}
    mapping = dict(zip(people, rng.sample(pool, len(people))))
    for key in ("people", "clues", "question", "facing"):
        puzzle[key] = _renamed(puzzle[key], mapping)
    return mapping


def _shortest_index(variants: list[str]) -> int:
    """The index of the shortest phrasing."""
    return min(range(len(variants)), key=lambda i: len(variants[i]))


CLUE_SLACK = 2  # characters over a clue's shortest wording that still count as terse


def _terse_index(variants: list[str], rng: random.Random) -> int:
    """One of the phrasings within CLUE_SLACK characters of the shortest, drawn: a long level-3 puzzle's clues of
    one kind do not all read alike."""
    short = min(map(len, variants)) + CLUE_SLACK
    return rng.choice([i for i, v in enumerate(variants) if len(v) <= short])


def _tersest_clues(puzzle: dict, rng: random.Random, names: list) -> dict:
    """Switch the intro to its shortest phrasing, and every clue and statement to a terse one (the question keeps
    its own)."""
    puzzle["intro"] = _shortest_index(intro_variants(puzzle))
    puzzle["phrasing"] = [_terse_index(clue_variants(puzzle, c), rng) for c in puzzle["clues"]]
    if puzzle["question"][0] == "statement":
        puzzle["s_phrasing"] = [_terse_index(clue_variants(puzzle, c), rng) for c in puzzle["question"][1]]
    return {}


QUESTION_SLACK = 3  # characters over the shortest question wording that still count as short


def _tersest_question(puzzle: dict, rng: random.Random, names: list) -> dict:
    """Switch the question sentence to one of its shortest phrasings (within QUESTION_SLACK characters, drawn), only
    when the terse clues were not enough, so that long level-3 questions do not all end in the same sentence."""
    variants = question_variants(puzzle)
    short = min(map(len, variants)) + QUESTION_SLACK
    puzzle["q_phrasing"] = rng.choice([i for i, v in enumerate(variants) if len(v) <= short])
    return {}


def _shortest_question(puzzle: dict, rng: random.Random, names: list) -> dict:
    """Switch the question sentence to its one shortest phrasing (the last resort)."""
    puzzle["q_phrasing"] = _shortest_index(question_variants(puzzle))
    return {}


def official_length(question: str, choices: list[str]) -> int:
    """Characters the 130-token filter covers: question, answer letter and the "A) ..." choices."""
    return len(question) + 1 + sum(len(f"{'ABCD'[i]}) {c}") for i, c in enumerate(choices))


def build(rng: random.Random, names: list, *, kind: str, level: int, stats: dict,
          give_up: Callable[[], bool] | None = None, form: str | None = None) -> dict | None:
    """One proven puzzle as {"puzzle", "answer", "distractors"}, or None with stats[reason] += 1. The question form
    is drawn first, uniformly over question_forms() (or given). give_up (a deadline's passed()) is asked between
    steps of the clue search: True raises TimeoutError."""
    if kind not in KINDS or level not in (1, 2, 3):
        raise ValueError(f"unknown kind/level {kind!r}/{level!r}")
    form = form or rng.choice(question_forms(kind, level))
    rank = rng.randrange(4)  # a count question's key among its four sorted options
    puzzle, world = _skeleton(rng, names, kind, level, form)
    if _question(rng, puzzle, world, level, form, rank) is None:
        _bump(stats, "no_question")
        return None
    truth = answer_in_world(puzzle, world)
    model = Model(puzzle)
    world_table = model.world_table(world)
    if model.answers(world_table) != {truth} or truth == NO_ANSWER:
        _bump(stats, "no_answer_in_world" if truth == NO_ANSWER else "solver_disagrees")
        return None
    chosen = _choose(model, world_table, _candidates(puzzle, world, level, rng), truth, level, stats, give_up)
    if chosen is None:
        return None
    try:
        clues = _prune(model, chosen, rng, give_up)
        for _ in range(PRUNE_ORDERS - 1):  # another removal order can leave a smaller necessary set
            if len(clues) <= _max_clues(kind, level):
                break
            clues = min(clues, _prune(model, chosen, rng, give_up), key=len)
    except csp.TooBig:
        _bump(stats, "too_big")
        return None
    if not _uses_shape(puzzle, clues):
        _bump(stats, "shape_unused")
        return None
    if not min_clues(kind, level) <= len(clues) <= _max_clues(kind, level):
        _bump(stats, "too_easy" if len(clues) < min_clues(kind, level) else "too_many_clues")
        return None
    rng.shuffle(clues)
    puzzle.update(clues=clues, phrasing=[rng.randrange(len(clue_variants(puzzle, c))) for c in clues],
                  intro=rng.randrange(len(intro_variants(puzzle))),
                  q_phrasing=rng.randrange(len(question_variants(puzzle))))
    away = blind.unmentioned([truth, *_name_pool(puzzle, truth)], render(puzzle))
    if not unnamed.keep(kind, level, form, truth, away, rng):
        _bump(stats, "key_unnamed")
        return None
    distractors = _distractors(rng, puzzle, truth, rank, level, form)
    if len(set(distractors) | {truth}) != 4:
        _bump(stats, "few_choices")
        return None
    # a long draw: tersest wordings, then shorter names, then the one shortest question
    for shorten in (_tersest_clues, _tersest_question, _short_named, _lettered, _shortest_question):
        if official_length(render(puzzle), [truth, *distractors]) < MAX_CHARS:
            break
        where = where_texts(puzzle) if puzzle["question"][0] == "where" else []
        at = [where.index(t) for t in [truth, *distractors]] if where else []
        mapping = shorten(puzzle, rng, names)
        truth, distractors = _renamed(truth, mapping), _renamed(distractors, mapping)
        if puzzle["question"][0] == "statement":  # statement 0 is the true one; texts are re-rendered
            truth, *distractors = statement_texts(puzzle)
        if where:  # "Immediately to Ann's left" names a sitter: re-rendered too
            truth, *distractors = [where_texts(puzzle)[i] for i in at]
    if official_length(render(puzzle), [truth, *distractors]) >= MAX_CHARS:
        _bump(stats, "too_long")
        return None
    return {"puzzle": puzzle, "answer": truth, "distractors": distractors}
