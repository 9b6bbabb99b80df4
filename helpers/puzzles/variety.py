"""How varied a family's questions read: sentence templates, openings, question forms, letter names and key ranks;
and the measured shares the blind-strategy tables are fitted from (kinship key shares, unmentioned seating keys)."""

from __future__ import annotations

import random
import re
import statistics
from collections import Counter, defaultdict
from typing import Iterable, Sequence

from helpers.puzzles import blind, catalogue

FORMS = ("who", "where", "attribute", "count", "statement", "relation", "expression")
# Structured question tags the generators record (puzzle["question"][0]) and the form each asks; any other tag is
# read from the question's text (form_of_text).
TAG_FORMS = {"who": "who", "where": "where", "attr": "attribute", "statement": "statement", "true": "statement",
             "relation": "relation", "to_speaker": "relation", "inverse": "relation", "to_relative": "relation",
             "which": "expression"}
# A clue kind needs this many sentences in the sample before its count of wordings says anything.
MIN_SEEN = 10

_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve first second third fourth "
                 "fifth sixth seventh eighth ninth tenth eleventh twelfth once twice").split()
_NUMBER = re.compile(r"\b(?:\d+|" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
_RELATION = re.compile(r"\b(?:great-)*(?:grand-?|step-?)?(?:father|mother|son|daughter|child|children|parent|"
                       r"brother|sister|sibling|husband|wife|spouse|uncle|aunt|nephew|niece|cousin|man|woman|boy|"
                       r"girl|male|female)s?(?:-in-law)?\b", re.I)
# Seating's relation words: which side or compass point a clue names is its content, not its wording.
_DIRECTION = re.compile(r"\b(?:left|right|north|south|east|west)\b", re.I)
_SYMBOL = re.compile(r"(?<!\S)[-\^@#$%&*+=~|!<>/\\]+(?!\S)")  # coded relations' operators, standing alone
_PRONOUN = re.compile(r"\b(?:he|she|his|her|him|himself|herself)\b", re.I)  # the gender of whom a text is about
_LETTER = re.compile(r"\b[A-Z]\b")
_NAMES = re.compile(r"\b(?:" + "|".join(sorted((n for n, _ in catalogue.NAMES), key=len, reverse=True)) + r")\b")
# Masks in a row are one slot: a cast list ("<n>, <n> and <n>"), an expression ("<n> <s> <n>"), a chain of
# relations ("the <r> of my <r>'s only <r>"); so 5 or 8 people, 2 or 4 links read as the same wording.
_LIST = re.compile(r"<[a-z#]>(?:(?:,? and |, |,? or | <s> )<[a-z#]>)+")
_VALUE = re.compile(r"(?:the )?<v>(?: [a-z]+er\b)?")  # "the tea drinker", "the cat owner": one value slot
_LINK = r"(?:(?:the|my|only|paternal|maternal|<p>) )*<r>"
_CHAIN = re.compile(_LINK + r"(?:(?:'s| of) " + _LINK + ")*")
# Sentences, ';' clauses (each coded relation) and an intro ending in ':' ("In a family:", not "P # Q:").
_SENTENCE = re.compile(r"(?<=[.?;])\s+|(?<=[.?;][\"”])\s+|(?<=[a-z]:)\s+")


def sentences(text: str) -> list[str]:
    """A question's sentences (and ';'/':' clauses, so each coded relation and a family's facts stand alone)."""
    return [s for s in _SENTENCE.split(text.strip()) if s]


def _leaves(value) -> Iterable[str]:
    """Every string inside a nested puzzle dict."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)


def people(rec: dict) -> set[str]:
    """The names a record's question uses: the puzzle's people, catalogue names and single letters it holds."""
    puzzle = rec.get("puzzle") or {}
    cast = set(puzzle.get("people") or ())
    known = {n for n, _ in catalogue.NAMES}
    words = set(re.findall(r"[A-Za-z]+", rec["question"]))
    return {s for s in _leaves(puzzle) if s in words and (s in cast or s in known or _LETTER.fullmatch(s))}


def attribute_values(rec: dict) -> list[str]:
    """The attribute values a seating puzzle draws (nationalities, drinks, jobs), longest first."""
    puzzle = rec.get("puzzle") or {}
    values = set(_leaves(puzzle.get("groups") or {})) | set(_leaves(puzzle.get("attributes") or {}))
    return sorted(values, key=len, reverse=True)


def mask(text: str, names: Iterable[str] = (), values: Sequence[str] = ()) -> str:
    """The text with its content masked: values <v>, names and letters <n>, relation words and chains <r>, pronouns
    <p>, numbers <#>, directions <d>, operators <s>; runs of masks folded into one slot."""
    text = _SYMBOL.sub("<s>", text)
    for v in values:
        text = re.sub(rf"\b{re.escape(v)}\b", "<v>", text, flags=re.I)
    extra = sorted(set(names), key=len, reverse=True)
    if extra:
        text = re.sub(r"\b(?:" + "|".join(map(re.escape, extra)) + r")\b", "<n>", text)
    text = _LETTER.sub("<n>", _NAMES.sub("<n>", text))
    text = _DIRECTION.sub("<d>", _NUMBER.sub("<#>", _PRONOUN.sub("<p>", _RELATION.sub("<r>", text))))
    return _CHAIN.sub("<r>", _LIST.sub("<l>", _VALUE.sub("<v>", text)))


def templates(rec: dict) -> list[str]:
    """The record's sentences, masked, without the '.' or ';' that only says where a sentence stands."""
    names, values = people(rec), attribute_values(rec)
    return [mask(s, names, values).rstrip(".;,") for s in sentences(rec["question"])]


def opening(rec: dict) -> str:
    """The first 4 words of the masked question's first sentence."""
    return " ".join(templates(rec)[0].split()[:4])


def clue_kinds(rec: dict, n_body: int) -> list[str]:
    """The kind of each body sentence (all but the question) where the puzzle lists one clue per sentence, aligned
    from the last (the intro may take several, or share the first clue's: then that one counts as intro): a seating
    clue's type, "fact" or "code"; else "sentence"."""
    puzzle = rec.get("puzzle") or {}
    for key, label in (("clues", None), ("facts", "fact"), ("codes", "code")):
        clues = puzzle.get(key)
        if isinstance(clues, list) and 0 < len(clues) <= n_body:
            kinds = [label or (str(c[0]) if isinstance(c, (list, tuple)) and c else "clue") for c in clues]
            return ["intro"] * max(1, n_body - len(clues)) + kinds[n_body == len(clues):]
    return ["sentence"] * n_body


def form_of_text(question: str) -> str:
    """The form a question sentence asks, read from its words."""
    q = question.lower()
    rules = (("count", r"\bhow many\b"), ("statement", r"\b(?:true|false|must be|correct)\b"),
             ("expression", r"\bexpression|\bcode|\bmeans\b"),
             ("where", r"^where\b|\b(?:which|what) (?:seat|position|place)\b"),
             ("relation", r"\brelat|\bwhat is \S+ to\b|\bwhat is \S+ of\b"), ("who", r"^(?:who|whom)\b|\bwho\b"))
    return next((form for form, pattern in rules if re.search(pattern, q)), "attribute")


def form_of(rec: dict) -> str:
    """The form a record's question asks: its structured tag where known, else its last sentence's words."""
    question = (rec.get("puzzle") or {}).get("question")
    tag = question[0] if isinstance(question, (list, tuple)) and question and isinstance(question[0], str) else ""
    if tag.startswith("count"):
        return "count"
    return TAG_FORMS.get(tag.removesuffix("_q")) or form_of_text(sentences(rec["question"])[-1])


def hardest_picks(records: Sequence[dict], k: int = 4) -> list[dict]:
    """What a Q-agent asks when it takes the highest measured difficulty of each k puzzles (its
    agents.puzzle_candidates, 4 by default), compared the way it compares them: the k candidates of one question all
    ask one form (catalogue.form_at), so blocks are cut from each form's records in turn."""
    by_form: dict[str, list[dict]] = defaultdict(list)
    for rec in records:
        by_form[form_of(rec)].append(rec)
    blocks = [g[i:i + k] for g in by_form.values() for i in range(0, len(g) - k + 1, k)]
    return [max(b, key=lambda r: r["puzzle"].get("work", {}).get("score", 0)) for b in blocks]


def _shares(counts: Counter) -> dict[str, float]:
    """Counts as % of their total, largest first."""
    total = max(1, sum(counts.values()))
    return {f: 100 * c / total for f, c in counts.most_common()}


def _number(text: str) -> float | None:
    """An option's numeric value ("3", "Three"), else None."""
    t = text.strip().lower()
    if re.fullmatch(r"-?\d+(?:\.\d+)?", t):
        return float(t)
    return float(_NUMBER_WORDS.index(t)) if t in _NUMBER_WORDS[:13] else None


def rank_shares(values: Sequence[float], key: int) -> list[float]:
    """The key's rank among the options (0 = smallest), ties shared evenly between the ranks they span."""
    lower = sum(v < values[key] for v in values)
    ties = sum(v == values[key] for v in values) - 1
    return [1 / (ties + 1) if lower <= r <= lower + ties else 0.0 for r in range(len(values))]


def _ranks(rows: list[list[float]]) -> list[float]:
    """Mean rank shares, in percent."""
    return [100 * sum(col) / len(rows) for col in zip(*rows)] if rows else []


def figures(records: Sequence[dict]) -> dict:
    """A sample's variety: distinct openings and sentence templates, wordings per clue kind, question-form shares
    (of all and of the hardest of each 4, with the share of the hardest picks' commonest question sentence), the
    share of names that are single letters, and the key's rank by option length and by numeric value (%)."""
    per_kind, all_templates, openings, forms = defaultdict(set), set(), set(), Counter()
    seen, names, letters, by_len, by_value = Counter(), 0, 0, [], []
    picks = hardest_picks(records)
    for rec in records:
        sents = templates(rec)
        all_templates.update(sents)
        openings.add(opening(rec))
        forms[form_of(rec)] += 1
        for kind, sent in zip(clue_kinds(rec, len(sents) - 1), sents[:-1]):
            per_kind[kind].add(sent)
            seen[kind] += 1
        cast = people(rec)
        names, letters = names + len(cast), letters + sum(len(p) == 1 for p in cast)
        by_len.append(rank_shares([len(c) for c in rec["choices"]], rec["answer"]))
        numbers = [_number(c) for c in rec["choices"]]
        if None not in numbers:
            by_value.append(rank_shares(numbers, rec["answer"]))
    wordings = {k: len(v) for k, v in per_kind.items() if seen[k] >= MIN_SEEN and k != "intro"}
    return {"n": len(records), "openings": len(openings), "templates": len(all_templates),
            "clue_wordings": wordings, "min_clue_wordings": min(wordings.values(), default=0),
            "median_clue_wordings": statistics.median(wordings.values()) if wordings else 0,
            "forms": _shares(forms), "hardest_forms": _shares(Counter(form_of(r) for r in picks)),
            "hardest_questions": _shares(Counter(templates(r)[-1] for r in picks)),
            "letter_names": 100 * letters / max(1, names), "rank_by_length": _ranks(by_len),
            "rank_by_value": _ranks(by_value), "numeric": len(by_value)}


def measure(kind: str, level: int, n: int, seed: int = 26, workers: int | None = None) -> dict:
    """figures() over the first n puzzles of one family at one level (catalogue.generate, deterministic)."""
    records = catalogue.generate(n, seed=seed, kinds=(kind,), levels=(level,), workers=workers)
    return {"kind": kind, "level": level, **figures(records)}


# The kinship families whose keys are relation words, and the form that asks for one.
WORD_KEYED = {"family": "relation", "family_pointing": "relation", "family_coded": "relation",
              "family_gender": "relation"}


def key_shares(kind: str, level: int, n: int, seed: int = 27) -> dict[str, float]:
    """Each relation word's share of the keys of n relation questions of one kinship family at one level, as its
    builder makes them (not flattened; "Cannot be determined" left out: it is an option of every gender question),
    rounded to 4 places, largest first."""
    rng, stats = random.Random(f"key-shares:{kind}:{level}:{seed}"), {}
    keys = Counter()
    for i in range(n):
        rec = catalogue.make_puzzle(kind, level, i % 4, rng, stats, id=f"k{i}", form=WORD_KEYED[kind], flatten=False)
        keys[rec["choices"][rec["answer"]]] += 1
    keys.pop("Cannot be determined", None)
    total = sum(keys.values())
    return {w: round(c / total, 4) for w, c in keys.most_common()}


def key_offers(kind: str, level: int, n: int, seed: int = 28) -> dict[str, tuple[int, int]]:
    """Per relation word, (times keyed, times offered) over n relation questions of one kinship family at one level, as
    make_puzzle builds them now (flattened, wrong words by the current key_shares tables)."""
    rng, stats = random.Random(f"key-offers:{kind}:{level}:{seed}"), {}
    keyed, offered = blind.key_counts(catalogue.make_puzzle(kind, level, i % 4, rng, stats, id=f"o{i}",
                                                            form=WORD_KEYED[kind]) for i in range(n))
    return {w: (keyed[w], offered[w]) for w in offered if w != "Cannot be determined"}


# The seating question forms whose options may be names (people or values).
SEATING_NAME_FORMS = ("side", "at", "kth", "opposite", "who", "attr", "attr_near", "faces", "faces_rel", "nbr",
                      "at_end", "at_pos")


def unnamed_rates(kind: str, level: int, form: str, n: int, seed: int = 29) -> tuple[float, float] | None:
    """The raw rates seating.unnamed balances, over n builds of one seating family's form at one level (the caller
    measures without unnamed_table: seating.unnamed.use({})): the share of name questions whose key is never
    mentioned after the opening, and the share of the others with an unmentioned wrong candidate. None when the form
    asked no name question."""
    rng, stats = random.Random(f"unnamed:{kind}:{level}:{form}:{seed}"), {}
    named = keyed = others = 0
    for i in range(n):
        rec = catalogue.make_puzzle(kind, level, i % 4, rng, stats, id=f"u{i}", form=form)
        p, key = rec["puzzle"], rec["choices"][rec["answer"]]
        group = p["groups"][p["question"][1]] if p["question"][0] == "attr" else p["people"]
        if key not in group or not blind.names_of(group, rec["question"]):
            continue
        away = blind.unmentioned(group, rec["question"])
        named, keyed, others = named + 1, keyed + (key in away), others + bool(away and key not in away)
    if not named:
        return None
    return round(keyed / named, 4), round(others / max(1, named - keyed), 4)
