"""What each written step cites: a small set of the clues, earlier steps and premises it rests on, so the checker
proves it from exactly those (deduction.checker) and a reader can follow it.

Found on the board's seatings (deduction.board): start from the clues the step applies and its case; while some
seating they allow breaks the step (a claim false there, a seating in none of a split's cases, a seating left in a
case it closes, another answer), add the latest earlier step that rules out any such seating (of the steps whose
case holds where the step works: what was said just before is what a reader has in mind), else the first such clue
the deduction has cited by then; then drop any the others make unneeded, the earliest first. The writer
(deduction.writer) rests each step on what earlier steps said and its own clues, so a clue is rarely needed. Every
seating the board lists meets the set-up's premises and the clues a board too big to list was built with
(Board.given), so the board cannot tell whether a step needs them: for a puzzle with either, the checker proves the
step from what was found, and where it cannot, they and the earlier steps it may cite are added, then dropped one by
one where the checker proves the step without them, the premises and clues first, then the steps latest first: an
earlier step that states what they fix is cited in their place ("by clue 4 and step 1", not "by clues 1, 2 and 4").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from helpers.puzzles.deduction.board import Board, NoDeduction, OutOfWork
from helpers.puzzles.deduction.checker import Proof, citable
from helpers.puzzles.deduction.steps import Step, concluded_case, established, frozen, premise_names


class Citer:
    """The citations of one deduction's steps, on its board."""

    def __init__(self, board: Board, steps: list[Step]) -> None:
        """The board and the steps as written (each citing the clues it applies); the key they conclude is the
        board's one answer."""
        self.board, self.steps = board, steps
        every = board.mask(frozenset(range(len(board.masks))))
        self.key_mask = board.codes == np.unique(board.codes[every])[0]
        self.cache: dict = {}
        self.hidden = [("premise", p) for p in premise_names(board.puzzle)] + [("clue", u) for u in board.given]
        self.proof = Proof(board.puzzle) if self.hidden else None

    def holds(self, facts) -> np.ndarray:
        """The seatings where every fact holds (cached per fact)."""
        out = np.ones(len(self.board.table.rows), dtype=bool)
        for f in map(frozen, facts):
            if f not in self.cache:
                self.cache[f] = self.board.holds(f)
            out &= self.cache[f]
        return out

    def mask(self, item: tuple) -> np.ndarray:
        """The seatings a cited clue or earlier step allows."""
        kind, x = item
        if kind == "clue":
            return self.board.masks[x]
        done = concluded_case(self.steps[x])
        if done is not None:  # a conclusion inside a case: that case gives the key
            return ~self.holds([done]) | self.key_mask
        return self.holds(established(self.steps[x])[1])

    def good(self, step: Step) -> np.ndarray:
        """The seatings where the step holds: its claims true, inside one of its cases, the key (none: it closes)."""
        if step.closes:
            return np.zeros(len(self.board.table.rows), dtype=bool)
        out = self.holds(step.claims)
        if step.split:
            out &= np.logical_or.reduce([self.holds([f]) for f in step.split])
        return out & self.key_mask if step.answer is not None else out

    def options(self, i: int) -> list[tuple]:
        """What step i may cite besides the clues it applies, in the order tried: the earlier steps whose case holds
        where it works, latest first, then the clues cited by then."""
        pinned = set(self.steps[i].uses)
        clues = sorted({u for s in self.steps[:i + 1] for u in s.uses} - pinned)
        return [("step", j) for j in reversed(range(i)) if citable(self.steps, j, i)] + [("clue", u) for u in clues]

    def on_board(self, i: int) -> list[tuple]:
        """A small set of clues and steps that, with step i's own clues and case, proves it on the board."""
        step = self.steps[i]
        base = self.holds(step.case)
        for u in step.uses:
            base = base & self.board.masks[u]
        good, chosen, m, options = self.good(step), [], base, self.options(i)
        while (bad := np.nonzero(m & ~good)[0]).size:
            pick = next((o for o in options if o not in chosen
                         and np.count_nonzero(self.mask(o)[bad]) < bad.size), None)
            if pick is None:
                raise NoDeduction("uncited")
            chosen.append(pick)
            m = m & self.mask(pick)
        for o in reversed(list(chosen)):
            rest = base
            for other in chosen:
                rest = rest & self.mask(other) if other != o else rest
            if not (rest & ~good).any():
                chosen.remove(o)
        return chosen

    def cited(self, i: int, items: list[tuple]) -> Step:
        """Step i citing its own clues and `items`."""
        step = self.steps[i]
        return replace(step, uses=tuple(sorted(set(step.uses) | {x for k, x in items if k == "clue"})),
                       after=tuple(sorted(x for k, x in items if k == "step")),
                       premises=tuple(x for k, x in self.hidden if k == "premise" and (k, x) in items))

    def proven(self, i: int, step: Step) -> bool:
        """Whether the checker proves step i as cited (the steps before it as written)."""
        return not self.proof.step_problems(self.steps[:i] + [step], i)

    def cite(self, i: int) -> Step:
        """Step i with what it cites: found on the board, then what the board cannot see (premises, the clues it
        was built with) and the earlier steps it may cite added, and dropped one by one by the checker, the hidden
        ones first (a case's conclusion of another answer is never offered: it could only fail the proof)."""
        items = self.on_board(i)
        if self.proof is None or self.proven(i, self.cited(i, items)):
            return self.cited(i, items)
        hidden = [h for h in self.hidden if h not in items and h[1] not in self.steps[i].uses]
        steps = [o for o in self.options(i) if o[0] == "step" and o not in items
                 and (concluded_case(self.steps[o[1]]) is None or self.steps[o[1]].answer == self.steps[i].answer)]
        extra = hidden + steps
        if not self.proven(i, self.cited(i, items + extra)):
            raise NoDeduction("uncited")
        for h in list(extra):  # the hidden ones first: an earlier step that states what they fix is cited instead
            if self.proven(i, self.cited(i, items + [e for e in extra if e != h])):
                extra.remove(h)
        return self.cited(i, items + extra)


def cite_steps(board: Board, steps: list[Step], give_up: Callable[[], bool] | None = None) -> list[Step]:
    """Every step citing what it rests on (see the module's words); NoDeduction "uncited" when none is found,
    "work_budget" when give_up() says stop (asked before each step)."""
    citer, out = Citer(board, steps), []
    for i in range(len(steps)):
        if give_up is not None and give_up():
            raise OutOfWork("work_budget")
        out.append(citer.cite(i))
    return out
