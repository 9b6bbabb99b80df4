"""New seating families (helpers.puzzles.seating.layouts, on text, solver, world): generated puzzles are proven, pruned
and short; crafted puzzles with known answers and ambiguities; per-sitter left/right; the CSP against brute force."""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from helpers import puzzles
from helpers.puzzles import csp
from helpers.puzzles.seating import layouts
from helpers.puzzles.seating import solver as seating_solver
from helpers.puzzles.seating import text as seating_text
from helpers.puzzles.seating import world as seating_world


NAMES = [n for n, _ in puzzles.NAMES]
PER_COMBO = 15  # generated puzzles per kind x level (the fixture: ~30 s alone on this 2-core EPYC)


def generate(kind: str, level: int, n: int, seed: str = "t") -> tuple[list[dict], dict, int]:
    """n accepted builds from a fixed seed, the rejection stats and the number of attempts."""
    rng, stats, out, attempts = random.Random(f"{seed}:{kind}:{level}"), {}, [], 0
    while len(out) < n:
        attempts += 1
        built = layouts.build(rng, NAMES, kind=kind, level=level, stats=stats)
        if built is not None:
            out.append(built)
    return out, stats, attempts


@pytest.fixture(scope="module")
def generated() -> dict:
    """PER_COMBO puzzles for every kind x level, built once for the module."""
    return {(k, lv): generate(k, lv, PER_COMBO) for k in layouts.KINDS for lv in (1, 2, 3)}


COMBOS = [(k, lv) for k in layouts.KINDS for lv in (1, 2, 3)]


# ---- generated puzzles -------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,level", COMBOS)
def test_generated_answer_is_unique_and_distractors_impossible(generated, kind, level):
    built, _, _ = generated[(kind, level)]
    for b in built:
        p = b["puzzle"]
        assert p["kind"] == kind and json.loads(json.dumps(p)) == p  # plain JSON, nothing hidden
        assert not {"world", "seat", "face"} & set(p)
        proven = layouts.possible_answers(p)
        assert proven == {b["answer"]}, (p, proven)
        assert len(set(b["distractors"])) == 3 and b["answer"] not in b["distractors"]
        assert not proven & set(b["distractors"])
        assert layouts.NO_ANSWER not in b["distractors"]


@pytest.mark.parametrize("kind,level", COMBOS)
def test_generated_clues_are_each_necessary(generated, kind, level):
    """Pruned puzzles: dropping any one clue lets a second answer in."""
    built, _, _ = generated[(kind, level)]
    for b in built:
        p = b["puzzle"]
        assert layouts.min_clues(kind, level) <= len(p["clues"]) <= layouts._max_clues(kind, level)
        assert len(p["phrasing"]) == len(p["clues"])
        for i in range(len(p["clues"])):
            fewer = dict(p, clues=p["clues"][:i] + p["clues"][i + 1:],
                         phrasing=p["phrasing"][:i] + p["phrasing"][i + 1:])
            assert len(layouts.possible_answers(fewer)) > 1, (p, i)


@pytest.mark.parametrize("kind,level", COMBOS)
def test_generated_text_fits_and_explanation_is_short(generated, kind, level):
    built, _, _ = generated[(kind, level)]
    for b in built:
        p = b["puzzle"]
        text = layouts.render(p)
        choices = [b["answer"], *b["distractors"]]
        assert layouts.official_length(text, choices) < 400
        assert puzzles.official_length(text, choices) == layouts.official_length(text, choices)
        expl = layouts.explain(p, b["answer"])
        assert 5 < len(expl.split()) < 100  # helpers.puzzles rejects 100 words or more
        assert b["answer"] in expl
        marks = [expl.index(f"clue {i + 1}") for i in range(len(p["clues"]))]
        assert marks == sorted(marks)  # the clues are named in order


@pytest.mark.parametrize("kind,level", COMBOS)
def test_generated_work_is_consistent(generated, kind, level):
    built, _, _ = generated[(kind, level)]
    for b in built:
        p = b["puzzle"]
        w = layouts.work(p)
        after = w["log2_after"]
        assert w["steps"] == len(p["clues"]) == len(after)
        assert all(x >= y for x, y in zip([w["log2_space"], *after], after))
        model = layouts.Model(p)
        worlds = seating_solver.solve(model, p["clues"]).count()  # from scratch, not the incremental trace
        assert w["worlds"] == worlds >= 1
        assert after[-1] == round(math.log2(worlds), 3)


def test_levels_rise_in_difficulty(generated):
    """Per kind, level 3 needs more clues or searches a bigger space than level 1 (the solver's work)."""
    for kind in layouts.KINDS:
        work = {lv: [layouts.work(b["puzzle"]) for b in generated[(kind, lv)][0]] for lv in (1, 2, 3)}
        load = {lv: np.mean([w["steps"] + 0.25 * w["log2_space"] for w in ws]) for lv, ws in work.items()}
        assert load[1] < load[2] < load[3], (kind, load)


def test_rejections_are_counted(generated):
    """Every None from build() is counted once under a reason."""
    for (kind, level), (built, stats, attempts) in generated.items():
        assert sum(stats.values()) == attempts - len(built), (kind, level, stats)
        assert set(stats) <= {"too_long", "too_easy", "too_many_clues", "undetermined", "too_big", "no_question",
                              "no_answer_in_world", "few_choices", "shape_unused", "key_unnamed"}, stats


def test_phrasings_vary(generated):
    """Every clue type has 3+ distinct wordings, every question 3+ and every setup 4+, and the generator uses them."""
    used: dict[str, set[int]] = {}
    intros: dict[str, set[int]] = {}
    for (kind, _), (built, _, _) in generated.items():
        for b in built:
            p = b["puzzle"]
            for clue, ph in zip(p["clues"], p["phrasing"]):
                used.setdefault(clue[0], set()).add(ph)
            assert len(set(layouts.question_variants(p))) >= 3 and len(set(layouts.intro_variants(p))) >= 4
            intros.setdefault(kind, set()).add(p["intro"])
        sample = built[0]["puzzle"]
        for clue in layouts.all_clues(sample):
            assert len(set(layouts.clue_variants(sample, clue))) >= 3, clue
    common = [t for t in ("left", "right", "adj", "same", "faces") if t in used]
    assert len(common) >= 4 and all(len(used[t]) >= 3 for t in common), used
    assert all(len(v) >= 3 for v in intros.values()), intros


def form_of(puzzle: dict, level: int) -> str:
    """The question form (layouts.question_forms) a built puzzle of `level` asks."""
    q = puzzle["question"]
    if q[0] == "who" and q[1] in ("faces", "nbr"):
        return q[1]
    if q[0] == "who" and q[1].startswith("faces_"):
        return "faces_rel"
    if q[0] == "attr" and puzzle["kind"] == "seating_attributes" and level == 1:
        return "attr" if q[2] == "same" else "attr_near"
    return q[0]


def test_not_next_to_is_only_said_of_two_people():
    """The solvers read "Q does not sit next to the tea drinker" literally (Q may drink tea), so the generator says
    it only where Q is not the tea drinker, and offers such statements only of two named people: a reader who takes
    the words as two people then finds the same key (tests/test_proof_seating.py reads every key both ways)."""
    puzzle = {"kind": "seating_attributes", "people": ["Q", "R", "S", "T"], "groups": {"drink": ["tea", "milk", "soda",
              "cola"]}, "facing": {}, "half": False, "question": ["who", "same", "tea", 0]}
    seat = {**dict(zip(puzzle["people"], range(4))), **dict(zip(puzzle["groups"]["drink"], range(4)))}
    world = {"seat": seat, "face": {}, "corner_face": None}
    said = [c for c in layouts._candidates(puzzle, world, 2, random.Random(1)) if c[0] in layouts.NEGATIVE_PAIRS]
    assert said and all(seat[c[1]] != seat[c[2]] for c in said), said
    offered = layouts._statable(puzzle, 2, "not_adj")
    assert offered and all({c[1], c[2]} <= {"Q", "R", "S", "T"} for c in offered), offered


def test_casts_are_given_names_or_scattered_letters(generated):
    """Most casts are given names from puzzles.NAMES; the rest single letters drawn at random, rarely a run."""
    casts = [b["puzzle"]["people"] for built, _, _ in generated.values() for b in built]
    lettered = [c for c in casts if all(len(p) == 1 for p in c)]
    named = [c for c in casts if all(p in NAMES for p in c)]
    assert len(lettered) + len(named) == len(casts)
    # 50.7% lettered on this sample once a "which statement is true?" key could no longer restate a clue (one more clue
    # on average, so more long texts shortened to letters); a builder that letters every cast gives 100%.
    assert 0.1 < len(lettered) / len(casts) < 0.55, len(lettered) / len(casts)
    assert sum("".join(c) in layouts.LETTERS for c in lettered) < len(lettered) / 4
    assert len({p for c in named for p in c}) > 100


def test_question_forms_spread_over_each_kind(generated):
    """Every form of a kind is asked (a form the direct builds missed, being rejected more often than the others, is
    built by make_puzzle(form=)); make_puzzle draws the form once per puzzle, so each is asked equally often."""
    for kind in layouts.KINDS:
        for lv in (1, 2, 3):
            forms = {form_of(b["puzzle"], lv) for b in generated[(kind, lv)][0]}
            assert forms <= set(layouts.question_forms(kind, lv)), (kind, lv, forms)
            for missing in set(layouts.question_forms(kind, lv)) - forms:
                rec = puzzles.make_puzzle(kind, lv, 0, random.Random(missing), {}, id="x", form=missing)
                assert form_of(rec["puzzle"], lv) == missing, (kind, lv, missing, rec["question"])
    rng = random.Random(3)
    drawn = Counter(form_of(puzzles.make_puzzle("seating_row_facing", 1, i % 4, rng, {}, id="x")["puzzle"], 1)
                    for i in range(80))
    assert set(drawn) == set(layouts.question_forms("seating_row_facing", 1)) and min(drawn.values()) >= 10, drawn
    attrs = [form_of(b["puzzle"], lv) for lv in (1, 2, 3) for b in generated[("seating_attributes", lv)][0]]
    # the organisers' example asks an attribute: ~42% of the builds do (34-48% over three 90-build seeds; the old
    # generator 1 in 8). This fixed sample's share moves whenever a generator change moves the random stream (a
    # 45-build share varies by about 7 points), so the floor sits below the range, well above the old generator
    assert sum(f.startswith("attr") for f in attrs) >= 0.3 * len(attrs), attrs


def test_a_who_question_never_offers_the_person_it_asks_about(generated):
    """"Who sits to Ann's left?" with Ann among the wrong choices gives a blind opponent a free elimination. The asked
    person may fill a place only where the group has too few others for three wrong choices (a table of four)."""
    asked = 0
    for (kind, level), (builds, _, _) in generated.items():
        for b in builds:
            q = b["puzzle"]["question"]
            if q[0] not in ("who", "attr"):
                continue
            group = q[1] if q[0] == "attr" else "people"
            if len(seating_text.members(b["puzzle"], group)) - 2 >= 3:
                asked += 1
                assert q[-2] not in b["distractors"], (kind, level, q, b["answer"], b["distractors"])
    assert asked >= 60, asked  # the fixture asks ~100 such questions


@pytest.mark.parametrize("kind", ["seating_parallel_rows", "seating_row_facing"])
def test_every_wording_of_a_side_names_that_side_and_never_the_other(generated, kind):
    """Read with this test's own table, not the writer's: the puzzle reader reads a text back through the wording
    table that wrote it, so a side swapped in that table round-trips unseen (docs/testing.md, planted bugs)."""
    puzzle = generated[(kind, 2)][0][0]["puzzle"]
    a, b = puzzle["people"][:2]
    for side, other in (("left", "right"), ("right", "left")):
        for clue in ([side[0] + "end", a], [side, a, b, 1], [side, a, b, 2]):
            for text in seating_text.clue_variants(puzzle, clue):
                words = set(re.findall(r"[a-z]+", text.lower()))
                assert side in words and other not in words, (kind, clue, text)


@pytest.mark.parametrize("kind", layouts.KINDS)
def test_a_given_form_is_asked(kind):
    """build(form=...) asks that form (the Q-agent compares candidates of one form)."""
    for level in (1, 2, 3):
        for form in layouts.question_forms(kind, level):
            rng, b = random.Random(f"form:{kind}:{level}:{form}"), None
            for _ in range(300):  # a form that can no longer be built fails here instead of hanging
                b = layouts.build(rng, NAMES, kind=kind, level=level, stats={}, form=form)
                if b is not None:
                    break
            assert b is not None and form_of(b["puzzle"], level) == form, (kind, level, form)


def test_count_keys_take_every_rank_equally():
    """A count question's options are four consecutive numbers with the key at a uniformly drawn rank."""
    ranks: Counter = Counter()
    for form in ("count_between", "count_face"):
        rng, found = random.Random(form), 0
        for _ in range(3000):  # bounded: a form that stops building fails the count below instead of hanging
            if found == 60:
                break
            b = layouts.build(rng, NAMES, kind="seating_row_facing", level=2, stats={}, form=form)
            if b is None:
                continue
            found += 1
            values = sorted(int(v) for v in [b["answer"], *b["distractors"]])
            assert values == list(range(values[0], values[0] + 4))
            ranks[values.index(int(b["answer"]))] += 1
        assert found == 60, (form, found)
    assert all(ranks[r] >= 18 for r in range(4)), ranks  # 120 draws: 30 expected per rank


def test_statement_questions_are_generated():
    """Level-3 "which statement is true?" puzzles: exactly one statement proven, the other three refuted."""
    rng, stats, found = random.Random("statements"), {}, []
    while len(found) < 3:
        b = layouts.build(rng, NAMES, kind="seating_row_facing", level=3, stats=stats)
        if b and b["puzzle"]["question"][0] == "statement":
            found.append(b)
    for b in found:
        p = b["puzzle"]
        texts = layouts.statement_texts(p)
        assert sorted(texts) == sorted([b["answer"], *b["distractors"]])
        assert layouts.possible_answers(p) == {b["answer"]}
        assert layouts.render(p).endswith("?")


def test_build_is_deterministic_per_seed():
    for kind in layouts.KINDS:
        a = generate(kind, 2, 3, seed="d")[0]
        assert a == generate(kind, 2, 3, seed="d")[0]
        assert a != generate(kind, 2, 3, seed="e")[0]


def test_build_is_deterministic_across_processes():
    """String hashing is salted per process: the same seed must still give the same puzzles."""
    code = ("import json, random; from helpers.puzzles.seating import layouts as a; from helpers import puzzles; "
            "names = [n for n, _ in puzzles.NAMES]; r = random.Random('x'); "
            "print(json.dumps([a.build(r, names, kind=k, level=2, stats={}) for k in a.KINDS]))")
    root = Path(__file__).resolve().parent.parent
    outs = {subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": salt}).stdout for salt in ("1", "2")}
    assert len(outs) == 1
    builds = json.loads(outs.pop())
    assert len(builds) == len(layouts.KINDS) and any(b is not None for b in builds)


def test_bad_kind_is_refused():
    with pytest.raises(ValueError):
        layouts.build(random.Random(0), NAMES, kind="seating_hexagon", level=1, stats={})


# ---- crafted puzzles -----------------------------------------------------------------------------------

def crafted(kind: str, people: list[str], clues: list, question: list, **extra) -> dict:
    """A hand-built puzzle with first phrasings everywhere."""
    p = {"kind": kind, "people": people, "groups": {}, "facing": {}, "half": False, "intro": 0, "clues": clues,
         "phrasing": [0] * len(clues), "question": question, "q_phrasing": 0, **extra}
    if question[0] == "statement":
        p.setdefault("s_phrasing", [0] * len(question[1]))
    return p


TABLE4 = ["Ann", "Ben", "Cal", "Dev"]
DRINKS = {"drink": ["tea", "milk", "soda", "cola"]}


def test_crafted_attribute_puzzle_unique_and_ambiguous():
    # Ann pinned at seat 0; facing in, left is +1: Ben 1, Cal 2 (opposite), Dev 3; tea at 3, milk at 0 (Ann)
    clues = [["left", "Ben", "Ann", 1], ["opp", "Cal", "Ann"], ["same", "Dev", "tea"], ["left", "milk", "tea", 1]]
    p = crafted("seating_attributes", TABLE4, clues, ["attr", "drink", "same", "Ann", 0], groups=DRINKS)
    assert layouts.possible_answers(p) == {"milk"}
    assert layouts.work(p)["worlds"] == 2  # soda and cola still swap between Ben and Cal
    assert layouts.render(p).endswith("What does Ann drink?")
    assert "The milk drinker sits immediately to the left of the tea drinker." in layouts.render(p)
    assert layouts.possible_answers(dict(p, clues=clues[:3], phrasing=[0] * 3)) == {"milk", "soda", "cola"}
    assert layouts.possible_answers(dict(p, question=["attr", "drink", "same", "Ben", 0])) == {"soda", "cola"}
    who = dict(p, question=["who", "right", "milk", 1])  # right of Ann (seat 0) is seat 3: Dev
    assert layouts.possible_answers(who) == {"Dev"}


def test_contradiction_proves_nothing():
    p = crafted("seating_attributes", TABLE4, [["adj", "Ben", "Ann"], ["opp", "Ben", "Ann"]],
                ["who", "opp", "Ann", 0], groups=DRINKS)
    assert layouts.possible_answers(p) == set()
    assert layouts.work(p)["worlds"] == 0


def test_mixed_facing_left_is_each_sitters_own():
    # Ann (seat 0) faces outward, so her left is seat 3; Cal faces the centre, so his left is the next seat (+1)
    facing = {"Ann": 0, "Ben": 1, "Cal": 1, "Dev": 1}
    p = crafted("seating_mixed_facing", TABLE4, [["left", "Ben", "Ann", 1], ["opp", "Cal", "Ann"]],
                ["who", "left", "Cal", 1], facing=facing)
    assert layouts.possible_answers(p) == {"Ben"}
    everyone_in = dict(p, facing={n: 1 for n in TABLE4})
    assert layouts.possible_answers(everyone_in) == {"Dev"}  # ignoring Ann's facing flips the answer
    assert "Ben, Cal and Dev face the centre; the others face outward." in layouts.render(p)


def test_mixed_facing_unknown_facing_is_inferred():
    # facing not given: Ann's left neighbour Ben could sit at seat 1 or 3, so "who is left of Cal" is open ...
    p = crafted("seating_mixed_facing", TABLE4, [["left", "Ben", "Ann", 1], ["opp", "Cal", "Ann"],
                                                 ["face", "Cal", 1]], ["who", "left", "Cal", 1])
    assert layouts.possible_answers(p) == {"Ben", "Dev"}
    # ... until Ann's facing follows from "Ann and Dev face opposite ways" and "Dev faces the centre"
    more = p["clues"] + [["diff_face", "Ann", "Dev"], ["face", "Dev", 1]]
    assert layouts.possible_answers(dict(p, clues=more, phrasing=[0] * 5)) == {"Ben"}
    # or from the two-and-two premise: Cal and Ben face in, Dev out, so Ann must face out
    clues = p["clues"] + [["same_face", "Ben", "Cal"], ["diff_face", "Dev", "Cal"]]
    half = dict(p, half=True, clues=clues, phrasing=[0] * 5)
    assert layouts.possible_answers(half) == {"Ben"}
    assert layouts.possible_answers(dict(half, half=False)) == {"Ben", "Dev"}
    assert "Two face the centre and two face outward." in layouts.render(half)


def test_row_left_follows_facing_and_counts():
    people = ["Ann", "Ben", "Cal"]
    facing = {"Ann": 0, "Ben": 1, "Cal": 1}  # Ann faces south: her left is east
    clues = [["pos", "Ann", "west", 1], ["left", "Ben", "Ann", 1]]
    p = crafted("seating_row_facing", people, clues, ["who", "left", "Cal", 1], facing=facing)
    assert layouts.possible_answers(p) == {"Ben"}  # Cal at seat 2 faces north: his left is Ben at seat 1
    assert layouts.possible_answers(dict(p, facing={"Ann": 1, "Ben": 1, "Cal": 1})) == set()  # no seat west of Ann
    assert layouts.possible_answers(dict(p, question=["count_between", "Ann", "Cal"])) == {"1"}
    assert layouts.possible_answers(dict(p, question=["who", "right", "Cal", 1])) == {layouts.NO_ANSWER}
    assert layouts.possible_answers(dict(p, question=["count_face", 1])) == {"2"}
    assert "Ben and Cal face north; the others face south." in layouts.render(p)


def test_statement_question_unique_and_ambiguous():
    people, facing = ["Ann", "Ben", "Cal"], {"Ann": 0, "Ben": 1, "Cal": 1}
    clues = [["pos", "Ann", "west", 1], ["left", "Ben", "Ann", 1]]  # Ann 0 (south), Ben 1, Cal 2
    statements = [["adj", "Ann", "Ben"], ["end", "Ben"], ["left", "Cal", "Ben", 1], ["same_face", "Ann", "Ben"]]
    p = crafted("seating_row_facing", people, clues, ["statement", statements], facing=facing)
    assert layouts.possible_answers(p) == {"Ann sits next to Ben"}
    assert layouts.statement_texts(p)[1] == "Ben sits at an extreme end"
    two_true = [statements[0], ["end", "Cal"], *statements[2:]]
    assert layouts.possible_answers(dict(p, question=["statement", two_true])) == {layouts.NO_ANSWER}
    open_ = dict(p, clues=clues[1:], phrasing=[0])  # Ann may sit at seat 1 too: then Ben is at an end
    assert len(layouts.possible_answers(open_)) > 1


def test_parallel_rows_faces_left_and_free_people():
    # row 0 (seats 0-2, west to east) faces south, row 1 (seats 3-5) faces north
    people = ["Ann", "Ben", "Cal", "Dev", "Eve", "Fay"]
    clues = [["row", "Ann", 1], ["lend", "Ann"], ["faces", "Ben", "Ann"], ["left", "Cal", "Ben", 1],
             ["right", "Dev", "Ann", 1]]
    p = crafted("seating_parallel_rows", people, clues, ["who", "faces", "Cal", 0])
    # Ann seat 3 (west end of the north-facing row); Ben faces her at seat 0; Ben faces south so his left is
    # east: Cal at seat 1; Ann's right is east: Dev at seat 4, facing Cal
    assert layouts.possible_answers(p) == {"Dev"}
    assert layouts.possible_answers(dict(p, clues=clues[:4], phrasing=[0] * 4)) == {"Dev", "Eve", "Fay"}
    assert layouts.possible_answers(dict(p, question=["who", "nbr", "Ben", 0])) == {"Cal"}
    assert layouts.possible_answers(dict(p, question=["at_end", 1, "left"])) == {"Ann"}
    assert layouts.possible_answers(dict(p, question=["who", "faces_right", "Ann", 1])) == {"Cal"}
    assert layouts.possible_answers(dict(p, question=["who", "right", "Ben", 1])) == {layouts.NO_ANSWER}
    diag = crafted("seating_parallel_rows", people, [["diag", "Ann", "Ben"]], ["who", "faces", "Ann", 0])
    assert layouts.work(diag)["worlds"] == 4 * math.factorial(4)  # 4 corner pairs, then 4! for the rest


# ---- the CSP and brute force ----------------------------------------------------------------------------

def test_csp_counts_free_variables_without_listing_them():
    prob = csp.Problem()
    g = prob.group(5)
    xs = [prob.var(range(5), g) for _ in range(5)]
    prob.var([0, 1])  # a free flag: doubles the count
    table = csp.solve(prob, [csp.Constraint((xs[0], xs[1]), lambda a, b: b == a + 1)])
    assert set(table.vars) == {xs[0], xs[1]}  # the other three seats and the flag are counted, not listed
    assert len(table.rows) == 4 and table.count() == 4 * math.factorial(3) * 2
    brute = sum(1 for p in itertools.permutations(range(5)) if p[1] == p[0] + 1) * 2
    assert table.count() == brute
    with pytest.raises(csp.TooBig):
        csp.solve(prob, [csp.Constraint(tuple(xs), lambda *c: c[0] >= 0)], budget=100)


def test_csp_chunks_big_tables_exactly(monkeypatch):
    monkeypatch.setattr(csp, "CHUNK", 64)  # force the depth-first split on a small problem
    prob = csp.Problem()
    g = prob.group(6)
    xs = [prob.var(range(6), g) for _ in range(6)]
    cons = [csp.Constraint((xs[0], xs[5]), lambda a, b: np.abs(a - b) == 1)]
    table = csp.solve(prob, cons, keep=xs)
    assert len(table.rows) == table.count() == sum(1 for p in itertools.permutations(range(6)) if abs(p[0] - p[5]) == 1)


def brute_force(p: dict) -> tuple[set[str], int]:
    """Every world by plain enumeration, checked with the generator's scalar clue code (not the CSP)."""
    people, n, kind = p["people"], len(p["people"]), p["kind"]
    pins = layouts.pin_seats(layouts.LAYOUT[kind], n)
    seatings = [s for s in itertools.permutations(range(n)) if s[0] in pins]
    groups = list(p.get("groups", {}).values())
    faces = [{}]
    if kind in layouts.FACING_KINDS:
        given = p.get("facing") or {}
        choices = [[given[x]] if x in given else [0, 1] for x in people]
        faces = [dict(zip(people, f)) for f in itertools.product(*choices)
                 if not p.get("half") or sum(f) == n // 2]
    corners = [0, 1] if kind == "seating_square" and p.get("corner_face") is None else [p.get("corner_face")]
    answers, count = set(), 0
    attrs = list(itertools.product(*[list(itertools.permutations(range(n)))] * len(groups)))
    for seats in seatings:
        for attr in attrs:
            seat = dict(zip(people, seats))
            for values, perm in zip(groups, attr):
                seat.update(zip(values, perm))
            for face, corner in itertools.product(faces, corners):
                world = {"seat": seat, "face": face, "corner_face": corner}
                if all(seating_world.holds_in_world(p, world, c) for c in p["clues"]):
                    count += 1
                    answers.add(seating_world.answer_in_world(p, world))
    return answers, count


@pytest.mark.parametrize("kind,level,n", [("seating_attributes", 1, 4), ("seating_mixed_facing", 1, 2),
                                          ("seating_mixed_facing", 2, 2), ("seating_mixed_facing", 3, 1),
                                          ("seating_parallel_rows", 1, 4),
                                          ("seating_parallel_rows", 2, 1), ("seating_row_facing", 1, 4),
                                          ("seating_row_facing", 2, 1), ("seating_square", 1, 2),
                                          ("seating_square", 3, 2), ("seating_rectangle", 1, 2),
                                          ("seating_rectangle", 2, 1)])
def test_solver_agrees_with_brute_force(generated, kind, level, n):
    small = [b for b in generated[(kind, level)][0] if len(b["puzzle"]["people"]) < 8 or not b["puzzle"]["groups"]]
    for b in small[:n]:
        p = b["puzzle"]
        answers, count = brute_force(p)
        assert answers == layouts.possible_answers(p) == {b["answer"]}
        assert count == layouts.work(p)["worlds"]
        fewer = dict(p, clues=p["clues"][1:], phrasing=p["phrasing"][1:])  # an ambiguous one too
        answers, count = brute_force(fewer)
        assert answers == layouts.possible_answers(fewer) and count == layouts.work(fewer)["worlds"]


# ---- square and rectangular tables -----------------------------------------------------------------------

EIGHT = ["Ann", "Ben", "Cal", "Dev", "Eve", "Fay", "Gus", "Hal"]


def test_square_left_follows_each_seat_facing():
    # corners (even seats) face the centre, so Ann's left is the next seat clockwise: Ben at 1, a middle seat
    # facing outward, whose right is seat 2 (Cal, a corner again); two seats to Cal's right is Ann
    clues = [["corner", "Ann"], ["left", "Ben", "Ann", 1], ["right", "Cal", "Ben", 1]]
    p = crafted("seating_square", EIGHT, clues, ["who", "right", "Cal", 2], corner_face=1)
    assert layouts.possible_answers(p) == {"Ann"}
    assert layouts.work(p)["worlds"] == math.factorial(5)
    everyone_in = crafted("seating_attributes", EIGHT, clues[1:], ["who", "right", "Cal", 2])
    assert layouts.possible_answers(everyone_in) == set()  # at a round table facing in, Cal would take Ann's seat
    text = layouts.render(p)
    assert "Those at the corners face the centre, the others outward." in text and "Ann sits at a corner." in text
    assert "Ann faces the centre." in layouts.clue_variants(p, ["corner", "Ann"])


def test_square_unknown_corner_facing_is_a_variable():
    clues = [["corner", "Ann"], ["left", "Ben", "Ann", 1], ["right", "Cal", "Ben", 1]]
    p = crafted("seating_square", EIGHT, clues, ["who", "right", "Cal", 2], corner_face=None)
    assert layouts.possible_answers(p) == {"Ann"}  # a mirror image either way: the answer holds
    assert layouts.work(p)["worlds"] == 2 * math.factorial(5)  # ... but each way is a world
    said = dict(p, clues=clues + [["face", "Ben", 0]], phrasing=[0] * 4)  # Ben, mid-side, faces out: corners in
    assert layouts.work(said)["worlds"] == math.factorial(5)
    assert layouts.possible_answers(dict(said, question=["who", "left", "Ann", 1])) == {"Ben"}
    assert "Corner sitters all face one way" in layouts.render(p)
    assert layouts.possible_answers(dict(said, clues=said["clues"] + [["face", "Cal", 0]], phrasing=[0] * 5)) == set()


def rect_xy(n: int, s: int) -> tuple[int, int]:
    """A rectangular table's seat as a point: the ends at x = -1 and x = side, the long sides at y = +1/-1."""
    side = n // 2 - 1
    if s == 0:
        return -1, 0
    if s <= side:
        return s - 1, 1
    if s == side + 1:
        return side, 0
    return side - 1 - (s - side - 2), -1


@pytest.mark.parametrize("n", [6, 8, 10])
def test_rectangle_opposite_is_straight_across(n):
    for s in range(n):
        x, y = rect_xy(n, s)
        want = (n // 2 - 1 - x - 1, 0) if y == 0 else (x, -y)  # the other end, or the same x on the other side
        assert rect_xy(n, int(layouts.opposite("rect", n, s))) == want
        assert layouts.opposite("rect", n, np.array([s]))[0] == layouts.opposite("rect", n, s)
        assert layouts.opposite("round", n, s) == (s + n // 2) % n


def test_rectangle_crafted_ends_and_opposite():
    six = EIGHT[:6]
    clues = [["end", "Ann"], ["left", "Ben", "Ann", 1], ["right", "Cal", "Ann", 1]]
    p = crafted("seating_rectangle", six, clues, ["who", "opp", "Ben", 0])
    assert layouts.possible_answers(p) == {"Cal"}  # Ann at the west end (0): Ben at 1, Cal at 5, straight across
    round_ = crafted("seating_attributes", six, clues[1:], ["who", "opp", "Ben", 0])
    assert "Cal" not in layouts.possible_answers(round_)  # round: the seat opposite 1 is 4
    assert layouts.possible_answers(dict(p, question=["who", "opp", "Ann", 0])) == {"Dev", "Eve", "Fay"}
    assert layouts.work(p)["worlds"] == math.factorial(3)
    text = layouts.render(p)
    assert "Opposite means straight across." in text and "Ann sits at one end of the table." in text


def test_rectangle_puzzles_need_the_shape(generated):
    """Every kept rectangle puzzle uses an end or straight-across clue, statement or question."""
    for lv in (1, 2, 3):
        for b in generated[("seating_rectangle", lv)][0]:
            assert layouts._uses_shape(b["puzzle"], b["puzzle"]["clues"])
            p, q = b["puzzle"], b["puzzle"]["question"]
            asked = [s[0] for s in q[1]] if q[0] == "statement" else [q[-3]] if q[0] in ("who", "attr") else []
            assert ({c[0] for c in p["clues"]} | set(asked)) & {"opp", "end", "not_end"}
