"""The exported classes called the way the organisers' harness calls them: questions, then answers to them.

The harness runs the Q-agent and the A-agent in separate processes; here they run one after the other and the
Q-agent's model copy is released before the A-agent loads its own (two 72B copies, ~145 GB each, do not fit in an
MI300X's 192 GB).
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import filters
from helpers.agents import topics as topics_mod
from helpers.agents.harness.kit_agents import CONFIG_NAME, KitAAgent, KitQAgent


def harness_prompts(topics: dict) -> list[str]:
    """The harness's question prompt for the first two topics, asking for keys C and A."""
    return [f"Generate an EXTREMELY DIFFICULT MCQ on topic: {t}/{s}.\nEnsure that option {key} is only correct."
            for (t, s), key in zip(topics_mod.pairs(topics), "CA")]


def check_export(folder: str | Path, topics: dict) -> dict:
    """Build QAgent, ask it the harness's prompts (max_new_tokens 1024), release its model; build AAgent, answer its
    questions (max_new_tokens 512). Per question: filter verdicts, key, answer, reasoning; seconds per call."""
    from helpers.models import release
    path = str(Path(folder) / CONFIG_NAME)
    qagent = KitQAgent(config=path)
    texts, _, q_secs = qagent.generate_response(harness_prompts(topics), "You are an examiner.", max_new_tokens=1024)
    questions = [json.loads(t) for t in texts]
    edition = qagent.config["agents"].rules  # the exported agents' edition judges them
    questions_ok = [filters.check_question(q, qagent.tokenizer, edition.question_rules).ok for q in questions]
    gone = release.watch(qagent.model)  # None (nothing loaded) when the export asks no model questions
    del qagent  # one copy at a time, as the harness's separate processes have it
    release.free_memory(*gone, label="the exported Q-agent's model")
    aagent = KitAAgent(config=path)
    prompts = [f"Question: {q['question']}\nChoices: {' '.join(q['choices'])}\n\nAnswer in JSON." for q in questions]
    a_texts, _, a_secs = aagent.generate_response(prompts, "You answer MCQs.", max_new_tokens=512)
    answers = [json.loads(a) for a in a_texts]
    rows = [{"question ok": ok, "key": q["answer"], "answer": a["answer"],
             "answer ok": filters.check_answer(a, aagent.tokenizer, edition.answer_rules).ok, "reasoning": a.get("reasoning", "")[:80]}
            for q, ok, a in zip(questions, questions_ok, answers)]
    return {"rows": rows, "question_seconds": q_secs, "answer_seconds": a_secs, "questions": len(texts),
            "answers": len(a_texts), "answer_mode": aagent.config["agents"].answer_mode}
