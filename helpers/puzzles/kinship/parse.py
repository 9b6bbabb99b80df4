"""Read a blood-relation question written in the generators' own words back into its structured puzzle, so the
solver can prove it (the family counterpart of helpers.puzzles.seating.parse). A text parses only when the puzzle
renders back to exactly that text. Every blood-relation family is read: stated facts (helpers.puzzles.kinship.tree),
coded relations (kinship.coded), gender inference (kinship.gender) and pointing chains (kinship.pointing).
"""

from __future__ import annotations

import re

from helpers.puzzles.kinship import coded, gender, pointing, tree
from helpers.puzzles.kinship.facts import NEUTRAL
from helpers.puzzles.kinship.words import ASK

_NAME = r"[A-Z][a-z]*"
# the words a stated or coded fact may use: the gendered ones and their neutral forms (parent, child, ...)
FACT_WORDS = tuple(tree.REL_WORDS) + tuple(NEUTRAL)
_WORD = "(" + "|".join(FACT_WORDS) + ")"
_GENDER_FACTS = (re.compile(rf"({_NAME}) is the {_WORD} of ({_NAME})\."),  # kinship.gender's three wordings
                 re.compile(rf"({_NAME}) is ({_NAME})'s {_WORD}\."), re.compile(rf"({_NAME})'s {_WORD} is ({_NAME})\."))
_STATEMENT = (re.compile(rf"({_NAME}) is (male|female)"), re.compile(rf"({_NAME}) is ({_NAME})'s ([a-z][a-z-]*)"))


def parse(text: str, choices: list[str] | None = None) -> tuple[dict | None, str | None]:
    """(the structured puzzle whose render is exactly `text`, None) or (None, "unknown_text")."""
    for reader, render in ((_read_facts, tree.render), (_read_coded, coded.render_coded),
                           (_read_gender, gender.render_gender), (_read_pointing, pointing.render_pointing)):
        puzzle = reader(text, choices or [])
        if puzzle is not None and render(puzzle) == text:
            return puzzle, None
    return None, "unknown_text"


def _template(template: str, **groups: str) -> re.Pattern:
    """A regular expression from a generator's question template ("{a}" -> a named group)."""
    pattern = re.escape(template)
    for name, group in groups.items():
        pattern = pattern.replace(re.escape("{" + name + "}"), f"(?P<{name}>{group})")
    return re.compile(pattern)


def _read_facts(text: str, choices: list[str]) -> dict | None:
    """The stated-facts family: "In a family: A is B's mother. ... How is X related to Y?" in any of its wordings."""
    intro = next((i for i, t in enumerate(tree.INTROS) if text.startswith(t)), None)
    if intro is None:
        return None
    sentences = re.split(r"(?<=\.) ", text[len(tree.INTROS[intro]):])
    facts, styles = [], []
    for s in sentences[:-1]:
        fact = _fact(s, tuple(tree.REL_WORDS))
        if fact is None:
            return None
        facts.append(fact[0])
        styles.append(fact[1])
    p = {"kind": "family", "facts": facts, "question": None, "intro": intro, "styles": styles}
    for i, (relation, who) in enumerate(zip(tree.ASK, tree.WHO_ASK)):
        if m := _template(relation, x=_NAME, y=_NAME).fullmatch(sentences[-1]):
            return dict(p, question=["relation", m.group("x"), m.group("y")], ask=i)
        if m := _template(who, y=_NAME, r=r"[a-z][a-z -]*").fullmatch(sentences[-1]):
            return dict(p, question=["who", m.group("r"), m.group("y")], ask=i)
    return None


def _fact(sentence: str, words: tuple[str, ...]) -> tuple[list[str], int] | None:
    """One stated fact in any wording (tree.FACT_STYLES) back to ([word, a, b], style): "a is b's word"."""
    for style, template in enumerate(tree.FACT_STYLES):
        m = _template(template, a=_NAME, b=_NAME, w="|".join(words)).fullmatch(sentence)
        if m:
            return [m.group("w"), m.group("a"), m.group("b")], style
    return None


def _read_coded(text: str, choices: list[str]) -> dict | None:
    """Coded relations: the code definitions, then an expression to decode or a choice of expressions."""
    intro = max((i for i, t in enumerate(coded.CODE_INTROS) if text.startswith(t)),
                key=lambda i: len(coded.CODE_INTROS[i]))
    codes_text, sep, ask = text[len(coded.CODE_INTROS[intro]):].partition(". ")
    for style, template in enumerate(coded.CODE_STYLES):
        pattern = _template(template, s=r"\S", w="|".join(FACT_WORDS))
        found = [pattern.fullmatch(c) for c in codes_text.split("; ")]
        if sep and all(found):
            codes = [[m.group("s"), m.group("w")] for m in found]
            p = {"kind": "family_coded", "codes": codes, "style": style, "intro": intro}
            return _coded_question(p, ask, choices)
    return None


def _coded_question(p: dict, ask: str, choices: list[str]) -> dict | None:
    """The decode question ("If A # B, how is A related to B?") or the which-expression one."""
    for i, template in enumerate(coded.CODED_ASK):
        m = _template(template, e=r".+?", a=_NAME, b=_NAME).fullmatch(ask)
        if m:
            expr, *said = m.group("e").split(" and ")
            stated = [_fact(s + ".", FACT_WORDS) for s in said]
            if None in stated or any(style != 0 for _, style in stated):
                return None
            p = dict(p, stated=[fact for fact, _ in stated]) if stated else p
            return dict(p, ask=i, expr=expr.split(" "), question=["relation", m.group("a"), m.group("b")])
    for i, template in enumerate(coded.WHICH_ASK):
        m = _template(template, a=_NAME, b=_NAME, t=r"[a-z][a-z-]*").fullmatch(ask)
        if m and len(choices) == 4:
            return dict(p, ask=i, options=[c.split(" ") for c in choices],
                        question=["which", m.group("a"), m.group("b"), m.group("t").capitalize()])
    return None


def _read_gender(text: str, choices: list[str]) -> dict | None:
    """Gender inference: facts in three wordings, then a relation question or "which must be true?"."""
    intro = max((i for i, t in enumerate(gender.GENDER_INTROS) if text.startswith(t)),
                key=lambda i: len(gender.GENDER_INTROS[i]))
    sentences = re.split(r"(?<=\.) ", text[len(gender.GENDER_INTROS[intro]):])
    facts, styles = [], []
    for s in sentences[:-1]:
        hit = next(((style, m) for style, rx in enumerate(_GENDER_FACTS) if (m := rx.fullmatch(s))), None)
        if hit is None:
            return None
        style, m = hit
        a, w, b = (m.group(1), m.group(2), m.group(3)) if style != 1 else (m.group(1), m.group(3), m.group(2))
        if style == 2:
            a, b = b, a  # "B's w is A"
        facts.append([w, a, b])
        styles.append(style)
    p = {"kind": "family_gender", "facts": facts, "styles": styles, "intro": intro}
    return _gender_question(p, sentences[-1], choices)


def _gender_question(p: dict, ask: str, choices: list[str]) -> dict | None:
    """A relation question, or "which statement is definitely true?" over the choices."""
    if ask in gender.TRUE_ASK:
        options = [_statement(c) for c in choices]
        if len(choices) != 4 or None in options:
            return None
        return dict(p, question=["true"], ask=gender.TRUE_ASK.index(ask), options=options)
    for i, template in enumerate(ASK):
        m = _template(template, x=_NAME, y=_NAME).fullmatch(ask)
        if m:
            return dict(p, question=["relation", m.group("x"), m.group("y")], ask=i)
    return None


def _statement(text: str) -> list[str] | None:
    """A "which must be true?" choice back to its statement ("R is male", "R is T's aunt")."""
    said, rel = _STATEMENT[0].fullmatch(text), _STATEMENT[1].fullmatch(text)
    if said:
        return ["gender", said.group(1), said.group(2)[0]]
    return ["rel", rel.group(1), rel.group(2), rel.group(3).capitalize()] if rel else None


# ---- pointing chains ---------------------------------------------------------------------------------------

_CHAIN_WORD = "(?:only )?(?:" + "|".join(sorted(map(re.escape, pointing.WORDS), key=len, reverse=True)) + ")"
_STMT = re.compile(r"(?:(He|She) is|(His|Her) ([a-z][a-z -]*?) is) (.+)\.")


def _opening_pattern(template: str) -> re.Pattern:
    """A pointing opening as a regular expression (speaker, target, "his/her", "a man/a woman", the statement)."""
    return _template(template, S=_NAME, T=_NAME, sp="his|her", a="a man|a woman", stmt='[^"]+')


def _read_pointing(text: str, choices: list[str]) -> dict | None:
    """ 'Pointing to a photograph, Ravi said, "He is my mother's only brother's son." How is ... to Ravi?' """
    for i, (template, *_rest) in enumerate(pointing.OPENINGS):
        m = _opening_pattern(template).match(text)
        if m is None or not text[m.end():].startswith(" "):
            continue
        stmt = _STMT.fullmatch(m.group("stmt"))
        chain = _chain(stmt.group(4)) if stmt else None
        if chain is None:
            continue
        he = (stmt.group(1) or stmt.group(2)) in ("He", "His")
        sp = m.groupdict().get("sp")
        p = {"kind": "family_pointing", "speaker": m.group("S"), "target": m.groupdict().get("T"), "opening": i,
             "speaker_gender": {"his": "m", "her": "f"}.get(sp), "pronoun": "m" if he else "f",
             "form": "is" if stmt.group(1) else "rel", "rel": stmt.group(3), "chain": chain[0], "split": chain[1]}
        asked = _pointing_question(p, text[m.end() + 1:])
        if asked is not None:
            return asked
    return None


def _chain(desc: str) -> tuple[list, int] | None:
    """ "the son of the only sister of my mother's husband" -> ([[word, only], ...] innermost first, split)."""
    outer = []
    while (m := re.fullmatch(rf"the ({_CHAIN_WORD}) of (.+)", desc)) is not None:
        outer.append(m.group(1))
        desc = m.group(2)
    if not desc.startswith("my "):
        return None
    inner = desc[len("my "):].split("'s ")
    words = inner + outer[::-1]
    if not all(re.fullmatch(_CHAIN_WORD, w) for w in words):
        return None
    return [[w.removeprefix("only "), w.startswith("only ")] for w in words], len(inner)


def _pointing_question(p: dict, ask: str) -> dict | None:
    """The question after the statement: the pointed-at person to the speaker, the inverse, or to a relative."""
    pointed, speaker = pointing.pointed_phrase(p), p["speaker"]
    for i, template in enumerate(ASK):
        m = _template(template, x="[^?]+", y="[^?]+").fullmatch(ask)
        if m is None:
            continue
        x, y = m.group("x"), m.group("y")
        if x == pointed and y == speaker:
            return dict(p, question=["to_speaker"], ask=i)
        if x == speaker and y == pointed:
            return dict(p, question=["inverse"], ask=i)
        if x == pointed and y.startswith(speaker + "'s "):
            return dict(p, question=["to_relative", y[len(speaker) + 3:]], ask=i)
    return None
