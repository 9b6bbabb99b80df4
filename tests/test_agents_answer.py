"""The A-agent: always a valid answer object (counted fallbacks), letters from the predictor, the time budget,
the harness prompt text, the command line and its bad files."""

from __future__ import annotations

import json
import time

import pytest

from helpers import filters
from helpers.agents import answer as answer_mod
from helpers.agents.answer import AnswerAgent, fallback_letter
from helpers.agents.harness import cli
from helpers.agents.inputs import parse_prompt_text, parse_question, split_lettered
from helpers.io import InputError


class WordTokenizer:
    """One token per whitespace-separated word (the rules' counts become exact and readable)."""

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        assert add_special_tokens is False
        return list(range(len(text.split())))

    def decode(self, ids: list[int]) -> str:
        return " ".join("w" for _ in ids)


class StubPredictor:
    """Letter probabilities from a function of the item, optional delay per item, optional failure."""

    def __init__(self, fn=None, delay: float = 0.0, error: Exception | None = None):
        self.fn = fn or (lambda item: [0.1] * (len(item["choices"]) - 1) + [0.9])  # the last choice wins
        self.delay, self.error, self.calls = delay, error, []

    def predict(self, items):
        self.calls.append(len(items))
        if self.error:
            raise self.error
        time.sleep(self.delay * len(items))
        return [self.fn(item) for item in items]

    def describe(self) -> str:
        return "stub"


TOK = WordTokenizer()
GOOD = {"topic": "Seating", "question": "Ana, Ben and Cal sit in a row. Who is in the middle?",
        "choices": ["A) Ana", "B) Ben", "C) Cal", "D) Dev"], "answer": "B"}
MALFORMED = [
    None, 42, 3.5, [], ["A) x"], "", "not json at all", b"\xff\xfe bytes",
    {}, {"choices": ["A) a", "B) b", "C) c", "D) d"]}, {"question": "No choices here?"},
    {"question": None, "choices": ["a", "b"]}, {"question": "", "choices": ["a", "b", "c", "d"]},
    {"question": "   ", "choices": ["a", "b", "c", "d"]}, {"question": "One choice?", "choices": ["only"]},
    {"question": "Choices not a list", "choices": 7}, {"question": "Three?", "choices": ["x", "y", "z"]},
    {"question": "Five?", "choices": ["A) v", "B) w", "C) x", "D) y", "E) z"]},
    {"question": "Eleven?", "choices": [f"c{i}" for i in range(11)]},
    {"question": "Unlettered?", "choices": ["one", "two", "three", "four"]},
    {"question": "Dict choices?", "choices": {"A": "one", "B": "two", "C": "three", "D": "four"}},
    {"question": "Text choices?", "choices": "A) one B) two C) three D) four"},
    {"question": "Non-text choices?", "choices": [1, None, 2.5, {"x": 1}]},
    {"question": 12345, "choices": ["a", "b", "c", "d"]},
    {"question": "huge " * 100000, "choices": ["long " * 5000, "b", "c", "d"]},
    '{"question": "Broken JSON", "choices": ["A) a", "B) b"',
    "{'question': 'Python dict', 'choices': ['A) a', 'B) b', 'C) c', 'D) d']}",
    "Question: Who sits at the left end?\nChoices: A) Ana B) Ben C) Cal D) Dev\n\nRESPONSE FORMAT: {\"answer\": \"A\"}",
]


def agent(**kw) -> AnswerAgent:
    return AnswerAgent(kw.pop("predictor", StubPredictor()), TOK, **kw)


def test_a_good_question_gets_the_predictors_letter_and_a_short_reasoning():
    answers, meta = agent().answer([GOOD])
    assert answers[0]["answer"] == "D" and meta[0]["source"] == "model"
    assert "stub" in answers[0]["reasoning"] and "Dev" in answers[0]["reasoning"]
    assert len(answers[0]["reasoning"].split()) <= 100
    assert filters.check_answer(answers[0], TOK).ok


@pytest.mark.parametrize("bad", MALFORMED, ids=[f"bad{i}" for i in range(len(MALFORMED))])
def test_every_malformed_input_gets_a_valid_upper_case_answer(bad):
    a = agent()
    answers, meta = a.answer([bad])
    assert len(answers) == 1
    ans = answers[0]
    assert isinstance(ans, dict) and ans["answer"] in ("A", "B", "C", "D")
    assert filters.check_answer(ans, TOK).ok
    assert len(ans["reasoning"].split()) <= 100
    assert json.loads(json.dumps(ans)) == ans
    if meta[0]["source"] == "fallback":
        assert a.stats[f"fallback:{meta[0]['reason']}"] == 1  # counted by reason


def test_malformed_batch_counts_each_reason_and_keeps_positions():
    a = agent()
    answers, meta = a.answer(MALFORMED + [GOOD])
    assert len(answers) == len(MALFORMED) + 1 and answers[-1]["answer"] == "D"
    fallbacks = sum(v for k, v in a.stats.items() if k.startswith("fallback:"))
    assert fallbacks == sum(m["source"] == "fallback" for m in meta) > 0
    assert a.stats["fallback:missing_question"] >= 2 and a.stats["fallback:too_few_choices"] >= 1


def test_five_choices_answer_only_among_a_to_d():
    # the predictor likes E best; the rules only accept A-D, so the best of A-D (D) is answered
    five = {"question": "Five?", "choices": ["v", "w", "x", "y", "z"]}
    pred = StubPredictor(lambda item: [0.05, 0.1, 0.15, 0.2, 0.5])
    answers, meta = agent(predictor=pred).answer([five])
    assert answers[0]["answer"] == "D" and "only A-D" in answers[0]["reasoning"] and "5_choices" in meta[0]["notes"]


def test_three_choices_are_scored_as_three():
    pred = StubPredictor(lambda item: [0.2, 0.7, 0.1][:len(item["choices"])])
    answers, _ = agent(predictor=pred).answer([{"question": "Three?", "choices": ["x", "y", "z"]}])
    assert answers[0]["answer"] == "B"


@pytest.mark.parametrize("scores, reason", [
    (lambda item: [0.5, 0.5], "bad_scores"),                     # wrong length
    (lambda item: [float("nan")] * 4, "bad_scores"),              # not finite
    (lambda item: "ABCD", "bad_scores"),                          # not numbers
])
def test_misbehaving_model_scores_fall_back(scores, reason):
    a = agent(predictor=StubPredictor(scores))
    answers, meta = a.answer([GOOD])
    assert answers[0]["answer"] in "ABCD" and meta[0]["reason"] == reason and a.stats[f"fallback:{reason}"] == 1


def test_a_model_exception_is_a_counted_fallback_not_a_crash():
    a = agent(predictor=StubPredictor(error=RuntimeError("CUDA out of memory")))
    answers, meta = a.answer([GOOD, GOOD])
    assert [m["reason"] for m in meta] == ["model_error:RuntimeError"] * 2
    assert all(x["answer"] in "ABCD" for x in answers)


class Clock:
    """A fake perf_counter the stub model advances: the budget's arithmetic is tested, not this CPU's speed."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_time_budget_stops_scoring_and_each_late_question_gets_its_own_fallback(monkeypatch):
    # budget 0.05 s an answer (limit 0.1 s x margin 0.5), 0.40 s for a call of 8; the model takes 0.08 s an item:
    # after the first one-item chunk (0.08 s) a chunk of 4 would end at 0.40 s, past the 0.40 s left, so the other
    # seven fall back, each to its own question's fixed letter (a hash of its text), never one letter for all.
    clock = Clock()
    monkeypatch.setattr(time, "perf_counter", clock)

    class Slow(StubPredictor):
        def predict(self, items):
            clock.now += 0.08 * len(items)
            return super().predict(items)

    pred = Slow()
    questions = [dict(GOOD, question=f"Question {i}: who sits in the middle of row {i}?") for i in range(8)]
    answers, meta = agent(predictor=pred, time_limit_s=0.1, margin=0.5, chunk_size=4).answer(questions)
    assert pred.calls == [1] and clock.now - 1000.0 <= 8 * 0.05  # one chunk scored, inside the call's budget
    late = [i for i, m in enumerate(meta) if m["reason"] == "time_budget"]
    assert late == list(range(1, 8))
    assert [answers[i]["answer"] for i in late] == [fallback_letter(questions[i]["question"], 4) for i in late]
    assert len({answers[i]["answer"] for i in late}) > 1  # these questions' own letters differ


def test_a_fast_model_answers_everything_in_chunks():
    pred = StubPredictor()
    answers, meta = agent(predictor=pred, chunk_size=3).answer([GOOD] * 7)
    assert pred.calls == [1, 3, 3] and all(m["source"] == "model" for m in meta)
    assert all(m["seconds"] >= 0 for m in meta)


def test_a_tokenizer_failure_on_one_input_is_a_counted_fallback():
    class Fussy(WordTokenizer):
        def encode(self, text, add_special_tokens=True):
            if "\x00" in text:
                raise UnicodeError("NUL")
            return super().encode(text, add_special_tokens)
    a = AnswerAgent(StubPredictor(), Fussy())
    bad = {"question": "x\x00" * 400, "choices": ["a", "b", "c", "d"]}  # long enough to be measured in tokens
    answers, meta = a.answer([bad, GOOD])
    assert meta[0]["reason"] == "input_error:UnicodeError" and answers[0]["answer"] in "ABCD"
    assert meta[1]["source"] == "model" and answers[1]["answer"] == "D"


def test_fallback_letter_is_deterministic_and_spread():
    letters = {fallback_letter(f"question {i}") for i in range(200)}
    assert letters == set("ABCD")
    assert fallback_letter("same") == fallback_letter("same")
    assert all(fallback_letter(f"q{i}", 2) in "AB" for i in range(50))


def test_harness_prompt_text_is_parsed():
    text = ("You are an expert.\n\nQuestion: Ana, Ben and Cal sit in a row. Who is at the left end?\n"
            "Choices: A) Ana B) Ben C) Cal D) Dev\n\nRESPONSE FORMAT: Strictly generate a valid JSON object:\n"
            '{\n  "answer": "One of the letters A, B, C, D",\n  "reasoning": "..."\n}')
    assert parse_prompt_text(text) == ("Ana, Ben and Cal sit in a row. Who is at the left end?",
                                       ["Ana", "Ben", "Cal", "Dev"])
    parsed = parse_question(text)
    assert parsed.ok and parsed.choices == ["Ana", "Ben", "Cal", "Dev"] and "prompt_text" in parsed.notes
    multi = "Question: Who?\nChoices:\nA) Ana's brother\nB) Ben\nC) Cal\nD) Dev\n"
    assert parse_prompt_text(multi) == ("Who?", ["Ana's brother", "Ben", "Cal", "Dev"])


def test_lettered_split_needs_the_letters_in_order():
    # a letter only opens a choice after the previous letter's choice: "B) C B) Ben" keeps its inner "B)"
    assert split_lettered("A) left of B) C B) Ben C) Cal D) Dev") == ["left of", "C B) Ben", "Cal", "Dev"]
    assert split_lettered("A) one B) two C) three D) four") == ["one", "two", "three", "four"]
    assert split_lettered("(A) one (B) two") == ["one", "two"]
    assert split_lettered("no letters") == []


def test_answer_texts_are_json():
    texts = agent().answer_texts([GOOD, None])
    assert [json.loads(t)["answer"] for t in texts][0] == "D" and len(texts) == 2


def test_tiny_model_answers_valid_letters(tiny_agent):
    answers, meta = tiny_agent.answer([GOOD] + MALFORMED[-6:])
    assert all(filters.check_answer(a, tiny_agent.tokenizer).ok and a["answer"] in "ABCD" for a in answers)
    assert meta[0]["source"] == "model" and abs(sum(meta[0]["probs"]) - 1) < 1e-3
    assert "question_tokens_clipped" in meta[-4]["notes"]  # the 100,000-word question was cut by tokens


@pytest.fixture(scope="module")
def tiny_agent():
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from _tiny import tiny_model_dir
    from helpers.agents.predictor import LetterPredictor
    torch.set_num_threads(1)
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir()))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir())).eval()
    return AnswerAgent(LetterPredictor(model, tok, ["base"]), tok)


# ---------------------------------------------------------------- files and the command line
@pytest.mark.parametrize("content, problem", [
    ("not json", "not valid JSON"), ('{"question": "x"}', "expected a JSON list"), ('"text"', "expected a JSON list"),
])
def test_question_files_that_are_not_a_json_list_name_the_file(tmp_path, content, problem):
    path = tmp_path / "filtered_questions.json"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        answer_mod.read_question_file(path)
    assert str(path) in str(err.value) and problem in str(err.value)
    with pytest.raises(InputError, match="not found"):
        answer_mod.read_question_file(tmp_path / "missing.json")


def test_cli_bad_file_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "q.json"
    path.write_text("{}")
    assert cli.answer_main(["--input_file", str(path), "--output_file", str(tmp_path / "answers.json")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_writes_answers_filtered_answers_and_report(tmp_path, monkeypatch, capsys):
    from helpers.agents import build
    monkeypatch.setattr(build, "kit_answer_agent", lambda cfg: (agent(), {"members": ["stub"], "source": "test"}))
    qfile = tmp_path / "filtered_questions.json"
    qfile.write_text(json.dumps([GOOD, {"question": "bad"}, GOOD, GOOD, GOOD, GOOD, GOOD]))
    out = tmp_path / "outputs" / "answers.json"
    assert cli.answer_main(["--input_file", str(qfile), "--output_file", str(out), "--batch_size", "3"]) == 0
    answers = json.loads(out.read_text())
    filtered = json.loads((tmp_path / "outputs" / "filtered_answers.json").read_text())
    report = json.loads((tmp_path / "outputs" / "answers.report.json").read_text())
    assert len(answers) == len(filtered) == 7 and all(f is not None for f in filtered)
    assert report["fallbacks"] == {"missing_choices": 1} and len(report["items"]) == 7
    assert report["against_keys"] == {"keyed": 6, "correct": 0, "accuracy": 0.0}  # the stub always says D, keys B
    assert set(report["latency"]) >= {"p50_s", "p99_s", "margin_at_p99_s"} and report["latency"]["over_limit"] == 0
    assert "7 answers" in capsys.readouterr().out
