"""Generated, solver-proven puzzles for the tournament topics (the catalogue's entry points, re-exported).

Folders: catalogue (the families, generate/prove), csp (the constraint solver), blind (what options give away),
seating/ (seating arrangements) and kinship/ (blood relations and family trees).
"""

from helpers.puzzles.catalogue import (CLASSIC_KINDS, FAST_KINDS, KINDS, LEVELS, MAX_CHARS, MAX_EXPLANATION_WORDS,
                                       NAMES, TOPICS, build_workers, explain, form_at, generate, in_choice_order,
                                       iter_puzzles, make_puzzle, max_chars, measure, official_length, problems,
                                       prove_text, score, solve, verify)

__all__ = ["CLASSIC_KINDS", "FAST_KINDS", "KINDS", "LEVELS", "MAX_CHARS", "MAX_EXPLANATION_WORDS", "NAMES", "TOPICS",
           "build_workers", "explain", "form_at", "generate", "in_choice_order", "iter_puzzles", "make_puzzle",
           "max_chars", "measure", "official_length", "problems", "prove_text", "score", "solve", "verify"]
