"""Exact finite-domain constraint solver: a vectorised join over the variables the constraints mention.

A Problem holds small-integer variables (a seat, a facing bit), all-different groups (every member of a
group takes a different value; a group with as many values as members is a permutation) and
constraints (a tuple of variables and a numpy test over their columns, one int16 array per variable).
solve() lists, as the rows of one int16 table, every assignment of the *mentioned* variables (those a
constraint names, those in `keep`, and grouped ones with a narrowed domain) that meets every
constraint. Variables nothing mentions are free: they are counted, never listed. A group whose k
mentioned members use k of its V values completes its f free members in (V-k)!/(V-k-f)! ways, a free
ungrouped variable in |domain| ways, so Table.count() is the exact number of complete worlds. That
is what lets a 12-person two-row puzzle (12! = 4.8e8 seatings) be solved exactly: after 3 clues
only the 4-6 people they name are ever enumerated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

Test = Callable[..., np.ndarray]
# Rows expanded in one numpy step: 2M rows x 24 int16 columns is ~100 MB, the peak we allow.
CHUNK = 1 << 21


class TooBig(RuntimeError):
    """The enumeration expanded more rows than its budget allows."""


@dataclass(frozen=True)
class Constraint:
    """A test over the columns of `vars` (in that order) returning one bool per row."""

    vars: tuple[int, ...]
    test: Test


@dataclass
class Problem:
    """Variables (value domains), their all-different groups, and each group's number of values."""

    domains: list[np.ndarray] = field(default_factory=list)
    group_of: list[int] = field(default_factory=list)
    group_values: list[int] = field(default_factory=list)

    def group(self, n_values: int) -> int:
        """A new all-different group over values 0..n_values-1; returns its id."""
        self.group_values.append(n_values)
        return len(self.group_values) - 1

    def var(self, domain: Iterable[int], group: int = -1) -> int:
        """A new variable over `domain` (inside group's value range if grouped); returns its id."""
        dom = np.array(sorted(set(domain)), dtype=np.int16)
        if group >= 0 and (dom.min() < 0 or dom.max() >= self.group_values[group]):
            raise ValueError("a grouped variable's domain must lie inside its group's values")
        self.domains.append(dom)
        self.group_of.append(group)
        return len(self.domains) - 1

    def members(self, group: int) -> list[int]:
        """The variables of a group."""
        return [v for v, g in enumerate(self.group_of) if g == group]

    def layout(self) -> tuple[list[list[int]], list[int]]:
        """(members of each group, ungrouped variables), cached until a variable is added."""
        key = len(self.domains)
        if getattr(self, "_layout_key", None) != key:
            self._layout = ([self.members(g) for g in range(len(self.group_values))],
                            [v for v, g in enumerate(self.group_of) if g < 0])
            self._layout_key = key
        return self._layout

    def must_list(self, v: int) -> bool:
        """True when free-variable counting cannot cover v (a grouped variable with a narrowed domain)."""
        g = self.group_of[v]
        return g >= 0 and len(self.domains[v]) != self.group_values[g]


@dataclass
class Table:
    """Every consistent assignment of the listed variables, one row each; the rest are free."""

    problem: Problem
    vars: list[int]
    rows: np.ndarray
    work: int = 0  # rows expanded to build it (the solver's effort)

    def has(self, v: int) -> bool:
        """Whether v is listed (mentioned) rather than free."""
        return v in self.vars

    def col(self, v: int) -> np.ndarray:
        """The column of a listed variable."""
        return self.rows[:, self.vars.index(v)]

    def completions(self) -> int:
        """Ways to complete any row with the free variables (the same for every row)."""
        total, listed = 1, set(self.vars)
        groups, loose = self.problem.layout()
        for v in loose:
            if v not in listed:
                total *= len(self.problem.domains[v])
        for members, n_values in zip(groups, self.problem.group_values):
            k = sum(v in listed for v in members)
            total *= math.perm(n_values - k, len(members) - k)
        return total

    def count(self) -> int:
        """The exact number of complete worlds consistent with the constraints."""
        return len(self.rows) * self.completions()


def _expand(problem: Problem, vars_: list[int], rows: np.ndarray, v: int) -> np.ndarray:
    """rows x domain(v) (row-major: each row with every value in turn), minus the rows where v repeats a listed member
    of its group: a row-by-value table of the group's values each row already uses, read at v's domain."""
    dom, g = problem.domains[v], problem.group_of[v]
    members = [j for j, u in enumerate(vars_) if g >= 0 and problem.group_of[u] == g]
    if not members:  # every row takes every value: no table of used values to read
        out = np.empty((len(rows) * len(dom), len(vars_) + 1), dtype=np.int16)
        out[:, :-1] = np.repeat(rows, len(dom), axis=0)
        out[:, -1] = np.tile(dom, len(rows))
        return out
    used = np.zeros((len(rows), problem.group_values[g]), dtype=bool)
    used[np.arange(len(rows))[:, None], rows[:, members]] = True
    r, d = np.nonzero(~used[:, dom])
    out = np.empty((len(r), len(vars_) + 1), dtype=np.int16)
    out[:, :-1] = rows[r]
    out[:, -1] = dom[d]
    return out


def _filter(rows: np.ndarray, vars_: list[int], cons: Sequence[Constraint]) -> np.ndarray:
    """Keep the rows that pass every constraint (all of whose variables are listed)."""
    for c in cons:
        if not len(rows):
            break
        mask = np.asarray(c.test(*(rows[:, vars_.index(v)] for v in c.vars)), dtype=bool)
        rows = rows[mask if mask.shape == (len(rows),) else np.broadcast_to(mask, (len(rows),))]
    return rows


def _order(problem: Problem, cons: Sequence[Constraint], mentioned: list[int]) -> list[int]:
    """Greedy variable order: next the variable completing most constraints, then most linked, smallest domain."""
    placed: set[int] = set()
    order: list[int] = []
    left = list(mentioned)
    scopes = [frozenset(c.vars) for c in cons]
    mine = {v: [s for s in scopes if v in s] for v in mentioned}  # each variable's constraint scopes
    while left:
        def score(v: int) -> tuple:
            completes = sum(s - {v} <= placed for s in mine[v])
            linked = sum(bool(placed & s) for s in mine[v])
            return (completes, linked, -len(problem.domains[v]))
        best = max(left, key=score)  # max keeps the first of equals: deterministic
        order.append(best)
        placed.add(best)
        left.remove(best)
    return order


def _schedule(cons: Sequence[Constraint], order: list[int]) -> list[list[Constraint]]:
    """The constraints to test right after each variable of `order` is placed (when their last one is)."""
    pos = {v: i for i, v in enumerate(order)}
    out: list[list[Constraint]] = [[] for _ in order]
    for c in cons:
        out[max(pos[v] for v in c.vars)].append(c)
    return out


class _Budget:
    """Counts expanded rows; raises TooBig past the limit (None = unlimited)."""

    def __init__(self, limit: int | None) -> None:
        self.limit, self.used = limit, 0

    def spend(self, rows: int) -> None:
        """Add rows of work, failing when over the limit."""
        self.used += rows
        if self.limit is not None and self.used > self.limit:
            raise TooBig(f"over {self.limit} rows")


def _grow(problem: Problem, rows: np.ndarray, order: list[int], sched: list[list[Constraint]], step: int,
          budget: _Budget) -> list[np.ndarray]:
    """Place order[step:] onto rows, depth-first in chunks so memory stays under CHUNK rows per step."""
    if not len(rows):  # no consistent row: an empty table of the full width
        return [np.zeros((0, len(order)), dtype=np.int16)]
    if step == len(order):
        return [rows]
    v, width = order[step], len(problem.domains[order[step]])
    if len(rows) * width > CHUNK and len(rows) > 1:
        half = len(rows) // 2
        return (_grow(problem, rows[:half], order, sched, step, budget)
                + _grow(problem, rows[half:], order, sched, step, budget))
    budget.spend(len(rows) * width)
    out = _expand(problem, order[:step], rows, v)
    out = _filter(out, order[:step + 1], sched[step])
    return _grow(problem, out, order, sched, step + 1, budget)


def solve(problem: Problem, cons: Sequence[Constraint], keep: Iterable[int] = (),
          budget: int | None = None) -> Table:
    """Every consistent assignment of the mentioned variables (exact; TooBig past `budget` expanded rows)."""
    mentioned: list[int] = []
    for v in [*keep, *(v for c in cons for v in c.vars),
              *(v for v in range(len(problem.domains)) if problem.must_list(v))]:
        if v not in mentioned:
            mentioned.append(v)
    order = _order(problem, cons, mentioned)
    spent = _Budget(budget)
    parts = _grow(problem, np.zeros((1, 0), dtype=np.int16), order, _schedule(cons, order), 0, spent)
    rows = np.concatenate(parts) if parts else np.zeros((0, len(order)), dtype=np.int16)
    return Table(problem, order, rows, spent.used)


def add(table: Table, con: Constraint, budget: int | None = None) -> Table:
    """The table with one more constraint: list its new variables, then filter (incremental solve)."""
    spent = _Budget(budget)
    vars_, rows = list(table.vars), table.rows
    for v in con.vars:
        if v not in vars_:
            spent.spend(len(rows) * len(table.problem.domains[v]))
            rows = _expand(table.problem, vars_, rows, v)
            vars_.append(v)
    rows = _filter(rows, vars_, [con])
    return Table(table.problem, vars_, rows, table.work + spent.used)
