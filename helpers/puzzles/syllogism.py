"""Syllogisms (kind "syllogism"): two or three statements over three or four classes ("All pens are cups", "Some cups
are not keys"), then two conclusions; the options are the exam's fixed four: only I follows, only II, both, neither.

A world is which regions of the classes' diagram hold something (every class holds something, the exam's reading):
2^7 worlds for three classes, 2^15 for four, each clue a mask over them. A conclusion follows when it holds in every
world the statements allow; a possibility ("Some pens being keys is a possibility") when it holds in at least one.
The explanation is a deduction written and checked by helpers.puzzles.worlds: a conclusion that follows is claimed
from exactly the statements that prove it, one that need not hold is shown by a world every statement allows.

Because the four options are fixed, their texts tell nothing only if each outcome is the key equally often: the
outcome is drawn first, evenly, and so is each conclusion's form apart from its outcome; then statements are drawn
until the two conclusions have the drawn outcome. A pair of forms that cannot have it would be redrawn, and a form
would then hint at its outcome: level 1 asks no "All" conclusion for that reason (CONCLUSION_FORMS;
docs/results.md).

Levels: 1, three classes, two statements, definite conclusions; 2, four classes, three statements; 3, four classes,
four statements, at least one conclusion a possibility.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import re

import numpy as np

from helpers.puzzles import worlds

KINDS = ("syllogism",)
TOPIC = ("Logical Reasoning", "Syllogisms")
KEYWORDS = ("syllogism",)
FAST = True
FORM_SHARES = {1: (("conclusions", 1.0),), 2: (("conclusions", 1.0),), 3: (("conclusions", 1.0),)}
CLASSES = ("cats", "dogs", "birds", "cars", "boats", "pens", "cups", "books", "bags", "hats", "keys", "lamps",
           "coins", "trees", "roses", "apples", "stones", "kings", "poets", "pilots", "doctors", "singers", "chairs",
           "tables", "rings", "bells", "clocks", "shirts", "shoes", "boxes", "toys", "cakes", "doors", "walls")
SIZES = {1: (3, 2), 2: (4, 3), 3: (4, 4)}  # classes, statements
MAX_CLASSES = 4  # the most a read text may have: 2^15 diagrams
STATEMENT_FORMS = ("all", "some", "no", "some_not")
# Level 1 asks no "All" conclusion: from two statements over three classes one follows only from an "All ... All"
# chain, and then beside it another conclusion of most forms cannot take half the outcomes (7 of the 64 form and
# outcome pairs cannot be built), so its form told its outcome ("All" followed 39% of the time, "Some" 63%). With
# the other three forms every pair can be built, and each form follows half the time.
CONCLUSION_FORMS = {1: ("some", "no", "some_not"), 2: STATEMENT_FORMS, 3: STATEMENT_FORMS + ("may_some", "may_all")}
TEXT = {"all": "All {x} are {y}.", "some": "Some {x} are {y}.", "no": "No {x} are {y}.",
        "some_not": "Some {x} are not {y}.", "may_some": "Some {x} being {y} is a possibility.",
        "may_all": "All {x} being {y} is a possibility."}
OPTIONS = {(True, False): "Only I follows", (False, True): "Only II follows", (True, True): "Both I and II follow",
           (False, False): "Neither I nor II follows"}
LAYOUTS = ("Statements: {s} Conclusions: I. {c1} II. {c2} Which conclusions follow?",
           "Read the statements and decide which conclusions follow. Statements: {s} Conclusions: I. {c1} II. {c2}",
           "{s} Which of these conclusions follow? I. {c1} II. {c2}")
INNER_TRIES = 300  # statement draws for one outcome and pair of forms (redrawn, the rarer outcomes would fall)
FORM_DRAWS = 20  # pairs of forms tried for one drawn outcome
NEGATION = {"all": "some_not", "some_not": "all", "some": "no", "no": "some"}


# ---- meaning -------------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _inhabited(k: int) -> np.ndarray:
    """worlds x regions: whether each region (a non-empty set of the k classes, as a bitmask r - 1) holds something,
    for every world in which each class holds something."""
    regions = 2 ** k - 1
    grid = ((np.arange(2 ** regions)[:, None] >> np.arange(regions)[None, :]) & 1).astype(bool)
    members = np.array([[(r + 1) >> c & 1 for c in range(k)] for r in range(regions)], bool)  # region x class
    every_class = (grid[:, :, None] & members[None, :, :]).any(axis=1).all(axis=1)
    return grid[every_class]


def fact_mask(k: int, fact) -> np.ndarray:
    """The worlds where a fact holds: (form, x, y) over class indices, or ("not", fact)."""
    if fact[0] == "not":
        return ~fact_mask(k, fact[1])
    form, x, y = fact
    inhabited = _inhabited(k)

    def region(want) -> np.ndarray:
        return np.array([bool(want((r + 1) >> x & 1, (r + 1) >> y & 1)) for r in range(2 ** k - 1)])
    if form == "all":
        return ~inhabited[:, region(lambda a, b: a and not b)].any(axis=1)
    if form == "some":
        return inhabited[:, region(lambda a, b: a and b)].any(axis=1)
    if form == "no":
        return ~inhabited[:, region(lambda a, b: a and b)].any(axis=1)
    if form == "some_not":
        return inhabited[:, region(lambda a, b: a and not b)].any(axis=1)
    raise ValueError(f"unknown fact {fact!r}")


def _index(puzzle: dict, name: str) -> int:
    return puzzle["classes"].index(name)


def _fact(puzzle: dict, stmt: list) -> tuple:
    return (stmt[0], _index(puzzle, stmt[1]), _index(puzzle, stmt[2]))


def allowed(puzzle: dict) -> np.ndarray:
    """The worlds every statement allows."""
    k = len(puzzle["classes"])
    mask = np.ones(len(_inhabited(k)), bool)
    for stmt in puzzle["statements"]:
        mask &= fact_mask(k, _fact(puzzle, stmt))
    return mask


def follows(puzzle: dict, conclusion: list, mask: np.ndarray | None = None) -> bool:
    """Whether a conclusion follows: a definite one in every world the statements allow, a possibility in one."""
    k = len(puzzle["classes"])
    mask = allowed(puzzle) if mask is None else mask
    form = conclusion[0]
    if form.startswith("may_"):
        return bool((mask & fact_mask(k, _fact(puzzle, [form[4:], *conclusion[1:]]))).any())
    return not (mask & ~fact_mask(k, _fact(puzzle, conclusion))).any()


def possible_answers(puzzle: dict) -> set[str]:
    """The one option the statements settle (empty when they contradict each other)."""
    mask = allowed(puzzle)
    if not mask.any():
        return set()
    return {OPTIONS[tuple(follows(puzzle, c, mask) for c in puzzle["conclusions"])]}


# ---- text ------------------------------------------------------------------------------------------------------------

def sentence(stmt: list) -> str:
    return TEXT[stmt[0]].format(x=stmt[1], y=stmt[2])


def render(puzzle: dict) -> str:
    c1, c2 = (sentence(c) for c in puzzle["conclusions"])
    return LAYOUTS[puzzle["style"]["layout"]].format(s=" ".join(sentence(s) for s in puzzle["statements"]),
                                                      c1=c1, c2=c2)


def _sentence_pattern(form: str) -> re.Pattern:
    return re.compile(re.escape(TEXT[form]).replace(r"\{x\}", "([a-z]+)").replace(r"\{y\}", "([a-z]+)"))


_PATTERNS = {form: _sentence_pattern(form) for form in TEXT}


def _read(text: str, forms) -> list | None:
    for form in sorted(forms, key=lambda f: -len(TEXT[f])):  # "Some x are not y." before "Some x are y."
        m = _PATTERNS[form].fullmatch(text)
        if m:
            return [form, m.group(1), m.group(2)]
    return None


def parse(question: str, choices: list[str]) -> tuple[dict | None, str | None]:
    """The puzzle a text in this family's words states, or (None, why not): it must render back to the same text."""
    for layout, pattern in enumerate(LAYOUTS):
        regex = re.escape(pattern).replace(r"\{s\}", "(.+?)").replace(r"\{c1\}", "(.+?)").replace(r"\{c2\}", "(.+?)")
        m = re.fullmatch(regex, question)
        if not m:
            continue
        statements = [_read(s, STATEMENT_FORMS) for s in re.split(r"(?<=\.) ", m.group(1))]
        conclusions = [_read(c, TEXT) for c in (m.group(2), m.group(3))]
        if None in statements or None in conclusions:
            continue
        classes = list(dict.fromkeys(n for s in statements + conclusions for n in s[1:]))
        if len(classes) > MAX_CLASSES:  # 2^31 diagrams at five: not a puzzle the solver lists
            return None, "too_many_classes"
        puzzle = {"kind": "syllogism", "classes": classes, "statements": statements, "conclusions": conclusions,
                  "question": ["conclusions"], "style": {"layout": layout}}
        if render(puzzle) == question:
            return puzzle, None
    return None, "unknown_setup" if "onclusion" not in question else "unreadable"


# ---- deduction -------------------------------------------------------------------------------------------------------

def _base(puzzle: dict, conclusion: list) -> tuple:
    """A conclusion's fact: a possibility's underlying statement."""
    form = conclusion[0]
    return _fact(puzzle, [form[4:] if form.startswith("may_") else form, *conclusion[1:]])


def model(puzzle: dict) -> worlds.Model:
    k = len(puzzle["classes"])

    def conclude(claims: tuple, possible: tuple) -> str | None:
        outcome = []
        for c in puzzle["conclusions"]:
            base = _base(puzzle, c)
            if c[0].startswith("may_"):
                status = True if base in possible else False if ("not", base) in claims else None
            else:
                status = True if base in claims else False if ("not", base) in possible else None
            if status is None:
                return None
            outcome.append(status)
        return OPTIONS[tuple(outcome)]
    return worlds.Model([fact_mask(k, _fact(puzzle, s)) for s in puzzle["statements"]],
                        lambda f: fact_mask(k, f), conclude)


def _fact_text(puzzle: dict, fact: tuple) -> str:
    if fact[0] == "not":
        form, x, y = fact[1]
        fact = (NEGATION[form], x, y)
    form, x, y = fact
    return TEXT[form].format(x=puzzle["classes"][x], y=puzzle["classes"][y]).rstrip(".").lower()


def _step_text(puzzle: dict, step: worlds.Step) -> str:
    if step.answer is not None:
        return f"So: {step.answer}."
    fact = (step.claims or step.possible)[0]
    negated = fact[0] == "not"
    base = fact[1] if negated else fact
    may = bool(step.possible) != negated  # a possibility is shown possible, or claimed impossible (negated)
    which = next(i for i, c in enumerate(puzzle["conclusions"])
                 if _base(puzzle, c) == base and c[0].startswith("may_") == may)
    roman = ("I", "II")[which]
    if step.possible:
        verdict = "follows" if may else "need not hold"
        return f"The statements allow that {_fact_text(puzzle, fact)}, so conclusion {roman} {verdict}."
    cites = " and ".join(f"statement {u + 1}" for u in step.uses)
    verdict = "does not follow" if may else "follows"
    return f"By {cites}, {_fact_text(puzzle, fact)}, so conclusion {roman} {verdict}."


def deduce(puzzle: dict, answer: str) -> list[worlds.Step]:
    """The checked deduction: each conclusion proven from the fewest statements or shown by a world."""
    mask = allowed(puzzle)
    goals, possible = [], []
    for c in puzzle["conclusions"]:
        base, ok = _base(puzzle, c), follows(puzzle, c, mask)
        if c[0].startswith("may_"):
            (possible if ok else goals).append(base if ok else ("not", base))
        else:
            (goals if ok else possible).append(base if ok else ("not", base))
    return worlds.write(model(puzzle), goals, answer, lambda s: _step_text(puzzle, s), possible=possible)


def check(puzzle: dict, steps: list, answer: str) -> list[str]:
    return worlds.check(model(puzzle), steps, answer)


def explain(puzzle: dict, answer: str) -> str:
    return " ".join(s.text for s in deduce(puzzle, answer))


def work(puzzle: dict) -> dict:
    """The statements to combine (steps: each statement, each cite of the deduction, and one per possibility or
    counter-example to find) and the worlds before any statement (log2_space)."""
    steps = deduce(puzzle, possible_answers(puzzle).pop())
    cites = sum(len(s.uses) for s in steps)
    shown = sum(bool(s.possible) for s in steps)
    n = len(puzzle["statements"])
    return {"steps": n + cites + shown, "statements": n, "cites": cites, "shown": shown,
            "log2_space": round(math.log2(len(_inhabited(len(puzzle["classes"])))), 3)}


# ---- the generator -----------------------------------------------------------------------------------------------

def build(rng: random.Random, names: list, *, kind: str, level: int, stats: dict,
          form: str | None = None) -> dict | None:
    """One proven puzzle {"puzzle", "answer", "distractors"} at `level`, or None (stats counts why). The outcome and
    each conclusion's form are drawn first, evenly; statements are then drawn until the conclusions fit them."""
    if kind not in KINDS or level not in SIZES:
        raise ValueError(f"unknown kind/level {kind!r}/{level!r}")
    outcome = rng.choice(list(OPTIONS))
    for _ in range(FORM_DRAWS):  # a pair of forms the statement draws did not fit is redrawn: never seen since level
        forms = [rng.choice(CONCLUSION_FORMS[level]) for _ in outcome]  # 1 left out "All" (the contract test holds it)
        if level == 3 and not any(f.startswith("may_") for f in forms):
            forms[rng.randrange(2)] = rng.choice(("may_some", "may_all"))
        built = _build(rng, kind, level, outcome, forms, stats)
        if built is not None:
            return built
    return None


def _build(rng: random.Random, kind: str, level: int, outcome: tuple, forms: list, stats: dict) -> dict | None:
    """Statements drawn until two conclusions of these forms have the outcome, or None after INNER_TRIES."""
    n_classes, n_statements = SIZES[level]
    classes = rng.sample(CLASSES, n_classes)
    for _ in range(INNER_TRIES):
        order = rng.sample(classes, n_classes)  # a chain (each statement links neighbours), then any other link
        links = [order[i:i + 2] for i in range(n_classes - 1)]
        links += [rng.sample(order, 2) for _ in range(n_statements - len(links))]
        statements = [[rng.choice(STATEMENT_FORMS), *rng.sample(pair, 2)] for pair in links]
        rng.shuffle(statements)
        puzzle = {"kind": kind, "classes": classes, "statements": statements, "conclusions": [],
                  "question": ["conclusions"], "style": {"layout": rng.randrange(len(LAYOUTS))}}
        mask = allowed(puzzle)
        if not mask.any():
            stats["contradiction"] = stats.get("contradiction", 0) + 1
            continue
        picked = [_conclusion(puzzle, f, want, mask, rng) for f, want in zip(forms, outcome)]
        if None in picked or picked[0] == picked[1]:
            stats["no_conclusion"] = stats.get("no_conclusion", 0) + 1
            continue
        puzzle["conclusions"] = picked
        puzzle["classes"] = list(dict.fromkeys(n for s in statements + picked for n in s[1:]))
        key = OPTIONS[outcome]
        return {"puzzle": puzzle, "answer": key, "distractors": [o for o in OPTIONS.values() if o != key]}
    stats["forms_redrawn"] = stats.get("forms_redrawn", 0) + 1
    return None


def _conclusion(puzzle: dict, form: str, want: bool, mask: np.ndarray, rng: random.Random) -> list | None:
    """A conclusion of `form` over two classes that follows (want) or not, never a statement restated."""
    pairs = list(itertools.permutations(puzzle["classes"], 2))
    rng.shuffle(pairs)
    for x, y in pairs:
        c = [form, x, y]
        if c in puzzle["statements"] or [form[4:], x, y] in puzzle["statements"]:
            continue
        if follows(puzzle, c, mask) == want:
            return c
    return None
