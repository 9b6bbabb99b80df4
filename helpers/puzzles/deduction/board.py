"""The board a deduction is written on: every seating of a puzzle (the solver's table), each clue's truth and the
answer per seating, each token's position, and what holds in every seating of a set (Known). The classic kinds,
the round table with attributes and the rectangle; the other layouts' board (deduction.layouts) builds on it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.puzzles import csp
from helpers.puzzles.deduction.steps import CLASSIC, WRITTEN, fact_constraint, frozen, shared_puzzle
from helpers.puzzles.deduction.words import question_fact
from helpers.puzzles.seating import classic
from helpers.puzzles.seating.solver import Model

MAX_WORLDS = 400_000  # seatings the board lists at most (a round table of five with two attribute sets: 345,600)
SAMPLE = 256  # rows a pair's distance is tested on before all of them
MAX_GIVEN = 4  # clues a board too big to list whole may be built with (two rows of twelve: 12! is 479 million)
STRENGTH = {"pos": 0, "left": 1, "right": 1, "faces": 1, "faces_rel": 1, "opp": 1, "gap": 1, "between": 2}  # others 3


class NoDeduction(RuntimeError):
    """The writer found no deduction within its depth and step limits."""


class OutOfWork(NoDeduction):
    """The writer's work budget ran out ("work_budget"): the whole deduction stops, no other case split is tried."""


@dataclass(frozen=True)
class Known:
    """What holds in every seating of a set: who is placed where, and which pairs sit a fixed distance apart."""

    placed: dict  # person index -> position
    linked: np.ndarray  # [a, b]: b sits a fixed distance from a
    offset: np.ndarray  # [a, b]: that distance (position of b - position of a; mod n at a table)
    ends: frozenset = frozenset()  # people at an end of a rectangular table in every seating


class Board:
    """Every seating of a puzzle the writer covers, each clue's truth and the answer per seating, and each token's
    position (a person's or an attribute value's seat: from a row's west end, or round from a table's anchor)."""

    given: tuple = ()  # clues every listed seating meets (a board too big to list whole is built with them)

    def __init__(self, puzzle: dict) -> None:
        """List the seatings (MAX_WORLDS at most, else NoDeduction "too_big"), clue masks and answer codes."""
        if puzzle["kind"] not in CLASSIC + WRITTEN:
            raise NoDeduction("family_not_covered")
        self.puzzle, self.people = puzzle, list(puzzle["people"])
        self.tokens = self.people + self._listed_values()
        self.n, self.size = len(self.people), len(self.tokens)
        self.circular = puzzle["kind"] != "seating_linear"
        self.model = Model(shared_puzzle(puzzle))
        seats = self._seatings()
        self.table = csp.Table(self.model.problem, [self.model.seat[t] for t in self.tokens], seats.astype(np.int16))
        self.masks = [self.model.holds(c, self.table) for c in self.model.puzzle["clues"]]
        self.codes, self.names, _ = self.model.codes(self.table)
        self.anchor = self._anchor() if self.circular else None
        turn = -1 if puzzle.get("facing", "centre") == "out" else 1
        self.pos = (seats - seats[:, [self.anchor]]) * turn % self.n if self.circular else seats.astype(np.int16)
        self.rect = puzzle["kind"] == "seating_rectangle"  # straight across is a seat's, not a distance's: ends told
        self.at_end = (seats[:, :self.n] % (self.n // 2) == 0) if self.rect else None

    def _listed_values(self) -> list[str]:
        """The attribute values a clue or the question names, and every value of the group the question asks
        about; the others are free (no clue constrains them), so the board need not list them."""
        q = self.puzzle.get("question") or []
        named = {x for c in self.puzzle["clues"] for x in c[1:] if isinstance(x, str)} | set(map(str, q[1:]))
        asked = self.puzzle["groups"].get(q[1], ()) if q and q[0] == "attr" else ()
        return [v for values in self.puzzle.get("groups", {}).values() for v in values if v in named or v in asked]

    def _seatings(self) -> np.ndarray:
        """Every seating as rows seat_of[token]: the classic kinds' cached list, else the solver's (premises only)."""
        if self.puzzle["kind"] in CLASSIC:
            return classic.seatings(self.n, self.circular)
        seat_vars = [self.model.seat[t] for t in self.tokens]
        table = self.solve_given(seat_vars)
        return np.stack([table.col(v) for v in seat_vars], axis=1)

    def solve_given(self, keep: list[int]) -> csp.Table:
        """The solver's table of the premises, or when that is too big to list, of the premises and the first clues
        (self.given, MAX_GIVEN at most; NoDeduction "too_big" when even they leave over MAX_WORLDS seatings)."""
        clues, self.given = self.model.puzzle["clues"], ()
        while True:
            cons = self.model.premises + [self.model.constraint(clues[c]) for c in self.given]
            try:
                table = csp.solve(self.model.problem, cons, keep=keep, budget=8 * MAX_WORLDS)
                if len(table.rows) <= MAX_WORLDS:
                    return table
            except csp.TooBig:
                pass
            if len(self.given) >= min(MAX_GIVEN, len(clues) - 1):
                raise NoDeduction("too_big")
            self.given = tuple(sorted(self.given + (self._next_given(),)))

    def _next_given(self) -> int:
        """The clue to build the board with next: the one naming most of those the given clues name (the first: the
        strongest kind of clue, STRENGTH), then the earliest."""
        clues, given = self.model.puzzle["clues"], set(self.given)
        near = {x for c in given for x in clues[c][1:] if isinstance(x, str)}

        def rank(c: int) -> tuple:
            """Most names shared with the given clues, then the strongest type, then the earliest."""
            named = {x for x in clues[c][1:] if isinstance(x, str)}
            return -len(named & near), STRENGTH.get(clues[c][0], 3), c
        return min((c for c in range(len(clues)) if c not in given), key=rank)

    def _anchor(self) -> int:
        """The person most clues name (a round table's seats are counted from them)."""
        named = [p for c in self.puzzle["clues"] for p in c[1:] if isinstance(p, str)]
        return max(range(self.n), key=lambda i: (named.count(self.people[i]), -i))

    def mask(self, cited: frozenset) -> np.ndarray:
        """The seatings every cited clue allows."""
        out = np.ones(len(self.table.rows), dtype=bool)
        for c in cited:
            out &= self.masks[c]
        return out

    def known(self, m: np.ndarray) -> Known:
        """What holds in every seating of mask m (pairs tested on a sample of rows first: big tables stay quick)."""
        p = self.pos[m].astype(np.int16)
        lo, hi = p.min(0), p.max(0)
        placed = {i: int(lo[i]) for i in range(self.size) if lo[i] == hi[i]}
        sample = p[:SAMPLE]
        d = sample[:, None, :] - sample[:, :, None]
        d = d % self.n if self.circular else d
        linked = d.min(0) == d.max(0)
        for a, b in zip(*np.nonzero(linked & (len(p) > SAMPLE))):  # constant on the sample: test every row
            off = (p[:, b] - p[:, a]) % self.n if self.circular else p[:, b] - p[:, a]
            linked[a, b] = bool((off == d[0, a, b]).all())
        ends = frozenset(np.nonzero(self.at_end[m].all(0))[0].tolist()) if self.rect else frozenset()
        return Known(placed, linked, d[0], ends)

    def offsets(self, a: int, b: int) -> np.ndarray:
        """Per seating, where token b sits from token a (a split over a pair's open distances reads it)."""
        off = self.pos[:, b] - self.pos[:, a]
        return off % self.n if self.circular else off

    def link_fact(self, known: Known, a: int, b: int) -> tuple | None:
        """The fact linking token b to token a that `known` holds, or None when they are not linked."""
        return self.rel_fact(b, a, int(known.offset[a, b])) if known.linked[a, b] else None

    def seat_fact(self, i: int, v: int) -> tuple:
        """Token i at position v: from the nearer end of a row, or round from the anchor."""
        if self.circular:
            return self.rel_fact(i, self.anchor, v)
        side, k = ("west", v + 1) if v + 1 <= self.n - v else ("east", self.n - v)
        return ("pos", self.tokens[i], side, k)

    def rel_fact(self, b: int, a: int, o: int) -> tuple:
        """Token b sits o positions round (or along) from token a: left/right, k seats, opposite, or the same seat
        (an attribute of a person, or two attributes of one person)."""
        x, y = self.tokens[b], self.tokens[a]
        if o == 0:
            return ("same", *sorted((y, x), key=self.tokens.index))
        if not self.circular:
            return ("right", x, y, o) if o > 0 else ("left", x, y, -o)
        if 2 * o == self.n and not self.rect:  # at a rectangle only the ends and seats n - i face each other
            return ("opp", x, y)
        return ("left", x, y, o) if 2 * o < self.n else ("right", x, y, self.n - o)

    def answer_fact(self, code: int) -> tuple:
        """The fact "the answer is names[code]" in the question's terms ("Clare sits immediately to Amara's left")."""
        q = self.model.puzzle["question"]
        if q[0] in ("who", "attr"):
            return question_fact(self.model.puzzle, self.names[code])
        if q[0] == "statement":
            return frozen(q[1][code])
        if q[0] == "at_pos":
            return ("pos", self.names[code], q[1], q[2])
        if q[0] == "count_between":
            return ("gap", q[1], q[2], code)
        x = self.tokens.index(q[1])
        return self.rel_fact(x, self.tokens.index(q[2]), code) if q[2] else self.seat_fact(x, code)

    def holds(self, fact: tuple) -> np.ndarray:
        """A fact's truth in every seating (any fact deduction.steps gives a meaning)."""
        con = fact_constraint(self.model, frozen(fact))
        truth = con.test(*(self.table.col(v) for v in con.vars))
        return np.broadcast_to(np.asarray(truth, dtype=bool), (len(self.table.rows),))

    def blank(self) -> Known:
        """What is known before any clue is applied: nothing placed, nothing linked."""
        offset = np.zeros((self.size, self.size), dtype=np.int16)
        return Known({}, np.eye(self.size, dtype=bool), offset)

    def told(self, before: Known, after: Known, i: int) -> bool:
        """Whether placing token i now would say again what another placement says: an attribute value linked to
        a person placed with it now."""
        return self.n <= i < len(self.tokens) and any(
            before.linked[j, i] and after.placed.get(j) == after.placed[i] for j in range(self.n))

    def named(self, c: int) -> list[int]:
        """The tokens clue c names."""
        return [self.tokens.index(x) for x in self.puzzle["clues"][c][1:] if x in self.tokens]

    def answer_fixed(self, m: np.ndarray) -> bool:
        """Whether every seating of m gives the same answer."""
        return m.any() and np.unique(self.codes[m]).size == 1
