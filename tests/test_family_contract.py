"""The family contract (helpers.puzzles.families; docs/new-topic.md): every registered family, clause by clause.

Clauses held here: registered whole (its topic in a shipped edition and routed to it, asked by the base profile, an
independent brute force in the tests); the reader reads back every question it writes; for the families of the
contract, the solver agrees with an independent brute force (tests/_brute_logic.py), every deduction is checked step
by step and a tampered one is refused, and the question writer's and reasoner's chats are built and proven. Held in
the files that already run every family: levels of rising measured difficulty (test_puzzles.py), blind strategies at
chance on 600 questions (test_blind_strategies.py), varied phrasing (test_puzzle_variety.py), form shares
(test_puzzles.py). The samples are the shared pool's (tests/_pool.py), so this file builds almost nothing of its own.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from helpers import puzzles
from helpers.agents import topics as topics_mod
from helpers.agents.stages import reasoner_data, writer_data
from helpers.puzzles import families
from helpers.puzzles.deduction.measure import timed_verdict

import _pool
from _brute_logic import BRUTE

ROOT = Path(__file__).resolve().parent.parent
# The first twelve families' independent brute forces live in their own proof tests.
PROOF_FILES = {"tests/test_proof_seating.py": [k for k in puzzles.KINDS if puzzles.TOPICS[k][0] == "Puzzles"],
               "tests/_proof_kinship.py": ["family", "family_pointing", "family_coded", "family_gender"]}
# Per family and level: the solver and the brute force compared (the syllogism brute force lists 2^15 worlds in
# plain Python, ~0.2 s a four-class puzzle), the deductions checked, the questions read back.
BRUTE_N, DEDUCED_N, READ_N = 8, 40, 4


def test_every_family_is_registered_whole():
    """Each family's own topic routes to it; the base profile asks it; and an independent brute force of its answers
    exists in the tests. (Every topic of a shipped edition has a family: tests/test_puzzles.py.)"""
    proven = set(BRUTE) | {k for kinds in PROOF_FILES.values() for k in kinds}
    for kind in puzzles.KINDS:
        pair = puzzles.TOPICS[kind]
        assert kind in topics_mod.generator_kinds(*pair), f"{kind}: its own topic does not route to it"
        assert kind in proven, f"{kind}: no independent brute force in the tests"
    assert all((ROOT / f).exists() for f in PROOF_FILES)
    text = (ROOT / "configs" / "base.yaml").read_text(encoding="utf-8")
    assert all(text.count(f"- {kind}\n") == 2 for kind in puzzles.KINDS), "data.puzzle_kinds and agents.puzzle_kinds"


def test_every_module_of_the_contract_has_its_parts():
    parts = ("KINDS", "TOPIC", "KEYWORDS", "FAST", "FORM_SHARES", "build", "render", "parse", "possible_answers",
             "deduce", "check", "explain", "work")
    for module in families.MODULES:
        missing = [p for p in parts if not hasattr(module, p)]
        assert not missing, f"{module.__name__} lacks {missing}"
        assert sorted(module.FORM_SHARES) == list(puzzles.LEVELS)


@pytest.mark.parametrize("kind", puzzles.KINDS)
def test_the_reader_reads_back_every_question(kind):
    for level in puzzles.LEVELS:
        for rec in _pool.records(kind, level, READ_N):
            index, puzzle, why = puzzles.prove_text(rec["question"], rec["choices"])
            assert why is None and index == rec["answer"] and puzzle["kind"] == kind, (kind, level, why)


def _key(rec: dict) -> str:
    return rec["choices"][rec["answer"]]


@pytest.mark.parametrize("kind", families.KINDS)
def test_the_solver_agrees_with_an_independent_brute_force(kind):
    module = families.module(kind)
    for level in puzzles.LEVELS:
        for rec in _pool.records(kind, level, BRUTE_N):
            assert BRUTE[kind](rec["puzzle"]) == module.possible_answers(rec["puzzle"]) == {_key(rec)}, rec["question"]


def _wrong_claim(kind: str, puzzle: dict, steps: list) -> list | None:
    """The deduction with its first claim made false: another kind for a person, a conclusion's fact negated, a
    position's value or a leg's end moved by one; None when it claims nothing (a syllogism shown by witnesses alone)."""
    out = list(steps)
    i = next((i for i, s in enumerate(out) if getattr(s, "claims", None) or getattr(s, "value", None) is not None
              or getattr(s, "at", None) is not None), None)
    if i is None:
        return None
    s = out[i]
    if kind == "truth_liars":
        tag, person, was = s.claims[0]
        out[i] = dataclasses.replace(s, claims=((tag, person, next(k for k in puzzle["kinds"] if k != was)),))
    elif kind == "syllogism":
        fact = s.claims[0]
        out[i] = dataclasses.replace(s, claims=(fact[1] if fact[0] == "not" else ("not", fact),))
    elif kind == "alnum_series":
        out[i] = dataclasses.replace(s, value=s.value + 1)
    else:
        out[i] = dataclasses.replace(s, at=(s.at[0] + 1, *s.at[1:]))
    return out


@pytest.mark.parametrize("kind", families.KINDS)
def test_every_deduction_is_checked_and_a_tampered_one_is_refused(kind):
    module, tampered = families.module(kind), 0
    for level in puzzles.LEVELS:
        for i, rec in enumerate(_pool.records(kind, level, DEDUCED_N)):
            outcome, text, _ = timed_verdict(rec["puzzle"], _key(rec))
            assert outcome == "ok" and text == rec["explanation"], (kind, level, outcome)
            steps = module.deduce(rec["puzzle"], _key(rec))
            wrong = rec["choices"][(rec["answer"] + 1) % 4]
            assert module.check(rec["puzzle"], steps[:-1] + [dataclasses.replace(steps[-1], answer=wrong)],
                                _key(rec)), "a deduction concluding a wrong option passed"
            assert module.check(rec["puzzle"], steps[1:], _key(rec)), "a deduction missing its first step passed"
            wrong_claim = _wrong_claim(kind, rec["puzzle"], steps)
            tampered += wrong_claim is not None
            assert wrong_claim is None or module.check(rec["puzzle"], wrong_claim, _key(rec)), \
                "a deduction with one false claim passed"
    assert tampered >= DEDUCED_N  # most deductions claim something to make false


@pytest.mark.parametrize("kind", families.KINDS)
def test_the_agents_chats_are_built_for_the_family(kind):
    """The question writer's chats (proven by prove_text, the key at the asked letter) and the reasoner's (each a
    checked deduction) exist for the family's own topic at every level."""
    topic, subtopic = puzzles.TOPICS[kind]
    writer = writer_data.writer_records(6, seed=1, topics={topic: [subtopic]}, kinds=(kind,))
    for rec in writer:
        index, _, why = puzzles.prove_text(rec["question"], rec["choices"])
        assert why is None and index == rec["answer"] and rec["chat"][1]["content"].count(subtopic)
    assert {r["puzzle"]["level"] for r in writer} == set(puzzles.LEVELS)
    stats: Counter = Counter()
    reasoner = reasoner_data.reasoner_records(6, seed=1, kinds=(kind,), levels=puzzles.LEVELS, stats=stats)
    assert len(reasoner) == 6 and {r["reasoning"] for r in reasoner} == {"deduction"}, stats
    assert all(r["chat"][-1]["content"].endswith(f"Answer: {'ABCD'[r['answer']]}") for r in reasoner)


def test_a_syllogism_conclusion_s_form_is_drawn_apart_from_its_outcome():
    """The options are the exam's fixed four, so a conclusion's form must tell nothing of whether it follows: each
    form is drawn apart from the outcome, and a pair of forms that cannot take the outcome would be redrawn, which
    ties form to outcome. No level may redraw (level 1 asks no "All" conclusion for this: with it, 7 of the 64 form
    and outcome pairs could not be built, and "All" followed 39% of the time, "Some" 63%)."""
    import random
    from helpers.puzzles import syllogism
    for level in puzzles.LEVELS:
        stats: dict = {}
        rng = random.Random(f"contract:syllogism:{level}")
        built = [syllogism.build(rng, [], kind="syllogism", level=level, stats=stats) for _ in range(100)]
        assert None not in built and "forms_redrawn" not in stats, (level, stats)


def test_a_series_step_that_skips_the_simplest_rule_is_refused():
    """A position that steps +a, claimed as "steps alternate +a, +a": the same values, but not the simplest rule that
    fits, which is what makes a series fair. Planted, this clause of series.check went uncaught by every other test."""
    from helpers.puzzles import series
    turned = 0
    for rec in _pool.records("alnum_series", 1, DEDUCED_N):
        steps = series.deduce(rec["puzzle"], _key(rec))
        at = next((i for i, s in enumerate(steps) if s.rule is not None and s.rule.kind == "step"), None)
        if at is None:
            continue
        dressed = dataclasses.replace(steps[at], rule=series.Rule("alternate", steps[at].rule.a, steps[at].rule.a))
        problems = series.check(rec["puzzle"], steps[:at] + [dressed] + steps[at + 1:], _key(rec))
        assert any("a simpler rule fits" in p for p in problems), problems
        turned += 1
    assert turned >= DEDUCED_N // 2
