"""Seating-arrangement puzzles: every seating kind, each a hidden world -> true clues -> solver-proven puzzle.

classic (a row facing north, a round table), layouts (the organisers' kinds: attributes, mixed facing, two rows,
square and rectangular tables), text (their words), world (a hidden seating's truths in plain Python), solver (the
constraint model on helpers.puzzles.csp that proves every kind), parse (a question's text read back) and unnamed
(with unnamed_table: a person no clue mentions is the key no more often than chance).
"""
