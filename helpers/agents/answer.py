"""The A-agent: one answer object per question, always valid, inside the time budget.

`{"answer": "<A-D>", "reasoning": "<= 100 words"}`. Letter mode: the letter from letter scoring (the model or the
ensemble notebook 07 chose), a short reasoning naming it. Reason mode (agents.answer_mode, helpers.agents.reasoner):
the reasoner's own deduction, stopped inside the budget, and the letter scored after it. Malformed input, a model error, bad scores or
a spent budget give a counted fallback letter instead, never an exception. Every object passes the
rules' answer filter (helpers.filters.check_answer) with the agent's own tokenizer before it leaves.

Command line (helpers.agents.harness.cli), with the harness's flags and files:
`python -m helpers.agents answer --input_file outputs/filtered_questions.json --output_file outputs/answers.json
[--batch_size 5] [--profile smoke] [--run NAME]` writes answers.json, filtered_answers.json and answers.report.json.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from helpers import edition as edition_mod
from helpers import filters
from helpers.agents import timing
from helpers.edition import Edition
from helpers.agents.inputs import ParsedQuestion, parse_question
from helpers.io import InputError, read_json, stamp, write_json
from helpers.layout import filtered_name, report_name
from helpers.prompts import MAX_CHOICES

ANSWER_LETTERS = "ABCD"  # the rules' answers are A-D whatever the question offers
MAX_REASON_CHARS = 120  # a quoted choice is cut here so the reasoning stays far under 100 words
# Token caps for what is scored: an honest question is under 130 tokens with its choices (the filter's
# limit), so 768 + 4 x 96 keeps every real one whole while a 6,000-token blob (measured: 4 s a forward pass
# on the tiny CPU model, past the tiny model's 2,048 positions) is cut to its start and end.
MAX_QUESTION_TOKENS = 768
MAX_CHOICE_TOKENS = 96


def fallback_letter(key: str, n_choices: int = 4) -> str:
    """A fixed letter for an input that cannot be scored: a hash of its text, spread evenly over A-D."""
    n = max(1, min(4, n_choices))
    digest = hashlib.blake2b(key.encode("utf-8", errors="replace"), digest_size=4).digest()
    return ANSWER_LETTERS[int.from_bytes(digest, "big") % n]


def clip_tokens(text: str, tokenizer: Any, limit: int) -> tuple[str, bool]:
    """text cut to about `limit` tokens (its first and last halves) with the tokenizer; (text, was_cut)."""
    if len(text) <= limit:  # a token is at least one character: short texts need no encoding
        return text, False
    try:  # verbose=False: the point is to cut a text longer than the model's window, no warning needed
        ids = tokenizer.encode(text, add_special_tokens=False, verbose=False)
    except TypeError:  # a raw `tokenizers.Tokenizer` or a stub without the argument
        ids = tokenizer.encode(text, add_special_tokens=False)
    ids = getattr(ids, "ids", ids)
    if len(ids) <= limit:
        return text, False
    half = limit // 2
    return tokenizer.decode(ids[:half]) + " ... " + tokenizer.decode(ids[-half:]), True


def _valid_probs(probs: Any, n: int) -> bool:
    return (isinstance(probs, (list, tuple)) and len(probs) == n
            and all(isinstance(p, (int, float)) and math.isfinite(p) for p in probs))


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS - 3] + "..."


def model_reasoning(parsed: ParsedQuestion, probs: Sequence[float], letter_: str, source: str) -> str:
    """One or two sentences: who scored, the chosen choice and its probability, the runner-up."""
    order = sorted(range(min(4, len(probs))), key=lambda i: -probs[i])
    best = ANSWER_LETTERS.index(letter_)
    text = f"Letter scores from {source}: {letter_}) {_clip(parsed.choices[best])} has p={probs[best]:.2f}"
    if len(order) > 1:
        second = order[1] if order[0] == best else order[0]
        text += f"; next is {ANSWER_LETTERS[second]} at {probs[second]:.2f}"
    if len(parsed.choices) > 4:
        text += f"; only A-D may be answered, {len(parsed.choices) - 4} later choice(s) ignored"
    return text + "."


class AnswerAgent:
    """Answers questions with a letter predictor under a per-item time budget; counts every fallback."""

    def __init__(self, predictor: Any, tokenizer: Any = None, *, time_limit_s: float | None = None,
                 margin: float = timing.DEFAULT_MARGIN, chunk_size: int = 8, name: str = "kit",
                 reasoner: Any = None, edition: Edition | None = None):
        self.predictor = predictor
        self.reasoner = reasoner  # a helpers.agents.reasoner.Reasoner: answer by reasoning, then the letter
        self.tokenizer = tokenizer if tokenizer is not None else getattr(predictor, "tokenizer", None)
        if self.tokenizer is None:
            raise ValueError("the A-agent needs a tokenizer: the rules count answer tokens with it")
        self.edition = edition or edition_mod.default()  # its answer filter and limit (time_limit_s: another limit)
        self.rules = self.edition.answer_rules
        self.time_limit_s, self.margin = float(time_limit_s or self.edition.answer_s), float(margin)
        self.budget_s = timing.budget(self.time_limit_s, margin)
        self.chunk_size = max(1, int(chunk_size))
        self.name = name
        self.stats: Counter = Counter()

    def _source(self) -> str:
        describe = getattr(self.predictor, "describe", None)
        return describe() if callable(describe) else type(self.predictor).__name__

    def _fallback(self, key: str, n_choices: int, reason: str) -> dict:
        self.stats[f"fallback:{reason}"] += 1
        letter_ = fallback_letter(key, n_choices)
        return {"answer": letter_, "reasoning": f"No model answer ({reason}); {letter_} is the fixed fallback letter."}

    def _finish(self, answer: dict) -> dict:
        """The rules' answer filter, applied before anything leaves the agent."""
        if filters.check_answer(answer, self.tokenizer, self.rules).ok:
            return answer
        self.stats["filter_fixed"] += 1
        short = {"answer": answer["answer"], "reasoning": "Letter scoring."}
        return short if filters.check_answer(short, self.tokenizer, self.rules).ok else {"answer": answer["answer"]}

    def _fit(self, p: ParsedQuestion) -> None:
        """Cut an over-long question or choice by tokens, noting it (the prompt must stay fast and in range)."""
        p.question, cut = clip_tokens(p.question, self.tokenizer, MAX_QUESTION_TOKENS)
        if cut:
            p.notes.append("question_tokens_clipped")
        clipped = [clip_tokens(c, self.tokenizer, MAX_CHOICE_TOKENS) for c in p.choices]
        p.choices = [c for c, _ in clipped]
        if any(cut for _, cut in clipped):
            p.notes.append("choice_tokens_clipped")

    def _score(self, items: list[dict]) -> tuple[list | None, str | None]:
        try:
            probs = self.predictor.predict(items)
        except Exception as exc:  # a model failure costs one answer's letter, never the whole run
            return None, f"model_error:{type(exc).__name__}"
        if not isinstance(probs, (list, tuple)) or len(probs) != len(items):
            return None, "bad_scores"
        return list(probs), None

    def answer(self, inputs: Sequence[Any]) -> tuple[list[dict], list[dict]]:
        """(answers, per-item meta {seconds, source, reason, notes}) for one call; the call keeps n x budget."""
        t0 = time.perf_counter()
        inputs = list(inputs)
        deadline = timing.Deadline(self.budget_s * max(1, len(inputs)), start=t0)
        answers: list[dict | None] = [None] * len(inputs)
        meta: list[dict] = [{"seconds": 0.0, "source": "model", "reason": None, "notes": []} for _ in inputs]
        parsed: list[ParsedQuestion] = []
        for i, x in enumerate(inputs):
            t = time.perf_counter()
            try:
                p = parse_question(x)
                if p.ok:
                    self._fit(p)
            except Exception as exc:  # an input that breaks the tokenizer still gets an answer, counted
                p = ParsedQuestion(reason=f"input_error:{type(exc).__name__}")
            parsed.append(p)
            self.stats.update(f"note:{n}" for n in p.notes)
            meta[i]["notes"] = p.notes
            if not p.ok:
                answers[i] = self._fallback(repr(x)[:2000], len(p.choices) or 4, p.reason)
                meta[i].update(source="fallback", reason=p.reason)
            meta[i]["seconds"] += time.perf_counter() - t
        todo = [i for i, p in enumerate(parsed) if p.ok]
        if self.reasoner is not None:
            self._answer_reasoning(parsed, todo, answers, meta, deadline)
        else:
            self._answer_letters(parsed, todo, answers, meta, deadline)
        out = [self._finish(a) for a in answers]  # type: ignore[arg-type]
        return out, meta

    def _answer_letters(self, parsed: list[ParsedQuestion], todo: list[int], answers: list, meta: list[dict],
                        deadline: timing.Deadline) -> None:
        """Letter scoring in chunks: the first chunk is one item (it measures the model), then chunk_size; what no
        longer fits the call's deadline gets the counted fallback."""
        per_item, pos, size = None, 0, 1  # the first chunk is one item: it measures the model before a big step
        while pos < len(todo):
            chunk = todo[pos:pos + size]
            if per_item is not None and not deadline.fits(per_item * len(chunk)):
                self._fallbacks(parsed, todo[pos:], answers, meta, "time_budget")
                break
            t = time.perf_counter()
            probs, error = self._score([parsed[i].item() for i in chunk])
            spent = time.perf_counter() - t
            per_item = spent / len(chunk)
            for k, i in enumerate(chunk):
                meta[i]["seconds"] += per_item
                p = parsed[i]
                row = probs[k] if probs is not None else None
                if error or not _valid_probs(row, len(p.choices)):
                    self._fallbacks(parsed, [i], answers, meta, error or "bad_scores")
                    continue
                best = max(range(min(4, len(row))), key=lambda j: row[j])
                letter_ = ANSWER_LETTERS[best]
                self.stats["model"] += 1
                answers[i] = {"answer": letter_, "reasoning": model_reasoning(p, row, letter_, self._source())}
                meta[i]["probs"] = [round(float(v), 4) for v in row]
            pos += len(chunk)
            size = self.chunk_size

    def _answer_reasoning(self, parsed: list[ParsedQuestion], todo: list[int], answers: list, meta: list[dict],
                          deadline: timing.Deadline) -> None:
        """Reasoning in chunks of chunk_size questions generated together (a harness batch of 5 is one chunk), each
        chunk inside one answer budget, so each of its answers is back within the budget of the chunk's start; the
        letter comes from the logits after the reasoning, finished or cut (helpers.agents.reasoner). A chunk that
        no longer fits the call's deadline (n x budget) gets the counted fallback, as in letter mode."""
        spent = 0.0
        for pos in range(0, len(todo), self.chunk_size):
            chunk = todo[pos:pos + self.chunk_size]
            if pos and not deadline.fits(spent):
                self._fallbacks(parsed, todo[pos:], answers, meta, "time_budget")
                break
            t, error = time.perf_counter(), None
            try:
                rows = self.reasoner.answer([parsed[i].item() for i in chunk], min(self.budget_s, deadline.left()))
            except Exception as exc:  # a model failure costs these answers' letters, never the run
                rows, error = [None] * len(chunk), f"model_error:{type(exc).__name__}"
            spent = time.perf_counter() - t
            for i, row in zip(chunk, rows):
                meta[i]["seconds"] += spent  # each answer of the chunk waited for the whole chunk
                if row is None or not _valid_probs(row["probs"], min(len(parsed[i].choices), MAX_CHOICES)):
                    self._fallbacks(parsed, [i], answers, meta, error or "bad_scores")
                    continue
                best = max(range(min(4, len(row["probs"]))), key=lambda j: row["probs"][j])
                self.stats.update(["model", f"stop:{row['stop']}"])
                answers[i] = {"answer": ANSWER_LETTERS[best], "reasoning": row["reasoning"]}
                meta[i].update(probs=[round(float(v), 4) for v in row["probs"]], stop=row["stop"],
                               tokens=row["tokens"])

    def _fallbacks(self, parsed: list[ParsedQuestion], items: list[int], answers: list, meta: list[dict],
                   reason: str) -> None:
        """The counted fallback letter for each of `items`, with the reason in its meta."""
        for i in items:
            answers[i] = self._fallback(parsed[i].question, len(parsed[i].choices), reason)
            meta[i].update(source="fallback", reason=reason)

    def answer_texts(self, inputs: Sequence[Any]) -> list[str]:
        """The same answers as JSON texts (what a harness json-parses)."""
        import json
        answers, _ = self.answer(inputs)
        return [json.dumps(a, ensure_ascii=False) for a in answers]


# ---------------------------------------------------------------- files and the command line
def read_question_file(path: str | Path) -> list:
    """A JSON list of questions; anything else is an InputError naming the file."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "not found")
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(path, None, None, f"expected a JSON list of questions, got a JSON {type(data).__name__}")
    return data


def run_answers(agent: AnswerAgent, questions: list, *, batch_size: int = 5,
                progress: bool = False) -> tuple[list[dict], list[dict]]:
    """Answers in harness-sized batches (each call keeps its own budget): (answers, per-item meta)."""
    answers: list[dict] = []
    metas: list[dict] = []
    batches = range(0, len(questions), max(1, batch_size))
    if progress:
        from tqdm.auto import tqdm
        batches = tqdm(batches, desc="answers", unit="batch")
    for start in batches:
        a, m = agent.answer(questions[start:start + max(1, batch_size)])
        answers += a
        metas += m
    return answers, metas


def key_accuracy(questions: list, answers: list[dict]) -> dict:
    """Answers scored as the organisers score them: exact letter against question["answer"][0]."""
    keyed = [(q, a) for q, a in zip(questions, answers) if isinstance(q, dict) and isinstance(q.get("answer"), str)
             and q["answer"]]
    correct = sum(filters.letter_of(q) == a["answer"] for q, a in keyed)
    return {"keyed": len(keyed), "correct": correct, "accuracy": round(correct / len(keyed), 4) if keyed else None}


def write_answer_files(agent: AnswerAgent, questions: list, answers: list[dict], metas: list[dict],
                       output_file: str | Path, *, batch_size: int = 5, extra: dict | None = None) -> dict:
    """answers.json, filtered_answers.json (nulls where the filter fails, as scored) and answers.report.json."""
    filtered, dropped = filters.filter_answers(answers, agent.tokenizer, agent.rules)
    write_json(output_file, answers)
    write_json(filtered_name(output_file), filtered)
    seconds = [m["seconds"] for m in metas]
    report = {"agent": agent.name, "answers": len(answers), "passed_filter": sum(a is not None for a in filtered),
              "filter_dropped": dict(dropped), "against_keys": key_accuracy(questions, answers),
              "fallbacks": dict(Counter(m["reason"] for m in metas if m["source"] == "fallback")),
              "notes": dict(Counter(n for m in metas for n in m["notes"])),
              "latency": timing.latency_summary(seconds, agent.time_limit_s), "budget_s": agent.budget_s,
              "items": [{"index": i, "answer": a["answer"], "seconds": round(m["seconds"], 5), "source": m["source"],
                         "reason": m["reason"]} for i, (a, m) in enumerate(zip(answers, metas))],
              **(extra or {}), **stamp({"batch_size": batch_size, "output_file": str(output_file)})}
    write_json(report_name(output_file), report)
    return report


if __name__ == "__main__":  # the command moved (helpers.moved says where)
    from helpers import moved
    moved.refuse(__spec__.name)
