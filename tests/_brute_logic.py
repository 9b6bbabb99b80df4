"""Independent brute forces for the families of the contract (helpers.puzzles.families): each reads a puzzle's data
in its own code, with no import from the family it checks, and lists the answers by trying everything.

- truth_liars: every assignment of kinds, each statement evaluated here;
- syllogism: every set of inhabited membership patterns, as Python sets of classes (no bitmasks, no numpy);
- direction_sense: the walk again, in complex numbers;
- alnum_series: every value of the asked term's slot in range, each completed column read for the simplest pattern
  with no bound on its steps (constant differences; then alternating differences, constant second differences or a
  constant whole ratio).
"""

from __future__ import annotations

import itertools


# ---- truth-tellers and liars ------------------------------------------------------------------------------------

def _said_true(stmt: list, kinds: dict[str, str]) -> bool:
    tag = stmt[0]
    if tag.startswith("is_"):
        return kinds[stmt[1]] == {"is_liar": "liar", "is_truth": "truth", "is_alt": "alternator"}[tag]
    if tag in ("alike", "differ"):
        return (kinds[stmt[1]] == kinds[stmt[2]]) == (tag == "alike")
    if tag == "count":
        return list(kinds.values()).count("liar") == stmt[1]
    if tag == "either":
        return "liar" in (kinds[stmt[1]], kinds[stmt[2]])
    raise AssertionError(stmt)


def truth_answers(puzzle: dict) -> set[str]:
    out = set()
    for combo in itertools.product(puzzle["kinds"], repeat=len(puzzle["people"])):
        kinds = dict(zip(puzzle["people"], combo))
        fine = True
        for speaker, stmts in puzzle["said"]:
            values = [_said_true(s, kinds) for s in stmts]
            kind = kinds[speaker]
            fine &= (all(values) if kind == "truth" else not any(values) if kind == "liar"
                     else sorted(values) == [False, True])
        if not fine:
            continue
        form = puzzle["question"][0]
        if form == "count":
            out.add(str(combo.count("liar")))
        else:
            want = {"liars": "liar", "truthful": "truth", "alternators": "alternator"}[form]
            names = [p for p in puzzle["people"] if kinds[p] == want]
            out.add("Nobody" if not names else f"Only {names[0]}" if len(names) == 1
                    else ", ".join(names[:-1]) + " and " + names[-1])
    return out


# ---- syllogisms ----------------------------------------------------------------------------------------------------

def _holds(form: str, x: str, y: str, world: list[frozenset]) -> bool:
    xs = [m for m in world if x in m]
    if form == "all":
        return all(y in m for m in xs)
    if form == "some":
        return any(y in m for m in xs)
    if form == "no":
        return not any(y in m for m in xs)
    if form == "some_not":
        return any(y not in m for m in xs)
    raise AssertionError(form)


def syllogism_answers(puzzle: dict) -> set[str]:
    classes = puzzle["classes"]
    patterns = [frozenset(c for c, keep in zip(classes, bits) if keep)
                for bits in itertools.product((False, True), repeat=len(classes)) if any(bits)]
    worlds = []
    for chosen in itertools.product((False, True), repeat=len(patterns)):
        world = [p for p, keep in zip(patterns, chosen) if keep]
        if all(any(c in m for m in world) for c in classes) and \
                all(_holds(f, x, y, world) for f, x, y in puzzle["statements"]):
            worlds.append(world)
    if not worlds:
        return set()
    verdicts = []
    for form, x, y in puzzle["conclusions"]:
        if form.startswith("may_"):
            verdicts.append(any(_holds(form[4:], x, y, w) for w in worlds))
        else:
            verdicts.append(all(_holds(form, x, y, w) for w in worlds))
    return {{(True, False): "Only I follows", (False, True): "Only II follows", (True, True): "Both I and II follow",
             (False, False): "Neither I nor II follows"}[tuple(verdicts)]}


# ---- alphanumeric series ---------------------------------------------------------------------------------------

def _diffs(values: list[int]) -> list[int]:
    return [b - a for a, b in zip(values, values[1:])]


def _simple(values: list[int]) -> bool:
    return len(set(_diffs(values))) == 1


def _second_kind(values: list[int]) -> bool:
    d = _diffs(values)
    alternating = all(d[i] == d[i + 2] for i in range(len(d) - 2)) and len(set(d)) > 1
    growing = len(set(_diffs(d))) == 1 and d[1] != d[0]
    ratio = values[0] > 0 and all(b == a * (values[1] // values[0]) for a, b in zip(values, values[1:])) \
        and values[1] % values[0] == 0 and values[1] // values[0] >= 2
    return alternating or growing or ratio


def series_answers(puzzle: dict) -> set[str]:
    asked, per_position = puzzle["asked"], []
    for p, kind in enumerate(puzzle["pattern"]):
        column = [t[p] for t in puzzle["terms"]]
        span = range(1, 27) if kind == "L" else range(0, 100)
        completed = [(v, column[:asked] + [v] + column[asked + 1:]) for v in span]
        found = [v for v, c in completed if _simple(c)] or [v for v, c in completed if _second_kind(c)]
        per_position.append([chr(64 + v) if kind == "L" else str(v) for v in found])
    return {"".join(parts) for parts in itertools.product(*per_position)}


# ---- direction sense --------------------------------------------------------------------------------------------

def direction_answers(puzzle: dict) -> set[str]:
    """The walk in complex numbers: north is 1j, a right turn multiplies by -1j."""
    names = {1j: "north", 1: "east", -1j: "south", -1: "west"}
    where, heading = 0j, {v: k for k, v in names.items()}.get(puzzle["facing"], 0)
    for turn, km in puzzle["legs"]:
        if puzzle["relative"]:
            heading *= {"ahead": 1, "left": 1j, "right": -1j, "around": -1}[turn]
        else:
            heading = {v: k for k, v in names.items()}[turn]
        where += heading * km
    form = puzzle["question"][0]
    if form == "facing":
        return {names[heading].capitalize()}
    if form == "distance":
        d = abs(where)
        return {f"{round(d)} km"} if d > 0 and abs(d - round(d)) < 1e-9 else set()
    if where == 0:
        return set()
    ns = "North" if where.imag > 0 else "South" if where.imag < 0 else ""
    ew = "east" if where.real > 0 else "west" if where.real < 0 else ""
    return {f"{ns}-{ew}" if ns and ew else ns or ew.capitalize()}


BRUTE = {"truth_liars": truth_answers, "syllogism": syllogism_answers, "alnum_series": series_answers,
         "direction_sense": direction_answers}
