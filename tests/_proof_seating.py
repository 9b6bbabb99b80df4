"""A second, independent proof of a seating puzzle's key, for tests/test_proof_seating.py.

Written apart from the kit's generators and solvers (helpers.puzzles.seating.world, .solver, .layouts, .classic and
helpers.puzzles.csp are not imported): it reads a puzzle's structured fields (people, groups, facing, half,
corner_face, clues, question) and the record's four choices, gives every clue and question the meaning its words
have, and lists by backtracking every arrangement the clues allow. No seat is pinned: a table turned round counts as
another arrangement (symmetries() says how many turns keep every seat's role, for comparing counts).

Readings, from the rendered words (helpers.puzzles.seating.classic and .text) and the tournament rules:
- Left and right are each sitter's own. In a row, a sitter facing north has the west end on their left, one facing
  south the east end. At a round, square or rectangular table a sitter facing the centre has the next seat
  clockwise (seen from above) on their left, one facing outward the next seat anticlockwise.
- Two rows: the north row faces south (its sitters' left is east), the south row faces north (left is west); each
  sitter faces the one in the same column of the other row; left, right, "next to" and ends stay within a row.
- "k-th to the left of Y" is k seats from Y towards Y's own left; a row has no seat beyond its end.
- "Opposite" at a round or square table is half the ring away; at a rectangular table it is straight across: end
  to end, and along the long sides the seat on the other side at the same distance from an end.
- A square table of 8 alternates corners and side middles; corners all face one way, middles the other. A
  rectangle of 2m seats has one seat at each end and m - 1 along each long side.
- "X sits between Y and Z" / "next to both" / "Y on one side and Z on the other": X is a neighbour of both.
  "X does not sit next to Y": not neighbours, and nothing more: the words allow one sitter when X and Y are a
  person and an attribute ("the Greek does not sit next to the tea drinker" leaves the Greek free to drink tea).
  "How many people sit between X and Y" in a row: the seats strictly between them.
- A question's answer in one arrangement is the one choice that is true there; an arrangement where no choice or
  several are true gives a bracketed note instead, so a proven key is the only answer over all arrangements.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from helpers.puzzles.seating.text import statement_texts  # words only: a statement question's choice texts

SHAPES = {"seating_linear": "row", "seating_row_facing": "row", "seating_circular": "round",
          "seating_attributes": "round", "seating_mixed_facing": "round", "seating_parallel_rows": "two_rows",
          "seating_square": "square", "seating_rectangle": "rectangle"}
RINGS = ("round", "square", "rectangle")
CLASSIC = ("seating_linear", "seating_circular")
FACING_CHOSEN = ("seating_mixed_facing", "seating_row_facing")  # each sitter's facing is part of the arrangement
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8}


@dataclass(frozen=True)
class Proof:
    """What the clues allow: every answer (choice text, or a bracketed note) and the number of arrangements."""
    answers: frozenset
    worlds: int


# ------------------------------------------------------------------ the seats and their geometry
class Layout:
    """The seats of one puzzle (row: 0..n-1 west to east; two rows: (row, column) with columns west to east;
    tables: 0..n-1 clockwise seen from above, a square's corners even, a rectangle's ends 0 and n/2)."""

    def __init__(self, puzzle: dict) -> None:
        """The shape and seats of the puzzle's kind."""
        if puzzle["kind"] not in SHAPES:
            raise ValueError(f"no independent reading of {puzzle['kind']!r}")
        self.shape, self.n = SHAPES[puzzle["kind"]], len(puzzle["people"])
        self.m = self.n // 2
        self.seats = ([(r, c) for r in ("north", "south") for c in range(self.m)] if self.shape == "two_rows"
                      else list(range(self.n)))

    def neighbours(self, a, b) -> bool:
        """Whether two seats are side by side (tables wrap round; two rows: the same row)."""
        if self.shape in RINGS:
            return (a - b) % self.n in (1, self.n - 1)
        if self.shape == "row":
            return abs(a - b) == 1
        return a[0] == b[0] and abs(a[1] - b[1]) == 1

    def step(self, seat, left_way: int, side: str, k: int):
        """The seat k places from `seat` towards its sitter's own side (left_way: +1 when their left is the way
        seat numbers or columns grow), None past the end of a row."""
        d = left_way * k if side == "left" else -left_way * k
        if self.shape in RINGS:
            return (seat + d) % self.n
        if self.shape == "row":
            return seat + d if 0 <= seat + d < self.n else None
        return (seat[0], seat[1] + d) if 0 <= seat[1] + d < self.m else None

    def across(self, seat) -> int:
        """The seat opposite: half a round or square table away; straight across a rectangle."""
        if self.shape in ("round", "square") and self.n % 2 == 0:
            return (seat + self.m) % self.n
        if self.shape == "rectangle":
            return (seat + self.m) % self.n if seat in (0, self.m) else self.n - seat
        raise ValueError(f"no seat is opposite another in a {self.shape} of {self.n}")

    def faced(self, seat) -> tuple:
        """Two rows: the seat in the same column of the other row (the sitter one faces)."""
        if self.shape != "two_rows":
            raise ValueError("only two rows face each other seat by seat")
        return ("south" if seat[0] == "north" else "north", seat[1])

    def at_end(self, seat) -> bool:
        """At an end of the row (or of one's row), or at an end (short side) of a rectangular table."""
        if self.shape == "row":
            return seat in (0, self.n - 1)
        if self.shape == "two_rows":
            return seat[1] in (0, self.m - 1)
        if self.shape == "rectangle":
            return seat in (0, self.m)
        raise ValueError(f"a {self.shape} table has no ends")

    def role(self, seat) -> tuple:
        """What the words can tell a seat by at a table: a corner, an end."""
        return (self.shape == "square" and seat % 2 == 0, self.shape == "rectangle" and seat in (0, self.m))


def symmetries(puzzle: dict) -> int:
    """Turns of the table that keep every seat's role (a round table's n, a square's 4, a rectangle's 2); rows 1."""
    lay = Layout(puzzle)
    if lay.shape not in RINGS:
        return 1
    return sum(all(lay.role(s) == lay.role((s + r) % lay.n) for s in lay.seats) for r in range(lay.n))


# ------------------------------------------------------------------ one arrangement
@dataclass
class World:
    """A (partial) arrangement: a seat per token, a facing per person (1: the centre or north), the corners'
    facing at a square table (1: the centre)."""
    puzzle: dict
    layout: Layout
    corner: int | None = None
    seat: dict = field(default_factory=dict)
    face: dict = field(default_factory=dict)

    def facing(self, token: str) -> int:
        """1 when the sitter faces the centre (tables) or north (rows), else 0."""
        kind = self.puzzle["kind"]
        if kind in FACING_CHOSEN:
            if token not in self.puzzle["people"]:
                raise ValueError(f"the facing of {token!r} needs a person")
            return self.face[token]
        s = self.seat[token]
        if self.layout.shape == "two_rows":
            return int(s[0] == "south")  # the south row faces north
        if self.layout.shape == "square":
            return int((s % 2 == 0) == bool(self.corner))
        if kind == "seating_circular":
            return int(self.puzzle.get("facing", "centre") == "centre")
        return 1  # a classic row faces north; the attribute and rectangular tables face the centre

    def left_way(self, token: str) -> int:
        """+1 when the sitter's own left is the way seat numbers grow: clockwise facing the centre, east facing
        south (rows number seats west to east)."""
        ring = self.layout.shape in RINGS
        return 1 if (self.facing(token) == 1) == ring else -1

    def toward(self, token: str, side: str, k: int):
        """The seat k places to the token's own left or right (None past the end of a row)."""
        return self.layout.step(self.seat[token], self.left_way(token), side, k)


# ------------------------------------------------------------------ what each clue says
def _is(w: World, a: str, seat) -> bool:
    """Whether token a sits at `seat` (False when there is no such seat)."""
    return seat is not None and w.seat[a] == seat


def _row_between(w: World, a: str, b: str) -> int:
    """Seats strictly between two sitters in one row."""
    if w.layout.shape != "row":
        raise ValueError("people between two sitters is read only in one row")
    return abs(w.seat[a] - w.seat[b]) - 1


def _near(w: World, a: str, b: str) -> bool:
    """Whether two tokens' sitters are neighbours."""
    return w.layout.neighbours(w.seat[a], w.seat[b])


def _corners_diagonal(w: World, a: str, b: str) -> bool:
    """Two rows: one at the west end of one row, the other at the east end of the other."""
    (ra, ca), (rb, cb) = w.seat[a], w.seat[b]
    return ra != rb and {ca, cb} == {0, w.layout.m - 1}


def _faces_the_one(w: World, a: str, b: str, side: str, k: int) -> bool:
    """a faces the person k places to b's own side (two rows)."""
    t = w.toward(b, side, k)
    return t is not None and w.seat[a] == w.layout.faced(t)


def _in_row_facing(w: World, a: str, f: int) -> bool:
    """Two rows: a sits in the row facing north (f=1: the south row) or south."""
    return w.seat[a][0] == ("south" if f else "north")


CLASSIC_CLUES = {
    "pos": lambda w, x, k: w.seat[x] == k - 1,  # "k-th from the left": the row faces north, its left end is west
    "pos_right": lambda w, x, k: w.seat[x] == w.layout.n - k,
    "left_adj": lambda w, x, y: _is(w, x, w.toward(y, "left", 1)),
    "right_adj": lambda w, x, y: _is(w, x, w.toward(y, "right", 1)),
    "kth_left": lambda w, x, y, k: _is(w, x, w.toward(y, "left", k)),
    "kth_right": lambda w, x, y, k: _is(w, x, w.toward(y, "right", k)),
    "left_of": lambda w, x, y: (w.seat[x] - w.seat[y]) * w.left_way(y) > 0,  # somewhere on y's own left
    "opposite": lambda w, x, y: w.seat[x] == w.layout.across(w.seat[y]),
}
SHARED_CLUES = {
    "end": lambda w, x: w.layout.at_end(w.seat[x]),
    "not_end": lambda w, x: not w.layout.at_end(w.seat[x]),
    "adj": _near,
    "not_adj": lambda w, x, y: not _near(w, x, y),
    "between": lambda w, x, y, z: _near(w, x, y) and _near(w, x, z),
    "gap": lambda w, x, y, k: _row_between(w, x, y) == k,
    "not_same": lambda w, a, b: w.seat[a] != w.seat[b],
}
LAYOUT_CLUES = {
    "left": lambda w, a, b, k: _is(w, a, w.toward(b, "left", k)),
    "right": lambda w, a, b, k: _is(w, a, w.toward(b, "right", k)),
    "faces_rel": _faces_the_one,
    "same": lambda w, a, b: w.seat[a] == w.seat[b],
    "face": lambda w, a, f: w.facing(a) == f,
    "same_face": lambda w, a, b: w.facing(a) == w.facing(b),
    "diff_face": lambda w, a, b: w.facing(a) != w.facing(b),
    "row": _in_row_facing,
    "lend": lambda w, a: w.toward(a, "left", 1) is None,  # "no one sits to a's left in their row"
    "rend": lambda w, a: w.toward(a, "right", 1) is None,
    "corner": lambda w, a: w.seat[a] % 2 == 0,
    "mid": lambda w, a: w.seat[a] % 2 == 1,
    "pos": lambda w, a, side, k: w.seat[a] == (k - 1 if side == "west" else w.layout.n - k),
    "opp": lambda w, a, b: w.seat[a] == w.layout.across(w.seat[b]),
    "faces": lambda w, a, b: w.seat[a] == w.layout.faced(w.seat[b]),
    "not_faces": lambda w, a, b: w.seat[a] != w.layout.faced(w.seat[b]),
    "same_row": lambda w, a, b: w.seat[a][0] == w.seat[b][0],
    "diff_row": lambda w, a, b: w.seat[a][0] != w.seat[b][0],
    "diag": _corners_diagonal,
}
# Arguments whose facing a clue reads (only a kind whose sitters each choose a facing makes it a variable).
FACING_ARGS = {"left": (2,), "right": (2,), "faces_rel": (2,), "face": (1,), "same_face": (1, 2), "diff_face": (1, 2)}


def clue_reader(puzzle: dict, clue: list):
    """The function saying whether a clue holds in a World."""
    table = {**SHARED_CLUES, **(CLASSIC_CLUES if puzzle["kind"] in CLASSIC else LAYOUT_CLUES)}
    if clue[0] not in table:
        raise ValueError(f"no independent reading of the clue {clue!r} in {puzzle['kind']}")
    return table[clue[0]]


NEGATIVE_PAIRS = ("not_adj", "not_faces")  # "X does not sit next to / face Y": true of one sitter, read literally


def read_as_two_people(puzzle: dict) -> dict:
    """The puzzle as a reader reads it who takes "X does not sit next to Y" (or "does not face Y") as naming two
    people: each such clue gains "X is not Y"."""
    extra = [["not_same", c[1], c[2]] for c in puzzle["clues"] if c[0] in NEGATIVE_PAIRS]
    return {**puzzle, "clues": puzzle["clues"] + extra}


def holds(w: World, clue: list) -> bool:
    """Whether a clue is true in a (complete enough) arrangement."""
    return bool(clue_reader(w.puzzle, clue)(w, *clue[1:]))


# ------------------------------------------------------------------ what each question asks
def _seat_from(w: World, rel: str, x: str, k: int):
    """The seat a question points at from x: x's own, opposite, faced, k places to a side, or faced from there."""
    if rel == "same":
        return w.seat[x]
    if rel == "opp":
        return w.layout.across(w.seat[x])
    if rel == "faces":
        return w.layout.faced(w.seat[x])
    if rel == "nbr":  # "the only neighbour of x": a question with no single answer when x has two
        near = [s for s in w.layout.seats if w.layout.neighbours(s, w.seat[x])]
        return near[0] if len(near) == 1 else f"({x} has {len(near)} neighbours)"
    if rel.startswith("faces_"):
        t = w.toward(x, rel.removeprefix("faces_"), k)
        return None if t is None else w.layout.faced(t)
    return w.toward(x, rel, k)


def _row_end(w: World, f: int, side: str) -> tuple:
    """Two rows: the seat at the extreme `side` end (its sitters' own side) of the row facing north (f=1) or south."""
    row = [s for s in w.layout.seats if s[0] == ("south" if f else "north")]
    left_way = -1 if f else 1  # facing north, a sitter's left is west
    return next(s for s in row if w.layout.step(s, left_way, side, 1) is None)


def asked_seat(puzzle: dict, w: World):
    """(group, seat) of a question asking who (or which value) sits somewhere, else None."""
    q, n = puzzle["question"], w.layout.n
    simple = {"left_q": ("left", 1), "right_q": ("right", 1), "kth_left_q": ("left", None),
              "kth_right_q": ("right", None), "opposite_q": ("opp", 0)}
    if q[0] in simple:
        rel, k = simple[q[0]]
        return "people", _seat_from(w, rel, q[1], q[2] if k is None else k)
    if q[0] in ("at", "at_right"):  # k-th from the left (west) or right end of a north-facing row
        return "people", q[1] - 1 if q[0] == "at" else n - q[1]
    if q[0] in ("who", "attr"):
        return ("people" if q[0] == "who" else q[1]), _seat_from(w, q[-3], q[-2], q[-1])
    if q[0] == "at_end":
        return "people", _row_end(w, q[1], q[2])
    if q[0] == "at_pos":
        return "people", q[2] - 1 if q[1] == "west" else n - q[2]
    return None


WHERE_WORDS = re.compile(r"^(?:At the|(?P<nth>\w+) from the) (?P<end>left|right|west|east) end$|"
                         r"^(?:Immediately|(?P<kth>\w+)) to (?P<y>.+)'s (?P<side>left|right)$|"
                         r"^Opposite (?P<opp>.+)$|^\(the same seat\)$")


def where_seat(w: World, text: str, y: str):
    """The seat a "where" choice describes ("Second from the west end", "Immediately to Ann's left", "Opposite
    Ann"); a row's left end is west (it faces north)."""
    found = WHERE_WORDS.match(text)
    if found is None:
        raise ValueError(f"no reading of the where-choice {text!r}")
    if found["end"]:
        k = ORDINALS[found["nth"].lower()] if found["nth"] else 1
        return k - 1 if found["end"] in ("left", "west") else w.layout.n - k
    if found["side"]:
        k = ORDINALS[found["kth"].lower()] if found["kth"] else 1
        return w.toward(found["y"], found["side"], k)
    return w.layout.across(w.seat[found["opp"]]) if found["opp"] else w.seat[y]


def _one_true(texts: list[str], truth: list[bool]) -> str:
    """The one true text, else a note naming how many are true."""
    true = [t for t, ok in zip(texts, truth) if ok]
    return true[0] if len(true) == 1 else f"({len(true)} of the choices true)"


def _as_choice(value: str, choices: list[str]) -> str:
    """A value as the choice saying it, or a note when no choice does."""
    return value if value in choices else f"(no choice says {value})"


def question_answers(puzzle: dict, w: World, choices: list[str], free: dict, ones: list[int]) -> set[str]:
    """The answers of every completion of a leaf: free tokens (by group) may sit in any seat no named one takes,
    and `ones` lists the possible numbers of people facing the centre or north."""
    q = puzzle["question"]
    asked = asked_seat(puzzle, w)
    if asked is not None:
        group, seat = asked
        if seat is None or isinstance(seat, str):
            return {seat or "(no such seat)"}
        named = [t for t in w.seat if w.seat[t] == seat and _group(puzzle, t) == group]
        return {_as_choice(t, choices) for t in (named or free[group])}
    if q[0] in ("count_q", "count_between"):
        return {_as_choice(str(_row_between(w, q[1], q[2])), choices)}
    if q[0] == "count_face":
        return {_as_choice(str(c if q[1] else w.layout.n - c), choices) for c in ones}
    if q[0] in ("where_q", "where"):
        y = q[2] if len(q) > 2 else ""
        return {_one_true(choices, [where_seat(w, c, y) == w.seat[q[1]] for c in choices])}
    if q[0] == "statement":
        return {_one_true(statement_texts(puzzle), [holds(w, s) for s in q[1]])}
    raise ValueError(f"no independent reading of the question {q!r}")


def question_variables(puzzle: dict) -> list[tuple]:
    """The search variables the question's answer reads."""
    q = puzzle["question"]
    if q[0] in ("who", "attr"):
        named = [(q[-2], q[-3] in ("left", "right", "faces_left", "faces_right"))]
    elif q[0] in ("left_q", "right_q", "kth_left_q", "kth_right_q"):
        named = [(q[1], True)]
    elif q[0] in ("opposite_q", "count_q", "count_between", "where_q", "where"):
        named = [(q[1], False)] + [(y, True) for y in q[2:3] if y]
    elif q[0] == "statement":
        return [v for s in q[1] for v in clue_variables(puzzle, s)]
    else:
        named = []
    return _variables(puzzle, named)


# ------------------------------------------------------------------ every arrangement, by backtracking
def _group(puzzle: dict, token: str) -> str:
    """The group a token belongs to ("people" for a person)."""
    if token in puzzle["people"]:
        return "people"
    return next(g for g, values in puzzle.get("groups", {}).items() if token in values)


def clue_variables(puzzle: dict, clue: list) -> list[tuple]:
    """The search variables a clue reads: the seats of the tokens it names and the facings it reads (a clue only
    about facings, where each sitter chooses one, reads no seat)."""
    tokens = set(puzzle["people"]) | {v for vs in puzzle.get("groups", {}).values() for v in vs}
    faced = FACING_ARGS.get(clue[0], ()) if puzzle["kind"] not in CLASSIC else ()
    named = [(a, i in faced) for i, a in enumerate(clue) if i and isinstance(a, str) and a in tokens]
    seatless = puzzle["kind"] in FACING_CHOSEN and clue[0] in ("face", "same_face", "diff_face")
    return _variables(puzzle, named, seats=not seatless)


def _variables(puzzle: dict, named: list[tuple[str, bool]], seats: bool = True) -> list[tuple]:
    """The search variables for (token, facing read) pairs: ("seat", token) and, where a sitter chooses a facing
    no one stated, ("face", person)."""
    stated = puzzle.get("facing") if isinstance(puzzle.get("facing"), dict) else {}
    out = [("seat", t) for t, _ in named] if seats else []
    if puzzle["kind"] in FACING_CHOSEN:
        out += [("face", t) for t, reads in named if reads and t not in stated]
    return list(dict.fromkeys(out))


def search_order(needs: list[list[tuple]], extra: list[tuple]) -> list[tuple]:
    """Variables in an order that lets clues be checked early: each next one completes the most clues."""
    left, placed, order = list(dict.fromkeys([v for vs in needs for v in vs] + extra)), set(), []
    while left:
        def gain(v: tuple) -> tuple:
            """How many clues v completes, then how many it appears in."""
            return (sum(v in vs and set(vs) - placed <= {v} for vs in needs), sum(v in vs for vs in needs))
        best = max(left, key=gain)
        left.remove(best)
        placed.add(best)
        order.append(best)
    return order


class Search:
    """One puzzle's backtracking search: the variables in order, the clues checked at each depth, the tokens and
    facings no clue names (counted, not listed)."""

    def __init__(self, puzzle: dict, choices: list[str]) -> None:
        """Read the puzzle's fields and plan the search."""
        self.puzzle, self.choices, self.layout = puzzle, list(choices), Layout(puzzle)
        clues = puzzle["clues"]
        needs = [clue_variables(puzzle, c) for c in clues]
        self.order = search_order(needs, question_variables(puzzle))
        depth = {v: i for i, v in enumerate(self.order)}
        self.due = [[] for _ in self.order]
        for clue, vs in zip(clues, needs):
            self.due[max(depth[v] for v in vs)].append((clue_reader(puzzle, clue), clue[1:]))
        named = {v[1] for v in self.order if v[0] == "seat"}
        groups = {"people": puzzle["people"], **puzzle.get("groups", {})}
        self.free = {g: [t for t in ts if t not in named] for g, ts in groups.items()}
        self.stated = puzzle.get("facing") if isinstance(puzzle.get("facing"), dict) else {}
        faced = {v[1] for v in self.order if v[0] == "face"} | set(self.stated)
        self.free_facers = (len([p for p in puzzle["people"] if p not in faced])
                            if puzzle["kind"] in FACING_CHOSEN else 0)
        self.half = bool(puzzle.get("half"))

    def corners(self) -> list:
        """The corners' facing: stated, or either way when only "corners one way, middles the other" is said."""
        if self.layout.shape != "square":
            return [None]
        stated = self.puzzle.get("corner_face")
        return [0, 1] if stated is None else [stated]

    def values(self, w: World, var: tuple) -> list:
        """The values a variable may take given the ones already placed (a seat no one of its group holds)."""
        if var[0] == "face":
            return [0, 1]
        group = _group(self.puzzle, var[1])
        taken = {w.seat[t] for t in w.seat if _group(self.puzzle, t) == group}
        return [s for s in self.layout.seats if s not in taken]

    def facing_counts(self, w: World) -> list[tuple[int, int]]:
        """(people facing the centre or north, ways) over the free facings (four-and-four when `half`)."""
        known = sum(w.face.values())
        f, n = self.free_facers, self.layout.n
        out = [(known + j, math.comb(f, j)) for j in range(f + 1)]
        return [(c, ways) for c, ways in out if not self.half or 2 * c == n]

    def leaf(self, w: World, found: set, counts: list) -> None:
        """Record a complete placement of the named variables: its answers and how many arrangements it stands for."""
        facing = self.facing_counts(w)
        ways = sum(k for _, k in facing)
        if not ways:
            return
        counts.append(ways * math.prod(math.factorial(len(ts)) for ts in self.free.values()))
        found |= question_answers(self.puzzle, w, self.choices, self.free, [c for c, _ in facing])

    def run(self, w: World, depth: int, found: set, counts: list) -> None:
        """Place variable `depth` every way the clues it completes allow, and go on."""
        if depth == len(self.order):
            self.leaf(w, found, counts)
            return
        kind, token = var = self.order[depth]
        store = w.face if kind == "face" else w.seat
        for value in self.values(w, var):
            store[token] = value
            if all(read(w, *args) for read, args in self.due[depth]):
                self.run(w, depth + 1, found, counts)
        del store[token]


def prove(puzzle: dict, choices: list[str]) -> Proof:
    """Every answer over every arrangement the clues allow, and how many arrangements there are."""
    search, found, counts = Search(puzzle, choices), set(), []
    for corner in search.corners():
        w = World(puzzle, search.layout, corner, face=dict(search.stated))
        search.run(w, 0, found, counts)
    return Proof(frozenset(found), sum(counts))


def proves_key(record: dict) -> bool:
    """Whether the record's key is the only answer the clues allow."""
    return prove(record["puzzle"], record["choices"]).answers == {record["choices"][record["answer"]]}
