"""The checker: a deduction is accepted only when the seating solver proves every step from exactly what the step
cites (helpers.puzzles.csp on the puzzle's seating.solver.Model, never the generator's hidden world): its own clues,
what the earlier steps it names established (steps.established), the premises it names and its case. The model
holds one person per seat and the layout's way of facing; the set-up's premises (steps.premise_names: four face the
centre, which way the corners face, a sitter's stated facing) count only where a step cites them.

Per step, with what it cites:
- each claim holds in every arrangement they allow (no arrangement satisfies them and the claim's negation);
- a split's cases cover every arrangement they allow (none fits no case);
- a step that closes its case leaves no arrangement;
- a conclusion's answer is the only one the arrangements give (a cited conclusion inside a case covers that case);
  the last step concludes the puzzle's key outside any case, and a step works only inside cases earlier steps
  opened and cites only earlier steps whose case is its own or one around it.
A step that fails is refused with what it does not cite that would have proven it ("it needs clue 4, which it does
not cite"), when one such clue, premise or step exists.
"""

from __future__ import annotations

from typing import Callable

from helpers.puzzles import csp
from helpers.puzzles.deduction.steps import (Step, concluded_case, established, fact_constraint, frozen,
                                             open_model, premise_constraint, premise_names, shared_puzzle)
from helpers.puzzles.deduction.words import cite, fact_text, premise_text, refs
from helpers.puzzles.seating.solver import Model

Test = Callable[[list[csp.Constraint]], "str | None"]  # what is wrong given some constraints, or None


def _any(model: Model, cons: list[csp.Constraint]) -> bool:
    """Whether some arrangement meets every constraint."""
    return len(csp.solve(model.problem, cons).rows) > 0


def _answers(model: Model, cons: list[csp.Constraint]) -> set[str]:
    """The answers the arrangements meeting the constraints give."""
    return model.answers(csp.solve(model.problem, cons, keep=model.question_vars()))


def key_of(puzzle: dict) -> str:
    """The solver's one answer to the puzzle (ValueError when it has none or several)."""
    model = Model(shared_puzzle(puzzle))
    found = _answers(model, model.premises + [model.constraint(c) for c in model.puzzle["clues"]])
    if len(found) != 1:
        raise ValueError(f"the puzzle does not prove one answer: {sorted(found)}")
    return found.pop()


def in_case(outer: tuple, inner: tuple) -> bool:
    """Whether what holds in case `outer` holds in case `inner` (outer is inner or a case around it)."""
    return tuple(map(frozen, outer)) == tuple(map(frozen, inner))[:len(outer)]


def citable(steps: list[Step], j: int, i: int) -> bool:
    """Whether step i may rest on step j: an earlier step whose case holds where step i works; a conclusion inside a
    case only for a conclusion."""
    return j < i and in_case(established(steps[j])[0], steps[i].case) and (
        concluded_case(steps[j]) is None or steps[i].answer is not None)


class Proof:
    """A puzzle's model with its premises left out, and the constraints of anything a step may cite."""

    def __init__(self, puzzle: dict) -> None:
        """The open model (steps.open_model) and the premises a step may cite."""
        self.puzzle = puzzle
        self.model = open_model(puzzle)
        self.clues = self.model.puzzle["clues"]
        self.premises = {p: premise_constraint(self.model, puzzle, p) for p in premise_names(puzzle)}

    def facts(self, facts) -> list[csp.Constraint]:
        """Facts as constraints."""
        return [fact_constraint(self.model, frozen(f)) for f in facts]

    def step_cons(self, steps: list[Step], j: int) -> list[csp.Constraint]:
        """What step j established, as constraints."""
        return self.facts(established(steps[j])[1])

    def cited(self, steps: list[Step], i: int) -> list[csp.Constraint]:
        """The constraints of everything step i cites, and its case."""
        step = steps[i]
        return (self.model.premises + [self.premises[p] for p in step.premises]
                + [self.model.constraint(self.clues[u]) for u in step.uses]
                + [c for j in step.after for c in self.step_cons(steps, j)] + self.facts(step.case))

    def citation_problems(self, steps: list[Step], i: int) -> list[str]:
        """What step i cites that does not exist or may not be cited there."""
        step, out = steps[i], []
        if any(not 0 <= u < len(self.clues) for u in step.uses):
            out.append(f"cites a clue the puzzle does not have ({[u + 1 for u in step.uses]})")
        if any(p not in self.premises for p in step.premises):
            out.append(f"cites a premise the puzzle does not state ({list(step.premises)}; it states "
                       f"{list(self.premises)})")
        for j in step.after:
            if not 0 <= j < i:
                out.append(f"cites step {j + 1}, which does not come before it")
            elif not citable(steps, j, i):
                out.append(f"cites step {j + 1}, which holds in another case"
                           + (" or concludes inside one" if concluded_case(steps[j]) is not None else ""))
        return out

    def tests(self, steps: list[Step], i: int, key: str | None, last: bool) -> list[Test]:
        """Step i's tests, each given the constraints it may rest on."""
        step, model, said = steps[i], self.model, self.said(steps[i])
        out: list[Test] = []
        for fact in step.claims:
            neg = fact_constraint(model, ("not", frozen(fact)))
            out.append(lambda cons, fact=fact, neg=neg: None if not _any(model, cons + [neg]) else
                       f"claims '{fact_text(self.puzzle, fact)}', which fails in an arrangement {said} allow")
        if step.split:
            miss = fact_constraint(model, ("not", ("or", *map(frozen, step.split))))
            out.append(lambda cons: None if not _any(model, cons + [miss]) else
                       f"misses a case: an arrangement {said} allow fits none of its cases")
        if step.closes:
            out.append(lambda cons: None if not _any(model, cons) else
                       f"closes a case that is not impossible: an arrangement {said} allow fits it")
        if step.answer is not None:
            cases = [j for j in step.after if concluded_case(steps[j]) is not None]
            out += [lambda cons, j=j: f"concludes '{step.answer}' but the case step {j + 1} cites concluded "
                    f"'{steps[j].answer}'" for j in cases if steps[j].answer != step.answer]
            covered = self.facts(("not", concluded_case(steps[j])) for j in cases)
            out.append(lambda cons: self.answer_problem(step, cons, covered, key, last, said))
        return out

    def answer_problem(self, step: Step, cons: list, covered: list, key: str | None, last: bool,
                       said: str) -> str | None:
        """What is wrong with a conclusion: the arrangements allowed (outside the cited conclusions' cases) give
        another answer, or none is allowed; the last step's answer is not the key."""
        found = _answers(self.model, cons + covered) if _any(self.model, cons) else set()
        if not found <= {step.answer} or not _any(self.model, cons):
            return f"concludes '{step.answer}' but the arrangements {said} allow give {sorted(found)}"
        if last and key is not None and step.answer != key:
            return f"concludes '{step.answer}', not the key '{key}'"
        return None

    def said(self, step: Step) -> str:
        """What a step cites, in a problem's words: "clue 2, step 1 and its case"."""
        parts = [cite(step.uses) if step.uses else "", refs(step.after)]
        parts += [f"'{premise_text(self.puzzle, p)}'" for p in step.premises]
        named = [p for p in parts if p]
        return (", ".join(named) if named else "no clue") + (" and its case" if step.case else "")

    def missing(self, steps: list[Step], i: int, test: Test, cons: list) -> list[str]:
        """The uncited clues, premises and earlier steps each of which alone would make the test pass."""
        step, out = steps[i], []
        options = [(cite((u,)), [self.model.constraint(c)]) for u, c in enumerate(self.clues) if u not in step.uses]
        options += [(f"'{premise_text(self.puzzle, p)}'", [con]) for p, con in self.premises.items()
                    if p not in step.premises]
        options += [(refs((j,)), self.step_cons(steps, j)) for j in range(i)
                    if j not in step.after and citable(steps, j, i) and established(steps[j])[1]]
        for name, extra in options:
            if test(cons + extra) is None:
                out.append(name)
        return out

    def step_problems(self, steps: list[Step], i: int, key: str | None = None, last: bool = False) -> list[str]:
        """What is wrong with step i, proven from exactly what it cites (each problem naming what it does not cite
        that would have proven it, if any)."""
        wrong = self.citation_problems(steps, i)
        if wrong:
            return wrong
        cons, out = self.cited(steps, i), []
        for test in self.tests(steps, i, key, last):
            problem = test(cons)
            if problem is not None:
                needs = self.missing(steps, i, test, cons)
                out.append(problem + (f"; it needs {' or '.join(needs)}, which it does not cite" if needs else ""))
        return out


def check(puzzle: dict, steps: list[Step], key: str | None = None, *, complete: bool = True) -> list[str]:
    """Every problem of a deduction (empty when the solver proves it), each naming its step's number and text; the
    key is the solver's own unless given. complete=False proves the steps without asking the last to conclude (a
    model's first step, read back: deduction.reading)."""
    proof = Proof(puzzle)
    key = key if key is not None or not complete else key_of(puzzle)
    out, opened = [], set()
    for i, step in enumerate(steps):
        where = f"step {i + 1} ({step.text or step})"
        case = tuple(map(frozen, step.case))
        if case and case not in opened:
            out.append(f"{where}: works inside a case no earlier step opened")
        last = i == len(steps) - 1
        out += [f"{where}: {p}" for p in proof.step_problems(steps, i, key if complete else None, last)]
        opened |= {case + (frozen(f),) for f in step.split}
    if complete and (not steps or steps[-1].answer is None or steps[-1].case):
        out.append("the last step does not conclude the key for the whole puzzle")
    return out
