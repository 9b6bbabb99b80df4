"""A tournament edition as data (helpers/edition.py, data/editions/): the three known editions as the rules give them,
every bad file named by its key, the filters and the disqualification under each edition's numbers, the models it
allows, and a profile naming its edition by name or by path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from helpers import config, edition, filters
from helpers.agents import topics as topics_mod
from helpers.io import InputError, read_json

ROOT = Path(__file__).resolve().parent.parent


class Words:
    """One token a word: counts are easy to write down."""

    def encode(self, text, add_special_tokens=True):
        return text.split()


def question(words_in_question: int, topic: str = "Puzzles") -> dict:
    """A question of `words_in_question` words, four one-word choices after their letters, the answer "A"."""
    return {"topic": topic, "question": " ".join(["w"] * words_in_question),
            "choices": ["A) one", "B) two", "C) three", "D) four"], "answer": "A"}


def test_the_three_known_editions_are_as_the_rules_give_them():
    assert edition.names() == ["2025-07-aaipl", "2025-10-aiac", "2026-02-aaipl-iitd"]
    july, october, february = (edition.load(n) for n in edition.names())
    assert (july.question_s, july.answer_s, july.pass_share) == (10.0, 6.0, 0.4)
    assert july.question_rules.counts == ("topic", "question", "choices", "answer")
    assert (july.question_rules.minus, july.question_rules.max_core) == (0, 100)
    assert july.models == ("Qwen/Qwen3-4B",) and july.chat_template == {"enable_thinking": False}
    assert "Truth-teller and Liar Problems" in july.topics["Logical Reasoning"]
    assert (october.question_rules.minus, october.question_rules.max_core, october.pass_share) == (15, 129, 0.5)
    assert october.models is None and october.question_rules.total_at_most == 1024
    assert (october.answer_rules.answer_under, october.answer_rules.total_under) == (50, 512)
    assert (february.question_s, february.answer_s) == (13.0, 9.0) and len(february.topics) == 4


def test_the_default_edition_is_base_yamls_and_the_shipped_topics_file_is_its_topics():
    base = yaml.safe_load((ROOT / "configs" / "base.yaml").read_text(encoding="utf-8"))
    assert base["agents"]["edition"] == edition.DEFAULT
    assert read_json(ROOT / "data" / "topics.json") == edition.load(edition.DEFAULT).topics


def test_the_question_filter_counts_what_each_edition_counts():
    july, october = edition.load("2025-07-aaipl").question_rules, edition.load("2025-10-aiac").question_rules
    tok = Words()
    # July: topic (1) + question + choices (8) + answer (1) at most 100 -> a 90-word question is 100 exactly
    assert filters.check_question(question(90), tok, july).ok
    assert filters.check_question(question(91), tok, july).reason == "question_too_long"
    assert filters.check_question(question(90, topic="Blood Relations"), tok, july).reason == "question_too_long"
    # October: question + answer (1) + choices (8) - 15 under 130 -> 135 words is 129, the topic not counted
    assert filters.check_question(question(135, topic="a b c d e f"), tok, october).ok
    assert filters.check_question(question(136), tok, october).reason == "question_too_long"
    assert filters.check_question(question(135), tok).ok  # no rules given: the default edition's (October)
    assert filters.check_question({**question(3), "topic": 7}, tok, july).reason == "topic_not_string"


def test_the_pass_share_and_the_models_are_the_editions():
    july, october = edition.load("2025-07-aaipl"), edition.load("2025-10-aiac")
    assert not july.disqualified(8, 20) and july.disqualified(7, 20)
    assert october.disqualified(9, 20) and not october.disqualified(10, 20)
    assert july.allows("Qwen/Qwen3-4B") and july.allows("/workspace/models/qwen3-4b/")
    assert not july.allows("Qwen/Qwen2.5-72B-Instruct") and october.allows("Qwen/Qwen2.5-72B-Instruct")
    with pytest.raises(edition.ForbiddenModel) as err:
        edition.check_model(july, "Qwen/Qwen2.5-72B-Instruct")
    line = str(err.value)
    assert "\n" not in line and "2025-07-aaipl" in line and "Qwen/Qwen3-4B" in line and "Qwen2.5-72B" in line


GOOD = (ROOT / "data" / "editions" / "2025-10-aiac.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("change, key, problem", [
    (lambda d: d.pop("pass_share"), "pass_share", "missing"),
    (lambda d: d.update(pass_shares=0.5), "pass_shares", "unknown key"),
    (lambda d: d.update(pass_share=1.5), "pass_share", "out of range"),
    (lambda d: d["time_limits"].update(answer_s="six"), "time_limits.answer_s", "expected a number"),
    (lambda d: d["time_limits"].pop("question_s"), "time_limits.question_s", "missing"),
    (lambda d: d["question_filter"].update(at_most=100), "question_filter.under", "exactly one"),
    (lambda d: d["question_filter"].update(counts=["question", "explanation"]), "question_filter.counts", "distinct"),
    (lambda d: d["question_filter"].update(total_at_most=100), "question_filter.total_at_most", "no room"),
    (lambda d: d["answer_filter"].update(answer_under=-1), "answer_filter.answer_under", "whole number"),
    (lambda d: d.update(models=[]), "models", "any or a list"),
    (lambda d: d.update(topics={"Puzzles": []}), "topics.Puzzles", "non-empty list"),
    (lambda d: d.update(chat_template=["enable_thinking"]), "chat_template", "mapping"),
    (lambda d: d.update(chat_template={"enable_thinking": True}), "chat_template.enable_thinking", "renders"),
])
def test_a_bad_edition_file_is_named_with_its_key(tmp_path, change, key, problem):
    data = yaml.safe_load(GOOD)
    change(data)
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InputError) as err:
        edition.load(path)
    assert err.value.path == str(path.resolve()) and err.value.field == key and problem in str(err.value)


def test_a_profile_names_its_edition_by_name_or_by_path_and_a_bad_one_is_named():
    cfg = config.load_profile("smoke")
    assert cfg.agents.edition == edition.DEFAULT and cfg.agents.question_time_limit_s == 10.0
    own = config.load_profile("smoke", overrides={"agents.edition": "tests/fixtures/editions/unhurried-questions.yaml"})
    assert own.agents.question_time_limit_s == 600.0 and own.agents.rules.name == "unhurried-questions"
    feb = config.load_profile("smoke", overrides={"agents.edition": "2026-02-aaipl-iitd"})
    assert feb.agents.answer_time_limit_s == 9.0
    with pytest.raises(InputError) as err:
        config.load_profile("smoke", overrides={"agents.edition": "2027-01-unknown"})
    assert err.value.field == "agents.edition" and "2025-10-aiac" in str(err.value)
    with pytest.raises(InputError, match="agents.answer_time_limit_s.*unknown key; the tournament's rules are its "
                                         "edition's now: agents.edition"):
        config.load_profile("smoke", overrides={"agents.answer_time_limit_s": 9.0})


def test_the_topics_no_family_writes_are_named():
    final = {**edition.load("2026-02-aaipl-iitd").topics, "Clocks and Calendars": ["Day of the week"]}
    assert topics_mod.unserved_pairs(final) == [("Clocks and Calendars", "Day of the week")]
    assert all(topics_mod.unserved_pairs(edition.load(name).topics) == [] for name in edition.names())
