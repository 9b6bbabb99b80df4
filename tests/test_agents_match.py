"""The match simulator scores like the organisers: N format-correct, A/Q-scores, total /200, disqualification,
exact letter comparison, time limits; with scripted agents so every number is known in advance."""

from __future__ import annotations

import json

import pytest

from helpers.agents.home import match
from helpers.agents.home.match import Team


class WordTokenizer:
    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(range(len(text.split())))


TOK = WordTokenizer()


def official(i: int, key: str) -> dict:
    return {"topic": "Seating", "question": f"Question number {i}?", "choices": ["A) a1", "B) b1", "C) c1", "D) d1"],
            "answer": key}


class ScriptedAsker:
    """Questions from a list (dicts, texts or broken objects), each with a scripted generation time."""

    def __init__(self, questions, seconds=None):
        self.questions, self.seconds = list(questions), list(seconds or [0.01] * len(questions))
        self.tokenizer = TOK
        self.i = 0

    def topic_schedule(self, n):
        return [("Puzzles", "Seating")] * n

    def ask(self, topic, subtopic):
        q, s = self.questions[self.i], self.seconds[self.i]
        self.i += 1
        return q, {"seconds": s, "subtopic": subtopic, "source": "script"}


class ScriptedAnswerer:
    """Answers by a function of the question, with a scripted time per answer."""

    def __init__(self, fn, seconds=0.01):
        self.fn, self.seconds, self.tokenizer, self.seen = fn, seconds, TOK, []

    def answer(self, questions):
        self.seen += questions
        return [self.fn(q) for q in questions], [{"seconds": self.seconds} for _ in questions]


def inning(asker, answerer, n, **kw):
    """One inning between a scripted asker and a scripted answerer."""
    return match.play_inning(Team("q", asker, None), Team("a", None, answerer), n, **kw)


def right(q):
    return {"answer": q["answer"], "reasoning": "r"}


def wrong(q):
    return {"answer": "ABCD"[("ABCD".index(q["answer"]) + 1) % 4], "reasoning": "r"}


def test_scores_of_a_plain_match():
    keys = "ABCDABCDAB"
    t1 = Team("one", ScriptedAsker([official(i, k) for i, k in enumerate(keys)]),
              ScriptedAnswerer(lambda q: right(q) if int(q["question"].split()[2][:-1]) < 7 else wrong(q)))
    t2 = Team("two", ScriptedAsker([official(i, k) for i, k in enumerate(keys)]),
              ScriptedAnswerer(lambda q: right(q) if int(q["question"].split()[2][:-1]) < 4 else wrong(q)))
    result = match.play_match(t1, t2, 10)
    s1, s2 = result["scores"]["one"], result["scores"]["two"]
    # inning 1: two answers one's 10 questions, 4 right -> two A 40, one Q 60; inning 2: one gets 7 right
    assert (s1["q_score"], s1["a_score"], s1["total"]) == (60.0, 70.0, 130.0)
    assert (s2["q_score"], s2["a_score"], s2["total"]) == (30.0, 40.0, 70.0)
    assert result["winner"] == "one" and result["decided_by"] == "score"
    assert len(result["innings"][0]["rows"]) == 10 and result["innings"][0]["rows"][0]["correct"] is True
    json.dumps(result)  # tournament.json must serialise


def test_exact_letter_comparison_lower_case_and_long_answers_do_not_score():
    qs = [official(i, "B") for i in range(4)]
    answers = iter([{"answer": "b"}, {"answer": "B) b1"}, {"answer": "B"}, {"answer": " B"}])
    got = inning(ScriptedAsker(qs), ScriptedAnswerer(lambda q: next(answers)), 4)
    assert [r["correct"] for r in got["rows"]] == [False, False, True, False]
    assert got["a_score"] == 25.0 and got["q_score"] == 75.0 and got["answers_dropped"] == {}


def test_filtered_and_slow_answers_are_wrong():
    qs = [official(i, "A") for i in range(4)]
    outs = iter([{"answer": "E"}, None, {"answer": "A", "reasoning": "w " * 600}, {"answer": "A"}])
    got = inning(ScriptedAsker(qs), ScriptedAnswerer(lambda q: next(outs)), 4)
    assert got["correct"] == 1 and got["answers_dropped"] == {"bad_letter": 1, "not_an_object": 1,
                                                              "reasoning_too_long": 1}
    slow = inning(ScriptedAsker(qs), ScriptedAnswerer(right, seconds=6.0), 4)
    assert slow["correct"] == 0 and slow["answers_dropped"] == {"too_slow": 4} and slow["q_score"] == 100.0


def test_n_counts_only_format_correct_timely_questions_and_under_half_is_disqualified():
    qs = [official(0, "A"), json.dumps(official(1, "B")), "{broken", {"question": "no topic"},
          official(4, "C"), official(5, "D")]
    seconds = [0.1, 0.1, 0.1, 0.1, 10.0, 0.1]  # the fifth took the whole 10 s: not counted
    got = inning(ScriptedAsker(qs, seconds), ScriptedAnswerer(right), 6)
    assert got["format_correct"] == 3 and not got["disqualified"]  # 3 of 6 is exactly 50%: allowed
    assert got["questions_dropped"] == {"not_an_object": 1, "missing_topic": 1, "too_slow": 1}
    assert got["a_score"] == 100.0 and got["q_score"] == 0.0
    dq = inning(ScriptedAsker(qs[:5], seconds[:5]), ScriptedAnswerer(right), 5)
    assert dq["format_correct"] == 2 and dq["disqualified"]


def test_a_disqualified_team_loses_whatever_its_score():
    good = Team("good", ScriptedAsker([official(i, "A") for i in range(4)]), ScriptedAnswerer(wrong))
    bad = Team("bad", ScriptedAsker([{"id": i, "question": "q", "choices": {"A": "x"}, "correct_answer": "A"}
                                     for i in range(4)]), ScriptedAnswerer(right))
    result = match.play_match(good, bad, 4)
    assert result["scores"]["bad"]["disqualified"] and result["winner"] == "good"
    assert result["decided_by"] == "disqualification"
    assert result["scores"]["bad"]["total"] == 100.0 > result["scores"]["good"]["total"] == 0.0


def test_equal_totals_are_a_tie_and_both_disqualified_no_winner():
    def team(name):
        return Team(name, ScriptedAsker([official(i, "A") for i in range(2)]), ScriptedAnswerer(right))
    tie = match.play_match(team("x"), team("y"), 2)
    assert tie["winner"] is None and tie["decided_by"].startswith("tie")

    def broken(name):
        return Team(name, ScriptedAsker(["{}", "{}"]), ScriptedAnswerer(right))
    both = match.play_match(broken("x"), broken("y"), 2)
    assert both["winner"] is None and both["decided_by"] == "both disqualified"


def test_answers_are_asked_in_harness_batches():
    answerer = ScriptedAnswerer(right)
    calls = []
    orig = answerer.answer
    answerer.answer = lambda qs: calls.append(len(qs)) or orig(qs)
    inning(ScriptedAsker([official(i, "A") for i in range(7)]), answerer, 7, batch_size=3)
    assert calls == [3, 3, 1]


def test_seeds_style_questions_fail_the_filter(tmp_path):
    from transformers import AutoTokenizer

    from _tiny import ROOT, tiny_model_dir
    from helpers.agents import topics as topics_mod
    from helpers.agents.question import QuestionAgent
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir()))
    inner = QuestionAgent(tok, topics_mod.read_topics(ROOT / "data" / "topics.json"), seed=1)
    seeds = Team("seeds", match.SeedsStyleQuestions(inner), ScriptedAnswerer(right))
    kit = Team("kit", QuestionAgent(tok, topics_mod.read_topics(ROOT / "data" / "topics.json"), seed=2),
               ScriptedAnswerer(wrong))
    result = match.play_match(kit, seeds, 6)
    assert result["innings"][1]["questions_dropped"] == {"missing_topic": 6}
    assert result["winner"] == "kit" and result["scores"]["seeds"]["disqualified"]
    from helpers.agents.home import plots
    png = plots.plot_match(result, tmp_path / "match.png")
    assert png.stat().st_size > 10_000


def test_the_edition_judges_the_match_its_pass_share_and_its_limits():
    """9 of 20 format-correct disqualify under October 2025 (50%) and not under July 2025 (40%); an answer in 7 s is
    too slow under October's 6 s and counts under February 2026's 9 s."""
    from helpers import edition
    july, october, february = (edition.load(n) for n in ("2025-07-aaipl", "2025-10-aiac", "2026-02-aaipl-iitd"))
    asked = [official(i, "A") if i < 9 else {"question": "no choices"} for i in range(20)]
    for rules, out in ((october, True), (july, False)):
        result = inning(ScriptedAsker(asked), ScriptedAnswerer(right), 20, edition=rules)
        assert result["format_correct"] == 9 and result["disqualified"] is out, rules.name
    slow = ScriptedAnswerer(right, seconds=7.0)
    assert inning(ScriptedAsker(asked), slow, 20, edition=october)["answers_dropped"] == {"too_slow": 9}
    assert inning(ScriptedAsker(asked), slow, 20, edition=february)["correct"] == 9
    match_ = match.play_match(Team("x", ScriptedAsker(asked), slow), Team("y", ScriptedAsker(asked), slow), 20,
                              edition=february)
    assert match_["edition"] == "2026-02-aaipl-iitd" and match_["limits"] == {"question_s": 13.0, "answer_s": 9.0}
