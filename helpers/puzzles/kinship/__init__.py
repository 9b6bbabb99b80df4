"""Blood-relation and family-tree puzzles: a hidden tree -> stated relations -> solver-proven puzzle.

tree (the family tree, the stated-facts kind and its solver), kinds (the pointing, coded and gender kinds, one
face), pointing, coded and gender (those kinds), words (their shared vocabulary and last checks), facts (named
facts solved by gender assignment), said (an explanation's steps as data, for deduction.kinship to prove) and parse
(a question's text read back).
"""
