"""Ensembles on synthetic members whose best weights are known; held-out numbers never see the fitting items."""

from __future__ import annotations

import random

import pytest

from helpers import ensemble
from helpers.io import InputError


def _one_hot_ish(k: int, j: int, p: float) -> list[float]:
    """p on choice j, the rest spread evenly."""
    return [p if x == j else (1 - p) / (k - 1) for x in range(k)]


def _dirichlet(rng: random.Random, k: int, alpha: float = 1.0) -> list[float]:
    g = [rng.gammavariate(alpha, 1.0) for _ in range(k)]
    return [x / sum(g) for x in g]


# ---------------------------------------------------------------- combine (the contract the agents use)
def test_soft_is_the_weighted_mean():
    probs = {"a": [[0.7, 0.2, 0.1], [0.5, 0.5]], "b": [[0.1, 0.3, 0.6], [0.2, 0.8]]}
    uniform = ensemble.combine(probs, None)
    assert uniform[0] == pytest.approx([0.4, 0.25, 0.35]) and uniform[1] == pytest.approx([0.35, 0.65])
    weighted = ensemble.combine(probs, {"a": 3.0, "b": 1.0})  # normalised to 0.75 / 0.25
    assert weighted[0] == pytest.approx([0.55, 0.225, 0.225])
    only_a = ensemble.combine(probs, {"a": 1.0})  # a member without a weight takes no part
    assert only_a == [pytest.approx(r) for r in probs["a"]]
    for row in weighted + uniform:
        assert sum(row) == pytest.approx(1.0)


def test_majority_counts_votes_and_breaks_ties_by_summed_probability():
    probs = {"a": [[0.6, 0.4, 0.0]], "b": [[0.45, 0.55, 0.0]], "c": [[0.0, 0.1, 0.9]], "d": [[0.2, 0.1, 0.7]]}
    out = ensemble.combine(probs, None, "majority")[0]
    # votes: A 1, B 1, C 2 -> C wins outright; shares ~ 0.25 / 0.25 / 0.5
    assert ensemble.argmax(out) == 2 and out == pytest.approx([0.25, 0.25, 0.5], abs=1e-5)
    tie = ensemble.combine({k: probs[k] for k in ("a", "b")}, None, "majority")[0]
    # one vote each for A and B; summed probability A 1.05 vs B 0.95 -> A
    assert ensemble.argmax(tie) == 0 and sum(tie) == pytest.approx(1.0)
    flipped = ensemble.combine({"a": [[0.4, 0.6, 0.0]], "b": [[0.55, 0.45, 0.0]]}, None, "majority")[0]
    assert ensemble.argmax(flipped) == 1  # now B has the larger sum (1.05): the tie-break follows the probabilities
    weighted = ensemble.combine(probs, {"a": 5, "b": 1, "c": 1, "d": 1}, "majority")[0]
    assert ensemble.argmax(weighted) == 0  # a's weighted vote (5) beats two votes of weight 1


def test_combine_rejects_mismatched_members_and_weights():
    with pytest.raises(ValueError, match="2 items"):
        ensemble.combine({"a": [[0.5, 0.5]], "b": [[0.5, 0.5], [0.5, 0.5]]}, None)
    with pytest.raises(ValueError, match="3 choices"):
        ensemble.combine({"a": [[0.5, 0.5]], "b": [[0.2, 0.3, 0.5]]}, None)
    with pytest.raises(ValueError, match="without probabilities"):
        ensemble.combine({"a": [[0.5, 0.5]]}, {"zzz": 1.0})
    with pytest.raises(ValueError, match="sum to 0"):
        ensemble.combine({"a": [[0.5, 0.5]]}, {"a": 0.0})
    with pytest.raises(ValueError, match="method"):
        ensemble.combine({"a": [[0.5, 0.5]]}, None, "median")


# ---------------------------------------------------------------- fitting where the answer is known
def test_fitted_weights_find_the_calibrated_member_and_drop_noise():
    rng = random.Random(7)
    truth, noise, answers = [], [], []
    for _ in range(2000):
        p = _dirichlet(rng, 4, 0.5)  # the calibrated member IS the answer distribution
        answers.append(rng.choices(range(4), weights=p)[0])
        truth.append(p)
        noise.append(_dirichlet(rng, 4))  # independent of the answer
    w = ensemble.fit_weights({"calibrated": truth, "noise": noise}, answers, range(2000))
    # log-loss is a proper score: the true conditional distribution beats any mixture with noise
    assert w["calibrated"] > 0.93 and w["calibrated"] + w["noise"] == pytest.approx(1.0)


def test_fitted_weights_split_evenly_between_complementary_members():
    k, n = 4, 400
    answers = [i % k for i in range(n)]
    # left knows the first half (0.97 on the answer), right the second; each is uniform where it does not know
    left = [_one_hot_ish(k, a, 0.97) if i < n // 2 else [1 / k] * k for i, a in enumerate(answers)]
    right = [[1 / k] * k if i < n // 2 else _one_hot_ish(k, a, 0.97) for i, a in enumerate(answers)]
    w = ensemble.fit_weights({"left": left, "right": right}, answers, range(n))
    assert w["left"] == pytest.approx(0.5, abs=0.01)
    # three members, one of them always wrong and confident: it gets (almost) nothing
    wrong = [_one_hot_ish(k, (a + 1) % k, 0.9) for a in answers]
    w3 = ensemble.fit_weights({"left": left, "right": right, "wrong": wrong}, answers, range(n))
    assert w3["wrong"] < 0.01 and w3["left"] == pytest.approx(w3["right"], abs=0.01)


def test_accuracy_weights_are_proportional_to_fit_accuracy():
    answers = [0, 0, 0, 0]
    probs = {"a": [[0.9, 0.1]] * 4, "b": [[0.9, 0.1]] * 2 + [[0.1, 0.9]] * 2}
    assert ensemble.accuracy_weights(probs, answers, range(4)) == pytest.approx({"a": 2 / 3, "b": 1 / 3})


# ---------------------------------------------------------------- splits and held-out honesty
def test_split_is_disjoint_complete_seeded_and_stratified():
    groups = ["x"] * 30 + ["y"] * 10
    fit, held = ensemble.split_indices(40, 0.5, seed=3, groups=groups)
    assert not set(fit) & set(held) and sorted(fit + held) == list(range(40))
    assert sum(groups[i] == "y" for i in fit) == 5 and sum(groups[i] == "x" for i in fit) == 15
    assert (fit, held) == ensemble.split_indices(40, 0.5, seed=3, groups=groups)
    assert (fit, held) != ensemble.split_indices(40, 0.5, seed=4, groups=groups)


def _leaky_world(n: int = 200, seed: int = 0):
    """'leaky' is right on the fitting items and wrong on every held-out one; 'steady' is right on 60% of all."""
    rng = random.Random(seed)
    answers = [rng.randrange(4) for _ in range(n)]
    fit, held = ensemble.split_indices(n, 0.5, seed=seed)
    fit_set = set(fit)
    leaky = [_one_hot_ish(4, a if i in fit_set else (a + 1) % 4, 0.9) for i, a in enumerate(answers)]
    steady = [_one_hot_ish(4, a if rng.random() < 0.6 else (a + 2) % 4, 0.6) for a in answers]
    return answers, fit, held, {"leaky": leaky, "steady": steady}


def test_heldout_accuracy_is_measured_on_items_the_weights_never_saw():
    answers, fit, held, probs = _leaky_world()
    result = ensemble.evaluate_candidates(probs, answers, fit, held)
    fitted = result["candidates"]["soft_fitted"]
    # Fitting saw only the fitting part, where 'leaky' is perfect: it takes nearly all the weight ...
    assert fitted["weights"]["leaky"] > 0.9 and fitted["fit_accuracy"] == 1.0
    # ... and the held-out number exposes it, because it is computed on the other items only.
    assert result["members"]["leaky"]["heldout_accuracy"] == 0.0
    assert fitted["heldout_accuracy"] < 0.05
    expect = ensemble.accuracy(ensemble.combine(probs, fitted["weights"]), answers, held)
    assert fitted["heldout_accuracy"] == expect and result["heldout_items"] == len(held)
    # The choice is made by cross-validation inside the fitting part, so it too never looked at held-out items:
    # changing every held-out probability changes the held-out numbers and nothing else.
    scrambled = {m: [p if i in set(fit) else list(reversed(p)) for i, p in enumerate(rows)]
                 for m, rows in probs.items()}
    again = ensemble.evaluate_candidates(scrambled, answers, fit, held)
    assert again["chosen"] == result["chosen"] and again["best_member"] == result["best_member"]
    for kind, cand in again["candidates"].items():
        assert cand["weights"] == pytest.approx(result["candidates"][kind]["weights"])
        assert cand["cv_accuracy"] == result["candidates"][kind]["cv_accuracy"]
    assert again["members"]["leaky"]["heldout_accuracy"] != result["members"]["leaky"]["heldout_accuracy"]
    with pytest.raises(ValueError, match="overlap"):
        ensemble.evaluate_candidates(probs, answers, fit, held + fit[:1])


def test_summary_names_method_members_and_weights_for_the_agents():
    rng = random.Random(1)
    answers = [rng.randrange(4) for _ in range(300)]
    probs = {m: [_one_hot_ish(4, a if rng.random() < acc else (a + 1) % 4, 0.7) for a in answers]
             for m, acc in (("m1", 0.8), ("m2", 0.7), ("m3", 0.6))}
    fit, held = ensemble.split_indices(300, 0.5, seed=0)
    result = ensemble.evaluate_candidates(probs, answers, fit, held)
    ids = [f"q{i}" for i in range(300)]
    summary = ensemble.summary_record(result, fit_ids=[ids[i] for i in fit], heldout_ids=[ids[i] for i in held])
    assert summary["method"] in ("soft", "majority", "single") and summary["members"]
    assert set(summary["weights"]) == set(summary["members"]) and sum(summary["weights"].values()) == pytest.approx(1)
    assert summary["best_member"] == "m1"
    assert {"m1", "m2", "m3", "oracle", "soft_fitted", "majority"} <= set(summary["heldout_accuracy"])
    assert summary["heldout_accuracy"]["oracle"] >= max(summary["heldout_accuracy"][m] for m in probs)
    assert not set(summary["fit_ids"]) & set(summary["heldout_ids"])
    agree = summary["agreement_heldout"]
    assert agree["m1"]["m1"] == 1.0 and agree["m1"]["m2"] == agree["m2"]["m1"] < 1.0


def test_align_checks_every_member_scored_the_same_questions():
    rows = {"a": [{"id": "q1", "answer": 0, "source": "s", "probs": [0.6, 0.4]},
                  {"id": "q2", "answer": 1, "source": "s", "probs": [0.3, 0.7]}],
            "b": [{"id": "q2", "answer": 1, "source": "s", "probs": [0.5, 0.5]},
                  {"id": "q1", "answer": 0, "source": "s", "probs": [0.9, 0.1]}]}
    ids, answers, sources, probs = ensemble.align(rows)
    assert ids == ["q1", "q2"] and answers == [0, 1] and probs["b"] == [[0.9, 0.1], [0.5, 0.5]]
    rows["b"][0]["answer"] = 0
    with pytest.raises(InputError, match=r"b\.jsonl: record q2: field 'answer'"):
        ensemble.align(rows, {"b": "b.jsonl"})
    with pytest.raises(InputError, match="did not score"):
        ensemble.align({"a": rows["a"], "c": rows["a"][:1]}, {"c": "c.jsonl"})


def test_hand_set_weights_are_a_candidate_without_fitting():
    answers, fit, held, probs = _leaky_world()
    seeds = {"fixed_seeds": {"leaky": 0.3, "steady": 0.4, "absent_member": 0.3}}
    result = ensemble.evaluate_candidates(probs, answers, fit, held, fixed=seeds)
    cand = result["candidates"]["fixed_seeds"]
    # the absent member's 0.3 is dropped, the rest normalised: 0.3 / 0.7 and 0.4 / 0.7
    assert cand["method"] == "soft" and cand["weights"] == pytest.approx({"leaky": 3 / 7, "steady": 4 / 7})
    assert cand["heldout_accuracy"] == ensemble.accuracy(ensemble.combine(probs, cand["weights"]), answers, held)
    assert list(result["candidates"])[:3] == ["single", "soft_uniform", "fixed_seeds"]
    none_present = ensemble.evaluate_candidates(probs, answers, fit, held, fixed={"x": {"absent_member": 1.0}})
    assert "x" not in none_present["candidates"]
