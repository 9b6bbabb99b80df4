"""An explanation's steps as data: each sentence a blood-relation generator says, with the facts it cites, what it
claims and the answer it concludes, so that helpers.puzzles.deduction.kinship can prove it.

A claim is a tuple:
- ("rel", x, y, word): x is y's <word> ("mother", "parent", "uncle", "maternal grandfather", "himself");
- ("kin", x, y, key): x's relation to y has the key (tree.PATHS: "uncle" for an uncle or an aunt), either gender;
- ("gender", x, g): x is male ("m") or female ("f");
- ("unforced", claim): the claim fails in some family the stated facts allow (a gender left open);
- ("code", symbol, word): the code table says the symbol means <word> (family_coded);
- ("option", expression, word): the expression's decoded facts make its first person the last one's <word>;
- ("chain", i, word): the person chain word i reaches is the speaker's <word> (family_pointing);
- ("asked", answer): every reading of the pointing text gives the answer.
uses are indices into the puzzle's facts (the coded kinds: its decoded facts), cited by the step; after are the
numbers (0-based) of the earlier steps it cites, whose relation and gender claims it stands on too.
"""

from __future__ import annotations

from typing import NamedTuple


class Said(NamedTuple):
    """One sentence of an explanation: its words, what it claims, the facts and earlier steps it cites, the answer it
    concludes."""

    text: str
    claims: tuple[tuple, ...] = ()
    uses: tuple[int, ...] = ()
    answer: str | None = None
    after: tuple[int, ...] = ()


def joined(steps: list[Said]) -> str:
    """The explanation: the steps' words, one after another."""
    return " ".join(s.text for s in steps)
