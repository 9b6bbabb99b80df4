"""Training chats for a question writer (helpers.agents.stages.writer_data): the harness's prompt, a proven official JSON
reply with the requested key, every family and level, and the trainer's masks on the reply only."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from helpers import edition, puzzles
from helpers.agents import topics as topics_mod
from helpers.agents.stages import writer_data
from helpers.agents.question import QuestionAgent
from helpers.agents.writer import normalize_question
from helpers.train.data import IGNORE_INDEX, tokenize_example

from _tiny import ROOT, tiny_model_dir

TOPICS = topics_mod.read_topics(ROOT / "data" / "topics.json")
# Every topic of the shipped editions and every family's own, so that every family is taught: topic -> subtopics.
ALL_TOPICS: dict[str, list[str]] = {}
for _name in edition.names():
    for _topic, _subs in edition.load(_name).topics.items():
        ALL_TOPICS.setdefault(_topic, []).extend(s for s in _subs if s not in ALL_TOPICS[_topic])
for _topic, _sub in puzzles.TOPICS.values():  # and a topic added on the day (direction sense)
    ALL_TOPICS.setdefault(_topic, []).extend([_sub] if _sub not in ALL_TOPICS[_topic] else [])


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(str(tiny_model_dir()))


@pytest.fixture(scope="module")
def records():
    pairs = topics_mod.pairs(ALL_TOPICS)  # enough rounds for the topic with most families to ask each at each level
    most = max(len(topics_mod.families(t, s, puzzles.KINDS)) for t, s in pairs)
    return writer_data.writer_records(len(pairs) * most * len(puzzles.LEVELS), seed=1, topics=ALL_TOPICS)


def test_every_reply_is_a_proven_question_whose_key_is_the_requested_letter(records):
    for rec in records:
        system, user, reply = rec["chat"]
        asked = user["content"].split("Ensure that option ")[1][0]
        obj = json.loads(reply["content"])
        question, why = normalize_question(obj, obj["topic"])
        assert why is None and question["answer"] == asked == obj["answer"]
        index, puzzle, why = puzzles.prove_text(obj["question"], [c[3:] for c in obj["choices"]])
        assert why is None and "ABCD"[index] == asked and puzzle["kind"] == rec["puzzle"]["kind"]


def test_every_family_and_level_is_taught_every_letter():
    kinds, levels = ("seating_linear", "family", "family_pointing"), (1, 2)
    recs = writer_data.writer_records(32, seed=3, topics=TOPICS, kinds=kinds, levels=levels)  # 8 seating, 16 family
    taught = {(r["puzzle"]["kind"], r["puzzle"]["level"], json.loads(r["chat"][2]["content"])["answer"]) for r in recs}
    assert taught == {(k, lv, x) for k in kinds for lv in levels for x in "ABCD"}
    one = writer_data.writer_records(8, seed=3, topics=TOPICS, kinds=("family_pointing",), levels=(1,))
    assert [json.loads(r["chat"][2]["content"])["answer"] for r in one] == list("ABCDABCD")  # one combination too


def test_every_family_and_level_and_letter_is_taught(records):
    combos = Counter((r["puzzle"]["kind"], r["puzzle"]["level"]) for r in records)
    assert set(combos) == {(k, lv) for k in puzzles.KINDS for lv in puzzles.LEVELS}
    letters = Counter(json.loads(r["chat"][2]["content"])["answer"] for r in records)
    assert max(letters.values()) - min(letters.values()) <= 1


def test_the_q_agent_reads_the_prompt_it_is_trained_on(tok, records):
    agent = QuestionAgent(tok, ALL_TOPICS, seed=2)
    for rec in records[:5]:  # one of each topic
        prompt = rec["chat"][1]["content"]
        question, meta = agent.respond(prompt)
        assert question is not None and question["answer"] == json.loads(rec["chat"][2]["content"])["answer"]
        assert (meta["topic"], meta["subtopic"]) in topics_mod.pairs(ALL_TOPICS)


def test_the_trainer_learns_the_reply_only(tok, records):
    ex = tokenize_example(tok, records[0])
    labels = [x for x in ex["labels"] if x != IGNORE_INDEX]
    reply = tok.decode(labels)
    assert reply.startswith(records[0]["chat"][2]["content"]) and len(labels) < len(ex["input_ids"])
    assert all(x == IGNORE_INDEX for x in ex["labels"][:len(ex["input_ids"]) - len(labels)])
