"""Direction sense (kind "direction_sense"), the fourth family built by following docs/new-topic.md: a person walks a few
legs, in compass directions (level 1) or turning left, right or around from a stated facing (levels 2 and 3); the
question asks in which direction the end point lies from the start, how far it is in a straight line, or (levels 2 and
3) which way the person faces at the end.

The walk is its own solver: each leg moves the position, so the answer is exact and unique. The key's distribution is
even: the end point's direction is drawn first (each of eight equally often), and so is a final facing (each of four);
a direction's wrong options are one point of its own kind (on an axis, or between two) and two of the other kind, so
that every point is offered as often as it is keyed. A distance question's row of four whole distances is drawn first
(its start evenly in 1-13) and the key's place in it evenly, so the lowest option is the key 1 time in 4 too. The explanation is
the walk in steps, each position proven from the step before and the leg it cites (check()).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

KINDS = ("direction_sense",)
TOPIC = ("Direction Sense", "Distance and direction after turns")
KEYWORDS = ("direction sense", "distance and direction", "compass")
FAST = True
FORM_SHARES = {1: (("where", 0.6), ("distance", 0.4), ("facing", 0.0)),
               2: (("where", 0.4), ("distance", 0.3), ("facing", 0.3)),
               3: (("where", 0.4), ("distance", 0.3), ("facing", 0.3))}
LEGS = {1: (2, 3), 2: (3, 4), 3: (4, 5)}  # legs walked, fewest and most
HEADINGS = ("north", "east", "south", "west")
STEP = {"north": (0, 1), "east": (1, 0), "south": (0, -1), "west": (-1, 0)}
TURNS = {"left": -1, "right": 1, "around": 2}
COMPASS = ("North", "North-east", "East", "South-east", "South", "South-west", "West", "North-west")
INNER_TRIES = 2000  # walks drawn for one drawn key (a compass point, a facing, a distance)
ROW_STARTS = (1, 13)  # a distance question's four options run from a start drawn evenly here
OPENINGS = ("{p} starts from home and walks {legs}.", "From point P, {p} walks {legs}.",
            "{p} leaves the gate and walks {legs}.")
FACING_OPENINGS = ("{p} faces {h} and walks {d} km.", "Standing at point P facing {h}, {p} walks {d} km.")
TURN_TEXT = {"left": "turns left", "right": "turns right", "around": "turns around"}
ASK = {"where": ("In which direction is {p} now from the start?", "Where is {p} now, seen from the start?"),
       "distance": ("How far is {p} from the start in a straight line?", "How far is {p} now from the start?"),
       "facing": ("Which way does {p} face now?", "In which direction is {p} facing at the end?")}


# ---- the walk ------------------------------------------------------------------------------------------------------

def walk(puzzle: dict) -> list[tuple[int, int, str]]:
    """(x, y, heading) after each leg (x east, y north, in km)."""
    x, y, heading, out = 0, 0, puzzle.get("facing"), []
    for leg in puzzle["legs"]:
        if puzzle["relative"]:
            if leg[0] != "ahead":
                heading = HEADINGS[(HEADINGS.index(heading) + TURNS[leg[0]]) % 4]
        else:
            heading = leg[0]
        dx, dy = STEP[heading]
        x, y = x + dx * leg[1], y + dy * leg[1]
        out.append((x, y, heading))
    return out


def compass(x: int, y: int) -> str | None:
    """The direction of (x, y) from the origin, one of eight (north-east: both north and east of it), None at it."""
    if x == 0 and y == 0:
        return None
    sx, sy = (x > 0) - (x < 0), (y > 0) - (y < 0)
    return {(0, 1): "North", (1, 1): "North-east", (1, 0): "East", (1, -1): "South-east", (0, -1): "South",
            (-1, -1): "South-west", (-1, 0): "West", (-1, 1): "North-west"}[(sx, sy)]


def answer_of(puzzle: dict) -> str | None:
    x, y, heading = walk(puzzle)[-1]
    form = puzzle["question"][0]
    if form == "where":
        return compass(x, y)
    if form == "facing":
        return heading.capitalize()
    d = math.isqrt(x * x + y * y)
    return f"{d} km" if d * d == x * x + y * y and d > 0 else None


def possible_answers(puzzle: dict) -> set[str]:
    answer = answer_of(puzzle)
    return set() if answer is None else {answer}


# ---- text ------------------------------------------------------------------------------------------------------------

def _leg_text(puzzle: dict, i: int, leg: list) -> str:
    if not puzzle["relative"]:
        return f"{leg[1]} km {leg[0]}"
    return f"{'then ' if i else ''}{TURN_TEXT[leg[0]]} and walks {leg[1]} km" if leg[0] != "ahead" else ""


def render(puzzle: dict) -> str:
    p, style = puzzle["person"], puzzle["style"]
    if puzzle["relative"]:
        first = FACING_OPENINGS[style["open"]].format(p=p, h=puzzle["facing"], d=puzzle["legs"][0][1])
        rest = ", ".join(_leg_text(puzzle, i, leg) for i, leg in enumerate(puzzle["legs"][1:]))
        body = f"{first} {p[0].upper() + p[1:]} {rest}."
    else:
        body = OPENINGS[style["open"]].format(p=p, legs=", then ".join(_leg_text(puzzle, i, leg)
                                                                       for i, leg in enumerate(puzzle["legs"])))
    return f"{body} {ASK[puzzle['question'][0]][style['ask']].format(p=p)}"


def parse(question: str, choices: list[str]) -> tuple[dict | None, str | None]:
    """The puzzle a text in this family's words states, or (None, why not): it must render back to the same text."""
    for form, asks in ASK.items():
        for a, ask in enumerate(asks):
            m = re.fullmatch(r"(.+) " + re.escape(ask).replace(r"\{p\}", r"([A-Z][a-z]+)"), question)
            if not m:
                continue
            body, person = m.group(1), m.group(2)
            puzzle = _read_body(body, person)
            if puzzle is None:
                return None, "unreadable"
            puzzle.update(question=[form], style=dict(puzzle["style"], ask=a))
            if render(puzzle) == question:
                return puzzle, None
    return None, "unknown_setup"


def _read_body(body: str, person: str) -> dict | None:
    for o, opening in enumerate(OPENINGS):
        pattern = re.escape(opening).replace(r"\{p\}", re.escape(person)).replace(r"\{legs\}", "(.+)")
        m = re.fullmatch(pattern, body)
        if m:
            legs = [re.fullmatch(r"(\d+) km (north|east|south|west)", t) for t in m.group(1).split(", then ")]
            if None in legs:
                return None
            return {"kind": KINDS[0], "person": person, "relative": False, "facing": None,
                    "legs": [[g.group(2), int(g.group(1))] for g in legs], "style": {"open": o}}
    for o, opening in enumerate(FACING_OPENINGS):
        pattern = (re.escape(opening).replace(r"\{p\}", re.escape(person)).replace(r"\{h\}", "(north|east|south|west)")
                   .replace(r"\{d\}", r"(\d+)") + " " + re.escape(person) + r" (.+)\.")
        m = re.fullmatch(pattern, body)
        if m:
            legs = [["ahead", int(m.group(2))]]
            for t in m.group(3).split(", "):
                g = re.fullmatch(r"(?:then )?turns (left|right|around) and walks (\d+) km", t)
                if g is None:
                    return None
                legs.append([g.group(1), int(g.group(2))])
            return {"kind": KINDS[0], "person": person, "relative": True, "facing": m.group(1), "legs": legs,
                    "style": {"open": o}}
    return None


# ---- deduction -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """The position and heading after leg `leg` (0-based), or the answer read from the last position."""

    leg: int | None = None
    at: tuple[int, int, str] | None = None
    answer: str | None = None
    text: str = ""


def _where(x: int, y: int) -> str:
    parts = [f"{abs(y)} km {'north' if y > 0 else 'south'}" if y else "", f"{abs(x)} km {'east' if x > 0 else 'west'}"
             if x else ""]
    return " and ".join(p for p in parts if p) or "at the start"


def deduce(puzzle: dict, answer: str) -> list[Step]:
    steps = [Step(i, at, text=f"Leg {i + 1}: facing {at[2]}, {_where(at[0], at[1])}.")
             for i, at in enumerate(walk(puzzle))]
    x, y, _ = steps[-1].at
    form = puzzle["question"][0]
    how = {"where": f"so the end is {answer.lower()} of the start.",
           "distance": f"so the straight line is sqrt({x * x} + {y * y}) = {answer}.",
           "facing": f"so {puzzle['person']} faces {answer.lower()}."}[form]
    return steps + [Step(answer=answer, text=how[0].upper() + how[1:])]


def check(puzzle: dict, steps: list[Step], answer: str) -> list[str]:
    """Every problem: a leg's position or heading that does not follow from the step before and the leg, a leg left
    out or out of order, or an answer the last position does not give."""
    out, truth = [], walk(puzzle)
    if [s.leg for s in steps[:-1]] != list(range(len(truth))):
        return ["the steps do not take the legs one by one, in order"]
    for s in steps[:-1]:
        if s.at != truth[s.leg]:
            out.append(f"step {s.leg + 1}: leg {s.leg + 1} does not lead to {s.at}")
    if steps[-1].answer != answer or answer_of(puzzle) != answer:
        out.append(f"the last step does not conclude the key {answer!r}")
    return out


def explain(puzzle: dict, answer: str) -> str:
    return " ".join(s.text for s in deduce(puzzle, answer))


def work(puzzle: dict) -> dict:
    """steps: each leg, half a step for each turn to apply, one for a straight-line distance; log2_space: the
    headings a leg may take (4 each)."""
    legs = len(puzzle["legs"])
    turns = sum(leg[0] != "ahead" for leg in puzzle["legs"]) if puzzle["relative"] else 0
    steps = legs + 0.5 * turns + (puzzle["question"][0] == "distance")
    return {"steps": steps, "legs": legs, "turns": turns, "log2_space": round(legs * math.log2(4), 3)}


# ---- the generator -----------------------------------------------------------------------------------------------

def _draw_legs(level: int, rng: random.Random) -> tuple[list, str | None]:
    n = rng.randint(*LEGS[level])
    if level == 1:
        return [[rng.choice(HEADINGS), rng.randint(1, 9)] for _ in range(n)], None
    turns = ("left", "right") if level == 2 else ("left", "right", "left", "right", "around")
    return [["ahead", rng.randint(1, 9)]] + [[rng.choice(turns), rng.randint(1, 9)] for _ in range(n - 1)], \
        rng.choice(HEADINGS)


def build(rng: random.Random, names: list, *, kind: str, level: int, stats: dict,
          form: str | None = None) -> dict | None:
    """One proven puzzle {"puzzle", "answer", "distractors"} at `level`, or None (stats counts why). The key is drawn
    first (a compass point, a final facing, a distance with its row of options) and legs are drawn until the walk
    gives it."""
    if kind not in KINDS or level not in LEGS:
        raise ValueError(f"unknown kind/level {kind!r}/{level!r}")
    form = form or FORM_SHARES[level][0][0]  # the catalogue draws it by FORM_SHARES
    want, row = {"where": lambda: (rng.choice(COMPASS), None),
                 "facing": lambda: (rng.choice(HEADINGS).capitalize(), None), "distance": lambda: _distance_row(rng)}[form]()
    person = rng.choice(names)[0]
    style = {"open": rng.randrange(2 if level > 1 else len(OPENINGS)), "ask": rng.randrange(2)}
    for _ in range(INNER_TRIES):
        legs, facing = _draw_legs(level, rng)
        puzzle = {"kind": kind, "person": person, "relative": level > 1, "facing": facing, "legs": legs,
                  "question": [form], "style": style}
        key = answer_of(puzzle)
        if key != want:
            stats["redrawn"] = stats.get("redrawn", 0) + 1
            continue
        wrong = _distances(key, row) if form == "distance" else \
            {"where": _compass_options, "facing": _facings}[form](key, rng)
        return {"puzzle": puzzle, "answer": key, "distractors": wrong}
    return None


def _compass_options(key: str, rng: random.Random) -> list[str]:
    """Three wrong compass points: one of the key's kind (a point on an axis, or between two) and two of the other,
    each drawn evenly, so every point is offered as often as it is the key's share and no length or likeness tells."""
    axis = COMPASS[0::2]
    same, other = (axis, COMPASS[1::2]) if key in axis else (COMPASS[1::2], axis)
    return [rng.choice([c for c in same if c != key]), *rng.sample(other, 2)]


def _facings(key: str, rng: random.Random) -> list[str]:
    return [h.capitalize() for h in HEADINGS if h.capitalize() != key]


def _distance_row(rng: random.Random) -> tuple[str, int]:
    """A distance question's row of four whole distances and the key's place in it, both drawn evenly (the row's
    first distance 1-13): so every distance is the key 1 time in 4 it is offered, and the lowest, the highest or a
    middle option is the key 1 time in 4 too."""
    start, place = rng.randint(*ROW_STARTS), rng.randrange(4)
    return f"{start + place} km", start


def _distances(key: str, start: int) -> list[str]:
    return [f"{v} km" for v in range(start, start + 4) if f"{v} km" != key]
