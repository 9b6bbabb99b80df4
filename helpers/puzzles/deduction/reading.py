"""A model's reasoning read back into a step and proven: is its first step true? The reasoner learns deductions in
the words deduction.words writes ("1. By clue 2, Ben sits second from the left."), so its first sentence is read the
same way: its step number left out, the premises it names ("Since four face the centre and four face outward, ..."),
the clues it cites, then each clause looked up among every fact the puzzle's kind can state, rendered by
deduction.words.fact_text (nothing is guessed: a clause that is not exactly one of them makes the sentence
unreadable). The facts read are then proven by the checker from exactly the clues and premises cited (from every
clue and premise when it cites none: "So ..."), as a one-step deduction that need not conclude.

A blood-relation first sentence of the families whose steps link stated people (family, family_gender) is read as
one link ("Kemal's mother is Ling") and proven by deduction.kinship from every stated fact.

first_step(puzzle, reasoning) gives one of FIRST_STEP, which the reasoner's measurement counts
(helpers.agents.stages.reasoner_measure). A sentence the writer itself words as a block ("X, Y and Z sit
together"), a whole seating or a case ("If ...:") reads as unreadable: the verdict is a floor on what a model got
right, never a guess in its favour.
"""

from __future__ import annotations

import re

from helpers.puzzles.deduction import kinship
from helpers.puzzles.deduction.checker import check
from helpers.puzzles.deduction.steps import CLASSIC, SEATING, Step, premise_names
from helpers.puzzles.deduction.words import OPPOSITE_WAYS, fact_text, premise_text, tokens
from helpers.puzzles.seating import classic, layouts, parse

FIRST_STEP = ("valid", "invalid", "unreadable", "empty", "no_reader")  # the verdicts first_step gives
_CITE = re.compile(r"^(?:By clues? ((?:\d+)(?:(?:, | and )\d+)*), |So )", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+\.\s+")  # a step's number in front of its sentence
LINKED = ("family", "family_gender")  # the blood-relation families whose steps are links between stated people
_NAME = r"[A-Z][A-Za-z]*"
_LINK = re.compile(rf"^(?P<of>{_NAME})'s (?P<word>[a-z][a-z -]*?) is (?P<who>{_NAME})$")
_LINK_BACK = re.compile(rf"^(?P<who>{_NAME}) is (?P<of>{_NAME})'s (?P<word>[a-z][a-z -]*?)$")
_SEP = re.compile(r"(; |, and |, | and )")


def first_sentence(reasoning: str) -> str:
    """The reasoning's first sentence without its step number and full stop ("" when it has none)."""
    text = _NUMBER.sub("", reasoning.strip())
    end = re.search(r"\.(?:\s|$)", text)
    return (text[:end.start()] if end else text).strip()


def _candidate_facts(puzzle: dict) -> list[tuple]:
    """Every fact a deduction of the puzzle's kind can state about its people and attribute values."""
    if puzzle["kind"] in CLASSIC:
        people = list(puzzle["people"])
        clues = {tuple(c) for c, _ in parse.classic_clues(people, puzzle["kind"] == "seating_circular").values()}
        facts = [tuple(classic.shared_clue(list(c))) for c in sorted(clues, key=repr)]
        return facts + [("gap", a, b, 0) for a in people for b in people if a != b]
    return [tuple(c) for c in layouts.all_clues(puzzle)] + _seat_facts(puzzle)


def _seat_facts(puzzle: dict) -> list[tuple]:
    """The seats and links a deduction states (deduction.board's and deduction.layouts' seat and link facts) over
    every token, both ways round, whether or not the kind's clues use that type."""
    toks, n = tokens(puzzle), len(puzzle["people"])
    pairs = [(x, y) for x in toks for y in toks if x != y]
    facing = [("faces", x, y) for x, y in pairs] + [("faces_rel", x, y, rel, k) for x, y in pairs
                                                     for rel in ("left", "right") for k in range(1, n)]
    return ([("pos", x, side, k) for x in toks for side in ("west", "east") for k in range(1, n + 1)]
            + [("end", x) for x in puzzle["people"]] + [("opp", x, y) for x, y in pairs]
            + [("same", x, y) for x, y in pairs]
            + [(rel, x, y, k) for x, y in pairs for rel in ("left", "right") for k in range(1, n)]
            + (facing if puzzle["kind"] == "seating_parallel_rows" else []))


def fact_table(puzzle: dict) -> dict[str, tuple]:
    """Lower-cased clause -> fact, for every fact the puzzle's words can state."""
    table: dict[str, tuple] = {}
    for fact in _candidate_facts(puzzle):
        try:
            said = fact_text(puzzle, fact)
        except (KeyError, ValueError, IndexError):  # a fact the kind's words cannot say
            continue
        table.setdefault(said.lower(), fact)
    return table


def read_clauses(body: str, table: dict[str, tuple]) -> list[tuple] | None:
    """The facts a body of clauses joined by ", ", " and " or "; " states, each exactly one of the table's; None
    when no split of the body reads (the shortest reading: a clause that itself holds "and" is tried whole first)."""
    parts = _SEP.split(body.strip().lower())
    pieces, seps = parts[0::2], parts[1::2]
    best: dict[int, list[tuple] | None] = {len(pieces): []}
    for start in range(len(pieces) - 1, -1, -1):
        best[start] = None
        for end in range(start + 1, len(pieces) + 1):
            clause = "".join(p + (seps[i] if i < end - 1 else "") for i, p in enumerate(pieces[start:end], start))
            rest = best[end]
            if clause in table and rest is not None and (best[start] is None or len(rest) + 1 < len(best[start])):
                best[start] = [table[clause]] + rest
    return best[0]


def read_alternatives(body: str, table: dict[str, tuple]) -> list[tuple] | None:
    """A split's body ("q sits immediately to p's left or right", "k, p or t sits third from the left") as one
    ("or", fact, ...) claim: each alternative read whole, or with the words the first alternative opens with or the
    last one ends with (deduction.words.alternatives says those once); None when some alternative does not read."""
    pieces = re.split(r", | or ", body)
    if " or " not in body or len(pieces) < 2:
        return None
    head, tail, facts = pieces[0].split(), pieces[-1].split(), []
    for piece in pieces:
        said = [piece] + [" ".join(head[:j] + [piece]) for j in range(1, len(head))] + \
            [" ".join([piece] + tail[-j:]) for j in range(1, len(tail))]
        found = next((table[s] for s in said if s in table), None)
        if found is None:
            return None
        facts.append(found)
    return [("or", *facts)]


def read_premises(puzzle: dict, sentence: str) -> tuple[tuple[str, ...], str]:
    """(the premises a sentence opens with, "Since <premise> and <premise>, ", the rest of it); none read: ((),
    the sentence)."""
    table = {premise_text(puzzle, p).lower(): p for p in premise_names(puzzle)}
    if not sentence.lower().startswith("since ") or not table:
        return (), sentence
    rest = sentence[len("since "):]
    for cut in sorted((m.start() for m in re.finditer(", ", rest)), reverse=True):  # "A, B and C, by clue 2, ..."
        names = read_clauses(rest[:cut], table)
        if names:
            return tuple(names), rest[cut + 2:]
    return (), sentence


def read_step(puzzle: dict, sentence: str) -> Step | None:
    """The sentence as a step: the premises and clues it cites (none: every clue and premise) and the facts it
    claims; None when unreadable (a clue number the puzzle lacks included)."""
    premises, sentence = read_premises(puzzle, sentence)
    cited = _CITE.match(sentence)
    uses = tuple(int(n) - 1 for n in re.findall(r"\d+", cited.group(1))) if cited and cited.group(1) else ()
    clues = len(puzzle["clues"])
    if any(not 0 <= u < clues for u in uses):
        return None
    body, table = (sentence[cited.end():] if cited else sentence).lower(), fact_table(puzzle)
    body = body.replace(OPPOSITE_WAYS.lower(), "")  # the square table's reason for a clue turned round
    facts = read_clauses(body, table) or read_alternatives(body, table)
    if not facts:
        return None
    every = not uses and not premises
    return Step(uses=uses or (tuple(range(clues)) if every else ()), claims=tuple(facts), text=sentence,
                premises=tuple(premise_names(puzzle)) if every else premises)


def read_link(puzzle: dict, sentence: str) -> Step | None:
    """A blood-relation sentence as a step claiming one relation between two of the puzzle's people ("Kemal's mother
    is Ling", "Ling is Kemal's mother", an aside in brackets left out) and citing every stated fact; None when it
    says something else."""
    said = re.sub(r"\s*\([^)]*\)", "", re.sub(r"^(?:So|Then|Thus),? ", "", sentence)).strip()
    found = _LINK.match(said) or _LINK_BACK.match(said)
    people = {x for fact in puzzle.get("facts") or [] for x in fact[1:]}
    if not found or found.group("word") not in kinship.WORDS or not {found.group("who"), found.group("of")} <= people:
        return None
    claim = ("rel", found.group("who"), found.group("of"), found.group("word"))
    return Step(uses=tuple(range(len(puzzle.get("facts") or []))), claims=(claim,), text=sentence)


def _link_verdict(puzzle: dict, sentence: str) -> str:
    """A family or family_gender first sentence read as a link and proven from every stated fact."""
    step = read_link(puzzle, sentence)
    if step is None:
        return "unreadable"
    problems = kinship.check_kinship(puzzle, [step])
    if any(p.startswith("step 1 ") for p in problems):
        return "invalid"
    # a one-step reading always lacks the conclusion; any other problem is the puzzle's, and proves nothing
    return "valid" if all(p.startswith(("the last step", "no step claims")) for p in problems) else "unreadable"


def summary(counts: dict) -> str:
    """ "3/20 (5 unreadable)": first steps proven true of those read, from first_step's counts; "" for none."""
    if not counts:
        return ""
    read = counts.get("valid", 0) + counts.get("invalid", 0)
    return f"{counts.get('valid', 0)}/{read} ({counts.get('unreadable', 0)} unreadable)"


def first_step(puzzle: dict, reasoning: str) -> str:
    """The verdict on the reasoning's first sentence: "valid" (read, and the checker proves every fact it states
    from the clues it cites; a blood-relation link from every stated fact), "invalid" (read, and some fact fails),
    "unreadable", "empty", or "no_reader" (the pointing and coded families: their first steps decode or walk the
    puzzle's own text, which this reader does not read)."""
    if puzzle["kind"] not in SEATING + LINKED:
        return "no_reader"
    sentence = first_sentence(reasoning or "")
    if not sentence:
        return "empty"
    if puzzle["kind"] in LINKED:
        return _link_verdict(puzzle, sentence)
    step = read_step(puzzle, sentence)
    if step is None:
        return "unreadable"
    return "invalid" if check(puzzle, [step], complete=False) else "valid"
