"""Validation (notebook 06): per-question letter probabilities scored into accuracy, calibration and letter bias.

Parts: rows (validation records, buckets, one row per question and member), score (score one member),
metrics (accuracy by group, calibration, letter bias, collapse, deltas from the base), plots (the charts).
"""

from helpers.evaluate.metrics import (COLLAPSE_ADVICE, COLLAPSE_SHARE, GROUPS, accuracy_by, calibration, deltas,
                                      favourite_letter, letter_bias, summarise, wilson)
from helpers.evaluate.rows import assign_buckets, load_val, make_rows, read_rows
from helpers.evaluate.score import score_member

__all__ = ["COLLAPSE_ADVICE", "COLLAPSE_SHARE", "GROUPS", "accuracy_by", "assign_buckets", "calibration", "deltas",
           "favourite_letter", "letter_bias", "load_val", "make_rows", "read_rows", "score_member", "summarise",
           "wilson"]
