"""The "family_gender" kind: facts partly without gender ("X is the child of Y"); the answer needs an inferred gender.

The answer is a relation word whose gender follows only through a spouse, "Cannot be determined" when no fact
fixes it, or the one statement of four that holds in every model (facts.gender_models). People a gendered word
names may keep their names; the others are letters. Level 3 states most links through a third person.
"""

from __future__ import annotations

import itertools
import math
import random

from helpers.puzzles import blind
from helpers.puzzles.kinship import key_shares, tree as fam
from helpers.puzzles.kinship.facts import (NEUTRAL, NEUTRAL_OF, gender_models, gender_uses, path_lines, path_said,
                                           proven_genders, rel_key, relation_terms, rename, stated_genders)
from helpers.puzzles.kinship.said import Said, joined
from helpers.puzzles.kinship.words import (ASK, GENS, NEAR, NEAR_WEIGHT, OPP, UNNAMED, VOCAB, Kind, accept, check,
                                           reject, term_for)

CBD = "Cannot be determined"
GENDER_KEYS = {1: ("uncle", "nephew", "grandparent", "grandchild", "parent-in-law", "sibling-in-law"),
               2: ("uncle", "nephew", "grandparent", "grandchild", "parent-in-law", "child-in-law",
                   "sibling-in-law", "great-grandparent"),
               3: ("uncle", "nephew", "great-grandparent", "great-grandchild", "great-uncle", "sibling-in-law",
                   "child-in-law", "parent-in-law")}
NEUTRAL_SHARE = {1: 0.3, 2: 0.45, 3: 0.6}  # chance a fact is worded without gender
NOISE = {1: 0, 2: 1, 3: 2}  # true side facts that the answer does not need
# chance a link of the asked chain is stated through a third person (tree.link_via: a sibling through a shared parent,
# a parent as the other parent's spouse): one more link to derive, and one more person whose gender may be open
SPLIT = {1: 0.0, 2: 0.15, 3: 0.7}
NAMED_SHARE = 0.7  # chance a person whose gender a word states is named (Ravi) rather than lettered
MAX_OPEN = 9  # people no gendered word names: the solver closes the facts once per assignment, 2^9 = 512 (~50 ms)
TRUE_SHARE = {1: 0.0, 2: 0.3, 3: 0.5}  # "which statement is definitely true?"
FORM_SHARES = {lvl: (("statement", s), ("relation", 1 - s)) for lvl, s in TRUE_SHARE.items()}
CBD_SHARE = 0.25  # "Cannot be determined" keys 1 relation question in 4, as often as any other option (was 0.3)
# A determined key's chance of being each blind rule's pick. CBD is always an option (the trap for a reader who infers
# no gender) and always the longest; the other two are the opposite-gender word (the trap this kind tests) or another
# relation's pair. A CBD key (1 in 4) comes with its own pair and is never the most similar nor the shortest, so a
# determined key is each of those rules' pick 1 time in 3: 1 in 4 overall. The undetermined rule bets on CBD, the key
# 1 time in 4 (CBD_SHARE, kept as often as the relation keys: key_shares.keep_chance).
DETERMINED_TARGET = {"most_similar": 1 / 3, "gender_pair": 1 / 3, "shortest": 1 / 3, "longest": 0.0,
                     "undetermined": 0.0}
TRUE_KEYS = 8  # possible keys of a which-is-true question whose reach sets its rates (each costs ~3 ms)
# none is a stated-facts intro (tree.INTROS): the reader tells the two families apart by it
GENDER_INTROS = ("", "Among some relatives: ", "Of a family's members: ")
TRUE_ASK = ("Which statement is definitely true?", "Which of the following must be true?",
            "Which is definitely true?")


def statement_text(st: list[str]) -> str:
    """ "R is male" or "R is T's aunt"."""
    if st[0] == "gender":
        return f"{st[1]} is {'male' if st[2] == 'm' else 'female'}"
    return f"{st[1]} is {st[2]}'s {st[3].lower()}"


def _holds(models: list[dict], st: list[str], keys: dict) -> set[bool]:
    """Whether a statement holds in each model ({True}: definitely true)."""
    if st[0] == "gender":
        return {w["gender"][st[1]] == st[2] for w in models}
    key = keys.get((st[1], st[2]))
    return {key is not None and term_for(key, w["gender"][st[1]]) == st[3] for w in models}


def possible_gender(p: dict) -> set[str]:
    """The gender solver: the relation word (or "Cannot be determined"), or the options true in every model."""
    models = gender_models(p["facts"])
    if not models:
        return set()
    q = p["question"]
    if q[0] == "true":
        keys = {(s[1], s[2]): rel_key(models[0], s[2], s[1]) for s in p["options"] if s[0] == "rel"}
        return {statement_text(s) for s in p["options"] if _holds(models, s, keys) == {True}}
    terms = relation_terms(models, q[2], q[1])
    if UNNAMED in terms:
        return set()
    return terms if len(terms) == 1 else {CBD}


def _fact_text(fact: list[str], style: int) -> str:
    """One stated fact in one of three wordings."""
    w, a, b = fact
    return (f"{a} is the {w} of {b}.", f"{a} is {b}'s {w}.", f"{b}'s {w} is {a}.")[style]


def render_gender(p: dict) -> str:
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
    st = next(s for s in p["options"] if statement_text(s) == answer)
    return st[1], (st[2] if st[0] == "rel" else None)


def _gender_said(facts: list[list[str]], world: dict, proven: dict, x: str) -> tuple[list[Said], int]:
    """Why x's gender is fixed (through the spouse) or open, with the inference steps it took."""
    fixed = stated_genders(facts) or {}
    if x in fixed:
        return [], 0
    spouse = sorted(world["spouse"][x])
    if x not in proven:
        tail = f" nor of {spouse[0]}, {x}'s spouse" if spouse else ""
        open_ = (("unforced", ("gender", x, "m")), ("unforced", ("gender", x, "f")))
        return [Said(f"No gendered word is said of {x}{tail}, so {x}'s gender is open.", open_)], 1
    s = spouse[0]
    sexes = {"m": "male", "f": "female"}
    said = next((f"{s} is {b}'s {w}" for w, a, b in facts if a == s and w not in NEUTRAL), f"{s} is {sexes[proven[s]]}")
    marry = world["why"].get(("H", x, s))
    why = f" ({marry})" if marry else ""
    uses = fam.link_uses(facts, world, "H", x, s) + gender_uses(facts, world, s)
    return [Said(f"{x} is married to {s}{why}; {said}, so {x} is {sexes[proven[x]]}.",
                 (("rel", s, x, "spouse"), ("gender", x, proven[x])), tuple(sorted(set(uses))))], 1 + bool(marry)


def _statement_claim(st: list[str]) -> tuple:
    """A which-is-true option as a claim: ("gender", x, g) or ("rel", x, y, word)."""
    return ("gender", st[1], st[2]) if st[0] == "gender" else ("rel", st[1], st[2], st[3].lower())


def option_claim(p: dict, answer: str) -> tuple:
    """The claim a which-is-true question's answer makes (the option whose words it is)."""
    return _statement_claim(next(st for st in p["options"] if statement_text(st) == answer))


def explain_gender(p: dict, answer: str) -> str:
    """The links from one person to the other, then how the gender was inferred or why it stays open."""
    return joined(gender_steps(p, answer))


def gender_steps(p: dict, answer: str) -> list[Said]:
    """The explanation as steps: the links from one person to the other (worded by the stated genders), the gender
    inferred or left open, the answer (citing the links' steps and the inferred gender's)."""
    models = gender_models(p["facts"])
    proven = proven_genders(models)
    x, y = _gender_target(p, answer)
    # the links word people by the genders the facts state: one inferred (x's, through the spouse) is shown after
    # them, so before it a link says "spouse", never "husband"
    shown = {who: g for who, g in proven.items() if who in (stated_genders(p["facts"]) or {})}
    steps = path_said(p["facts"], models[0], shown, y, x)[0] if y else []
    links = tuple(range(len(steps)))
    steps += _gender_said(p["facts"], models[0], proven, x)[0]
    grounds = links + tuple(i for i in range(len(links), len(steps)) if any(c[0] == "gender" for c in steps[i].claims))
    if answer == CBD:
        key = rel_key(models[0], y, x)
        steps.append(Said(f"So {x} may be {y}'s {term_for(key, 'm').lower()} or {term_for(key, 'f').lower()}: "
                          "cannot be determined.", (("kin", x, y, key),), answer=answer, after=links))
    elif p["question"][0] == "relation":
        steps.append(Said(f"So {x} is {y}'s {answer.lower()}.", (("rel", x, y, answer.lower()),), answer=answer,
                          after=grounds))
    else:
        claims = tuple(_statement_claim(st) if statement_text(st) == answer else ("unforced", _statement_claim(st))
                       for st in p["options"])
        steps.append(Said(f"So '{answer}' is definitely true; no other option holds in every case.", claims,
                          answer=answer, after=grounds))
    return steps


def work_gender(p: dict) -> dict:
    """Links chained and derived, gender inferences, one refutation per wrong option; 2^u genders x vocabulary."""
    models = gender_models(p["facts"])
    answer = next(iter(possible_gender(p)), None)
    if not models or answer is None:
        return {"steps": 0, "hops": 0, "log2_space": 0.0}
    proven = proven_genders(models)
    x, y = _gender_target(p, answer)
    hops, derived = path_lines(p["facts"], models[0], proven, y, x)[1:] if y else (0, 0)
    inferred = _gender_said(p["facts"], models[0], proven, x)[1]
    unknown = len(models[0]["gender"]) - len(stated_genders(p["facts"]) or {})
    true_form = p["question"][0] == "true"
    vocab = 4 if true_form else VOCAB + 1  # the options, or every word plus CBD
    return {"steps": hops + derived + inferred + 3 * true_form, "hops": hops, "derived": derived, "inferred": inferred,
            "log2_space": round(math.log2(vocab) + unknown, 3)}


def _link_fact(tree: dict, u: str, v: str, subject: str, neutral: bool) -> list[str]:
    """The fact for the hidden link u-v said about subject, gendered or not."""
    lab = next(lab for lab, w in fam.tree_links(tree, u) if w == v)
    fact = fam.tree_fact(tree, lab, u, v, subject)
    return [NEUTRAL_OF[fact[0]], fact[1], fact[2]] if neutral else fact


def _infer_facts(rng: random.Random, tree: dict, x: str, level: int) -> list[list[str]]:
    """Facts that fix x's gender only through x's spouse: stated outright, as a co-parent, or via a third person."""
    s = tree["spouse"][x]
    kids = [c for c in tree["gender"] if x in (tree["father"][c], tree["mother"][c])]
    others = [(lab, b) for lab, b in fam.tree_links(tree, s) if b != x and lab != "C"]
    ways = {1: ["direct"], 2: ["direct", "coparent", "via"], 3: ["coparent", "via"]}[level]
    way = rng.choice([w for w in ways if (w != "coparent" or kids) and (w != "via" or others)] or ["direct"])
    if way == "direct":
        return [fam.tree_fact(tree, "H", x, s, s)]
    if way == "coparent":
        k = rng.choice(kids)
        return [_link_fact(tree, x, k, x, True), _link_fact(tree, s, k, s, False)]
    lab, b = rng.choice(others)
    return [["spouse", x, s], fam.tree_fact(tree, lab, s, b, s)]


def build_gender(rng: random.Random, names: list[tuple[str, str]], level: int, stats: dict,
                 form: str | None = None) -> dict | None:
    """One proven gender-inference puzzle, or None with the reason counted; the form drawn by FORM_SHARES unless
    given."""
    tree = fam.random_tree(rng, names, GENS[level])
    people = sorted(tree["gender"])
    cbd = rng.random() < CBD_SHARE
    by_key: dict[str, list[tuple[str, str]]] = {}
    for a, b in itertools.permutations(people, 2):
        k = fam.true_relation(tree, a, b)
        if k in GENDER_KEYS[level] and (cbd or a in tree["spouse"]):  # a gender is inferable only via a spouse
            by_key.setdefault(k, []).append((a, b))
    if not by_key:
        return reject(stats, "no_target")
    x, y = rng.choice(by_key[rng.choice(sorted(by_key))])
    facts = _compose_facts(rng, tree, x, y, level, cbd)
    people_in = {p for f in facts for p in f[1:]}
    if len(people_in) - len(stated_genders(facts) or {}) > MAX_OPEN:
        return reject(stats, "too_open")
    if level >= 2:
        rng.shuffle(facts)
    order = list(dict.fromkeys(p for f in facts for p in f[1:]))
    # people a gendered word names keep their (like-gendered) names; whoever's gender is to be inferred or left open
    # is a letter, so only the facts tell it
    said = stated_genders(facts) or {}
    letter = {**rename(order, rng), **{p: p for p in order if p in said and rng.random() < NAMED_SHARE}}
    facts = [[w, letter[a], letter[b]] for w, a, b in facts]
    p = {"kind": "family_gender", "facts": facts, "styles": [rng.randrange(3) for _ in facts],
         "intro": rng.randrange(len(GENDER_INTROS))}
    if fam.asks(form, "statement", TRUE_SHARE[level], rng):
        return _finish_true(rng, tree, p, {v: k for k, v in letter.items()}, stats)
    p.update(question=["relation", letter[x], letter[y]], ask=rng.randrange(len(ASK)))
    return _finish_relation(rng, tree, p, x, y, stats, level)


def _compose_facts(rng: random.Random, tree: dict, x: str, y: str, level: int, cbd: bool) -> list[list[str]]:
    """Path facts from y to x, then gender-fixing facts (unless x's gender is to stay open), then side facts."""
    quiet = {x, tree["spouse"].get(x)} if cbd else {x}  # people no gendered word may be said of
    facts, u = [], y
    for label, v in fam.tree_path(tree, y, x):
        via = fam.link_via(tree, label, u, v) if rng.random() < SPLIT[level] else None
        for a, b in ((u, via[1]), (via[1], v)) if via and via[1] else ((u, v),):
            subject = rng.choice((a, b))
            facts.append(_link_fact(tree, a, b, subject, subject in quiet or rng.random() < NEUTRAL_SHARE[level]))
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
        fresh = [b for _, b in fam.tree_links(tree, a) if frozenset((a, b)) not in known]
        if fresh:
            b = rng.choice(sorted(fresh))
            subject = rng.choice((a, b))
            out.append(_link_fact(tree, a, b, subject, subject in quiet or rng.random() < NEUTRAL_SHARE[level]))
            known.add(frozenset((a, b)))
    return out


def _finish_relation(rng: random.Random, tree: dict, p: dict, x: str, y: str, stats: dict, level: int) -> dict | None:
    """A relation question: the inferred word, or "Cannot be determined" with both gendered words as traps."""
    key = fam.true_relation(tree, x, y)
    proven = possible_gender(p)
    near = {term_for(k, s): NEAR_WEIGHT for k in NEAR.get(key, ()) for s in "mf"}
    if proven == {CBD}:
        models = gender_models(p["facts"])
        if rel_key(models[0], p["question"][2], p["question"][1]) != key:
            return reject(stats, "solver_disagrees")
        pair = [term_for(key, "m"), term_for(key, "f")]
        return accept(p, CBD, pair + [rng.choice(sorted(near))], stats, GENDER)
    truth = term_for(key, tree["gender"][x])
    others = [term_for(k, s) for k in sorted(fam.TERMS) if k != key for s in "mf"]
    pool = [term_for(key, OPP[tree["gender"][x]])] + others
    distractors = blind.balanced(truth, pool, rng, fixed=[CBD], target=DETERMINED_TARGET,
                                 weights=key_shares.weights("family_gender", level, pool, near))
    return check(p, truth, distractors, stats, GENDER)


def _candidate_statements(models: list[dict], people: list[str]) -> tuple[list[list[str]], dict]:
    """Every gender and named-relation statement about the mentioned people, with the relation keys."""
    keys = {(a, b): rel_key(models[0], b, a) for a, b in itertools.permutations(people, 2)}
    out = [["gender", a, g] for a in people for g in "mf"]
    for (a, b), key in keys.items():
        if key:
            out += [["rel", a, b, t] for t in dict.fromkeys(term_for(key, g) for g in "mf")]
    return out, keys


def _finish_true(rng: random.Random, tree: dict, p: dict, name: dict, stats: dict) -> dict | None:
    """A which-is-definitely-true question: one inferred statement true in every model, three that are not."""
    models = gender_models(p["facts"])
    if not models:
        return reject(stats, "contradiction")
    people = list(dict.fromkeys(a for f in p["facts"] for a in f[1:]))
    stated, said = stated_genders(p["facts"]) or {}, {frozenset(f[1:]) for f in p["facts"]}
    cands, keys = _candidate_statements(models, people)
    cands = [st for st in cands if st[1] not in stated]  # every option about someone no word sexes: a name tells
    status = {i: _holds(models, st, keys) for i, st in enumerate(cands)}  # nothing the options could be sorted by
    sure = [st for i, st in enumerate(cands) if status[i] == {True}
            and (st[0] == "gender" or frozenset(st[1:3]) not in said)]
    if not sure:
        return reject(stats, "nothing_inferred")
    answer = rng.choice(sure)
    # wrong options: statements possible but not forced (traps) and statements false in every model (each one the
    # gender counterpart of a true one), picked by blind.balanced so that no option-only rule finds the key. The key
    # is any of `sure` alike, so the rates are set for that draw: a short "X is male" beside long statements is always
    # the shortest, and the other keys make up for it (without this: shortest 21%, longest 26% over 490 questions).
    wrong = {statement_text(st): st for i, st in enumerate(cands) if status[i] != {True}}
    keys = sorted(statement_text(st) for st in sure)
    target = blind.vocabulary_targets(rng.sample(keys, min(len(keys), TRUE_KEYS)), sorted(wrong))
    distractors = blind.balanced(statement_text(answer), sorted(wrong), rng, target=target)
    options = [answer] + [wrong[t] for t in distractors]
    rng.shuffle(options)
    p.update(question=["true"], options=options, ask=rng.randrange(len(TRUE_ASK)))
    if not _tree_agrees(tree, answer, name):
        return reject(stats, "solver_disagrees")
    return check(p, statement_text(answer), distractors, stats, GENDER)


def _tree_agrees(tree: dict, st: list[str], name: dict) -> bool:
    """Whether the hidden tree makes a statement true (a gender, or a relation by common ancestors)."""
    a = name[st[1]]
    if st[0] == "gender":
        return tree["gender"][a] == st[2]
    key = fam.true_relation(tree, a, name[st[2]])
    return key is not None and term_for(key, tree["gender"][a]) == st[3]


GENDER = Kind(render_gender, possible_gender, explain_gender)
