"""The A-agent's letter predictor: which members (ensemble or one model) and how their letter scores combine.

The choice follows notebook 07's `ensemble/summary.json`; without it (stated and counted), the best single
model in notebook 06's `eval/summary.json`; else the first trained adapter; else the base model.
"""

from __future__ import annotations

from typing import Any, Sequence

from helpers.ensemble import METHODS
from helpers.io import read_json
from helpers.layout import RunLayout
from helpers.models import missing_adapter_files
from helpers.models.members import BASE  # the member name meaning "adapters switched off"


def trained_adapters(lay: RunLayout, names: Sequence[str]) -> list[str]:
    """The names (profile order) whose models/<name>/adapter/ holds a config and safetensors weights."""
    out = []
    for name in names:
        if not missing_adapter_files(lay.adapter_dir(name)):
            out.append(name)
    return out


def _accuracy(entry: Any) -> float | None:
    if isinstance(entry, (int, float)) and not isinstance(entry, bool):
        return float(entry)
    if isinstance(entry, dict):
        for key in ("accuracy", "acc", "val_accuracy"):
            value = entry.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
    return None


def best_from_eval(summary: dict, candidates: Sequence[str]) -> str | None:
    """The best scored member among candidates in an eval summary (explicit 'best*' key, else top accuracy)."""
    for key in ("best_member", "best_model", "best"):
        name = summary.get(key)
        if isinstance(name, dict):
            name = name.get("name")
        if isinstance(name, str) and name in candidates:
            return name
    scores: dict[str, float] = {}
    for key in ("members", "models", "per_model", "results", "accuracy"):
        table = summary.get(key)
        if isinstance(table, list):
            table = {row.get("name") or row.get("model"): row for row in table if isinstance(row, dict)}
        if isinstance(table, dict):
            for name, entry in table.items():
                acc = _accuracy(entry)
                if name in candidates and acc is not None:
                    scores[name] = acc
    if not scores:
        return None
    return max(scores, key=lambda n: (scores[n], n != BASE))


def choose_members(lay: RunLayout, profile_models: Sequence[str]) -> dict:
    """{"members", "weights", "method", "best_member", "source", "why"}: what the A-agent scores with and why."""
    trained = trained_adapters(lay, profile_models)
    usable = set(trained) | {BASE}
    ens_path = lay.ensemble_summary
    notes = []
    if ens_path.exists():
        ens = read_json(ens_path)
        members = [m for m in ens.get("members") or [] if isinstance(m, str)]
        missing = [m for m in members if m not in usable]
        members = [m for m in members if m in usable]
        method = ens.get("method") if ens.get("method") in METHODS else "soft"
        weights = ens.get("weights") if isinstance(ens.get("weights"), dict) else None
        if weights is not None:  # a member left out (no adapter) must not keep its weight: combine() refuses that
            weights = {m: w for m, w in weights.items() if m in members} or None
        best = ens.get("best_member") if ens.get("best_member") in usable else (members[0] if members else None)
        if missing:
            notes.append(f"ensemble members without a trained adapter left out: {', '.join(missing)}")
        if members:
            why = f"{ens_path} (method {method}, {len(members)} member(s))"
            return {"members": members, "weights": weights, "method": method, "best_member": best,
                    "source": "ensemble", "why": "; ".join([why] + notes)}
        notes.append(f"{ens_path} names no usable member")
    else:
        notes.append(f"no {ens_path} (run notebook 07)")
    eval_path = lay.eval_summary
    if eval_path.exists():
        best = best_from_eval(read_json(eval_path), sorted(usable))
        if best:
            return {"members": [best], "weights": None, "method": "soft", "best_member": best, "source": "eval_best",
                    "why": "; ".join(notes + [f"best single model in {eval_path}: {best}"])}
        notes.append(f"{eval_path} names no usable best model")
    else:
        notes.append(f"no {eval_path} (run notebook 06)")
    if trained:
        return {"members": [trained[0]], "weights": None, "method": "soft", "best_member": trained[0],
                "source": "first_adapter", "why": "; ".join(notes + [f"first trained adapter: {trained[0]}"])}
    return {"members": [BASE], "weights": None, "method": "soft", "best_member": BASE, "source": "base",
            "why": "; ".join(notes + ["no trained adapter: the base model answers"])}


class LetterPredictor:
    """Letter probabilities per item from one member or an ensemble of members on one loaded model."""

    def __init__(self, model: Any, tokenizer: Any, members: Sequence[str], *, weights: dict | None = None,
                 method: str = "soft", batch_size: int = 8, label: str | None = None):
        if not members:
            raise ValueError("a predictor needs at least one member")
        if method not in METHODS:
            raise ValueError(f"method {method!r} is not one of {METHODS}")
        self.model, self.tokenizer, self.members = model, tokenizer, list(members)
        self.weights, self.method, self.batch_size = weights, method, int(batch_size)
        self.label = label or (self.members[0] if len(self.members) == 1 else f"{method} ensemble")

    def predict(self, items: Sequence[dict]) -> list[list[float]]:
        """Per item, probabilities over its own choices' letters."""
        from helpers import scoring
        probs = scoring.score_members(self.model, self.tokenizer, self.members, list(items), batch_size=self.batch_size)
        if len(self.members) == 1:
            return probs[self.members[0]]
        from helpers import ensemble
        return ensemble.combine(probs, self.weights, method=self.method)

    def describe(self) -> str:
        """A short name for reasoning texts and reports."""
        if len(self.members) == 1:
            return self.members[0]
        return f"{self.method} vote of {', '.join(self.members)}"
