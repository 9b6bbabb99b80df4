"""The Q-agent: 1,000 questions all pass the filter with proven keys and independently drawn letters; topics,
requested letters, fallbacks; model-written questions kept only when checked; the command line."""

from __future__ import annotations

import json
import random
import time
from collections import Counter

import pytest

from helpers import filters, puzzles
from helpers.agents import question as question_mod
from helpers.agents import timing, topics as topics_mod
from helpers.puzzles import families
from helpers.agents.harness import cli
from helpers.agents.question import QuestionAgent
from helpers.agents.writer import ModelWriter, answer_letter, move_key, normalize_question
from helpers.io import InputError
from helpers.puzzles.deduction import measure as deduction_measure
from helpers.puzzles.deduction.measure import verdict

from _tiny import ROOT, tiny_model_dir

TOPICS = topics_mod.read_topics(ROOT / "data" / "topics.json")
SEATING = ("Puzzles", "Seating Arrangements (Linear, Circular)")
FAMILY = ("Blood Relations and Family Tree", "Puzzles involving generations and family tree logic")


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(str(tiny_model_dir()))


def test_the_official_topics_are_kept_exactly():
    assert TOPICS[SEATING[0]] == [SEATING[1]] and TOPICS[FAMILY[0]] == [FAMILY[1]]
    assert topics_mod.generator_kinds(*SEATING) == ("seating_linear", "seating_circular", "seating_attributes",
                                                    "seating_mixed_facing", "seating_parallel_rows",
                                                    "seating_row_facing", "seating_square", "seating_rectangle")
    assert topics_mod.generator_kinds(*FAMILY) == ("family", "family_pointing", "family_coded", "family_gender")


def test_1000_questions_all_pass_the_filter_with_solver_proven_keys(tok):
    agent = QuestionAgent(tok, TOPICS, seed=7, kinds=puzzles.CLASSIC_KINDS)  # the others: the next test, ~10x slower
    questions, metas = agent.generate(1000)
    assert len(questions) == 1000 and all(m["source"] == "puzzle" for m in metas)
    kept, dropped = filters.filter_questions(questions, tok)
    assert len(kept) == 1000 and not dropped
    proof = question_mod.proof_check(questions, metas)
    assert proof["puzzles"] == proof["proven"] == proof["key_matches"] == 1000
    # keys drawn independently: each letter 250 +- 4 sigma (sigma = sqrt(1000 * 1/4 * 3/4) = 13.7)
    assert all(abs(n - 250) <= 55 for n in Counter(q["answer"] for q in questions).values())
    assert Counter(m["topic"] for m in metas) == {SEATING[0]: 500, FAMILY[0]: 500}
    assert len({q["question"] for q in questions}) == 1000
    for q, m in zip(questions, metas):
        assert q["topic"] == m["subtopic"] and set(q) <= {"topic", "question", "choices", "answer", "explanation"}
        assert [c[:3] for c in q["choices"]] == ["A) ", "B) ", "C) ", "D) "] and q["answer"] in "ABCD"
        assert len(q.get("explanation", "").split()) < 100
    assert max(m["seconds"] for m in metas) < agent.time_limit_s


def test_every_family_at_the_hardest_level_passes_the_filter_with_proven_keys(tok):
    agent = QuestionAgent(tok, TOPICS, seed=8, levels=(3,), candidates=2)
    questions, metas = agent.generate(60)
    kept, dropped = filters.filter_questions(questions, tok)
    assert len(kept) == 60 and not dropped and all(puzzles.verify(m["record"]) for m in metas)
    kinds = {m["record"]["puzzle"]["kind"] for m in metas}
    assert kinds <= set(puzzles.KINDS) and len(kinds) >= 6  # the hardest candidate wins: most families get asked
    assert max(m["seconds"] for m in metas) < agent.time_limit_s


def test_a_slow_family_falls_back_to_a_fast_one_of_the_topic_inside_the_budget(tok, monkeypatch):
    """A seating family whose clue search never ends on its own (a busy CPU, at worst): the search stops at its
    share of the time and a fast family of the same topic answers, counted."""
    from helpers.puzzles.seating import layouts as arrangements

    def endless(rng, names, *, kind, level, stats, give_up=None, form=None):
        while not give_up():
            time.sleep(0.005)
        raise TimeoutError("a clue search stopped by its deadline")
    monkeypatch.setattr(arrangements, "build", endless)
    agent = QuestionAgent(tok, TOPICS, seed=5, levels=(3,), candidates=4, time_limit_s=2.0,
                          kinds=arrangements.KINDS + ("seating_linear",))
    questions, metas = agent.generate(4, schedule=[SEATING] * 4)
    assert len(questions) == 4 and all(m["source"] == "puzzle" for m in metas)
    assert {m["record"]["puzzle"]["kind"] for m in metas} <= set(puzzles.FAST_KINDS)
    assert agent.stats["fallback:fast_family"] >= 1 and agent.stats["reject:puzzle_deadline"] >= 1
    # how long each took is a timing: make bench holds the Q-agent's p99 (bench_agents.GOALS), not a shared-core test


def test_letters_are_drawn_independently_balanced_in_expectation(tok):
    """No blocks to count on: over 4,000 keys each letter is within 4 sigma of 1,000 (sigma = 27.4), and the aligned
    blocks of four that hold A-D once are near 4!/4^4 = 9.4% (sigma 0.9 points over 1,000 blocks), not 100%."""
    agent = QuestionAgent(tok, TOPICS, seed=3)
    letters = [agent.next_letter() for _ in range(4000)]
    assert set(letters) == set("ABCD") and all(abs(n - 1000) <= 110 for n in Counter(letters).values())
    blocks = [sorted(letters[i:i + 4]) == list("ABCD") for i in range(0, 4000, 4)]
    assert abs(sum(blocks) / len(blocks) - 24 / 256) < 0.037
    again = QuestionAgent(tok, TOPICS, seed=3)
    assert [again.next_letter() for _ in range(40)] == letters[:40]  # deterministic per seed


# Long enough that no search runs out of time, even on a CPU busy with other tests: the seed alone decides.
UNHURRIED_S = 600.0


def test_same_seed_same_questions(tok):
    a, _ = QuestionAgent(tok, TOPICS, seed=11, time_limit_s=UNHURRIED_S).generate(12)
    b, _ = QuestionAgent(tok, TOPICS, seed=11, time_limit_s=UNHURRIED_S).generate(12)
    c, _ = QuestionAgent(tok, TOPICS, seed=12, time_limit_s=UNHURRIED_S).generate(12)
    assert a == b and a != c


def test_a_question_that_runs_out_of_time_changes_no_other_question(tok, monkeypatch):
    """On a busy CPU one question's search may stop early and draw less: the questions after it stay the same."""
    monkeypatch.setattr(question_mod, "FAST_GRACE_S", UNHURRIED_S)  # the squeezed one's fallback still gets its puzzle
    calm, _ = QuestionAgent(tok, TOPICS, seed=11, time_limit_s=UNHURRIED_S).generate(8)
    squeezed = QuestionAgent(tok, TOPICS, seed=11, time_limit_s=UNHURRIED_S)
    ask = squeezed.ask

    def ask_with_no_time_for_the_third(topic, subtopic, letter_=None):
        squeezed.budget_s = 0.0 if squeezed._count == 2 else UNHURRIED_S
        return ask(topic, subtopic, letter_)

    squeezed.ask = ask_with_no_time_for_the_third
    hurried, metas = squeezed.generate(8)
    assert squeezed.stats["fallback:fast_family"] >= 1 and len(hurried) == 8, squeezed.stats
    assert hurried[2] != calm[2]
    assert hurried[:2] + hurried[3:] == calm[:2] + calm[3:]


@pytest.mark.parametrize("prompt, pair, letter", [
    ("Generate an MCQ on topic: Puzzles/Seating Arrangements (Linear, Circular).\nEnsure that option C is only "
     "factually correct.", SEATING, "C"),
    ('Topic: Blood Relations and Family Tree/Puzzles involving generations and family tree logic ... "answer": "A"',
     FAMILY, "A"),
    ("Write a question about seating arrangements (linear, circular).", SEATING, None),
    ('EXAMPLE: {"answer": "A/B/C/D"} on Blood Relations and Family Tree', FAMILY, None),
])
def test_harness_prompts_give_the_topic_and_the_requested_letter(prompt, pair, letter):
    assert topics_mod.resolve_topic(prompt, TOPICS) == pair
    assert topics_mod.requested_letter(prompt) == letter


def test_respond_honours_the_prompt(tok):
    agent = QuestionAgent(tok, TOPICS, seed=1)
    for letter in "ABCDDCBA":
        q, meta = agent.respond(f"MCQ on topic: {FAMILY[0]}/{FAMILY[1]}. Ensure that option {letter} is only correct.")
        assert q["answer"] == letter and meta["subtopic"] == FAMILY[1] and puzzles.verify(meta["record"])
        assert meta["record"]["source"].startswith("puzzles/family")


def test_a_team_added_topic_without_generator_uses_the_bank_then_nothing_never_another_topics_puzzle(tok):
    topics = {**TOPICS, "Number Series": ["Find the next number"]}
    bank = [{"id": "b1", "question": "2, 4, 8, 16, ?", "choices": ["18", "24", "32", "30"], "answer": 2,
             "topic": "Number Series", "explanation": "Doubling."}]
    agent = QuestionAgent(tok, topics, seed=2, bank=bank)
    q, meta = agent.ask("Number Series", "Find the next number", "A")
    assert meta["source"] == "bank" and q["answer"] == "A" and q["choices"][0] == "A) 32"
    assert filters.check_question(q, tok).ok
    q2, meta2 = agent.ask("Number Series", "Find the next number", "B")  # the bank is used up: never repeated
    assert q2 is None and meta2["source"] == "none" and meta2["reason"] == "unserved_topic"  # no writer either
    assert agent.stats["source:none"] == 1 and meta2["record"] is None
    refusing = QuestionAgent(tok, topics, seed=2, bank=bank, unserved="refuse")
    q3, meta3 = refusing.ask("Number Series", "Find the next number", "C")
    assert q3 is None and meta3["source"] == "refused" and refusing.stats["source:refused"] == 1
    assert topics_mod.generator_kinds("Puzzles", "Circular seating only") == ("seating_circular", "seating_attributes",
                                                                             "seating_mixed_facing")
    assert topics_mod.generator_kinds("Puzzles", "Nationalities and drinks at a table") == ("seating_attributes",)


def test_a_bank_question_keeps_its_correct_text_at_every_letter_whatever_its_own_answer_index(tok):
    """Each bank record's own answer index 0-3, asked at each letter A-D: the letter names the bank's correct text,
    the wrong choices keep their order around it, and the question, explanation and topic survive."""
    topics = {**TOPICS, "Number Series": ["Find the next number"]}
    cases = [(index, letter) for index in range(4) for letter in "ABCD"]
    bank = []
    for n, (index, _) in enumerate(cases):
        start = n + 2
        wrong = [str(start * 3 + 1), str(start * 5), str(start * 4 + 1)]
        bank.append({"id": f"b{n}", "question": f"{start}, {2 * start}, {3 * start}, ?", "topic": "Number Series",
                     "choices": wrong[:index] + [str(start * 4)] + wrong[index:], "answer": index,
                     "explanation": f"Add {start} each time."})
    agent = QuestionAgent(tok, topics, seed=2, bank=bank)
    for rec, (index, letter) in zip(bank, cases):
        q, meta = agent.ask("Number Series", "Find the next number", letter)
        assert meta["source"] == "bank" and q["answer"] == letter and filters.check_question(q, tok).ok
        assert [c[:3] for c in q["choices"]] == ["A) ", "B) ", "C) ", "D) "]
        texts = [c[3:] for c in q["choices"]]
        next_number = str(int(rec["question"].split(",")[0]) * 4)  # the series' next term: the bank's correct text
        assert texts.pop("ABCD".index(letter)) == rec["choices"][index] == next_number, (rec, q)
        assert texts == [c for i, c in enumerate(rec["choices"]) if i != index], (rec, q)
        assert (q["question"], q["explanation"], q["topic"]) == (rec["question"], rec["explanation"],
                                                                 "Find the next number")
        back = filters.from_official_question(q, id=rec["id"], source="bank")
        assert back["choices"][back["answer"]] == rec["choices"][rec["answer"]]
    assert agent.stats["source:bank"] == len(cases)


def test_unknown_topic_in_a_prompt_is_counted(tok):
    """A topic the topics file lacks is counted; a family that writes it still asks it, and none is asked where no
    family does (never another topic's puzzle)."""
    agent = QuestionAgent(tok, TOPICS, seed=2)
    q, meta = agent.respond("Generate an MCQ on topic: Clocks and Calendars/Leap years.\nEnsure that option D is correct.")
    assert meta["subtopic"] == "Leap years" and meta["source"] == "none" and q is None  # no seating puzzle for it
    assert agent.stats["topic_not_in_file"] == 1
    q, meta = agent.respond("Generate an MCQ on topic: Syllogisms/All and some.\nEnsure that option D is correct.")
    assert meta["source"] == "puzzle" and meta["record"]["puzzle"]["kind"] == "syllogism" and q["answer"] == "D"
    assert agent.stats["topic_not_in_file"] == 2


def test_a_token_hungry_tokenizer_is_survived_by_shorter_puzzles(tok):
    class CharTokenizer:  # one token per character: most puzzles blow the 130-token budget
        def encode(self, text, add_special_tokens=True):
            return list(range(len(text)))
    agent = QuestionAgent(CharTokenizer(), TOPICS, seed=5, time_limit_s=2.0, margin=0.5)
    q, meta = agent.ask(*SEATING)
    assert meta["seconds"] < 2.0
    if q is not None:  # a 130-character puzzle is rare; if one was found it must pass
        assert filters.check_question(q, CharTokenizer()).ok
    assert agent.stats["reject:filter:question_too_long"] > 0


# ---------------------------------------------------------------- model-written questions
@pytest.mark.parametrize("obj, reason", [
    ("text", "not_an_object"), ({"choices": ["a", "b", "c", "d"], "answer": "A"}, "no_question"),
    ({"question": "Q?", "choices": ["a", "b", "c"], "answer": "A"}, "not_four_choices"),
    ({"question": "Q?", "choices": ["a", "b", "", "d"], "answer": "A"}, "empty_choice"),
    ({"question": "Q?", "choices": ["a", "A", "c", "d"], "answer": "A"}, "duplicate_choices"),
    ({"question": "Q?", "choices": ["a", "b", "c", "d"], "answer": "E"}, "bad_answer_key"),
    ({"question": "Q?", "choices": ["a", "b", "c", "d"], "answer": 2}, "bad_answer_key"),
])
def test_model_json_rejections(obj, reason):
    assert normalize_question(obj, "Seating") == (None, reason)


def test_model_json_is_normalised_to_the_official_shape():
    obj = {"question": " Who  sits\nleft? ", "choices": {"A": "a) Ana", "B": "Ben", "C": "Cal", "D": "Dev"},
           "answer": "b) Ben", "explanation": "word " * 150}
    q, reason = normalize_question(obj, "Seating")
    assert reason is None and q["question"] == "Who sits left?" and q["answer"] == "B"
    assert q["choices"] == ["A) Ana", "B) Ben", "C) Cal", "D) Dev"] and len(q["explanation"].split()) == 99
    assert answer_letter("Cal", ["Ana", "Ben", "Cal", "Dev"]) == "C"
    assert answer_letter("Option D", ["Ana", "Ben", "Cal", "Dev"]) == "D"
    # a key written as a choice's text that starts like a letter names that choice, not letter A
    assert answer_letter("A triangle", ["A) circle", "B) square", "C) A triangle", "D) line"]) == "C"
    assert answer_letter("a dog", ["cat", "a dog", "cow", "hen"]) == "B"
    assert answer_letter("A", ["cat", "a dog", "cow", "hen"]) == "A"
    assert move_key(q, "D") == {**q, "choices": ["A) Ana", "B) Dev", "C) Cal", "D) Ben"], "answer": "D"}


class FakeWriterModel:
    """The writer's sampling replaced by canned texts (the sampling itself is exercised on the tiny model below)."""

    def __init__(self, texts):
        self.texts = list(texts)

    def __call__(self, prompt, seconds):
        assert seconds > 0
        return [self.texts.pop(0)]


class AgreeingChecker:
    def __init__(self, letter=None):
        self.letter = letter

    def answer(self, questions):
        return ([{"answer": self.letter or q["answer"]} for q in questions],
                [{"source": "model", "reason": None} for _ in questions])


def _writer(tok, texts, checker, max_failures=5) -> ModelWriter:
    w = ModelWriter(None, tok, member="base", checker=checker, max_failures=max_failures)
    w._sample = FakeWriterModel(texts)
    return w


WRITTEN = puzzles.make_puzzle("family", 1, 0, random.Random(5), {}, id="written")  # key at A; short enough


def written_json(question: str = WRITTEN["question"], answer: str = "A") -> str:
    """A model's reply in the generators' words (what a trained writer produces)."""
    return json.dumps({"topic": "x", "question": question, "answer": answer, "explanation": "Given.",
                       "choices": [f"{'ABCD'[i]}) {c}" for i, c in enumerate(WRITTEN["choices"])]})


GOOD_JSON = written_json()


def test_a_proven_model_question_is_kept_with_its_key_moved_to_the_scheduled_letter(tok):
    w = _writer(tok, ["Here you go:\n```json\n" + GOOD_JSON + "\n```"], AgreeingChecker())
    agent = QuestionAgent(tok, TOPICS, seed=1, writer=w, model_share=1.0)
    q, meta = agent.ask(*FAMILY, "C")
    assert meta["source"] == "model" and q["answer"] == "C" and q["choices"][2] == "C) " + WRITTEN["choices"][0]
    assert q["topic"] == FAMILY[1] and filters.check_question(q, tok).ok and w.stats["accepted"] == 1


@pytest.mark.parametrize("text, checker, reason", [
    ("I cannot write JSON", AgreeingChecker(), "no_json"),
    (written_json(answer="B"), AgreeingChecker(), "key_not_proven"),  # the solver proves A: the model's B is wrong
    (written_json("Ana sits left of Ben. Who is on the left?"), AgreeingChecker(), "unproven:unknown_text"),
    (written_json(WRITTEN["question"].replace(" is ", " was ", 1)), AgreeingChecker(), "unproven:unknown_text"),
    (json.dumps({"question": "w " * 200, "choices": ["a1", "b1", "c1", "d1"], "answer": "A"}), AgreeingChecker(),
     "filter:question_too_long"),
])
def test_rejected_model_questions_fall_back_to_puzzles_and_are_counted(tok, text, checker, reason):
    w = _writer(tok, [text], checker)
    agent = QuestionAgent(tok, TOPICS, seed=1, writer=w, model_share=1.0)
    q, meta = agent.ask(*FAMILY, "B")
    assert meta["source"] == "puzzle" and meta["reason"] == f"model:{reason}" and q["answer"] == "B"
    assert w.stats[reason] == 1 and agent.stats[f"model_rejected:{reason}"] == 1


def test_on_a_topic_without_generators_the_checker_alone_vouches_for_a_model_question(tok):
    free = written_json("Which war ended in 1648? It was fought mostly in central Europe.")
    topics = {**TOPICS, "History": ["Early modern wars"]}
    w = _writer(tok, [free, free, free, free], AgreeingChecker())
    agent = QuestionAgent(tok, topics, seed=1, writer=w, model_share=1.0)
    q, meta = agent.ask("History", "Early modern wars", "B")
    assert meta["source"] == "model_unproven" and q["answer"] == "B"  # no generator reads it: the checker alone
    q, meta = agent.ask(*FAMILY, "B")
    assert meta["source"] == "puzzle" and meta["reason"] == "model:unproven:unknown_text"
    w.checker = AgreeingChecker(letter="D")
    q, meta = agent.ask("History", "Early modern wars", "B")
    assert meta["reason"] == "model:key_disagrees" and w.stats["key_disagrees"] == 1 and meta["source"] == "none"
    w.checker = AgreeingChecker()
    q, meta = QuestionAgent(tok, topics, seed=1, writer=w, model_share=0.0).ask("History", "Early modern wars", "C")
    assert meta["source"] == "model_unproven"  # at share 0 the writer still takes the topics no family writes


def test_a_proven_question_is_kept_when_the_a_agent_gets_it_wrong_and_explained_by_the_solver(tok):
    w = _writer(tok, [GOOD_JSON], AgreeingChecker(letter="D"))  # the kit's A-agent would answer D: a hard question
    q, meta = QuestionAgent(tok, TOPICS, seed=1, writer=w, model_share=1.0).ask(*FAMILY, "A")
    assert meta["source"] == "model" and q["answer"] == "A"
    assert q["explanation"] == WRITTEN["explanation"] != "Given."  # the solver's deduction replaces the model's


def test_an_asked_seating_puzzle_is_explained_by_its_checked_deduction(tok, monkeypatch):
    agent = QuestionAgent(tok, TOPICS, seed=2, kinds=puzzles.CLASSIC_KINDS)
    questions, metas = agent.generate(6, schedule=[SEATING] * 6)
    for q, m in zip(questions, metas):
        rec = m["record"]
        outcome, text = verdict(rec["puzzle"], rec["choices"][rec["answer"]])
        assert outcome == "ok" and q["explanation"] == rec["explanation"] == text and "seatings" not in text
    assert agent.stats["explanation:deduction"] == 6
    monkeypatch.setattr(deduction_measure, "WRITE_RESERVE_S", 1e9)  # no time left to write one: the count stays
    q, meta = agent.ask(*SEATING)
    assert "seatings" in q["explanation"] and agent.stats["explanation:count:no_time"] == 1


def test_a_deduction_past_its_allowance_leaves_the_count_and_is_counted(tok, monkeypatch):
    """The Q-agent's speed goal holds because a deduction still being written past timing.EXPLAIN_WORK gives way to the
    solver's count, which is as valid and counted by why."""
    monkeypatch.setattr(timing, "EXPLAIN_WORK", 0)
    agent = QuestionAgent(tok, TOPICS, seed=2, kinds=puzzles.CLASSIC_KINDS)
    questions, _ = agent.generate(3, schedule=[SEATING] * 3)
    assert len(questions) == 3 and all("seatings" in q["explanation"] for q in questions)
    assert agent.stats["explanation:count:no_deduction:work_budget"] == 3


def test_a_proven_model_seating_question_gets_the_checked_deduction(tok):
    rec = puzzles.make_puzzle("seating_linear", 1, 0, random.Random(8), {}, id="seat")
    reply = json.dumps({"topic": "x", "question": rec["question"], "answer": "A", "explanation": "Given.",
                        "choices": [f"{'ABCD'[i]}) {c}" for i, c in enumerate(rec["choices"])]})
    w = _writer(tok, [reply], AgreeingChecker())
    q, meta = QuestionAgent(tok, TOPICS, seed=1, writer=w, model_share=1.0).ask(*SEATING, "B")
    assert meta["source"] == "model" and q["answer"] == "B"
    assert q["explanation"] == verdict(rec["puzzle"], rec["choices"][0])[1] and w.explained == {"deduction": 1}


def test_a_model_which_question_explained_after_its_key_moved_lists_the_other_options_as_asked(tok):
    rec = puzzles.make_puzzle("family_coded", 2, 0, random.Random(3), {}, id="which", form="expression")
    reply = json.dumps({"topic": "x", "question": rec["question"], "answer": "A", "explanation": "Given.",
                        "choices": [f"{'ABCD'[i]}) {c}" for i, c in enumerate(rec["choices"])]})
    w = _writer(tok, [reply], AgreeingChecker())
    q, meta = QuestionAgent(tok, TOPICS, seed=1, writer=w, model_share=1.0).ask(*FAMILY, "C")
    choices = [c[3:] for c in q["choices"]]
    assert meta["source"] == "model" and q["answer"] == "C" and choices[2] == rec["choices"][0]
    moved = puzzles.in_choice_order(rec["puzzle"], choices)  # the key swapped with C: the others' order changed
    assert q["explanation"] == verdict(moved, choices[2])[1] != rec["explanation"]


def test_a_failing_writer_switches_itself_off(tok):
    w = _writer(tok, ["nope"] * 10, AgreeingChecker(), max_failures=3)
    agent = QuestionAgent(tok, TOPICS, seed=1, writer=w, model_share=1.0)
    questions, metas = agent.generate(8)
    assert len(questions) == 8 and w.stats["attempts"] == 3 and not w.enabled
    assert w.stats["writer_switched_off"] == 1 and all(m["source"] == "puzzle" for m in metas)


def test_the_tiny_model_really_samples_within_the_budget(tok):
    import torch
    from transformers import AutoModelForCausalLM
    from helpers.agents.answer import AnswerAgent
    from helpers.agents.predictor import LetterPredictor
    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir())).eval()
    checker = AnswerAgent(LetterPredictor(model, tok, ["base"]), tok)
    w = ModelWriter(model, tok, member="base", checker=checker, gen={"max_new_tokens": 48})
    agent = QuestionAgent(tok, TOPICS, seed=1, writer=w, model_share=1.0, time_limit_s=4.0, margin=0.5)
    q, meta = agent.ask(*FAMILY, "A")
    assert w.stats["attempts"] == 1 and meta["seconds"] < 2.0
    assert filters.check_question(q, tok).ok and q["answer"] == "A"  # kept if it survived, else a puzzle
    assert meta["source"] == "model" or sum(v for k, v in w.stats.items() if k != "attempts") == 1


# ---------------------------------------------------------------- topics file and the command line
@pytest.mark.parametrize("content, problem", [
    ("[]", "expected a non-empty mapping"), ('{"Puzzles": "Seating"}', "non-empty list"),
    ('{"Puzzles": []}', "non-empty list"), ("nope", "not valid JSON"),
])
def test_bad_topics_files_name_the_file(tmp_path, content, problem):
    path = tmp_path / "topics.json"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        topics_mod.read_topics(path)
    assert str(path) in str(err.value) and problem in str(err.value)


def test_cli_writes_questions_filtered_questions_and_report(tmp_path, monkeypatch, tok, capsys):
    from helpers.agents import build
    monkeypatch.setattr(build, "load_tokenizer", lambda cfg: tok)
    out = tmp_path / "outputs" / "questions.json"
    code = cli.question_main(["--output_file", str(out), "--num_questions", "20", "--batch_size", "6",
                              "--model_share", "0"])
    assert code == 0
    raw = json.loads(out.read_text())
    kept = json.loads((tmp_path / "outputs" / "filtered_questions.json").read_text())
    report = json.loads((tmp_path / "outputs" / "questions.report.json").read_text())
    assert len(raw) == len(kept) == 20 and report["format_correct"] == 20 and not report["disqualified"]
    # keys are drawn independently (no blocks): the report counts what was written
    assert report["letters"] == dict(sorted(Counter(q["answer"] for q in kept).items())) and len(report["items"]) == 20
    assert report["proof"]["proven"] == 20 and report["latency"]["p99_s"] > 0  # its bound: make bench's p99 goal
    assert "20 questions" in capsys.readouterr().out


def test_cli_rejects_a_bad_topics_file(tmp_path, monkeypatch, tok, capsys):
    from helpers.agents import build
    monkeypatch.setattr(build, "load_tokenizer", lambda cfg: tok)
    bad = tmp_path / "topics.json"
    bad.write_text("[1, 2]")
    assert cli.question_main(["--output_file", str(tmp_path / "q.json"), "--topics_file", str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err


def test_the_q_agent_asks_the_hardest_of_its_candidates(tok, monkeypatch):
    """Of the proven candidates it compares, the one with the highest measured difficulty is asked."""
    agent = QuestionAgent(tok, {"Puzzles": [SEATING[1]]}, seed=3, candidates=3)
    scores = iter([2.0, 7.5, 5.0])

    def fake_one(kinds, letter_, label, deadline, shape):
        rec = {"id": f"x{len(seen)}", "puzzle": {"work": {"score": next(scores)}}, "question": str(len(seen)),
               "choices": ["a1", "b2", "c3", "d4"], "answer": 0}
        seen.append(rec)
        return {"question": rec["question"]}, rec
    seen: list = []
    monkeypatch.setattr(agent, "_one_puzzle", fake_one)
    agent._start_question()  # seeds the question's own search stream, as ask() does
    _, rec, _ = agent._puzzle(puzzles.KINDS, "A", SEATING[1], timing.Deadline(5.0))
    assert rec["puzzle"]["work"]["score"] == 7.5 and len(seen) == 3


def record_puzzle_calls(monkeypatch) -> list[tuple]:
    """(kind, level, form) of every puzzle the agent asks the generators for, in order (the list fills as it runs)."""
    real, calls = puzzles.make_puzzle, []

    def spy(kind, level, target, rng, stats, id, give_up=None, form=None):
        calls.append((kind, level, form))
        return real(kind, level, target, rng, stats, id, give_up=give_up, form=form)
    monkeypatch.setattr(question_mod.puzzles, "make_puzzle", spy)
    return calls


def test_every_candidate_of_one_question_asks_one_form_and_the_forms_spread(tok, monkeypatch):
    """The hardest-of-4 pick compares candidates of one form (drawn once per question by its share), so the form
    that measures hardest (a family's relation question) is not asked every time. (A tokenizer that finds level 3
    too long sends the agent to level 1, whose shares differ: one form per level.)"""
    agent = QuestionAgent(tok, {FAMILY[0]: [FAMILY[1]]}, seed=4, levels=(3,), kinds=("family",), candidates=4)
    calls = record_puzzle_calls(monkeypatch)
    asked = Counter()
    for _ in range(40):
        calls.clear()
        agent._start_question()  # seeds the question's own search stream, as ask() does
        _, rec, _ = agent._puzzle(("family",), "A", FAMILY[1], timing.Deadline(5.0))
        assert len(calls) >= 4 and all(len({f for _, lv, f in calls if lv == level}) <= 1 for level in (1, 3)), calls
        form = {lv: f for _, lv, f in calls}[rec["puzzle"]["level"]]
        asked[form] += 1
        assert rec["puzzle"]["question"][0] == form
    assert asked["who"] >= 1 and asked["relation"] >= 25, asked  # shares 0.15 / 0.85: 6 / 34 expected


def test_a_family_and_level_too_long_for_the_tokenizer_is_not_asked_again(tok):
    """Once most of FIT_BUILDS builds of a family and level were too long for this tokenizer, a question drawn there
    starts at the highest level below that fits, or with a family of the topic that fits; each move is counted."""
    kinds = ("seating_linear", "seating_circular")
    agent = QuestionAgent(tok, {"Puzzles": [SEATING[1]]}, seed=3, levels=(1, 2, 3), kinds=kinds)
    drawn = {"kind": "seating_linear", "level": 3, "form_q": 0.5}
    assert agent._fitting(drawn, kinds) == drawn  # nothing seen yet
    for too_long in (True, True, True, False):
        agent._count_fit("seating_linear", 3, too_long)
    assert agent._fitting(drawn, kinds) == {**drawn, "level": 2} and agent.stats["level_drop:remembered_to_2"] == 1
    for level in (1, 2):
        for _ in range(question_mod.FIT_BUILDS):
            agent._count_fit("seating_linear", level, True)
    assert agent._fitting(drawn, kinds) == {**drawn, "kind": "seating_circular", "level": 3}
    assert agent.stats["kind_skip:too_long"] == 1
    for level in (1, 2, 3):
        for _ in range(question_mod.FIT_BUILDS):
            agent._count_fit("seating_circular", level, True)
    assert agent._fitting(drawn, kinds) == drawn  # nothing fits: the question's own level drop decides


def test_a_family_too_long_at_its_shortest_gives_way_at_once(tok):
    """A question whose family is too long even at level 1 for this tokenizer stops searching it (counted), so a fast
    family of the topic can stand in with the time left, instead of building until its search time is gone; with no
    fast family to stand in, it keeps searching."""
    class WordyTokenizer:  # four tokens a character: no seating puzzle fits
        def encode(self, text, add_special_tokens=True):
            return list(range(4 * len(text)))
    agent = QuestionAgent(WordyTokenizer(), TOPICS, seed=5, levels=(1,), kinds=("seating_square", "family"))
    for _ in range(question_mod.FIT_BUILDS):
        agent._count_fit("seating_square", 1, True)
    shape = {"kind": "seating_square", "level": 1, "form_q": 0.5, "give_way": True}
    agent._start_question()
    t0 = time.perf_counter()
    assert agent._one_puzzle(["seating_square"], "A", SEATING[1], timing.Deadline(60.0), shape) == (None, None)
    # it gave way after three builds (well under a second), long before the 60 s it had: a bound no load reaches
    assert agent.stats["reject:family_too_long"] == 1 and time.perf_counter() - t0 < 30
    t0 = time.perf_counter()
    assert agent._one_puzzle(["seating_square"], "A", SEATING[1], timing.Deadline(0.5),
                             {**shape, "give_way": False}) == (None, None)
    assert agent.stats["reject:family_too_long"] == 1 and time.perf_counter() - t0 >= 0.5  # searched to its deadline


def test_a_search_over_several_families_goes_on_without_the_one_too_long(tok):
    """The fast-family fallback searches several families: one too long for the tokenizer even at level 1 is left
    out and the search goes on with the others, rather than ending the question."""
    class SeatingHungryTokenizer:  # four tokens a character in a seating text, a quarter in any other
        def encode(self, text, add_special_tokens=True):
            return list(range(4 * len(text) if " sit" in text else len(text) // 4))
    agent = QuestionAgent(SeatingHungryTokenizer(), TOPICS, seed=5, levels=(1,), kinds=("seating_linear", "family"))
    for _ in range(question_mod.FIT_BUILDS):
        agent._count_fit("seating_linear", 1, True)
    agent._start_question()
    question, rec = agent._one_puzzle(["seating_linear", "family"], "A", FAMILY[1], timing.Deadline(5.0),
                                      {"form_q": 0.5})
    assert question is not None and rec["puzzle"]["kind"] == "family", agent.stats


def test_every_candidate_of_one_question_is_of_one_kind_and_level_and_the_shapes_spread(tok, monkeypatch):
    """The hardest-of-4 pick compares candidates of one family and one level, drawn once per question, so the
    hardest family and level 3 are not asked every time: each question's kind and level are the agent's draws."""
    kinds = ("family", "family_coded", "seating_linear")
    agent = QuestionAgent(tok, {"Puzzles": [SEATING[1]]}, seed=6, levels=(1, 2, 3), kinds=kinds, candidates=4)
    calls = record_puzzle_calls(monkeypatch)
    asked = Counter()
    for _ in range(24):
        calls.clear()
        agent._start_question()  # seeds the question's own search stream, as ask() does
        _, rec, _ = agent._puzzle(kinds, "A", SEATING[1], timing.Deadline(5.0))
        assert len(calls) >= 4 and len({kind for kind, _, _ in calls}) == 1 and len(set(calls)) <= 2, calls
        asked[rec["puzzle"]["kind"], rec["puzzle"]["level"]] += 1
    assert len({kind for kind, _ in asked}) == 3 and len({level for _, level in asked}) == 3, asked


def test_more_candidates_ask_harder_questions_and_every_one_is_proven(tok):
    means = {}
    for n in (1, 6):
        agent = QuestionAgent(tok, {"Puzzles": [SEATING[1]], FAMILY[0]: [FAMILY[1]]}, seed=11,
                                           levels=(1, 2, 3), candidates=n, time_limit_s=UNHURRIED_S)
        qs, metas = agent.generate(16)
        assert len(qs) == 16 and all(puzzles.verify(m["record"]) for m in metas)
        means[n] = sum(m["record"]["puzzle"]["work"]["score"] for m in metas) / len(metas)
    assert means[6] > means[1] + 0.5, means


def test_the_q_agent_refuses_an_unknown_family(tok):
    with pytest.raises(ValueError, match="unknown puzzle kinds"):
        QuestionAgent(tok, {"Puzzles": [SEATING[1]]}, kinds=("sudoku",))


def test_the_question_report_gives_the_measured_difficulty_mix(tok, tmp_path):
    agent = QuestionAgent(tok, {"Puzzles": [SEATING[1]], FAMILY[0]: [FAMILY[1]]}, seed=4, levels=(2, 3), candidates=2)
    qs, metas = agent.generate(8)
    report = question_mod.write_question_files(agent, qs, metas, tmp_path / "q.json", requested=8)
    mix = report["difficulty"]
    scores = [m["record"]["puzzle"]["work"]["score"] for m in metas]
    # the report sums family by family: the same mean to rounding (8.675 may round either way)
    assert mix["all"]["n"] == 8 and mix["all"]["mean"] == pytest.approx(sum(scores) / 8, abs=0.0051)
    # a level under the agent's own only when questions came out too long for this tokenizer, and then counted
    below = {int(k.split("_")[-1]) for k in agent.stats if k.startswith("level_drop:to_")} - {2, 3}
    assert sum(v["n"] for v in mix["by_family"].values()) == 8 and set(mix["levels"]) <= {2, 3} | below
    assert below <= {1} and (not below or agent.stats["reject:filter:question_too_long"] >= 6), agent.stats


def test_an_editions_topics_no_family_writes_never_get_another_topics_puzzle(tok, tmp_path):
    """February 2026's four topics, every one a family's, and two topics of a final no family writes: those get
    nothing rather than another topic's puzzle filed under them (10 of 20 once did), and the report counts each one
    and judges the share by the edition's pass share."""
    from helpers import edition
    feb = edition.load("2026-02-aaipl-iitd")
    topics = {**feb.topics, "Clocks and Calendars": ["Day of the week"], "Cubes and Dice": ["Opposite faces"]}
    agent = QuestionAgent(tok, topics, seed=4, edition=feb, kinds=puzzles.CLASSIC_KINDS + families.KINDS)
    questions, metas = agent.generate(24)
    unserved = {t for t, _ in topics_mod.unserved_pairs(topics)}
    assert unserved == {"Clocks and Calendars", "Cubes and Dice"} and not topics_mod.unserved_pairs(feb.topics)
    assert sum(m["topic"] in unserved for m in metas) == 8 and len(questions) == 16
    assert all(m["source"] == "none" and m["record"] is None and m["reason"] == "unserved_topic"
               for m in metas if m["topic"] in unserved)
    assert all(m["source"] == "puzzle" and puzzles.TOPICS[m["record"]["puzzle"]["kind"]] == (m["topic"], m["subtopic"])
               for m in metas if m["topic"] not in unserved)
    report = question_mod.write_question_files(agent, questions, metas, tmp_path / "q.json", requested=24)
    assert report["sources"]["none"] == 8 and report["edition"] == feb.name and report["pass_share"] == 0.5
    assert report["disqualified"] is False
    tail = ": no puzzle family of the kit writes it; none is asked"
    assert report["unserved"] == [f"topic Clocks and Calendars/Day of the week{tail}",
                                  f"topic Cubes and Dice/Opposite faces{tail}"]
    assert agent.time_limit_s == 13.0