"""The solver of every seating kind: a constraint problem (on helpers.puzzles.csp) built from a puzzle's stated
fields alone (never the hidden world), the answers it allows, the solver's work and the layouts' deduction.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.puzzles import csp
from helpers.puzzles.seating.text import (LAYOUT, CYCLIC, FACING_KINDS, NO_ANSWER, MAX_WORDS, members, clue_variants,
                                          statement_texts, where_texts)


FREE = -2  # answer code: the seat holds a member no clue names (any free one could be there)


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
            for i, token in enumerate(members(puzzle, g)):
                pinned = g == "people" and i == 0
                self.seat[token] = self.problem.var(pin_seats(self.layout, self.n) if pinned else range(self.n), gid)
        # a square table at level 3 says only that corners and middles face different ways: which way is a variable
        self.corner = None
        if self.layout == "square" and puzzle.get("corner_face") is None:
            self.corner = self.problem.var([0, 1])
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
        if self.corner is not None:
            return self.seat[x], self.corner
        return (self.seat[x],)

    def direction(self, s: np.ndarray, cols: tuple) -> np.ndarray:
        """Each sitter's turn: +1 facing the centre or north (cols: their facing column, if a variable), else -1."""
        if self.face:
            return 2 * cols[0].astype(np.int16) - 1
        if self.layout == "rows2":
            return np.where(s >= self.m, 1, -1)  # row 1 faces north
        if self.layout == "square":  # the corners face one way (stated, or the corner variable), the middles the other
            cf = cols[0] if self.corner is not None else self.puzzle["corner_face"]
            corner = 2 * np.asarray(cf, dtype=np.int16) - 1
            return np.where(s % 2 == 0, corner, -corner).astype(np.int16)
        if self.puzzle.get("facing") == "out":  # a classic round table whose sitters all face away from the centre
            return -np.ones_like(s)
        return np.ones_like(s)

    def target(self, rel: str, k: int, s: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Seat k steps from s in the sitter's own rel direction ("faces", "opp": across), -1 when none."""
        n, m = self.n, self.m
        if rel == "same":
            return s
        if rel == "opp":
            return opposite(self.layout, n, s)
        if self.layout in CYCLIC:
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
        """Neighbouring seats (tables: wrapping; rows: same row)."""
        if self.layout in CYCLIC:
            return np.isin((a - b) % self.n, (1, self.n - 1))
        if self.layout == "row":
            return np.abs(a - b) == 1
        return (a // self.m == b // self.m) & (np.abs(a - b) == 1)

    def is_end(self, s: np.ndarray) -> np.ndarray:
        """At an extreme end of one's row, or at an end (short side) of a rectangular table."""
        if self.layout == "rect":
            return (s == 0) | (s == self.m)
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

    def _c_left_of(self, a: str, b: str) -> tuple:
        """A sits somewhere to b's left (a row facing north: a lower seat)."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: sa < sb

    def _c_adj(self, a: str, b: str) -> tuple:
        """A and b are neighbours."""
        return (self.seat[a], self.seat[b]), self.adjacent

    def _c_not_adj(self, a: str, b: str) -> tuple:
        """A and b are not neighbours, read as literally as a reader may: "the Greek does not sit next to the tea
        drinker" leaves the Greek free to be the tea drinker, so a key must hold then too."""
        return (self.seat[a], self.seat[b]), lambda sa, sb: ~self.adjacent(sa, sb)

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
        """A faces f (1: the centre / north); at a square table that follows from a's seat."""
        if self.layout == "square":
            return self.dir_vars(a), lambda sa, *cf: self.direction(sa, cf) == 2 * f - 1
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

    def _c_corner(self, a: str) -> tuple:
        """A sits at a corner of the square table (even seats)."""
        return (self.seat[a],), lambda sa: sa % 2 == 0

    def _c_mid(self, a: str) -> tuple:
        """A sits in the middle of a side of the square table (odd seats)."""
        return (self.seat[a],), lambda sa: sa % 2 == 1

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
        if q[0] == "where":
            return (self.seat[q[1]], *self.dir_vars(q[2])) if q[2] else (self.seat[q[1]],)
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
            return self._occupants(table, "people", np.full(rows, fixed_seat(self.puzzle), dtype=np.int16))
        if q[0] == "count_between":
            gaps = np.abs(table.col(self.seat[q[1]]) - table.col(self.seat[q[2]])) - 1
            return gaps.astype(np.int16), [str(i) for i in range(self.n)], []
        if q[0] == "where":
            cols = [table.col(v) for v in self.question_vars()]
            if not q[2]:  # a row's seat, from its west end
                return cols[0].astype(np.int16), where_texts(self.puzzle), []
            # x sits k seats round to y's own left when x = y + d*k (d: y's turn; see target())
            k = (cols[0].astype(np.int16) - cols[1]) * self.direction(cols[1], tuple(cols[2:])) % self.n
            return k.astype(np.int16), where_texts(self.puzzle), []
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
        tokens = members(self.puzzle, group)
        listed = [t for t in tokens if table.has(self.seat[t])]
        free = [t for t in tokens if not table.has(self.seat[t])]
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
        if self.corner is not None:
            values[self.corner] = world["corner_face"]
        vars_ = sorted(values)
        return csp.Table(self.problem, vars_, np.array([[values[v] for v in vars_]], dtype=np.int16))

    def holds(self, clue: list, table: csp.Table) -> np.ndarray:
        """The clue's truth in every row of a table that lists its variables."""
        c = self.constraint(clue)
        return np.broadcast_to(np.asarray(c.test(*(table.col(v) for v in c.vars)), dtype=bool), (len(table.rows),))


def pin_seats(layout: str, n: int) -> list[int]:
    """Seats people[0] may take once the table's rotations are factored out: a round table is the same in
    every rotation (seat 0), a square one in quarter turns (a corner, 0, or a middle seat, 1), a rectangular
    one in half turns (the first half of the ring); rows have no symmetry that keeps left and right."""
    return {"round": [0], "square": [0, 1], "rect": list(range(n // 2))}.get(layout, list(range(n)))


def opposite(layout: str, n: int, s):
    """The seat across the table: half the ring away, except along a rectangle's long sides, where seat i
    faces seat n-i (the ends, seats 0 and n/2, face each other)."""
    half = (s + n // 2) % n
    if layout != "rect":
        return half
    return np.where(s % (n // 2) == 0, half, (n - s) % n) if isinstance(s, np.ndarray) else \
        (half if s % (n // 2) == 0 else (n - s) % n)


def fixed_seat(puzzle: dict) -> int:
    """The seat an "at_end" (rows) or "at_pos" (row) question asks about."""
    q, n = puzzle["question"], len(puzzle["people"])
    if q[0] == "at_pos":
        return q[2] - 1 if q[1] == "west" else n - q[2]
    m, row = n // 2, q[1]  # row 1 faces north; its left end is west (column 0)
    left_col = 0 if row == 1 else m - 1
    col = left_col if q[2] == "left" else m - 1 - left_col
    return row * m + col


def solve(model: Model, clues: list[list], budget: int | None = None) -> csp.Table:
    """All worlds consistent with the premises and clues (question variables listed)."""
    cons = model.premises + [model.constraint(c) for c in clues]
    return csp.solve(model.problem, cons, keep=model.question_vars(), budget=budget)


def possible_answers(puzzle: dict) -> set[str]:
    """Every answer consistent with the stated premises and clues (a proof needs exactly one)."""
    model = Model(puzzle)
    return model.answers(solve(model, puzzle["clues"]))


def trace(puzzle: dict) -> tuple[Model, list[int]]:
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
    _, counts = trace(puzzle)
    log2 = [round(math.log2(max(c, 1)), 3) for c in counts]
    return {"steps": len(puzzle["clues"]), "log2_space": log2[0], "log2_after": log2[1:], "worlds": counts[-1]}


def explain(puzzle: dict, answer: str) -> str:
    """The solver's deduction: worlds left after each clue in order, then the answer they share (<= 100 words)."""
    _, counts = trace(puzzle)
    noun = "seatings" if LAYOUT[puzzle["kind"]] in CYCLIC else "arrangements"
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
