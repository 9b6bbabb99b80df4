"""The blood-relation families' deductions: the generators' own explanation steps (helpers.puzzles.kinship.said) as
Steps, and a checker that proves every step with the kinship solvers, never the hidden tree.

A step cites stated facts (uses: indices into the puzzle's facts; family_coded: its decoded facts) and earlier steps
(Step.after), and claims relations and genders (the claim types are listed in kinship.said). Each step is
proven from EXACTLY what it cites, not from everything cited before it:
- a relation, kin or gender claim holds in every family its cited facts allow, with the cited steps' link claims
  as facts and their gender claims kept: facts.gender_models closes them (tree.close) once per assignment of the
  genders no word states, and the relation is named by its shortest paths (facts.rel_key, tree.relation for a
  maternal or paternal side); one that fails, where the stated facts prove it, is refused naming the uncited facts
  it needs;
- an "unforced" claim (a gender left open, an option not definitely true) fails in some family ALL the stated facts
  allow: a fact not cited could force it, so it is proven from everything stated;
- a code claim is the puzzle's code table; an option claim is what that expression's decoded facts give;
- a family_pointing claim (chain, asked) holds in every reading of the whole statement (pointing's reading engine:
  "already mentioned or someone new", each side, each gender; an "only" later in the chain may decide an earlier
  person, so no step cites a part of the text);
- a step that concludes gives the key (the family's solver's own unless given), the last step concludes, and some
  step claims what the key says ("R is T's aunt"; for "Cannot be determined", the relation and that either gender
  is possible).
"""

from __future__ import annotations

from typing import NamedTuple

from helpers.puzzles.deduction.steps import Step, frozen
from helpers.puzzles.deduction.words import join
from helpers.puzzles.deduction.writer import NoDeduction
from helpers.puzzles.kinship import coded, gender, kinds, pointing
from helpers.puzzles.kinship import tree as fam
from helpers.puzzles.kinship.facts import gender_models, rel_key, relation_terms
from helpers.puzzles.kinship.words import SELF, term_for

KINSHIP_KINDS = ("family",) + kinds.KINDS  # the stated-facts family and the pointing, coded and gender ones
STEPS = {"family": fam.explain_steps, "family_pointing": pointing.pointing_steps, "family_coded": coded.coded_steps,
         "family_gender": gender.gender_steps}
ARITY = {"rel": 4, "kin": 4, "gender": 3, "unforced": 2, "code": 3, "option": 3, "chain": 3, "asked": 2}
FACT_CLAIMS = ("rel", "kin", "gender", "unforced")
OWN_CLAIMS = {"family": (), "family_gender": (), "family_coded": ("code", "option"),
              "family_pointing": ("chain", "asked")}


def _word_meanings() -> dict[str, tuple[str, str | None, str | None]]:
    """Every relation word a claim may use -> (relation key, the named person's gender or None, the side or None)."""
    out: dict[str, tuple[str, str | None, str | None]] = {}
    for key, (m, f) in fam.TERMS.items():
        out[m.lower()], out[f.lower()] = (key, None if m == f else "m", None), (key, None if m == f else "f", None)
    out.update({words[2]: (fam.PATHS[label], None, None) for label, words in fam.EDGE_WORDS.items()})
    out.update({role: (key, g, side) for role, (key, side, g) in fam.ROLES.items()})
    out.update({SELF[0].lower(): ("self", "m", None), SELF[1].lower(): ("self", "f", None)})
    return out


WORDS = _word_meanings()


def write_kinship(puzzle: dict, key: str) -> list[Step]:
    """The family's own explanation of the key as Steps (its words, cited facts and steps, claims and conclusion);
    NoDeduction("key_not_explained") when the key names no one the facts reach."""
    if puzzle.get("kind") not in KINSHIP_KINDS:
        raise NoDeduction("family_not_covered")
    try:
        said = STEPS[puzzle["kind"]](puzzle, key)
    except (LookupError, StopIteration) as exc:
        raise NoDeduction("key_not_explained") from exc
    return [Step(uses=s.uses, claims=s.claims, answer=s.answer, text=s.text, after=s.after) for s in said]


def kinship_key(puzzle: dict) -> str:
    """The family's solver's one answer (ValueError when it proves none or several)."""
    found = (fam.possible_answers if puzzle["kind"] == "family" else kinds.possible_answers)(puzzle)
    if len(found) != 1:
        raise ValueError(f"the puzzle does not prove one answer: {sorted(found)}")
    return next(iter(found))


def stated_facts(puzzle: dict, key: str) -> list[list[str]]:
    """The facts a step may cite: the stated ones; family_coded's decoded (the key expression's, for a
    which-question); none for family_pointing."""
    if puzzle["kind"] == "family_coded":
        return coded.coded_solution(puzzle, key)[0]
    return [] if puzzle["kind"] == "family_pointing" else puzzle["facts"]


def claim_text(claim: tuple) -> str:
    """A claim in words, as a problem quotes it."""
    kind = claim[0]
    if kind == "rel":
        return f"{claim[1]} is {claim[2]}'s {claim[3]}"
    if kind == "kin":
        terms = dict.fromkeys(term_for(claim[3], g).lower() for g in "mf") if claim[3] in fam.TERMS else [claim[3]]
        return f"{claim[1]} is {claim[2]}'s {join(list(terms), 'or')}"
    if kind == "gender":
        return f"{claim[1]} is {'male' if claim[2] == 'm' else 'female'}"
    if kind == "unforced":
        return f"not necessarily: {claim_text(claim[1])}"
    if kind == "code":
        return f"'{claim[1]}' means {claim[2]}"
    if kind == "option":
        return f"{claim[1]} means its first person is the last one's {claim[2]}"
    if kind == "chain":
        at = claim[1] + 1 if isinstance(claim[1], int) else claim[1]
        return f"chain word {at} names the speaker's {claim[2]}"
    return f"the answer is {claim[1]}"


def key_claims(puzzle: dict, key: str, models: list[dict]) -> list[tuple]:
    """What a deduction must claim for the key to follow (models: every family all the stated facts allow)."""
    q, kind = puzzle["question"], puzzle["kind"]
    if kind == "family_pointing":
        return [("asked", key)]
    if kind == "family" and q[0] == "who":
        return [("rel", key, q[2], q[1])]
    if kind == "family_coded" and q[0] == "which":
        return [("rel", q[1], q[2], q[3].lower())]
    if kind == "family_gender" and q[0] == "true":
        return [gender.option_claim(puzzle, key)]
    if key == gender.CBD:
        return [("kin", q[1], q[2], rel_key(models[0], q[2], q[1]) if models else None),
                ("unforced", ("gender", q[1], "m")), ("unforced", ("gender", q[1], "f"))]
    return [("rel", q[1], q[2], key.lower())]


class Cited(NamedTuple):
    """What one step cites: stated facts (indices), earlier steps (0-based numbers) and those steps' claims."""

    uses: frozenset = frozenset()
    after: tuple[int, ...] = ()
    premises: tuple[tuple, ...] = ()

    def said(self) -> str:
        """ "facts 1 and 3", "fact 2 and step 1", "steps 1 and 2" or "no fact" (a citation that is no index quoted
        as it is)."""
        parts = [_numbered("fact", self.uses), _numbered("step", self.after)]
        return " and ".join(p for p in parts if p) or "no fact"


def _numbered(noun: str, nums) -> str:
    """ "facts 1 and 3" for 0-based numbers (0, 2); "" for none."""
    shown = [str(u + 1) if isinstance(u, int) else repr(u) for u in sorted(nums, key=lambda u: (str(type(u)), u))]
    return f"{noun}{'s' if len(shown) > 1 else ''} {join(shown)}" if shown else ""


def _premise_fact(claim: tuple) -> list[str] | None:
    """An earlier step's link claim ("Carl is Ben's father", "S is X's spouse") as the stated fact it amounts to."""
    if claim[0] == "rel" and len(claim) == 4 and claim[3] in fam.FACT_KINDS:
        return [claim[3], claim[1], claim[2]]
    return None


class _Families:
    """Every family a set of facts allows (with the link and gender claims of the steps cited), closed once per
    set."""

    def __init__(self, facts: list[list[str]]) -> None:
        """The puzzle's facts, none closed yet."""
        self.facts, self.cache = facts, {}

    def of(self, uses: frozenset, premises: tuple[tuple, ...] = ()) -> list[dict]:
        """The families the facts with these indices allow, with earlier steps' claims as premises: a link claim
        as a fact, a gender claim keeping the families that give its person that gender (any other claim adds
        nothing)."""
        linked = tuple(sorted({tuple(f) for c in premises if (f := _premise_fact(c))}))
        sexed = tuple(sorted({c[1:] for c in premises if c[0] == "gender" and len(c) == 3}))
        key = (tuple(sorted(uses)), linked, sexed)
        if key not in self.cache:
            models = gender_models([self.facts[i] for i in key[0]] + [list(f) for f in linked])
            self.cache[key] = [m for m in models if all(m["gender"].get(x, g) == g for x, g in sexed)]
        return self.cache[key]

    def every(self) -> list[dict]:
        """The families all the stated facts allow."""
        return self.of(frozenset(range(len(self.facts))))

    def missing(self, claim: tuple, cited: Cited) -> list[int]:
        """The uncited facts a relation, kin or gender claim needs besides what its step cites (few: each left out
        that the claim holds without), or [] when even every stated fact does not prove it."""
        needed = set(range(len(self.facts)))
        if not _proven(self.of(frozenset(needed), cited.premises), claim):
            return []
        for i in sorted(needed - cited.uses, reverse=True):
            if _proven(self.of(frozenset(needed - {i}), cited.premises), claim):
                needed.discard(i)
        return sorted(needed - cited.uses)


def _holds(models: list[dict], claim: tuple) -> bool:
    """Whether a relation, kin or gender claim holds in every family (its people known to the families)."""
    if claim[0] == "gender":
        return all(m["gender"][claim[1]] == claim[2] for m in models)
    _, x, y, word = claim
    if claim[0] == "kin":
        return rel_key(models[0], y, x) == word
    key, g, side = WORDS[word]
    return (rel_key(models[0], y, x) == key and all(g is None or m["gender"][x] == g for m in models)
            and all(side is None or fam.relation(m, y, x) == (key, side) for m in models))


def _people(claim: tuple) -> tuple:
    """The people a relation, kin or gender claim speaks of."""
    return claim[1:2] if claim[0] == "gender" else claim[1:3]


def _proven(models: list[dict], claim: tuple) -> bool:
    """Whether some family exists, knows the claim's people, and every one makes the claim true."""
    return bool(models) and all(p in models[0]["people"] for p in _people(claim)) and _holds(models, claim)


def _unread(claim: tuple) -> str | None:
    """Why the checker cannot read a relation, kin, gender or unforced claim (None when it can)."""
    inner = claim[1] if claim[0] == "unforced" else claim
    if not isinstance(inner, tuple) or not inner or inner[0] not in ("rel", "kin", "gender") \
            or len(inner) != ARITY[inner[0]]:
        return f"claims {claim!r}, which the checker cannot read"
    if inner[0] == "rel" and inner[3] not in WORDS:
        return f"claims '{claim_text(claim)}': '{inner[3]}' is no relation word the checker knows"
    return None


def _unforced_problem(claim: tuple, every: list[dict]) -> str | None:
    """Why "not necessarily: <claim>" is not proven: it must fail in some family ALL the stated facts allow."""
    inner, text = claim[1], f"claims '{claim_text(claim)}'"
    if not every:
        return f"{text}, but the stated facts allow no family"
    absent = [p for p in _people(inner) if p not in every[0]["people"]]
    if absent:
        return f"{text}, but {join(absent)} {'is' if len(absent) == 1 else 'are'} not in the stated facts"
    return None if not _holds(every, inner) else f"{text}, but it holds in every family the stated facts allow"


def _fact_problem(families: _Families, claim: tuple, cited: Cited) -> str | None:
    """Why a relation, kin, gender or unforced claim is not proven from exactly what its step cites (None when it
    is), naming the uncited facts it needs when the stated facts prove it."""
    if unread := _unread(claim):
        return unread
    if claim[0] == "unforced":
        return _unforced_problem(claim, families.every())
    models, said, text = families.of(cited.uses, cited.premises), cited.said(), f"claims '{claim_text(claim)}'"
    if _proven(models, claim):
        return None
    absent = [p for p in _people(claim) if models and p not in models[0]["people"]]
    if not cited.uses and not cited.premises:
        why = f"{text}, but it cites no fact"
    elif not models:
        why = f"{text}, but {said} allow no family"
    elif absent:
        why = f"{text}, but {join(absent)} {'is' if len(absent) == 1 else 'are'} not in {said}"
    else:
        why = f"{text}, which fails in a family {said} allow"
    missing = families.missing(claim, cited)
    return f"{why}; it needs {_numbered('fact', missing)}, which it does not cite" if missing else why


def _own_problem(puzzle: dict, claim: tuple, readings: dict) -> str | None:
    """Why a code, option, chain or asked claim is not proven (None when it is)."""
    kind, text = claim[0], f"claims '{claim_text(claim)}'"
    if kind == "code":
        meant = dict(map(tuple, puzzle["codes"])).get(claim[1])
        return None if meant == claim[2] else f"{text}, but the code table says '{claim[1]}' means {meant}"
    if kind == "option":
        options = {" ".join(o): o for o in puzzle.get("options", [])}
        if claim[1] not in options:
            return f"{text}, but the puzzle has no such option"
        a, b = puzzle["question"][1], puzzle["question"][2]
        terms = {t.lower() for t in relation_terms(gender_models(coded.expr_facts(puzzle["codes"], options[claim[1]])),
                                                    b, a)}
        return None if terms == {claim[2]} else f"{text}, but its decoded facts give {sorted(terms)}"
    if "good" not in readings:
        readings["good"] = pointing.valid_readings(puzzle)
    if kind == "chain":
        if not isinstance(claim[1], int) or not 0 <= claim[1] < len(puzzle["chain"]):
            return f"{text}, but the chain has no such word"
        found = pointing.chain_words(puzzle, claim[1], readings["good"])
        return None if found == {claim[2]} else f"{text}, but the readings of the text make that person {found}"
    found = pointing.answers_of(puzzle, readings["good"])
    return None if found == {claim[1]} else f"{text}, but the readings of the text give {sorted(found)}"


def _as_claim(claim) -> tuple:
    """A claim as nested tuples (lists from JSON read alike); anything else as a one-element tuple."""
    return frozen(claim) if isinstance(claim, (list, tuple)) else (claim,)


def _claim_problem(puzzle: dict, claim: tuple, families: _Families, cited: Cited, readings: dict) -> str | None:
    """Why one claim of a step is not proven, or None."""
    if not claim or claim[0] not in ARITY or len(claim) != ARITY[claim[0]]:
        return f"claims {claim!r}, which the checker cannot read"
    if claim[0] in FACT_CLAIMS and puzzle["kind"] != "family_pointing":
        return _fact_problem(families, claim, cited)
    if claim[0] not in OWN_CLAIMS[puzzle["kind"]]:
        return f"claims '{claim_text(claim)}', which a {puzzle['kind']} puzzle cannot prove"
    return _own_problem(puzzle, claim, readings)


def _step_problems(puzzle: dict, step: Step, key: str, families: _Families, cited: Cited,
                   readings: dict) -> list[str]:
    """What is wrong with one step, given exactly what it cites."""
    out = [p for c in step.claims if (p := _claim_problem(puzzle, _as_claim(c), families, cited, readings))]
    if step.answer is not None and step.answer != key:
        out.append(f"concludes '{step.answer}', not the key '{key}'")
    return out


def check_kinship(puzzle: dict, steps: list[Step], key: str | None = None) -> list[str]:
    """Every problem of a blood-relation deduction (empty when the kinship solvers prove it), each naming its step's
    number and text; the key is the family's solver's own unless given."""
    if puzzle.get("kind") not in KINSHIP_KINDS:
        return [f"{puzzle.get('kind')!r} is not a blood-relation family ({', '.join(KINSHIP_KINDS)})"]
    if key is None:
        try:
            key = kinship_key(puzzle)
        except ValueError as exc:
            return [str(exc)]
    try:
        facts = stated_facts(puzzle, key)
        families = _Families(facts)
        needed = key_claims(puzzle, key, families.every() if facts else [])
    except (LookupError, StopIteration):
        return [f"the key '{key}' is none of the puzzle's options"]
    if facts and not families.every():
        return ["the stated facts allow no family"]
    return _steps_problems(puzzle, steps, key, families, needed)


def _citation_problem(step: Step, at: int, n_facts: int) -> str | None:
    """Why a step's citations cannot be read: a fact the puzzle does not have, or a step that is not an earlier
    one (None when they can)."""
    if any(not isinstance(u, int) or not 0 <= u < n_facts for u in step.uses):
        return f"cites a fact the puzzle does not have ({_numbered('fact', step.uses)}; it states {n_facts})"
    if any(not isinstance(a, int) or not 0 <= a < at for a in step.after):
        return f"cites a step that is not an earlier one ({_numbered('step', step.after)})"
    return None


def _steps_problems(puzzle: dict, steps: list[Step], key: str, families: _Families, needed: list[tuple]) -> list[str]:
    """Every step's problems, each proven from exactly what it cites (its facts, and the claims of the earlier steps
    it cites), then a missing conclusion or key claim."""
    readings, out, claimed = {}, [], set()
    for i, step in enumerate(steps):
        where = f"step {i + 1} ({step.text or step})"
        if problem := _citation_problem(step, i, len(families.facts)):
            out.append(f"{where}: {problem}")
            continue
        after = tuple(step.after)
        cited = Cited(frozenset(step.uses), after, tuple(_as_claim(c) for a in after for c in steps[a].claims))
        out += [f"{where}: {p}" for p in _step_problems(puzzle, step, key, families, cited, readings)]
        claimed |= {_as_claim(c) for c in step.claims}
    if not steps or steps[-1].answer is None:
        out.append("the last step does not conclude the key")
    return out + [f"no step claims '{claim_text(c)}', which the key says" for c in needed if c not in claimed]
