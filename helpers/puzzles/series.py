"""Alphanumeric mixed series (kind "alnum_series"): terms of letters and numbers ("B2D, D5G, F8J, ?"), each position
on its own rule; the question asks for the next term, or (level 3) the one a question mark replaces.

A position's rule is one of a few kinds, simplest first: a constant step (a repeat is a step of 0); then steps that
alternate (+1, +3, +1, ...), steps that grow by a constant (+1, +2, +3, ...), or (numbers) doubling or tripling. A
question is fair only when each position's simplest rule that the shown terms admit is one, or all such rules agree
on the answer: the solver lists every rule of each kind (fit) and the builder keeps only such series. Letters stay in
A-Z (no wrapping), numbers in 0-99.

The options form a square over two positions: the key, the key with one position's value moved, with the other's,
and with both. Each wrong option breaks at least one position's rule, and each option differs from two others in
one position and from the third in two, so the option most like the rest is the key only by chance; a moved value
goes up or down evenly, so the key is the longest or shortest only by chance too.

The explanation is a deduction checked by check(): one step per position, naming its values, its rule and the value
it gives, each proven against every simpler rule; the last step puts the term together.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from dataclasses import dataclass

KINDS = ("alnum_series",)
TOPIC = ("Alphanumeric Series", "Mixed Series (Alphanumeric)")
KEYWORDS = ("alphanumeric", "alpha-numeric", "mixed series", "letter series", "letter-number")
FAST = True
FORM_SHARES = {1: (("next", 1.0), ("missing", 0.0)), 2: (("next", 1.0), ("missing", 0.0)),
               3: (("next", 0.5), ("missing", 0.5))}
SHOWN = {1: 4, 2: 5, 3: 5}  # terms in the series, the asked one included: 4 means three shown and the fourth asked
COMPLEX = {1: 0, 2: 1, 3: 2}  # positions on a rule of the second kind
PATTERNS = ("LN", "NL", "LL", "LNL", "NLN", "LLN", "NLL", "LNLN")  # L a letter, N a number (never two N together)
STEPS = range(-4, 5)
ASK = {"next": ("What comes next in the series {s}", "Which term continues the series {s}",
                "Find the next term: {s}"),
       "missing": ("Which term replaces the question mark: {s}", "Find the missing term: {s}")}
INNER_TRIES = 200


@dataclass(frozen=True)
class Rule:
    """A position's rule: kind "step" (a), "alternate" (a, b), "grow" (a, c: steps a, a + c, ...) or "times" (a)."""

    kind: str
    a: int
    b: int = 0

    @property
    def simple(self) -> bool:
        return self.kind == "step"

    def value(self, first: int, i: int) -> int:
        """The value at index i of a series starting at `first`."""
        if self.kind == "step":
            return first + self.a * i
        if self.kind == "alternate":
            return first + self.a * ((i + 1) // 2) + self.b * (i // 2)
        if self.kind == "grow":
            return first + self.a * i + self.b * i * (i - 1) // 2
        return first * self.a ** i

    def words(self) -> str:
        if self.kind == "step":
            return "repeats" if self.a == 0 else f"steps {self.a:+d}"
        if self.kind == "alternate":
            return f"steps alternate {self.a:+d}, {self.b:+d}"
        if self.kind == "grow":
            return f"steps {self.a:+d}, {self.a + self.b:+d}, {self.a + 2 * self.b:+d}, ..."
        return {2: "doubles", 3: "triples"}[self.a]


def rules(letter: bool) -> list[Rule]:
    """Every rule the generator draws a position from, simplest first (fit() reads rules without these bounds)."""
    out = [Rule("step", a) for a in STEPS]
    out += [Rule("alternate", a, b) for a, b in itertools.product(STEPS, STEPS) if a != b]
    out += [Rule("grow", a, c) for a in STEPS for c in (-2, -1, 1, 2)]
    return out + ([] if letter else [Rule("times", 2), Rule("times", 3)])


def in_range(letter: bool, v: int) -> bool:
    return 1 <= v <= 26 if letter else 0 <= v <= 99


# Per rule of the second kind, the coefficients of (a, b) in value(first, i) - first.
COEFFICIENTS = {"alternate": lambda i: ((i + 1) // 2, i // 2), "grow": lambda i: (i, i * (i - 1) // 2)}


def fit(letter: bool, values: list[int | None]) -> tuple[list[Rule], set[int]]:
    """(the rules of the simplest kind that the known values admit, with any steps however large; the values they
    give at the unknown index, None). Found by solving for each rule's parameters, not by trying a list."""
    first, gap = values[0], values.index(None)
    if first is None:
        raise ValueError("the first term is always shown")
    known = [(i, v) for i, v in enumerate(values) if v is not None and i > 0]
    fitting = _steps(first, known)
    if not fitting:
        fitting = [r for kind in COEFFICIENTS for r in _two_parameters(kind, first, known)]
        fitting += [] if letter else _ratios(first, known)
    return fitting, {r.value(first, gap) for r in fitting}


def _holds(rule: Rule, first: int, known: list[tuple[int, int]]) -> bool:
    return all(rule.value(first, i) == v for i, v in known)


def _steps(first: int, known: list[tuple[int, int]]) -> list[Rule]:
    i, v = known[0]
    rule = Rule("step", (v - first) // i)
    return [rule] if (v - first) % i == 0 and _holds(rule, first, known) else []


def _two_parameters(kind: str, first: int, known: list[tuple[int, int]]) -> list[Rule]:
    """The rules of a two-parameter kind through the known values (Cramer's rule on two of them, the rest checked);
    when no two known values fix both parameters, two rules that disagree at the gap (the series is not fair)."""
    coef, found, fixed = COEFFICIENTS[kind], set(), False
    for (i, vi), (j, vj) in itertools.combinations(known, 2):
        (p, q), (r, s) = coef(i), coef(j)
        det = p * s - q * r
        if det == 0:
            continue
        fixed = True
        a_num, b_num = (vi - first) * s - q * (vj - first), p * (vj - first) - (vi - first) * r
        if a_num % det or b_num % det:
            continue
        rule = Rule(kind, a_num // det, b_num // det)
        simple = rule.b == 0 if kind == "grow" else rule.a == rule.b
        if not simple and _holds(rule, first, known):
            found.add(rule)
    if not fixed:
        return [Rule(kind, 0, 1), Rule(kind, 1, 2)]
    return sorted(found, key=lambda r: (r.a, r.b))


def _ratios(first: int, known: list[tuple[int, int]]) -> list[Rule]:
    return [Rule("times", r) for r in range(2, 10) if first > 0 and _holds(Rule("times", r), first, known)]


# ---- the puzzle ----------------------------------------------------------------------------------------------------

def _is_letter(puzzle: dict, p: int) -> bool:
    return puzzle["pattern"][p] == "L"


def term_text(puzzle: dict, values: list[int]) -> str:
    return "".join(chr(64 + v) if _is_letter(puzzle, p) else str(v) for p, v in enumerate(values))


def _columns(puzzle: dict) -> list[list[int | None]]:
    """Each position's values over the series, None at the asked index."""
    asked = puzzle["asked"]
    return [[None if i == asked else t[p] for i, t in enumerate(puzzle["terms"])]
            for p in range(len(puzzle["pattern"]))]


def possible_answers(puzzle: dict) -> set[str]:
    """The terms every position's simplest rules allow (one when the series is fair)."""
    per_position = [sorted(fit(_is_letter(puzzle, p), col)[1]) for p, col in enumerate(_columns(puzzle))]
    return {term_text(puzzle, list(vs)) for vs in itertools.product(*per_position)
            if all(in_range(_is_letter(puzzle, p), v) for p, v in enumerate(vs))}


def render(puzzle: dict) -> str:
    shown = ", ".join("?" if i == puzzle["asked"] else term_text(puzzle, t) for i, t in enumerate(puzzle["terms"]))
    return ASK[puzzle["question"][0]][puzzle["style"]["ask"]].format(s=shown)


_TERM = re.compile(r"[A-Z]|\d+")


def parse(question: str, choices: list[str]) -> tuple[dict | None, str | None]:
    """The puzzle a text in this family's words states, or (None, why not): it must render back to the same text."""
    for form, texts in ASK.items():
        for j, text in enumerate(texts):
            head, _, tail = text.partition("{s}")
            if not (question.startswith(head) and question.endswith(tail)):
                continue
            items = question[len(head):len(question) - len(tail)].split(", ")
            if items.count("?") != 1 or items[0] == "?" or len(items) < 4 \
                    or not all(i == "?" or re.fullmatch(r"(?:[A-Z]|\d+)+", i) for i in items):
                continue  # three shown terms at least, the first of them shown: what a rule is read from
            shown = [_TERM.findall(i) for i in items if i != "?"]
            pattern = "".join("N" if x.isdigit() else "L" for x in shown[0])
            if any("".join("N" if x.isdigit() else "L" for x in t) != pattern for t in shown):
                return None, "mixed_patterns"
            asked = items.index("?")
            terms = [[int(x) if x.isdigit() else ord(x) - 64 for x in t] for t in shown]
            terms.insert(asked, [0] * len(pattern))  # the asked term's values are not in the text
            puzzle = {"kind": "alnum_series", "pattern": pattern, "terms": terms, "asked": asked,
                      "question": [form], "style": {"ask": j}}
            if render(puzzle) == question:
                return puzzle, None
    return None, "unknown_setup"


# ---- deduction ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """A position's rule and the value it gives (position set), or the answer put together (answer set)."""

    position: int | None = None
    rule: Rule | None = None
    value: int | None = None
    answer: str | None = None
    text: str = ""


def _value_text(puzzle: dict, p: int, v: int | None) -> str:
    return "?" if v is None else (chr(64 + v) if _is_letter(puzzle, p) else str(v))


def deduce(puzzle: dict, answer: str) -> list[Step]:
    steps = []
    for p, col in enumerate(_columns(puzzle)):
        fitting, values = fit(_is_letter(puzzle, p), col)
        rule, value = fitting[0], values.pop()
        shown = ", ".join(_value_text(puzzle, p, v) for v in col)
        steps.append(Step(p, rule, value, text=f"Position {p + 1}: {shown}; it {rule.words()}, so "
                                               f"{_value_text(puzzle, p, value)}."))
    return steps + [Step(answer=answer, text=f"So the term is {answer}.")]


def check(puzzle: dict, steps: list[Step], answer: str) -> list[str]:
    """Every problem: a position's rule that does not give its shown values, one that a simpler rule also fits with
    another answer, a value the rule does not give, a position left out, or an answer not put together from them."""
    out = []
    columns = _columns(puzzle)
    told = {}
    for i, s in enumerate(steps[:-1]):
        letter, col = _is_letter(puzzle, s.position), columns[s.position]
        if not all(v is None or s.rule.value(col[0], j) == v for j, v in enumerate(col)):
            out.append(f"step {i + 1}: the rule does not give position {s.position + 1}'s values")
        simpler, values = fit(letter, col)
        if simpler and (simpler[0].simple and not s.rule.simple or values != {s.value}):
            out.append(f"step {i + 1}: a simpler rule fits position {s.position + 1}, or it gives another value")
        if s.rule.value(col[0], col.index(None)) != s.value:
            out.append(f"step {i + 1}: the rule does not give {s.value}")
        told[s.position] = s.value
    if sorted(told) != list(range(len(puzzle["pattern"]))):
        out.append("a position is left out")
    elif not steps or steps[-1].answer != answer or term_text(puzzle, [told[p] for p in sorted(told)]) != answer:
        out.append(f"the last step does not put together the key {answer!r}")
    return out


def explain(puzzle: dict, answer: str) -> str:
    return " ".join(s.text for s in deduce(puzzle, answer))


def work(puzzle: dict) -> dict:
    """steps: per position 1 for a constant step and 2 for a rule of the second kind, 1 more for a term to find
    inside the series; log2_space: the rules a solver tries at each position before the kind that fits (the
    constant steps alone, or every rule), over every position."""
    simple = [fit(_is_letter(puzzle, p), col)[0][0].simple for p, col in enumerate(_columns(puzzle))]
    steps = sum(1.0 if s else 2.0 for s in simple) + (puzzle["question"][0] == "missing")
    space = math.prod(len(STEPS) if s else len(rules(_is_letter(puzzle, p))) for p, s in enumerate(simple))
    return {"steps": steps, "positions": len(puzzle["pattern"]), "log2_space": round(math.log2(space), 3)}


# ---- the generator -----------------------------------------------------------------------------------------------

def build(rng: random.Random, names: list, *, kind: str, level: int, stats: dict,
          form: str | None = None) -> dict | None:
    """One proven puzzle {"puzzle", "answer", "distractors"} at `level`, or None (stats counts why)."""
    if kind not in KINDS or level not in SHOWN:
        raise ValueError(f"unknown kind/level {kind!r}/{level!r}")
    form = form or "next"  # the catalogue draws it by FORM_SHARES
    for _ in range(INNER_TRIES):
        pattern = rng.choice([p for p in PATTERNS if len(p) >= 2 + (level == 3)])
        complex_at = set(rng.sample(range(len(pattern)), min(COMPLEX[level], len(pattern))))
        n = SHOWN[level]
        asked = n - 1 if form == "next" else rng.randrange(1, n - 1)
        columns = [_column(pattern[p] == "L", p in complex_at, n, rng) for p in range(len(pattern))]
        if None in columns:
            stats["out_of_range"] = stats.get("out_of_range", 0) + 1
            continue
        terms = [[col[i] for col in columns] for i in range(n)]
        puzzle = {"kind": kind, "pattern": pattern, "terms": terms, "asked": asked, "question": [form],
                  "style": {"ask": rng.randrange(len(ASK[form]))}}
        key = term_text(puzzle, terms[asked])
        if possible_answers(puzzle) != {key}:
            stats["unfair_rule"] = stats.get("unfair_rule", 0) + 1
            continue
        options = _square(puzzle, terms[asked], rng)
        if options is None:
            stats["no_square"] = stats.get("no_square", 0) + 1
            continue
        terms[asked] = [0] * len(pattern)  # the asked term is the key's, not the text's
        return {"puzzle": puzzle, "answer": key, "distractors": options}
    return None


def _column(letter: bool, complex_: bool, n: int, rng: random.Random) -> list[int] | None:
    """A position's n values on a drawn rule (a rule of the second kind when complex_), or None out of range."""
    choices = [r for r in rules(letter) if r.simple != complex_ and (r.kind != "times" or not letter)]
    rule = rng.choice(choices)
    top = 26 if letter else 30
    first = rng.randint(1 if letter or rule.kind == "times" else 0, top)
    values = [rule.value(first, i) for i in range(n)]
    return values if all(in_range(letter, v) for v in values) else None


def _square(puzzle: dict, key: list[int], rng: random.Random) -> list[str] | None:
    """The three wrong terms of the square over two positions (see the module's words), or None when a moved value
    falls out of range."""
    p, q = rng.sample(range(len(key)), 2)
    moved = []
    for pos in (p, q):
        letter = _is_letter(puzzle, pos)
        v = key[pos] + rng.choice((-1, 1)) * rng.choice((1, 2))
        if not in_range(letter, v):
            return None
        moved.append(v)
    out = []
    for mp, mq in ((True, False), (False, True), (True, True)):
        vals = list(key)
        vals[p] = moved[0] if mp else key[p]
        vals[q] = moved[1] if mq else key[q]
        out.append(term_text(puzzle, vals))
    return out
