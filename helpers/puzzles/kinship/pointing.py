"""The "family_pointing" kind: 'Pointing to a photograph, Ravi said, "He is the son of my mother's only brother."'

The reading engine (Reading: every "already mentioned or someone new" and "either side" choice a chain of
words allows, then every gender assignment), the text and explanation, and the generator that walks the
hidden tree word by word (see kinship.kinds's docstring for the conventions).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable

from helpers.puzzles.kinship import tree as fam
from helpers.puzzles.kinship.words import (ASK, GENS, INV, OPP, SELF, UNNAMED, VOCAB, Kind, accept, key_of, near_terms,
                                           reject, term_for)
from helpers.puzzles.kinship.said import Said, joined


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
    ('Pointing to a picture on the wall, {S} said, "{stmt}"', True, False, False, "picture"),
    ('Meeting {T} at a wedding, {S} said, "{stmt}"', False, False, True, ""),
    ('Pointing to a picture on the wall, {S} told {sp} neighbour, "{stmt}"', True, True, False, "picture"),
)
# How often a key should be the shortest or the longest option (blind.balanced targets) for each level's keys to be so
# 1 time in 4 overall: "Son" is always the shortest male word and "Aunt", "Uncle" never the longest, and the levels
# ask such one-link words often (10-14% of keys at levels 2-3 cannot help being the shortest), so the other keys make
# up for them. Each value solves: the mean over 1,500 built keys of clamp(t, the rates that key's vocabulary allows)
# = 1/4. Without them the shortest rule got 30% and the longest 21% over the three levels (2,400 puzzles).
LENGTH_TARGETS = {1: {"shortest": 0.228, "longest": 0.280}, 2: {"shortest": 0.174, "longest": 0.325},
                  3: {"shortest": 0.156, "longest": 0.266}}
WITH_PRONOUN = {0: 2, 1: 7, 3: 5, 4: 6, 8: 10}  # the same scene with the speaker's gender said ("his friend")


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


def _name(r: Reading, y: int, x: int) -> str | None:
    """The relation key of x to y in a reading, or None when no single word names it."""
    return key_of(_shortest_labels(lambda u: _edges(r, u), y, x))


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
    return term_for(key, g[who]) if key else UNNAMED


def possible_pointing(p: dict) -> set[str]:
    """Every answer some reading of the pointing text gives."""
    return answers_of(p, valid_readings(p))


def valid_readings(p: dict) -> list[tuple[Reading, list[str], int, int]]:
    """The readings of the text that pass every check: (reading, genders, pointed-at person, person asked about)."""
    return _valid(p)[0]


def answers_of(p: dict, good: list[tuple[Reading, list[str], int, int]]) -> set[str]:
    """Every answer the given readings give."""
    return {_pointing_answer(p, r, g, x, t) for r, g, x, t in good}


# ---- pointing: text ---------------------------------------------------------------------------------------

def _desc(chain: list, split: int) -> str:
    """ "the son of the only sister of my mother's husband": the first `split` words possessive, the rest "of"."""
    parts = [("only " if only else "") + w for w, only in chain]
    text = "my " + "'s ".join(parts[:split])
    for part in parts[split:]:
        text = f"the {part} of {text}"
    return text


def pointed_phrase(p: dict) -> str:
    """How the question names the pointed-at person: by name, or "the man in the portrait"."""
    _, photo, _, named, noun = OPENINGS[p["opening"]]
    if named:
        return p["target"]
    who = "man" if p["pronoun"] == "m" else "woman"
    return f"the {who} in the {noun}" if photo else f"the {who}"


def render_pointing(p: dict) -> str:
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
    x, s, q = pointed_phrase(p), p["speaker"], p["question"]
    if q[0] == "inverse":
        x, y = s, x
    else:
        y = s if q[0] == "to_speaker" else f"{s}'s {q[1]}"
    return f"{opening} {ASK[p['ask']].format(x=x, y=y)}"


def explain_pointing(p: dict, answer: str) -> str:
    """The chain resolved word by word, each person named for the speaker, then the answer."""
    return joined(pointing_steps(p, answer))


def pointing_steps(p: dict, answer: str) -> list[Said]:
    """The explanation as steps: each chain word whose person the text identifies, named for the speaker (a claim
    about chain word i), the pointed-at person's stated relative, then the answer."""
    good, _ = _valid(p)
    s = p["speaker"]
    owner, steps = s, []
    for i, (word, only) in enumerate(p["chain"]):
        phrase = f"{owner}'s {'only ' if only else ''}{word}"
        words = chain_words(p, i, good)
        who = words.pop() if len(words) == 1 else None
        label = who and _for_speaker(s, who)
        if i == 0 or label is None or label == f"{owner}'s {word}":
            owner = phrase if i == 0 else label or phrase
            continue
        steps.append(Said(f"{phrase} is {label}{_why(p, good[0][0], i)}.", (("chain", i, who),)))
        owner = s if who in (x.lower() for x in SELF) else label
    xp = pointed_phrase(p)
    if p["form"] == "rel":
        steps.append(Said(f"{owner} is {xp}'s {p['rel']}."))
    steps.append(Said(_conclusion(p, answer, xp), (("asked", answer),), answer=answer))
    first = steps[0].text
    return [steps[0]._replace(text=first[0].upper() + first[1:])] + steps[1:]


def chain_words(p: dict, i: int, good: list | None = None) -> set[str | None]:
    """What the valid readings make the person chain word i reaches, for the speaker: "aunt", "himself", or None
    where no single word names them."""
    good = _valid(p)[0] if good is None else good
    return {_who(r, g, r.trace[i][0]) for r, g, _, _ in good}


def _who(r: Reading, g: list[str], k: int) -> str | None:
    """A person of a reading as the speaker's relative ("aunt", "himself"), or None."""
    if k == 0:
        return SELF[g[0] == "f"].lower()
    key = _name(r, 0, k)
    return term_for(key, g[k]).lower() if key else None


def _for_speaker(s: str, word: str) -> str:
    """ "Ravi's aunt", or "Ravi himself"."""
    return f"{s} {word}" if word in (x.lower() for x in SELF) else f"{s}'s {word}"


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


def work_pointing(p: dict) -> dict:
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

def _truth(tree: dict, x: str, y: str) -> str | None:
    """X's relation key to Y in the hidden tree, by common ancestors (family.true_relation)."""
    return "self" if x == y else fam.true_relation(tree, x, y)


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
    links = [(lab, v) for lab, v in fam.tree_links(tree, end) if v not in seen
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
    proven = possible_pointing(p)
    if len(proven) > 1 and any(true_only):
        p = dict(p, chain=[[w, t] for (w, _), t in zip(p["chain"], true_only)])
        proven = possible_pointing(p)
    if len(proven) > 1 and p["opening"] in WITH_PRONOUN:
        p = dict(p, opening=WITH_PRONOUN[p["opening"]], speaker_gender=p["_sg"])
        proven = possible_pointing(p)
    if proven != {truth}:
        return "ambiguous" if len(proven) > 1 else "solver_disagrees" if proven else "no_reading"
    marked = [i for i, (_, o) in enumerate(p["chain"]) if o]
    rng.shuffle(marked)
    for i in marked:  # fewer claims only admit more readings, so each "only" kept is needed by the rest
        fewer = dict(p, chain=[[w, o and j != i] for j, (w, o) in enumerate(p["chain"])])
        if possible_pointing(fewer) == {truth}:
            p = fewer
    return p, sum(1 for _, o in p["chain"] if o)


FORM_SHARES = {lvl: (("relation", 1.0),) for lvl in (1, 2, 3)}  # one form: "how is the man related to X?"


def build_pointing(rng: random.Random, names: list[tuple[str, str]], level: int, stats: dict,
                   form: str | None = None) -> dict | None:
    """One proven pointing puzzle, or None with the reason counted (one form: relation)."""
    tree = fam.random_tree(rng, names, GENS[level])
    s = rng.choice(sorted(p for p in tree["gender"] if tree["father"][p]))
    walk = None
    for _ in range(5):  # a dead end (no fair next word) is retried on the same tree: trees cost more than walks
        walk = walk or _walk(rng, tree, s, level)
    if walk is None:
        return reject(stats, "no_walk")
    seen = [s] + [v for _, _, v in walk]
    form = "rel" if rng.random() < FORM_B[level] else "is"
    rel, x = (_form_b(rng, tree, walk, seen) or (None, None)) if form == "rel" else (None, walk[-1][2])
    if x is None:
        return reject(stats, "no_walk")
    q = _pick_question(rng, tree, s, level)
    key, g = _question_truth(tree, q, s, x)
    if key is None:
        return reject(stats, "unnamed")
    truth = term_for(key, g)
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
        return reject(stats, settled)
    p, needed = settled
    del p["_sg"]
    if level == 3 and needed == 0 and not any(w.startswith("great") for w, _ in p["chain"]):
        return reject(stats, "too_plain")  # level 3: "only" must decide, or a great-grandparent be reached
    if level == 2 and not any(w in INLAW for w, _ in p["chain"]) and p.get("rel") not in ("husband", "wife"):
        return reject(stats, "no_in_law")
    # only level 3 asks "Himself" (~4% of its keys)
    distractors = near_terms(key, g, rng, {truth}, kind="family_pointing", level=level, with_self=level == 3,
                             target=LENGTH_TARGETS[level])
    return accept(p, truth, distractors, stats, POINTING)


POINTING = Kind(render_pointing, possible_pointing, explain_pointing)
