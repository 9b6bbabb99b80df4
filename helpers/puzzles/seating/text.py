"""Words of the seating kinds in helpers.puzzles.seating.layouts: the shared vocabulary (kinds, layouts,
attribute groups) and every phrasing of a setup, clue and question, rendered only from the structured puzzle.
"""

from __future__ import annotations




KINDS = ("seating_attributes", "seating_mixed_facing", "seating_parallel_rows", "seating_row_facing",
         "seating_square", "seating_rectangle")
# the first two kinds (helpers.puzzles.seating.classic) share the solver: a row facing north, a round table
LAYOUT = {"seating_attributes": "round", "seating_mixed_facing": "round", "seating_parallel_rows": "rows2",
          "seating_row_facing": "row", "seating_square": "square", "seating_rectangle": "rect",
          "seating_linear": "row", "seating_circular": "round"}
CYCLIC = ("round", "square", "rect")  # one ring of seats: neighbours wrap round, left/right turn round it
FACING_KINDS = ("seating_mixed_facing", "seating_row_facing")
NO_ANSWER = "(none)"
ORD = ("", "first", "second", "third", "fourth", "fifth", "sixth")
NUM = ("", "one", "two", "three", "four", "five", "six")
GROUPS = {
    "nation": {"values": ("Thai", "Greek", "Swiss", "Czech", "Kenyan", "German", "Indian"),
               "noun": "the {v}", "pred": "is {v}", "neg": "is not {v}", "comp": "{v}", "label": "nationality",
               "q": ("What is the nationality of {who}?", "Which nationality is {who}?",
                     "What nationality is {who}?")},
    "drink": {"values": ("tea", "milk", "soda", "cola", "juice", "water", "cocoa"),
              "noun": "the {v} drinker", "pred": "drinks {v}", "neg": "does not drink {v}",
              "comp": "the {v} drinker", "label": "drink",
              "q": ("What does {who} drink?", "Which drink does {who} have?", "What is the drink of {who}?")},
    "pet": {"values": ("cat", "dog", "fish", "bird", "frog", "hare", "mouse"),
            "noun": "the {v} owner", "pred": "owns the {v}", "neg": "does not own the {v}",
            "comp": "the {v} owner", "label": "pet",
            "q": ("Which pet does {who} own?", "What pet does {who} have?", "What pet belongs to {who}?")},
    "sport": {"values": ("golf", "judo", "polo", "chess", "darts", "rugby", "tennis"),
              "noun": "the {v} player", "pred": "plays {v}", "neg": "does not play {v}", "comp": "the {v} player",
              "label": "sport",
              "q": ("Which sport does {who} play?", "What does {who} play?", "What sport does {who} play?")},
    "job": {"values": ("chef", "pilot", "nurse", "judge", "actor", "baker", "clerk", "tutor"),
            "noun": "the {v}", "pred": "is the {v}", "neg": "is not the {v}", "comp": "the {v}", "label": "job",
            "q": ("What is the job of {who}?", "Which job does {who} have?", "What work does {who} do?")},
}
UNARY = ("end", "not_end", "lend", "rend", "corner", "mid")
MAX_WORDS = 100
LETTERS = "EFGHJKLMNPQRSTUVWXYZ"  # no A-D (choice letters) nor I/O (read as 1/0)
LETTER_SHARE = 0.25  # casts of single letters (the aptitude-test style), the rest given names
# The longest name a cast of n may use: 7 names of up to 5 letters and 8-12 of up to 4 keep the longest layouts'
# setups (~150 characters with letters) inside the 400-character budget with 5-7 clues.
LONGEST = {4: 7, 5: 7, 6: 6, 7: 5, 8: 4, 10: 4, 12: 4}


def cast(rng, names: list, n: int, longest: int | None = None) -> list[str]:
    """n people: single letters drawn at random (not a run) in LETTER_SHARE of casts, else given names of at most
    `longest` letters (LONGEST[n] by default), in the order drawn."""
    plain = [x[0] if isinstance(x, (tuple, list)) else x for x in names]
    pool = sorted({x for x in plain if len(x) <= (longest or LONGEST.get(n, 4))})
    if rng.random() < LETTER_SHARE or len(pool) < n:
        return sorted(rng.sample(LETTERS, n))
    return rng.sample(pool, n)


def group_of(puzzle: dict, token: str) -> str:
    """The group a token belongs to ("people" for a person)."""
    if token in puzzle["people"]:
        return "people"
    for g, values in puzzle.get("groups", {}).items():
        if token in values:
            return g
    raise ValueError(f"unknown token {token!r}")


def members(puzzle: dict, group: str) -> list[str]:
    """The tokens of a group."""
    return list(puzzle["people"]) if group == "people" else list(puzzle["groups"][group])


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
        return (f"immediately to the {rel} of {x}", f"to {x}'s immediate {rel}",
                f"just to the {rel} of {x}")[variant % 3]
    return (f"{ORD[k]} to the {rel} of {x}", f"{NUM[k]} seats to {x}'s {rel}", f"{ORD[k]} to {x}'s {rel}")[variant % 3]


def dir_word(puzzle: dict, f: int) -> str:
    """A facing value in words for the puzzle's layout."""
    if puzzle["kind"] in ("seating_mixed_facing", "seating_square"):
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
        return [f"{A} sits {_side(t, k, b, 0)}.", f"{A} sits {_side(t, k, b, 1)}.", terse,
                f"{A} is seated {_side(t, k, b, 2)}."]
    if t == "faces_rel":
        b, rel, k = _np(puzzle, clue[2]), clue[3], clue[4]
        return [f"{A} faces the person {_side(rel, k, b, 0)}.", f"{A} sits facing the person {_side(rel, k, b, 1)}.",
                f"{A} is facing the one {_side(rel, k, b, 2)}."]
    if t in ("same", "not_same"):
        g = GROUPS[group_of(puzzle, clue[2])]
        verb = g["pred" if t == "same" else "neg"].format(v=clue[2])
        noun = _cap(g["noun"].format(v=clue[2]))
        no = "not " if t == "not_same" else ""
        return [f"{A} {verb}.", f"{noun} is {no}{_comp(puzzle, clue[1])}.",
                f"It is {no}{a} who {g['pred'].format(v=clue[2])}."]
    if t in ("face", "row"):
        d = dir_word(puzzle, clue[2])
        if t == "row":
            return [f"{A} faces {d}.", f"{A} sits in the row facing {d}.", f"{A} is in the row that faces {d}."]
        return [f"{A} faces {d}.", f"{A} sits facing {d}.", f"{A} is facing {d}."]
    if t in UNARY:
        return _unary_variants(puzzle, t, A, a)
    if t == "pos":
        side, k = clue[2], clue[3]
        at = "at the" if k == 1 else f"{ORD[k]} from the"
        return [f"{A} sits {at} {side} end.", f"{A} is {at} {side} end.", f"{A} takes the seat {at} {side} end."]
    if t == "between":
        b, c = _np(puzzle, clue[2]), _np(puzzle, clue[3])
        return [f"{A} sits between {b} and {c}, next to both.", f"{A} sits next to both {b} and {c}.",
                f"{A} has {b} on one side and {c} on the other."]
    return _pair_variants(puzzle, clue, A, a)


def _unary_variants(puzzle: dict, t: str, A: str, a: str) -> list[str]:
    """Phrasings of the end clues."""
    layout = LAYOUT[puzzle["kind"]]
    if layout in ("square", "rect"):
        return _table_unary_variants(puzzle, t, A)
    row = "their row" if layout == "rows2" else "the row"
    if t == "end":
        return [f"{A} sits at an extreme end.", f"{A} sits at one end of {row}.", f"{A} is at an end of {row}."]
    if t == "not_end":
        return [f"{A} does not sit at an end.", f"{A} sits at neither end of {row}.", f"{A} is not at an end."]
    side = "left" if t == "lend" else "right"
    return [f"{A} sits at the extreme {side} end of {row}.", f"No one sits to {a}'s {side} in {row}.",
            f"{A} is at the far {side} end of {row}."]


def _table_unary_variants(puzzle: dict, t: str, A: str) -> list[str]:
    """Phrasings of corner/middle (square) and end/long-side (rectangle) clues; at a square table whose
    corners and middles face different ways, a sitter's facing also says where they sit."""
    if t in ("end", "not_end"):
        return ([f"{A} sits at one end of the table.", f"{A} sits at a short side.", f"{A} is at an end of the table.",
                 f"{A} sits at a table end."]
                if t == "end" else
                [f"{A} sits on a long side.", f"{A} does not sit at an end of the table.", f"{A} is on a long side."])
    texts = ([f"{A} sits at a corner.", f"{A} is seated at a corner.", f"{A} takes a corner seat."] if t == "corner"
             else [f"{A} sits in the middle of a side.", f"{A} is at the middle of a side.", f"{A} sits mid-side."])
    if puzzle.get("corner_face") is not None:
        inward = puzzle["corner_face"] == (t == "corner")
        texts.append(f"{A} faces {'the centre' if inward else 'outward'}.")
    return texts


def next_to_variants(a: str, b: str) -> dict[str, list[str]]:
    """The wordings of "next to" and "not next to" (one table for every seating family: classic.py's too)."""
    return {"adj": [f"{a} sits next to {b}.", f"{a} and {b} are neighbours.", f"{a} is seated beside {b}."],
            "not_adj": [f"{a} does not sit next to {b}.", f"{a} and {b} are not neighbours.",
                        f"{a} is not seated beside {b}."]}


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
        **next_to_variants(A, b),
        "same_face": [f"{A} and {b} face the same way.", f"{A} faces the same direction as {b}.",
                      f"{A} and {b} face in the same direction."],
        "diff_face": [f"{A} and {b} face opposite ways.", f"{A} faces the opposite way to {b}.",
                      f"{A} and {b} face in opposite directions."],
        "faces": [f"{A} faces {b}.", f"{A} sits facing {b}.", f"{A} and {b} face each other."],
        "not_faces": [f"{A} does not face {b}.", f"{A} and {b} do not face each other.", f"{A} is not facing {b}."],
        "same_row": [f"{A} and {b} sit in the same row.", f"{A} sits in the same row as {b}.",
                     f"{A} shares a row with {b}."],
        "diff_row": [f"{A} and {b} sit in different rows.", f"{A} does not sit in {b}'s row.",
                     f"{A} and {b} are in different rows."],
        "diag": [f"{A} and {b} sit at diagonally opposite corners.", f"{A} is in the corner diagonally opposite {b}.",
                 f"{A} and {b} are at diagonally opposite corners."],
    }
    return table[t]


def statement_texts(puzzle: dict) -> list[str]:
    """The statements of a "which is true" question, as the choice texts."""
    q = puzzle["question"]
    return [clue_variants(puzzle, s)[p].rstrip(".") for s, p in zip(q[1], puzzle["s_phrasing"])]


STATEMENT_QUESTIONS = ("Which statement is true?", "Which of these is true?", "Which one of these statements is true?",
                       "Which of the following is true?")


def where_texts(puzzle: dict) -> list[str]:
    """The answers a "where" question can have, indexed by its solver code: a row's seats from its west (left)
    end, or the seat k places round to y's own left (k = 1..n-1: the far ones are to y's right, n/2 opposite)."""
    q, n = puzzle["question"], len(puzzle["people"])
    west, east = ("left", "right") if puzzle["kind"] == "seating_linear" else ("west", "east")
    if not q[2]:
        def seat(s: int) -> str:
            side, k = (west, s + 1) if s + 1 <= n - s else (east, n - s)
            return f"At the {side} end" if k == 1 else f"{_cap(ORD[k])} from the {side} end"
        return [seat(s) for s in range(n)]
    y = _np(puzzle, q[2])

    def around(k: int) -> str:
        if 2 * k == n:
            return f"Opposite {y}"
        side, j = ("left", k) if 2 * k < n else ("right", n - k)
        return f"Immediately to {y}'s {side}" if j == 1 else f"{_cap(ORD[j])} to {y}'s {side}"
    return ["(the same seat)"] + [around(k) for k in range(1, n)]


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
        return [t.format(who=_who_phrase(puzzle, q[2], q[3], q[4], i % 2)) for i, t in enumerate(GROUPS[q[1]]["q"])]
    if q[0] == "who":
        return _who_variants(puzzle, q[1], q[2], q[3])
    if q[0] == "at_end":
        d = dir_word(puzzle, q[1])
        return [f"Who sits at the extreme {q[2]} end of the row facing {d}?",
                f"In the row facing {d}, who sits at the extreme {q[2]} end?",
                f"Who is at the far {q[2]} end of the row that faces {d}?"]
    if q[0] == "at_pos":
        at = "at the" if q[2] == 1 else f"{ORD[q[2]]} from the"
        return [f"Who sits {at} {q[1]} end?", f"Who is seated {at} {q[1]} end?", f"Who takes the seat {at} {q[1]} end?"]
    if q[0] == "count_between":
        return [f"How many people sit between {q[1]} and {q[2]}?",
                f"How many people are seated between {q[1]} and {q[2]}?",
                f"How many people are there between {q[1]} and {q[2]}?"]
    if q[0] == "where":
        x = _np(puzzle, q[1])
        if not q[2]:
            return [f"Where does {x} sit?", f"Where is {x} seated?", f"Which seat does {x} take?"]
        y = _np(puzzle, q[2])
        return [f"Where does {x} sit relative to {y}?", f"Where is {x} seated in relation to {y}?",
                f"Which seat does {x} take, counted from {y}?"]
    if q[0] == "count_face":
        d = dir_word(puzzle, q[1])
        return [f"How many people face {d}?", f"How many of them face {d}?", f"How many sitters face {d}?"]
    return list(STATEMENT_QUESTIONS)


def _who_variants(puzzle: dict, rel: str, x: str, k: int) -> list[str]:
    """Phrasings of "who" questions."""
    xs = _np(puzzle, x)
    if rel == "same":
        g = GROUPS[group_of(puzzle, x)]
        return [f"Who {g['pred'].format(v=x)}?", f"Who is {g['comp'].format(v=x)}?",
                f"Which person {g['pred'].format(v=x)}?", f"Which sitter {g['pred'].format(v=x)}?"]
    if rel == "opp":
        return [f"Who sits opposite {xs}?", f"Who is seated directly opposite {xs}?", f"Who sits across from {xs}?"]
    if rel == "faces":
        return [f"Who faces {xs}?", f"Who sits facing {xs}?", f"Who is facing {xs}?"]
    if rel == "nbr":
        return [f"Who sits next to {xs}?", f"Who is {xs}'s neighbour?", f"Who is the only neighbour of {xs}?"]
    if rel.startswith("faces_"):
        base = rel.removeprefix("faces_")
        return [f"Who faces the person {_side(base, k, xs, 0)}?",
                f"Who sits facing the person {_side(base, k, xs, 1)}?",
                f"Who is facing the one {_side(base, k, xs, 2)}?"]
    return [f"Who sits {_side(rel, k, xs, 0)}?", f"Who sits {_side(rel, k, xs, 1)}?", f"Who is {_side(rel, k, xs, 2)}?"]


OWN = ("Left/right are their own.", "Left and right are their own.", "Left/right: each sitter's own.",
       "Each one's left/right is their own.")


def intro_variants(puzzle: dict) -> list[str]:
    """Every phrasing of the setup sentence(s); the cast always comes first or right after a short opening."""
    kind, people, n = puzzle["kind"], puzzle["people"], len(puzzle["people"])
    cast = _list(list(people))
    if kind == "seating_attributes":
        groups = puzzle["groups"]
        has = " and ".join(f"{GROUPS[g]['label']} ({', '.join(v)})" for g, v in groups.items())
        return [f"{cast} sit round a table facing in, each with a different {has}.",
                f"{cast} sit at a round table facing the centre, each with a different {has}.",
                f"{cast} are seated at a circular table, facing inward; each has a different {has}.",
                f"Round a table, facing the centre, sit {cast}, each with a different {has}."]
    if kind == "seating_mixed_facing":
        facing = _facing_setup(puzzle, "the centre", "outward")
        job = (puzzle.get("groups") or {}).get("job")
        jobs = f" Jobs, one each: {', '.join(job)}." if job else ""
        return [f"{cast} sit round a table. {facing}{jobs} {OWN[0]}",
                f"{cast} sit at a round table. {facing}{jobs} {OWN[1]}",
                f"{cast} are seated at a circular table. {facing}{jobs} {OWN[2]}",
                f"Round a table sit {cast}. {facing}{jobs} {OWN[3]}"]
    if kind == "seating_parallel_rows":
        m = n // 2
        return [f"{cast} sit in two rows of {m} facing each other; one row faces north, the other south. {OWN[0]}",
                f"{cast} sit in two facing rows of {m}, one facing north and one south. {OWN[1]}",
                f"{cast} are seated in two parallel rows of {m}: the north row faces south, the south row north. "
                f"{OWN[2]}",
                f"In two rows of {m}, one facing north and the other south, sit {cast}. {OWN[3]}"]
    if kind in ("seating_square", "seating_rectangle"):
        return _table_intro_variants(puzzle, cast)
    facing = _facing_setup(puzzle, "north", "south")
    return [f"{cast} sit in a row running west to east. {facing} {OWN[0]}",
            f"{cast} sit in one west-east row. {facing} {OWN[1]}",
            f"{cast} are seated in a single row, west to east, in some order. {facing} {OWN[2]}",
            f"In a west-east row sit {cast}. {facing} {OWN[3]}"]


def _table_intro_variants(puzzle: dict, cast: str) -> list[str]:
    """Setups of the square (corners and side middles) and rectangular (ends and long sides) tables."""
    groups = puzzle.get("groups") or {}
    has = "".join(f" Each has a different {GROUPS[g]['label']} ({', '.join(v)})." for g, v in groups.items())
    if puzzle["kind"] == "seating_rectangle":
        side = NUM[len(puzzle["people"]) // 2 - 1]
        return [f"{cast} sit round a rectangular table facing the centre, one at each end and {side} along "
                f"each long side.{has} Opposite means straight across.",
                f"{cast} sit at a rectangular table, facing in: one at each short side, {side} on each long "
                f"side.{has} Opposite means straight across.",
                f"{cast} are seated at a rectangular table facing inward, one at each end, {side} per long side.{has}"
                f" Opposite is straight across.",
                f"Round a rectangular table, facing in, sit {cast}: one per end, {side} per long side.{has} "
                f"Opposite means straight across."]
    cf = puzzle.get("corner_face")
    facing = ("Corner sitters all face one way (centre or outward), mid-side sitters the other."
              if cf is None else f"Those at the corners face {'the centre' if cf else 'outward'}, the others "
              f"{'outward' if cf else 'the centre'}.")
    return [f"{cast} sit at a square table, one at each corner and one in the middle of each side. {facing}"
            f"{has} {OWN[0]}",
            f"{cast} sit round a square table: four at the corners, four mid-side. {facing}{has} {OWN[1]}",
            f"{cast} are seated at a square table, four at corners, four mid-side. {facing}{has} {OWN[2]}",
            f"Round a square table sit {cast}, one per corner and one mid-side. {facing}{has} {OWN[3]}"]


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
