"""The board of the layouts whose left and right depend on the sitter: the square table (corners and middles face
different ways), two facing rows, a round table and a row where each sitter faces one way or the other.

A token's place is what the puzzle's words can say of it alone: a row's seat from its nearer end ("X sits second
from the west end", "X sits at the west end of the row facing north"), or at a table the seat counted from the
anchor (the person most clues name) towards the anchor's own left. Each person may also carry a bit, a token of
the board too: which way they face (mixed facing, one row), whether they sit at a corner (square), which row they
sit in (two rows). Two tokens are linked when one fact of the clues' kinds says where one sits from the other:
"B sits second to A's left" counts from A's own facing, so it is a link only where A's facing is known; in two
rows "B faces the person second to A's left" links across the rows. A pair no such fact links gets the code NA.
"""

from __future__ import annotations

import numpy as np

from helpers.puzzles import csp
from helpers.puzzles.deduction import board as boards
from helpers.puzzles.deduction.board import Board, Known, NoDeduction
from helpers.puzzles.seating.solver import Model, fixed_seat
from helpers.puzzles.seating.text import CYCLIC, FACING_KINDS, LAYOUT, ORD

LAYOUTS = ("seating_square", "seating_parallel_rows", "seating_mixed_facing", "seating_row_facing")
NA = -999  # a pair's code (or a place) no fact of the puzzle's words says
PAIR_CELLS = 1 << 22  # arrangement x pair codes computed at once when a link is tested on every arrangement (~32 MB)
OTHER_ROW = 100  # two rows: the code of a sitter in the other row is this plus the seats to the reference's left


class LayoutBoard(Board):
    """Every arrangement of a layouts puzzle (seats, facing bits), each clue's truth, the answer, each token's
    place and each person's bit (see the module's words)."""

    def __init__(self, puzzle: dict) -> None:
        """List the arrangements (boards.MAX_WORLDS at most, else NoDeduction "too_big"), masks and codes."""
        if puzzle["kind"] not in LAYOUTS:
            raise NoDeduction("family_not_covered")
        self.puzzle, self.people, self.n = puzzle, list(puzzle["people"]), len(puzzle["people"])
        self.model, self.layout = Model(puzzle), LAYOUT[puzzle["kind"]]
        self.tokens = self.people + self._listed_values()
        self.bits = self._bit_people()
        self.size = len(self.tokens) + len(self.bits)
        self.circular, self.rect, self.at_end = self.layout in CYCLIC, False, None
        self.table = self._solve()
        self.masks = [self.holds(c) for c in puzzle["clues"]]
        self.codes, self.names, _ = self.model.codes(self.table)
        self.seats = np.stack([self.table.col(self.model.seat[t]) for t in self.tokens], axis=1).astype(np.int16)
        self.dirs = np.stack([self._direction(t) for t in self.tokens], axis=1).astype(np.int16)
        self.anchor = self._anchor() if self.circular else None
        self.pos = np.concatenate([self._places(), self._bit_values()], axis=1).astype(np.int16)

    def _listed_values(self) -> list[str]:
        """The attribute values a clue, a statement or the question names (and the asked group's)."""
        q = self.puzzle["question"]
        said = [x for s in q[1] for x in s[1:]] if q[0] == "statement" else []
        named = set(map(str, said)) | {x for c in self.puzzle["clues"] for x in c[1:] if isinstance(x, str)}
        asked = self.puzzle["groups"].get(q[1], ()) if q[0] == "attr" else ()
        return [v for values in self.puzzle.get("groups", {}).values() for v in values if v in named or v in asked]

    def _bit_people(self) -> list[str]:
        """The people who carry a bit: whose facing is open (facing kinds), else everyone (corner, row)."""
        if self.puzzle["kind"] in FACING_KINDS:
            return [p for p in self.people if len(self.model.problem.domains[self.model.face[p]]) > 1]
        return list(self.people)

    def _solve(self) -> csp.Table:
        """The table over every token's seat, the facing bits and the square's corner variable (of the premises, or
        of the premises and the first clues when too big: Board.solve_given)."""
        keep = [self.model.seat[t] for t in self.tokens] + list(self.model.face.values())
        keep += [self.model.corner] if self.model.corner is not None else []
        return self.solve_given(keep + [v for v in self.model.question_vars() if v not in keep])

    def _direction(self, token: str) -> np.ndarray:
        """Per arrangement, the token's turn (+1 facing the centre or north, -1 the other way); 0 where no left/right
        may be counted from it (an attribute value where facing is a person's)."""
        seat = self.table.col(self.model.seat[token])
        if self.model.face:
            face = self.model.face.get(token)
            return np.zeros_like(seat) if face is None else 2 * self.table.col(face).astype(np.int16) - 1
        cols = (self.table.col(self.model.corner),) if self.model.corner is not None else ()
        return np.broadcast_to(self.model.direction(seat, cols), seat.shape)

    def _places(self) -> np.ndarray:
        """Each token's place per arrangement: its seat in a row, or its code from the anchor at a table."""
        if not self.circular:
            return self.seats
        return np.stack([self._code(self.anchor, i, slice(None)) for i in range(len(self.tokens))], axis=1)

    def _bit_values(self) -> np.ndarray:
        """Each bit person's bit per arrangement: facing (1 centre/north), at a corner, or in the north-facing row."""
        cols = []
        for p in self.bits:
            seat = self.table.col(self.model.seat[p])
            if self.puzzle["kind"] in FACING_KINDS:
                cols.append(self.table.col(self.model.face[p]))
            else:
                cols.append(seat % 2 == 0 if self.layout == "square" else seat >= self.model.m)
        return np.stack(cols, axis=1).astype(np.int16) if cols else np.zeros((len(self.table.rows), 0), np.int16)

    def _codes(self, rows, idx: list[int]) -> np.ndarray:
        """Codes [row, a, b] of where token b sits from token a (a's own left/right), tokens idx, rows `rows`."""
        s, d = self.seats[rows][:, idx], self.dirs[rows][:, idx]
        return self._offset_codes(s[:, :, None], s[:, None, :], d[:, :, None])

    def _offset_codes(self, sa: np.ndarray, sb: np.ndarray, da: np.ndarray) -> np.ndarray:
        """Elementwise over broadcast arrays: the code of where seat sb is from seat sa, facing da at sa."""
        if self.circular:
            off = (sb - sa) % self.n
            return np.where(2 * off == self.n, self.n // 2, np.where(da == 0, NA, off * da % self.n))
        if self.layout == "row":  # the clues' words count to the sixth seat
            k = (sa - sb) * da
            return np.where((da == 0) | (np.abs(k) >= len(ORD)), NA, k)
        m = self.model.m
        k = (sa % m - sb % m) * da
        return np.where(sa // m == sb // m, k, k + OTHER_ROW)

    def _code(self, a: int, b: int, rows) -> np.ndarray:
        """Per arrangement of `rows`, the code of where token b sits from token a."""
        return self._codes(rows, [a, b])[:, 0, 1]

    def _constant_pairs(self, rows: np.ndarray, a: np.ndarray, b: np.ndarray, want: np.ndarray) -> np.ndarray:
        """For token pairs (a[k], b[k]): whether b sits where code want[k] says from a in every one of `rows`, the
        seats read once and the pairs tested together, in chunks of about PAIR_CELLS cells."""
        s, d = self.seats[rows], self.dirs[rows]
        out = np.empty(len(a), dtype=bool)
        step = max(1, PAIR_CELLS // max(1, len(rows)))
        for i in range(0, len(a), step):
            j = slice(i, i + step)
            out[j] = (self._offset_codes(s[:, a[j]], s[:, b[j]], d[:, a[j]]) == want[j]).all(axis=0)
        return out

    def offsets(self, a: int, b: int) -> np.ndarray:
        """Per arrangement, the code of where token b sits from token a (NA for a bit)."""
        if max(a, b) >= len(self.tokens):
            return np.full(len(self.table.rows), NA, dtype=np.int16)
        return self._code(a, b, slice(None))

    def known(self, m: np.ndarray) -> Known:
        """What holds in every arrangement of mask m: places and bits, and the links (tested on a sample first)."""
        p = self.pos[m]
        lo, hi = p.min(0), p.max(0)
        placed = {i: int(lo[i]) for i in range(self.size) if lo[i] == hi[i] and lo[i] != NA}
        rows, t = np.nonzero(m)[0], len(self.tokens)
        codes = self._codes(rows[:boards.SAMPLE], list(range(t)))
        const = (codes.min(0) == codes.max(0)) & (codes[0] != NA)
        a, b = np.nonzero(const & (len(rows) > boards.SAMPLE))
        if len(a):
            const[a, b] = self._constant_pairs(rows, a, b, codes[0, a, b])
        offset = np.full((self.size, self.size), NA, dtype=np.int16)
        offset[:t, :t] = np.where(const, codes[0], NA)
        linked = np.eye(self.size, dtype=bool)
        linked[:t, :t] |= const | const.T
        return Known(placed, linked, offset)

    def link_fact(self, known: Known, a: int, b: int) -> tuple | None:
        """The fact linking b to a: counted from a when a's facing allows, else from b."""
        if known.offset[a, b] != NA:
            return self.rel_fact(b, a, int(known.offset[a, b]))
        return self.rel_fact(a, b, int(known.offset[b, a])) if known.offset[b, a] != NA else None

    def seat_fact(self, i: int, v: int) -> tuple:
        """Token i's place v (or bit i's value v) as a fact."""
        if i >= len(self.tokens):
            p = self.bits[i - len(self.tokens)]
            if self.puzzle["kind"] in FACING_KINDS:
                return ("face", p, v)
            return (("corner" if v else "mid"), p) if self.layout == "square" else ("row", p, v)
        if self.layout != "rows2":
            return super().seat_fact(i, v)
        m = self.model.m
        row, col = divmod(v, m)
        side, k = ("west", col + 1) if col + 1 <= m - col else ("east", m - col)
        return ("row_pos", self.tokens[i], row, side, k)

    def rel_fact(self, b: int, a: int, o: int) -> tuple:
        """Token b sits where code o says from token a: k seats to a's own left or right, opposite, the same seat;
        in two rows also facing a, or facing the person k seats to a's left or right."""
        if self.circular:
            return super().rel_fact(b, a, o)
        x, y = self.tokens[b], self.tokens[a]
        if 2 * o > OTHER_ROW:
            k = o - OTHER_ROW
            return ("faces", x, y) if k == 0 else ("faces_rel", x, y, "left" if k > 0 else "right", abs(k))
        if o == 0:
            return ("same", *sorted((y, x), key=self.tokens.index))
        return ("left", x, y, o) if o > 0 else ("right", x, y, -o)

    def answer_fact(self, code: int) -> tuple | None:
        """The fact "the answer is names[code]"; None where no fact says it (how many face north)."""
        q = self.puzzle["question"]
        if q[0] == "count_face" or (q[0] == "who" and q[1] == "nbr"):
            return None
        if q[0] == "at_end":
            return self.seat_fact(self.tokens.index(self.names[code]), fixed_seat(self.puzzle))
        return super().answer_fact(code)

    def named(self, c: int) -> list[int]:
        """The tokens clue c names, and their people's bits."""
        said = [x for x in self.puzzle["clues"][c][1:] if isinstance(x, str)]
        return [self.tokens.index(x) for x in said if x in self.tokens] + \
            [len(self.tokens) + self.bits.index(x) for x in said if x in self.bits]

    def told(self, before: Known, after: Known, i: int) -> bool:
        """Also a two-row sitter's row once their seat is placed."""
        if self.layout == "rows2" and i >= len(self.tokens):
            return self.people.index(self.bits[i - len(self.tokens)]) in after.placed
        return super().told(before, after, i)
