"""Training chats for a question writer: the harness's own question prompt (the topic as "<topic>/<subtopic>", the
letter it names) and, as the reply, an official-format question JSON from the generators, whose key is that letter.
A writer trained on these learns the generators' wording, which is what lets puzzles.prove_text read its questions
back and prove them (helpers.agents.writer).
"""

from __future__ import annotations

import json
import random

from helpers import filters, puzzles
from helpers.agents import topics as topics_mod
from helpers.agents.writer import SYSTEM, harness_prompt
from helpers.records import LETTERS


def writer_reply(record: dict, subtopic: str) -> str:
    """The reply a writer learns: the record as the official question JSON (compact, keys in the official order)
    without the explanation: the writer attaches the solver's own deduction once the question is proven, so the
    model writes half the tokens (~110 instead of ~230 with SmolLM2's tokenizer) and never a wrong deduction."""
    question = filters.to_official_question(record, subtopic)
    keys = ("topic", "question", "choices", "answer")
    return json.dumps({k: question[k] for k in keys if k in question}, ensure_ascii=False)


def writer_records(n: int, *, seed: int, topics: dict[str, list[str]], kinds: tuple[str, ...] = puzzles.KINDS,
                   levels: tuple[int, ...] = puzzles.LEVELS) -> list[dict]:
    """n training records: each a generated puzzle's shared record (so the trainer's checks and curriculum tools take
    it) with "chat": [system, user, assistant], the turns a writer trains on, and "task": "writer". Every (topic,
    subtopic) with a generator in turn, its families and levels cycling; each (family, level) is asked with the
    next letter of A-D every time it comes round, so every family and level learns every letter."""
    pairs = topics_mod.provable_pairs(topics, kinds)
    if not pairs:
        raise ValueError("no topic in the topics file has a puzzle generator among the given kinds")
    rng, out = random.Random(f"writer:{seed}"), []
    for i in range(n):
        topic, subtopic = pairs[i % len(pairs)]
        family, j = topics_mod.families(topic, subtopic, kinds), i // len(pairs)
        kind, level = family[j % len(family)], levels[(j // len(family)) % len(levels)]  # every family x level
        combos = len(family) * len(levels)
        target = (j // combos + j % combos) % 4  # a combination's letter moves on each round; a round mixes letters
        rec = puzzles.make_puzzle(kind, level, target, rng, {}, id=f"writer-{seed}-{i:06d}")
        letter_ = LETTERS[rec["answer"]]
        chat = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": harness_prompt(topic, subtopic, letter_)},
                {"role": "assistant", "content": writer_reply(rec, subtopic)}]
        out.append({**rec, "chat": chat, "task": "writer"})
    return out
