"""A stand-in for the organisers' harness (written from tournament-rules.md, not their code): the Q side asks for
questions on "<topic>/<subtopic>" naming the correct letter, the A side asks for answers; both call
generate_response(list, system_prompt, **gen_kwargs) in batches, json-parse the texts and apply the filters."""

from __future__ import annotations

import json
import random

from helpers import filters

Q_GEN = {"max_new_tokens": 1024, "temperature": 0.7, "top_p": 0.9, "repetition_penalty": 1.2, "do_sample": True}
A_GEN = {"max_new_tokens": 512, "temperature": 0.1, "top_p": 0.9, "repetition_penalty": 1.2, "do_sample": True}


def harness_questions(qagent, topics: dict, n: int, batch_size: int, rng: random.Random) -> tuple[list, list]:
    """Q side: prompts naming "<topic>/<subtopic>" and a random correct letter, batch calls, json-parse, filter."""
    pairs = [(t, s) for t, subs in topics.items() for s in subs]
    prompts, letters = [], []
    for _ in range(n):
        t, s = rng.choice(pairs)
        letter = rng.choice("ABCD")
        letters.append(letter)
        prompts.append(f"Generate an EXTREMELY DIFFICULT MCQ on topic: {t}/{s}.\n\n"
                       f"4. Single Correct Answer: Ensure that option {letter} is only factually correct.\n"
                       f'RESPONSE FORMAT: {{"topic": "{s}", "question": "...", "choices": ["A) ...", "B) ...", '
                       f'"C) ...", "D) ..."], "answer": "{letter}", "explanation": "..."}}')
    texts = []
    for i in range(0, n, batch_size):
        out, tokens, seconds = qagent.generate_response(prompts[i:i + batch_size], "You are an expert examiner.",
                                                        **Q_GEN)
        assert isinstance(out, list) and len(out) == len(prompts[i:i + batch_size])
        assert (tokens is None or isinstance(tokens, int)) and (seconds is None or isinstance(seconds, float))
        texts += out
    parsed = [json.loads(t) for t in texts]
    kept = [q for q in parsed if filters.check_question(q, qagent.tokenizer).ok]
    return kept, letters


def harness_answers(aagent, questions: list, batch_size: int) -> list:
    """A side: prompts with 'Question:' and 'Choices:' lines, batch calls, json-parse, filter (None on failure)."""
    prompts = [f"INSTRUCTIONS: answer the multiple-choice question.\n\nQuestion: {q['question']}\n"
               f"Choices: {' '.join(q['choices'])}\n\nRESPONSE FORMAT: Strictly generate a valid JSON object:\n"
               '{\n    "answer": "One of the letters [A, B, C, D]",\n    "reasoning": "Brief explanation"\n}'
               for q in questions]
    texts = []
    for i in range(0, len(prompts), batch_size):
        out, tokens, seconds = aagent.generate_response(prompts[i:i + batch_size], "You answer MCQs.", **A_GEN)
        assert isinstance(out, list) and len(out) == len(prompts[i:i + batch_size])
        texts += out
    answers = [json.loads(t) for t in texts]
    return [a if filters.check_answer(a, aagent.tokenizer).ok else None for a in answers]
