"""More seating families: attributes at a round table, mixed facing at a round table, two facing rows, one row
with mixed facing. Hidden world -> true clues -> solver-proven, pruned puzzle; text, explanation and work.

Kinds: "seating_attributes", "seating_mixed_facing", "seating_parallel_rows", "seating_row_facing".

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
- "Next to" = neighbouring seats; "not next to" also implies different people; "X sits between Y and Z" = X is
  a neighbour of both. Attribute values (nationality, drink, pet, sport, job) are distinct per person.

A puzzle dict: {"kind", "people", "groups": {group: [values]}, "facing": {person: 1|0} stated in the setup
(1 = centre/north), "half": four-and-four style facing premise, "intro": int, "clues": [[type, ...]],
"phrasing": [int per clue], "question": [...], "q_phrasing": int, "s_phrasing": [int] (statement
questions)}. The solver (Model + helpers.puzzles.csp) reads only these fields, never the hidden world.
"""

from __future__ import annotations

import math
import random

import numpy as np

from helpers.puzzles import csp

KINDS = ("seating_attributes", "seating_mixed_facing", "seating_parallel_rows", "seating_row_facing")
LAYOUT = {"seating_attributes": "round", "seating_mixed_facing": "round", "seating_parallel_rows": "rows2",
          "seating_row_facing": "row"}
FACING_KINDS = ("seating_mixed_facing", "seating_row_facing")
NO_ANSWER = "(none)"
FREE = -2  # answer code: the seat holds a member no clue names (any free one could be there)
ORD = ("", "first", "second", "third", "fourth", "fifth", "sixth")
NUM = ("", "one", "two", "three", "four", "five", "six")
LETTERS = "EFGHJKLMNPQRSTUVWXYZ"  # no A-D (choice letters) nor I/O (read as 1/0)
MAX_CHARS = 400  # question + answer letter + four "A) ..." choices: ~100 tokens at 4 characters a token
MAX_WORDS = 100
# Rows one solve may expand while generating: 4M rows is a few tens of ms of numpy; a clue that needs more is
# skipped and a pruning solve that needs more rejects the puzzle ("too_big"), keeping level-3 builds < 0.5 s.
BUDGET = 4_000_000
MAX_TRIES = 200  # candidate clues looked at before giving up (a typical proof takes 5-9)
LOOK = 8  # candidates compared at each step of the clue search
BIG_TABLE = 20_000  # rows beyond which a step compares only 2 candidates (each costs ~1 ms per 50k rows)
PRUNE_ORDERS = 3  # removal orders tried when the first leaves more clues than the text can hold
SPARE = 4  # clues the search may add beyond MAX_CLUES before giving up (pruning removes the spare ones)
GROUPS = {
    "nation": {"values": ("Thai", "Greek", "Swiss", "Czech", "Kenyan", "German", "Indian"),
               "noun": "the {v}", "pred": "is {v}", "neg": "is not {v}", "comp": "{v}", "label": "nationality",
               "q": ("What is the nationality of {who}?", "Which nationality is {who}?")},
    "drink": {"values": ("tea", "milk", "soda", "cola", "juice", "water", "cocoa"),
              "noun": "the {v} drinker", "pred": "drinks {v}", "neg": "does not drink {v}",
              "comp": "the {v} drinker", "label": "drink",
              "q": ("What does {who} drink?", "Which drink does {who} have?")},
    "pet": {"values": ("cat", "dog", "fish", "bird", "frog", "hare", "mouse"),
            "noun": "the {v} owner", "pred": "owns the {v}", "neg": "does not own the {v}",
            "comp": "the {v} owner", "label": "pet", "q": ("Which pet does {who} own?", "What pet does {who} have?")},
    "sport": {"values": ("golf", "judo", "polo", "chess", "darts", "rugby", "tennis"),
              "noun": "the {v} player", "pred": "plays {v}", "neg": "does not play {v}", "comp": "the {v} player",
              "label": "sport", "q": ("Which sport does {who} play?", "What does {who} play?")},
    "job": {"values": ("chef", "pilot", "nurse", "judge", "actor", "baker", "clerk", "tutor"),
            "noun": "the {v}", "pred": "is the {v}", "neg": "is not the {v}", "comp": "the {v}", "label": "job",
            "q": ("What is the job of {who}?", "Which job does {who} have?")},
}
SIZES = {"seating_attributes": {1: (4,), 2: (5,), 3: (5,)},
         "seating_mixed_facing": {1: (6,), 2: (6, 7), 3: (8,)},
         "seating_parallel_rows": {1: (6,), 2: (8,), 3: (10, 12)},
         "seating_row_facing": {1: (5,), 2: (6,), 3: (7, 8)}}
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
}
# Question forms per kind and level (weights); "statement" = "Which statement is true?".
QUESTIONS = {
    "seating_attributes": {1: {"attr": 3, "who": 2}, 2: {"attr": 3, "who": 2}, 3: {"attr": 3, "who": 2}},
    "seating_mixed_facing": {1: {"who": 3, "attr": 2}, 2: {"who": 3, "attr": 2, "count_face": 0.7, "statement": 1},
                             3: {"who": 3, "attr": 1, "statement": 1.5}},
    "seating_parallel_rows": {1: {"faces": 2, "who": 2, "nbr": 1, "at_end": 1},
                              2: {"faces": 2, "who": 2, "nbr": 1, "at_end": 1, "faces_rel": 1.5},
                              3: {"faces": 1.5, "who": 2, "nbr": 1, "at_end": 1, "faces_rel": 2, "statement": 1.5}},
    "seating_row_facing": {1: {"who": 3, "count_between": 2, "at_pos": 1},
                           2: {"who": 3, "count_between": 2, "at_pos": 1, "count_face": 1},
                           3: {"who": 3, "count_between": 2, "statement": 1.5}},
}
# Statement choices use only clue types that read short ("P faces Q"): four of them must fit with the puzzle.
STATEMENT_TYPES = ("left", "right", "adj", "opp", "faces", "same", "face", "end", "same_face", "diff_face",
                   "same_row", "diff_row", "row")
JOBS_SHARE = {1: 1.0, 2: 0.5, 3: 0.3}  # round tables of mixed facing whose people also have jobs
# Clues left after pruning (each one needed): fewer than MIN is too direct for the level; MAX bounds the text
# (a round table with two listed attribute sets spends ~130 of its 400 characters on the setup: 5 clues fit).
MIN_CLUES = {1: 2, 2: 3, 3: 4}
MAX_CLUES = {1: 5, 2: 7, 3: 8}
MAX_CLUES_KIND = {"seating_attributes": {1: 4, 2: 5, 3: 5}}
# Level-3 attribute puzzles prefer clues linking two attributes ("the Thai sits left of the tea drinker"),
# which the reader must chain through people; level 1 prefers clues about named people.
INDIRECT = {1: 0.5, 2: 1.0, 3: 1.5}
SYMMETRIC = ("opp", "adj", "not_adj", "same_face", "diff_face", "gap", "faces", "not_faces", "same_row",
             "diff_row", "diag")
UNARY = ("end", "not_end", "lend", "rend")


# ---- the puzzle's vocabulary ------------------------------------------------------------------------------

def group_of(puzzle: dict, token: str) -> str:
    """The group a token belongs to ("people" for a person)."""
    if token in puzzle["people"]:
        return "people"
    for g, values in puzzle.get("groups", {}).items():
        if token in values:
            return g
    raise ValueError(f"unknown token {token!r}")


def _members(puzzle: dict, group: str) -> list[str]:
    """The tokens of a group."""
    return list(puzzle["people"]) if group == "people" else list(puzzle["groups"][group])


# ---- the solver: a CSP built from the puzzle alone ---------------------------------------------------------

class Model:
    """The constraint problem of one puzzle, built only from its stated fields (never the hidden world)."""

    def __init__(self, puzzle: dict) -> None:
        """Variables: a seat per person and per attribute value, a facing bit per person in facing kinds."""
        self.puzzle, self.kind = puzzle, puzzle["kind"]
        self.layout, self.n = LAYOUT[self.kind], len(puzzle["people"])
        self.m = self.n // 2
        self.problem = csp.Problem()
        self.seat: dict[str, int] = {}
        self.face: dict[str, int] = {}
        for g in ["people", *puzzle.get("groups", {})]:
            gid = self.problem.group(self.n)
            for i, token in enumerate(_members(puzzle, g)):
                pinned = self.layout == "round" and g == "people" and i == 0
                self.seat[token] = self.problem.var([0] if pinned else range(self.n), gid)
        if self.kind in FACING_KINDS:
            given = puzzle.get("facing") or {}
            for p in puzzle["people"]:
                self.face[p] = self.problem.var([given[p]] if p in given else [0, 1])
        self.premises: list[csp.Constraint] = []
        if puzzle.get("half"):
            half = self.n // 2
            self.premises.append(csp.Constraint(tuple(self.face.values()), lambda *f: sum(f) == half))

    # -- geometry (vectorised over rows) --
    def dir_vars(self, x: str) -> tuple[int, ...]:
        """Variables that fix x's seat and facing."""
        if self.face:
            if x not in self.face:
                raise ValueError(f"left/right of {x!r} needs a person whose facing is a variable")
            return self.seat[x], self.face[x]
        return (self.seat[x],)

    def direction(self, s: np.ndarray, cols: tuple) -> np.ndarray:
        """Each sitter's turn: +1 facing the centre or north (cols: their facing column, if a variable), else -1."""
        if self.face:
            return 2 * cols[0].astype(np.int16) - 1
        if self.layout == "rows2":
            return np.where(s >= self.m, 1, -1)  # row 1 faces north
        return np.ones_like(s)

    def target(self, rel: str, k: int, s: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Seat k steps from s in the sitter's own rel direction ("faces", "opp": across), -1 when none."""
        n, m = self.n, self.m
        if rel == "same":
            return s
        if rel == "opp":
            return (s + n // 2) % n
        if self.layout == "round":
            return (s + (d * k if rel == "left" else -d * k)) % n  # facing the centre, left is clockwise
        if self.layout == "row":
            t = s - d * k if rel == "left" else s + d * k  # facing north, left is west (lower seats)
            return np.where((t >= 0) & (t < n), t, -1)
        r, c = s // m, s % m
        if rel == "faces":
            return (1 - r) * m + c
        c2 = c - d * k if rel == "left" else c + d * k  # in the north-facing row (r=1) left is west
        return np.where((c2 >= 0) & (c2 < m), r * m + c2, -1)

    def adjacent(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Neighbouring seats (round: wrapping; rows: same row)."""
        if self.layout == "round":
            return np.isin((a - b) % self.n, (1, self.n - 1))
        if self.layout == "row":
            return np.abs(a - b) == 1
        return (a // self.m == b // self.m) & (np.abs(a - b) == 1)

    def is_end(self, s: np.ndarray) -> np.ndarray:
        """At an extreme end of one's row."""
        c = s % self.m if self.layout == "rows2" else s
        last = self.m - 1 if self.layout == "rows2" else self.n - 1
        return (c == 0) | (c == last)

    def left_end(self, s: np.ndarray) -> np.ndarray:
        """The column at a rows2 sitter's own left end (north-facing row: west, column 0)."""
        return np.where(s >= self.m, 0, self.m - 1)

    def moved(self, rel: str, x: str, k: int, cols: tuple) -> np.ndarray:
        """The seat rel/k from x (cols: x's dir_vars columns); composite "faces_left"/"faces_right", "nbr"."""
        s = cols[0]
        if rel in ("same", "opp", "faces"):
            return self.target(rel, k, s, np.ones_like(s))
        if rel == "nbr":
            lo = np.where(self.adjacent(s, s - 1) & (s - 1 >= 0), s - 1, -1)
            hi = np.where(self.adjacent(s, s + 1) & (s + 1 < self.n), s + 1, -1)
            return np.where((lo >= 0) & (hi >= 0), -1, np.maximum(lo, hi))
        base = rel.removeprefix("faces_")
        t = self.target(base, k, s, self.direction(s, cols[1:]))
        if rel.startswith("faces_"):
            return np.where(t >= 0, self.target("faces", 0, t, t), -1)
        return t

    def rel_vars(self, rel: str, x: str) -> tuple[int, ...]:
        """Variables a relation from x needs (facing only for left/right)."""
        return self.dir_vars(x) if rel in ("left", "right", "faces_left", "faces_right") else (self.seat[x],)

    # -- clues --
    def constraint(self, clue: list) -> csp.Constraint:
        """The meaning of one clue as a constraint."""
        vars_, test = getattr(self, "_c_" + clue[0])(*clue[1:])
        return csp.Constraint(tuple(vars_), test)

    def _rel(self, rel: str, a: str, b: str, k: int) -> tuple:
        """a sits at the seat rel/k from b (b's facing decides left/right)."""
        return ((self.seat[a], *self.rel_vars(rel, b)),
                lambda sa, *cb: sa == self.moved(rel, b, k, cb))

    def _c_left(self, a: str, b: str, k: int) -> tuple:
        """A sits k seats to b's own left."""
        return self._rel("left", a, b, k)

    def _c_right(self, a: str, b: str, k: int) -> tuple:
        """A sits k seats to b's own right."""
        return self._rel("right", a, b, k)

    def _c_opp(self, a: str, b: str) -> tuple:
        """A sits opposite b (even round tables)."""
        return self._rel("opp", a, b, 0)

    def _c_faces(self, a: str, b: str) -> tuple:
        """A faces b (same column, other row)."""
        return self._rel("faces", a, b, 0)

    def _c_faces_rel(self, a: str, b: str, rel: str, k: int) -> tuple:
        """A faces the person k seats to b's own left/right."""
        return self._rel("faces_" + rel, a, b, k)

    def _c_not_faces(self, a: str, b: str) -> tuple:
        """A does not face b."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: sa != self.target("faces", 0, sb, sb)

    def _c_adj(self, a: str, b: str) -> tuple:
        """A and b are neighbours."""
        return (self.seat[a], self.seat[b]), self.adjacent

    def _c_not_adj(self, a: str, b: str) -> tuple:
        """A and b are different people, not neighbours."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: (sa != sb) & ~self.adjacent(sa, sb)

    def _c_between(self, a: str, b: str, c: str) -> tuple:
        """A is a neighbour of both b and c."""
        return ((self.seat[a], self.seat[b], self.seat[c]),
                lambda sa, sb, sc: self.adjacent(sa, sb) & self.adjacent(sa, sc))

    def _c_same(self, a: str, b: str) -> tuple:
        """A and b are the same person (e.g. Ann drinks tea)."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: sa == sb

    def _c_not_same(self, a: str, b: str) -> tuple:
        """A and b are different people."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: sa != sb

    def _c_face(self, a: str, f: int) -> tuple:
        """A faces f (1: the centre / north)."""
        return (self.face[a],), lambda fa: fa == f

    def _c_same_face(self, a: str, b: str) -> tuple:
        """A and b face the same way."""
        return (self.face[a], self.face[b]), lambda fa, fb: fa == fb

    def _c_diff_face(self, a: str, b: str) -> tuple:
        """A and b face opposite ways."""
        return (self.face[a], self.face[b]), lambda fa, fb: fa != fb

    def _c_end(self, a: str) -> tuple:
        """A sits at an extreme end of their row."""
        return (self.seat[a],), self.is_end

    def _c_not_end(self, a: str) -> tuple:
        """A sits at neither end."""
        return (self.seat[a],), lambda sa: ~self.is_end(sa)

    def _c_gap(self, a: str, b: str, k: int) -> tuple:
        """Exactly k people sit between a and b (one row)."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: np.abs(sa - sb) == k + 1

    def _c_pos(self, a: str, side: str, k: int) -> tuple:
        """A sits k-th from the west/east end."""
        seat = k - 1 if side == "west" else self.n - k
        return (self.seat[a],), lambda sa: sa == seat

    def _c_same_row(self, a: str, b: str) -> tuple:
        """A and b share a row."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: sa // self.m == sb // self.m

    def _c_diff_row(self, a: str, b: str) -> tuple:
        """A and b sit in different rows."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: sa // self.m != sb // self.m

    def _c_diag(self, a: str, b: str) -> tuple:
        """A and b sit at diagonally opposite corners."""
        m = self.m

        def test(sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
            ca, cb = sa % m, sb % m
            corners = ((ca == 0) & (cb == m - 1)) | ((ca == m - 1) & (cb == 0))
            return (sa // m != sb // m) & corners
        return (self.seat[a], self.seat[b]), test

    def _c_row(self, a: str, f: int) -> tuple:
        """A sits in the row facing north (f=1) or south."""
        return (self.seat[a],), lambda sa: (sa >= self.m) == bool(f)  # row 1 faces north

    def _c_lend(self, a: str) -> tuple:
        """A sits at the extreme left end of their row (their own left)."""
        return (self.seat[a],), lambda sa: sa % self.m == self.left_end(sa)

    def _c_rend(self, a: str) -> tuple:
        """A sits at the extreme right end of their row."""
        return (self.seat[a],), lambda sa: sa % self.m == self.m - 1 - self.left_end(sa)

    # -- the question --
    def question_vars(self) -> tuple[int, ...]:
        """The variables the question's answer is read from (listed in every table)."""
        q = self.puzzle["question"]
        if q[0] in ("who", "attr"):
            rel, x = q[-3], q[-2]
            return self.rel_vars(rel, x)
        if q[0] == "count_between":
            return self.seat[q[1]], self.seat[q[2]]
        if q[0] == "count_face":
            return tuple(self.face.values())
        if q[0] == "statement":
            return tuple(dict.fromkeys(v for s in q[1] for v in self.constraint(s).vars))
        return ()

    def codes(self, table: csp.Table) -> tuple[np.ndarray, list[str], list[str]]:
        """Per-row answer codes, the answer text of each code >= 0, and the free members code FREE (-2) stands
        for (any of them: no clue restricts them); code -1 is NO_ANSWER."""
        q, rows = self.puzzle["question"], len(table.rows)
        if not all(table.has(v) for v in self.question_vars()):
            raise ValueError("the table must list the question's variables (solve with keep=question_vars())")
        if q[0] in ("who", "attr"):
            rel, x, k = q[-3], q[-2], q[-1]
            cols = tuple(table.col(v) for v in self.rel_vars(rel, x))
            return self._occupants(table, "people" if q[0] == "who" else q[1], self.moved(rel, x, k, cols))
        if q[0] in ("at_end", "at_pos"):
            return self._occupants(table, "people", np.full(rows, _fixed_seat(self.puzzle), dtype=np.int16))
        if q[0] == "count_between":
            gaps = np.abs(table.col(self.seat[q[1]]) - table.col(self.seat[q[2]])) - 1
            return gaps.astype(np.int16), [str(i) for i in range(self.n)], []
        if q[0] == "count_face":
            ones = sum(table.col(v).astype(np.int16) for v in self.face.values())
            return np.asarray(ones if q[1] == 1 else self.n - ones), [str(i) for i in range(self.n + 1)], []
        return self._statement_codes(table)

    def answers(self, table: csp.Table) -> set[str]:
        """Every answer the table's worlds give (NO_ANSWER where the question has none)."""
        codes, names, free = self.codes(table)
        found = np.unique(codes).tolist()
        out = {names[c] for c in found if c >= 0}
        return out | ({NO_ANSWER} if -1 in found else set()) | (set(free) if FREE in found else set())

    def wrong_share(self, table: csp.Table, truth: str) -> float:
        """The share of consistent worlds whose answer is not `truth` (0 when proven; rows weigh equally, as
        every row completes the free variables in the same number of ways)."""
        codes, names, free = self.codes(table)
        if not len(codes):
            return 0.0
        wrong = np.ones(len(codes))
        if truth in names:
            wrong[codes == names.index(truth)] = 0.0
        if truth in free:
            wrong[codes == FREE] = 1.0 - 1.0 / len(free)
        return float(wrong.mean())

    def _occupants(self, table: csp.Table, group: str, seat: np.ndarray) -> tuple[np.ndarray, list[str], list[str]]:
        """Codes of who of `group` sits at `seat` per row (FREE: a free member, any of them could)."""
        members = _members(self.puzzle, group)
        listed = [t for t in members if table.has(self.seat[t])]
        free = [t for t in members if not table.has(self.seat[t])]
        codes = np.where(seat < 0, -1, FREE).astype(np.int16)
        if listed:
            grid = np.stack([table.col(self.seat[t]) for t in listed], axis=1) == seat[:, None]
            hit = grid.any(axis=1)
            codes[hit] = grid.argmax(axis=1)[hit]
        return codes, listed, free

    def _statement_codes(self, table: csp.Table) -> tuple[np.ndarray, list[str], list[str]]:
        """Per row: the index of the one true statement, or -1 when not exactly one is true."""
        truth = [self.holds(s, table) for s in self.puzzle["question"][1]]
        grid = np.stack(truth, axis=1)
        one = grid.sum(axis=1) == 1
        return np.where(one, grid.argmax(axis=1), -1).astype(np.int16), statement_texts(self.puzzle), []

    def world_table(self, world: dict) -> csp.Table:
        """A one-row table holding a complete hidden world (for checking the generator against the solver)."""
        values = {self.seat[t]: s for t, s in world["seat"].items()}
        values.update({self.face[p]: f for p, f in world.get("face", {}).items() if p in self.face})
        vars_ = sorted(values)
        return csp.Table(self.problem, vars_, np.array([[values[v] for v in vars_]], dtype=np.int16))

    def holds(self, clue: list, table: csp.Table) -> np.ndarray:
        """The clue's truth in every row of a table that lists its variables."""
        c = self.constraint(clue)
        return np.broadcast_to(np.asarray(c.test(*(table.col(v) for v in c.vars)), dtype=bool), (len(table.rows),))


def _fixed_seat(puzzle: dict) -> int:
    """The seat an "at_end" (rows) or "at_pos" (row) question asks about."""
    q, n = puzzle["question"], len(puzzle["people"])
    if q[0] == "at_pos":
        return q[2] - 1 if q[1] == "west" else n - q[2]
    m, row = n // 2, q[1]  # row 1 faces north; its left end is west (column 0)
    left_col = 0 if row == 1 else m - 1
    col = left_col if q[2] == "left" else m - 1 - left_col
    return row * m + col


def _solve(model: Model, clues: list[list], budget: int | None = None) -> csp.Table:
    """All worlds consistent with the premises and clues (question variables listed)."""
    cons = model.premises + [model.constraint(c) for c in clues]
    return csp.solve(model.problem, cons, keep=model.question_vars(), budget=budget)


def possible_answers(puzzle: dict) -> set[str]:
    """Every answer consistent with the stated premises and clues (a proof needs exactly one)."""
    model = Model(puzzle)
    return model.answers(_solve(model, puzzle["clues"]))


def _trace(puzzle: dict) -> tuple[Model, list[int]]:
    """World counts before any clue and after each clue in order (incremental solve)."""
    model = Model(puzzle)
    table = csp.solve(model.problem, model.premises)  # counts need no question variables listed
    counts = [table.count()]
    for clue in puzzle["clues"]:
        table = csp.add(table, model.constraint(clue))
        counts.append(table.count())
    return model, counts


def work(puzzle: dict) -> dict:
    """The solver's work: log2 worlds before any clue (premises applied) and after each clue, clues needed."""
    _, counts = _trace(puzzle)
    log2 = [round(math.log2(max(c, 1)), 3) for c in counts]
    return {"steps": len(puzzle["clues"]), "log2_space": log2[0], "log2_after": log2[1:], "worlds": counts[-1]}


# ---- text ----------------------------------------------------------------------------------------------

def _cap(text: str) -> str:
    """The text with a capital first letter."""
    return text[0].upper() + text[1:]


def _np(puzzle: dict, token: str) -> str:
    """A token as a noun phrase ("Ann", "the tea drinker")."""
    g = group_of(puzzle, token)
    return token if g == "people" else GROUPS[g]["noun"].format(v=token)


def _comp(puzzle: dict, token: str) -> str:
    """A token as the complement of "is" ("Ann", "Thai", "the tea drinker")."""
    g = group_of(puzzle, token)
    return token if g == "people" else GROUPS[g]["comp"].format(v=token)


def _side(rel: str, k: int, x: str, variant: int) -> str:
    """ "immediately to the left of X", "second to the left of X", "two seats to X's left"... """
    if k == 1:
        return (f"immediately to the {rel} of {x}", f"to {x}'s immediate {rel}")[variant % 2]
    return (f"{ORD[k]} to the {rel} of {x}", f"{NUM[k]} seats to {x}'s {rel}")[variant % 2]


def _dir_word(puzzle: dict, f: int) -> str:
    """A facing value in words for the puzzle's layout."""
    if puzzle["kind"] == "seating_mixed_facing":
        return "the centre" if f else "outward"
    return "north" if f else "south"


def _list(items: list[str]) -> str:
    """ "A, B and C". """
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]


def clue_variants(puzzle: dict, clue: list) -> list[str]:
    """Every phrasing of a clue (the puzzle stores which one it uses)."""
    t, a = clue[0], _np(puzzle, clue[1])
    A = _cap(a)
    if t in ("left", "right"):
        b, k = _np(puzzle, clue[2]), clue[3]
        terse = f"{A} is {b}'s {t} neighbour." if k == 1 else f"{A} is {ORD[k]} to {b}'s {t}."
        return [f"{A} sits {_side(t, k, b, 0)}.", f"{A} sits {_side(t, k, b, 1)}.", terse]
    if t == "faces_rel":
        b, rel, k = _np(puzzle, clue[2]), clue[3], clue[4]
        return [f"{A} faces the person {_side(rel, k, b, 0)}.", f"{A} sits facing the person {_side(rel, k, b, 1)}."]
    if t in ("same", "not_same"):
        g = GROUPS[group_of(puzzle, clue[2])]
        verb = g["pred" if t == "same" else "neg"].format(v=clue[2])
        noun = _cap(g["noun"].format(v=clue[2]))
        return [f"{A} {verb}.", f"{noun} is {'not ' if t == 'not_same' else ''}{_comp(puzzle, clue[1])}."]
    if t in ("face", "row"):
        d = _dir_word(puzzle, clue[2])
        second = f"{A} sits in the row facing {d}." if t == "row" else f"{A} sits facing {d}."
        return [f"{A} faces {d}.", second]
    if t in UNARY:
        return _unary_variants(puzzle, t, A, a)
    if t == "pos":
        side, k = clue[2], clue[3]
        at = "at the" if k == 1 else f"{ORD[k]} from the"
        return [f"{A} sits {at} {side} end.", f"{A} is {at} {side} end."]
    if t == "between":
        b, c = _np(puzzle, clue[2]), _np(puzzle, clue[3])
        return [f"{A} sits between {b} and {c}.", f"{A} sits next to both {b} and {c}."]
    return _pair_variants(puzzle, clue, A, a)


def _unary_variants(puzzle: dict, t: str, A: str, a: str) -> list[str]:
    """Phrasings of the end clues."""
    row = "their row" if LAYOUT[puzzle["kind"]] == "rows2" else "the row"
    if t == "end":
        return [f"{A} sits at an extreme end.", f"{A} sits at one end of {row}.", f"{A} is at an end of {row}."]
    if t == "not_end":
        return [f"{A} does not sit at an end.", f"{A} sits at neither end of {row}.", f"{A} is not at an end."]
    side = "left" if t == "lend" else "right"
    return [f"{A} sits at the extreme {side} end of {row}.", f"No one sits to {a}'s {side} in {row}."]


def _pair_variants(puzzle: dict, clue: list, A: str, a: str) -> list[str]:
    """Phrasings of the symmetric two-person clues."""
    t, b = clue[0], _np(puzzle, clue[2])
    if t == "gap":
        k = clue[3]
        folk, are = ("person", "is") if k == 1 else ("people", "are")
        return [f"Exactly {k} {folk} {'sits' if k == 1 else 'sit'} between {a} and {b}.",
                f"{A} and {b} have exactly {k} {folk} between them.",
                f"There {are} exactly {k} {folk} between {a} and {b}."]
    table = {
        "opp": [f"{A} sits opposite {b}.", f"{A} and {b} sit opposite each other.",
                f"{A} is seated directly opposite {b}."],
        "adj": [f"{A} sits next to {b}.", f"{A} and {b} are neighbours.", f"{A} is seated beside {b}."],
        "not_adj": [f"{A} does not sit next to {b}.", f"{A} and {b} are not neighbours.",
                    f"{A} is not seated beside {b}."],
        "same_face": [f"{A} and {b} face the same way.", f"{A} faces the same direction as {b}."],
        "diff_face": [f"{A} and {b} face opposite ways.", f"{A} faces the opposite way to {b}."],
        "faces": [f"{A} faces {b}.", f"{A} sits facing {b}.", f"{A} and {b} face each other."],
        "not_faces": [f"{A} does not face {b}.", f"{A} and {b} do not face each other."],
        "same_row": [f"{A} and {b} sit in the same row.", f"{A} sits in the same row as {b}."],
        "diff_row": [f"{A} and {b} sit in different rows.", f"{A} does not sit in {b}'s row."],
        "diag": [f"{A} and {b} sit at diagonally opposite corners.", f"{A} is in the corner diagonally opposite {b}."],
    }
    return table[t]


def statement_texts(puzzle: dict) -> list[str]:
    """The statements of a "which is true" question, as the choice texts."""
    q = puzzle["question"]
    return [clue_variants(puzzle, s)[p].rstrip(".") for s, p in zip(q[1], puzzle["s_phrasing"])]


def _who_phrase(puzzle: dict, rel: str, x: str, k: int, variant: int) -> str:
    """The person a question points at ("the person opposite Ann", "the Thai")."""
    xs = _np(puzzle, x)
    if rel == "same":
        return xs
    if rel == "opp":
        return f"the person opposite {xs}"
    if rel == "faces":
        return f"the person facing {xs}"
    if variant == 1:  # the terse form: "Ann's left neighbour", "the person second to Ann's left"
        return f"{xs}'s {rel} neighbour" if k == 1 else f"the person {ORD[k]} to {xs}'s {rel}"
    return f"the person {_side(rel, k, xs, 0)}"


def question_variants(puzzle: dict) -> list[str]:
    """Every phrasing of the puzzle's question."""
    q = puzzle["question"]
    if q[0] == "attr":
        return [t.format(who=_who_phrase(puzzle, q[2], q[3], q[4], i)) for i, t in enumerate(GROUPS[q[1]]["q"])]
    if q[0] == "who":
        return _who_variants(puzzle, q[1], q[2], q[3])
    if q[0] == "at_end":
        d = _dir_word(puzzle, q[1])
        return [f"Who sits at the extreme {q[2]} end of the row facing {d}?",
                f"In the row facing {d}, who sits at the extreme {q[2]} end?"]
    if q[0] == "at_pos":
        at = "at the" if q[2] == 1 else f"{ORD[q[2]]} from the"
        return [f"Who sits {at} {q[1]} end?", f"Who is seated {at} {q[1]} end?"]
    if q[0] == "count_between":
        return [f"How many people sit between {q[1]} and {q[2]}?",
                f"How many people are seated between {q[1]} and {q[2]}?"]
    if q[0] == "count_face":
        d = _dir_word(puzzle, q[1])
        return [f"How many people face {d}?", f"How many of them face {d}?"]
    return ["Which statement is true?", "Which of these is true?"]


def _who_variants(puzzle: dict, rel: str, x: str, k: int) -> list[str]:
    """Phrasings of "who" questions."""
    xs = _np(puzzle, x)
    if rel == "same":
        g = GROUPS[group_of(puzzle, x)]
        return [f"Who {g['pred'].format(v=x)}?", f"Who is {g['comp'].format(v=x)}?"]
    if rel == "opp":
        return [f"Who sits opposite {xs}?", f"Who is seated directly opposite {xs}?"]
    if rel == "faces":
        return [f"Who faces {xs}?", f"Who sits facing {xs}?"]
    if rel == "nbr":
        return [f"Who sits next to {xs}?", f"Who is {xs}'s neighbour?"]
    if rel.startswith("faces_"):
        base = rel.removeprefix("faces_")
        return [f"Who faces the person {_side(base, k, xs, 0)}?",
                f"Who sits facing the person {_side(base, k, xs, 1)}?"]
    return [f"Who sits {_side(rel, k, xs, 0)}?", f"Who sits {_side(rel, k, xs, 1)}?"]


def intro_variants(puzzle: dict) -> list[str]:
    """Every phrasing of the setup sentence(s)."""
    kind, people, n = puzzle["kind"], puzzle["people"], len(puzzle["people"])
    cast = _list(list(people))
    own = "Left/right are each person's own."
    if kind == "seating_attributes":
        groups = puzzle["groups"]
        has = " and ".join(f"{GROUPS[g]['label']} ({', '.join(v)})" for g, v in groups.items())
        return [f"{cast} sit round a table facing in, each with a different {has}.",
                f"{cast} sit at a round table facing the centre, each with a different {has}."]
    if kind == "seating_mixed_facing":
        facing = _facing_setup(puzzle, "the centre", "outward")
        jobs = f" Jobs, one each: {', '.join(puzzle['groups']['job'])}." if puzzle.get("groups") else ""
        return [f"{cast} sit round a table. {facing}{jobs} {own}",
                f"{cast} sit at a round table. {facing}{jobs} {own}"]
    if kind == "seating_parallel_rows":
        m = n // 2
        return [f"{cast} sit in two rows of {m} facing each other; one row faces north, the other south. {own}",
                f"{cast} sit in two facing rows of {m}, one facing north and one south. {own}"]
    facing = _facing_setup(puzzle, "north", "south")
    return [f"{cast} sit in a row running west to east. {facing} {own}",
            f"{cast} sit in one west-east row. {facing} {own}"]


def _facing_setup(puzzle: dict, yes: str, no: str) -> str:
    """The facing premise: all stated, four-and-four, or each one way or the other."""
    n = len(puzzle["people"])
    given = puzzle.get("facing") or {}
    if given:
        ones = [p for p in puzzle["people"] if given.get(p) == 1]
        verb = "faces" if len(ones) == 1 else "face"
        return f"{_list(ones)} {verb} {yes}; the others face {no}."
    if puzzle.get("half"):
        return f"{NUM[n // 2].capitalize()} face {yes} and {NUM[n // 2]} face {no}."
    return f"Each faces {yes} or {no}."


def render(puzzle: dict) -> str:
    """The full question text, rendered only from the structured puzzle."""
    clues = [clue_variants(puzzle, c)[p] for c, p in zip(puzzle["clues"], puzzle["phrasing"])]
    return " ".join([intro_variants(puzzle)[puzzle["intro"]], *clues,
                     question_variants(puzzle)[puzzle["q_phrasing"]]])


def explain(puzzle: dict, answer: str) -> str:
    """The solver's deduction: worlds left after each clue in order, then the answer they share (<= 100 words)."""
    _, counts = _trace(puzzle)
    noun = "seatings" if LAYOUT[puzzle["kind"]] == "round" else "arrangements"
    texts = [clue_variants(puzzle, c)[p].rstrip(".") for c, p in zip(puzzle["clues"], puzzle["phrasing"])]
    left = f"{counts[-1]:,} {noun} left" if counts[-1] > 1 else f"the one {noun[:-1]} left"
    end = (f"only '{answer}' holds in {left}." if puzzle["question"][0] == "statement"
           else f"the answer in {left} is {answer}.")
    text = ""
    for named in (True, False):  # name each clue when the text stays short, else number them
        steps = [f"clue {i + 1}{f' ({t})' if named else ''}: {c:,}" for i, (t, c) in enumerate(zip(texts, counts[1:]))]
        text = f"Possible {noun} at the start: {counts[0]:,}. After " + "; ".join(steps) + f". So {end}"
        if len(text.split()) < MAX_WORDS:
            break
    return text


# ---- the hidden world and its true clues (plain Python, independent of the vectorised solver) ----------

def _py_dir(puzzle: dict, world: dict, x: str) -> int:
    """x's own turn: +1 facing the centre/north (and in the south row, which faces north), else -1."""
    if puzzle["kind"] in FACING_KINDS:
        return 1 if world["face"][x] else -1
    if LAYOUT[puzzle["kind"]] == "rows2":
        return 1 if world["seat"][x] >= len(puzzle["people"]) // 2 else -1
    return 1


def _py_move(puzzle: dict, world: dict, rel: str, x: str, k: int) -> int | None:
    """The seat rel/k from x in plain Python (None when it falls off a row)."""
    n, s = len(puzzle["people"]), world["seat"][x]
    m, layout = n // 2, LAYOUT[puzzle["kind"]]
    if rel == "same":
        return s
    if rel == "opp":
        return (s + n // 2) % n if n % 2 == 0 else None
    if rel == "faces":
        return (s + m) % n  # same column, the other row
    if rel == "nbr":
        near = [t for t in (s - 1, s + 1) if 0 <= t < n and (layout != "rows2" or t // m == s // m)]
        return near[0] if len(near) == 1 else None
    if rel.startswith("faces_"):
        t = _py_move(puzzle, world, rel.removeprefix("faces_"), x, k)
        return None if t is None else (t + m) % n
    d = _py_dir(puzzle, world, x)
    step = -d * k if rel == "left" else d * k  # rows: the left is west for +1 (north-facing)
    if layout == "round":
        return (s - step) % n  # round tables turn the other way: facing the centre, left is clockwise (+1)
    if layout == "row":
        return s + step if 0 <= s + step < n else None
    c = s % m + step
    return (s // m) * m + c if 0 <= c < m else None


def _py_holds(puzzle: dict, world: dict, clue: list) -> bool:
    """A clue's truth in the hidden world, computed directly from seat numbers."""
    t = clue[0]
    if t in ("left", "right", "opp", "faces"):
        return _py_move(puzzle, world, t, clue[2], clue[3] if len(clue) > 3 else 0) == world["seat"][clue[1]]
    if t == "faces_rel":
        return _py_move(puzzle, world, "faces_" + clue[3], clue[2], clue[4]) == world["seat"][clue[1]]
    if t in ("face", "same_face", "diff_face"):
        F = world["face"]
        other = clue[2] if t == "face" else F[clue[2]]
        return (F[clue[1]] == other) == (t != "diff_face")
    if t in ("end", "not_end", "lend", "rend", "row", "pos"):
        return _py_unary(puzzle, world["seat"][clue[1]], clue)
    return _py_pair(puzzle, [world["seat"][x] for x in clue[1:] if isinstance(x, str)], clue)


def _py_unary(puzzle: dict, a: int, clue: list) -> bool:
    """End, row and position clues about a person at seat a."""
    n, t = len(puzzle["people"]), clue[0]
    m, rows2 = n // 2, LAYOUT[puzzle["kind"]] == "rows2"
    col, last = (a % m, m - 1) if rows2 else (a, n - 1)
    if t == "pos":
        return a == (clue[3] - 1 if clue[2] == "west" else n - clue[3])
    if t == "row":
        return (a >= m) == bool(clue[2])  # row 1 (south side) faces north
    if t in ("lend", "rend"):
        left = 0 if a >= m else m - 1  # the north-facing row has west on its left
        return col == (left if t == "lend" else m - 1 - left)
    return (col in (0, last)) == (t == "end")


def _py_pair(puzzle: dict, seats: list[int], clue: list) -> bool:
    """Clues relating two or three people by seat numbers."""
    n, t, layout = len(puzzle["people"]), clue[0], LAYOUT[puzzle["kind"]]
    m = n // 2

    def near(x: int, y: int) -> bool:
        if layout == "round":
            return (x - y) % n in (1, n - 1)
        return abs(x - y) == 1 and (layout == "row" or x // m == y // m)
    a, b = seats[0], seats[1]
    if t == "between":
        return near(a, b) and near(a, seats[2])
    if t == "gap":
        return abs(a - b) == clue[3] + 1
    return {"adj": near(a, b), "not_adj": a != b and not near(a, b), "same": a == b, "not_same": a != b,
            "not_faces": (b + m) % n != a, "same_row": a // m == b // m, "diff_row": a // m != b // m,
            "diag": a // m != b // m and {a % m, b % m} == {0, m - 1}}[t]


def _py_answer(puzzle: dict, world: dict) -> str:
    """The question's answer in the hidden world, computed directly (NO_ANSWER if it has none)."""
    q = puzzle["question"]
    if q[0] in ("who", "attr", "at_end", "at_pos"):
        seat = _fixed_seat(puzzle) if q[0] in ("at_end", "at_pos") else _py_move(puzzle, world, q[-3], q[-2], q[-1])
        group = q[1] if q[0] == "attr" else "people"
        hits = [t for t in _members(puzzle, group) if world["seat"][t] == seat]
        return hits[0] if hits else NO_ANSWER
    if q[0] == "count_between":
        return str(abs(world["seat"][q[1]] - world["seat"][q[2]]) - 1)
    if q[0] == "count_face":
        return str(sum(1 for p in puzzle["people"] if world["face"][p] == q[1]))
    true = [i for i, s in enumerate(q[1]) if _py_holds(puzzle, world, s)]
    return statement_texts(puzzle)[true[0]] if len(true) == 1 else NO_ANSWER


def _ks(puzzle: dict, level: int) -> list[int]:
    """Distances "k-th to the left" may use: round tables up to (n-1)/2 (beyond it left and right meet),
    two rows up to m-1, one row up to n-1."""
    n, layout = len(puzzle["people"]), LAYOUT[puzzle["kind"]]
    top = (n - 1) // 2 if layout == "round" else (n // 2 - 1 if layout == "rows2" else n - 1)
    return [k for k in KS[level] if k <= top]


def _syntax(puzzle: dict, level: int, t: str) -> list[list]:
    """Every well-formed clue of type t over the puzzle's tokens (true or false in the world)."""
    kind, people = puzzle["kind"], list(puzzle["people"])
    attrs = [v for vals in puzzle.get("groups", {}).values() for v in vals]
    tokens, n = people + attrs, len(people)
    anchors = people if kind in FACING_KINDS else tokens
    ks = _ks(puzzle, level)
    if t == "opp" and (n % 2 or LAYOUT[kind] != "round"):
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
    pool = people if t in ("same_face", "diff_face") or LAYOUT[kind] != "round" else tokens
    pairs = [(a, b) for i, a in enumerate(pool) for b in pool[i + 1:]]
    if t == "gap":
        return [[t, a, b, k] for a, b in pairs for k in range(1, n - 1)]
    return [[t, a, b] for a, b in pairs]


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


# ---- building a puzzle -----------------------------------------------------------------------------------

def _cast(rng: random.Random, names: list, n: int) -> list[str]:
    """n people: 3-4 letter names for small casts, single letters (aptitude style) from 7 up or if short."""
    plain = [x[0] if isinstance(x, (tuple, list)) else x for x in names]
    short = sorted({x for x in plain if len(x) == 3})  # 3-letter names keep 5 clues inside 400 characters
    if len(short) < n:
        short = sorted({x for x in plain if 3 <= len(x) <= 4})
    if n >= 7 or len(short) < n:
        start = rng.randrange(len(LETTERS) - n + 1)
        return list(LETTERS[start:start + n])
    return sorted(rng.sample(short, n))


def _skeleton(rng: random.Random, names: list, kind: str, level: int) -> tuple[dict, dict]:
    """A puzzle without clues or question, and the hidden world it is read from."""
    n = rng.choice(SIZES[kind][level])
    people = _cast(rng, names, n)
    puzzle: dict = {"kind": kind, "people": people, "groups": {}, "facing": {}, "half": False}
    if kind == "seating_attributes":
        chosen = ["nation", "drink"] if rng.random() < 0.5 else rng.sample(["nation", "drink", "pet", "sport"], 2)
        puzzle["groups"] = {g: rng.sample(GROUPS[g]["values"], n) for g in chosen}
    if kind == "seating_mixed_facing" and rng.random() < JOBS_SHARE[level]:
        puzzle["groups"] = {"job": rng.sample(GROUPS["job"]["values"], n)}
    world = {"seat": {}, "face": {}}
    for g in ["people", *puzzle["groups"]]:
        seats = rng.sample(range(n), n)
        if g == "people" and LAYOUT[kind] == "round":  # pin people[0] to seat 0, as the solver does
            seats = [(s - seats[0]) % n for s in seats]
        world["seat"].update(zip(_members(puzzle, g), seats))
    if kind in FACING_KINDS:
        k = n // 2 if level == 3 and kind == "seating_mixed_facing" else rng.randint(1, n - 1)
        ones = set(rng.sample(people, k))
        world["face"] = {p: int(p in ones) for p in people}
        puzzle["half"] = level == 3 and kind == "seating_mixed_facing"
        if level == 1:
            puzzle["facing"] = dict(world["face"])
    return puzzle, world


def _question(rng: random.Random, puzzle: dict, world: dict, level: int) -> list | None:
    """A question form with an answer in the hidden world (None after a few misses)."""
    forms = {f: w for f, w in QUESTIONS[puzzle["kind"]][level].items() if f != "attr" or puzzle["groups"]}
    for _ in range(8):
        form = rng.choices(list(forms), weights=list(forms.values()))[0]
        q = _question_of(rng, puzzle, world, level, form)
        if q is None:
            continue
        puzzle["question"] = q
        if q[0] == "statement" or _py_answer(puzzle, world) != NO_ANSWER:
            return q
    return None


def _question_of(rng: random.Random, puzzle: dict, world: dict, level: int, form: str) -> list | None:
    """One random question of a form (statements are filled in later)."""
    people, n, kind = puzzle["people"], len(puzzle["people"]), puzzle["kind"]
    attrs = [v for vals in puzzle["groups"].values() for v in vals]
    k = rng.choice(_ks(puzzle, level))
    side = rng.choice(["left", "right"])
    if form in ("who", "attr"):
        rels = [side] * 3 + (["opp"] if n % 2 == 0 and LAYOUT[kind] == "round" else [])
        if attrs:
            rels.append("same")
        rel = rng.choice(rels)
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
    if form in ("faces", "nbr"):
        return ["who", form, rng.choice(people), 0]
    if form == "faces_rel":
        return ["who", "faces_" + side, rng.choice(people), k]
    if form == "at_end":
        return ["at_end", rng.choice([0, 1]), side]
    if form == "at_pos":
        return ["at_pos", rng.choice(["west", "east"]), rng.randint(1, (n + 1) // 2)]
    if form == "count_between":
        x, y = rng.sample(people, 2)
        return ["count_between", x, y]
    if form == "count_face":
        return ["count_face", rng.choice([0, 1])]
    return _statements(rng, puzzle, world, level)


def _statements(rng: random.Random, puzzle: dict, world: dict, level: int) -> list | None:
    """A "which is true" question: one true statement and three false ones about the hidden world."""
    weights = {t: w for t, w in WEIGHTS[puzzle["kind"]][level].items() if t in STATEMENT_TYPES}
    if puzzle.get("facing"):
        weights.pop("face", None)
    types = rng.sample(list(weights), min(4, len(weights)))
    true = [c for c in _syntax(puzzle, level, types[0]) if _py_holds(puzzle, world, c)]
    if not true:
        return None
    picked = [rng.choice(true)]
    for t in [types[0], *types[1:3]]:
        false = [c for c in _syntax(puzzle, level, t) if not _py_holds(puzzle, world, c) and c not in picked]
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
            if _py_holds(puzzle, world, c) and _key(c) not in banned]
    people = set(puzzle["people"])
    factor = {id(c): INDIRECT[level] for c in true
              if puzzle["groups"] and not people & {x for x in c[1:] if isinstance(x, str)}}
    return _weighted_order(true, weights, rng, factor)


def _max_clues(kind: str, level: int) -> int:
    """The most clues a puzzle of this kind and level may keep."""
    return MAX_CLUES_KIND.get(kind, MAX_CLUES)[level]


def _bump(stats: dict, reason: str) -> None:
    """Count one rejection."""
    stats[reason] = stats.get(reason, 0) + 1


def _choose(model: Model, world_table: csp.Table, cands: list[list], truth: str, level: int,
            stats: dict) -> list[list] | None:
    """Add true clues until the answer is unique: of the next LOOK candidates (weighted order) take the one
    leaving the smallest share of worlds with a wrong answer, then fewest worlds; skip clues that add
    nothing or prove the answer alone."""
    qvars = model.question_vars()
    statement = model.puzzle["question"][0] == "statement"
    base = csp.solve(model.problem, model.premises, keep=() if statement else qvars, budget=BUDGET)

    def wrong(t: csp.Table) -> float:
        """Share of wrong worlds; a statement question waits (1.0) until clues name all statements' people."""
        return model.wrong_share(t, truth) if all(t.has(v) for v in qvars) else 1.0
    table, chosen, pool, tries = base, [], list(cands), 0
    while pool and tries < MAX_TRIES and len(chosen) < _max_clues(model.puzzle["kind"], level) + SPARE:
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
        if wrong(csp.add(base, model.constraint(clue))) == 0:
            continue  # proves the answer on its own: too direct
        table = nxt
        chosen.append(clue)
        if left == 0:
            return chosen
    _bump(stats, "undetermined")
    return None


def _prune(model: Model, chosen: list[list], rng: random.Random) -> list[list]:
    """Drop every clue the proof does not need (each one left is necessary). Raises csp.TooBig."""
    kept = list(chosen)
    for clue in rng.sample(chosen, len(chosen)):
        trial = [c for c in kept if c is not clue]
        if trial and len(model.answers(_solve(model, trial, BUDGET))) == 1:
            kept = trial
    return kept


def _distractors(rng: random.Random, puzzle: dict, truth: str) -> list[str]:
    """Three wrong choices; the answer is proven unique, so each is proven impossible."""
    q, n = puzzle["question"], len(puzzle["people"])
    if q[0] == "statement":
        return [t for t in statement_texts(puzzle) if t != truth]
    if q[0].startswith("count"):
        top = n - 2 if q[0] == "count_between" else n
        values = [str(v) for v in range(0, top + 1) if str(v) != truth]
        values.sort(key=lambda v: abs(int(v) - int(truth)) + 2 * rng.random())
        return values[:3]
    group = q[1] if q[0] == "attr" else "people"
    anchor = q[-2] if q[0] in ("who", "attr") else None
    others = [t for t in _members(puzzle, group) if t not in (truth, anchor)]
    rng.shuffle(others)
    return (others + [anchor])[:3]


def _renamed(value, mapping: dict):
    """A JSON-like value with every token (a whole string) renamed."""
    if isinstance(value, list):
        return [_renamed(v, mapping) for v in value]
    if isinstance(value, dict):
        return {_renamed(k, mapping): _renamed(v, mapping) for k, v in value.items()}
    return mapping.get(value, value) if isinstance(value, str) else value


def _lettered(puzzle: dict) -> dict:
    """Rename the cast to single letters in the same order (shorter text); returns the mapping."""
    people = puzzle["people"]
    if all(len(p) == 1 for p in people):
        return {}
    letters = LETTERS[-len(people):] if len(people) <= 8 else LETTERS[:len(people)]
    mapping = dict(zip(people, letters))
    for key in ("people", "clues", "question", "facing"):
        puzzle[key] = _renamed(puzzle[key], mapping)
    return mapping


def _shortest(puzzle: dict) -> dict:
    """Switch the intro, every clue, the question and its statements to their shortest phrasing."""
    def pick(variants: list[str]) -> int:
        return min(range(len(variants)), key=lambda i: len(variants[i]))
    puzzle["intro"] = pick(intro_variants(puzzle))
    puzzle["phrasing"] = [pick(clue_variants(puzzle, c)) for c in puzzle["clues"]]
    puzzle["q_phrasing"] = pick(question_variants(puzzle))
    if puzzle["question"][0] == "statement":
        puzzle["s_phrasing"] = [pick(clue_variants(puzzle, c)) for c in puzzle["question"][1]]
    return {}


def official_length(question: str, choices: list[str]) -> int:
    """Characters the 130-token filter covers: question, answer letter and the "A) ..." choices."""
    return len(question) + 1 + sum(len(f"{'ABCD'[i]}) {c}") for i, c in enumerate(choices))


def build(rng: random.Random, names: list, *, kind: str, level: int, stats: dict) -> dict | None:
    """One proven puzzle as {"puzzle", "answer", "distractors"}, or None with stats[reason] += 1."""
    if kind not in LAYOUT or level not in (1, 2, 3):
        raise ValueError(f"unknown kind/level {kind!r}/{level!r}")
    puzzle, world = _skeleton(rng, names, kind, level)
    if _question(rng, puzzle, world, level) is None:
        _bump(stats, "no_question")
        return None
    truth = _py_answer(puzzle, world)
    model = Model(puzzle)
    world_table = model.world_table(world)
    if model.answers(world_table) != {truth} or truth == NO_ANSWER:
        _bump(stats, "no_answer_in_world" if truth == NO_ANSWER else "solver_disagrees")
        return None
    chosen = _choose(model, world_table, _candidates(puzzle, world, level, rng), truth, level, stats)
    if chosen is None:
        return None
    try:
        clues = _prune(model, chosen, rng)
        for _ in range(PRUNE_ORDERS - 1):  # another removal order can leave a smaller necessary set
            if len(clues) <= _max_clues(kind, level):
                break
            clues = min(clues, _prune(model, chosen, rng), key=len)
    except csp.TooBig:
        _bump(stats, "too_big")
        return None
    if not MIN_CLUES[level] <= len(clues) <= _max_clues(kind, level):
        _bump(stats, "too_easy" if len(clues) < MIN_CLUES[level] else "too_many_clues")
        return None
    rng.shuffle(clues)
    puzzle.update(clues=clues, phrasing=[rng.randrange(len(clue_variants(puzzle, c))) for c in clues],
                  intro=rng.randrange(len(intro_variants(puzzle))),
                  q_phrasing=rng.randrange(len(question_variants(puzzle))))
    distractors = _distractors(rng, puzzle, truth)
    if len(set(distractors) | {truth}) != 4:
        _bump(stats, "few_choices")
        return None
    for shorten in (_shortest, _lettered):  # a long draw: tersest phrasings, then single-letter names
        if official_length(render(puzzle), [truth, *distractors]) < MAX_CHARS:
            break
        mapping = shorten(puzzle)
        truth, distractors = _renamed(truth, mapping), _renamed(distractors, mapping)
        if puzzle["question"][0] == "statement":  # statement 0 is the true one; texts are re-rendered
            truth, *distractors = statement_texts(puzzle)
    if official_length(render(puzzle), [truth, *distractors]) >= MAX_CHARS:
        _bump(stats, "too_long")
        return None
    return {"puzzle": puzzle, "answer": truth, "distractors": distractors}
