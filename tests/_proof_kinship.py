"""A second, independent proof of every blood-relation key: every family the clues allow, built by brute force.

Written apart from helpers.puzzles.kinship: it reads a puzzle's stored fields (facts, chain, codes, question,
options) and its question text, and gives every fact, chain word, "only", code and relation word its own plain
English meaning here. It imports nothing from the kit.

A Family is people, each with a sex ("m", "f", or None while no word fixes it), both parents or none, and at most
one spouse. The conventions of such aptitude-test puzzles, as the kit states them to its readers:
- siblings are full siblings; a child's two parents are a married couple, so a parent's spouse is the other parent;
- everyone marries at most once, a couple is a man and a woman, and relatives never marry;
- distinct names or letters are distinct people; a sex is known only from a gendered word said about the person
  or about their spouse (a name never tells it);
- people the text does not mention may exist (a grandparent behind "A is B's brother"), but nobody is taken to
  be a relative the text does not make them: a person described ("my father's son") is someone the text already
  makes so (the speaker himself) or someone new;
- "only son of N" means N has exactly one son in the whole family.

A puzzle's worlds are every Family consistent with the clues (every reading of a pointing chain, every sex no word
fixes). An option is correct when it holds in every world; "Cannot be determined" is correct when no relation word
holds in every world. judge() returns the correct options and the options that hold in at least one world.
"""

from __future__ import annotations

import itertools
from typing import Callable, NamedTuple

CBD = "Cannot be determined"
OTHER = {"m": "f", "f": "m"}


# ---- a family ------------------------------------------------------------------------------------------------

class Family:
    """People by number; a person found to be someone else is merged into them (alias points at the survivor)."""

    __slots__ = ("sex", "father", "mother", "spouse", "named", "alias", "names", "only")

    def __init__(self) -> None:
        """A family with nobody in it."""
        self.sex: list[str | None] = []
        self.father: list[int | None] = []
        self.mother: list[int | None] = []
        self.spouse: list[int | None] = []
        self.named: list[bool] = []
        self.alias: list[int] = []
        self.names: dict[str, int] = {}
        self.only: list[tuple[str, int, str]] = []  # ("children" or "siblings", person, sex): exactly one such

    def copy(self) -> Family:
        """An independent copy to branch on."""
        new = Family.__new__(Family)
        for slot in ("sex", "father", "mother", "spouse", "named", "alias", "only"):
            setattr(new, slot, list(getattr(self, slot)))
        new.names = dict(self.names)
        return new

    def add(self, sex: str | None = None, name: str | None = None) -> int:
        """Someone new (named, or anonymous when name is None)."""
        n = len(self.sex)
        for column, value in ((self.sex, sex), (self.father, None), (self.mother, None), (self.spouse, None),
                              (self.named, name is not None), (self.alias, n)):
            column.append(value)
        if name is not None:
            self.names[name] = n
        return n

    def person(self, name: str) -> int:
        """The person called name, added when first mentioned."""
        return self.find(self.names[name]) if name in self.names else self.add(name=name)

    def find(self, n: int) -> int:
        """The person n now is (after merges)."""
        while self.alias[n] != n:
            self.alias[n] = self.alias[self.alias[n]]
            n = self.alias[n]
        return n

    def link(self, column: list[int | None], n: int) -> int | None:
        """n's father, mother or spouse (the column), or None."""
        k = column[self.find(n)]
        return None if k is None else self.find(k)

    def people(self) -> list[int]:
        """Everyone in the family, once each."""
        return [n for n in range(len(self.sex)) if self.alias[n] == n]

    def set_sex(self, n: int, sex: str) -> bool:
        """Make n of this sex (and n's spouse of the other); False when a word already says otherwise."""
        n = self.find(n)
        if self.sex[n] is not None:
            return self.sex[n] == sex
        self.sex[n] = sex
        s = self.link(self.spouse, n)
        return s is None or self.set_sex(s, OTHER[sex])

    def ensure_parents(self, n: int) -> None:
        """Give n a father and a mother (a married couple nobody has named) unless n has them."""
        n = self.find(n)
        if self.father[n] is None:
            dad, mum = self.add("m"), self.add("f")
            self.spouse[dad], self.spouse[mum] = mum, dad
            self.father[n], self.mother[n] = dad, mum

    def merge(self, a: int, b: int) -> bool:
        """Make a and b one person, and so their parents and their spouses; False for two named people."""
        todo = [(a, b)]
        while todo:
            a, b = (self.find(k) for k in todo.pop())
            if a == b:
                continue
            if self.named[a] and self.named[b]:
                return False
            if self.named[b]:
                a, b = b, a
            self.alias[b] = a
            if self.sex[b] is not None and self.sex[a] is not None and self.sex[a] != self.sex[b]:
                return False
            self.sex[a] = self.sex[a] or self.sex[b]
            for column in (self.father, self.mother, self.spouse):
                if column[b] is not None and column[a] is not None:
                    todo.append((column[a], column[b]))
                elif column[b] is not None:
                    column[a] = column[b]
        return True

    def make_parent(self, child: int, parent: int) -> bool:
        """parent (whose sex is known) is child's father or mother."""
        self.ensure_parents(child)
        column = self.father if self.sex[self.find(parent)] == "m" else self.mother
        return self.merge(self.link(column, child), parent)

    def make_siblings(self, a: int, b: int) -> bool:
        """a and b are (full) siblings: two people with the same father and mother."""
        if self.find(a) == self.find(b):
            return False
        self.ensure_parents(a)
        self.ensure_parents(b)
        return (self.merge(self.link(self.father, a), self.link(self.father, b))
                and self.merge(self.link(self.mother, a), self.link(self.mother, b))
                and self.find(a) != self.find(b))

    def marry(self, a: int, b: int) -> bool:
        """a and b are husband and wife (each one's only spouse)."""
        for x, y in ((a, b), (b, a)):
            s = self.link(self.spouse, x)
            if s is not None and not self.merge(s, y):
                return False
        a, b = self.find(a), self.find(b)
        if a == b:
            return False
        self.spouse[a], self.spouse[b] = b, a
        if self.sex[a] is not None:
            return self.set_sex(b, OTHER[self.sex[a]])
        return self.sex[b] is None or self.set_sex(a, OTHER[self.sex[b]])

    def consistent(self) -> bool:
        """Whether the family is a possible one (see the module docstring); spouses' sexes are filled in first."""
        people = self.people()
        for n in people:  # a spouse's sex follows from the other's
            s = self.link(self.spouse, n)
            if s is not None and self.sex[n] and not self.sex[s]:
                self.sex[s] = OTHER[self.sex[n]]
        return all(self._sound(n) for n in people)

    def _sound(self, n: int) -> bool:
        """n's parents are a married man and woman, n's marriage is mutual and mixed, n is not n's own ancestor,
        and n is no relative of n's spouse."""
        dad, mum, s = self.link(self.father, n), self.link(self.mother, n), self.link(self.spouse, n)
        if dad is not None and (self.sex[dad] != "m" or self.sex[mum] != "f" or self.link(self.spouse, dad) != mum
                                or self.link(self.spouse, mum) != dad):
            return False
        line = self.ancestors(n)
        if n in line:
            return False
        if s is None:
            return True
        return (s != n and self.link(self.spouse, s) == n and not (self.sex[n] and self.sex[n] == self.sex[s])
                and not (line | {n}) & (self.ancestors(s) | {s}))

    def ancestors(self, n: int) -> set[int]:
        """Everyone n descends from (stops on a loop)."""
        out: set[int] = set()
        todo = [n]
        while todo:
            for p in parents(self, todo.pop()):
                if p not in out:
                    out.add(p)
                    todo.append(p)
        return out


# ---- relation words, in plain English ------------------------------------------------------------------------

def parents(f: Family, n: int) -> list[int]:
    """n's father and mother (none when the family does not know them)."""
    dad = f.link(f.father, n)
    return [] if dad is None else [dad, f.link(f.mother, n)]


def children(f: Family, n: int) -> list[int]:
    """Everyone whose father or mother is n."""
    n = f.find(n)
    return [c for c in f.people() if n in parents(f, c)]


def siblings(f: Family, n: int) -> list[int]:
    """Everyone else with n's father and mother."""
    n, mine = f.find(n), parents(f, n)
    return [s for s in f.people() if mine and s != n and parents(f, s) == mine]


def spouses(f: Family, n: int) -> list[int]:
    """n's husband or wife, if any."""
    s = f.link(f.spouse, n)
    return [] if s is None else [s]


def grandparents(f: Family, n: int) -> list[int]:
    """The parents of n's parents."""
    return [g for p in parents(f, n) for g in parents(f, p)]


def great_grandparents(f: Family, n: int) -> list[int]:
    """The parents of n's grandparents."""
    return [g for p in grandparents(f, n) for g in parents(f, p)]


def grandchildren(f: Family, n: int) -> list[int]:
    """The children of n's children."""
    return [g for c in children(f, n) for g in children(f, c)]


def great_grandchildren(f: Family, n: int) -> list[int]:
    """The children of n's grandchildren."""
    return [g for c in grandchildren(f, n) for g in children(f, c)]


def uncles_and_aunts(f: Family, n: int) -> list[int]:
    """A brother or sister of n's father or mother, or the husband or wife of one."""
    return [u for p in parents(f, n) for s in siblings(f, p) for u in [s] + spouses(f, s)]


def great_uncles_and_aunts(f: Family, n: int) -> list[int]:
    """A brother or sister of one of n's grandparents, or the husband or wife of one."""
    return [u for g in grandparents(f, n) for s in siblings(f, g) for u in [s] + spouses(f, s)]


def nephews_and_nieces(f: Family, n: int) -> list[int]:
    """A child of n's brother or sister, or of n's spouse's brother or sister."""
    return [c for s in siblings(f, n) + [t for w in spouses(f, n) for t in siblings(f, w)] for c in children(f, s)]


def cousins(f: Family, n: int) -> list[int]:
    """A child of a brother or sister of n's father or mother."""
    return [c for p in parents(f, n) for s in siblings(f, p) for c in children(f, s)]


def parents_in_law(f: Family, n: int) -> list[int]:
    """The father and mother of n's spouse."""
    return [p for w in spouses(f, n) for p in parents(f, w)]


def children_in_law(f: Family, n: int) -> list[int]:
    """The husbands and wives of n's children."""
    return [w for c in children(f, n) for w in spouses(f, c)]


def siblings_in_law(f: Family, n: int) -> list[int]:
    """A brother or sister of n's spouse, or the husband or wife of n's brother or sister."""
    return [s for w in spouses(f, n) for s in siblings(f, w)] + [w for s in siblings(f, n) for w in spouses(f, s)]


def selves(f: Family, n: int) -> list[int]:
    """n alone ("Himself", "Herself")."""
    return [f.find(n)]


Relatives = Callable[[Family, int], list[int]]
# "X is Y's <word>": X is among relatives(Y) and, for a gendered word, of that sex
WORDS: dict[str, tuple[Relatives, str | None]] = {
    "Father": (parents, "m"), "Mother": (parents, "f"), "Son": (children, "m"), "Daughter": (children, "f"),
    "Brother": (siblings, "m"), "Sister": (siblings, "f"), "Husband": (spouses, "m"), "Wife": (spouses, "f"),
    "Grandfather": (grandparents, "m"), "Grandmother": (grandparents, "f"),
    "Grandson": (grandchildren, "m"), "Granddaughter": (grandchildren, "f"),
    "Great-grandfather": (great_grandparents, "m"), "Great-grandmother": (great_grandparents, "f"),
    "Great-grandson": (great_grandchildren, "m"), "Great-granddaughter": (great_grandchildren, "f"),
    "Uncle": (uncles_and_aunts, "m"), "Aunt": (uncles_and_aunts, "f"),
    "Great-uncle": (great_uncles_and_aunts, "m"), "Great-aunt": (great_uncles_and_aunts, "f"),
    "Nephew": (nephews_and_nieces, "m"), "Niece": (nephews_and_nieces, "f"), "Cousin": (cousins, None),
    "Father-in-law": (parents_in_law, "m"), "Mother-in-law": (parents_in_law, "f"),
    "Son-in-law": (children_in_law, "m"), "Daughter-in-law": (children_in_law, "f"),
    "Brother-in-law": (siblings_in_law, "m"), "Sister-in-law": (siblings_in_law, "f"),
    "Himself": (selves, "m"), "Herself": (selves, "f"),
}


def holds(f: Family, word: str, x: int, y: int) -> bool:
    """Whether x is y's <word> (a capitalised relation word) in family f."""
    relatives, sex = WORDS[word]
    return f.find(x) in relatives(f, y) and (sex is None or f.sex[f.find(x)] == sex)


# ---- the verdict ---------------------------------------------------------------------------------------------

class Verdict(NamedTuple):
    """The options true in every world (correct), in at least one (possible), and how many worlds there were."""

    correct: frozenset
    possible: frozenset
    worlds: int


def relation_verdict(worlds: list[tuple[Family, int, int]], options: list[str]) -> Verdict:
    """Options that name x's relation to y in every (family, x, y); "Cannot be determined" when no word of the whole
    vocabulary does."""
    plain = [o for o in options if o != CBD]
    correct = {o for o in plain if worlds and all(holds(f, o, x, y) for f, x, y in worlds)}
    possible = {o for o in plain if any(holds(f, o, x, y) for f, x, y in worlds)}
    settled = worlds and any(all(holds(f, w, x, y) for f, x, y in worlds) for w in WORDS)
    if CBD in options and worlds and not settled:
        correct.add(CBD)
    return Verdict(frozenset(correct), frozenset(possible), len(worlds))


def option_verdict(options: list[str], worlds_of: Callable[[str], list], holds_in: Callable[[object, str], bool]
                   ) -> Verdict:
    """Options (statements, expressions, people) true in every world of theirs (worlds_of(option)), or in some."""
    correct, possible, count = set(), set(), 0
    for option in options:
        worlds = worlds_of(option)
        count += len(worlds)
        verdicts = [holds_in(w, option) for w in worlds]
        if verdicts and all(verdicts):
            correct.add(option)
        if any(verdicts):
            possible.add(option)
    return Verdict(frozenset(correct), frozenset(possible), count)


def judge(record: dict) -> Verdict:
    """The verdict on a generated record's four choices, from its stored puzzle (and, for a pointing scene, its
    question text)."""
    p = record["puzzle"]
    if p["kind"] == "family_pointing":
        return relation_verdict(pointing_worlds(p, shows_speaker(record["question"])), record["choices"])
    if p["kind"] == "family_coded":
        return coded_verdict(p, record["choices"])
    if p["kind"] == "family_gender" and p["question"][0] == "true":
        return statement_verdict(p["facts"], p["options"], record["choices"])
    if p["kind"] == "family" and p["question"][0] == "who":
        return role_verdict(p["facts"], p["question"][1], p["question"][2], record["choices"])
    return relation_verdict(facts_worlds(p["facts"], p["question"][1], p["question"][2]), record["choices"])


def key_is_proven(record: dict) -> bool:
    """Whether the record's key is the one correct choice, and (unless the question asks what is definitely true or
    the key is "Cannot be determined") no other choice holds in any world either."""
    key = record["choices"][record["answer"]]
    verdict = judge(record)
    traps_allowed = key == CBD or record["puzzle"]["question"][0] == "true"
    return verdict.correct == {key} and (traps_allowed or verdict.possible == {key})


# ---- stated facts (family, family_coded, family_gender) -----------------------------------------------------

# "A is B's <word>": (what A is to B, A's sex when the word says it)
FACT_WORDS = {"father": ("parent", "m"), "mother": ("parent", "f"), "parent": ("parent", None),
              "son": ("child", "m"), "daughter": ("child", "f"), "child": ("child", None),
              "brother": ("sibling", "m"), "sister": ("sibling", "f"), "sibling": ("sibling", None),
              "husband": ("spouse", "m"), "wife": ("spouse", "f"), "spouse": ("spouse", None)}


def either_sex(f: Family, n: int) -> list[Family]:
    """f itself when n's sex is known, else a copy for each sex."""
    if f.sex[f.find(n)] is not None:
        return [f]
    return [g for s in "mf" for g in [f.copy()] if g.set_sex(n, s)]


def state(f: Family, fact: list[str]) -> list[Family]:
    """Every family that f becomes once "a is b's word" holds (a branch per sex a parent's slot needs)."""
    word, a, b = fact
    kind, sex = FACT_WORDS[word]
    g = f.copy()
    x, y = g.person(a), g.person(b)
    if sex is not None and not g.set_sex(x, sex):
        return []
    if kind == "sibling":
        return [g] if g.make_siblings(x, y) else []
    if kind == "spouse":
        return [g] if g.marry(x, y) else []
    child, parent = (y, x) if kind == "parent" else (x, y)
    return [h for h in either_sex(g, parent) if h.make_parent(child, parent)]


def fact_families(facts: list[list[str]]) -> list[Family]:
    """Every consistent family the facts allow, one per way of fixing the sexes their parent links need."""
    front = [Family()]
    for fact in facts:
        front = [g for f in front for g in state(f, fact)]
    return [f for f in front if f.consistent()]


def with_sexes(f: Family, people: list[int]) -> list[Family]:
    """f once for every sex the people whose sex is unknown may have (spouses follow)."""
    front = [f]
    for n in people:
        front = [g for h in front for g in either_sex(h, n)]
    return [g for g in front if g.consistent()]


def facts_worlds(facts: list[list[str]], x: str, y: str) -> list[tuple[Family, int, int]]:
    """(family, x, y) for every world of the facts, x's sex made definite; nothing when x or y is never mentioned."""
    out = []
    for f in fact_families(facts):
        if x in f.names and y in f.names:
            out += [(g, g.person(x), g.person(y)) for g in with_sexes(f, [f.person(x)])]
    return out


# family "who" roles: the steps from Y to the one person holding the role
ROLES = {"maternal grandfather": ("mother", "father"), "maternal grandmother": ("mother", "mother"),
         "paternal grandfather": ("father", "father"), "paternal grandmother": ("father", "mother"),
         "father-in-law": ("spouse", "father"), "mother-in-law": ("spouse", "mother")}


def role_holder(f: Family, role: str, y: int) -> int | None:
    """The one person holding the role for y (e.g. y's mother's father), or None when the family has no such person."""
    n: int | None = y
    for step in ROLES[role]:
        column = {"father": f.father, "mother": f.mother, "spouse": f.spouse}[step]
        n = None if n is None else f.link(column, n)
    return n


def role_verdict(facts: list[list[str]], role: str, y: str, choices: list[str]) -> Verdict:
    """Which named choices hold the role for y in every world of the facts."""
    families = [f for f in fact_families(facts) if y in f.names]

    def named_holder(f: Family, name: str) -> bool:
        """Whether the person called name holds the role in f."""
        holder = role_holder(f, role, f.person(y))
        return name in f.names and holder is not None and f.person(name) == holder
    return option_verdict(choices, lambda _: families, named_holder)


def statement_text(st: list[str]) -> str:
    """A "which is definitely true?" option as its choice reads: "R is male", "R is T's aunt"."""
    if st[0] == "gender":
        return f"{st[1]} is {'male' if st[2] == 'm' else 'female'}"
    return f"{st[1]} is {st[2]}'s {st[3].lower()}"


def statement_verdict(facts: list[list[str]], statements: list[list[str]], choices: list[str]) -> Verdict:
    """Which statements hold in every world of the facts (every sex a statement's subject may have)."""
    by_text = {statement_text(st): st for st in statements}
    if set(by_text) != set(choices):
        raise ValueError(f"the choices {choices} are not the stored statements {sorted(by_text)}")
    families = fact_families(facts)
    subjects = sorted({st[1] for st in statements})
    worlds = [g for f in families for g in with_sexes(f, [f.person(s) for s in subjects])]

    def true_in(f: Family, text: str) -> bool:
        """Whether one statement holds in f."""
        st = by_text[text]
        if st[0] == "gender":
            return f.sex[f.person(st[1])] == st[2]
        return st[2] in f.names and holds(f, capitalised(st[3]), f.person(st[1]), f.person(st[2]))
    return option_verdict(choices, lambda _: worlds, true_in)


def capitalised(word: str) -> str:
    """ "great-aunt" -> "Great-aunt", the relation words' spelling."""
    return word[:1].upper() + word[1:]


# ---- coded relations (family_coded) ---------------------------------------------------------------------------

def decode(codes: list[list[str]], tokens: list[str]) -> list[list[str]]:
    """ "A # B @ C" with "#" meaning father and "@" sister: [["father", "A", "B"], ["sister", "B", "C"]]."""
    meaning = {symbol: word for symbol, word in codes}
    return [[meaning[tokens[i + 1]], tokens[i], tokens[i + 2]] for i in range(0, len(tokens) - 2, 2)]


def coded_facts(p: dict) -> list[list[str]]:
    """A coded relation question's facts: the expression decoded, then any fact stated in words beside it."""
    return decode(p["codes"], p["expr"]) + [list(f) for f in p.get("stated", [])]


def coded_verdict(p: dict, choices: list[str]) -> Verdict:
    """A relation question over the decoded facts, or which expression (choice) surely means the asked relation."""
    q = p["question"]
    if q[0] == "relation":
        return relation_verdict(facts_worlds(coded_facts(p), q[1], q[2]), choices)
    _, a, b, word = q
    expressions = {" ".join(o): o for o in p["options"]}
    if set(expressions) != set(choices):
        raise ValueError(f"the choices {choices} are not the stored expressions {sorted(expressions)}")
    return option_verdict(choices, lambda text: facts_worlds(decode(p["codes"], expressions[text]), a, b),
                          lambda world, _: holds(world[0], word, world[1], world[2]))


# ---- pointing chains (family_pointing) ---------------------------------------------------------------------

# a chain word as the plain steps it takes from its owner ("grandfather": a parent's father, on either side)
CHAIN_WORDS = {
    "father": ("father",), "mother": ("mother",), "son": ("son",), "daughter": ("daughter",),
    "brother": ("brother",), "sister": ("sister",), "husband": ("husband",), "wife": ("wife",),
    "grandfather": ("parent", "father"), "grandmother": ("parent", "mother"),
    "paternal grandfather": ("father", "father"), "paternal grandmother": ("father", "mother"),
    "maternal grandfather": ("mother", "father"), "maternal grandmother": ("mother", "mother"),
    "great-grandfather": ("parent", "parent", "father"), "great-grandmother": ("parent", "parent", "mother"),
    "grandson": ("child", "son"), "granddaughter": ("child", "daughter"),
    "father-in-law": ("spouse", "father"), "mother-in-law": ("spouse", "mother"),
    "son-in-law": ("daughter", "husband"), "daughter-in-law": ("son", "wife"),
}
SEXED = {"father": "m", "mother": "f", "son": "m", "daughter": "f", "brother": "m", "sister": "f",
         "husband": "m", "wife": "f"}
NEUTRAL = {"parent": ("father", "mother"), "child": ("son", "daughter"), "spouse": ("husband", "wife")}
SCENES_SHOWING_ANYONE = ("photograph", "portrait", "photo ", "picture")  # may show the speaker
SCENES_OF_SOMEONE_ELSE = ("Introducing", "in the street", "Meeting")  # a person there is not the speaker


def shows_speaker(question: str) -> bool:
    """Whether the scene before the quote (a photograph, or someone introduced) may show the speaker himself."""
    scene = question.split('"')[0]
    if any(w in scene for w in SCENES_OF_SOMEONE_ELSE):
        return False
    if any(w in scene for w in SCENES_SHOWING_ANYONE):
        return True
    raise ValueError(f"unknown pointing scene: {scene!r}")


def up(f: Family, n: int, sex: str) -> list[tuple[Family, int]]:
    """n's father or mother: always one person (someone new when not yet mentioned)."""
    g = f.copy()
    g.ensure_parents(n)
    return [(g, g.link(g.father if sex == "m" else g.mother, n))]


def known_or_new(f: Family, known: list[int], sex: str, make_new: Callable[[Family], list[tuple[Family, int]]]
                 ) -> list[tuple[Family, int]]:
    """Someone the family already makes so, given this sex, or (each way make_new offers) someone new."""
    return [(g, k) for k in known for g in [f.copy()] if g.set_sex(k, sex)] + make_new(f.copy())


def new_child(f: Family, n: int, sex: str) -> list[tuple[Family, int]]:
    """A new son or daughter of n and n's spouse (a spouse nobody named when n has none), each sex n may have."""
    out = []
    for g in either_sex(f.copy(), n):
        if g.link(g.spouse, n) is None and not g.marry(n, g.add(OTHER[g.sex[g.find(n)]])):
            continue
        pair = (g.find(n), g.link(g.spouse, n))
        dad, mum = pair if g.sex[pair[0]] == "m" else pair[::-1]
        c = g.add(sex)
        g.father[c], g.mother[c] = dad, mum
        out.append((g, c))
    return out


def down(f: Family, n: int, sex: str, only: bool) -> list[tuple[Family, int]]:
    """n's son or daughter: one the family already has, or a new one; "only" claims exactly one."""
    if only:
        f = f.copy()
        f.only.append(("children", f.find(n), sex))
    return known_or_new(f, children(f, n), sex, lambda g: new_child(g, n, sex))


def across(f: Family, n: int, sex: str, only: bool) -> list[tuple[Family, int]]:
    """n's brother or sister: one the family already has, or a new child of n's parents; "only" claims exactly one."""
    f = f.copy()
    f.ensure_parents(n)
    if only:
        f.only.append(("siblings", f.find(n), sex))
    dad, mum = parents(f, n)

    def born(g: Family) -> list[tuple[Family, int]]:
        """A new child of n's parents."""
        c = g.add(sex)
        g.father[c], g.mother[c] = dad, mum
        return [(g, c)]
    return known_or_new(f, siblings(f, n), sex, born)


def partner(f: Family, n: int, sex: str) -> list[tuple[Family, int]]:
    """n's husband or wife: n's spouse if the family has one, else someone new (n is then of the other sex)."""
    g = f.copy()
    if not g.set_sex(n, OTHER[sex]):
        return []
    s = g.link(g.spouse, n)
    if s is None:
        s = g.add(sex)
        return [(g, s)] if g.marry(n, s) else []
    return [(g, s)] if g.set_sex(s, sex) else []


def step(f: Family, n: int, word: str, only: bool = False) -> list[tuple[Family, int]]:
    """Every (family, person) that "n's (only) <word>" may be, for one plain word (father ... spouse)."""
    if word in NEUTRAL:
        return [r for w in NEUTRAL[word] for r in step(f, n, w, only)]
    sex = SEXED[word]
    if word in ("father", "mother"):
        return up(f, n, sex)
    if word in ("son", "daughter"):
        return down(f, n, sex, only)
    if word in ("brother", "sister"):
        return across(f, n, sex, only)
    return partner(f, n, sex)


def say(f: Family, n: int, word: str, only: bool) -> list[tuple[Family, int]]:
    """Every (family, person) that "n's (only) <chain word>" may be; "only" is said of single-step words."""
    steps = CHAIN_WORDS[word]
    if only and len(steps) > 1:
        raise ValueError(f"'only {word}' is not a claim this checker reads")
    front = [(f, n)]
    for w in steps:
        front = [r for g, k in front for r in step(g, k, w, only)]
    return front


# "His <rel> is <the chain's end>": what the pointed-at person is to the chain's end
INVERSE = {"father": "child", "mother": "child", "son": "parent", "daughter": "parent", "brother": "sibling",
           "sister": "sibling", "husband": "spouse", "wife": "spouse"}
SEXED_FORMS = {"child": ("son", "daughter"), "parent": ("father", "mother"), "sibling": ("brother", "sister"),
               "spouse": ("husband", "wife")}


def pointed(p: dict, f: Family, end: int) -> list[tuple[Family, int]]:
    """The pointed-at person: the chain's end ("He is ..."), or that person's relative ("His mother is ...")."""
    if p["form"] == "is":
        g = f.copy()
        return [(g, end)] if g.set_sex(end, p["pronoun"]) else []
    g = f.copy()
    if not g.set_sex(end, SEXED[p["rel"]]):
        return []
    word = SEXED_FORMS[INVERSE[p["rel"]]][p["pronoun"] == "f"]
    return step(g, end, word)


def only_claims_hold(f: Family) -> bool:
    """Every "only" claim: exactly one son/daughter (or brother/sister) of that person in the whole family."""
    for kind, n, sex in f.only:
        kin = children(f, n) if kind == "children" else siblings(f, n)
        if sum(1 for k in kin if f.sex[k] == sex) != 1:
            return False
    return True


def complete(f: Family) -> list[Family]:
    """f with every sex still open filled in each possible way, kept when consistent and every "only" holds."""
    unknown = [n for n in f.people() if f.sex[n] is None]
    out = []
    for combo in itertools.product("mf", repeat=len(unknown)):
        g = f.copy()
        if all(g.set_sex(n, s) for n, s in zip(unknown, combo)) and g.consistent() and only_claims_hold(g):
            out.append(g)
    return out


def pointing_worlds(p: dict, may_be_speaker: bool) -> list[tuple[Family, int, int]]:
    """(family, x, y) for every reading of a pointing text, where the answer is "x is y's <word>"."""
    f = Family()
    speaker = f.add(p.get("speaker_gender"))
    front = [(f, speaker)]
    for word, only in p["chain"]:
        front = [r for g, n in front for r in say(g, n, word, bool(only))]
    front = [r for g, n in front for r in pointed(p, g, n) if may_be_speaker or r[1] != speaker]
    q = p["question"]
    if q[0] == "to_relative":
        front = [(g2, x, t) for g, x in front for g2, t in step(g, speaker, q[1])]
    else:
        front = [(g, x, speaker) for g, x in front]
    worlds = [(h, x, y) for g, x, y in front for h in complete(g)]
    return [(h, y, x) for h, x, y in worlds] if q[0] == "inverse" else worlds
