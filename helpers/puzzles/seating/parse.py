"""Read a seating question written in the generators' own words back into its structured puzzle, so the solver can
prove it: how a question another writer produced (a fine-tuned model that learned the wording) is checked.

A text parses only when the structured puzzle renders back to exactly that text (helpers.puzzles.seating.text.render):
nothing is guessed. The setup fixes the kind, the cast, the attributes and the facing premise; every clue sentence
and the question are looked up among every well-formed clue and question of that puzzle. Anything else returns
(None, reason), and the caller counts the reason. The first two seating families
(helpers.puzzles.seating.classic) are read the same way at the end of the module.
"""

from __future__ import annotations

import itertools
import re

from helpers.puzzles.seating import classic, layouts
from helpers.puzzles.seating.text import (GROUPS, KINDS, STATEMENT_QUESTIONS, clue_variants, group_of, intro_variants,
                                          question_variants, render)

_NAME = r"[A-Z][a-z]*"
# the cast opens the setup ("P, Q and R sit ...") or follows its first "sit" ("Round a table sit P, Q and R ...")
_CAST = re.compile(rf"^(?:[^.?]*? sit )?((?:{_NAME}, )*{_NAME} and {_NAME})\b")
_LISTED = re.compile(r"\b(" + "|".join(g["label"] for g in GROUPS.values()) + r") \(([^)]*)\)")
_JOBS = re.compile(r"\bJobs, one each: ([^.]*)\.")
_FACING = re.compile(rf"((?:{_NAME}, )*{_NAME}(?: and {_NAME})?) faces? (the centre|north); the others face")
_LABEL_GROUP = {g["label"]: key for key, g in GROUPS.items()}
RELS = ("left", "right", "opp", "same", "faces", "nbr", "faces_left", "faces_right")


def parse(text: str, choices: list[str] | None = None) -> tuple[dict | None, str | None]:
    """(the structured puzzle whose render is exactly `text`, None) or (None, why not). `choices` (without
    "A) ") are needed for a "which statement is true?" question, whose statements are the choices."""
    people = _cast(text)
    if people is None:
        return None, "no_cast"
    read = _read_classic(text, people)
    if read is not None:
        return read, None
    for skeleton in _skeletons(text, people):
        intros = [i for i, t in enumerate(intro_variants(skeleton)) if text.startswith(t + " ")]
        if not intros:
            continue
        rest = text[len(intro_variants(skeleton)[intros[0]]) + 1:]
        puzzle, reason = _read_body(dict(skeleton, intro=intros[0]), rest, choices or [])
        if puzzle is not None and render(puzzle) == text:
            return puzzle, None
        if puzzle is None and reason != "unknown_setup":
            return None, reason
    return None, "unknown_setup"


def _cast(text: str) -> list[str] | None:
    """The people the setup lists ("P, Q, R and S sit ...", "In a row sit P, Q, R and S.")."""
    m = _CAST.match(text)
    if m is None:
        return None
    head, last = m.group(1).rsplit(" and ", 1)
    people = head.split(", ") + [last]
    return people if len(set(people)) == len(people) else None


def _groups(text: str) -> dict[str, list[str]]:
    """The attribute lists the setup states, in their order ("drink (tea, milk, ...)", "Jobs, one each: ...")."""
    found = [(m.start(), _LABEL_GROUP[m.group(1)], m.group(2).split(", ")) for m in _LISTED.finditer(text)]
    found += [(m.start(), "job", m.group(1).split(", ")) for m in _JOBS.finditer(text)]
    return {g: values for _, g, values in sorted(found)}


def _skeletons(text: str, people: list[str]) -> list[dict]:
    """Every setup the text could state: each kind, with the attributes and facing premises the text names."""
    groups = _groups(text)
    m = _FACING.search(text)
    ones = set(m.group(1).replace(" and ", ", ").split(", ")) if m else set()
    facings = [{}] + ([{p: int(p in ones) for p in people}] if ones else [])
    out = []
    for kind, facing, half, corner in itertools.product(KINDS, facings, (False, True), (None, 0, 1)):
        if (corner is not None and kind != "seating_square") or (half and facing):
            continue
        skeleton = {"kind": kind, "people": list(people), "groups": groups, "facing": facing, "half": half}
        if kind == "seating_square":
            skeleton["corner_face"] = corner
        out.append(skeleton)
    return out


def _read_body(puzzle: dict, rest: str, choices: list[str]) -> tuple[dict | None, str | None]:
    """Clue sentences and the question after the setup, each matched exactly to one structured form."""
    sentences = re.split(r"(?<=[.?]) ", rest.strip())
    if len(sentences) < 2 or not sentences[-1].endswith("?"):
        return None, "no_question"
    table = _clue_table(puzzle)
    clues, phrasing = [], []
    for s in sentences[:-1]:
        if s not in table:
            return None, "unknown_clue"
        clue, i = table[s]
        clues.append(clue)
        phrasing.append(i)
    puzzle = dict(puzzle, clues=clues, phrasing=phrasing)
    return _read_question(puzzle, sentences[-1], choices, table)


def _clue_table(puzzle: dict) -> dict[str, tuple[list, int]]:
    """Every phrasing of every well-formed clue of the puzzle's kind, text -> (clue, phrasing)."""
    table: dict[str, tuple[list, int]] = {}
    for clue in layouts.all_clues(puzzle):
        try:
            texts = clue_variants(puzzle, clue)
        except (KeyError, ValueError, IndexError):
            continue
        for i, t in enumerate(texts):
            table.setdefault(t, (clue, i))
    return table


def _read_question(puzzle: dict, text: str, choices: list[str], table: dict) -> tuple[dict | None, str | None]:
    """The question matched among every question of the puzzle (statements read from the choices)."""
    if text in STATEMENT_QUESTIONS:
        found = [table.get(c.rstrip(".") + ".") for c in choices]
        if len(choices) != 4 or None in found:
            return None, "unknown_statement"
        statement = dict(puzzle, question=["statement", [c for c, _ in found]], s_phrasing=[i for _, i in found])
        return dict(statement, q_phrasing=question_variants(statement).index(text)), None
    for q in _questions(puzzle):
        trial = dict(puzzle, question=q)
        try:
            variants = question_variants(trial)
        except (KeyError, ValueError, IndexError):
            continue
        if text in variants:
            return dict(trial, q_phrasing=variants.index(text)), None
    return None, "unknown_question"


def _questions(puzzle: dict) -> list[list]:
    """Every question form the seating families ask, over the puzzle's people and attributes."""
    people, n = puzzle["people"], len(puzzle["people"])
    tokens = people + [v for vals in puzzle["groups"].values() for v in vals]
    ks = range(0, n)
    out: list[list] = []
    for rel, x, k in itertools.product(RELS, tokens, ks):
        if (k == 0) != (rel in ("opp", "same", "faces", "nbr")):
            continue
        own = group_of(puzzle, x)
        if not (rel == "same" and own == "people"):  # "Who is the chef?", never "Who is Ann?"
            out.append(["who", rel, x, k])
        out += [["attr", g, rel, x, k] for g in puzzle["groups"] if not (rel == "same" and own == g)]
    out += [["at_end", row, side] for row in (0, 1) for side in ("left", "right")]
    out += [["at_pos", side, k] for side in ("west", "east") for k in range(1, (n + 1) // 2 + 1)]
    out += [["count_between", x, y] for x in people for y in people if x != y]
    out += [["where", x, y] for x in people for y in ["", *people] if x != y]
    out += [["count_face", f] for f in (0, 1)]
    return out


# ---- the first two seating families (helpers.puzzles.seating.classic) ----------------------------------------

def _read_classic(text: str, people: list[str]) -> dict | None:
    """A seating_linear / seating_circular text read back, or None when it is not one."""
    for kind, facing in classic.INTROS:
        skeleton = {"kind": kind, "people": list(people), "facing": facing}
        intros = [i for i, t in enumerate(classic.intro_variants(skeleton)) if text.startswith(t + " ")]
        if not intros:
            continue
        head = classic.intro_variants(skeleton)[intros[0]]
        sentences = re.split(r"(?<=[.?]) ", text[len(head) + 1:].strip())
        clues = classic_clues(people, kind == "seating_circular")
        questions = {t: (q, i) for q in _classic_questions(people)
                     for i, t in enumerate(classic.question_variants(q))}
        if not all(c in clues for c in sentences[:-1]) or sentences[-1] not in questions:
            return None
        question, q_phrasing = questions[sentences[-1]]
        puzzle = dict(skeleton, clues=[clues[c][0] for c in sentences[:-1]], question=question, intro=intros[0],
                      phrasing=[clues[c][1] for c in sentences[:-1]], q_phrasing=q_phrasing)
        return puzzle if classic.render(puzzle) == text else None
    return None


def classic_clues(people: list[str], circular: bool) -> dict[str, tuple[list, int]]:
    """Every clue the first two seating families can state in each of its phrasings, text -> (clue, phrasing)."""
    n, out = len(people), []
    for x in people:
        out += [[t, x] for t in ("end", "not_end")] + [[t, x, k] for t in ("pos", "pos_right") for k in range(1, n + 1)]
        for y in people:
            if y == x:
                continue
            out += [[t, x, y] for t in ("left_adj", "right_adj", "left_of", "adj", "not_adj", "opposite")]
            out += [[t, x, y, k] for t in ("kth_left", "kth_right", "gap") for k in range(1, n)]
            out += [["between", x, y, z] for z in people if z not in (x, y)]
    table: dict[str, tuple[list, int]] = {}
    for c in out:
        if not (c[0].startswith("kth") and c[3] == 1):
            for i, t in enumerate(classic.clue_variants(c)):
                table.setdefault(t, (c, i))
    return table


def _classic_questions(people: list[str]) -> list[list]:
    """Every question the first two seating families ask."""
    n, out = len(people), []
    out += [[t, k] for t in ("at", "at_right") for k in range(1, n + 1)]
    for x in people:
        out += [[t, x] for t in ("left_q", "right_q", "opposite_q")]
        out += [[t, x, k] for t in ("kth_left_q", "kth_right_q") for k in range(2, n)]
        out += [["count_q", x, y] for y in people if y != x]
        out += [["where_q", x]] + [["where_q", x, y] for y in people if y != x]
    return out
