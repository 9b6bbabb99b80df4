"""The Q-agent: official-format questions for the challenge's topics, each checked by the format filter.

Sources, per question: the question writer (a share of questions, kept only when it passes the filter and is
proven, on a topic with generators, or vouched for by the kit's A-agent, on one without; helpers.agents.writer),
the verified puzzle generators
(every answer key proven by the solver), and a team's own question bank for topics without a generator. A topic
no family writes gets the writer alone or nothing (agents.unserved_topics), counted, never a puzzle of another
topic. Each answer letter is drawn uniformly from A-D on its
own (no blocks an opponent could count on), unless a harness prompt names the letter.

Command line (helpers.agents.harness.cli), with the harness's flags and files:
`python -m helpers.agents question --output_file outputs/questions.json --num_questions 20 [--batch_size 5]
[--profile smoke] [--run NAME] [--topics_file data/topics.json] [--model_share 0.2]` writes questions.json,
filtered_questions.json and questions.report.json.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from helpers import edition as edition_mod
from helpers import filters, puzzles
from helpers.agents import timing, topics as topics_mod
from helpers.edition import Edition
from helpers.puzzles import deduction
from helpers.io import stamp, write_json
from helpers.layout import filtered_name, report_name
from helpers.records import dedupe_key

LETTERS4 = "ABCD"
# A fast family builds a puzzle in milliseconds: when the hard ones used the time, the fallback still gets this much
# (the budget is a share of the organisers' limit, so this stays inside the limit).
FAST_GRACE_S = 0.5
# A family and level whose puzzles came out too long for this tokenizer more often than not, over at least this many
# builds, is not asked again: the question starts at the highest level below that fits, or with another family of
# the topic (a 2,048-token vocabulary spent ~40% of its builds on too-long puzzles, three a question before dropping).
FIT_BUILDS = 4
_TOPIC_IN_PROMPT = re.compile(r"topic\s*:\s*([^\n/]{2,80})/([^\n]{2,120}?)(?:\.\s|\.?\s*\n|\.?$)", re.IGNORECASE)


UNSERVED = ("writer", "refuse")  # what the Q-agent does on a topic no family of the kit writes (agents.unserved_topics)


class QuestionAgent:
    """Questions for (topic, subtopic) pairs under a per-question time budget; every rejection counted."""

    def __init__(self, tokenizer: Any, topics: dict[str, list[str]], *, seed: int = 0,
                 time_limit_s: float | None = None, margin: float = timing.DEFAULT_MARGIN,
                 levels: Sequence[int] = puzzles.LEVELS, kinds: Sequence[str] = puzzles.KINDS, candidates: int = 1,
                 writer: Any = None, model_share: float = 0.0, bank: Sequence[dict] | None = None,
                 name: str = "kit", edition: Edition | None = None, unserved: str = "writer"):
        if tokenizer is None:
            raise ValueError("the Q-agent needs a tokenizer: the rules count question tokens with it")
        self.tokenizer, self.topics, self.name = tokenizer, topics, name
        self.edition = edition or edition_mod.default()  # its question filter and limit (time_limit_s: another limit)
        self.rules = self.edition.question_rules
        self.time_limit_s, self.margin = float(time_limit_s or self.edition.question_s), float(margin)
        self.budget_s = timing.budget(self.time_limit_s, margin)
        self.levels, self.kinds, self.candidates = tuple(levels), tuple(kinds), max(1, int(candidates))
        unknown = [k for k in self.kinds if k not in puzzles.KINDS]
        if unknown:
            raise ValueError(f"unknown puzzle kinds {unknown}; expected some of {puzzles.KINDS}")
        if unserved not in UNSERVED:
            raise ValueError(f"unserved must be one of {UNSERVED}, got {unserved!r}")
        # a topic no family writes: the writer alone (its checker's agreement the only check), or refused; counted
        self.unserved = unserved
        self.writer, self.model_share = writer, float(model_share)
        self.bank = list(bank or [])
        self.seed = seed
        self.rng = random.Random(f"qagent:{name}:{seed}")  # the match's draws: letters, topic order, model share
        # Each question searches with a stream of its own (_start_question): a question that runs out of time on a
        # busy CPU draws less, and that must not change the questions after it.
        self._question_rng = random.Random(f"qagent:{name}:{seed}:question:0")
        self.stats: Counter = Counter()
        self.puzzle_stats: dict = {}
        self._seen: set[str] = set()
        self._count = 0
        self._fit: dict[tuple[str, int], list[int]] = {}  # (kind, level) -> [builds, too long for the filter]

    # ------------------------------------------------------------ schedules
    def next_letter(self) -> str:
        """The next correct letter, drawn uniformly from A-D apart from every other (seeded): balanced over a match
        in expectation and nothing to count on, where shuffled blocks of four gave every fourth key away."""
        return self.rng.choice(LETTERS4)

    def topic_schedule(self, n: int) -> list[tuple[str, str]]:
        """n (topic, subtopic) pairs: every pair once per shuffled round, so topics stay balanced too."""
        all_pairs = topics_mod.pairs(self.topics)
        out: list[tuple[str, str]] = []
        while len(out) < n:
            block = list(all_pairs)
            self.rng.shuffle(block)
            out += block
        return out[:n]

    # ------------------------------------------------------------ sources
    def _puzzle(self, kinds: Sequence[str], letter_: str, label: str, deadline: timing.Deadline,
                ) -> tuple[dict | None, dict | None, str | None]:
        """The hardest (measured) of up to `candidates` proven puzzles that pass the filter, searched for in half
        the time left; when none comes in that half (a slow family on a busy CPU), one of the topic's fast
        families (puzzles.FAST_KINDS: milliseconds a puzzle) with the rest of the time, counted. Every candidate is
        of one kind and level and asks one form, drawn once per question (the form at a quantile by its share,
        puzzles.form_at), so the pick compares like with like and does not favour a family, a level or a form.
        Returns (question, record, None), or (None, None, why): "too_long_for_filter" when the topic's one family
        wrote nothing under the edition's length bound with this tokenizer, else None."""
        best: tuple[dict, dict] | None = None
        found = 0
        search = timing.Deadline(deadline.left() / 2)
        rng = self._question_rng
        shape = self._fitting({"kind": rng.choice(self._usable(kinds)), "level": rng.choice(list(self.levels)),
                               "form_q": rng.random()}, kinds)
        # a family too long even at level 1 may give way at once only where a fast family of the topic can stand in
        shape["give_way"] = any(k in puzzles.FAST_KINDS and k != shape["kind"] for k in kinds)
        while found < self.candidates and not search.passed():
            candidate = self._one_puzzle([shape["kind"]], letter_, label, search, shape)
            if candidate[0] is None:
                break
            found += 1
            if best is None or candidate[1]["puzzle"]["work"]["score"] > best[1]["puzzle"]["work"]["score"]:
                best = candidate
        fast = [k for k in kinds if k in puzzles.FAST_KINDS]
        if best is None and fast:
            self.stats["fallback:fast_family"] += 1
            grace = timing.Deadline(max(deadline.left(), FAST_GRACE_S))
            fallback = {"form_q": shape["form_q"]}
            found, best = 1, self._one_puzzle(fast, letter_, label, grace, fallback)
            shape["too_long"] = shape.get("too_long") or fallback.get("too_long")
        if best is None or best[0] is None:
            return None, None, "too_long_for_filter" if shape.get("too_long") else None
        self._seen.add(dedupe_key(best[1]))
        self.stats["candidates_compared"] += found
        return best[0], best[1], None

    def _fits(self, kind: str, level: int) -> bool:
        """Whether this family and level's puzzles fit the filter's length for this tokenizer, as far as seen: fewer
        than FIT_BUILDS builds, or at most half of them too long."""
        builds, too_long = self._fit.get((kind, level), (0, 0))
        return builds < FIT_BUILDS or 2 * too_long <= builds

    def _fitting(self, shape: dict, kinds: Sequence[str]) -> dict:
        """The question's drawn shape, moved to the highest level below that fits when its own does not, or to a
        family of the topic that fits at the drawn level (or any level), counted; unchanged when nothing is known
        to fit (the per-question level drop in _one_puzzle still applies)."""
        kind, level = shape["kind"], shape["level"]
        if self._fits(kind, level):
            return shape
        lower = [lv for lv in sorted(self.levels, reverse=True) if lv < level and self._fits(kind, lv)]
        if lower:
            self.stats[f"level_drop:remembered_to_{lower[0]}"] += 1
            return {**shape, "level": lower[0]}
        for lv in sorted(self.levels, key=lambda lv: (lv != level, -lv)):  # the drawn level first, then the highest
            others = [k for k in self._usable(kinds) if k != kind and self._fits(k, lv)]
            if others:
                self.stats["kind_skip:too_long"] += 1
                return {**shape, "kind": self._question_rng.choice(others), "level": lv}
        return shape

    def _count_fit(self, kind: str, level: int, too_long: bool) -> None:
        """One more build of this family and level seen by the filter."""
        seen = self._fit.setdefault((kind, level), [0, 0])
        seen[0] += 1
        seen[1] += too_long

    def _usable(self, kinds: Sequence[str]) -> list[str]:
        """The topic's kinds this agent asks (all of them when it asks none)."""
        return [k for k in kinds if k in self.kinds] or list(kinds)

    def _one_puzzle(self, kinds: Sequence[str], letter_: str, label: str, deadline: timing.Deadline,
                    shape: dict) -> tuple[dict | None, dict | None]:
        """One proven, unseen puzzle of the topic's kinds (at the question's shape["level"] when it has one, else
        any of the agent's levels) that passes the filter, asking the form at quantile shape["form_q"] of its kind
        and level, or (None, None) at the deadline. A drop to a lower level (questions too long for this tokenizer)
        is kept in `shape`, so the question's later candidates start there."""
        kinds, rng = self._usable(kinds), self._question_rng
        levels, too_long, tries = (shape["level"],) if "level" in shape else self.levels, 0, 0
        while tries == 0 or not deadline.passed():
            tries += 1
            kind, level = rng.choice(kinds), rng.choice(list(levels))
            try:
                rec = puzzles.make_puzzle(kind, level, LETTERS4.index(letter_), rng, self.puzzle_stats,
                                          id=f"{self.name}-{kind}-{self._count:06d}-{tries}",
                                          give_up=deadline.passed, form=puzzles.form_at(kind, level, shape["form_q"]))
            except TimeoutError:
                self.stats["reject:puzzle_deadline"] += 1
                break
            except RuntimeError:
                self.stats["reject:puzzle_attempts_exhausted"] += 1
                continue
            if not puzzles.verify(rec):
                self.stats["reject:puzzle_unproven"] += 1
                continue
            key = dedupe_key(rec)
            if key in self._seen:
                self.stats["reject:duplicate"] += 1
                continue
            question = filters.to_official_question(rec, label)
            result = filters.check_question(question, self.tokenizer, self.rules)
            self._count_fit(kind, level, result.reason == "question_too_long")
            if not result.ok:
                self.stats[f"reject:filter:{result.reason}"] += 1
                too_long += result.reason == "question_too_long"
                if too_long >= 3:  # this tokenizer spends more tokens per character: the agent's lowest level,
                    lower = (min(self.levels) if too_long < 6 else min(puzzles.LEVELS),)  # then the shortest
                    if lower != tuple(levels):
                        self.stats[f"level_drop:to_{lower[0]}"] += 1
                    levels = lower
                    if "level" in shape:
                        shape["level"] = levels[0]
                    if levels[0] == min(puzzles.LEVELS) and not self._fits(kind, levels[0]):
                        if len(kinds) > 1:  # a fallback over several families: go on without this one
                            kinds.remove(kind)
                        elif shape.get("give_way"):  # too long even at its shortest: a fast family stands in
                            self.stats["reject:family_too_long"] += 1
                            break
                        else:  # the topic's one family: search on (some may fit), and say why if none does
                            shape["too_long"] = True
                continue
            return question, rec
        return None, None

    def _explain(self, question: dict, rec: dict, deadline: timing.Deadline) -> None:
        """Give the asked puzzle its checked deduction as the explanation where one is written in the time left and
        the question still passes the filter with it (deduction.explanation), else keep the solver's own text;
        counted by source ("explanation:deduction", "explanation:count:<why>", "explanation:links")."""
        text, how = deduction.explanation(rec["puzzle"], rec["choices"][rec["answer"]], seconds_left=deadline.left(),
                                          work=timing.EXPLAIN_WORK)
        explained = {**question, "explanation": text}
        if how == "deduction" and not filters.check_question(explained, self.tokenizer, self.rules).ok:
            how = "count:filter"
        elif how == "deduction":
            question["explanation"] = rec["explanation"] = text
        self.stats[f"explanation:{how}"] += 1

    def _from_bank(self, topic: str, subtopic: str, letter_: str, label: str) -> dict | None:
        names = {topic.lower(), subtopic.lower()}
        for rec in self.bank:
            if str(rec.get("topic", "")).lower() not in names or len(rec.get("choices") or []) != 4:
                continue
            key = dedupe_key(rec)
            if key in self._seen:
                continue
            choices = list(rec["choices"])
            correct = choices.pop(rec["answer"])
            choices.insert(LETTERS4.index(letter_), correct)
            question = filters.to_official_question({**rec, "choices": choices, "answer": LETTERS4.index(letter_)},
                                                    label)
            if filters.check_question(question, self.tokenizer, self.rules).ok:
                self._seen.add(key)
                return question
            self.stats["reject:bank_filter"] += 1
        return None

    # ------------------------------------------------------------ one question
    def _start_question(self) -> None:
        """Count the question and seed its search stream from (name, seed, question number) alone."""
        self._count += 1
        self._question_rng.seed(f"qagent:{self.name}:{self.seed}:question:{self._count}")

    def ask(self, topic: str, subtopic: str, letter_: str | None = None) -> tuple[dict | None, dict]:
        """One official question on (topic, subtopic) with the given (or next scheduled) correct letter."""
        t0 = time.perf_counter()
        deadline = timing.Deadline(self.budget_s, start=t0)
        letter_ = letter_ if letter_ in tuple(LETTERS4) else self.next_letter()
        self._start_question()
        kinds = topics_mod.generator_kinds(topic, subtopic)
        meta: dict[str, Any] = {"topic": topic, "subtopic": subtopic, "letter": letter_, "source": None,
                                "reason": None, "record": None}
        question, why_none = None, None
        if not kinds and self.unserved == "refuse":  # no family of the kit writes this topic: refused, counted
            meta.update(source="refused", reason="unserved_topic")
            meta["seconds"] = time.perf_counter() - t0
            self.stats["source:refused"] += 1
            return None, meta
        writer = self.writer
        if writer is not None and writer.enabled and (not kinds or (self.model_share > 0
                                                                    and self.rng.random() < self.model_share)):
            asked = topics_mod.families(topic, subtopic, self.kinds) or tuple(kinds)  # what _one_puzzle would ask
            question, reason = writer.write(topic, subtopic, letter_, deadline, kinds=asked)
            if question is not None:  # on a topic with no family, the checker's agreement is its only check
                meta["source"] = "model" if kinds else "model_unproven"
            else:
                self.stats[f"model_rejected:{reason}"] += 1
                meta["reason"] = f"model:{reason}"
        if question is None and kinds:
            question, rec, why_none = self._puzzle(kinds, letter_, subtopic, deadline)
            if question is not None:
                meta.update(source="puzzle", record=rec)
                self._explain(question, rec, deadline)
        if question is None and self.bank:
            question = self._from_bank(topic, subtopic, letter_, subtopic)
            if question is not None:
                meta["source"] = "bank"
        if question is None:  # never a puzzle of another topic filed under this one: nothing, counted
            meta["source"] = "none"
            if not kinds:
                meta["reason"] = meta["reason"] or "unserved_topic"
            elif why_none:  # its family writes nothing under the edition's length bound with this tokenizer
                meta["reason"] = meta["reason"] or why_none
        meta["seconds"] = time.perf_counter() - t0
        self.stats[f"source:{meta['source']}"] += 1
        return question, meta

    def generate(self, n: int = 0, schedule: Sequence[tuple[str, str]] | None = None) -> tuple[list[dict], list[dict]]:
        """n questions over a balanced topic schedule (or one per given pair); Nones left out of the questions."""
        out, metas = [], []
        for topic, subtopic in (schedule if schedule is not None else self.topic_schedule(n)):
            question, meta = self.ask(topic, subtopic)
            metas.append(meta)
            if question is not None:
                out.append(question)
        return out, metas

    def respond(self, message: str) -> tuple[dict | None, dict]:
        """A harness prompt -> one question: its "<topic>/<subtopic>" and, if it names one, its correct letter."""
        pair = topics_mod.resolve_topic(message, self.topics)
        if pair is None:
            match = _TOPIC_IN_PROMPT.search(message or "")
            pair = (match.group(1).strip(), match.group(2).strip()) if match else None
            self.stats["topic_not_in_file" if pair else "topic_not_found"] += 1
        if pair is None:
            pair = topics_mod.pairs(self.topics)[0]
        return self.ask(pair[0], pair[1], topics_mod.requested_letter(message))


# ---------------------------------------------------------------- files and the command line
def run_questions(agent: QuestionAgent, num_questions: int, *, batch_size: int = 5,
                  progress: bool = False) -> tuple[list[dict], list[dict]]:
    """num_questions over a balanced topic schedule, in harness-sized batches: (questions, per-question meta)."""
    schedule = agent.topic_schedule(num_questions)
    questions, metas = [], []
    batches = range(0, num_questions, max(1, batch_size))
    if progress:
        from tqdm.auto import tqdm
        batches = tqdm(batches, desc="questions", unit="batch")
    for start in batches:
        q, m = agent.generate(schedule=schedule[start:start + max(1, batch_size)])
        questions += q
        metas += m
    return questions, metas


def difficulty_mix(metas: list[dict]) -> dict:
    """The measured difficulty of the puzzles asked: overall and per family (mean, min, max), and the level mix."""
    recs = [m["record"] for m in metas if m.get("record") and "work" in m["record"].get("puzzle", {})]

    def summary(scores: list[float]) -> dict:
        return {"n": len(scores), "mean": round(sum(scores) / len(scores), 2), "min": min(scores), "max": max(scores)}
    by_kind: dict[str, list[float]] = {}
    for rec in recs:
        by_kind.setdefault(rec["puzzle"]["kind"], []).append(rec["puzzle"]["work"]["score"])
    return {"all": summary([s for v in by_kind.values() for s in v]) if recs else {"n": 0},
            "by_family": {k: summary(v) for k, v in sorted(by_kind.items())},
            "levels": dict(sorted(Counter(rec["puzzle"].get("level") for rec in recs).items()))}


def proof_check(questions: list[dict], metas: list[dict]) -> dict:
    """Per source: how many puzzle keys the solver proves and match the emitted letter and choices."""
    emitted = [m for m in metas if m["source"] != "none"]
    out = {"questions": len(questions), "puzzles": 0, "proven": 0, "key_matches": 0,
           "by_source": dict(Counter(m["source"] for m in metas))}
    for question, meta in zip(questions, emitted):
        rec = meta.get("record")
        if rec is None:
            continue
        out["puzzles"] += 1
        out["proven"] += puzzles.verify(rec)
        out["key_matches"] += (question["answer"] == LETTERS4[rec["answer"]]
                               and [c[3:] for c in question["choices"]] == rec["choices"])
    return out


def unserved_lines(agent: QuestionAgent) -> list[str]:
    """One line a topic no puzzle family writes: what the agent does there (the writer alone, or nothing)."""
    how = ("the question writer alone asks it (the A-agent's agreement its only check)"
           if agent.unserved == "writer" and agent.writer is not None else "none is asked")
    return [f"topic {t}/{s}: no puzzle family of the kit writes it; {how}"
            for t, s in topics_mod.unserved_pairs(agent.topics)]


def write_question_files(agent: QuestionAgent, questions: list[dict], metas: list[dict], output_file: str | Path,
                         *, requested: int, batch_size: int = 5, extra: dict | None = None) -> dict:
    """questions.json (raw), filtered_questions.json (what the opponent gets) and questions.report.json."""
    kept, dropped = filters.filter_questions(questions, agent.tokenizer, agent.rules)
    write_json(output_file, questions)
    write_json(filtered_name(output_file), kept)
    seconds = [m["seconds"] for m in metas]
    report = {"agent": agent.name, "requested": requested, "written": len(questions), "format_correct": len(kept),
              "format_correct_share": round(len(kept) / max(1, requested), 4),
              "disqualified": agent.edition.disqualified(len(kept), requested), "filter_dropped": dict(dropped),
              "edition": agent.edition.name, "pass_share": agent.edition.pass_share, "unserved": unserved_lines(agent),
              "sources": dict(Counter(m["source"] for m in metas)),
              "letters": dict(sorted(Counter(q["answer"] for q in kept).items())),
              "topics": dict(Counter(f"{m['topic']}/{m['subtopic']}" for m in metas)),
              "rejections": {k: v for k, v in agent.stats.items() if not k.startswith("source:")},
              "proof": proof_check(questions, metas), "difficulty": difficulty_mix(metas),
              "latency": timing.latency_summary(seconds, agent.time_limit_s), "budget_s": agent.budget_s,
              "items": [{"index": i, "topic": m["subtopic"], "letter": m["letter"], "source": m["source"],
                         "reason": m["reason"], "seconds": round(m["seconds"], 5),
                         "puzzle_id": (m["record"] or {}).get("id")} for i, m in enumerate(metas)],
              **(extra or {}), **stamp({"num_questions": requested, "batch_size": batch_size,
                                        "output_file": str(output_file)})}
    write_json(report_name(output_file), report)
    return report


if __name__ == "__main__":  # the command moved (helpers.moved says where)
    from helpers import moved
    moved.refuse(__spec__.name)
