"""Named facts ("A is B's father", "A is the child of B"), as the coded and gender families state them.

gender_models closes the facts (family.close) once for each assignment of the genders no word states; a relation
is read off a closed world by its shortest paths (rel_key, relation_terms), and path_lines words those paths,
each link stated or derived. Also the letters the hidden tree's people are renamed to.
"""

from __future__ import annotations

import itertools
import random

from helpers.puzzles.kinship import tree as fam
from helpers.puzzles.kinship.said import Said
from helpers.puzzles.kinship.words import INV, UNNAMED, key_of, term_for

NEUTRAL = {"parent": ("father", "mother"), "child": ("son", "daughter"), "sibling": ("brother", "sister"),
           "spouse": ("husband", "wife")}
NEUTRAL_OF = {w: n for n, ws in NEUTRAL.items() for w in ws}
KIND_OF = fam.FACT_KINDS
LETTERS = "ABCDEFGHJKLMNRSTUVWXYZ"  # no I/O (read as digits) and no P/Q (the code definitions' placeholders)


def _gendered(word: str, g: str) -> str:
    """The gendered form of a fact word for a person of gender g ("child" -> "son")."""
    return NEUTRAL[word][g == "f"] if word in NEUTRAL else word


def stated_genders(facts: list[list[str]]) -> dict[str, str] | None:
    """Genders the gendered words say outright; None when a person is called both."""
    fixed: dict[str, str] = {}
    for word, a, _ in facts:
        if word not in NEUTRAL and fixed.setdefault(a, fam.REL_WORDS[word][1]) != fam.REL_WORDS[word][1]:
            return None
    return fixed


def gender_models(facts: list[list[str]]) -> list[dict]:
    """Every closed world (family.close) for each assignment of the unstated genders that keeps couples mixed."""
    fixed = stated_genders(facts)
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


def rel_key(world: dict, y: str, x: str) -> str | None:
    """X's relation key to Y in a closed world (the links never depend on gender, so one world serves all)."""
    if x not in world["people"] or y not in world["people"]:
        return None
    return key_of({"".join(lab for lab, _ in path) for path in fam.paths(world, y, x)} if x != y else {""})


def relation_terms(models: list[dict], y: str, x: str) -> set[str]:
    """The relation words naming x for y across the models (UNNAMED when no single key)."""
    if not models:
        return set()
    key = rel_key(models[0], y, x)
    return {term_for(key, w["gender"][x]) for w in models} if key else {UNNAMED}


def _edge_word(label: str, g: str | None) -> str:
    """The word for a link to a person of gender g (None: the neutral word)."""
    return fam.EDGE_WORDS[label][{"m": 0, "f": 1}.get(g or "", 2)]


def proven_genders(models: list[dict]) -> dict[str, str]:
    """The people whose gender every model agrees on."""
    out = {}
    for p, g in models[0]["gender"].items():
        if all(w["gender"][p] == g for w in models):
            out[p] = g
    return out


def gender_uses(facts: list[list[str]], world: dict, p: str) -> tuple[int, ...]:
    """The facts that fix p's gender: a gendered word said of p, else the marriage and the spouse's word."""
    if own := fam.said_of(facts, p):
        return own
    return tuple(i for s in sorted(world["spouse"][p])
                 for i in fam.link_uses(facts, world, "H", p, s) + fam.said_of(facts, s))


def path_said(facts: list[list[str]], world: dict, proven: dict, y: str, x: str) -> tuple[list[Said], int]:
    """The chain of links from y to x as steps (each citing the facts that prove its link and its word's gender),
    with how many links were derived, not stated."""
    stated = {(KIND_OF[w], b, a) for w, a, b in facts} | {(INV[KIND_OF[w]], a, b) for w, a, b in facts}
    steps, u, derived = [], y, 0
    for label, v in fam.paths(world, y, x)[0] if x != y else []:
        reason = "" if (label, u, v) in stated else fam.link_reason(world, label, u, v)
        derived += bool(reason)
        word = _edge_word(label, proven.get(v))
        uses = fam.link_uses(facts, world, label, u, v) + (gender_uses(facts, world, v) if v in proven else ())
        steps.append(Said(f"{u}'s {word} is {v}{reason}.", (("rel", v, u, word),), tuple(sorted(set(uses)))))
        u = v
    return steps, derived


def path_lines(facts: list[list[str]], world: dict, proven: dict, y: str, x: str) -> tuple[list[str], int, int]:
    """The chain of links from y to x as sentences, with the hop count and how many were derived, not stated."""
    steps, derived = path_said(facts, world, proven, y, x)
    return [s.text for s in steps], len(steps), derived


def rename(people: list[str], rng: random.Random) -> dict[str, str]:
    """Letters for the hidden tree's people, A-like in order of first mention."""
    return dict(zip(people, sorted(rng.sample(LETTERS, len(people)))))
