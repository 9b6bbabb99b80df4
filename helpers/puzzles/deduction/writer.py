"""The deduction writer of every seating family but the kinship ones: greedy, as a person solves one. Apply the
clue that fixes most (a seat, a facing, or a link between two people or attribute values) to what the steps before
have said, state what it fixes; when no clue fixes anything, split on the smallest open choice a clue leaves (a
token's seat, a pair's distance, the question's answer), close each failing case by the clue that kills it, state
what the surviving case fixes, and conclude with the key.

A step rests on what earlier steps said (and its case), never on a clue cited earlier but not said in full: a
clue's unsaid part ("N and U are not neighbours") is applied again by a later step that names it. Two clues that fix
something only together are not one step (that is a case split a reader would have to do in their head): the
writer splits instead, and writes each case.

The board (deduction.board: the classic kinds, the round table with attributes, the rectangle; deduction.layouts:
the square table, two rows, mixed facing at a table and in a row) lists every seating (at most MAX_WORLDS), so a
candidate step costs a few numpy masks. Once written, each step is given what it cites (deduction.citing: the clues,
earlier steps and premises it rests on), and the checker (deduction.checker) proves each from exactly those."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from helpers.puzzles.deduction.board import MAX_WORLDS, Board, Known, NoDeduction, OutOfWork
from helpers.puzzles.deduction.citing import cite_steps
from helpers.puzzles.deduction.layouts import LAYOUTS, NA, LayoutBoard
from helpers.puzzles.deduction.steps import CLASSIC, WRITTEN, Step
from helpers.puzzles.deduction.words import answer_text, claims_text, lists_everyone, step_texts

__all__ = ["KINDS", "MAX_WORLDS", "NoDeduction", "write"]
KINDS = CLASSIC + WRITTEN + LAYOUTS  # the families the writer covers
MAX_DEPTH = 2  # cases inside cases at most
TRIES = {0: 6, 1: 2, 2: 1}  # splits simulated (shortest kept) at each depth
MAX_STEPS = 40  # a context giving up after this many steps has found no deduction
BIG_STEP = 4  # a clue step fixing this many facts or more is said in two where it can (Writer.in_two)


def new_facts(board: Board, before: Known, after: Known, prefer: list[int]) -> list[tuple]:
    """The seats and links `after` fixes that `before` did not: newly placed tokens (every one, in seat order, once
    all are placed), then one link per merge of two linked groups (preferring tokens the clue names)."""
    if len(after.placed) == board.size > len(before.placed):  # the whole seating: every place, in order
        return [board.seat_fact(i, v) for i, v in sorted(after.placed.items(), key=lambda iv: (iv[0] >= len(
            board.tokens), iv[1])) if i != board.anchor and not (i >= len(board.tokens) and board.told(
                before, after, i))] + [("end", board.people[i]) for i in sorted(after.ends)]
    return list(dict.fromkeys([board.seat_fact(i, v) for i, v in sorted(after.placed.items())  # each fact once
                               if i not in before.placed and i != board.anchor and not board.told(before, after, i)]
                              + _links(board, before, after, prefer)
                              + [("end", board.people[i]) for i in sorted(after.ends - before.ends)]))


def _links(board: Board, before: Known, after: Known, prefer: list[int]) -> list[tuple]:
    """One link fact per merge of groups of unplaced tokens that sit fixed distances apart."""
    free, done, facts = [i for i in range(board.size) if i not in after.placed], set(), []
    for a in free:
        if a in done:
            continue
        group = [b for b in free if after.linked[a, b]]
        done |= set(group)
        joined = [group[0]]
        for b in sorted(group[1:], key=lambda b: b not in prefer):
            if not any(before.linked[j, b] for j in joined):
                j = min((j for j in joined if after.linked[j, b]), key=lambda j: (j not in prefer, j), default=None)
                fact = board.link_fact(after, j, b) if j is not None else None
                facts += [fact] if fact is not None else []
            joined.append(b)
    return facts


def _gain(board: Board, before: Known, m: np.ndarray) -> int:
    """How much a set of seatings fixes beyond `before`: two points a newly placed person, one a new link."""
    after = board.known(m)
    placed = len(set(after.placed) - set(before.placed) - {board.anchor})
    return placed + len(new_facts(board, before, after, []))


def _splits(board: Board, m: np.ndarray, case_mask: np.ndarray, clues: list[int], before: Known) -> list[tuple]:
    """Candidate case splits (size, clue or None, facts, each case's mask with its outer cases but no clue),
    smallest first: a person's open positions or a pair's open distances once a clue is applied."""
    out = []
    for c in [*clues, None]:
        mc = m & board.masks[c] if c is not None else m
        if not mc.any():
            continue
        who = board.named(c) if c is not None else [i for i in range(board.size) if i not in before.placed]
        for i in who:
            vals = np.unique(board.pos[mc, i]).tolist()
            if i not in before.placed and len(vals) > 1 and min(vals) > NA:
                out.append((len(vals), c is None, c, [board.seat_fact(i, v) for v in vals],
                            [case_mask & (board.pos[:, i] == v) for v in vals]))
        for a in who:
            for b in who:
                if a < b and not before.linked[a, b] and a not in before.placed and b not in before.placed:
                    off = board.offsets(a, b)
                    vals = np.unique(off[mc]).tolist()
                    if len(vals) > 1 and min(vals) > NA:
                        out.append((len(vals), c is None, c, [board.rel_fact(b, a, v) for v in vals],
                                    [case_mask & (off == v) for v in vals]))
    return sorted(out, key=lambda s: (s[0], s[1]))


def _answer_splits(board: Board, m: np.ndarray, case_mask: np.ndarray, clues: list[int]) -> list[tuple]:
    """Case splits over the question's own answer (who sits there, how many between), once a clue is applied:
    every answer but the key is then closed by the clue it breaks."""
    out = []
    for c in [None, *clues]:
        mc = m & board.masks[c] if c is not None else m
        vals = np.unique(board.codes[mc]).tolist()
        if len(vals) > 1 and min(vals) >= 0:
            facts = [board.answer_fact(v) for v in vals]  # a case is its fact (a statement may hold beside another)
            if None in facts:  # an answer no fact says (how many face north)
                continue
            out.append((len(vals), c is None, c, facts, [case_mask & board.holds(f) for f in facts]))
    return sorted(out, key=lambda s: (s[0], s[1]))[:1]


class Writer:
    """Writes one deduction for a board, shortest of the splits it tries. A step rests only on what the steps before
    it said (in its case) and the clues it applies itself: `said` is the seatings everything said so far allows, never
    the clues cited earlier, so a step cannot lean on a clue's unsaid part (that is a case split, and it is written as
    one)."""

    def __init__(self, board: Board, key: str, give_up: Callable[[], bool] | None = None,
                 split_big: bool = True) -> None:
        """The board, the key to conclude, when to stop looking (NoDeduction "work_budget" once give_up() says so),
        and whether a clue's big step is said in two where it can (in_two)."""
        self.board, self.key, self.split_big = board, key, split_big
        # big clue steps said in two (in_two) in every step tried, look-ahead included: a split the deduction does
        # not keep still changes which one the look-ahead keeps, so this, not the kept count, says split_big mattered
        self.in_twos = 0
        self.every = board.mask(frozenset(range(len(board.masks))))
        self.clues = list(range(len(board.masks)))
        self.held: dict = {}
        self.last_known: tuple | None = None  # (mask, board.known(mask)) of the last known() call
        self.give_up = give_up or _never

    def known(self, m: np.ndarray) -> Known:
        """board.known(m), reusing the last call's when m is the same (a step's `stated` is the next pass's `now`)."""
        if self.last_known is None or not np.array_equal(self.last_known[0], m):
            self.last_known = (m, self.board.known(m))
        return self.last_known[1]

    def narrowed(self, said: np.ndarray, claims: tuple) -> np.ndarray:
        """The seatings of `said` where every claim holds (each claim's seatings cached)."""
        for f in claims:
            if f not in self.held:
                self.held[f] = self.board.holds(f)
            said = said & self.held[f]
        return said

    def words(self, steps: list[Step]) -> int:
        """The words of steps in text."""
        return sum(len(t.split()) for t in step_texts(self.board.puzzle, steps))

    def run(self, said: np.ndarray, case: tuple, case_mask: np.ndarray, depth: int, close: bool,
            stated: Known | None = None, steps: list[Step] | None = None, look: bool = False) -> list[Step]:
        """Steps (after `steps`, if given) from what is said to the case's end: closed (close=True) or the answer
        fixed; with look, the first split is chosen by the length of everything after it."""
        b, steps = self.board, list(steps or [])
        stated = stated if stated is not None else self.known(said & case_mask)
        while len(steps) < MAX_STEPS:
            if self.give_up():
                raise OutOfWork("work_budget")
            m = said & case_mask
            end = self.ending(m, case, close, stated)
            if end is not None and close:
                return steps + [end]
            now = self.known(m)
            facts = new_facts(b, stated, now, [])  # what the case (or a case survived) fixes with what is said
            if facts and not (end is not None and self.says_answer(facts)):
                steps.append(Step(claims=tuple(facts), case=case))
                stated = now
                continue
            if end is not None:
                return steps + [end]
            made = self.apply(m, stated, close, case)
            if made is not None:
                steps += made
                if made[-1].closes:
                    return steps
                # known from what the steps said, not from all their clue fixes: a layouts step says one link per
                # group it joins, and where facing sets left and right the group's other links do not follow
                said = self.narrowed(said, tuple(f for s in made for f in s.claims))
                stated = self.known(said & case_mask)
                continue
            if depth >= MAX_DEPTH:
                raise NoDeduction("too_deep")
            if look:
                return self.look_ahead(steps, said, case, case_mask, stated, depth, close)
            branch, survivor = self.split(said, case, case_mask, stated, depth)
            steps += branch
            if survivor is None:
                return steps + [self.after_cases(case, close)]
            case_mask = case_mask & survivor
            stated = self.survive(steps, said, case, case_mask, stated)
        raise NoDeduction("too_many_steps")

    def apply(self, m: np.ndarray, stated: Known, close: bool, case: tuple) -> list[Step] | None:
        """The next step applying a clue to what is said: the clue that fixes most, or two that cannot both hold
        (closing a case); None when none does. Two clues that fix something only together are not one step: what
        they fix needs a case split, and the writer splits. A clue that fixes many places at once is said in two
        steps where that holds: what it fixes of the people it names, then the rest, which follows from that."""
        b = self.board
        gains = {c: _gain(b, stated, m & b.masks[c]) for c in self.clues}
        best = max(self.clues, key=lambda c: (gains[c], -c), default=None)
        if best is not None and gains[best] > 0:
            after = b.known(m & b.masks[best])
            claims = self.fixed(stated, after, b.named(best))
            return self.in_two(m, best, claims, case) or [Step(uses=(best,), claims=claims, case=case)]
        kill = [(x, y) for i, x in enumerate(self.clues) for y in self.clues[i + 1:]
                if close and not (m & b.masks[x] & b.masks[y]).any()]
        if kill:  # "clues 2 and 4 cannot both hold"
            return [Step(uses=kill[0], case=case, closes=True)]
        return None

    def in_two(self, m: np.ndarray, clue: int, claims: tuple, case: tuple) -> list[Step] | None:
        """A clue step fixing BIG_STEP facts or more ("the row, from the left, is U, R, Y, Z, N, L and X"), as two a
        reader can follow: the clue fixes the facts of the people it names; the rest follows from what is said
        with those, citing no clue. None where it does not split so: the clue names no one, or every fact, or the
        rest needs the clue itself."""
        if not self.split_big or len(claims) < BIG_STEP:
            return None
        tokens = self.board.tokens
        names = {tokens[i] for i in self.board.named(clue) if i < len(tokens)}  # a layout's facings come after
        if self.board.anchor is not None:  # a round table's seats are said from its anchor
            names.add(tokens[self.board.anchor])
        first = tuple(f for f in claims if {x for x in f[1:] if x in tokens} <= names)
        rest = tuple(f for f in claims if f not in first)
        if not first or not rest:
            return None
        if lists_everyone(self.board.puzzle, claims):  # the whole seating, said as one order, sums the step up
            rest = claims
        if not self.follows(m, first, rest):
            first += self.sides(m & self.board.masks[clue], m, self.board.named(clue))
            if not self.follows(m, first, rest):
                return None
        self.in_twos += 1
        return [Step(uses=(clue,), claims=first, case=case), Step(claims=rest, case=case)]

    def follows(self, m: np.ndarray, first: tuple, rest: tuple) -> bool:
        """Whether every seating said so far that meets `first` meets `rest` too."""
        with_first = self.narrowed(m, first)
        return not (with_first & ~self.narrowed(with_first, rest)).any()

    def sides(self, after: np.ndarray, before: np.ndarray, named: list[int]) -> tuple:
        """At a rectangle, "X sits on a long side" for each person the clue names and puts off the ends, where what
        was said before did not: seats said from one person do not carry it (straight across is a seat's, not a
        distance's), and the rest of a seating placed by "opposite" may need it."""
        b = self.board
        if not b.rect:
            return ()
        off_after, off_before = (~b.at_end[after]).all(0), (~b.at_end[before]).all(0)
        return tuple(("not_end", b.people[i]) for i in named if i < b.n and off_after[i] and not off_before[i])

    def after_cases(self, case: tuple, close: bool) -> Step:
        """The step after a split none of whose cases survives alone: its case closes (every case closed), or the
        answer holds either way (each surviving case concluded it)."""
        return Step(case=case, closes=True) if close else Step(case=case, answer=self.key)

    def fixed(self, stated: Known, after: Known, prefer: list[int]) -> tuple:
        """What a clue fixes beyond `stated`, linking from the tokens it names when that says something, else in
        the order _gain counted it (a link inside a group may show in one order only)."""
        facts = new_facts(self.board, stated, after, prefer) or new_facts(self.board, stated, after, [])
        if not facts:
            raise NoDeduction("nothing_to_say")
        return tuple(facts)

    def survive(self, steps: list[Step], said: np.ndarray, case: tuple, case_mask: np.ndarray,
                stated: Known) -> Known:
        """One case survived: say what it fixes with what is said (appended to steps; the others are closed, so it
        holds outright) and return what is known from there."""
        b = self.board
        after = b.known(said & case_mask)
        if (facts := new_facts(b, stated, after, [])) and not self.says_answer(facts):
            steps.append(Step(claims=tuple(facts), case=case))
        return after

    def ending(self, m: np.ndarray, case: tuple, close: bool, stated: Known) -> Step | None:
        """The step that ends a context, if one can: a clue killing a failing case, or the answer fixed (by what is
        said, or by one more clue that fixes nothing else)."""
        b = self.board
        if close:
            if not m.any():
                return Step(case=case, closes=True)
            kill = [c for c in self.clues if not (m & b.masks[c]).any()]
            return Step(uses=(kill[0],), case=case, closes=True) if kill else None
        if b.answer_fixed(m):
            return Step(case=case, answer=self.key)
        done = [c for c in self.clues if b.answer_fixed(m & b.masks[c])]
        if done and not new_facts(b, stated, b.known(m & b.masks[done[0]]), b.named(done[0])):
            return Step(uses=(done[0],), case=case, answer=self.key)
        return None

    def says_answer(self, facts: list[tuple]) -> bool:
        """Whether the facts read exactly as the answer's sentence (stating both would repeat it)."""
        said = claims_text(self.board.puzzle, tuple(facts)).lower()
        return said == answer_text(self.board.puzzle, self.key).lower()

    def options(self, said: np.ndarray, case_mask: np.ndarray, stated: Known, depth: int) -> list[tuple]:
        """The splits tried at a depth: the question's own answer, and the smallest few others."""
        m = said & case_mask
        return _answer_splits(self.board, m, case_mask, self.clues) + _splits(self.board, m, case_mask, self.clues,
                                                                              stated)[:TRIES[depth]]

    def look_ahead(self, steps: list[Step], said: np.ndarray, case: tuple, case_mask: np.ndarray, stated: Known,
                   depth: int, close: bool) -> list[Step]:
        """Steps, then the split whose cases and everything after them read shortest, and all of that."""
        def whole(c: int | None, facts: list, masks: list) -> list[Step]:
            branch, survivor = self.cases(said, case, c, facts, masks, depth)
            return self.resume(steps + branch, said, case, case_mask, depth, close, stated, survivor)
        return min(self.each_split(said, case_mask, stated, depth, whole), key=self.words)

    def resume(self, steps: list[Step], said: np.ndarray, case: tuple, case_mask: np.ndarray, depth: int,
               close: bool, stated: Known, survivor: np.ndarray | None) -> list[Step]:
        """The context's steps so far (ending with a split's cases) and the rest of it, worked greedily."""
        if survivor is None:
            return steps + [self.after_cases(case, close)]
        case_mask, steps = case_mask & survivor, list(steps)
        stated = self.survive(steps, said, case, case_mask, stated)
        return self.run(said, case, case_mask, depth, close, stated, steps)

    def split(self, said: np.ndarray, case: tuple, case_mask: np.ndarray, stated: Known,
              depth: int) -> tuple[list[Step], np.ndarray | None]:
        """The shortest of the tried case splits: the split step, then each case's steps (failing cases first);
        with the one surviving case's mask (None when several survive, or none)."""
        tried = self.each_split(said, case_mask, stated, depth,
                                lambda c, facts, masks: self.cases(said, case, c, facts, masks, depth))
        return min(tried, key=lambda t: self.words(t[0]))

    def each_split(self, said: np.ndarray, case_mask: np.ndarray, stated: Known, depth: int,
                   attempt: Callable[[int | None, list, list], Any]) -> list:
        """attempt(clue, facts, masks) for each split options() gives, in its order, less those that find no
        deduction; NoDeduction("no_split") when none does. A spent work budget (OutOfWork) ends the search."""
        out = []
        for _, _, c, facts, masks in self.options(said, case_mask, stated, depth):
            try:
                out.append(attempt(c, facts, masks))
            except OutOfWork:
                raise
            except NoDeduction:
                continue
        if not out:
            raise NoDeduction("no_split")
        return out

    def cases(self, said: np.ndarray, case: tuple, c: int | None, facts: list, masks: list,
              depth: int) -> tuple[list[Step], np.ndarray | None]:
        """A split's step and its cases' steps: failing ones closed, surviving ones (if more than one) answered;
        and the one surviving case's mask, if one. Each case starts from what is said at the split and its fact."""
        steps = [Step(uses=(c,) if c is not None else (), case=case, split=tuple(facts))]
        alive = [(m & self.every).any() for m in masks]
        order = [i for i in range(len(facts)) if not alive[i]]
        order += [i for i in range(len(facts)) if alive[i]] if sum(alive) > 1 else []
        for i in order:
            steps += self.run(said, case + (facts[i],), masks[i], depth + 1, close=not alive[i])
        return steps, masks[alive.index(True)] if sum(alive) == 1 else None


def said_once(writer: Writer, steps: list[Step]) -> list[Step]:
    """The steps with a closing "So <answer>" folded into the step before when that step's claims say just it."""
    if len(steps) < 2 or steps[-1].uses or steps[-1].case:
        return steps
    last = steps[-2]
    if last.case or last.split or not last.claims or not writer.says_answer(list(last.claims)):
        return steps
    return steps[:-2] + [replace(last, claims=(), answer=steps[-1].answer)]


def _names(x) -> set:
    """Every string in a nested question or fact."""
    return {x} if isinstance(x, str) else set().union(*map(_names, x)) if isinstance(x, (list, tuple)) else set()


def answer_facts_only(puzzle: dict, steps: list[Step], key: str) -> list[Step]:
    """The steps with the claims of the one before a bare "So <answer>" cut to those naming the key or someone the
    question names (at the layouts' big boards the last clue fixes much the answer does not need); a whole seating
    said as one order stays."""
    if len(steps) < 2 or steps[-1].uses or steps[-1].case or steps[-2].case or not steps[-2].claims or \
            lists_everyone(puzzle, steps[-2].claims):
        return steps
    asked = _names(puzzle["question"]) | {key}
    kept = tuple(f for f in steps[-2].claims if _names(f[1:]) & asked)
    return steps[:-2] + [replace(steps[-2], claims=kept), steps[-1]] if kept else steps


def _never() -> bool:
    """No time limit."""
    return False


BOARD_WORK = 20  # a board's listing and its first look, in writer steps: a big board costs before any step


def work_budget(seatings: int, work: int) -> Callable[[], bool]:
    """give_up for a work budget: True once the board's seatings times (the asks so far + BOARD_WORK) pass `work`.
    Each ask is one writer step or citation, each over the listed seatings; a count, so every CPU stops alike."""
    asked = 0

    def give_up() -> bool:
        nonlocal asked
        asked += 1
        return seatings * (asked + BOARD_WORK) > work
    give_up.spent = lambda: seatings * (asked + BOARD_WORK)  # type: ignore[attr-defined]  (the work done so far)
    return give_up


def write(puzzle: dict, key: str, give_up: Callable[[], bool] | None = None, work: int | None = None,
          split_big: bool = True, trace: dict | None = None) -> list[Step]:
    """A deduction of a seating puzzle's key, each step in words (NoDeduction when none is found, "work_budget" when
    give_up() said stop, or the work budget ran out: asked between steps, once the board is built, and between
    citations). split_big=False keeps a clue's big step whole (Writer.in_two): shorter, for a word limit; `trace`,
    if given, gets {"in_two": how many big steps the search split, "spent": the work its budget counted}."""
    if work is not None and give_up is not None:
        raise ValueError("write: give a give_up callable or a work budget, not both")
    board = LayoutBoard(puzzle) if puzzle["kind"] in LAYOUTS else Board(puzzle)
    if work is not None:
        give_up = work_budget(len(board.table.rows), work)
    writer = Writer(board, key, give_up, split_big)
    given = frozenset(board.given)  # a board built with its first clues says what they fix in its first step
    every = np.ones(len(board.table.rows), dtype=bool)
    steps = writer.run(every, (), every, 0, close=False, stated=board.blank() if given else None, look=True)
    if given:
        steps[0] = replace(steps[0], uses=tuple(sorted(given | set(steps[0].uses))))
    steps = said_once(writer, steps)
    steps = answer_facts_only(puzzle, steps, key) if puzzle["kind"] in LAYOUTS else steps
    steps = cite_steps(board, steps, writer.give_up)
    if trace is not None:
        trace.update(in_two=writer.in_twos, spent=getattr(writer.give_up, "spent", lambda: 0)())
    return [replace(s, text=t) for s, t in zip(steps, step_texts(puzzle, steps))]
