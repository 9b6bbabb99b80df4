"""Every blood-relation key proven a second way, by tests/_proof_kinship.py's brute force over every family.

The kit's own generator (puzzles.make_puzzle, fixed seeds) builds puzzles of every question form each family asks, at
every level; the checker, which shares no code with the kit's solvers, must find the key to be the only correct
choice. Then: the checker fails where it should (a needed fact dropped, a wrong key), and the clues docs/data.md and
the generators call needed are re-proven needed with it (every link of a coded expression, every "only" of a
level-3 pointing chain).
"""

from __future__ import annotations

import math

import pytest

import _pool
import _proof_kinship as proof
from helpers.puzzles import catalogue, variety


KINDS = ("family", "family_pointing", "family_coded", "family_gender")
LEVELS = (1, 2, 3)
# Puzzles per family x level, split evenly over the forms the level asks, from the shared pool (tests/_pool.py). Each
# is proven whole: a fault in 1 puzzle in 20 of a family's 90 is met with p >= 0.99 (1 - 0.95^90), in 1 in 85 of the
# 390 of all four with p >= 0.99; a form's own fault, in 1 in 4 of its 15 or more, with p >= 0.987.
PER_PAIR = 30
# level-3 pointing asks about the speaker's parent or spouse in ~15% of its puzzles: twice the sample sees it surely
PER_PAIR_OF = {("family_pointing", 3): 60}
MIN_CHECKED = 24  # the guard: fewer checked puzzles than this per family x level fails
# the question forms (and the variants within them) each family must show at least once over its three levels
FORMS = {"family": {"who", "relation"},
         "family_pointing": {"to_speaker", "inverse", "to_relative", "pointed-at is", "pointed-at's relative",
                             "only"},
         "family_coded": {"relation", "which", "fact in words"},
         "family_gender": {"relation", "cannot be determined", "true"}}


def asked_forms(kind: str, level: int) -> list[str]:
    """The question forms the kit asks for a family at a level (catalogue.form_shares, share above 0)."""
    return [form for form, share in catalogue.form_shares(kind, level) if share > 0]


@pytest.fixture(scope="module")
def sample() -> dict:
    """(kind, level) -> [(asked form, record)]: PER_PAIR (or PER_PAIR_OF) records per family x level, the pool's
    first of each form it asks (as make_puzzle builds a form it draws or is given)."""
    out = {}
    for kind in KINDS:
        for level in LEVELS:
            forms = asked_forms(kind, level)
            each = math.ceil(PER_PAIR_OF.get((kind, level), PER_PAIR) / len(forms))
            out[(kind, level)] = []
            for form in forms:
                picked = [r for r in _pool.records(kind, level) if variety.form_of(r) == form][:each]
                assert len(picked) == each, (kind, level, form, len(picked))
                out[(kind, level)] += [(form, r) for r in picked]
    return out


def key_of(record: dict) -> str:
    """The record's correct choice."""
    return record["choices"][record["answer"]]


def shown(record: dict) -> str:
    """A record as a failure message shows it: question, choices, key and the checker's verdict."""
    return f"{record['question']} {record['choices']} key={key_of(record)!r} checker={proof.judge(record)}"


def forms_seen(record: dict) -> set[str]:
    """The question form of a record, and the variants it shows (a CBD key, a stated fact, an "only", ...)."""
    p, key = record["puzzle"], key_of(record)
    q = p["question"]
    if p["kind"] == "family_pointing":
        form = "pointed-at is" if p["form"] == "is" else "pointed-at's relative"
        return {q[0], form} | ({"only"} if any(only for _, only in p["chain"]) else set())
    if p["kind"] == "family_coded":
        return {q[0]} | ({"fact in words"} if p.get("stated") else set())
    if p["kind"] == "family_gender" and key == proof.CBD:
        return {"cannot be determined"}
    return {q[0]}


# ---- every generated key, proven again -------------------------------------------------------------------------

@pytest.mark.parametrize("kind,level", [(k, lv) for k in KINDS for lv in LEVELS])
def test_every_key_is_the_only_correct_choice(sample, kind, level):
    """The checker finds the key correct in every world the clues allow, and every other choice wrong."""
    records = [r for _, r in sample[(kind, level)]]
    assert len(records) >= MIN_CHECKED
    failures = [shown(r) for r in records if not proof.key_is_proven(r)]
    assert failures == []
    assert all(proof.judge(r).worlds > 0 for r in records)


@pytest.mark.parametrize("kind", KINDS)
def test_every_question_form_is_checked(sample, kind):
    """Each form the kit asks at a level is in the sample, and each family shows every form and variant it has."""
    for level in LEVELS:
        asked = {form for form, _ in sample[(kind, level)]}
        assert asked == set(asked_forms(kind, level))
    seen = set().union(*(forms_seen(r) for lv in LEVELS for _, r in sample[(kind, lv)]))
    assert seen == FORMS[kind]


def test_a_wrong_key_is_caught(sample):
    """Moving any record's key to one of its distractors makes the checker reject it."""
    records = [r for rs in sample.values() for _, r in rs]
    wrong = [dict(r, answer=i) for r in records for i in range(4) if i != r["answer"]]
    assert len(wrong) == 3 * len(records)
    assert [shown(r) for r in wrong if proof.key_is_proven(r)] == []


# ---- the checker on hand-made puzzles: plain English, and facts that are needed ----------------------------

PHOTO = 'Pointing to a photograph, Ravi said, "'  # a pointing scene: the checker reads only the text before the quote


def record(puzzle: dict, choices: list[str], key: str, question: str = PHOTO) -> dict:
    """A hand-made record with its choices and key."""
    return {"puzzle": puzzle, "choices": choices, "answer": choices.index(key), "question": question}


def pointing(chain: list[tuple[str, bool]], speaker_gender: str | None = "m", pronoun: str = "m", **extra) -> dict:
    """A hand-made pointing puzzle: "He is <the chain>", asked how he is related to the speaker."""
    return {"kind": "family_pointing", "speaker": "Ravi", "speaker_gender": speaker_gender, "pronoun": pronoun,
            "form": "is", "rel": None, "chain": [list(c) for c in chain], "question": ["to_speaker"], **extra}


def facts_puzzle(kind: str, facts: list[list[str]], question: list[str]) -> dict:
    """A hand-made stated-facts puzzle (family or family_gender)."""
    return {"kind": kind, "facts": facts, "question": question}


def test_chain_words_mean_what_they_say():
    """My mother's only brother's son is my cousin; "only" makes the grandfather's only son's only son me."""
    cousin = pointing([("mother", False), ("brother", True), ("son", False)])
    assert proof.judge(record(cousin, ["Cousin", "Nephew", "Brother", "Uncle"], "Cousin")).correct == {"Cousin"}
    chain = [("paternal grandfather", False), ("son", True), ("son", True)]
    options = ["Himself", "Brother", "Cousin", "Uncle"]
    assert proof.judge(record(pointing(chain), options, "Himself")).correct == {"Himself"}
    assert proof.judge(record(pointing(chain, "f"), options, "Brother")).correct == {"Brother"}
    loose = proof.judge(record(pointing([(w, False) for w, _ in chain]), options, "Himself"))
    assert loose.correct == set() and loose.possible == {"Himself", "Brother", "Cousin"}
    street = record(pointing(chain), options, "Himself", question='Pointing to a man in the street, Ravi said, "')
    assert proof.judge(street).worlds == 0  # a man in the street is not the speaker: no reading is left


def test_facts_and_genders_mean_what_they_say():
    """An aunt's husband's gender follows from a wife; without it only "Cannot be determined" is right."""
    sibling_of_mother = [["mother", "B", "C"], ["sibling", "A", "B"]]
    options = ["Uncle", "Aunt", "Cousin", proof.CBD]
    open_gender = record(facts_puzzle("family_gender", sibling_of_mother, ["relation", "A", "C"]), options, proof.CBD)
    assert proof.judge(open_gender).correct == {proof.CBD} and proof.judge(open_gender).possible == {"Uncle", "Aunt"}
    married = facts_puzzle("family_gender", sibling_of_mother + [["wife", "D", "A"]], ["relation", "A", "C"])
    assert proof.judge(record(married, options, "Uncle")).correct == {"Uncle"}
    facts = [["father", "Ravi", "Meena"], ["father", "Arun", "Ravi"], ["sister", "Gita", "Arun"],
             ["husband", "Vikram", "Gita"]]
    great = record(facts_puzzle("family", facts, ["relation", "Vikram", "Meena"]),
                   ["Great-uncle", "Grandfather", "Uncle", "Cousin"], "Great-uncle")
    assert proof.key_is_proven(great)
    who = record(facts_puzzle("family", facts, ["who", "paternal grandfather", "Meena"]),
                 ["Arun", "Ravi", "Vikram", "Gita"], "Arun")
    assert proof.key_is_proven(who)


def test_a_needed_fact_dropped_leaves_the_key_unproven():
    """Dropping the fact that fixes a gender, or an "only", or a link, turns a proven key into an unproven one."""
    facts = [["mother", "B", "C"], ["sibling", "A", "B"], ["wife", "D", "A"]]
    options = ["Uncle", "Aunt", "Cousin", proof.CBD]
    full = record(facts_puzzle("family_gender", facts, ["relation", "A", "C"]), options, "Uncle")
    assert proof.key_is_proven(full)
    for i in range(len(facts)):
        fewer = dict(full, puzzle=dict(full["puzzle"], facts=facts[:i] + facts[i + 1:]))
        assert not proof.key_is_proven(fewer), i
    only = record(pointing([("father", False), ("son", True)], speaker_gender="m"),
                  ["Himself", "Brother", "Cousin", "Son"], "Himself")
    assert proof.key_is_proven(only)
    assert not proof.key_is_proven(dict(only, puzzle=pointing([("father", False), ("son", False)])))


def test_impossible_families_prove_nothing():
    """A person who is his own grandfather, or a man married to his own daughter, leaves no world at all."""
    loop = [["father", "M", "J"], ["father", "J", "M"], ["wife", "C", "M"]]
    assert proof.facts_worlds(loop, "C", "J") == []
    own_daughter = [["mother", "U", "L"], ["child", "U", "T"], ["wife", "U", "T"]]
    assert proof.facts_worlds(own_daughter, "T", "L") == []
    assert proof.facts_worlds(own_daughter[:2], "T", "L") != []


# ---- drop one clue: the clues the kit calls needed -------------------------------------------------------------

def coded_claims(record: dict) -> tuple[list[list[str]], str, str, str]:
    """(the facts a coded key rests on, x, y, the word "x is y's <word>" they prove): the decoded expression and any
    fact in words for a relation question; the key expression's links for a which-expression question."""
    p, key = record["puzzle"], key_of(record)
    q = p["question"]
    if q[0] == "relation":
        return proof.coded_facts(p), q[1], q[2], key
    return proof.decode(p["codes"], key.split()), q[1], q[2], q[3]


def proves(facts: list[list[str]], x: str, y: str, word: str) -> bool:
    """Whether the facts make x y's <word> in every world (and leave at least one world)."""
    worlds = proof.facts_worlds(facts, x, y)
    return bool(worlds) and all(proof.holds(f, word, a, b) for f, a, b in worlds)


def test_every_link_of_a_coded_expression_is_needed(sample):
    """Each decoded link of the expression (and the fact stated beside it) is needed: dropping one unproves the key.
    The code table's decoys are not claimed needed: they are there on purpose."""
    dropped = 0
    for level in LEVELS:
        for _, r in sample[("family_coded", level)]:
            facts, x, y, word = coded_claims(r)
            assert proves(facts, x, y, word), shown(r)
            for i in range(len(facts)):
                assert not proves(facts[:i] + facts[i + 1:], x, y, word), (i, shown(r))
                dropped += 1
    assert dropped >= 60


def test_every_only_in_a_level_3_pointing_chain_is_needed(sample):
    """Dropping any one "only" of a level-3 chain leaves the checker unable to prove the key (docs/data.md)."""
    dropped = 0
    for _, r in sample[("family_pointing", 3)]:
        chain = r["puzzle"]["chain"]
        for i in [i for i, (_, only) in enumerate(chain) if only]:
            fewer = [[w, only and j != i] for j, (w, only) in enumerate(chain)]
            assert not proof.key_is_proven(dict(r, puzzle=dict(r["puzzle"], chain=fewer))), (i, shown(r))
            dropped += 1
    assert dropped >= 5
