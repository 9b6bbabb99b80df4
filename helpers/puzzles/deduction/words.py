"""A deduction in words: each fact in the puzzle's own phrasing (the kit's clue sentences) and each step as a
sentence that cites what it rests on: its clues and earlier steps by number (clue 1 is the question's first clue
sentence, step 1 the deduction's first sentence, numbered in front when a later sentence cites it), the step just
before it by opening with "So" (or "Then" inside a case), and the set-up's premises in the set-up's words ("Since
four face the centre and four face outward, by clue 2 and step 1, ...").
"""

from __future__ import annotations

from dataclasses import replace

from helpers.puzzles.deduction.steps import CLASSIC, WRITTEN, Step
from helpers.puzzles.seating import classic, text


def classic_clue(fact: tuple) -> list:
    """A shared-solver fact as a classic kind's clue (the words classic.render_clue knows)."""
    kind, args = fact[0], list(fact[1:])
    if kind == "pos":
        return ["pos" if args[1] == "west" else "pos_right", args[0], args[2]]
    if kind in ("left", "right"):
        return [f"{kind}_adj", *args[:2]] if args[2] == 1 else [f"kth_{kind}", *args]
    if kind == "opp":
        return ["opposite", *args]
    return [kind, *args]


def fact_text(puzzle: dict, fact: tuple) -> str:
    """A fact as a clause in the puzzle's words ("Ben sits second from the left")."""
    if fact[0] == "not":
        return f"not ({fact_text(puzzle, fact[1])})"
    if fact[0] == "or":
        return join([fact_text(puzzle, f) for f in fact[1:]], "or")
    if puzzle["kind"] in CLASSIC and fact[0] == "gap" and fact[3] == 0:  # no one between: neighbours
        return f"no one sits between {fact[1]} and {fact[2]}"
    if puzzle["kind"] in CLASSIC:
        return _as_clause(classic.render_clue(classic_clue(fact)).rstrip("."), fact)
    if fact[0] == "row_pos":  # a seat in one of two rows
        at = "at the" if fact[4] == 1 else f"{text.ORD[fact[4]]} from the"
        return f"{fact[1]} sits {at} {fact[3]} end of the row facing {'north' if fact[2] else 'south'}"
    return _as_clause(text.clue_variants(puzzle, list(fact))[0].rstrip("."), fact)


def _as_clause(said: str, fact: tuple) -> str:
    """A clue's sentence as a clause inside another ("If exactly 2 people sit ...", "the tea drinker sits ..."): its
    first word lowercased unless it is a name the fact holds ("Ben sits ...")."""
    first = said.split(" ", 1)[0]
    names = {str(x) for x in fact[1:]}
    return said if first in names or not first[:1].isupper() else said[0].lower() + said[1:]


def join(items: list[str], word: str = "and") -> str:
    """ "A", "A and B", "A, B and C" (or "or")."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {word} " + items[-1]


def alternatives(texts: list[str]) -> str:
    """ "A or B" with the words they share said once: "Q sits immediately to P's left or right"."""
    words = [t.split() for t in texts]
    same = 0
    while all(len(w) > same + 1 and w[same] == words[0][same] for w in words):
        same += 1
    if same >= 2:
        return " ".join(words[0][:same]) + " " + join([" ".join(w[same:]) for w in words], "or")
    tail = 0
    while all(len(w) > tail + 1 and w[-1 - tail] == words[0][-1 - tail] for w in words):
        tail += 1
    if tail >= 3:  # "Clare, Kavita or Tunde sits immediately to Amara's left"
        return join([" ".join(w[:-tail]) for w in words], "or") + " " + " ".join(words[0][-tail:])
    return join(texts, "or")


def cite(uses: tuple[int, ...]) -> str:
    """ "clue 3", "clues 2 and 4"."""
    nums = [str(u + 1) for u in sorted(uses)]
    return f"clue{'s' if len(nums) > 1 else ''} {join(nums)}"


def refs(after: tuple[int, ...]) -> str:
    """ "step 2", "steps 1 and 3" (after: 0-based step indices)."""
    nums = [str(j + 1) for j in sorted(after)]
    return f"step{'s' if len(nums) > 1 else ''} {join(nums)}" if nums else ""


def premise_text(puzzle: dict, name: str) -> str:
    """A premise (steps.premise_names) in the set-up's words: "four face the centre and four face outward", "those
    at the corners face outward", "Ana faces the centre"."""
    if name == "half":
        half = text.NUM[len(puzzle["people"]) // 2]
        return f"{half} face {text.dir_word(puzzle, 1)} and {half} face {text.dir_word(puzzle, 0)}"
    if name == "corners":
        return f"those at the corners face {text.dir_word(puzzle, puzzle['corner_face'])}"
    who = name.split(":", 1)[1]
    return fact_text(puzzle, ("face", who, puzzle["facing"][who]))


def citing(puzzle: dict, step: Step, *, clues: bool = True) -> str:
    """What a step cites, as its sentence opens: "since <premises>, by clue 2 and step 1, " ("" for nothing;
    clues=False leaves its clues to the sentence: a closing step's "clue 4 fails")."""
    named = [p for p in (cite(step.uses) if clues and step.uses else "", refs(step.after)) if p]
    since = f"since {join([premise_text(puzzle, p) for p in step.premises])}, " if step.premises else ""
    return since + (f"by {' and '.join(named)}, " if named else "")


def numbered(texts: list[str], cited: set[int]) -> list[str]:
    """The sentences a later one cites (0-based indices) with their step number in front ("2. By clue 3, ..."), as
    a text numbers only the equations it refers to."""
    return [f"{i + 1}. {t}" if i in cited else t for i, t in enumerate(texts)]


def answer_text(puzzle: dict, key: str) -> str:
    """The key as a clause in the question's words."""
    if puzzle["kind"] in CLASSIC:
        said = classic.answer_sentence(puzzle["question"], key).rstrip(".")
        return "no one" + said[len("No one"):] if said.startswith("No one") else said
    if puzzle["question"][0] == "statement":
        return f"of the statements only \"{key}\" holds"
    fact = question_fact(puzzle, key)
    return fact_text(puzzle, fact) if fact else layout_answer(puzzle, key)


def layout_answer(puzzle: dict, key: str) -> str:
    """The key of a question no single fact answers, in the question's words ("Ana is Ben's only neighbour")."""
    q = puzzle["question"]
    if q[0] == "who" and q[1] == "nbr":
        return f"{key} is {q[2]}'s only neighbour"
    if q[0] == "where":
        return f"{noun(puzzle, q[1])} sits {key[:1].lower() + key[1:]}"
    if q[0] == "count_between":
        k = int(key)
        return f"no one sits between {q[1]} and {q[2]}" if k == 0 else \
            f"exactly {k} {'person sits' if k == 1 else 'people sit'} between {q[1]} and {q[2]}"
    if q[0] == "count_face":
        return f"{key} of them face {text.dir_word(puzzle, q[1])}"
    if q[0] == "at_end":
        return f"{key} sits at the extreme {q[2]} end of the row facing {text.dir_word(puzzle, q[1])}"
    if q[0] == "at_pos":
        return fact_text(puzzle, ("pos", key, q[1], q[2]))
    return f"the answer is {key}"


def _cap(s: str) -> str:
    """The text with a capital first letter."""
    return s[:1].upper() + s[1:]


def tokens(puzzle: dict) -> list[str]:
    """The puzzle's people, then its attribute values group by group (the order "same" facts name them in)."""
    return list(puzzle["people"]) + [v for values in puzzle.get("groups", {}).values() for v in values]


def noun(puzzle: dict, token: str) -> str:
    """A token as a noun phrase: a person's name, "the tea drinker", "the Thai"."""
    if token in puzzle["people"]:
        return token
    return text.GROUPS[text.group_of(puzzle, token)]["noun"].format(v=token)


def question_fact(puzzle: dict, key: str) -> tuple | None:
    """The fact that the key answers a "who" or "attr" question (in the shared solver's terms), else None."""
    q = puzzle["question"]
    if q[0] not in ("who", "attr") or q[-3] not in ("same", "opp", "left", "right", "faces", "faces_left",
                                                    "faces_right"):
        return None
    rel, x, k = q[-3], q[-2], q[-1]
    if rel.startswith("faces"):  # two rows: "Who faces the person second to Ana's left?"
        return ("faces", key, x) if rel == "faces" else ("faces_rel", key, x, rel.removeprefix("faces_"), k)
    if rel == "same":
        return ("same", *sorted((key, x), key=tokens(puzzle).index))
    return ("opp", key, x) if rel == "opp" else (rel, key, x, k)


def _placed(puzzle: dict, fact: tuple) -> tuple[str, int, str | None] | None:
    """(token, position, reference) of a placement fact: a row's seat from the left (no reference), or seats round
    to the reference's left; None for other facts."""
    n = len(puzzle["people"])
    if fact[0] == "pos":
        return fact[1], fact[3] - 1 if fact[2] == "west" else n - fact[3], None
    if puzzle["kind"] == "seating_linear":
        return None
    if fact[0] == "same":
        return fact[2], 0, fact[1]
    k = {"left": lambda: fact[3], "right": lambda: n - fact[3], "opp": lambda: n // 2}.get(fact[0])
    return (fact[1], k(), fact[2]) if k else None


def _whole_seating(puzzle: dict, claims: tuple) -> str | None:
    """ "the row, from the left, is A, B, C" (a round table: going left from the anchor, each person with their
    attributes) when the claims place every token; else None."""
    people, n = puzzle["people"], len(puzzle["people"])
    ends = {f[1] for f in claims if f[0] == "end"}
    claims = tuple(f for f in claims if f[0] != "end")
    places = [_placed(puzzle, f) for f in claims]
    if puzzle["kind"] not in CLASSIC + WRITTEN or len(claims) < n - 1 or None in places:
        return None
    refs = {r for _, _, r in places}
    at: dict[int, list[str]] = {0: list(refs - {None})}
    for token, k, _ in sorted(places, key=lambda p: tokens(puzzle).index(p[0])):
        at.setdefault(k, []).append(token)
    if sorted(at) != list(range(n)) or len(refs) != 1 or any(not at[k] or at[k][0] not in people for k in at):
        return None
    marks = [at[k][1:] + (["an end"] if at[k][0] in ends else []) for k in range(n)]
    seat = [at[k][0] + (f" ({', '.join(marks[k])})" if marks[k] else "") for k in range(n)]
    if puzzle["kind"] == "seating_linear":
        return "the row, from the left, is " + join(seat)
    return f"going left from {at[0][0]}: " + join(seat)


def _row_places(claims: tuple, words: dict | None = None) -> list[str]:
    """A row's placements grouped by end: "Ana sits at the left end", "Ben sits second and Cy third from the left"
    (words: each side's word and what follows it, {"west": ("west", " end"), ...} for a row running west-east)."""
    out = []
    for side, (word, tail) in (words or {"west": ("left", ""), "east": ("right", "")}).items():
        mine = sorted((f[3], f[1]) for f in claims if f[0] == "pos" and f[2] == side)
        out += [f"{x} sits at the {word} end" for k, x in mine if k == 1]
        rest = [f"{x} {classic.ORDINALS[k - 1]}" for k, x in mine if k > 1]
        if rest:
            out.append(f"{rest[0].replace(' ', ' sits ', 1)}" + (", " if len(rest) > 2 else "")
                       + ", ".join(rest[1:-1]) + (f" and {rest[-1]}" if len(rest) > 1 else "")
                       + f" from the {word}{tail}")
    return out


COMPASS = {"west": ("west", " end"), "east": ("east", " end")}  # a west-east row's ends in its clues' words


def _round_order(puzzle: dict, claims: list, parts: list[str]) -> tuple[list, list[str]]:
    """At a table, claims placing every other person from one reference, said as "going round to Ana's left: Ben,
    Cy, ..."; (the claims left, the parts with it)."""
    n = len(puzzle["people"])
    for ref in dict.fromkeys(f[2] for f in claims if f[0] in ("left", "right", "opp")):
        mine = [f for f in claims if f[0] in ("left", "right", "opp") and f[2] == ref and f[1] in puzzle["people"]]
        at = {f[3] if f[0] == "left" else (n - f[3] if f[0] == "right" else n // 2): f[1] for f in mine}
        if len(mine) == n - 1 and sorted(at) == list(range(1, n)):
            return [f for f in claims if f not in mine], parts + [
                f"going round to {ref}'s left: " + join([at[k] for k in range(1, n)])]
    return claims, parts


def lists_everyone(puzzle: dict, claims: tuple) -> bool:
    """Whether the claims place every person, said as one order ("the row, from the west, is ...", "going round to
    Ana's left: ...", both rows)."""
    n = len(puzzle["people"])
    placed = [f for f in claims if f[0] in ("pos", "row_pos")]
    return len(placed) == n or bool(_round_order(puzzle, list(claims), [])[1])


def _layout_parts(puzzle: dict, claims: tuple) -> list[str]:
    """The claims of a layouts family as clauses: a whole row in order, a row's seats grouped by end, the people
    facing (or sitting) one way said together, the rest one by one."""
    parts, rest = [], list(claims)
    pos = [f for f in rest if f[0] == "pos"]
    if pos and len(pos) == len(puzzle["people"]):
        order = sorted(pos, key=lambda f: f[3] - 1 if f[2] == "west" else len(pos) - f[3])
        parts.append("the row, from the west, is " + join([f[1] for f in order]))
    elif pos:
        parts += _row_places(tuple(pos), COMPASS)
    rest = [f for f in rest if f[0] != "pos"]
    rest, parts = _round_order(puzzle, rest, parts)
    m = len(puzzle["people"]) // 2
    for row in (0, 1):
        mine = sorted((f for f in rest if f[0] == "row_pos" and f[2] == row),
                      key=lambda f: f[4] - 1 if f[3] == "west" else m - f[4])
        facing = "north" if row else "south"
        if len(mine) == m:
            parts.append(f"the row facing {facing}, from the west, is " + join([f[1] for f in mine]))
        elif len(mine) > 1:  # "in the row facing north, Ana sits at the west end and Ben second from the east end"
            parts.append(f"in the row facing {facing}, " + join(_row_places(tuple(("pos", f[1], f[3], f[4])
                                                                                  for f in mine), COMPASS)))
        rest = [f for f in rest if f not in mine or len(mine) == 1]
    for kind, value in (("face", 1), ("face", 0), ("row", 1), ("row", 0), ("corner", None), ("mid", None)):
        mine = [f for f in rest if f[0] == kind and (value is None or f[2] == value)]
        if len(mine) > 1:
            said = fact_text(puzzle, mine[0]).split(" ", 1)[1]  # "faces outward", "sits at a corner"
            verb, tail = said.split(" ", 1)
            parts.append(f"{join([f[1] for f in mine])} {verb[:-1]} {tail}".replace("at a corner", "at corners"))
            rest = [f for f in rest if f not in mine]
    return parts + [fact_text(puzzle, f) for f in rest]


def _pair_said(puzzle: dict, claims: tuple, tag: str, sep: str, said_of_both: str) -> str | None:
    """Claims holding two `tag` facts with the two people said once ("X and Y sit at the two ends"), after the other
    claims and `sep`; None unless exactly two."""
    pair = [f[1] for f in claims if f[0] == tag]
    if len(pair) != 2:
        return None
    others = tuple(f for f in claims if f[0] != tag)
    return (claims_text(puzzle, others) + sep if others else "") + f"{pair[0]} and {pair[1]} {said_of_both}"


def claims_text(puzzle: dict, claims: tuple) -> str:
    """A step's claims as one clause: a whole seating as its order, a row's placements grouped by end."""
    whole = _whole_seating(puzzle, claims)
    if whole:
        return whole
    paired = _pair_said(puzzle, claims, "end", "; ", "sit at the two ends")  # a rectangle's two ends
    if paired is None and puzzle["kind"] == "seating_rectangle":  # two people off the ends (Writer.sides)
        paired = _pair_said(puzzle, claims, "not_end", ", and ", "sit on long sides")
    if paired is not None:
        return paired
    if puzzle["kind"] not in CLASSIC + WRITTEN:
        parts = _layout_parts(puzzle, claims)
        return "; ".join(parts) if len(parts) > 1 and any(" and " in p for p in parts) else join(parts)
    blocks, rest = _blocks(puzzle, claims)
    places = _row_places(rest) if puzzle["kind"] == "seating_linear" else []
    parts = places + blocks + [fact_text(puzzle, f) for f in rest if not (places and f[0] == "pos")]
    return "; ".join(parts) if blocks and len(parts) > 1 else join(parts)  # a block's own commas need ";"


def _blocks(puzzle: dict, claims: tuple) -> tuple[list[str], list[tuple]]:
    """Links from one person that seat 3+ people side by side, as "Q, G and E sit together, left to right" (a
    round table: "going left"); the other claims returned as they are."""
    texts, rest = [], list(claims)
    for y in dict.fromkeys(f[2] for f in claims if f[0] in ("left", "right")):
        mine = [f for f in claims if f[0] in ("left", "right") and f[2] == y]
        at = {0: y} | {(f[3] if f[0] == "right" else -f[3]) * (-1 if puzzle["kind"] != "seating_linear" else 1): f[1]
                       for f in mine}
        if len(mine) < 2 or len(at) != len(mine) + 1 or sorted(at) != list(range(min(at), max(at) + 1)):
            continue
        way = "left to right" if puzzle["kind"] == "seating_linear" else "going left"
        names = [noun(puzzle, at[k]) for k in sorted(at)]
        texts.append(f"{join(names)} sit together, {way}")
        rest = [f for f in rest if f not in mine]
    return texts, rest


def _closing(puzzle: dict, step: Step) -> str:
    """A closing step: "by step 2, clue 4 fails", "clues 2 and 4 cannot both hold", "by steps 3 and 5, no seating
    is left"."""
    by = citing(puzzle, step, clues=False)
    if len(step.uses) > 1:
        return by + f"{cite(step.uses)} cannot {'both' if len(step.uses) == 2 else 'all'} hold"
    return by + (f"{cite(step.uses)} fails" if step.uses else "no seating is left")


# Said after a square-table step that turns a cited clue round with the same side word ("J sits three seats to L's
# right", so "L sits third to the right of J"): true only because those an odd number of seats apart, one at a corner
# and one mid-side, face opposite ways, which the reader is told rather than left to find.
OPPOSITE_WAYS = " (an odd number of seats apart, they face opposite ways)"


def turned_round(puzzle: dict, step: Step, facts: tuple) -> list[tuple]:
    """The facts that say one of the step's square-table clues from the other person's side with the same side word
    (none at any other table)."""
    if puzzle["kind"] != "seating_square":
        return []
    cited = {tuple(puzzle["clues"][u]) for u in step.uses}
    return [f for f in facts if len(f) == 4 and f[0] in ("left", "right") and (f[0], f[2], f[1], f[3]) in cited]


def _with_reasons(puzzle: dict, said: str, turned: list[tuple]) -> str:
    """said with OPPOSITE_WAYS right after each turned fact's clause (at the end when a group's words hold it)."""
    for fact in turned:
        clause = fact_text(puzzle, fact)
        if clause in said:
            said = said.replace(clause, clause + OPPOSITE_WAYS, 1)
        elif OPPOSITE_WAYS not in said:
            said += OPPOSITE_WAYS
    return said


def _body(puzzle: dict, step: Step) -> str:
    """What a step says, without its case's "If ..." opening."""
    by = citing(puzzle, step)
    if step.split:
        return (by or "so ") + alternatives([fact_text(puzzle, f) for f in step.split])
    if step.closes:
        return _closing(puzzle, step)
    if step.answer is not None:
        fact = question_fact(puzzle, step.answer)
        said = _with_reasons(puzzle, answer_text(puzzle, step.answer),
                             turned_round(puzzle, step, (fact,) if fact else ()))
    else:
        said = _with_reasons(puzzle, claims_text(puzzle, step.claims), turned_round(puzzle, step, step.claims))
    return by + said if by or step.case else "so " + said


def _worded(steps: list[Step]) -> list[tuple[Step, bool]]:
    """Each step as its sentence cites: (the step, whether it opens with "So" or "Then" for the step just before it,
    which it then does not number; a case's first sentence opens with the case instead)."""
    out, before = [], ()
    for i, step in enumerate(steps):
        opens_case = bool(step.case) and step.case != before and before[:len(step.case)] != step.case
        follows = i - 1 in step.after and not opens_case
        out.append((replace(step, after=tuple(j for j in step.after if j != i - 1)) if follows else step, follows))
        before = step.case
    return out


def step_texts(puzzle: dict, steps: list[Step]) -> list[str]:
    """Each step as a sentence; the first step inside a case opens with "If <case>:", one resting on the step just
    before it with "So" (or "Then" inside a case), and a sentence a later one cites by number has it in front."""
    out, before = [], ()
    worded = _worded(steps)
    for step, follows in worded:
        body = _body(puzzle, step)
        if step.case and len(step.case) < len(before) and before[:len(step.case)] == step.case:
            body = f"So, if {fact_text(puzzle, step.case[-1])}, {body.removeprefix('so ')}"
        elif step.case and step.case != before:
            lone = not citing(puzzle, step) and not step.closes  # a case's only say is what it fixes: "If X, Y"
            body = f"If {fact_text(puzzle, step.case[-1])}{', ' if lone else ': '}{body}"
        elif step.case:
            body = f"then {body}"
        elif step.answer is not None and before and steps[len(out) - 1].answer is not None:
            body = "either way, " + citing(puzzle, step) + answer_text(puzzle, step.answer)
        elif follows and not body.startswith("so "):
            body = f"so, {body}"
        out.append(_cap(body) + ".")
        before = step.case
    return numbered(out, {j for step, _ in worded for j in step.after})
