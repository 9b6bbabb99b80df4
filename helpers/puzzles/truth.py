"""Truth-tellers and liars (kind "truth_liars"): a few people, each always truthful, always lying or (level 3) an
alternator, each saying something about the others; the question asks who lies, who tells the truth, who alternates,
or how many lie.

A world is each person's kind; a clue is one speaker's words (a truth-teller's statements are all true, a liar's all
false, an alternator's two statements one true and one false). The solver lists every world (at most 3^4) and keeps
those every clue allows: a puzzle is built only when exactly one is left. Its explanation is a deduction written and
checked by helpers.puzzles.worlds: each step names one person's kind, proven from exactly the words and steps it cites.

Levels: 1, three people, truth-tellers and liars, one statement each: another's kind, "exactly k of us lie", "X and
Y are alike", "X and Y differ", "at least one of X and Y lies" (with statements of kinds alone, turning every
truth-teller into a liar and back would fit the words as well); 2, four people; 3, three people, alternators too, two
statements each. A count question's options are four consecutive numbers whose key sits at each rank equally often;
the other questions' options are sets of people, drawn by helpers.puzzles.blind.balanced so that no option strategy
finds the key more often than chance.
"""

from __future__ import annotations

import itertools
import math
import random
import re

import numpy as np

from helpers.puzzles import blind, worlds

KINDS = ("truth_liars",)
TOPIC = ("Logical Reasoning", "Truth-teller and Liar Problems")
KEYWORDS = ("truth-teller", "truth teller", "liar", "knight", "knave")
FAST = True
TRUTH, LIE, ALT = "truth", "liar", "alternator"
FORM_SHARES = {1: (("liars", 0.5), ("truthful", 0.5), ("count", 0.0), ("alternators", 0.0)),
               2: (("liars", 0.35), ("truthful", 0.35), ("count", 0.3), ("alternators", 0.0)),
               3: (("liars", 0.3), ("truthful", 0.3), ("count", 0.0), ("alternators", 0.4))}
PEOPLE = {1: 3, 2: 4, 3: 3}
SAYS = {1: 1, 2: 1, 3: 2}  # statements per person
INNER_TRIES = 300  # statement draws for one drawn world before build gives up (the world's key keeps its share)
NUMBER = ("no", "one", "two", "three", "four")

# Short on purpose: the July 2025 edition counts topic, question, choices and answer against 100 tokens.
INTROS = {
    2: ("{names} each always tell the truth or always lie.",
        "Each of {names} is a truth-teller or a liar.",
        "{names} are truth-tellers or liars."),
    3: ("{names} each tell the truth, lie, or alternate (one true, one false).",
        "Each of {names} always lies, always tells the truth, or alternates."),
}
SAY = ('{p} says: "{s}"', '{p}: "{s}"')
WORDINGS = {
    "is_liar": ("{x} lies.", "{x} is a liar."),
    "is_truth": ("{x} tells the truth.", "{x} is a truth-teller."),
    "is_alt": ("{x} alternates.", "{x} is an alternator."),
    "alike": ("{x} and {y} are of the same kind.", "{x} and {y} are alike."),
    "differ": ("{x} and {y} are of different kinds.", "{x} and {y} differ."),
    "count": ("Exactly {k} of us lie.", "Exactly {k} of us are liars."),
    "either": ("{x} or {y} lies.", "At least one of {x} and {y} is a liar."),
}
SINGULAR = {"Exactly {k} of us lie.": "Exactly {k} of us lies.",
            "Exactly {k} of us are liars.": "Exactly {k} of us is a liar."}
ASK = {"liars": ("Who lies?", "Which of them are liars?"),
       "truthful": ("Who tells the truth?", "Which of them are truth-tellers?"),
       "alternators": ("Who alternates?", "Which of them are alternators?"),
       "count": ("How many of them lie?", "How many liars are there?")}
# Level 3's wordings: the shorter of each pair, but a kind always by its noun ("X is a liar", "exactly two of us are
# liars"): beside alternators, who lie once in two, "X lies" would be true of them too.
LEVEL3 = {tag: 1 if tag in ("is_liar", "is_truth", "is_alt", "count", "either") else
          min(range(2), key=lambda i, t=tag: len(WORDINGS[t][i])) for tag in WORDINGS}
IS = {LIE: "is_liar", TRUTH: "is_truth", ALT: "is_alt"}
FORM_KIND = {"liars": LIE, "truthful": TRUTH, "alternators": ALT}


# ---- meaning -------------------------------------------------------------------------------------------------------

def kinds_of(level: int) -> tuple[str, ...]:
    return (TRUTH, LIE, ALT) if level == 3 else (TRUTH, LIE)


def holds(stmt: list, world: dict[str, str]) -> bool:
    """Whether a statement is true in a world (each person's kind)."""
    tag = stmt[0]
    if tag in ("is_liar", "is_truth", "is_alt"):
        return world[stmt[1]] == {v: k for k, v in IS.items()}[tag]
    if tag == "alike":
        return world[stmt[1]] == world[stmt[2]]
    if tag == "differ":
        return world[stmt[1]] != world[stmt[2]]
    if tag == "count":
        return sum(k == LIE for k in world.values()) == stmt[1]
    if tag == "either":
        return LIE in (world[stmt[1]], world[stmt[2]])
    raise ValueError(f"unknown statement {stmt!r}")


def speaks_true(kind: str, truths: list[bool]) -> bool:
    """Whether a speaker of this kind can say statements with these truth values."""
    if kind == TRUTH:
        return all(truths)
    if kind == LIE:
        return not any(truths)
    return len(truths) == 2 and truths[0] != truths[1]


def all_worlds(puzzle: dict) -> list[dict[str, str]]:
    return [dict(zip(puzzle["people"], ks)) for ks in itertools.product(puzzle["kinds"], repeat=len(puzzle["people"]))]


def allowed(puzzle: dict, world: dict[str, str]) -> bool:
    """Whether every speaker's words fit their kind in this world."""
    return all(speaks_true(world[p], [holds(s, world) for s in stmts]) for p, stmts in puzzle["said"])


def answer_of(puzzle: dict, world: dict[str, str]) -> str:
    """The answer a world gives to the puzzle's question, as option text."""
    form = puzzle["question"][0]
    if form == "count":
        return str(sum(k == LIE for k in world.values()))
    return group_text([p for p in puzzle["people"] if world[p] == FORM_KIND[form]])


def group_text(names: list[str]) -> str:
    """A set of people as an option: "Only Ana", "Ana and Ben", "Ana, Ben and Cy"; "Nobody" for none."""
    if not names:
        return "Nobody"
    if len(names) == 1:
        return f"Only {names[0]}"
    return f"{', '.join(names[:-1])} and {names[-1]}"


def possible_answers(puzzle: dict) -> set[str]:
    """Every answer a world the clues allow gives (one when the puzzle is sound)."""
    return {answer_of(puzzle, w) for w in all_worlds(puzzle) if allowed(puzzle, w)}


# ---- text ------------------------------------------------------------------------------------------------------------

def statement_text(stmt: list) -> str:
    tag, *args = stmt
    words = WORDINGS[tag][args[-1]]
    if tag == "count":
        return (SINGULAR[words] if args[0] == 1 else words).format(k=NUMBER[args[0]])
    return words.format(x=args[0], y=args[1] if len(args) > 2 else "")


def _names(people: list[str]) -> str:
    return f"{', '.join(people[:-1])} and {people[-1]}"


def render(puzzle: dict) -> str:
    """The question text, from the puzzle alone."""
    style = puzzle["style"]
    intro = INTROS[len(puzzle["kinds"])][style["intro"]].format(names=_names(puzzle["people"]))
    said = " ".join(SAY[style["say"]].format(p=p, s=" ".join(statement_text(s) for s in stmts))
                    for p, stmts in puzzle["said"])
    return f"{intro} {said} {ASK[puzzle['question'][0]][style['ask']]}"


_NAME = r"([A-Z][a-z]+)"


def _pattern(words: str) -> re.Pattern:
    out = re.escape(words).replace(r"\{x\}", _NAME).replace(r"\{y\}", _NAME)
    return re.compile(out.replace(r"\{k\}", "(" + "|".join(NUMBER) + ")"))


_STATEMENTS = [(tag, w, _pattern(text)) for tag, texts in WORDINGS.items() for w, text in enumerate(texts)] + \
    [("count", w, _pattern(SINGULAR[text])) for w, text in enumerate(WORDINGS["count"])]


def _statement(text: str) -> list | None:
    for tag, w, pattern in _STATEMENTS:
        m = pattern.fullmatch(text)
        if m:
            args = [NUMBER.index(m.group(1))] if tag == "count" else list(m.groups())
            return [tag, *args, w]
    return None


def parse(question: str, choices: list[str]) -> tuple[dict | None, str | None]:
    """The puzzle a text in this family's words states, or (None, why not): it must render back to the same text."""
    for (n_kinds, intros), say in itertools.product(INTROS.items(), range(len(SAY))):
        for i, intro in enumerate(intros):
            head, _, tail = intro.partition("{names}")
            if not question.startswith(head):
                continue
            m = re.match(re.escape(head) + r"((?:[A-Z][a-z]+, )*[A-Z][a-z]+ and [A-Z][a-z]+)" + re.escape(tail) + " ",
                         question)
            if not m:
                continue
            people = re.split(r", | and ", m.group(1))
            puzzle = _read_rest(question[m.end():], people, n_kinds, {"intro": i, "say": say})
            if puzzle is not None and _names_known(puzzle) and render(puzzle) == question:
                return puzzle, None
    return None, "unknown_setup" if "truth" not in question.lower() else "unreadable"


def _names_known(puzzle: dict) -> bool:
    """Whether every speaker and every person a statement names is one of the cast, each speaking once."""
    cast = set(puzzle["people"])
    speakers = [p for p, _ in puzzle["said"]]
    named = {x for _, stmts in puzzle["said"] for st in stmts for x in st[1:-1] if isinstance(x, str)}
    return set(speakers) <= cast and len(set(speakers)) == len(speakers) and named <= cast


def _read_rest(rest: str, people: list[str], n_kinds: int, style: dict) -> dict | None:
    head, _, tail = SAY[style["say"]].partition("{p}")
    said_re = re.compile(re.escape(head) + _NAME + re.escape(tail.partition("{s}")[0]) + r'([^"]*)"')
    said, end = [], 0
    for m in said_re.finditer(rest):
        if m.start() != end + (1 if said else 0) and said:
            return None
        stmts = [_statement(s) for s in re.split(r"(?<=\.) ", m.group(2))]
        if None in stmts:
            return None
        said.append([m.group(1), stmts])
        end = m.end()
    ask = rest[end:].strip()
    form = next(((f, j) for f, texts in ASK.items() for j, t in enumerate(texts) if t == ask), None)
    if not said or form is None:
        return None
    return {"kind": "truth_liars", "people": people, "kinds": list(kinds_of(3 if n_kinds == 3 else 1)),
            "said": said, "question": [form[0]], "style": dict(style, ask=form[1])}


# ---- deduction -------------------------------------------------------------------------------------------------------

def model(puzzle: dict) -> worlds.Model:
    """The puzzle's worlds for the shared checker: a clue per speaker, facts ("kind", person, kind)."""
    listed = all_worlds(puzzle)
    index = {p: i for i, p in enumerate(puzzle["people"])}
    clue_masks = [np.array([speaks_true(w[p], [holds(s, w) for s in stmts]) for w in listed])
                  for p, stmts in puzzle["said"]]
    kinds = np.array([[w[p] for p in puzzle["people"]] for w in listed])

    def fact_mask(fact) -> np.ndarray:
        return kinds[:, index[fact[1]]] == fact[2]

    def conclude(claims: tuple, possible: tuple) -> str | None:
        mask = np.ones(len(listed), bool)
        for f in claims:
            mask &= fact_mask(f)
        answers = {answer_of(puzzle, listed[i]) for i in np.flatnonzero(mask)}
        return answers.pop() if len(answers) == 1 else None
    return worlds.Model(clue_masks, fact_mask, conclude)


KIND_WORDS = {TRUTH: "tells the truth", LIE: "lies", ALT: "alternates"}


def _step_text(puzzle: dict, step: worlds.Step) -> str:
    if step.answer is not None:
        return f"So the answer is: {step.answer}."
    cites = [f"{puzzle['said'][u][0]}'s words" for u in step.uses] + [f"step {a + 1}" for a in step.after]
    _, person, kind = step.claims[0]
    return f"By {' and '.join(cites)}, {person} {KIND_WORDS[kind]}."


def deduce(puzzle: dict, answer: str) -> list[worlds.Step]:
    """The checked deduction of the answer: each person's kind in the order the fewest cites prove it."""
    solved = [w for w in all_worlds(puzzle) if allowed(puzzle, w)]
    if len(solved) != 1:
        raise ValueError("the puzzle has no single world")
    goals = [("kind", p, solved[0][p]) for p in puzzle["people"]]
    steps = worlds.write(model(puzzle), goals, answer, lambda s: _step_text(puzzle, s))
    for i, s in enumerate(steps[:-1]):  # number the steps so that "step 2" can be found
        steps[i] = worlds.Step(s.uses, s.after, s.claims, s.possible, s.answer, f"{i + 1}. {s.text}")
    return steps


def check(puzzle: dict, steps: list, answer: str) -> list[str]:
    return worlds.check(model(puzzle), steps, answer)


def explain(puzzle: dict, answer: str) -> str:
    return " ".join(s.text for s in deduce(puzzle, answer))


def work(puzzle: dict) -> dict:
    """The reading a solution takes (steps): half of the deduction's cites over all its steps plus half the statements
    weighed, each once per bit of the kinds its speaker may be (an alternator's two statements weigh more than a
    liar's one); and the worlds before any clue (log2_space)."""
    steps = deduce(puzzle, possible_answers(puzzle).pop())
    cites = sum(len(s.uses) + len(s.after) for s in steps if s.answer is None)
    said = sum(len(stmts) for _, stmts in puzzle["said"])
    space = len(puzzle["kinds"]) ** len(puzzle["people"])
    weighed = said * math.log2(len(puzzle["kinds"]))
    return {"steps": round((cites + weighed) / 2, 3), "cites": cites, "statements": said, "deductions": len(steps) - 1,
            "log2_space": round(math.log2(space), 3)}


# ---- the generator -----------------------------------------------------------------------------------------------

def _candidates(speaker: str, people: list[str], level: int, rng: random.Random) -> list[list]:
    """Every statement a speaker may make at this level (about others), each with a drawn wording (level 3, whose six
    statements run long: LEVEL3's)."""
    def w(tag: str) -> int:
        return LEVEL3[tag] if level == 3 else rng.randrange(2)
    others = [p for p in people if p != speaker]
    out = [[IS[k], x, w(IS[k])] for x in others for k in kinds_of(level)]
    out += [["count", k, w("count")] for k in range(1, len(people))]
    for x, y in itertools.combinations(others, 2):  # true or false alike after every kind flips: they break the flip
        out += [["alike", x, y, w("alike")], ["differ", x, y, w("differ")], ["either", x, y, w("either")]]
    return out


def _draw_world(people: list[str], level: int, form: str, rng: random.Random) -> dict[str, str]:
    """A world whose answer is drawn evenly: a count question's key at each of its options' ranks equally often, a
    set question's group never empty (an empty set's one fixed text, "Nobody", would be a usual key)."""
    kinds = kinds_of(level)
    while True:
        world = {p: rng.choice(kinds) for p in people}
        if form == "count":
            start, rank = rng.randrange(len(people) - 2), rng.randrange(4)
            liars = set(rng.sample(people, start + rank))
            world = {p: LIE if p in liars else rng.choice([k for k in kinds if k != LIE]) for p in people}
            world["_window"] = start  # type: ignore[assignment]
            return world
        if any(k == FORM_KIND[form] for k in world.values()):
            return world


def build(rng: random.Random, names: list[tuple[str, str]], *, kind: str, level: int, stats: dict,
          form: str | None = None) -> dict | None:
    """One proven puzzle {"puzzle", "answer", "distractors"} at `level` asking `form`, or None (stats counts why)."""
    if kind not in KINDS or level not in PEOPLE:
        raise ValueError(f"unknown kind/level {kind!r}/{level!r}")
    form = form or FORM_SHARES[level][0][0]  # the catalogue draws it by FORM_SHARES
    people = [n for n, _ in rng.sample(names, PEOPLE[level])]
    world = _draw_world(people, level, form, rng)
    window = world.pop("_window", None)
    style = {"intro": rng.randrange(len(INTROS[len(kinds_of(level))])), "say": rng.randrange(len(SAY)),
             "ask": 1 if level == 3 else rng.randrange(2)}  # level 3 asks by the noun too: "Which of them are liars?"
    for _ in range(INNER_TRIES):
        puzzle = {"kind": kind, "people": people, "kinds": list(kinds_of(level)), "said": _said(world, level, rng),
                  "question": [form], "style": style}
        if len([w for w in all_worlds(puzzle) if allowed(puzzle, w)]) == 1:
            break
        stats["not_unique"] = stats.get("not_unique", 0) + 1
    else:
        return None
    key = answer_of(puzzle, world)
    if form == "count":
        options = [str(window + i) for i in range(4)]
        return {"puzzle": puzzle, "answer": key, "distractors": [o for o in options if o != key]}
    pool = [group_text(list(g)) for r in range(1, len(people) + 1) for g in itertools.combinations(people, r)]
    return {"puzzle": puzzle, "answer": key, "distractors": blind.balanced(key, pool, rng)}


def _said(world: dict[str, str], level: int, rng: random.Random) -> list:
    """Each person's words, true to their kind in the world, speakers in a random order each picking among the
    statements that leave the fewest other worlds (so that most draws single the world out)."""
    people = list(world)
    order, said = rng.sample(people, len(people)), {}
    listed = all_worlds({"people": people, "kinds": kinds_of(level)})
    for p in order:
        cands = _candidates(p, people, level, rng)
        truths = [True] * SAYS[level] if world[p] == TRUTH else [False] * SAYS[level]
        if world[p] == ALT:
            truths = rng.choice([[True, False], [False, True]])
        picks = []
        for t in truths:
            fitting = [c for c in cands if holds(c, world) == t and c not in picks]
            rng.shuffle(fitting)
            picks.append(min(fitting, key=lambda c: _left(listed, {**said, p: picks + [c]})))
        said[p] = picks
    return [[p, said[p]] for p in people]


def _left(listed: list[dict[str, str]], said: dict[str, list]) -> int:
    """How many worlds the words said so far allow (an alternator's first of two statements may be either)."""
    def fits(kind: str, truths: list[bool]) -> bool:
        return speaks_true(kind, truths) if kind != ALT or len(truths) == 2 else True
    return sum(all(fits(w[p], [holds(s, w) for s in stmts]) for p, stmts in said.items()) for w in listed)

