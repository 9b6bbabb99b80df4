"""Answer letters: balance them per choice count (keeping positional choices in place) and count them."""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict

from helpers.records import LETTERS, contains_any

# Choices that point at other choices ("all of the above", "both A and B") only make sense where they are.
_POSITIONAL = re.compile(
    r"\b(all|none|both|neither) of (the )?(above|these|those|the following)\b|^(all|none) (of )?(them|above)\W*$"
    r"|\b(both|only|either|neither|options?|choices?) \(?[a-j]\)? (and|or|nor|&) \(?[a-j]\)?(\W|$)"
    r"|^\(?[a-j]\)? (and|or|&) \(?[a-j]\)?\W*$|\b(options?|choices?) \(?[a-j]\)?\W*$", re.M)

_HINTS = ("above", "these", "those", "following", "them")
_JOINS = (" and ", " or ", " nor ", "&")
_LETTER_TOKENS = frozenset("bcdefghij")


def positional(choices: list[str]) -> bool:
    """True if a choice refers to others by place ('all of the above', 'both A and B'): order must stay."""
    text = "\n".join(choices).casefold()
    # cheap tests first (~2 us), the regex (~10 us on 100 characters) only for the few candidates left
    if not contains_any(text, _HINTS):
        named = "option" in text or "choice" in text
        if not named and not contains_any(text, _JOINS):
            return False
        tokens = set(text.replace("(", " ").replace(")", " ").split())
        # "both A and B" needs a letter other than the article "a"; "option A" may name A itself
        if not tokens & (_LETTER_TOKENS | {"a"} if named else _LETTER_TOKENS):
            return False
    return _POSITIONAL.search("\n".join(" ".join(c.split()) for c in text.split("\n"))) is not None


def balance_letters(records: list[dict], *, seed: int) -> int:
    """Move answers so each letter is equally common (per choice count), in place; returns the fixed count.

    Generated puzzles (already balanced by their generator) and positional choices keep their order; the
    others get target letters that fill each letter's quota, in a seeded order, with the distractors shuffled.
    """
    rng = random.Random(seed)
    fixed_total = 0
    groups: dict[int, list[dict]] = defaultdict(list)
    for rec in records:
        groups[len(rec["choices"])].append(rec)
    for n, group in sorted(groups.items()):
        fixed, movable = [], []
        for r in group:
            (fixed if r.get("origin") == "generated" or positional(r["choices"]) else movable).append(r)
        fixed_total += len(fixed)
        have = Counter(r["answer"] for r in fixed)
        base, extra = divmod(len(group), n)
        lucky = set(rng.sample(range(n), extra))  # which letters take the remainder: seeded, not always A
        need = {i: max(0, base + (i in lucky) - have[i]) for i in range(n)}
        targets = [i for i in range(n) for _ in range(need[i])]
        while len(targets) < len(movable):  # fixed records over quota somewhere: spread the rest evenly
            targets += list(range(n))
        targets = targets[:len(movable)]
        rng.shuffle(targets)
        for rec, target in zip(movable, targets):
            others = rec["choices"].copy()
            answer = others.pop(rec["answer"])
            rng.shuffle(others)
            others.insert(target, answer)
            rec["choices"], rec["answer"] = others, target
    return fixed_total


def letter_counts(records: list[dict]) -> dict[str, int]:
    """How often each answer letter occurs."""
    return letter_table(Counter((len(r["choices"]), r["answer"]) for r in records))


def letter_table(pairs: Counter, n_choices: int | None = None) -> dict[str, int]:
    """Letter counts, sorted by letter, from a Counter of (choice count, answer index); one choice count or all."""
    counts: Counter = Counter()
    for (n, answer), k in pairs.items():
        if n_choices is None or n == n_choices:
            counts[LETTERS[answer]] += k
    return {k: counts[k] for k in sorted(counts)}
