"""Blind strategies: what an opponent scores from the four options (or the order of keys) without reading a clue.

Each option strategy scores the choices' text alone and bets on the top score (ties broken by the caller's rng): the
option most similar to the other three, the longest, the shortest, the second shortest and the second longest (so the
key's rank by length must be uniform), one of a male/female counterpart pair ("Great-uncle | Great-aunt"), the
position-wise majority over coded expressions ("A # B @ C"), and one of the two middle numbers of four counts ("how
many sit between": its rank by value must be uniform too), and one of the two options closest to each other with
names masked (a true statement with a twin of its kind beside two odd ones out), and a "Cannot be determined"-style
option whenever one is offered. One strategy also reads the question's text: the one person (or value) among name
options never mentioned after the opening sentence (the seating list), whom a solver places by elimination. The
usual-key strategy (play_usual_key) learns from other questions of the family which options are usually the key. The
letter strategies see only the keys' letters in the order a Q-agent asks them: always A, and a letter not yet used in
the current aligned block of four. On questions that give nothing away each scores chance, 1 in 4; play() and
play_letters() measure that (tests/test_blind_strategies.py holds every family and level to it). balanced() is the
generators' side: it picks three wrong options among provably wrong candidates so that each strategy finds the key 1
time in 4 (the caller says which candidates the question's text leaves unmentioned).

No helpers import: the puzzle families import this module, so it imports none of them.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import math
import random
import re
from collections import Counter
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

LETTERS = "ABCD"
Scores = Callable[[Sequence[str]], list[float]]  # reads the options alone
TextScores = Callable[[Sequence[str], str], list[float]]  # reads the options and the question's text

# Male/female counterparts, lower case, swapped part by part ("Great-grandfather" -> "Great-grandmother",
# "Father-in-law" -> "Mother-in-law"); the statements' "male"/"female" too, so "R is T's uncle" | "R is T's aunt" pair.
_PAIRS = (("father", "mother"), ("son", "daughter"), ("brother", "sister"), ("husband", "wife"), ("uncle", "aunt"),
          ("nephew", "niece"), ("grandfather", "grandmother"), ("grandson", "granddaughter"), ("himself", "herself"),
          ("male", "female"), ("he", "she"), ("his", "her"), ("man", "woman"))
COUNTERPART = {**dict(_PAIRS), **{f: m for m, f in _PAIRS}}
_WORD = re.compile(r"[A-Za-z]+")


@functools.lru_cache(maxsize=1 << 14)
def counterpart(option: str) -> str:
    """The option with every gendered word swapped for its counterpart ("Great-uncle" -> "Great-aunt")."""
    def swap(m: re.Match) -> str:
        word = m.group(0)
        other = COUNTERPART.get(word.lower())
        if other is None:
            return word
        return other.capitalize() if word[0].isupper() else other
    return _WORD.sub(swap, option)


def similarity(a: str, b: str) -> float:
    """difflib's character ratio, 0-1, taken in one order so that it is symmetric (and computed once per pair)."""
    return _ratio(a, b) if a <= b else _ratio(b, a)


@functools.lru_cache(maxsize=1 << 16)
def _ratio(a: str, b: str) -> float:
    """difflib's character ratio of a against b."""
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _paired(a: str, b: str) -> bool:
    """Whether two options are each other's male/female counterpart ("Uncle" and "Aunt")."""
    return a != b and (counterpart(a) == b or counterpart(b) == a)


def similar_scores(options: Sequence[str]) -> list[float]:
    """Each option's summed similarity to the other three: the key is on top when distractors are edits of it."""
    return [sum(similarity(o, p) for j, p in enumerate(options) if j != i) for i, o in enumerate(options)]


def longest_scores(options: Sequence[str]) -> list[float]:
    """Characters per option."""
    return [float(len(o)) for o in options]


def shortest_scores(options: Sequence[str]) -> list[float]:
    """Minus the characters per option."""
    return [-float(len(o)) for o in options]


def _ranked_length(options: Sequence[str], rank: int) -> list[float]:
    """Minus each option's distance in characters from the rank-th shortest length: its options score top (0)."""
    length = sorted(map(len, options))[rank]
    return [-float(abs(len(o) - length)) for o in options]


def second_shortest_scores(options: Sequence[str]) -> list[float]:
    """Top for the options as long as the second shortest."""
    return _ranked_length(options, 1)


def second_longest_scores(options: Sequence[str]) -> list[float]:
    """Top for the options as long as the second longest."""
    return _ranked_length(options, len(options) - 2)


def middle_scores(options: Sequence[str]) -> list[float]:
    """1 for the two middle values when every option is a whole number (a count), else all 0 (a guess)."""
    if not all(o.strip().isdigit() for o in options):
        return [0.0] * len(options)
    values = sorted(int(o) for o in options)
    middle = values[1:len(values) - 1]
    return [float(int(o) in middle) for o in options]


_AMOUNT = re.compile(r"(\d+)(?: ([a-z]+))?")


def amounts(options: Sequence[str]) -> list[int] | None:
    """The options' whole numbers when every option is one, alone or with one shared unit ("5 km"), else None."""
    found = [_AMOUNT.fullmatch(o.strip()) for o in options]
    if not all(found) or len({m.group(2) for m in found}) != 1:
        return None
    return [int(m.group(1)) for m in found]


def lowest_scores(options: Sequence[str]) -> list[float]:
    """1 for the smallest amount (a count, a distance), else all 0: a row of options whose key cannot sit high in it
    gives the key away to this bet."""
    values = amounts(options)
    return [0.0] * len(options) if values is None else [float(v == min(values)) for v in values]


def highest_scores(options: Sequence[str]) -> list[float]:
    """1 for the largest amount, else all 0."""
    values = amounts(options)
    return [0.0] * len(options) if values is None else [float(v == max(values)) for v in values]


def pair_scores(options: Sequence[str]) -> list[float]:
    """1 for the two options of the one male/female counterpart pair, when exactly one exists; else all 0 (a guess)."""
    pairs = [(i, j) for i, j in itertools.combinations(range(len(options)), 2) if _paired(options[i], options[j])]
    return [float(len(pairs) == 1 and i in pairs[0]) for i in range(len(options))]


def majority_scores(options: Sequence[str]) -> list[float]:
    """Positions (of the space-split tokens) where an option holds the most common token; a position where no
    token repeats votes for nobody."""
    rows = [o.split() for o in options]
    votes = [0.0] * len(options)
    for pos in range(min(map(len, rows))):
        counts = Counter(r[pos] for r in rows)
        top = max(counts.values())
        if top > 1:
            for i, r in enumerate(rows):
                votes[i] += counts[r[pos]] == top
    return votes


_NAME = re.compile(r"\b[A-Z][a-z]*(?:'s)?")


def masked(option: str) -> str:
    """The option with every capitalised word (a person's name, "Y's" with its 's) read as "X": what two statements
    of one kind share ("X sits at a short side" | "X is third to X's left")."""
    return _NAME.sub("X", option)


def closest_pair_scores(options: Sequence[str]) -> list[float]:
    """Each option's highest similarity, names masked, to one other option: the two of the closest pair score top.
    It finds the key when the true statement always has a twin of its kind beside two odd ones out."""
    bare = [masked(o) for o in options]
    return [max(similarity(b, c) for j, c in enumerate(bare) if j != i) for i, b in enumerate(bare)]


# "Cannot be determined", "Can't be determined", "Cannot be said", "Data inadequate", "None of these" ...
_UNDETERMINED = re.compile(r"\b(?:cannot|can ?not|can't) be (?:determined|said|known|found)|\bnot enough information"
                           r"|\bdata (?:inadequate|insufficient)|\bnone of (?:these|the above)", re.IGNORECASE)


def undetermined(option: str) -> bool:
    """Whether an option says the clues settle nothing ("Cannot be determined") instead of naming an answer."""
    return _UNDETERMINED.search(option) is not None


def undetermined_scores(options: Sequence[str]) -> list[float]:
    """1 for a "Cannot be determined"-style option, else 0: offered beside three answers, it is the key 1 time in 4
    or it gives something away."""
    return [float(undetermined(o)) for o in options]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NAME_OPTION = re.compile(r"[A-Za-z][A-Za-z'-]*")  # one word: a person ("Ravi") or a value ("tea", "Thai")


def after_opening(question: str) -> str:
    """The question's text after its opening sentence (the seating list or cast), "" when it has one sentence."""
    parts = _SENTENCE_END.split(question, maxsplit=1)
    return parts[1] if len(parts) > 1 else ""


def _said_in(word: str, text: str) -> bool:
    """Whether a word occurs in text as a whole word (case counts: "Tea" is not "tea")."""
    return re.search(rf"(?<![\w'-]){re.escape(word)}(?![\w-])", text) is not None


def names_of(candidates: Iterable[str], question: str) -> bool:
    """Whether every candidate is a name of the question: one word (a person, or a value such as a drink), said
    somewhere in its text (the seating list, or the values listed in the opening)."""
    return all(_NAME_OPTION.fullmatch(c) and _said_in(c, question) for c in candidates)


def unmentioned(candidates: Sequence[str], question: str) -> set[str]:
    """The candidates the question never mentions after its opening sentence, when all are names of the question
    (names_of); else none. These are the people a reader places by elimination, what the unnamed strategy bets on;
    the generators pass them to balanced()."""
    if not names_of(candidates, question):
        return set()
    rest = after_opening(question)
    return {c for c in candidates if not _said_in(c, rest)}


def unnamed_scores(options: Sequence[str], question: str) -> list[float]:
    """1 for the one option never mentioned after the question's opening sentence, when all four are names of the
    question and exactly one is unmentioned (else all 0, a guess): the person a solver places by elimination. (Two
    unmentioned people could trade seats, so a seating key is unmentioned only when it is the only one: the seating
    generators offer at most one unmentioned person.)"""
    away = unmentioned(options, question)
    return [float(len(away) == 1 and o in away) for o in options]


def mentioned_scores(options: Sequence[str], question: str) -> list[float]:
    """1 for the one option mentioned after the opening when the other three are not, all four being names of the
    question: three values no clue names are interchangeable, so none of them can be the one key (a seating attribute
    question once gave its key away so, 39 times in 39)."""
    away = unmentioned(options, question)
    return [float(len(away) == len(options) - 1 and o not in away) for o in options]


_CODE_DEF = re.compile(r"P (\S+) Q(?: means P is the ([a-z-]+) of Q| means P is Q's ([a-z-]+)|: P is Q's ([a-z-]+))")
_CODE_ASK = re.compile(r"means \w+ is \w+'s ([a-z-]+)\?|shows that \w+ is the ([a-z-]+) of \w+\?")


def word_gender(word: str) -> str | None:
    """"m" or "f" for a gendered relation word ("great-grandfather", "sister-in-law" too), None for a neutral one."""
    base = word.lower().removesuffix("-in-law")
    while base.startswith("great-"):
        base = base.removeprefix("great-")
    return "m" if base in dict(_PAIRS) else "f" if base in dict(_PAIRS).values() else None


def first_link_gender_scores(options: Sequence[str], question: str) -> list[float]:
    """For "which expression means A is B's son?": 1 for each expression whose first code word does not give A the
    other gender (read from the code table in the text), 0 for those that do; a question of another kind, all 0. The
    expressions it rules out need no other clue (the coded family once offered two such of four)."""
    codes = {m.group(1): next(g for g in m.groups()[1:] if g) for m in _CODE_DEF.finditer(question)}
    asked = _CODE_ASK.search(question)
    want = word_gender(next(g for g in asked.groups() if g)) if asked else None
    if not codes or want is None:
        return [0.0] * len(options)
    firsts = [o.split()[1] if len(o.split()) > 2 else None for o in options]
    return [float(f in codes and word_gender(codes[f]) in (None, want)) for f in firsts]


OPTION_STRATEGIES: dict[str, Scores] = {"most_similar": similar_scores, "longest": longest_scores,
                                        "shortest": shortest_scores, "second_shortest": second_shortest_scores,
                                        "second_longest": second_longest_scores, "gender_pair": pair_scores,
                                        "coded_majority": majority_scores, "middle_number": middle_scores,
                                        "undetermined": undetermined_scores}
TEXT_STRATEGIES: dict[str, TextScores] = {"unnamed": unnamed_scores}
# The strategies balanced() calibrates (hit_chances computes each one's chance for every candidate triple).
CALIBRATED = (*OPTION_STRATEGIES, *TEXT_STRATEGIES)


def _options_only(scores: Scores) -> TextScores:
    """An options-only strategy in the played form (options, question text), the text unread."""
    return lambda options, question: scores(options)


# Every strategy play() measures: the calibrated ones above; the closest pair, which the builders of "which
# statement is true" questions answer by their shape (two kinds of statement, two each) instead; and the one
# mentioned option, which never bets once at most one unmentioned name is offered (seating.unnamed); and the coded
# expressions whose first link gives the asked person the wrong gender, which the coded builder never offers; and the
# lowest and highest amount, which the builders of counts and distances answer by drawing the key's place evenly.
PLAYED_STRATEGIES: dict[str, TextScores] = {**{name: _options_only(f) for name, f in OPTION_STRATEGIES.items()},
                                            **TEXT_STRATEGIES, "closest_pair": _options_only(closest_pair_scores),
                                            "mentioned": mentioned_scores,
                                            "first_link_gender": first_link_gender_scores,
                                            "lowest_number": _options_only(lowest_scores),
                                            "highest_number": _options_only(highest_scores)}


def pick(scores: Sequence[float], rng: random.Random) -> int:
    """The index of the top score, ties broken at random (so a tie never favours a position)."""
    best = max(scores)
    return rng.choice([i for i, s in enumerate(scores) if s == best])


def play(records: Sequence[dict], rng: random.Random) -> dict[str, float]:
    """Each strategy's hit rate over records ({"question": text, "choices", "answer": index}; a record without a
    question text gives the text strategies nothing to read)."""
    hits: Counter = Counter()
    for rec in records:
        for name, scores in PLAYED_STRATEGIES.items():
            hits[name] += pick(scores(rec["choices"], rec.get("question", "")), rng) == rec["answer"]
    return {name: hits[name] / max(1, len(records)) for name in PLAYED_STRATEGIES}


def key_counts(records: Iterable[dict]) -> tuple[Counter, Counter]:
    """How often each option text was the key, and how often it was offered, over records."""
    keyed, offered = Counter(), Counter()
    for rec in records:
        offered.update(rec["choices"])
        keyed[rec["choices"][rec["answer"]]] += 1
    return keyed, offered


def usual_key_rates(records: Sequence[dict]) -> dict[str, float]:
    """Each option text's share of being the key when offered, over records (smoothed towards 1 in 4)."""
    keyed, offered = key_counts(records)
    return {text: (keyed[text] + 0.25) / (offered[text] + 1) for text in offered}


def play_usual_key(records: Sequence[dict], rng: random.Random) -> float:
    """The usual-key strategy, what a model fine-tuned on a family's questions learns without reading: fitted on the
    even-numbered records, it bets on the option most often keyed when offered; its hit rate on the odd-numbered."""
    rates = usual_key_rates(records[0::2])
    tests = records[1::2]
    hits = sum(pick([rates.get(c, 0.25) for c in rec["choices"]], rng) == rec["answer"] for rec in tests)
    return hits / max(1, len(tests))


# ---- letter strategies: the keys in the order they were asked ---------------------------------------------------

def always_a(letters: Sequence[str], rng: random.Random) -> list[str]:
    """Bet A on every question."""
    return ["A"] * len(letters)


def unused_in_block(letters: Sequence[str], rng: random.Random) -> list[str]:
    """Bet a letter not yet keyed in the current aligned block of four (uniform among those left): with keys dealt in
    shuffled blocks the fourth is free and the others better than chance (1/4 + 1/3 + 1/2 + 1) / 4 = 52%."""
    out = []
    for i in range(len(letters)):
        used = set(letters[i - i % 4:i])
        out.append(rng.choice([c for c in LETTERS if c not in used] or list(LETTERS)))
    return out


LETTER_STRATEGIES: dict[str, Callable[[Sequence[str], random.Random], list[str]]] = {
    "always_a": always_a, "unused_in_block": unused_in_block}


def play_letters(letters: Sequence[str], rng: random.Random) -> dict[str, float]:
    """Each letter strategy's hit rate over a sequence of keys."""
    return {name: sum(a == b for a, b in zip(bet(letters, rng), letters)) / max(1, len(letters))
            for name, bet in LETTER_STRATEGIES.items()}


def permuted_blocks(letters: Sequence[str]) -> float:
    """The share of aligned blocks of four keys holding A, B, C and D once each: 4!/4^4 = 9.4% for independent
    uniform keys, 100% for keys dealt in shuffled blocks."""
    blocks = [sorted(letters[i:i + 4]) for i in range(0, len(letters) - 3, 4)]
    return sum(b == list(LETTERS) for b in blocks) / max(1, len(blocks))


# ---- the generators' side: distractors no strategy can tell from the key -------------------------------------------

MAX_POOL = 16  # candidates per question (every relation word of one gender fits): at most 560 triples, ~3 ms
STEPS = 40  # Newton steps of calibrate() at most; ~10 reach every attainable rate
SOFT = 1000.0  # a rate no triple reaches (no male word is shorter than "Son") costs its log-weight^2 / (2 SOFT)


def _tables(items: Sequence[str]) -> dict[str, np.ndarray]:
    """Pairwise tables over items: similarity, lengths, counterpart pairs, and token equality per position."""
    n = len(items)
    toks = [o.split() for o in items]
    width = max(map(len, toks))
    same = np.zeros((width, n, n), bool)
    for i, j in itertools.product(range(n), repeat=2):
        for pos in range(min(len(toks[i]), len(toks[j]))):
            same[pos, i, j] = toks[i][pos] == toks[j][pos]
    sim = np.array([[0.0 if i == j else similarity(a, b) for j, b in enumerate(items)] for i, a in enumerate(items)])
    pair = np.array([[_paired(a, b) for b in items] for a in items])
    numeric = all(o.strip().isdigit() for o in items)
    return {"sim": sim, "len": np.array([len(o) for o in items], float), "pair": pair, "same": same,
            "tokens": np.array([len(t) for t in toks]),
            "value": np.array([int(o) if numeric else 0 for o in items], float)}


def _chance(scores: np.ndarray) -> np.ndarray:
    """Per row of option scores (column 0 the key): the chance a top-score pick with random ties takes the key."""
    top = scores.max(axis=1, keepdims=True)
    at_top = np.isclose(scores, top, rtol=0, atol=1e-9)
    return at_top[:, 0] / at_top.sum(axis=1)


def hit_chances(items: Sequence[str], rows: np.ndarray,
                unmentioned_names: Iterable[str] = ()) -> dict[str, np.ndarray]:
    """For each row of 4 indices into items (the key first), each calibrated strategy's chance of picking the key:
    the same scores as OPTION_STRATEGIES and TEXT_STRATEGIES, computed for every candidate row at once.
    unmentioned_names: the items the question's text leaves unmentioned after its opening (unmentioned(); given only
    where the options are names of the question, as unnamed_scores requires)."""
    t = _tables(items)
    away = set(unmentioned_names)
    grid = (rows[:, :, None], rows[:, None, :])
    pairs = t["pair"][grid]
    counts = t["same"][(slice(None),) + grid].sum(axis=-1)  # position x row x option: options sharing its token
    shared = np.arange(t["same"].shape[0])[:, None] < t["tokens"][rows].min(axis=1)[None, :]
    top = counts.max(axis=-1)
    votes = ((counts == top[..., None]) & ((top > 1) & shared)[..., None]).sum(axis=0)
    one_pair = pairs.sum(axis=(1, 2)) == 2  # a pair is counted from both ends
    lengths, values = t["len"][rows], t["value"][rows]
    by_length, by_value = np.sort(lengths, axis=1), np.sort(values, axis=1)
    middle = (values >= by_value[:, [1]]) & (values <= by_value[:, [2]])  # all ties when not counts (values all 0)
    return {"most_similar": _chance(t["sim"][grid].sum(axis=-1)), "longest": _chance(lengths),
            "shortest": _chance(-lengths), "second_shortest": _chance(-np.abs(lengths - by_length[:, [1]])),
            "second_longest": _chance(-np.abs(lengths - by_length[:, [2]])),
            "gender_pair": _chance(pairs.any(axis=-1) & one_pair[:, None]),
            "coded_majority": _chance(votes.astype(float)), "middle_number": _chance(middle.astype(float)),
            "undetermined": _chance(np.array([undetermined(o) for o in items], float)[rows]),
            "unnamed": _chance(_the_one(np.array([o in away for o in items])[rows]))}


def _the_one(flags: np.ndarray) -> np.ndarray:
    """Per row of option flags, the flags where exactly one is set, else all False (as unnamed_scores reads them)."""
    return (flags & (flags.sum(axis=1) == 1)[:, None]).astype(float)


def calibrate(hits: np.ndarray, target: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The distribution over candidates closest to `base` (relative entropy) whose expected hit rates (hits:
    candidates x strategies) are `target`; a rate no candidate reaches is approached as far as it goes.

    Newton with backtracking on the dual, log sum(base * exp(hits @ lam)) - lam @ target + |lam|^2 / (2 SOFT): the
    last term keeps it bounded when a target is out of reach, at a cost of |lam| / SOFT (~0.001) on the others."""
    log_base = np.log(base)

    def dual(lam: np.ndarray) -> tuple[float, np.ndarray]:
        logits = log_base + hits @ lam
        top = logits.max()
        w = np.exp(logits - top)
        return top + math.log(w.sum()) - lam @ target + lam @ lam / (2 * SOFT), w / w.sum()
    lam = np.zeros(hits.shape[1])
    value, q = dual(lam)
    for _ in range(STEPS):
        mean = q @ hits
        grad = mean - target + lam / SOFT
        if np.abs(grad).max() < 1e-4:
            break
        hess = (hits * q[:, None]).T @ hits - np.outer(mean, mean) + np.eye(len(lam)) / SOFT
        step = -np.linalg.solve(hess, grad)
        for _ in range(40):  # halve until the dual falls enough (Armijo)
            new_value, new_q = dual(lam + step)
            if new_value <= value + 1e-4 * (grad @ step):
                break
            step /= 2
        lam, value, q = lam + step, new_value, new_q
    return q


def spread(pool: Sequence[str], rng: random.Random | None = None) -> list[str]:
    """At most MAX_POOL candidates, spread over the lengths (so the key can take any length rank the pool allows),
    from a random offset (or the first, without rng)."""
    if len(pool) <= MAX_POOL:
        return list(pool)
    ordered = sorted(pool, key=lambda p: (len(p), rng.random() if rng else p))
    start = rng.random() * len(pool) / MAX_POOL if rng else 0.0
    return [ordered[int(start + i * len(pool) / MAX_POOL)] for i in range(MAX_POOL)]


def vocabulary_targets(keys: Sequence[str], pool: Sequence[str]) -> dict[str, float]:
    """Per strategy, the chance to give a key that can take it, so that with every one of `keys` equally likely the
    key (its distractors from the rest of `pool`) each strategy picks the key 1 time in 4: keys that cannot take
    their share (a short statement beside long ones is always the shortest) hand it to the others."""
    spans: dict[str, list[tuple[float, float]]] = {name: [] for name in CALIBRATED}
    for key in keys:
        items = [key] + spread([p for p in pool if p != key])
        rows = np.array([[0, *t] for t in itertools.combinations(range(1, len(items)), 3)])
        for name, chance in hit_chances(items, rows).items():
            spans[name].append((float(chance.min()), float(chance.max())))
    return {name: _share(span) for name, span in spans.items()}


def _share(spans: Sequence[tuple[float, float]]) -> float:
    """The t whose clamp into each (low, high) span averages 1/4: 1/4 itself when it does (every span reaching it, or
    a rule that never looks at these options), else by bisection (the nearest end if no t does)."""
    def mean(t: float) -> float:
        return sum(min(max(t, a), b) for a, b in spans) / len(spans)
    if abs(mean(0.25) - 0.25) < 1e-9:
        return 0.25
    low, high = 0.0, 1.0
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if mean(mid) < 0.25 else (low, mid)
    return round((low + high) / 2, 4)


def balanced(key: str, pool: Sequence[str], rng: random.Random, *, fixed: Sequence[str] = (),
             target: Mapping[str, float] | None = None, weights: Mapping[str, float] | None = None,
             unmentioned_names: Iterable[str] = ()) -> list[str]:
    """Three wrong options: `fixed` plus picks from `pool`, drawn so that each strategy picks the key with chance
    target[name] (default 1/4, chance) whatever the key looks like: the triple is drawn from calibrate() over every
    triple, from base weights (the product of weights[option], default 1: e.g. nearby relations preferred).
    unmentioned_names: the key and candidates the question leaves unmentioned after its opening, where the options
    are names (the unnamed strategy; see hit_chances).

    Every candidate must already be proven wrong; fewer candidates than places give what there is.
    """
    pool = [p for p in dict.fromkeys(pool) if p != key and p not in fixed]
    need = 3 - len(fixed)
    if need <= 0 or len(pool) <= need:
        return list(fixed)[:3] + pool[:max(0, need)]
    pool = spread(pool, rng)
    items = [key, *fixed, *pool]
    triples = list(itertools.combinations(range(1 + len(fixed), len(items)), need))
    rows = np.array([[0, *range(1, 1 + len(fixed)), *t] for t in triples])
    chances = hit_chances(items, rows, unmentioned_names)
    names = list(CALIBRATED)
    goal = np.array([(target or {}).get(name, 0.25) for name in names])
    base = np.array([math.prod((weights or {}).get(items[i], 1.0) for i in t) for t in triples])
    q = calibrate(np.stack([chances[name] for name in names], axis=1), goal, base)
    picked = rng.choices(triples, weights=q.tolist())[0]
    return list(fixed) + [items[i] for i in picked]
