"""Generated, solver-proven puzzles for the tournament topics (the catalogue's entry points, re-exported).

catalogue (the kinds, generate/prove); seating (seating.classic: a row, a round table; seating.layouts: the
organisers' kinds; on seating.text (words), seating.solver (on csp, the constraint solver), seating.world (the hidden
world's truths); seating.parse (read back); seating.unnamed, seating.unnamed_table); kinship (kinship.tree: stated
facts; kinship.kinds: kinship.pointing, kinship.coded, kinship.gender on kinship.words, kinship.facts,
kinship.key_shares and kinship.key_share_table (how often a word is the key); kinship.said: steps as data;
kinship.parse: a text read back); families (the family contract, docs/new-topic.md: truth, syllogism, series and
direction, their deductions on worlds); blind (what options give away), names, variety; deduction (the seating and
kinship deductions: deduction.steps, deduction.checker, deduction.citing, deduction.board, deduction.layouts,
deduction.writer, deduction.words, deduction.kinship, deduction.measure, deduction.reading).
"""

from helpers.puzzles.catalogue import (CLASSIC_KINDS, FAST_KINDS, KINDS, LEVELS, MAX_CHARS, MAX_EXPLANATION_WORDS,
                                       NAMES, TOPICS, build_workers, explain, form_at, generate, in_choice_order,
                                       iter_puzzles, make_puzzle, max_chars, measure, official_length, problems,
                                       prove_text, score, solve, verify)

__all__ = ["CLASSIC_KINDS", "FAST_KINDS", "KINDS", "LEVELS", "MAX_CHARS", "MAX_EXPLANATION_WORDS", "NAMES", "TOPICS",
           "build_workers", "explain", "form_at", "generate", "in_choice_order", "iter_puzzles", "make_puzzle",
           "max_chars", "measure", "official_length", "problems", "prove_text", "score", "solve", "verify"]
