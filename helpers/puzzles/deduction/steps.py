"""A deduction's parts: a step (the clues it cites, the case it works inside, the cases it opens, the facts it
claims, whether it closes its case, the key it concludes) and the meaning of a claimed fact as a solver constraint.

A fact is a seating clue in the shared solver's terms (helpers.puzzles.seating.solver.Model: ("pos", "Ana",
"west", 2), ("left", "Ben", "Ana", 1), ("opp", "Cy", "Ana"), ("end", "Dee"), ...), a seat in one of two rows
(("row_pos", "Ana", 1, "west", 2): second from the west end of the row facing north, 0 the row facing south), or
("not", fact) or ("or", fact, fact, ...). A case is a fact assumed; a step inside nested cases carries all of them,
outermost first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.puzzles import csp
from helpers.puzzles.seating import classic
from helpers.puzzles.seating.solver import Model
from helpers.puzzles.seating.text import KINDS as TEXT_KINDS

CLASSIC = ("seating_linear", "seating_circular")
WRITTEN = ("seating_attributes", "seating_rectangle")  # the layouts families the writer covers too
SEATING = CLASSIC + TEXT_KINDS  # every seating family (the classic two and the text-built six): the checker reads all


@dataclass(frozen=True)
class Step:
    """One step of a deduction; the checker proves what it says from the clues cited up to and including it."""

    uses: tuple[int, ...] = ()  # clue indices (0-based, the order the question states them)
    claims: tuple[tuple, ...] = ()  # facts true in every arrangement the clues so far (and the case) allow
    case: tuple[tuple, ...] = ()  # the case assumptions this step works inside (outermost first)
    split: tuple[tuple, ...] = ()  # the cases it opens: together they cover every arrangement still possible
    closes: bool = False  # its case has no arrangement once these clues are added
    answer: str | None = None  # the key this step concludes (in its case; the last step: for the whole puzzle)
    text: str = ""  # the step in words


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

