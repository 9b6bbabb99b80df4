"""Deductions over a finite list of worlds: the shared checker and writer of the families whose every possible state
can be listed (truth-tellers and liars: each person's kind; syllogisms: which regions of the classes' diagram hold
something). A new family with such worlds gets its step-by-step explanation, and its checker, from here.

A family gives a Model: how many worlds there are, a boolean mask over them per clue (the worlds the clue allows),
the mask of a fact (the worlds where it holds), its facts in words, and how a set of established facts settles the
answer. A step cites clues and earlier steps and either claims facts (true in every world what it cites allows) or
shows facts possible (true in some world that every clue allows), or concludes the answer from the earlier steps it
cites. The checker accepts a deduction only when each step is proven from exactly what it cites: the claim holds, and
dropping any one cited clue or step breaks it. No helpers import: the families import this module.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Hashable, Sequence

import numpy as np

Fact = Hashable  # a family's fact, e.g. ("kind", "Ana", "liar") or ("not", ("some", "cats", "dogs"))
MAX_CITES = 3  # the most clues and steps one written step cites


@dataclass(frozen=True)
class Step:
    """One step: what it cites (clue indices, earlier step indices, 0-based) and what it establishes."""

    uses: tuple[int, ...] = ()
    after: tuple[int, ...] = ()
    claims: tuple[Fact, ...] = ()  # true in every world the cited clues and steps allow
    possible: tuple[Fact, ...] = ()  # true in some world every clue allows (a witness exists)
    answer: str | None = None  # the key, concluded from the cited steps
    text: str = ""


@dataclass
class Model:
    """A family's worlds, as masks. conclude(claims, possible) -> the one answer those established facts settle, or
    None; fact_mask(fact) -> the worlds where the fact holds."""

    clue_masks: Sequence[np.ndarray]
    fact_mask: Callable[[Fact], np.ndarray]
    conclude: Callable[[tuple, tuple], "str | None"]
    size: int = field(init=False)

    def __post_init__(self) -> None:
        self.size = len(self.clue_masks[0]) if self.clue_masks else 0

    def allowed(self, uses: Sequence[int], facts: Sequence[Fact] = ()) -> np.ndarray:
        """The worlds every cited clue and fact allows."""
        mask = np.ones(self.size, dtype=bool)
        for i in uses:
            mask &= self.clue_masks[i]
        for f in facts:
            mask &= self.fact_mask(f)
        return mask

    def everywhere(self) -> np.ndarray:
        """The worlds every clue allows."""
        return self.allowed(range(len(self.clue_masks)))


def _proves(model: Model, uses: Sequence[int], facts: Sequence[Fact], claims: Sequence[Fact]) -> bool:
    """Whether every claim holds in each world the clues and facts allow (and some world is left)."""
    base = model.allowed(uses, facts)
    return bool(base.any()) and all(not (base & ~model.fact_mask(c)).any() for c in claims)


def check(model: Model, steps: Sequence[Step], key: str) -> list[str]:
    """Every problem with a deduction (empty when each step is proven from exactly what it cites and the last
    concludes the key)."""
    out: list[str] = []
    n_clues = len(model.clue_masks)
    for i, step in enumerate(steps):
        if any(not 0 <= u < n_clues for u in step.uses) or any(not 0 <= a < i for a in step.after):
            out.append(f"step {i + 1} cites a clue or step that is not there")
            continue
        facts = [f for a in step.after for f in steps[a].claims]
        if step.claims and not _proves(model, step.uses, facts, step.claims):
            out.append(f"step {i + 1}: what it cites does not prove its claim")
        elif step.claims and _needless_cite(model, step, facts, steps):
            out.append(f"step {i + 1} cites more than it needs")
        if step.possible and not all((model.everywhere() & model.fact_mask(f)).any() for f in step.possible):
            out.append(f"step {i + 1}: no world every clue allows has what it shows possible")
        if step.answer is not None:
            claims = tuple(f for a in step.after for f in steps[a].claims)
            possible = tuple(f for a in step.after for f in steps[a].possible)
            if model.conclude(claims, possible) != step.answer:
                out.append(f"step {i + 1}: the steps it cites do not settle {step.answer!r}")
    if not steps or steps[-1].answer != key:
        out.append(f"the last step does not conclude the key {key!r}")
    return out


def _needless_cite(model: Model, step: Step, facts: list, steps: Sequence[Step]) -> bool:
    """Whether the step's claims still follow with one of its cited clues or steps left out."""
    for drop in step.uses:
        if _proves(model, [u for u in step.uses if u != drop], facts, step.claims):
            return True
    for drop in step.after:
        rest = [f for a in step.after if a != drop for f in steps[a].claims]
        if _proves(model, step.uses, rest, step.claims):
            return True
    return False


def write(model: Model, goals: Sequence[Fact], key: str, text: Callable[[Step], str],
          possible: Sequence[Fact] = ()) -> list[Step]:
    """A deduction of the key: first each fact of `possible` shown (one step each), then greedily the goal fact that
    the fewest clues and earlier steps prove (ties: the first goal), until the established facts settle the key.
    ValueError when no goal can be proven from at most MAX_CITES clues and steps."""
    steps: list[Step] = [Step(possible=(f,)) for f in possible]
    steps = [Step(possible=s.possible, text=text(s)) for s in steps]
    todo = list(goals)
    while model.conclude(tuple(f for s in steps for f in s.claims), tuple(f for s in steps for f in s.possible)) \
            != key:
        best = _easiest(model, todo, steps)
        if best is None:
            raise ValueError(f"no goal of {todo} follows from at most {MAX_CITES} clues and steps")
        goal, uses, after = best
        todo.remove(goal)
        step = Step(uses=uses, after=after, claims=(goal,))
        steps.append(Step(uses=uses, after=after, claims=(goal,), text=text(step)))
    cited = tuple(i for i, s in enumerate(steps) if s.claims or s.possible)
    final = Step(after=cited, answer=key)
    return steps + [Step(after=cited, answer=key, text=text(final))]


def _easiest(model: Model, goals: Sequence[Fact], steps: Sequence[Step]) -> tuple | None:
    """(goal, clues, steps) of the goal proven from the fewest cites (clues before steps), or None."""
    sources = [("clue", i) for i in range(len(model.clue_masks))] + \
              [("step", i) for i, s in enumerate(steps) if s.claims]
    for size in range(1, MAX_CITES + 1):
        for combo in itertools.combinations(sources, size):
            uses = tuple(i for k, i in combo if k == "clue")
            after = tuple(i for k, i in combo if k == "step")
            facts = [f for a in after for f in steps[a].claims]
            for goal in goals:
                trial = Step(uses=uses, after=after, claims=(goal,))
                if _proves(model, uses, facts, (goal,)) and not _needless_cite(model, trial, facts, steps):
                    return goal, uses, after
    return None
