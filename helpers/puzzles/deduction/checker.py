"""The checker: a deduction is accepted only when the seating solver proves every step from the clues it has cited
so far (helpers.puzzles.csp on the puzzle's seating.solver.Model, never the generator's hidden world).

Per step, with the clues cited up to and including it and the step's case assumptions:
- each claim holds in every arrangement they allow (no arrangement satisfies them and the claim's negation);
- a split's cases cover every arrangement they allow (none fits no case);
- a step that closes its case leaves no arrangement;
- a conclusion's answer is the only one the arrangements give; the last step concludes the puzzle's key outside any
  case, and a step works only inside cases earlier steps opened.
"""

from __future__ import annotations

from helpers.puzzles import csp
from helpers.puzzles.deduction.steps import Step, fact_constraint, frozen, shared_puzzle
from helpers.puzzles.deduction.words import cite, fact_text
from helpers.puzzles.seating.solver import Model


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


def _step_problems(puzzle: dict, model: Model, step: Step, base: list[csp.Constraint], cited: str,
                   key: str, last: bool) -> list[str]:
    """What is wrong with one step, given the constraints of its clues so far and its case."""
    out = []
    neg = [fact_constraint(model, ("not", frozen(f))) for f in step.claims]
    for fact, con in zip(step.claims, neg):
        if _any(model, base + [con]):
            out.append(f"claims '{fact_text(puzzle, fact)}', which fails in an arrangement {cited} allow")
    if step.split and _any(model, base + [fact_constraint(model, ("not", ("or", *map(frozen, step.split))))]):
        out.append(f"misses a case: an arrangement {cited} allow fits none of its cases")
    if step.closes and _any(model, base):
        out.append(f"closes a case that is not impossible: an arrangement {cited} allow fits it")
    if step.answer is not None:
        found = _answers(model, base)
        if found != {step.answer}:
            out.append(f"concludes '{step.answer}' but the arrangements {cited} allow give {sorted(found)}")
        elif last and step.answer != key:
            out.append(f"concludes '{step.answer}', not the key '{key}'")
    return out


def check(puzzle: dict, steps: list[Step], key: str | None = None, *, complete: bool = True) -> list[str]:
    """Every problem of a deduction (empty when the solver proves it), each naming its step's number and text; the
    key is the solver's own unless given. complete=False proves the steps without asking the last to conclude (a
    model's first step, read back: deduction.reading)."""
    model = Model(shared_puzzle(puzzle))
    clues = model.puzzle["clues"]
    key = key if key is not None or not complete else key_of(puzzle)
    out, cited, opened = [], set(), set()
    for i, step in enumerate(steps):
        where = f"step {i + 1} ({step.text or step})"
        if any(not 0 <= u < len(clues) for u in step.uses):
            out.append(f"{where}: cites a clue the puzzle does not have ({[u + 1 for u in step.uses]})")
            continue
        case = tuple(map(frozen, step.case))
        if case and case not in opened:
            out.append(f"{where}: works inside a case no earlier step opened")
        cited |= set(step.uses)
        base = (model.premises + [model.constraint(clues[u]) for u in sorted(cited)]
                + [fact_constraint(model, f) for f in case])
        said = (f"{cite(tuple(cited))}" if cited else "no clue") + (" and its case" if case else "")
        last = i == len(steps) - 1
        out += [f"{where}: {p}" for p in _step_problems(puzzle, model, step, base, said, key, last)]
        opened |= {case + (frozen(f),) for f in step.split}
    if complete and (not steps or steps[-1].answer is None or steps[-1].case):
        out.append("the last step does not conclude the key for the whole puzzle")
    return out
