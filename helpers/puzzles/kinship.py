"""Blood-relation puzzles beyond family.py's stated facts: pointing chains, coded relations, gender inference.

Kinds (each at levels 1-3):
- "family_pointing": 'Pointing to a photograph, Ravi said, "He is the son of the only sister of my mother's
  husband."' The chain is read from the speaker outwards (mother, husband, only sister, son); the question asks
  how the pointed-at person is related to the speaker, the speaker to them, or them to the speaker's father,
  mother, husband or wife. Form B states a relative of the pointed-at person: "Her mother is my only daughter."
- "family_coded": "P # Q means P is the father of Q; ..." then "A # B @ C", read A # B and B @ C; the question
  asks how A is related to C, or which of four expressions means "X is Y's grandmother".
- "family_gender": facts worded partly without gender ("X is the child of Y", "Y is the spouse of Z"); the
  question needs a gender that only follows from other facts, or is not fixed at all ("Cannot be determined"),
  or asks which of four statements is definitely true.

Conventions (family.py's, written out; the solvers use nothing else):
- Siblings are full siblings. The two parents of a child are married to each other, a married person's spouse
  is the other parent of their children and everyone marries at most once, so "my mother's husband" is my
  father (no step-families). Relatives do not marry each other. Distinct names or letters are distinct people.
- Gender is known only from a gendered word said about a person (father, sister, He, his friend, "a man") or
  about their partner: a couple is a man and a woman (family.py already forbids two fathers), so "C is D's
  wife" makes D male. A name or letter never tells a gender.
- "the son of N" may be any son of N, someone already mentioned included when the text already makes them N's
  son: "my father's son", said by a man, is himself or a brother. Nobody is taken to be a relative the text does
  not make them (my uncle's wife is not also my father's sister). "the only son of N" says N has exactly one
  son: it is the son already known if there is one ("my father's only son", said by a man, is himself) and no
  second son may appear later. Only son, daughter, brother and sister take "only"; father, mother, husband and
  wife are unique anyway.
- "grandfather" and "great-grandfather" without "paternal"/"maternal" may be on either side; "father-in-law"
  is the spouse's father, "son-in-law" a daughter's husband, "grandson" a child's son.
- A photograph or portrait may show the speaker; a person introduced or met in the street is someone else.
- "Cannot be determined" is right only when the facts fix the relation but not the person's gender, so each
  gendered word (Uncle, Aunt) holds in some reading and neither in all.

Solvers see only the stated text. possible_answers enumerates every reading: for a pointing chain every
"already mentioned or someone new" and "either side" choice, then every gender of the people no word sexes
(checked against couples and "only" claims); for named facts every assignment of unstated genders, each closed by
family.close. The relation in a reading is named by its shortest kinship paths (family.PATHS). Generators draw
a hidden tree (family._tree), word it, and keep a puzzle only when the solver's single answer equals the hidden
tree's relation computed a different way (family.true_relation, by common ancestors); stats count each reason.

work(puzzle) -> {"steps", "hops", "log2_space", ...}: hops = kinship links the solver follows; steps = hops
plus every deduction on top (a person identified through "only" or a convention, a link derived by closure, a
gender inferred). log2_space = log2 of the answers open before any deduction: the answer vocabulary (VOCAB
relation words, or the 4 options of a which-question) times the readings the text admits before they are
pruned (pointing: the complete readings of the chain; coded: the m codes listed, any of which a symbol may be;
gender: the 2^u gender assignments of the u people no gendered word names).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable

from helpers.puzzles import family as fam

KINDS = ("family_pointing", "family_coded", "family_gender")
MAX_CHARS = 400  # question + answer letter + "A) ..." choices, counted as puzzles.official_length does
MAX_WORDS = 100  # explanations stay under the organisers' 100 words
CBD = "Cannot be determined"
UNNAMED = "No single word"
SELF = ("Himself", "Herself")
OPP = {"m": "f", "f": "m"}
INV = {"P": "C", "C": "P", "S": "S", "H": "H"}
NEUTRAL = {"parent": ("father", "mother"), "child": ("son", "daughter"), "sibling": ("brother", "sister"),
           "spouse": ("husband", "wife")}
NEUTRAL_OF = {w: n for n, ws in NEUTRAL.items() for w in ws}
KIND_OF = {**{w: k for w, (k, _) in fam.REL_WORDS.items()}, "parent": "P", "child": "C", "sibling": "S",
           "spouse": "H"}
# family.py's TERMS plus the speaker himself: 15 keys x 2 genders + Himself/Herself = 32 answer words
VOCAB = 2 * len(fam.TERMS) + 2
DIRECT = ("parent", "child", "sibling", "spouse")
NEAR = {**fam.NEAR, "self": ("sibling", "child", "parent", "cousin"),
        "parent": ("uncle", "grandparent", "parent-in-law", "sibling"),
        "child": ("nephew", "grandchild", "child-in-law", "sibling"),
        "sibling": ("self", "cousin", "sibling-in-law", "nephew"),
        "spouse": ("sibling-in-law", "sibling", "child-in-law", "cousin")}
LETTERS = "ABCDEFGHJKLMNRSTUVWXYZ"  # no I/O (read as digits) and no P/Q (the code definitions' placeholders)
ASK = ("How is {x} related to {y}?", "What is {x} to {y}?", "What relation is {x} to {y}?")
GENS = {1: 3, 2: 3, 3: 4}  # hidden-tree generations: level 3 reaches great-grandparents


def _reject(stats: dict, reason: str) -> None:
    """Count one rejection by reason."""
    stats[reason] = stats.get(reason, 0) + 1


def _term(key: str, g: str | None) -> str:
    """The relation word for a key and the gender of the person it names."""
    if key == "self":
        return SELF[g == "f"]
    return fam.TERMS[key][g == "f"]


def _length(question: str, choices: list[str]) -> int:
    """Characters the 130-token filter covers: question, answer letter and the four "A) ..." choices."""
    return len(question) + 1 + sum(3 + len(c) for c in choices)


def _near_terms(key: str, g: str, rng: random.Random, exclude: set[str]) -> list[str]:
    """Three wrong relation words of gender g, nearby relations first (uncle for cousin, ...)."""
    near = [_term(k, g) for k in NEAR.get(key, ())]
    rng.shuffle(near)
    out: list[str] = []
    for t in near + [_term(k, g) for k in sorted(fam.TERMS)]:
        if t not in exclude and t not in out and len(out) < 3:
            out.append(t)
    return out


def _shortest_labels(edges: Callable[[object], list[tuple[str, object]]], y: object, x: object) -> set[str]:
    """The label strings (P parent, C child, S sibling, H spouse) of every shortest path from y to x."""
    if x == y:
        return {""}
    dist, labels, frontier = {y: 0}, {y: {""}}, [y]
    while frontier and x not in dist:
        nxt = []
        for u in frontier:
            for lab, v in edges(u):
                if v not in dist:
                    dist[v], labels[v] = dist[u] + 1, set()
                    nxt.append(v)
                if dist[v] == dist[u] + 1:
                    labels[v] |= {s + lab for s in labels[u]}
        frontier = nxt
    return labels.get(x, set())


def _key_of(labels: set[str]) -> str | None:
    """The one relation key all shortest paths agree on ("" is the person himself), or None."""
    keys = {"self" if s == "" else fam.PATHS.get(s) for s in labels}
    return keys.pop() if len(keys) == 1 and None not in keys else None


def _truth(tree: dict, x: str, y: str) -> str | None:
    """X's relation key to Y in the hidden tree, by common ancestors (family.true_relation)."""
    return "self" if x == y else fam.true_relation(tree, x, y)


# ---- pointing: word meanings and the reading engine ---------------------------------------------------------

Hop = tuple[str, "str | None"]
WORDS: dict[str, list[list[Hop]]] = {
    "father": [[("P", "m")]], "mother": [[("P", "f")]], "son": [[("C", "m")]], "daughter": [[("C", "f")]],
    "brother": [[("S", "m")]], "sister": [[("S", "f")]], "husband": [[("H", "m")]], "wife": [[("H", "f")]],
    "grandfather": [[("P", s), ("P", "m")] for s in "mf"], "grandmother": [[("P", s), ("P", "f")] for s in "mf"],
    "paternal grandfather": [[("P", "m"), ("P", "m")]], "paternal grandmother": [[("P", "m"), ("P", "f")]],
    "maternal grandfather": [[("P", "f"), ("P", "m")]], "maternal grandmother": [[("P", "f"), ("P", "f")]],
    "great-grandfather": [[("P", a), ("P", b), ("P", "m")] for a in "mf" for b in "mf"],
    "great-grandmother": [[("P", a), ("P", b), ("P", "f")] for a in "mf" for b in "mf"],
    "grandson": [[("C", s), ("C", "m")] for s in "mf"], "granddaughter": [[("C", s), ("C", "f")] for s in "mf"],
    "father-in-law": [[("H", None), ("P", "m")]], "mother-in-law": [[("H", None), ("P", "f")]],
    "son-in-law": [[("C", "f"), ("H", "m")]], "daughter-in-law": [[("C", "m"), ("H", "f")]],
}
PRIMITIVE = ("father", "mother", "son", "daughter", "brother", "sister", "husband", "wife")
ONLY_WORDS = ("son", "daughter", "brother", "sister")
INLAW = tuple(w for w, alts in WORDS.items() if any(lab == "H" for lab, _ in alts[0]))
LEVEL_WORDS = {1: PRIMITIVE + ("grandfather", "grandmother", "father-in-law", "mother-in-law"),
               2: PRIMITIVE + ("paternal grandfather", "paternal grandmother", "maternal grandfather",
                               "maternal grandmother", "father-in-law", "mother-in-law", "son-in-law",
                               "daughter-in-law", "grandson", "granddaughter"),
               3: tuple(WORDS)}
CHAIN_LENGTHS = {1: (2,), 2: (3, 4), 3: (4, 4, 5, 5, 6)}
COMPOUNDS = {1: 1, 2: 1, 3: 1}  # compound words (grandfather, son-in-law, ...) a chain may use
FORM_B = {1: 0.0, 2: 0.25, 3: 0.35}  # "His mother is ..." instead of "He is ..."
QUESTIONS = {1: (("to_speaker", 1.0),), 2: (("to_speaker", 0.7), ("inverse", 0.3)),
             3: (("to_speaker", 0.5), ("inverse", 0.25), ("to_relative", 0.25))}
# (template, a photo that may show the speaker, names the speaker's gender, names the pointed-at person, noun)
OPENINGS = (
    ('Pointing to a photograph, {S} said, "{stmt}"', True, False, False, "photograph"),
    ('Looking at a portrait, {S} said, "{stmt}"', True, False, False, "portrait"),
    ('Showing a photo to {sp} friend, {S} said, "{stmt}"', True, True, False, "photo"),
    ('Introducing {T}, {S} said, "{stmt}"', False, False, True, ""),
    ('Pointing to {a} in the street, {S} said, "{stmt}"', False, False, False, ""),
    ('Introducing {T} to {sp} friends, {S} said, "{stmt}"', False, True, True, ""),
    ('Pointing to {a} in the street, {S} told {sp} friend, "{stmt}"', False, True, False, ""),
    ('Looking at a portrait, {S} told {sp} friend, "{stmt}"', True, True, False, "portrait"),
)
WITH_PRONOUN = {0: 2, 1: 7, 3: 5, 4: 6}  # the same scene with the speaker's gender said ("his friend")


class Reading:
    """One reading of a pointing text: people (0 = the speaker), genders, couples, "only" claims, trace."""

    __slots__ = ("g", "birth", "union", "couples", "only", "trace")

    def __init__(self) -> None:
        """A reading that knows only the speaker."""
        self.g: list[str | None] = [None]
        self.birth: list[int | None] = [None]  # the couple a person was born to
        self.union: list[int | None] = [None]  # the couple a person is a partner in
        self.couples: list[list[int]] = []
        self.only: list[tuple[int, int, str]] = []  # (couple, excluded sibling or -1, gender): exactly one such child
        self.trace: list[tuple[int, bool]] = []  # per chain word: (person reached, already mentioned?)

    def copy(self) -> Reading:
        """An independent copy to branch on."""
        r = Reading.__new__(Reading)
        r.g, r.birth, r.union = self.g[:], self.birth[:], self.union[:]
        r.couples = [c[:] for c in self.couples]
        r.only, r.trace = self.only[:], self.trace[:]
        return r


def _person(r: Reading, g: str | None, birth: int | None = None, union: int | None = None) -> int:
    """Add someone new to a reading."""
    r.g.append(g)
    r.birth.append(birth)
    r.union.append(union)
    if union is not None:
        r.couples[union].append(len(r.g) - 1)
    return len(r.g) - 1


def _couple(r: Reading, n: int, side: str) -> int:
    """n's birth couple (side "birth") or own marriage ("union"), created when not yet mentioned."""
    table = r.birth if side == "birth" else r.union
    if table[n] is None:
        r.couples.append([] if side == "birth" else [n])
        table[n] = len(r.couples) - 1
    return table[n]


def _sex(r: Reading, n: int, g: str) -> bool:
    """Give n gender g unless a gendered word about n or n's partner rules it out."""
    if r.g[n] is not None:
        return r.g[n] == g
    u = r.union[n]
    if u is not None and any(r.g[k] == g for k in r.couples[u] if k != n):
        return False
    r.g[n] = g
    return True


def _spouse(r: Reading, n: int, g: str | None) -> list[tuple[Reading, int, bool]]:
    """n's husband or wife (g None: either, as in "father-in-law"): the partner already known, or someone new."""
    if g is None:
        return [x for h in "mf" if r.g[n] in (None, OPP[h]) for x in _spouse(r.copy(), n, h)]
    if not _sex(r, n, OPP[g]):
        return []
    c = _couple(r, n, "union")
    other = [k for k in r.couples[c] if k != n]
    if other:
        return [(r, other[0], True)] if _sex(r, other[0], g) else []
    return [(r, _person(r, g, union=c), False)]


def _step(base: Reading, n: int, label: str, g: str | None, only: bool) -> list[tuple[Reading, int, bool]]:
    """Every (reading, person, already mentioned?) for one hop from n: P parent, C child, S sibling, H spouse."""
    r = base.copy()
    if label == "H":
        return _spouse(r, n, g)
    c = _couple(r, n, "union" if label == "C" else "birth")
    if label == "P":
        known = [k for k in r.couples[c] if r.g[k] == g]
        if known:  # one father, one mother
            return [(r, known[0], True)]
        pool, room = [k for k in r.couples[c] if r.g[k] is None], len(r.couples[c]) < 2
    else:
        pool = [k for k in range(len(r.g)) if r.birth[k] == c and k != n and r.g[k] in (g, None)]
        room = True
        if only:
            r.only.append((c, n if label == "S" else -1, g))
    out = []
    for k in pool:
        b = r.copy()
        if _sex(b, k, g):
            out.append((b, k, True))
    if room:
        b = r.copy()
        k = _person(b, g, birth=None if label == "P" else c, union=c if label == "P" else None)
        out.append((b, k, False))
    return out


def _apply(r: Reading, n: int, word: str, only: bool) -> list[tuple[Reading, int, bool]]:
    """Every reading of "n's (only) <word>", compound words hop by hop on each side they may take."""
    out = []
    for alt in WORDS[word]:
        front = [(r, n, False)]
        for i, (label, g) in enumerate(alt):
            last = i == len(alt) - 1
            front = [x for rr, k, _ in front for x in _step(rr, k, label, g, only and last)]
        out += front
    return out


def _edges(r: Reading, u: int) -> list[tuple[str, int]]:
    """u's kinship links in a reading."""
    out: list[tuple[str, int]] = []
    b, m = r.birth[u], r.union[u]
    if b is not None:
        out += [("P", k) for k in r.couples[b]]
        out += [("S", k) for k in range(len(r.g)) if k != u and r.birth[k] == b]
    if m is not None:
        out += [("C", k) for k in range(len(r.g)) if r.birth[k] == m]
        out += [("H", k) for k in r.couples[m] if k != u]
    return out


def _name(r: Reading, y: int, x: int) -> str | None:
    """The relation key of x to y in a reading, or None when no single word names it."""
    return _key_of(_shortest_labels(lambda u: _edges(r, u), y, x))


def _readings(p: dict) -> list[tuple[Reading, int, int]]:
    """Every reading of the text as (reading, pointed-at person, person asked about), before the final checks."""
    r0 = Reading()
    r0.g[0] = p.get("speaker_gender")
    front = [(r0, 0)]
    for word, only in p["chain"]:
        nxt = []
        for r, n in front:
            for r2, k, known in _apply(r, n, word, only):
                r2.trace.append((k, known))
                nxt.append((r2, k))
        front = nxt
    front = _pointed(p, front)
    if p["question"][0] != "to_relative":
        return [(r, x, 0) for r, x in front]
    return [(r2, x, t) for r, x in front for r2, t, _ in _apply(r, 0, p["question"][1], False)]


def _pointed(p: dict, front: list[tuple[Reading, int]]) -> list[tuple[Reading, int]]:
    """The pointed-at person: the chain's end ("He is ..."), or that person's relative ("His mother is ...")."""
    out = []
    for r, n in front:
        r = r.copy()
        if p["form"] == "is":
            if _sex(r, n, p["pronoun"]):
                out.append((r, n))
            continue
        kind, rg = fam.REL_WORDS[p["rel"]]
        if _sex(r, n, rg):
            out += [(r2, k) for r2, k, _ in _step(r, n, INV[kind], p["pronoun"], False)]
    return out


def _completions(r: Reading) -> list[list[str]]:
    """Every full gender assignment of a reading that keeps couples mixed and each "only" claim exact."""
    unknown = [k for k, g in enumerate(r.g) if g is None]
    out = []
    for combo in itertools.product("mf", repeat=len(unknown)):
        g = list(r.g)
        for k, s in zip(unknown, combo):
            g[k] = s
        mixed = all(len(c) < 2 or g[c[0]] != g[c[1]] for c in r.couples)
        if mixed and all(sum(1 for k in range(len(g)) if r.birth[k] == c and k != ex and g[k] == s) == 1
                         for c, ex, s in r.only):
            out.append(g)
    return out


def _valid(p: dict) -> tuple[list[tuple[Reading, list[str], int, int]], int]:
    """The readings that pass every check, each with its genders, and the count of readings before checks."""
    photo = OPENINGS[p["opening"]][1]
    readings = _readings(p)
    good = [(r, g, x, t) for r, x, t in readings if photo or x != 0 for g in _completions(r)]
    return good, len(readings)


def _pointing_answer(p: dict, r: Reading, g: list[str], x: int, t: int) -> str:
    """The answer one reading gives: x's relation to the person asked about (the reverse for "inverse")."""
    if p["question"][0] == "inverse":
        key, who = _name(r, x, 0), 0
    else:
        key, who = _name(r, t, x), x
    return _term(key, g[who]) if key else UNNAMED


def _possible_pointing(p: dict) -> set[str]:
    """Every answer some reading of the pointing text gives."""
    return {_pointing_answer(p, r, g, x, t) for r, g, x, t in _valid(p)[0]}


# ---- pointing: text ---------------------------------------------------------------------------------------

def _desc(chain: list, split: int) -> str:
    """ "the son of the only sister of my mother's husband": the first `split` words possessive, the rest "of"."""
    parts = [("only " if only else "") + w for w, only in chain]
    text = "my " + "'s ".join(parts[:split])
    for part in parts[split:]:
        text = f"the {part} of {text}"
    return text


def _pointed_phrase(p: dict) -> str:
    """How the question names the pointed-at person: by name, or "the man in the portrait"."""
    _, photo, _, named, noun = OPENINGS[p["opening"]]
    if named:
        return p["target"]
    who = "man" if p["pronoun"] == "m" else "woman"
    return f"the {who} in the {noun}" if photo else f"the {who}"


def _render_pointing(p: dict) -> str:
    """The pointing question text."""
    template, _, _, _, _ = OPENINGS[p["opening"]]
    he = p["pronoun"] == "m"
    if p["form"] == "is":
        stmt = f"{'He' if he else 'She'} is {_desc(p['chain'], p['split'])}."
    else:
        stmt = f"{'His' if he else 'Her'} {p['rel']} is {_desc(p['chain'], p['split'])}."
    sp = {"m": "his", "f": "her"}.get(p.get("speaker_gender") or "", "")
    opening = template.format(S=p["speaker"], T=p.get("target") or "", stmt=stmt, sp=sp,
                              a="a man" if he else "a woman")
    x, s, q = _pointed_phrase(p), p["speaker"], p["question"]
    if q[0] == "inverse":
        x, y = s, x
    else:
        y = s if q[0] == "to_speaker" else f"{s}'s {q[1]}"
    return f"{opening} {ASK[p['ask']].format(x=x, y=y)}"


def _explain_pointing(p: dict, answer: str) -> str:
    """The chain resolved word by word, each person named for the speaker, then the answer."""
    good, _ = _valid(p)
    s = p["speaker"]
    owner, lines = s, []
    for i, (word, only) in enumerate(p["chain"]):
        phrase = f"{owner}'s {'only ' if only else ''}{word}"
        names = {_who(r, g, r.trace[i][0], s) for r, g, _, _ in good}
        label = names.pop() if len(names) == 1 else None
        if i == 0 or label is None or label == f"{owner}'s {word}":
            owner = phrase if i == 0 else label or phrase
            continue
        lines.append(f"{phrase} is {label}{_why(p, good[0][0], i)}.")
        owner = s if label.startswith(f"{s} him") or label.startswith(f"{s} her") else label
    xp = _pointed_phrase(p)
    if p["form"] == "rel":
        lines.append(f"{owner} is {xp}'s {p['rel']}.")
    lines.append(_conclusion(p, answer, xp))
    text = " ".join(lines)
    return text[0].upper() + text[1:]


def _who(r: Reading, g: list[str], k: int, s: str) -> str | None:
    """A person of a reading named for the speaker ("Ravi's aunt", "Ravi himself"), or None."""
    if k == 0:
        return f"{s} {SELF[g[0] == 'f'].lower()}"
    key = _name(r, 0, k)
    return f"{s}'s {_term(key, g[k]).lower()}" if key else None


def _why(p: dict, r: Reading, i: int) -> str:
    """The deduction behind chain word i, if any: an "only" claim, or a spouse who must be a named person's parent."""
    k, known = r.trace[i]
    word, only = p["chain"][i]
    if known and word in ONLY_WORDS:
        return f" ('only': no other {word})" if only else " (by the 'only' above)"
    if word not in ("husband", "wife"):
        return ""
    named = [0] + [j for j, _ in r.trace[:i]]
    if r.union[k] is not None and any(r.birth[j] == r.union[k] for j in named):
        return " (no step-families)"
    return " (one spouse each)" if known else ""


def _conclusion(p: dict, answer: str, xp: str) -> str:
    """The last sentence: the answer said in full."""
    s, q, a = p["speaker"], p["question"], answer.lower()
    if q[0] == "inverse":
        return f"So {s} is {xp}'s {a}."
    y = s if q[0] == "to_speaker" else f"{s}'s {q[1]}"
    return f"So {xp} is {y} {a}." if answer in SELF else f"So {xp} is {y}'s {a}."


def _work_pointing(p: dict) -> dict:
    """Hops walked, deductions made ("only", no step-families) and the readings explored by the solver."""
    good, readings = _valid(p)
    hops = sum(len(WORDS[w][0]) for w, _ in p["chain"]) + (p["form"] == "rel") + (p["question"][0] == "to_relative")
    known = sum(k for _, k in good[0][0].trace) if good else 0
    deduced = sum(bool(_why(p, good[0][0], i)) for i in range(len(p["chain"]))) if good else 0
    only = sum(1 for _, o in p["chain"] if o)
    space = VOCAB * max(readings, 1)
    return {"steps": hops + deduced, "hops": hops, "identified": known, "deduced": deduced, "only": only,
            "readings": readings,
            "log2_space": round(math.log2(space), 3)}


# ---- pointing: generator ---------------------------------------------------------------------------------

def _tree_step(tree: dict, u: str, label: str, g: str | None) -> list[str]:
    """u's relatives along one hop of the hidden tree."""
    if label == "P":
        cands = [tree["father"][u], tree["mother"][u]]
    elif label == "C":
        cands = [c for c in tree["gender"] if u in (tree["father"][c], tree["mother"][c])]
    elif label == "S":
        f = tree["father"][u]
        cands = [s for s in tree["gender"] if f and s != u and tree["father"][s] == f]
    else:
        cands = [tree["spouse"].get(u)]
    return [c for c in cands if c and (g is None or tree["gender"][c] == g)]


def _tree_word(tree: dict, u: str, word: str) -> list[str]:
    """Everyone the hidden tree makes u's <word>."""
    out: list[str] = []
    for alt in WORDS[word]:
        front = [u]
        for label, g in alt:
            front = [v for w in front for v in _tree_step(tree, w, label, g)]
        out += [v for v in front if v not in out]
    return out


def _routes(tree: dict, u: str, word: str) -> list[list[tuple[str, str | None, str]]]:
    """Every hidden-tree route of u's <word>: [(label, gender, person reached)] per hop."""
    out: list[list[tuple[str, str | None, str]]] = []
    for alt in WORDS[word]:
        front: list[list[tuple[str, str | None, str]]] = [[]]
        for label, g in alt:
            front = [r + [(label, g, v)] for r in front for v in _tree_step(tree, r[-1][2] if r else u, label, g)]
        out += front
    return out


def _fair(tree: dict, u: str, word: str, v: str, seen: list[str], level: int) -> bool:
    """Whether a walk may take u -word-> v: back to someone mentioned only where "only" or uniqueness proves it."""
    if v in seen:
        cat = _tree_word(tree, u, word)
        return level == 3 and word in PRIMITIVE and (word not in ONLY_WORDS or len(cat) == 1)
    return any(_clear(tree, u, r, seen) for r in _routes(tree, u, word) if r[-1][2] == v)


def _clear(tree: dict, u: str, route: list[tuple[str, str | None, str]], seen: list[str]) -> bool:
    """No child or sibling hop of the route could also be someone already mentioned ("which son?" stays open)."""
    prev = u
    for label, g, v in route:
        if label in "CS" and any(c in seen for c in _tree_step(tree, prev, label, g)):
            return False
        prev = v
    return True


def _walk(rng: random.Random, tree: dict, s: str, level: int) -> list[tuple[str, str, str]] | None:
    """A random chain of words from the speaker through the hidden tree: [(word, from, to)]."""
    n = rng.choice(CHAIN_LENGTHS[level])
    inlaw_at, twisted, just = rng.randrange(n), level != 3, False
    compounds = COMPOUNDS[level]
    seen, u, out = [s], s, []
    for i in range(n):
        moves = [(w, v) for w in LEVEL_WORDS[level] if compounds > 0 or w in PRIMITIVE
                 for v in _tree_word(tree, u, w) if _fair(tree, u, w, v, seen, level)]
        moves = _prefer(moves, _wanted(seen, level, i, i == inlaw_at, twisted))
        if just:  # after "my father's only son" a spouse or child hop tells "me" from "my brother"; a parent would not
            moves = _prefer(moves, [lambda w, v: WORDS[w][0][0][0] in "HC"])
        if i == n - 1:
            moves = _spread(rng, tree, s, moves)
        if not moves:
            return None
        weights = [3 if w in PRIMITIVE else 1 for w, _ in moves]  # compound words are the seasoning, not the meal
        w, v = rng.choices(moves, weights)[0]
        compounds -= w not in PRIMITIVE
        just = v in seen and w in ONLY_WORDS
        twisted = twisted or _is_twist(w, v, seen)
        out.append((w, u, v))
        seen.append(v)
        u = v
    return out


def _is_twist(w: str, v: str, seen: list[str]) -> bool:
    """A level-3 twist: back to someone named through "only", or up to a great-grandparent."""
    return (v in seen and w in ONLY_WORDS) or w.startswith("great")


def _prefer(moves: list[tuple[str, str]], tests: list[Callable[[str, str], bool]]) -> list[tuple[str, str]]:
    """The moves passing every test that some move passes, tests applied in order."""
    for test in tests:
        moves = [m for m in moves if test(*m)] or moves
    return moves


def _wanted(seen: list[str], level: int, i: int, inlaw: bool, twisted: bool) -> list[Callable[[str, str], bool]]:
    """What a walk step should prefer: upward first, the level's in-law or twist, else someone new."""
    tests: list[Callable[[str, str], bool]] = []
    if level == 3 and i == 0:
        tests.append(lambda w, v: WORDS[w][0][0][0] == "P")  # up first, so a way back down through "only" exists
    if level == 2 and inlaw:
        tests.append(lambda w, v: w in INLAW)
    if not twisted and i > 0:
        tests += [lambda w, v: _is_twist(w, v, seen), lambda w, v: v in seen and w in ONLY_WORDS]
    else:
        tests.append(lambda w, v: v not in seen)
    return tests


def _spread(rng: random.Random, tree: dict, s: str, moves: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The last step's moves for one relation key drawn uniformly, so no answer word dominates."""
    by_key: dict[str, list[tuple[str, str]]] = {}
    for w, v in moves:
        key = _truth(tree, v, s)
        if key is not None:
            by_key.setdefault(key, []).append((w, v))
    return by_key[rng.choice(sorted(by_key))] if by_key else moves


def _form_b(rng: random.Random, tree: dict, walk: list, seen: list[str]) -> tuple[str, str] | None:
    """(word for the chain's end as the pointed-at person's relative, that person) for "His mother is ..."."""
    end = walk[-1][2]
    links = [(lab, v) for lab, v in fam._links(tree, end) if v not in seen
             and _clear(tree, end, [(lab, tree["gender"][v], v)], seen)]
    if not links:
        return None
    lab, x = rng.choice(links)
    return fam.EDGE_WORDS[INV[lab]][tree["gender"][end] == "f"], x


def _pick_question(rng: random.Random, tree: dict, s: str, level: int) -> list:
    """The question: about the speaker, the speaker about them, or about the speaker's parent or spouse."""
    kinds, weights = zip(*QUESTIONS[level])
    kind = rng.choices(kinds, weights)[0]
    if kind != "to_relative":
        return [kind]
    rels = [w for w, who in (("father", tree["father"][s]), ("mother", tree["mother"][s])) if who]
    if s in tree["spouse"]:
        rels.append("husband" if tree["gender"][tree["spouse"][s]] == "m" else "wife")
    return ["to_relative", rng.choice(rels)] if rels else ["to_speaker"]


def _question_truth(tree: dict, q: list, s: str, x: str) -> tuple[str | None, str]:
    """The hidden tree's answer key and the gender of the person it names."""
    if q[0] == "inverse":
        return (_truth(tree, s, x) if x != s else None), tree["gender"][s]
    if q[0] == "to_speaker":
        return _truth(tree, x, s), tree["gender"][x]
    who = {"father": tree["father"][s], "mother": tree["mother"][s]}.get(q[1]) or tree["spouse"].get(s)
    return (_truth(tree, x, who) if who != x else None), tree["gender"][x]


def _opening(rng: random.Random, self_photo: bool, pronoun: bool) -> int:
    """A random scene: a photo when the speaker is the one shown; with "his/her" when the speaker's gender counts."""
    ok = [i for i, o in enumerate(OPENINGS) if (o[1] or not self_photo) and (o[2] or not pronoun)]
    return rng.choice(ok)


def _settle_only(p: dict, true_only: list[bool], truth: str, rng: random.Random) -> tuple[dict, int] | str:
    """Add the true "only" claims the answer needs (and no other), or the reason the text cannot prove the truth."""
    proven = _possible_pointing(p)
    if len(proven) > 1 and any(true_only):
        p = dict(p, chain=[[w, t] for (w, _), t in zip(p["chain"], true_only)])
        proven = _possible_pointing(p)
    if len(proven) > 1 and p["opening"] in WITH_PRONOUN:
        p = dict(p, opening=WITH_PRONOUN[p["opening"]], speaker_gender=p["_sg"])
        proven = _possible_pointing(p)
    if proven != {truth}:
        return "ambiguous" if len(proven) > 1 else "solver_disagrees" if proven else "no_reading"
    marked = [i for i, (_, o) in enumerate(p["chain"]) if o]
    rng.shuffle(marked)
    for i in marked:  # fewer claims only admit more readings, so each "only" kept is needed by the rest
        fewer = dict(p, chain=[[w, o and j != i] for j, (w, o) in enumerate(p["chain"])])
        if _possible_pointing(fewer) == {truth}:
            p = fewer
    return p, sum(1 for _, o in p["chain"] if o)


def _build_pointing(rng: random.Random, names: list[tuple[str, str]], level: int, stats: dict) -> dict | None:
    """One proven pointing puzzle, or None with the reason counted."""
    tree = fam._tree(rng, names, GENS[level])
    s = rng.choice(sorted(p for p in tree["gender"] if tree["father"][p]))
    walk = None
    for _ in range(5):  # a dead end (no fair next word) is retried on the same tree: trees cost more than walks
        walk = walk or _walk(rng, tree, s, level)
    if walk is None:
        return _reject(stats, "no_walk")
    seen = [s] + [v for _, _, v in walk]
    form = "rel" if rng.random() < FORM_B[level] else "is"
    rel, x = (_form_b(rng, tree, walk, seen) or (None, None)) if form == "rel" else (None, walk[-1][2])
    if x is None:
        return _reject(stats, "no_walk")
    q = _pick_question(rng, tree, s, level)
    key, g = _question_truth(tree, q, s, x)
    if key is None:
        return _reject(stats, "unnamed")
    truth = _term(key, g)
    opening = _opening(rng, x == s, q[0] == "inverse" and rng.random() < 0.7)
    o = OPENINGS[opening]
    p = {"kind": "family_pointing", "speaker": s, "target": x if o[3] else None, "opening": opening,
         "speaker_gender": tree["gender"][s] if o[2] else None, "pronoun": tree["gender"][x], "form": form,
         "rel": rel, "chain": [[w, False] for w, _, _ in walk], "split": rng.randint(1, len(walk)),
         "question": q, "ask": rng.randrange(len(ASK)), "_sg": tree["gender"][s]}
    true_only = [w in ONLY_WORDS and len(_tree_word(tree, u, w)) == 1 for w, u, _ in walk]
    return _finish_pointing(rng, p, true_only, truth, key, g, level, stats)


def _finish_pointing(rng: random.Random, p: dict, true_only: list[bool], truth: str, key: str, g: str,
                     level: int, stats: dict) -> dict | None:
    """Settle the "only" claims, check the level's shape, pick distractors and check the length limits."""
    settled = _settle_only(p, true_only, truth, rng)
    if isinstance(settled, str):
        return _reject(stats, settled)
    p, needed = settled
    del p["_sg"]
    if level == 3 and needed == 0 and not any(w.startswith("great") for w, _ in p["chain"]):
        return _reject(stats, "too_plain")  # level 3: "only" must decide, or a great-grandparent be reached
    if level == 2 and not any(w in INLAW for w, _ in p["chain"]) and p.get("rel") not in ("husband", "wife"):
        return _reject(stats, "no_in_law")
    distractors = _near_terms(key, g, rng, {truth})
    return _accept(p, truth, distractors, stats)


def _accept(p: dict, answer: str, distractors: list[str], stats: dict) -> dict | None:
    """The built puzzle once it fits: 3 distractors, under MAX_CHARS, explanation under MAX_WORDS."""
    if len(set(distractors)) < 3 or answer in distractors:
        return _reject(stats, "few_distractors")
    if _length(render(p), [answer] + distractors) >= MAX_CHARS:
        return _reject(stats, "too_long")
    if len(explain(p, answer).split()) >= MAX_WORDS:
        return _reject(stats, "long_explanation")
    return {"puzzle": p, "answer": answer, "distractors": distractors[:3]}


# ---- named facts (coded and gender kinds): models by gender assignment -------------------------------------

def _gendered(word: str, g: str) -> str:
    """The gendered form of a fact word for a person of gender g ("child" -> "son")."""
    return NEUTRAL[word][g == "f"] if word in NEUTRAL else word


def _stated_genders(facts: list[list[str]]) -> dict[str, str] | None:
    """Genders the gendered words say outright; None when a person is called both."""
    fixed: dict[str, str] = {}
    for word, a, _ in facts:
        if word not in NEUTRAL and fixed.setdefault(a, fam.REL_WORDS[word][1]) != fam.REL_WORDS[word][1]:
            return None
    return fixed


def _models(facts: list[list[str]]) -> list[dict]:
    """Every closed world (family.close) for each assignment of the unstated genders that keeps couples mixed."""
    fixed = _stated_genders(facts)
    if fixed is None:
        return []
    people = list(dict.fromkeys(p for _, a, b in facts for p in (a, b)))
    unknown = [p for p in people if p not in fixed]  # generated puzzles leave <= 7 unsexed: <= 128 closures of ~0.1 ms
    out = []
    for combo in itertools.product("mf", repeat=len(unknown)):
        g = {**fixed, **dict(zip(unknown, combo))}
        world = fam.close([[_gendered(w, g[a]), a, b] for w, a, b in facts])
        if world is None or any(g[a] == g[b] for a in world["people"] for b in world["spouse"][a]):
            continue
        world["gender"] = g
        out.append(world)
    return out


def _rel_key(world: dict, y: str, x: str) -> str | None:
    """X's relation key to Y in a closed world (the links never depend on gender, so one world serves all)."""
    if x not in world["people"] or y not in world["people"]:
        return None
    return _key_of({"".join(lab for lab, _ in path) for path in fam.paths(world, y, x)} if x != y else {""})


def _terms(models: list[dict], y: str, x: str) -> set[str]:
    """The relation words naming x for y across the models (UNNAMED when no single key)."""
    if not models:
        return set()
    key = _rel_key(models[0], y, x)
    return {_term(key, w["gender"][x]) for w in models} if key else {UNNAMED}


def _edge_word(label: str, g: str | None) -> str:
    """The word for a link to a person of gender g (None: the neutral word)."""
    return fam.EDGE_WORDS[label][{"m": 0, "f": 1}.get(g or "", 2)]


def _proven_genders(models: list[dict]) -> dict[str, str]:
    """The people whose gender every model agrees on."""
    out = {}
    for p, g in models[0]["gender"].items():
        if all(w["gender"][p] == g for w in models):
            out[p] = g
    return out


def _path_lines(facts: list[list[str]], world: dict, proven: dict, y: str, x: str) -> tuple[list[str], int, int]:
    """The chain of links from y to x as sentences, with the hop count and how many were derived, not stated."""
    stated = {(KIND_OF[w], b, a) for w, a, b in facts} | {(INV[KIND_OF[w]], a, b) for w, a, b in facts}
    lines, u, derived = [], y, 0
    path = fam.paths(world, y, x)[0] if x != y else []
    for label, v in path:
        reason = "" if (label, u, v) in stated else fam._reason(world, label, u, v)
        derived += bool(reason)
        lines.append(f"{u}'s {_edge_word(label, proven.get(v))} is {v}{reason}.")
        u = v
    return lines, len(path), derived


def _gender_lines(facts: list[list[str]], world: dict, proven: dict, x: str) -> tuple[list[str], int]:
    """Why x's gender is fixed (through the spouse) or open, with the inference steps it took."""
    fixed = _stated_genders(facts) or {}
    if x in fixed:
        return [], 0
    spouse = sorted(world["spouse"][x])
    if x not in proven:
        tail = f" nor of {spouse[0]}, {x}'s spouse" if spouse else ""
        return [f"No gendered word is said of {x}{tail}, so {x}'s gender is open."], 1
    s = spouse[0]
    sexes = {"m": "male", "f": "female"}
    said = next((f"{s} is {b}'s {w}" for w, a, b in facts if a == s and w not in NEUTRAL), f"{s} is {sexes[proven[s]]}")
    marry = world["why"].get(("H", x, s))
    why = f" ({marry})" if marry else ""
    return [f"{x} is married to {s}{why}; {said}, so {x} is {sexes[proven[x]]}."], 1 + bool(marry)


def _fact_text(fact: list[str], style: int) -> str:
    """One stated fact in one of three wordings."""
    w, a, b = fact
    return (f"{a} is the {w} of {b}.", f"{a} is {b}'s {w}.", f"{b}'s {w} is {a}.")[style]


def _rename(people: list[str], rng: random.Random) -> dict[str, str]:
    """Letters for the hidden tree's people, A-like in order of first mention."""
    return dict(zip(people, sorted(rng.sample(LETTERS, len(people)))))


# ---- coded relations -------------------------------------------------------------------------------------

SYMBOLS = ("#", "@", "$", "%", "&", "*", "+", "-", "!", "^")
CODE_STYLES = ("P {s} Q means P is the {w} of Q", "P {s} Q means P is Q's {w}", "P {s} Q: P is Q's {w}")
CODE_INTROS = ("", "In a code, ", "Suppose ")
CODED_ASK = ("If {e}, how is {a} related to {b}?", "Given {e}, what is {a} to {b}?",
             "If {e}, what relation is {a} to {b}?")
WHICH_ASK = ("Which expression means {a} is {b}'s {t}?", "Which expression shows that {a} is the {t} of {b}?")
CODE_COUNT = {1: 4, 2: 5, 3: 6}
CODE_LINKS = {1: 2, 2: 3, 3: 4}
WHICH_SHARE = {1: 0.0, 2: 0.3, 3: 0.4}


def _expr_text(tokens: list[str]) -> str:
    """ "A # B @ C"."""
    return " ".join(tokens)


def _expr_facts(codes: list[list[str]], tokens: list[str]) -> list[list[str]]:
    """The facts an expression encodes: "A # B @ C" is A # B and B @ C."""
    meaning = dict((s, w) for s, w in codes)
    return [[meaning[tokens[i]], tokens[i - 1], tokens[i + 1]] for i in range(1, len(tokens), 2)]


def _possible_coded(p: dict) -> set[str]:
    """The coded solver: the relation words the decoded facts allow, or the options that surely mean the target."""
    q = p["question"]
    if q[0] == "relation":
        return _terms(_models(_expr_facts(p["codes"], p["expr"])), q[2], q[1])
    return {_expr_text(o) for o in p["options"]
            if _terms(_models(_expr_facts(p["codes"], o)), q[2], q[1]) == {q[3]}}


def _render_coded(p: dict) -> str:
    """The coded question text."""
    style = CODE_STYLES[p["style"]]
    codes = "; ".join(style.format(s=s, w=w) for s, w in p["codes"]) + "."
    q = p["question"]
    if q[0] == "relation":
        ask = CODED_ASK[p["ask"]].format(e=_expr_text(p["expr"]), a=q[1], b=q[2])
    else:
        ask = WHICH_ASK[p["ask"] % len(WHICH_ASK)].format(a=q[1], b=q[2], t=q[3].lower())
    return f"{CODE_INTROS[p['intro']]}{codes} {ask}"


def _coded_solution(p: dict, answer: str) -> tuple[list[list[str]], list[str]]:
    """The facts behind the answer (the chosen expression's for a which-question) and the pair asked about."""
    q = p["question"]
    tokens = p["expr"] if q[0] == "relation" else answer.split()
    return _expr_facts(p["codes"], tokens), [q[1], q[2]]


def _explain_coded(p: dict, answer: str) -> str:
    """Decode each symbol, follow the links from the second person to the first, name the relation."""
    facts, (a, b) = _coded_solution(p, answer)
    models = _models(facts)
    proven = _proven_genders(models)
    decoded = "; ".join(f"{x} is {y}'s {w}" for w, x, y in facts)
    lines, _, _ = _path_lines(facts, models[0], proven, b, a)
    term = answer if p["question"][0] == "relation" else p["question"][3]
    text = f"Decode: {decoded}. " + " ".join(lines) + f" So {a} is {b}'s {term.lower()}."
    if p["question"][0] == "which":
        others = [_terms(_models(_expr_facts(p["codes"], o)), b, a) for o in p["options"] if _expr_text(o) != answer]
        text += " The other options give: " + ", ".join(sorted({t.lower() for ts in others for t in ts})) + "."
    return text


def _work_coded(p: dict) -> dict:
    """Symbols decoded and links derived (plus one refutation per wrong option of a which-question)."""
    answer = next(iter(_possible_coded(p)), None)
    if answer is None:
        return {"steps": 0, "hops": 0, "log2_space": 0.0}
    facts, (a, b) = _coded_solution(p, answer)
    models = _models(facts)
    _, hops, derived = _path_lines(facts, models[0], _proven_genders(models), b, a)
    which = p["question"][0] == "which"
    bits = math.log2(4 if which else VOCAB) + math.log2(len(p["codes"]))
    return {"steps": len(facts) + derived + 3 * which, "hops": hops, "derived": derived, "decoded": len(facts),
            "log2_space": round(bits, 3)}


def _word_of(tree: dict, u: str, v: str) -> str:
    """The word for u as v's relative ("father" when u is v's father)."""
    lab = next(lab for lab, w in fam._links(tree, u) if w == v)
    return fam.EDGE_WORDS[INV[lab]][tree["gender"][u] == "f"]


def _coded_path(rng: random.Random, tree: dict, n: int, which: bool) -> list[str] | None:
    """A simple walk of n links whose ends the hidden tree relates by one named word (not a direct one for which)."""
    people = sorted(tree["gender"])
    for _ in range(20):  # ~1 in 3 random walks ends on a nameable relation
        path = [rng.choice(people)]
        while len(path) <= n:
            nxt = sorted({v for _, v in fam._links(tree, path[-1]) if v not in path})
            if not nxt:
                break
            path.append(rng.choice(nxt))
        key = fam.true_relation(tree, path[0], path[-1]) if len(path) == n + 1 else None
        if key and not (which and key in DIRECT):
            return path
    return None


def _codes(rng: random.Random, words: list[str], level: int) -> list[list[str]]:
    """The code table: every word the expression needs plus decoys, each under its own random symbol."""
    needed = list(dict.fromkeys(words))
    decoys = [w for w in fam.REL_WORDS if w not in needed]
    rng.shuffle(decoys)
    table = needed + decoys[:max(0, CODE_COUNT[level] - len(needed))]
    rng.shuffle(table)
    return [[s, w] for s, w in zip(rng.sample(SYMBOLS, len(table)), table)]


def _build_coded(rng: random.Random, names: list[tuple[str, str]], level: int, stats: dict) -> dict | None:
    """One proven coded-relation puzzle, or None with the reason counted."""
    tree = fam._tree(rng, names, GENS[level])
    which = rng.random() < WHICH_SHARE[level]
    path = _coded_path(rng, tree, (level if which else CODE_LINKS[level]), which)
    if path is None:
        return _reject(stats, "no_walk")
    words = [_word_of(tree, u, v) for u, v in zip(path, path[1:])]
    if level == 3 and not which and rng.random() < 0.5:  # a genderless middle link: its gender never matters
        j = rng.randrange(1, len(words))
        words[j] = NEUTRAL_OF[words[j]]
    codes = _codes(rng, words, level)
    letter = _rename(path, rng)
    sym = {w: s for s, w in codes}
    tokens = [letter[path[0]]] + [t for w, v in zip(words, path[1:]) for t in (sym[w], letter[v])]
    p = {"kind": "family_coded", "codes": codes, "style": rng.randrange(len(CODE_STYLES)),
         "intro": rng.randrange(len(CODE_INTROS)), "ask": rng.randrange(len(CODED_ASK))}
    if which:
        return _finish_which(rng, tree, p, path, tokens, stats)
    a, b = path[0], path[-1]
    if level == 3 and words[-1] in ("husband", "wife") and rng.random() < 0.5:
        a, b = b, a  # ask the reverse: the last person's gender follows only from the partner's word
    p.update(expr=tokens, question=["relation", letter[a], letter[b]])
    truth = _term(fam.true_relation(tree, a, b), tree["gender"][a])
    return _check(p, truth, _near_terms(fam.true_relation(tree, a, b), tree["gender"][a], rng, {truth}), stats)


def _check(p: dict, truth: str, distractors: list[str], stats: dict) -> dict | None:
    """Keep the puzzle only when the solver proves exactly the hidden tree's answer."""
    proven = possible_answers(p)
    if proven != {truth}:
        return _reject(stats, "solver_disagrees" if len(proven) == 1 and UNNAMED not in proven else "undetermined")
    if any(d in proven for d in distractors):
        return _reject(stats, "distractor_possible")
    return _accept(p, truth, distractors, stats)


def _mutations(tokens: list[str], symbols: list[str]) -> list[list[str]]:
    """Near-miss expressions: one symbol changed, the symbols reversed or two swapped."""
    out = []
    for i in range(1, len(tokens), 2):
        out += [tokens[:i] + [s] + tokens[i + 1:] for s in symbols if s != tokens[i]]
    syms = tokens[1::2]
    for order in (syms[::-1], syms[1:] + syms[:1]):
        t = tokens[:]
        t[1::2] = order
        out.append(t)
    return out


def _wrong_options(rng: random.Random, codes: list[list[str]], tokens: list[str], target: str) -> list[list[str]]:
    """Three near-miss expressions the solver proves do not mean the target, ones naming another relation first."""
    a, b = tokens[0], tokens[-1]
    near: list[list[str]] = []
    far: list[list[str]] = []
    cands = _mutations(tokens, [s for s, _ in codes])
    rng.shuffle(cands)
    for c in cands:
        terms = _terms(_models(_expr_facts(codes, c)), b, a)
        if terms != {target} and _expr_text(c) not in map(_expr_text, near + far):
            (near if len(terms) == 1 and UNNAMED not in terms else far).append(c)
        if len(near) >= 3:
            break
    return (near + far)[:3]


def _finish_which(rng: random.Random, tree: dict, p: dict, path: list[str], tokens: list[str],
                  stats: dict) -> dict | None:
    """A which-expression question: the hidden tree's expression and three the solver proves mean otherwise."""
    key = fam.true_relation(tree, path[0], path[-1])
    target = _term(key, tree["gender"][path[0]])
    a, b = tokens[0], tokens[-1]
    picked = _wrong_options(rng, p["codes"], tokens, target)
    if len(picked) < 3:
        return _reject(stats, "few_distractors")
    options = picked + [tokens]
    rng.shuffle(options)
    p.update(question=["which", a, b, target], options=options, ask=rng.randrange(len(WHICH_ASK)))
    return _check(p, _expr_text(tokens), [_expr_text(o) for o in picked], stats)


# ---- gender inference ------------------------------------------------------------------------------------

GENDER_KEYS = {1: ("uncle", "nephew", "grandparent", "grandchild", "parent-in-law", "sibling-in-law"),
               2: ("uncle", "nephew", "grandparent", "grandchild", "parent-in-law", "child-in-law",
                   "sibling-in-law", "great-grandparent"),
               3: ("uncle", "nephew", "great-grandparent", "great-grandchild", "great-uncle", "sibling-in-law",
                   "child-in-law", "parent-in-law")}
NEUTRAL_SHARE = {1: 0.3, 2: 0.45, 3: 0.6}  # chance a fact is worded without gender
NOISE = {1: 0, 2: 1, 3: 2}  # true side facts that the answer does not need
TRUE_SHARE = {1: 0.0, 2: 0.3, 3: 0.5}  # "which statement is definitely true?"
CBD_SHARE = 0.3
GENDER_INTROS = ("", "In a family: ", "Of a family's members: ")
TRUE_ASK = ("Which statement is definitely true?", "Which of the following must be true?",
            "Which is definitely true?")


def _statement_text(st: list[str]) -> str:
    """ "R is male" or "R is T's aunt"."""
    if st[0] == "gender":
        return f"{st[1]} is {'male' if st[2] == 'm' else 'female'}"
    return f"{st[1]} is {st[2]}'s {st[3].lower()}"


def _holds(models: list[dict], st: list[str], keys: dict) -> set[bool]:
    """Whether a statement holds in each model ({True}: definitely true)."""
    if st[0] == "gender":
        return {w["gender"][st[1]] == st[2] for w in models}
    key = keys.get((st[1], st[2]))
    return {key is not None and _term(key, w["gender"][st[1]]) == st[3] for w in models}


def _possible_gender(p: dict) -> set[str]:
    """The gender solver: the relation word (or "Cannot be determined"), or the options true in every model."""
    models = _models(p["facts"])
    if not models:
        return set()
    q = p["question"]
    if q[0] == "true":
        keys = {(s[1], s[2]): _rel_key(models[0], s[2], s[1]) for s in p["options"] if s[0] == "rel"}
        return {_statement_text(s) for s in p["options"] if _holds(models, s, keys) == {True}}
    terms = _terms(models, q[2], q[1])
    if UNNAMED in terms:
        return set()
    return terms if len(terms) == 1 else {CBD}


def _render_gender(p: dict) -> str:
    """The gender question text."""
    facts = " ".join(_fact_text(f, s) for f, s in zip(p["facts"], p["styles"]))
    q = p["question"]
    ask = TRUE_ASK[p["ask"]] if q[0] == "true" else ASK[p["ask"]].format(x=q[1], y=q[2])
    return f"{GENDER_INTROS[p['intro']]}{facts} {ask}"


def _gender_target(p: dict, answer: str) -> tuple[str, str | None]:
    """(person whose relation or gender the answer rests on, the person it is relative to or None)."""
    q = p["question"]
    if q[0] == "relation":
        return q[1], q[2]
    st = next(s for s in p["options"] if _statement_text(s) == answer)
    return st[1], (st[2] if st[0] == "rel" else None)


def _explain_gender(p: dict, answer: str) -> str:
    """The links from one person to the other, then how the gender was inferred or why it stays open."""
    models = _models(p["facts"])
    proven = _proven_genders(models)
    x, y = _gender_target(p, answer)
    lines = _path_lines(p["facts"], models[0], proven, y, x)[0] if y else []
    lines += _gender_lines(p["facts"], models[0], proven, x)[0]
    if answer == CBD:
        key = _rel_key(models[0], y, x)
        lines.append(f"So {x} may be {y}'s {_term(key, 'm').lower()} or {_term(key, 'f').lower()}: "
                     "cannot be determined.")
    elif p["question"][0] == "relation":
        lines.append(f"So {x} is {y}'s {answer.lower()}.")
    else:
        lines.append(f"So '{answer}' is definitely true; no other option holds in every case.")
    return " ".join(lines)


def _work_gender(p: dict) -> dict:
    """Links chained and derived, gender inferences, one refutation per wrong option; 2^u genders x vocabulary."""
    models = _models(p["facts"])
    answer = next(iter(_possible_gender(p)), None)
    if not models or answer is None:
        return {"steps": 0, "hops": 0, "log2_space": 0.0}
    proven = _proven_genders(models)
    x, y = _gender_target(p, answer)
    hops, derived = _path_lines(p["facts"], models[0], proven, y, x)[1:] if y else (0, 0)
    inferred = _gender_lines(p["facts"], models[0], proven, x)[1]
    unknown = len(models[0]["gender"]) - len(_stated_genders(p["facts"]) or {})
    true_form = p["question"][0] == "true"
    vocab = 4 if true_form else VOCAB + 1  # the options, or every word plus CBD
    return {"steps": hops + derived + inferred + 3 * true_form, "hops": hops, "derived": derived, "inferred": inferred,
            "log2_space": round(math.log2(vocab) + unknown, 3)}


def _link_fact(tree: dict, u: str, v: str, subject: str, neutral: bool) -> list[str]:
    """The fact for the hidden link u-v said about subject, gendered or not."""
    lab = next(lab for lab, w in fam._links(tree, u) if w == v)
    fact = fam._fact(tree, lab, u, v, subject)
    return [NEUTRAL_OF[fact[0]], fact[1], fact[2]] if neutral else fact


def _infer_facts(rng: random.Random, tree: dict, x: str, level: int) -> list[list[str]]:
    """Facts that fix x's gender only through x's spouse: stated outright, as a co-parent, or via a third person."""
    s = tree["spouse"][x]
    kids = [c for c in tree["gender"] if x in (tree["father"][c], tree["mother"][c])]
    others = [(lab, b) for lab, b in fam._links(tree, s) if b != x and lab != "C"]
    ways = {1: ["direct"], 2: ["direct", "coparent", "via"], 3: ["coparent", "via"]}[level]
    way = rng.choice([w for w in ways if (w != "coparent" or kids) and (w != "via" or others)] or ["direct"])
    if way == "direct":
        return [fam._fact(tree, "H", x, s, s)]
    if way == "coparent":
        k = rng.choice(kids)
        return [_link_fact(tree, x, k, x, True), _link_fact(tree, s, k, s, False)]
    lab, b = rng.choice(others)
    return [["spouse", x, s], fam._fact(tree, lab, s, b, s)]


def _build_gender(rng: random.Random, names: list[tuple[str, str]], level: int, stats: dict) -> dict | None:
    """One proven gender-inference puzzle, or None with the reason counted."""
    tree = fam._tree(rng, names, GENS[level])
    people = sorted(tree["gender"])
    cbd = rng.random() < CBD_SHARE
    by_key: dict[str, list[tuple[str, str]]] = {}
    for a, b in itertools.permutations(people, 2):
        k = fam.true_relation(tree, a, b)
        if k in GENDER_KEYS[level] and (cbd or a in tree["spouse"]):  # a gender is inferable only via a spouse
            by_key.setdefault(k, []).append((a, b))
    if not by_key:
        return _reject(stats, "no_target")
    x, y = rng.choice(by_key[rng.choice(sorted(by_key))])
    facts = _compose_facts(rng, tree, x, y, level, cbd)
    if level >= 2:
        rng.shuffle(facts)
    order = list(dict.fromkeys(p for f in facts for p in f[1:]))
    letter = _rename(order, rng)
    facts = [[w, letter[a], letter[b]] for w, a, b in facts]
    p = {"kind": "family_gender", "facts": facts, "styles": [rng.randrange(3) for _ in facts],
         "intro": rng.randrange(len(GENDER_INTROS))}
    if rng.random() < TRUE_SHARE[level]:
        return _finish_true(rng, tree, p, {v: k for k, v in letter.items()}, stats)
    p.update(question=["relation", letter[x], letter[y]], ask=rng.randrange(len(ASK)))
    return _finish_relation(rng, tree, p, x, y, stats)


def _compose_facts(rng: random.Random, tree: dict, x: str, y: str, level: int, cbd: bool) -> list[list[str]]:
    """Path facts from y to x, then gender-fixing facts (unless x's gender is to stay open), then side facts."""
    quiet = {x, tree["spouse"].get(x)} if cbd else {x}  # people no gendered word may be said of
    facts, u = [], y
    for _, v in fam._path(tree, y, x):
        subject = rng.choice((u, v))
        facts.append(_link_fact(tree, u, v, subject, subject in quiet or rng.random() < NEUTRAL_SHARE[level]))
        u = v
    if not cbd:
        extra = _infer_facts(rng, tree, x, level)
        told = {frozenset(f[1:]) for f in extra}
        facts = [f for f in facts if frozenset(f[1:]) not in told] + extra  # no pair is told twice
    return facts + _side_facts(rng, tree, facts, quiet, level)


def _side_facts(rng: random.Random, tree: dict, facts: list[list[str]], quiet: set, level: int) -> list[list[str]]:
    """True facts the answer does not need (noise), linking a mentioned person to someone."""
    out: list[list[str]] = []
    known = {frozenset(f[1:]) for f in facts}
    mentioned = sorted({p for f in facts for p in f[1:]})
    for _ in range(NOISE[level]):
        a = rng.choice(mentioned)
        fresh = [b for _, b in fam._links(tree, a) if frozenset((a, b)) not in known]
        if fresh:
            b = rng.choice(sorted(fresh))
            subject = rng.choice((a, b))
            out.append(_link_fact(tree, a, b, subject, subject in quiet or rng.random() < NEUTRAL_SHARE[level]))
            known.add(frozenset((a, b)))
    return out


def _finish_relation(rng: random.Random, tree: dict, p: dict, x: str, y: str, stats: dict) -> dict | None:
    """A relation question: the inferred word, or "Cannot be determined" with both gendered words as traps."""
    key = fam.true_relation(tree, x, y)
    proven = possible_answers(p)
    if proven == {CBD}:
        models = _models(p["facts"])
        if _rel_key(models[0], p["question"][2], p["question"][1]) != key:
            return _reject(stats, "solver_disagrees")
        distractors = [_term(key, "m"), _term(key, "f")] + _near_terms(key, tree["gender"][x], rng,
                                                                        {_term(key, "m"), _term(key, "f")})[:1]
        return _accept(p, CBD, distractors, stats)
    truth = _term(key, tree["gender"][x])
    # the opposite-gender word is the trap this kind tests: the solver proves it wrong through the inferred gender
    distractors = [CBD, _term(key, OPP[tree["gender"][x]])] + _near_terms(key, tree["gender"][x], rng, {truth})[:1]
    return _check(p, truth, distractors, stats)


def _candidate_statements(models: list[dict], people: list[str]) -> tuple[list[list[str]], dict]:
    """Every gender and named-relation statement about the mentioned people, with the relation keys."""
    keys = {(a, b): _rel_key(models[0], b, a) for a, b in itertools.permutations(people, 2)}
    out = [["gender", a, g] for a in people for g in "mf"]
    for (a, b), key in keys.items():
        if key:
            out += [["rel", a, b, t] for t in dict.fromkeys(_term(key, g) for g in "mf")]
    return out, keys


def _finish_true(rng: random.Random, tree: dict, p: dict, name: dict, stats: dict) -> dict | None:
    """A which-is-definitely-true question: one inferred statement true in every model, three that are not."""
    models = _models(p["facts"])
    if not models:
        return _reject(stats, "contradiction")
    people = list(dict.fromkeys(a for f in p["facts"] for a in f[1:]))
    stated, said = _stated_genders(p["facts"]) or {}, {frozenset(f[1:]) for f in p["facts"]}
    cands, keys = _candidate_statements(models, people)
    status = {i: _holds(models, st, keys) for i, st in enumerate(cands)}
    sure = [st for i, st in enumerate(cands) if status[i] == {True} and st[1] not in stated
            and (st[0] == "gender" or frozenset(st[1:3]) not in said)]
    if not sure:
        return _reject(stats, "nothing_inferred")
    answer = rng.choice(sure)
    traps = [st for i, st in enumerate(cands) if status[i] == {True, False}]  # possible, never forced
    wrong = [st for i, st in enumerate(cands) if status[i] == {False} and st[1] == answer[1]]
    rng.shuffle(traps)
    rng.shuffle(wrong)
    picked = traps[:2] + wrong
    distractors = list(dict.fromkeys(_statement_text(s) for s in picked))[:3]
    options = [answer] + [s for s in picked if _statement_text(s) in distractors][:3]
    rng.shuffle(options)
    p.update(question=["true"], options=options, ask=rng.randrange(len(TRUE_ASK)))
    if not _tree_agrees(tree, answer, name):
        return _reject(stats, "solver_disagrees")
    return _check(p, _statement_text(answer), distractors, stats)


def _tree_agrees(tree: dict, st: list[str], name: dict) -> bool:
    """Whether the hidden tree makes a statement true (a gender, or a relation by common ancestors)."""
    a = name[st[1]]
    if st[0] == "gender":
        return tree["gender"][a] == st[2]
    key = fam.true_relation(tree, a, name[st[2]])
    return key is not None and _term(key, tree["gender"][a]) == st[3]


# ---- the module interface -----------------------------------------------------------------------------------

BUILDERS = {"family_pointing": _build_pointing, "family_coded": _build_coded, "family_gender": _build_gender}


def build(rng: random.Random, names: list[tuple[str, str]], *, kind: str, level: int, stats: dict) -> dict | None:
    """One proven puzzle {"puzzle", "answer", "distractors"} of `kind` at `level`, or None (stats[reason] += 1)."""
    if kind not in BUILDERS or level not in (1, 2, 3):
        raise ValueError(f"unknown kind/level {kind!r}/{level!r}; kinds are {KINDS}, levels 1-3")
    return BUILDERS[kind](rng, names, level, stats)


def render(puzzle: dict) -> str:
    """The question text, rendered only from the puzzle dict."""
    return {"family_pointing": _render_pointing, "family_coded": _render_coded,
            "family_gender": _render_gender}[puzzle["kind"]](puzzle)


def possible_answers(puzzle: dict) -> set[str]:
    """Every answer the stated text allows (one element when the puzzle is sound)."""
    return {"family_pointing": _possible_pointing, "family_coded": _possible_coded,
            "family_gender": _possible_gender}[puzzle["kind"]](puzzle)


def relation_words(puzzle: dict) -> set[str]:
    """Every relation word some reading of a relation question allows (before "Cannot be determined" sums it up)."""
    q = puzzle["question"]
    if puzzle["kind"] == "family_pointing":
        return _possible_pointing(puzzle)
    if q[0] != "relation":
        raise ValueError(f"{puzzle['kind']} {q[0]!r} questions have options, not relation words")
    facts = _expr_facts(puzzle["codes"], puzzle["expr"]) if puzzle["kind"] == "family_coded" else puzzle["facts"]
    return _terms(_models(facts), q[2], q[1])


def explain(puzzle: dict, answer: str) -> str:
    """The solver's deduction in a few sentences (under 100 words)."""
    return {"family_pointing": _explain_pointing, "family_coded": _explain_coded,
            "family_gender": _explain_gender}[puzzle["kind"]](puzzle, answer)


def work(puzzle: dict) -> dict:
    """The solver's work: steps, hops and log2_space (defined in the module docstring), plus per-kind counts."""
    return {"family_pointing": _work_pointing, "family_coded": _work_coded,
            "family_gender": _work_gender}[puzzle["kind"]](puzzle)
