"""Per-question rows of a validation run: the records read, their buckets, each member's letter probabilities.

A row is one question as one member answered it (written to runs/<run>/eval/<name>.jsonl):
`{"id", "source", "topic", "bucket", "answer", "probs", "pred", "correct", "confidence", "parsed"}`.
Difficulty buckets come from the same scorer and thresholds the curriculum used (helpers.difficulty), so
"hard" on the validation set means what it meant when the adapters were trained.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from helpers import difficulty, io
from helpers.io import InputError
from helpers.records import letter, validate

ROW_FIELDS = ("id", "source", "topic", "bucket", "answer", "probs", "pred", "correct", "confidence")


def load_val(path: str | Path, max_questions: int = 0) -> list[dict]:
    """data/val.jsonl validated record by record (a bad one raises, naming file, line and field); first N if > 0."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None,
                         "not found: run notebooks/01_dataset_build.ipynb first (same PROFILE and RUN)")
    out, seen = [], {}
    for lineno, obj in io.iter_jsonl(path):
        rec = validate(obj, path, f"line {lineno}")
        if not rec["id"]:
            rec["id"] = f"line-{lineno}"
        if rec["id"] in seen:
            raise InputError(path, f"line {lineno}", "id", f"{rec['id']!r} repeats line {seen[rec['id']]}: "
                                                          "per-question results are matched by id")
        seen[rec["id"]] = lineno
        out.append(rec)
        if max_questions and len(out) >= max_questions:
            break
    if not out:
        raise InputError(path, None, None, "has no records")
    return out


def assign_buckets(records: list[dict], scorer: Any = "heuristic") -> list[str]:
    """Each record's curriculum bucket (easy / medium / hard) from the curriculum's scorer and thresholds."""
    fn = difficulty.get_scorer(scorer)
    return [difficulty.bucket(float(fn(rec))) for rec in records]


def make_rows(records: list[dict], probs: list[list[float] | None], buckets: Sequence[str],
              parsed: Sequence[bool] | None = None) -> list[dict]:
    """One row per question; probs None (an unparsed generation) counts as wrong with a uniform vector."""
    if not len(records) == len(probs) == len(buckets):
        raise ValueError(f"{len(records)} records, {len(probs)} probability rows, {len(buckets)} buckets")
    rows = []
    for i, (rec, p, b) in enumerate(zip(records, probs, buckets)):
        n = len(rec["choices"])
        ok = p is not None and (parsed is None or parsed[i])
        vec = [float(x) for x in p] if p is not None else [1.0 / n] * n
        if len(vec) != n:
            raise ValueError(f"record {rec['id']}: {len(vec)} probabilities for {n} choices")
        pred = max(range(n), key=lambda j: (vec[j], -j)) if ok else None
        rows.append({"id": rec["id"], "source": rec["source"], "topic": rec.get("topic") or "(none)", "bucket": b,
                     "answer": rec["answer"], "probs": [round(x, 6) for x in vec], "pred": pred,
                     "pred_letter": letter(pred) if pred is not None else None, "answer_letter": letter(rec["answer"]),
                     "correct": pred == rec["answer"], "confidence": round(max(vec), 6), "parsed": ok})
    return rows


def read_rows(path: str | Path) -> list[dict]:
    """An eval/<name>.jsonl written by notebook 06; a row missing a field names file, line and field."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "not found: run notebooks/06_validate.ipynb first (same PROFILE and RUN)")
    rows = []
    for lineno, row in io.iter_jsonl(path):
        for field in ROW_FIELDS:
            if field not in row:
                raise InputError(path, f"line {lineno}", field, "is missing")
        probs = row["probs"]
        if not isinstance(probs, list) or len(probs) < 2 or not all(isinstance(x, (int, float)) for x in probs):
            raise InputError(path, f"line {lineno}", "probs", "expected a list of >= 2 numbers")
        if not isinstance(row["answer"], int) or not 0 <= row["answer"] < len(probs):
            raise InputError(path, f"line {lineno}", "answer", f"expected an index below {len(probs)}")
        rows.append(row)
    return rows
