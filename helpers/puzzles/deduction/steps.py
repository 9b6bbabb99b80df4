"""A deduction's parts: a step (the clues, earlier steps and premises it cites, the case it works inside, the cases
it opens, the facts it claims, whether it closes its case, the key it concludes), what a step establishes for the
steps after it, the puzzle's premises, and the meaning of a claimed fact as a solver constraint.

A fact is a seating clue in the shared solver's terms (helpers.puzzles.seating.solver.Model: ("pos", "Ana",
"west", 2), ("left", "Ben", "Ana", 1), ("opp", "Cy", "Ana"), ("end", "Dee"), ...), a seat in one of two rows
(("row_pos", "Ana", 1, "west", 2): second from the west end of the row facing north, 0 the row facing south), or
("not", fact) or ("or", fact, fact, ...). A case is a fact assumed; a step inside nested cases carries all of them,
outermost first.

A premise is what the puzzle's set-up says beyond one person per seat and the way the layout faces, named so a step
can cite it: "half" (four face one way, four the other), "corners" (which way the square's corner sitters face), and
"face:Ana" (Ana's facing, stated in the set-up). The checker's model leaves them out (open_model) and adds those a
step cites (premise_constraint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.puzzles import csp
from helpers.puzzles.seating import classic
from helpers.puzzles.seating.solver import Model
from helpers.puzzles.seating.text import FACING_KINDS, KINDS as TEXT_KINDS

CLASSIC = ("seating_linear", "seating_circular")
WRITTEN = ("seating_attributes", "seating_rectangle")  # the layouts families the writer covers too
SEATING = CLASSIC + TEXT_KINDS  # every seating family (the classic two and the text-built six): the checker reads all


@dataclass(frozen=True)
class Step:
    """One step of a deduction; the checker proves what it says from exactly what it cites: its clues, the earlier
    steps it names (what each established: established), its premises and its case."""

    uses: tuple[int, ...] = ()  # clue indices (0-based, the order the question states them)
    after: tuple[int, ...] = ()  # earlier steps it rests on (0-based indices into the deduction)
    premises: tuple[str, ...] = ()  # the set-up's premises it rests on (premise_names)
    claims: tuple[tuple, ...] = ()  # facts true in every arrangement what it cites (and its case) allows
    case: tuple[tuple, ...] = ()  # the case assumptions this step works inside (outermost first)
    split: tuple[tuple, ...] = ()  # the cases it opens: together they cover every arrangement still possible
    closes: bool = False  # its case has no arrangement once what it cites is added
    answer: str | None = None  # the key this step concludes (in its case; the last step: for the whole puzzle)
    text: str = ""  # the step in words


def established(step: Step) -> tuple[tuple, tuple]:
    """What a later step citing this one may rest on: (the case it holds in, the facts). Claims and a split's
    alternatives hold in the step's own case; a closed case's negation holds in the case around it. A conclusion
    inside a case holds there only as "this case gives the key" (concluded_case): no fact here."""
    if step.closes and step.case:
        return step.case[:-1], (("not", step.case[-1]),)
    if concluded_case(step) is not None:
        return step.case[:-1], ()
    return step.case, step.claims + ((("or", *step.split),) if step.split else ())


def concluded_case(step: Step) -> tuple | None:
    """The case a conclusion inside a case covers (its last assumption), else None: a later conclusion citing it
    needs the key only where that case does not hold."""
    return step.case[-1] if step.answer is not None and step.case else None


def premise_names(puzzle: dict) -> list[str]:
    """The premises of the puzzle's set-up a step may cite (see the module's words)."""
    names = ["half"] if puzzle.get("half") else []
    names += ["corners"] if puzzle["kind"] == "seating_square" and puzzle.get("corner_face") is not None else []
    given = puzzle.get("facing") if puzzle["kind"] in FACING_KINDS else None
    return names + [f"face:{p}" for p in puzzle["people"] if given and p in given]


def open_model(puzzle: dict) -> Model:
    """The checker's model: the puzzle's set-up without its premises (a facing each way, the corners' a variable;
    a step adds those it cites), its words as stated (a statement question names its statements in them)."""
    shared = shared_puzzle(puzzle)
    if not premise_names(puzzle):
        return Model(shared)
    model = Model(dict(shared, half=False, **({"facing": {}} if puzzle["kind"] in FACING_KINDS else {}),
                       **({"corner_face": None} if puzzle["kind"] == "seating_square" else {})))
    model.puzzle = shared
    return model


def premise_constraint(model: Model, puzzle: dict, name: str) -> csp.Constraint:
    """A premise's meaning on open_model(puzzle) (KeyError for a name the puzzle lacks)."""
    if name not in premise_names(puzzle):
        raise KeyError(name)
    if name == "half":
        return csp.Constraint(tuple(model.face.values()), lambda *f: sum(f) == len(model.face) // 2)
    if name == "corners":
        return csp.Constraint((model.corner,), lambda c: c == puzzle["corner_face"])
    who = name.split(":", 1)[1]
    return model.constraint(["face", who, puzzle["facing"][who]])


def frozen(fact) -> tuple:
    """A fact as nested tuples (lists from JSON become hashable, comparable facts)."""
    return tuple(frozen(x) if isinstance(x, (list, tuple)) else x for x in fact)


def shared_puzzle(puzzle: dict) -> dict:
    """The puzzle in the shared solver's terms (the classic kinds translate; the layouts are already in them)."""
    return classic.shared(puzzle) if puzzle["kind"] in CLASSIC else puzzle


def _truth(con: csp.Constraint, cols: list) -> np.ndarray:
    """A constraint's truth per row as a bool array of the columns' length."""
    return np.broadcast_to(np.asarray(con.test(*cols), dtype=bool), np.shape(cols[0]))


def fact_constraint(model: Model, fact: tuple) -> csp.Constraint:
    """The meaning of a fact as a constraint on the model's variables ("not" and "or" built on the clue types)."""
    if fact[0] == "not":
        inner = fact_constraint(model, fact[1])
        return csp.Constraint(inner.vars, lambda *cols: ~_truth(inner, list(cols)))
    if fact[0] == "or":
        parts = [fact_constraint(model, f) for f in fact[1:]]
        vars_ = tuple(dict.fromkeys(v for p in parts for v in p.vars))

        def either(*cols: np.ndarray) -> np.ndarray:
            """True where some part holds."""
            at = dict(zip(vars_, cols))
            return np.logical_or.reduce([_truth(p, [at[v] for v in p.vars]) for p in parts])
        return csp.Constraint(vars_, either)
    if fact[0] == "row_pos":
        _, x, row, side, k = fact
        seat = row * model.m + (k - 1 if side == "west" else model.m - k)
        return csp.Constraint((model.seat[x],), lambda s: s == seat)
    return model.constraint(list(fact))

