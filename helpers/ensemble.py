"""Ensembles of letter-probability members: soft voting (uniform / accuracy / fitted weights), majority vote.

Weights are fitted on one part of the validation set (`split_indices`) and every accuracy is reported on the
other part, so no reported number was seen by the fit. The seeds planned "weighted voting based on validation
performance" (0.3 / 0.4 / 0.3 over A-D probabilities, never run); `compare` measures that idea against the
alternatives on held-out questions and `choose` picks what the agents use (ensemble/summary.json).
"""

from __future__ import annotations

import math
import random
from typing import Sequence

# Majority vote breaks ties by summed probability: that sum enters the output with this tiny weight, so it
# can reorder exactly tied votes but never outvote a member (one vote of M <= 10 members is >= 0.1).
TIE_BREAK = 1e-6
EPS = 1e-12  # log(0) guard in the log-loss
METHODS = ("soft", "majority")


def _check(member_probs: dict[str, list[list[float]]]) -> tuple[list[str], int]:
    names = list(member_probs)
    if not names:
        raise ValueError("member_probs: no members")
    n = len(member_probs[names[0]])
    for name in names:
        rows = member_probs[name]
        if len(rows) != n:
            raise ValueError(f"member_probs[{name!r}]: {len(rows)} items, {names[0]!r} has {n}")
        for i, row in enumerate(rows):
            if len(row) != len(member_probs[names[0]][i]):
                raise ValueError(f"member_probs[{name!r}] item {i}: {len(row)} choices, "
                                 f"{names[0]!r} has {len(member_probs[names[0]][i])}")
    return names, n


def normalise_weights(names: Sequence[str], weights: dict[str, float] | None) -> dict[str, float]:
    """Weights summing to 1 over `names` (None = uniform; a name absent from weights gets 0)."""
    if weights is None:
        return {n: 1.0 / len(names) for n in names}
    unknown = sorted(set(weights) - set(names))
    if unknown:
        raise ValueError(f"weights name members without probabilities: {unknown} (members: {list(names)})")
    if any(not math.isfinite(w) or w < 0 for w in weights.values()):
        raise ValueError(f"weights must be finite and >= 0, got {weights}")
    total = sum(weights.get(n, 0.0) for n in names)
    if total <= 0:
        raise ValueError(f"weights sum to {total}: at least one member needs a positive weight")
    return {n: weights.get(n, 0.0) / total for n in names}


def argmax(row: Sequence[float]) -> int:
    """Index of the largest value (the first on ties)."""
    return max(range(len(row)), key=lambda j: (row[j], -j))


def combine(member_probs: dict[str, list[list[float]]], weights: dict[str, float] | None,
            method: str = "soft") -> list[list[float]]:
    """Per item a probability vector: "soft" = weighted mean of the members' probabilities, "majority" = vote
    share per choice (weighted votes when weights are given), ties broken by summed probability."""
    names, n = _check(member_probs)
    w = normalise_weights(names, weights)
    active = [m for m in names if w[m] > 0]
    out = []
    for i in range(n):
        k = len(member_probs[names[0]][i])
        mean = [sum(w[m] * member_probs[m][i][j] for m in active) for j in range(k)]
        if method == "soft":
            out.append(mean)
        elif method == "majority":
            votes = [0.0] * k
            for m in active:
                votes[argmax(member_probs[m][i])] += w[m]
            mixed = [(1 - TIE_BREAK) * v + TIE_BREAK * p for v, p in zip(votes, mean)]
            total = sum(mixed)
            out.append([x / total for x in mixed])
        else:
            raise ValueError(f"method {method!r} is not one of {METHODS}")
    return out


# ---------------------------------------------------------------- metrics on items
def predictions(probs: list[list[float]]) -> list[int]:
    """The argmax choice of each item."""
    return [argmax(row) for row in probs]


def accuracy(probs: list[list[float]], answers: Sequence[int], idx: Sequence[int] | None = None) -> float:
    """Share of items (all, or the given indices) whose argmax is the answer."""
    idx = range(len(answers)) if idx is None else idx
    idx = list(idx)
    if not idx:
        return float("nan")
    return sum(argmax(probs[i]) == answers[i] for i in idx) / len(idx)


def log_loss(probs: list[list[float]], answers: Sequence[int], idx: Sequence[int] | None = None) -> float:
    """Mean -log P(answer) over the items (all, or the given indices)."""
    idx = list(range(len(answers)) if idx is None else idx)
    return sum(-math.log(max(probs[i][answers[i]], EPS)) for i in idx) / max(len(idx), 1)


def oracle_accuracy(member_probs: dict[str, list[list[float]]], answers: Sequence[int],
                    idx: Sequence[int] | None = None) -> float:
    """Share of items at least one member gets right: the ceiling of any vote over these members."""
    idx = list(range(len(answers)) if idx is None else idx)
    hits = sum(any(argmax(p[i]) == answers[i] for p in member_probs.values()) for i in idx)
    return hits / len(idx) if idx else float("nan")


def agreement_matrix(member_probs: dict[str, list[list[float]]], idx: Sequence[int] | None = None
                     ) -> dict[str, dict[str, float]]:
    """Share of items on which each pair of members picks the same choice (1.0 on the diagonal)."""
    names, n = _check(member_probs)
    idx = list(range(n) if idx is None else idx)
    picks = {m: predictions(member_probs[m]) for m in names}
    return {a: {b: (sum(picks[a][i] == picks[b][i] for i in idx) / len(idx) if idx else float("nan"))
                for b in names} for a in names}


# ---------------------------------------------------------------- splits and weights
def split_indices(n: int, fit_fraction: float = 0.5, seed: int = 0,
                  groups: Sequence[str] | None = None) -> tuple[list[int], list[int]]:
    """Disjoint (fit, held-out) index lists covering 0..n-1; seeded; per group (e.g. source) when given."""
    if not 0 < fit_fraction < 1:
        raise ValueError(f"fit_fraction must be in (0, 1), got {fit_fraction}")
    rng = random.Random(seed)
    by_group: dict[str, list[int]] = {}
    for i in range(n):
        by_group.setdefault(groups[i] if groups is not None else "", []).append(i)
    fit, held = [], []
    for key in sorted(by_group):
        members = by_group[key]
        rng.shuffle(members)
        cut = round(len(members) * fit_fraction)
        fit += members[:cut]
        held += members[cut:]
    return sorted(fit), sorted(held)


def accuracy_weights(member_probs: dict[str, list[list[float]]], answers: Sequence[int],
                     idx: Sequence[int]) -> dict[str, float]:
    """Weights proportional to each member's accuracy on the given (fitting) items."""
    acc = {m: accuracy(p, answers, idx) for m, p in member_probs.items()}
    return normalise_weights(list(acc), acc if sum(acc.values()) > 0 else None)


def fit_weights(member_probs: dict[str, list[list[float]]], answers: Sequence[int], idx: Sequence[int], *,
                steps: int = 200) -> dict[str, float]:
    """Soft-vote weights on the simplex minimising the log-loss of the mixture on the given (fitting) items."""
    import torch
    names, _ = _check(member_probs)
    idx = list(idx)
    if not idx:
        raise ValueError("fit_weights: no items to fit on")
    # P(answer) of each member on each fitting item: the mixture's P(answer) is linear in the weights.
    p = torch.tensor([[member_probs[m][i][answers[i]] for m in names] for i in idx], dtype=torch.float64)
    theta = torch.zeros(len(names), dtype=torch.float64, requires_grad=True)  # softmax(0) = uniform start
    opt = torch.optim.LBFGS([theta], lr=0.5, max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = -torch.log(p @ torch.softmax(theta, 0) + EPS).mean()
        loss.backward()
        return loss

    opt.step(closure)
    w = torch.softmax(theta.detach(), 0).tolist()
    return {m: float(x) for m, x in zip(names, w)}


# ---------------------------------------------------------------- candidates, selection, report
# Simplest first: on a tie in cross-validated accuracy the simpler candidate wins (fewer fitted numbers).
CANDIDATES = ("single", "soft_uniform", "majority", "soft_accuracy", "soft_fitted")


def candidate_weights(kind: str, member_probs: dict[str, list[list[float]]], answers: Sequence[int],
                      idx: Sequence[int], fixed: dict[str, dict[str, float]] | None = None
                      ) -> tuple[str, dict[str, float]]:
    """(combine method, weights) of one candidate, any weights derived from the items `idx` only.

    `fixed` names soft votes with weights set by hand (e.g. the original team's 0.3 / 0.4 / 0.3): nothing is fitted, and
    the weights of members not present are dropped before normalising.
    """
    names = list(member_probs)
    if fixed and kind in fixed:
        return "soft", normalise_weights(names, {m: w for m, w in fixed[kind].items() if m in member_probs})
    if kind == "single":
        best = max(names, key=lambda m: (accuracy(member_probs[m], answers, idx), -names.index(m)))
        return "single", {best: 1.0}
    if kind == "soft_uniform":
        return "soft", normalise_weights(names, None)
    if kind == "majority":
        return "majority", normalise_weights(names, None)
    if kind == "soft_accuracy":
        return "soft", accuracy_weights(member_probs, answers, idx)
    if kind == "soft_fitted":
        return "soft", fit_weights(member_probs, answers, idx)
    raise ValueError(f"candidate {kind!r} is not one of {CANDIDATES}")


def candidate_probs(method: str, weights: dict[str, float], member_probs: dict[str, list[list[float]]]
                    ) -> list[list[float]]:
    """The candidate's per-item probabilities ("single" is its one member's own)."""
    if method == "single":
        return member_probs[next(iter(weights))]
    return combine({m: member_probs[m] for m in member_probs}, weights, method)


def cv_accuracy(kind: str, member_probs: dict[str, list[list[float]]], answers: Sequence[int],
                idx: Sequence[int], folds: int = 5, seed: int = 0,
                fixed: dict[str, dict[str, float]] | None = None) -> float:
    """Accuracy of a candidate by k-fold cross-validation inside `idx` (weights refitted on each k-1 folds)."""
    idx = list(idx)
    rng = random.Random(seed)
    order = idx[:]
    rng.shuffle(order)
    folds = max(2, min(folds, len(order)))
    hits = 0
    for f in range(folds):
        test = order[f::folds]
        held = set(test)
        train = [i for i in order if i not in held]
        method, weights = candidate_weights(kind, member_probs, answers, train, fixed)
        probs = candidate_probs(method, weights, member_probs)
        hits += sum(argmax(probs[i]) == answers[i] for i in test)
    return hits / len(order)


def evaluate_candidates(member_probs: dict[str, list[list[float]]], answers: Sequence[int], fit_idx: Sequence[int],
                        held_idx: Sequence[int], *, folds: int = 5, seed: int = 0,
                        fixed: dict[str, dict[str, float]] | None = None) -> dict:
    """Every candidate: weights from the fitting part, chosen by cross-validation inside it, reported on held-out.

    The held-out items take no part in fitting or choosing, so `heldout_accuracy` is an honest estimate.
    """
    fit_idx, held_idx = sorted(fit_idx), sorted(held_idx)
    if set(fit_idx) & set(held_idx):
        raise ValueError("fitting and held-out items overlap")
    names = list(member_probs)
    out: dict = {"candidates": {}, "members": {}}
    fixed = {k: w for k, w in (fixed or {}).items() if any(m in member_probs and x > 0 for m, x in w.items())}
    kinds = CANDIDATES[:2] + tuple(fixed) + CANDIDATES[2:]  # hand-set weights rank with the simple ones
    for kind in kinds:
        method, weights = candidate_weights(kind, member_probs, answers, fit_idx, fixed)
        probs = candidate_probs(method, weights, member_probs)
        out["candidates"][kind] = {
            "method": method, "weights": weights, "cv_accuracy": cv_accuracy(kind, member_probs, answers, fit_idx,
                                                                            folds, seed, fixed),
            "fit_accuracy": accuracy(probs, answers, fit_idx), "heldout_accuracy": accuracy(probs, answers, held_idx),
            "heldout_log_loss": log_loss(probs, answers, held_idx) if method == "soft" or method == "single" else None}
    for m in names:
        out["members"][m] = {"fit_accuracy": accuracy(member_probs[m], answers, fit_idx),
                             "heldout_accuracy": accuracy(member_probs[m], answers, held_idx),
                             "heldout_log_loss": log_loss(member_probs[m], answers, held_idx)}
    best_cv = max(c["cv_accuracy"] for c in out["candidates"].values())
    chosen = next(k for k in kinds if out["candidates"][k]["cv_accuracy"] == best_cv)
    out.update(chosen=chosen, best_member=candidate_weights("single", member_probs, answers, fit_idx)[1].popitem()[0],
               oracle_heldout=oracle_accuracy(member_probs, answers, held_idx),
               agreement_heldout=agreement_matrix(member_probs, held_idx),
               fit_items=len(fit_idx), heldout_items=len(held_idx))
    return out


def align(rows_by_member: dict[str, list[dict]], paths: dict[str, str] | None = None
          ) -> tuple[list[str], list[int], list[str], dict[str, list[list[float]]]]:
    """(ids, answers, sources, member_probs) over the questions every member scored, in the first member's order.

    Members must have scored the same questions with the same answers (notebook 06 scores them together); a
    difference is an InputError naming the member's file and the question.
    """
    from helpers.io import InputError
    names = list(rows_by_member)
    if not names:
        raise ValueError("no members to align")
    first = rows_by_member[names[0]]
    ids = [r["id"] for r in first]
    for name in names[1:]:
        by_id = {r["id"]: r for r in rows_by_member[name]}
        path = (paths or {}).get(name)
        for r in first:
            other = by_id.get(r["id"])
            if other is None:
                raise InputError(path, r["id"], "id", f"member {name!r} did not score this question "
                                                      f"(re-run notebook 06 for every member together)")
            if other["answer"] != r["answer"] or len(other["probs"]) != len(r["probs"]):
                raise InputError(path, r["id"], "answer", f"member {name!r} has another answer or choice count "
                                                          f"than {names[0]!r}: the validation data changed")
        if len(by_id) != len(ids):
            raise InputError(path, None, "id", f"member {name!r} scored {len(by_id)} questions, "
                                              f"{names[0]!r} {len(ids)}")
    lookup = {m: {r["id"]: r["probs"] for r in rows_by_member[m]} for m in names}
    probs = {m: [lookup[m][i] for i in ids] for m in names}
    return ids, [r["answer"] for r in first], [r["source"] for r in first], probs


def summary_record(result: dict, *, fit_ids: list[str], heldout_ids: list[str]) -> dict:
    """The ensemble/summary.json body the agents read: method, members, weights, plus every held-out number."""
    chosen = result["candidates"][result["chosen"]]
    weights = {m: round(w, 6) for m, w in chosen["weights"].items() if w > 0}
    heldout = {k: c["heldout_accuracy"] for k, c in result["candidates"].items()}
    heldout.update({m: r["heldout_accuracy"] for m, r in result["members"].items()})
    heldout["oracle"] = result["oracle_heldout"]
    return {"method": chosen["method"], "members": list(weights), "weights": weights, "candidate": result["chosen"],
            "best_member": result["best_member"], "accuracy": chosen["heldout_accuracy"],
            "heldout_accuracy": heldout, "candidates": result["candidates"], "member_scores": result["members"],
            "oracle_heldout": result["oracle_heldout"], "agreement_heldout": result["agreement_heldout"],
            "fit_items": result["fit_items"], "heldout_items": result["heldout_items"],
            "fit_ids": fit_ids, "heldout_ids": heldout_ids}
