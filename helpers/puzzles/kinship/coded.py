"""The "family_coded" kind: "P # Q means P is the father of Q; ..." then "If A # B @ C, how is A related to C?".

An expression "A # B @ C" decodes to the named facts A # B and B @ C (kinship.facts solves them), plus at level 3
perhaps a fact in words ("If A # B @ C and D is C's wife, ..."); a which-question asks which of four expressions over
the same people means a given relation (the others mean other relations). People are letters, or their names where
no gender is left to infer. The generator walks the hidden tree.
"""

from __future__ import annotations

import itertools
import math
import random

from helpers.puzzles import blind
from helpers.puzzles.kinship import tree as fam
from helpers.puzzles.kinship.facts import (NEUTRAL_OF, gender_models, path_lines, path_said, proven_genders,
                                           relation_terms, rename)
from helpers.puzzles.kinship.said import Said, joined
from helpers.puzzles.kinship.words import GENS, INV, UNNAMED, VOCAB, Kind, check, near_terms, reject, term_for

DIRECT = ("parent", "child", "sibling", "spouse")
SYMBOLS = ("#", "@", "$", "%", "&", "*", "+", "-", "!", "^")
CODE_STYLES = ("P {s} Q means P is the {w} of Q", "P {s} Q means P is Q's {w}", "P {s} Q: P is Q's {w}")
CODE_INTROS = ("", "In a code, ", "Suppose ")
CODED_ASK = ("If {e}, how is {a} related to {b}?", "Given {e}, what is {a} to {b}?",
             "If {e}, what relation is {a} to {b}?")
WHICH_ASK = ("Which expression means {a} is {b}'s {t}?", "Which expression shows that {a} is the {t} of {b}?")
CODE_COUNT = {1: 4, 2: 5, 3: 6}
CODE_LINKS = {1: (2,), 2: (3,), 3: (4, 5)}  # links of the expression (with the stated fact, if any)
MIXED_SHARE = {1: 0.0, 2: 0.0, 3: 0.5}  # "If A # B @ C and D is C's wife, ...": the last link stated in words
NAMED_SHARE = 0.7  # people named (Ravi, Meena) rather than lettered, where no gender is left to infer
WHICH_SHARE = {1: 0.0, 2: 0.3, 3: 0.4}
# the question forms per level with their shares: "which expression means ...?" or "what relation is A to B?"
FORM_SHARES = {lvl: (("expression", s), ("relation", 1 - s)) for lvl, s in WHICH_SHARE.items()}
# How often a relation key should be the shortest or the longest option (blind.balanced targets) for each level's keys
# to be so 1 time in 4 overall: "Son" is always the shortest male word, "Uncle" never the longest, and level 1 asks
# such one-link words often (16% of its keys cannot help being the shortest), so the other keys make up for them.
# Each value solves: the mean over ~1,000-1,500 built keys of clamp(t, the rates that key's vocabulary allows) = 1/4.
# Without them level 1 gave the shortest rule 35% and the longest 17% (800 puzzles).
LENGTH_TARGETS = {1: {"shortest": 0.127, "longest": 0.319}, 2: {"shortest": 0.206, "longest": 0.304},
                  3: {"shortest": 0.299, "longest": 0.257}}
WHICH_POOL = 12  # valid wrong expressions to choose three from: 220 triples, enough to balance the key's ranks


def expr_text(tokens: list[str]) -> str:
    """ "A # B @ C"."""
    return " ".join(tokens)


def expr_facts(codes: list[list[str]], tokens: list[str]) -> list[list[str]]:
    """The facts an expression encodes: "A # B @ C" is A # B and B @ C."""
    meaning = dict((s, w) for s, w in codes)
    return [[meaning[tokens[i]], tokens[i - 1], tokens[i + 1]] for i in range(1, len(tokens), 2)]


def coded_facts(p: dict) -> list[list[str]]:
    """A relation question's facts: its expression decoded, then the facts stated in words."""
    return expr_facts(p["codes"], p["expr"]) + p.get("stated", [])


def _stated_text(p: dict) -> str:
    """ " and D is C's wife" for each fact stated beside the expression."""
    return "".join(f" and {a} is {b}'s {w}" for w, a, b in p.get("stated", []))


def possible_coded(p: dict) -> set[str]:
    """The coded solver: the relation words the decoded facts allow, or the options that surely mean the target."""
    q = p["question"]
    if q[0] == "relation":
        return relation_terms(gender_models(coded_facts(p)), q[2], q[1])
    return {expr_text(o) for o in p["options"]
            if relation_terms(gender_models(expr_facts(p["codes"], o)), q[2], q[1]) == {q[3]}}


def render_coded(p: dict) -> str:
    """The coded question text."""
    style = CODE_STYLES[p["style"]]
    codes = "; ".join(style.format(s=s, w=w) for s, w in p["codes"]) + "."
    q = p["question"]
    if q[0] == "relation":
        ask = CODED_ASK[p["ask"]].format(e=expr_text(p["expr"]) + _stated_text(p), a=q[1], b=q[2])
    else:
        ask = WHICH_ASK[p["ask"] % len(WHICH_ASK)].format(a=q[1], b=q[2], t=q[3].lower())
    return f"{CODE_INTROS[p['intro']]}{codes} {ask}"


def coded_solution(p: dict, answer: str) -> tuple[list[list[str]], list[str]]:
    """The facts behind the answer (the chosen expression's for a which-question) and the pair asked about."""
    q = p["question"]
    if q[0] == "relation":
        return coded_facts(p), [q[1], q[2]]
    return expr_facts(p["codes"], answer.split()), [q[1], q[2]]


def explain_coded(p: dict, answer: str) -> str:
    """Decode each symbol, follow the links from the second person to the first, name the relation."""
    return joined(coded_steps(p, answer))


def coded_steps(p: dict, answer: str) -> list[Said]:
    """The explanation as steps: the decoding, each link from the second person to the first, the relation (citing
    the links' steps), and for a which-question what the other options give."""
    facts, (a, b) = coded_solution(p, answer)
    models = gender_models(facts)
    relation = p["question"][0] == "relation"
    symbols = p["expr"][1::2] if relation else answer.split()[1::2]
    term = (answer if relation else p["question"][3]).lower()
    links = path_said(facts, models[0], proven_genders(models), b, a)[0]
    steps = [_decode_said(p["codes"], symbols, facts)] + links
    steps.append(Said(f"So {a} is {b}'s {term}.", (("rel", a, b, term),), answer=answer if relation else None,
                      after=tuple(range(1, 1 + len(links)))))
    return steps + ([] if relation else [_others_said(p, answer, a, b)])


def _decode_said(codes: list[list[str]], symbols: list[str], facts: list[list[str]]) -> Said:
    """ "Decode: A is B's father; B is C's sister.": each symbol's meaning and the facts it gives."""
    meaning = dict((s, w) for s, w in codes)
    claims = tuple(("code", s, meaning[s]) for s in dict.fromkeys(symbols))
    claims += tuple(("rel", x, y, w) for w, x, y in facts)
    decoded = "; ".join(f"{x} is {y}'s {w}" for w, x, y in facts)
    return Said(f"Decode: {decoded}.", claims, tuple(range(len(facts))))


def _others_said(p: dict, answer: str, a: str, b: str) -> Said:
    """ "The other options give: aunt, cousin, uncle.": what each other expression means, one word per option in the
    options' order (the question's A-D; catalogue.make_puzzle puts them so), concluding the chosen one."""
    others = {expr_text(o): sorted(t.lower() for t in relation_terms(gender_models(expr_facts(p["codes"], o)), b, a))
              for o in p["options"] if expr_text(o) != answer}
    claims = tuple(("option", e, t) for e, ts in others.items() for t in ts)
    words = ", ".join(" or ".join(ts) for ts in others.values())
    return Said(f"The other options give: {words}.", claims, answer=answer)


def work_coded(p: dict) -> dict:
    """Symbols decoded and links derived (plus one refutation per wrong option of a which-question)."""
    answer = next(iter(possible_coded(p)), None)
    if answer is None:
        return {"steps": 0, "hops": 0, "log2_space": 0.0}
    facts, (a, b) = coded_solution(p, answer)
    models = gender_models(facts)
    _, hops, derived = path_lines(facts, models[0], proven_genders(models), b, a)
    which = p["question"][0] == "which"
    bits = math.log2(4 if which else VOCAB) + math.log2(len(p["codes"]))
    return {"steps": len(facts) + derived + 3 * which, "hops": hops, "derived": derived, "decoded": len(facts),
            "log2_space": round(bits, 3)}


def _word_of(tree: dict, u: str, v: str) -> str:
    """The word for u as v's relative ("father" when u is v's father)."""
    lab = next(lab for lab, w in fam.tree_links(tree, u) if w == v)
    return fam.EDGE_WORDS[INV[lab]][tree["gender"][u] == "f"]


def _coded_path(rng: random.Random, tree: dict, n: int, which: bool) -> list[str] | None:
    """A simple walk of n links whose ends the hidden tree relates by one named word (not a direct one for which)."""
    people = sorted(tree["gender"])
    for _ in range(20):  # ~1 in 3 random walks ends on a nameable relation
        path = [rng.choice(people)]
        while len(path) <= n:
            nxt = sorted({v for _, v in fam.tree_links(tree, path[-1]) if v not in path})
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


def build_coded(rng: random.Random, names: list[tuple[str, str]], level: int, stats: dict,
                form: str | None = None) -> dict | None:
    """One proven coded-relation puzzle, or None with the reason counted; the form drawn by FORM_SHARES unless given."""
    tree = fam.random_tree(rng, names, GENS[level])
    which = fam.asks(form, "expression", WHICH_SHARE[level], rng)
    path = _coded_path(rng, tree, (level if which else rng.choice(CODE_LINKS[level])), which)
    if path is None:
        return reject(stats, "no_walk")
    words = [_word_of(tree, u, v) for u, v in zip(path, path[1:])]
    if level == 3 and not which and rng.random() < 0.5:  # a genderless middle link: its gender never matters
        j = rng.randrange(1, len(words))
        words[j] = NEUTRAL_OF[words[j]]
    a, b = path[0], path[-1]
    if not which and level == 3 and words[-1] in ("husband", "wife") and rng.random() < 0.5:
        a, b = b, a  # ask the reverse: the last person's gender follows only from the partner's word
    mixed = not which and rng.random() < MIXED_SHARE[level]
    codes = _codes(rng, words[:-1] if mixed else words, level)
    # a name shows its person's gender, so people are lettered where the reader must infer one (the reversed question);
    # a genderless middle link may name its person: that gender never matters. Which-questions repeat every person in
    # four expressions: named, they reach 130 tokens (SmolLM2), so they keep letters
    named = not which and (a, b) == (path[0], path[-1]) and rng.random() < NAMED_SHARE
    letter = {v: v for v in path} if named else rename(path, rng)
    sym = {w: s for s, w in codes}
    linked = list(zip(words, path[1:]))[:-1] if mixed else list(zip(words, path[1:]))
    tokens = [letter[path[0]]] + [t for w, v in linked for t in (sym[w], letter[v])]
    p = {"kind": "family_coded", "codes": codes, "style": rng.randrange(len(CODE_STYLES)),
         "intro": rng.randrange(len(CODE_INTROS)), "ask": rng.randrange(len(CODED_ASK))}
    if mixed:  # the last link in words, said of either of its two people
        u, v = path[-2], path[-1]
        lab = next(lab for lab, w in fam.tree_links(tree, u) if w == v)
        w, x, y = fam.tree_fact(tree, lab, u, v, rng.choice((u, v)))
        p["stated"] = [[w, letter[x], letter[y]]]
    if which:
        return _finish_which(rng, tree, p, path, tokens, stats)
    p.update(expr=tokens, question=["relation", letter[a], letter[b]])
    truth = term_for(fam.true_relation(tree, a, b), tree["gender"][a])
    distractors = near_terms(fam.true_relation(tree, a, b), tree["gender"][a], rng, {truth}, kind="family_coded",
                             level=level, target=LENGTH_TARGETS[level])
    return check(p, truth, distractors, stats, CODED)



def _wrong_options(rng: random.Random, codes: list[list[str]], tokens: list[str], target: str) -> list[list[str]]:
    """Three expressions over the same people that the solver proves name another relation: valid codes of other
    plausible relations (any symbols of the table, not edits of the key), picked by blind.balanced so that neither a
    position-wise majority nor similarity finds the key. Each one's first link leaves the asked person the key's
    gender: one that made them the other gender would be ruled out by its first symbol alone."""
    a, b = tokens[0], tokens[-1]
    gender, want = {s: blind.word_gender(w) for s, w in codes}, blind.word_gender(target)
    symbols = [s for s, _ in codes]
    seqs = [seq for seq in itertools.product(symbols, repeat=len(tokens) // 2) if gender[seq[0]] in (None, want)]
    rng.shuffle(seqs)
    valid: list[str] = []
    for seq in seqs:
        cand = tokens[:]
        cand[1::2] = seq
        terms = relation_terms(gender_models(expr_facts(codes, cand)), b, a)
        if len(terms) == 1 and UNNAMED not in terms and terms != {target}:
            valid.append(expr_text(cand))
            if len(valid) >= WHICH_POOL:
                break
    return [t.split() for t in blind.balanced(expr_text(tokens), valid, rng)]


def _finish_which(rng: random.Random, tree: dict, p: dict, path: list[str], tokens: list[str],
                  stats: dict) -> dict | None:
    """A which-expression question: the hidden tree's expression and three the solver proves mean otherwise."""
    key = fam.true_relation(tree, path[0], path[-1])
    target = term_for(key, tree["gender"][path[0]])
    a, b = tokens[0], tokens[-1]
    picked = _wrong_options(rng, p["codes"], tokens, target)
    if len(picked) < 3:
        return reject(stats, "few_distractors")
    options = picked + [tokens]
    rng.shuffle(options)
    p.update(question=["which", a, b, target], options=options, ask=rng.randrange(len(WHICH_ASK)))
    return check(p, expr_text(tokens), [expr_text(o) for o in picked], stats, CODED)


CODED = Kind(render_coded, possible_coded, explain_coded)
