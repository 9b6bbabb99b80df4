"""Model-written questions: sample from the harness's own prompt, recover the JSON, normalise it, and keep it only when
it passes the format filter and, on a topic with generators, is proven: read back into a generator's structured puzzle
(puzzles.prove_text: the writer is trained on the generators' wording, helpers.agents.writer_data) and solved, with the
model's key the solver's; the solver's deduction becomes its explanation. On a topic without generators an optional
checker (the kit's own A-agent) must agree with the key instead. Every rejection is counted by reason.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from helpers import filters, puzzles
from helpers.agents import timing
from helpers.agents.inputs import strip_prefix
from helpers.agents.json_repair import extract_json
from helpers.edition import QuestionRules
from helpers.models.unsloth_api import refuse_overlength
from helpers.puzzles import deduction
from helpers.records import normalize_text

LETTERS4 = "ABCD"
SYSTEM = "You are an expert examiner."  # what the organisers' harness sends as the system prompt
# Sampling as the organisers' reference Q-agent: temperature 0.7, top_p 0.9, repetition penalty 1.2. 200 new tokens
# hold any question JSON the 130-token filter lets through (a trained writer's reply is ~80-110 SmolLM2 tokens: it
# leaves the explanation to the solver), so a reply that rambles is cut early instead of eating the budget.
GEN_DEFAULTS = {"temperature": 0.7, "top_p": 0.9, "repetition_penalty": 1.2, "max_new_tokens": 200}
# Stop sampling this long before the question's budget ends: the fallback puzzle needs ~10 ms and the
# key check one forward pass, so 0.5 s is ample even on a busy CPU.
RESERVE_S = 0.5
PROOF = "_proof"  # a proven reply's (structured puzzle, key text) while the writer holds it; popped before it leaves
MAX_EXPLANATION_WORDS = puzzles.MAX_EXPLANATION_WORDS  # an explanation stays under it (the rules: at most 100)
_ANSWER = re.compile(r"^\s*(?:option\s+|answer\s*[:\-]?\s*)?[\(\[]?([A-Da-d])(?:[\)\]\.:,\s]|$)", re.IGNORECASE)
# How far one attempt got, in order: a measurement counts the share that reached each (helpers.agents.writer_measure).
STAGES = ("sampled", "json", "question", "filter", "proven", "accepted")


def harness_prompt(topic: str, subtopic: str, letter_: str) -> str:
    """A question request as the organisers' harness words it (tournament-rules.md: the topic as
    "<topic>/<subtopic>", the correct option named, the JSON shape): what the writer is trained on and asked."""
    return (f"Generate an EXTREMELY DIFFICULT MCQ on topic: {topic}/{subtopic}.\n\n"
            f"4. Single Correct Answer: Ensure that option {letter_} is only factually correct.\n"
            f'RESPONSE FORMAT: {{"topic": "{subtopic}", "question": "...", "choices": ["A) ...", "B) ...", '
            f'"C) ...", "D) ..."], "answer": "{letter_}", "explanation": "..."}}')


def answer_letter(answer: Any, choices: list[str]) -> str | None:
    """The key's letter from "B", "b) Ben", "Option B" or the text of a choice; None when it is not clear."""
    if not isinstance(answer, str) or not answer.strip():
        return None
    # The text of a choice first: "A triangle" or "a dog" as a key names a choice, not letter A.
    whole = [i for i, c in enumerate(choices) if normalize_text(strip_prefix(c)) == normalize_text(answer)]
    if len(whole) == 1:
        return LETTERS4[whole[0]]
    match = _ANSWER.match(answer)
    if match:
        return match.group(1).upper()
    key = normalize_text(strip_prefix(answer))
    hits = [i for i, c in enumerate(choices) if normalize_text(c) == key]
    return LETTERS4[hits[0]] if len(hits) == 1 else None


def normalize_question(obj: Any, topic_label: str) -> tuple[dict | None, str | None]:
    """Model JSON -> the official question (letters re-prefixed, key a letter), or (None, reason)."""
    if not isinstance(obj, dict):
        return None, "not_an_object"
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        return None, "no_question"
    raw = obj.get("choices")
    if isinstance(raw, dict):
        raw = [raw[k] for k in sorted(raw, key=str) if str(k).strip().upper() in LETTERS4]
    if not isinstance(raw, list) or len(raw) != 4 or not all(isinstance(c, str) for c in raw):
        return None, "not_four_choices"
    choices = [strip_prefix(c).strip() for c in raw]
    if any(len(c) < 1 for c in choices):
        return None, "empty_choice"
    if len({normalize_text(c) for c in choices}) != 4:
        return None, "duplicate_choices"
    key = answer_letter(obj.get("answer"), choices)
    if key is None:
        return None, "bad_answer_key"
    out = {"topic": topic_label, "question": " ".join(question.split()),
           "choices": [f"{LETTERS4[i]}) {c}" for i, c in enumerate(choices)], "answer": key}
    explanation = obj.get("explanation")
    if isinstance(explanation, str) and explanation.strip():
        words = explanation.split()
        out["explanation"] = " ".join(words[:MAX_EXPLANATION_WORDS - 1])
    return out, None


def move_key(question: dict, letter_: str) -> dict:
    """The same question with its correct choice moved to `letter_` (swapped with the one there)."""
    texts = [strip_prefix(c) for c in question["choices"]]
    src, dst = LETTERS4.index(question["answer"]), LETTERS4.index(letter_)
    texts[src], texts[dst] = texts[dst], texts[src]
    return {**question, "choices": [f"{LETTERS4[i]}) {t}" for i, t in enumerate(texts)], "answer": letter_}


class ModelWriter:
    """Samples questions from one member of the loaded model (the trained writer, config.WRITER, when there is one);
    switches itself off after repeated failures. `candidates` replies are sampled together (one batched generate)
    and the first that passes every check is kept: proof-filtered sampling, nearly free on a GPU. `reached` is
    how far the last attempt's best reply got (one of STAGES)."""

    def __init__(self, model: Any, tokenizer: Any, *, member: str = "base", checker: Any = None,
                 max_failures: int = 5, candidates: int = 1, gen: dict | None = None,
                 rules: QuestionRules | None = None):
        self.model, self.tokenizer, self.member, self.checker = model, tokenizer, member, checker
        self.rules = rules  # the edition's question filter (None: the default edition's)
        self.max_failures, self.candidates = int(max_failures), max(1, int(candidates))
        self.gen = {**GEN_DEFAULTS, **(gen or {})}
        self.failures_in_a_row = 0
        self.enabled = True
        self.reached = STAGES[0]
        self.stats: Counter = Counter()
        self.explained: Counter = Counter()  # accepted questions by their explanation's source (deduction, count)
        self.replies: Counter = Counter()  # every sampled reply by the furthest stage it reached

    def _sample(self, prompt: str, seconds: float) -> list[str]:
        import torch
        from helpers import scoring
        from helpers.prompts import render_messages
        text = render_messages(self.tokenizer, [{"role": "system", "content": SYSTEM},
                                                {"role": "user", "content": prompt}], add_generation_prompt=True)
        enc = self.tokenizer(text, add_special_tokens=False, return_tensors="pt")
        device = next(self.model.parameters()).device
        enc = {k: v.to(device) for k, v in enc.items()}
        refuse_overlength(self.model, enc["input_ids"].shape[1] + min(1024, int(self.gen["max_new_tokens"])),
                          "the question writer's prompt and its reply")
        with torch.no_grad(), scoring.use_member(self.model, self.member):
            out = self.model.generate(**enc, do_sample=True, max_time=max(0.05, seconds),
                                      max_new_tokens=min(1024, int(self.gen["max_new_tokens"])),
                                      temperature=float(self.gen["temperature"]), top_p=float(self.gen["top_p"]),
                                      repetition_penalty=float(self.gen["repetition_penalty"]),
                                      num_return_sequences=self.candidates, pad_token_id=self.tokenizer.pad_token_id)
        return self.tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)

    def _reject(self, reason: str) -> tuple[None, str]:
        self.stats[reason] += 1
        self.failures_in_a_row += 1
        if self.enabled and self.failures_in_a_row >= self.max_failures:
            self.enabled = False
            self.stats["writer_switched_off"] += 1
        return None, reason

    def write(self, topic: str, subtopic: str, letter_: str, deadline: timing.Deadline,
              kinds: tuple[str, ...] = ()) -> tuple[dict | None, str | None]:
        """One question whose key is `letter_`, or (None, rejection reason). kinds: the topic's generator families;
        with any, the question must read back as a puzzle of one of them and be proven, and it gets the solver's
        deduction as its explanation; on a topic without generators only the checker (if any) vouches for the key."""
        self.stats["attempts"] += 1
        self.reached = STAGES[0]
        seconds = deadline.left() - RESERVE_S
        if seconds <= 0.1:
            return self._reject("no_time")
        try:
            replies = self._sample(harness_prompt(topic, subtopic, letter_), seconds)
        except Exception as exc:  # a generation failure falls back to a verified puzzle, counted
            return self._reject(f"model_error:{type(exc).__name__}")
        question, reason = self._best(replies, subtopic, tuple(kinds))
        if question is None:
            return self._reject(reason)
        if question["answer"] != letter_:
            question = move_key(question, letter_)
        if kinds:
            self._explain(question, deadline)
        if self.checker is not None and not kinds:
            answers, meta = self.checker.answer([question])
            if meta[0]["source"] != "model":  # a fallback letter agreeing by chance proves nothing
                return self._reject(f"check_failed:{meta[0]['reason']}")
            if answers[0]["answer"] != question["answer"]:
                return self._reject("key_disagrees")
        self.failures_in_a_row = 0
        self.stats["accepted"] += 1
        self.reached = "accepted"
        return question, None

    def _explain(self, question: dict, deadline: timing.Deadline) -> None:
        """The accepted question's explanation: the solver's (its checked deduction where one is written in the
        time left, deduction.explanation), never the model's; counted by source. The proof _checked kept is used
        (and removed: it never leaves the writer), its options in the order of the choices as asked (the key may
        have moved since it was read: move_key)."""
        puzzle, key = question.pop(PROOF)
        puzzle = puzzles.in_choice_order(puzzle, [strip_prefix(c) for c in question["choices"]])
        text, how = deduction.explanation(puzzle, key, seconds_left=deadline.left(), work=timing.EXPLAIN_WORK)
        question["explanation"] = " ".join(text.split()[:MAX_EXPLANATION_WORDS - 1])
        self.explained[how] += 1

    def _best(self, replies: list[str], subtopic: str, kinds: tuple[str, ...]) -> tuple[dict | None, str | None]:
        """The first reply that passes every check, else (None, the reason of the reply that got furthest);
        sets `reached` to how far the best reply got."""
        kept, best_reason, best_stage = None, "no_reply", 0
        for raw in replies:  # every reply is checked (cheap next to sampling), so `replies` counts them all
            question, reason, stage = self._checked(raw, subtopic, kinds)
            self.replies[STAGES[stage]] += 1
            if question is not None and kept is None:
                kept, best_stage = question, stage
            elif kept is None and (stage > best_stage or best_reason == "no_reply"):
                best_reason, best_stage = reason, stage
        self.reached = STAGES[best_stage]
        return (kept, None) if kept is not None else (None, best_reason)

    def _checked(self, raw: str, subtopic: str, kinds: tuple[str, ...]) -> tuple[dict | None, str | None, int]:
        """(question, None, stage) for a reply that is an official question passing the filter and, on a topic with
        generator `kinds`, proven to be one of their puzzles (write() then gives it the solver's explanation); else
        (None, the first check it failed, the index in STAGES of the last check it passed)."""
        obj, how = extract_json(raw)
        if obj is None:
            return None, how, 0
        question, reason = normalize_question(obj, subtopic)
        if question is None:
            return None, reason, 1
        result = filters.check_question(question, self.tokenizer, self.rules)
        if not result.ok:
            return None, f"filter:{result.reason}", 2
        if not kinds:
            return question, None, 3
        choices = [strip_prefix(c) for c in question["choices"]]
        index, puzzle, why = puzzles.prove_text(question["question"], choices)
        if why is not None:
            return None, f"unproven:{why}", 3
        if puzzle["kind"] not in kinds:  # a proven family puzzle asked for a seating topic is still off-topic
            return None, f"off_topic:{puzzle['kind']}", 3
        if LETTERS4[index] != question["answer"]:
            return None, "key_not_proven", 3
        question[PROOF] = (puzzle, choices[index])  # write() explains the question it keeps from this proof
        return question, None, 4
