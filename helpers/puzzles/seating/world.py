"""The hidden world of a seating puzzle and its truths in plain Python (seat numbers, no arrays): the generator
reads true clues and the answer from it, and the tests hold the vectorised solver against it.
"""

from __future__ import annotations

from helpers.puzzles.seating.text import LAYOUT, CYCLIC, FACING_KINDS, NO_ANSWER, members, statement_texts, where_texts
from helpers.puzzles.seating.solver import fixed_seat


def _dir_in_world(puzzle: dict, world: dict, x: str) -> int:
    """x's own turn: +1 facing the centre/north (and in the south row, which faces north), else -1."""
    if puzzle["kind"] in FACING_KINDS:
        return 1 if world["face"][x] else -1
    if LAYOUT[puzzle["kind"]] == "rows2":
        return 1 if world["seat"][x] >= len(puzzle["people"]) // 2 else -1
    if LAYOUT[puzzle["kind"]] == "square":
        cf = world["corner_face"] if puzzle.get("corner_face") is None else puzzle["corner_face"]
        return 1 if (world["seat"][x] % 2 == 0) == bool(cf) else -1
    return 1


def _move_in_world(puzzle: dict, world: dict, rel: str, x: str, k: int) -> int | None:
    """The seat rel/k from x in plain Python (None when it falls off a row)."""
    n, s = len(puzzle["people"]), world["seat"][x]
    m, layout = n // 2, LAYOUT[puzzle["kind"]]
    if rel == "same":
        return s
    if rel == "opp":
        if n % 2:
            return None
        if layout == "rect":  # the ends face each other; along the long sides seat i faces seat n - i
            return (s + m) % n if s in (0, m) else n - s
        return (s + m) % n
    if rel == "faces":
        return (s + m) % n  # same column, the other row
    if rel == "nbr":
        near = [t for t in (s - 1, s + 1) if 0 <= t < n and (layout != "rows2" or t // m == s // m)]
        return near[0] if len(near) == 1 else None
    if rel.startswith("faces_"):
        t = _move_in_world(puzzle, world, rel.removeprefix("faces_"), x, k)
        return None if t is None else (t + m) % n
    d = _dir_in_world(puzzle, world, x)
    step = -d * k if rel == "left" else d * k  # rows: the left is west for +1 (north-facing)
    if layout in CYCLIC:
        return (s - step) % n  # round tables turn the other way: facing the centre, left is clockwise (+1)
    if layout == "row":
        return s + step if 0 <= s + step < n else None
    c = s % m + step
    return (s // m) * m + c if 0 <= c < m else None


def holds_in_world(puzzle: dict, world: dict, clue: list) -> bool:
    """A clue's truth in the hidden world, computed directly from seat numbers."""
    t = clue[0]
    if t in ("left", "right", "opp", "faces"):
        return _move_in_world(puzzle, world, t, clue[2], clue[3] if len(clue) > 3 else 0) == world["seat"][clue[1]]
    if t == "faces_rel":
        return _move_in_world(puzzle, world, "faces_" + clue[3], clue[2], clue[4]) == world["seat"][clue[1]]
    if t == "face" and LAYOUT[puzzle["kind"]] == "square":
        return (_dir_in_world(puzzle, world, clue[1]) == 1) == bool(clue[2])
    if t in ("face", "same_face", "diff_face"):
        F = world["face"]
        other = clue[2] if t == "face" else F[clue[2]]
        return (F[clue[1]] == other) == (t != "diff_face")
    if t in ("end", "not_end", "lend", "rend", "row", "pos", "corner", "mid"):
        return _unary_in_world(puzzle, world["seat"][clue[1]], clue)
    return _pair_in_world(puzzle, [world["seat"][x] for x in clue[1:] if isinstance(x, str)], clue)


def _unary_in_world(puzzle: dict, a: int, clue: list) -> bool:
    """End, row and position clues about a person at seat a."""
    n, t = len(puzzle["people"]), clue[0]
    m, rows2 = n // 2, LAYOUT[puzzle["kind"]] == "rows2"
    col, last = (a % m, m - 1) if rows2 else (a, n - 1)
    if t in ("corner", "mid"):
        return (a % 2 == 0) == (t == "corner")
    if LAYOUT[puzzle["kind"]] == "rect":
        return (a in (0, m)) == (t == "end")  # the two ends of the table
    if t == "pos":
        return a == (clue[3] - 1 if clue[2] == "west" else n - clue[3])
    if t == "row":
        return (a >= m) == bool(clue[2])  # row 1 (south side) faces north
    if t in ("lend", "rend"):
        left = 0 if a >= m else m - 1  # the north-facing row has west on its left
        return col == (left if t == "lend" else m - 1 - left)
    return (col in (0, last)) == (t == "end")


def _pair_in_world(puzzle: dict, seats: list[int], clue: list) -> bool:
    """Clues relating two or three people by seat numbers."""
    n, t, layout = len(puzzle["people"]), clue[0], LAYOUT[puzzle["kind"]]
    m = n // 2

    def near(x: int, y: int) -> bool:
        if layout in CYCLIC:
            return (x - y) % n in (1, n - 1)
        return abs(x - y) == 1 and (layout == "row" or x // m == y // m)
    a, b = seats[0], seats[1]
    if t == "between":
        return near(a, b) and near(a, seats[2])
    if t == "gap":
        return abs(a - b) == clue[3] + 1
    return {"adj": near(a, b), "not_adj": not near(a, b), "same": a == b, "not_same": a != b,
            "not_faces": (b + m) % n != a, "same_row": a // m == b // m, "diff_row": a // m != b // m,
            "diag": a // m != b // m and {a % m, b % m} == {0, m - 1}}[t]


def answer_in_world(puzzle: dict, world: dict) -> str:
    """The question's answer in the hidden world, computed directly (NO_ANSWER if it has none)."""
    q = puzzle["question"]
    if q[0] in ("who", "attr", "at_end", "at_pos"):
        fixed = q[0] in ("at_end", "at_pos")
        seat = fixed_seat(puzzle) if fixed else _move_in_world(puzzle, world, q[-3], q[-2], q[-1])
        group = q[1] if q[0] == "attr" else "people"
        hits = [t for t in members(puzzle, group) if world["seat"][t] == seat]
        return hits[0] if hits else NO_ANSWER
    if q[0] == "count_between":
        return str(abs(world["seat"][q[1]] - world["seat"][q[2]]) - 1)
    if q[0] == "count_face":
        return str(sum(1 for p in puzzle["people"] if world["face"][p] == q[1]))
    if q[0] == "where":  # a row's seat, or how many seats round to y's own left x sits
        x, y, n = world["seat"][q[1]], q[2], len(puzzle["people"])
        k = x if not y else next(k for k in range(n) if _move_in_world(puzzle, world, "left", y, k) == x)
        return where_texts(puzzle)[k]
    true = [i for i, s in enumerate(q[1]) if holds_in_world(puzzle, world, s)]
    return statement_texts(puzzle)[true[0]] if len(true) == 1 else NO_ANSWER
