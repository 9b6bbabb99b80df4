"""Deductions a person could follow and a model could learn, each step proven by the seating solver.

steps (a step: clues, earlier steps and premises cited, case, split, claims, closes, answer; a fact's meaning as a
solver constraint), checker (check: every step proven from exactly what it cites), board and layouts (the seatings a
deduction is written on), writer (write: the greedy writer of the seating families), citing (what each written step
cites, found on the board), words (facts and steps in the puzzle's words), kinship
(the blood-relation families' own explanation steps and their checker, check_kinship), measure (lengths per family
and level, python -m helpers.puzzles.deduction --measure prints them; explanation: the text a question carries) and
reading (a model's first step read back and proven).
"""

from helpers.puzzles.deduction.checker import check, key_of
from helpers.puzzles.deduction.kinship import KINSHIP_KINDS, check_kinship, write_kinship
from helpers.puzzles.deduction.measure import explanation
from helpers.puzzles.deduction.steps import Step
from helpers.puzzles.deduction.writer import KINDS, NoDeduction, write

__all__ = ["KINDS", "KINSHIP_KINDS", "NoDeduction", "Step", "check", "check_kinship", "explanation", "key_of", "write",
           "write_kinship"]
