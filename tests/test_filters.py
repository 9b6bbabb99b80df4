"""The tournament format filters: every rule with a passing and a failing case, exact boundaries, official JSON."""

from __future__ import annotations

from collections import Counter

import pytest

from helpers import filters
from helpers.records import RecordError, make_record


class WordTokenizer:
    """One token per whitespace-separated word: makes every boundary below exact and readable."""

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        assert add_special_tokens is False, "the rules count tokens without special tokens"
        return list(range(len(text.split())))


TOK = WordTokenizer()
CORPUS = [
    "Ana, Ben and Cal sit in a row, all facing north; left and right are their own.",
    "Who sits at the left end? Who sits immediately to Ben's right?",
    "In a family: Ana is Ben's mother. Cal is Ana's brother. How is Cal related to Ben?",
]


@pytest.fixture(scope="module")
def bpe_tokenizer():
    """A tiny byte-level BPE built locally (no hub): the `tokenizers` object whose encode returns an Encoding."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS * 20, trainer=trainer)
    return tok


@pytest.fixture(scope="module")
def hf_tokenizer(bpe_tokenizer):
    """The same tokenizer behind the transformers API the agents expose."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=bpe_tokenizer, eos_token="<eos>")


def words(n: int) -> str:
    return " ".join(["w"] * n)


def question(**over) -> dict:
    q = {"topic": "Puzzles/Seating Arrangements (Linear, Circular)", "question": "Who sits at the left end?",
         "choices": ["A) Ana", "B) Ben", "C) Cal", "D) Dev"], "answer": "B", "explanation": "Ben is first."}
    q.update(over)
    return q


def test_a_well_formed_question_passes_with_token_counts():
    result = filters.check_question(question(), TOK)
    assert result.ok and result.reason is None
    # question 6 + answer 1 + choices 4x2 - 15 = 0; explanation 3 more
    assert result.tokens == {"question": 6, "answer": 1, "choices": 8, "core": 0, "explanation": 3, "total": 3}


@pytest.mark.parametrize("key", filters.QUESTION_KEYS)
def test_each_required_key_missing_fails(key):
    q = question()
    del q[key]
    assert filters.check_question(q, TOK).reason == f"missing_{key}"


def test_explanation_is_optional_and_extra_keys_are_allowed():
    q = question(extra="kept", difficulty=3)
    del q["explanation"]
    result = filters.check_question(q, TOK)
    assert result.ok and result.tokens["explanation"] == 1  # the string "None"
    # only an ABSENT explanation counts as "None": a present null would reach the organisers' tokenizer as None
    assert filters.check_question(question(explanation=None), TOK).reason == "explanation_not_string"


@pytest.mark.parametrize("choices, reason", [
    (["A) Ana", "B) Ben", "C) Cal"], "not_four_choices"),
    (["A) Ana", "B) Ben", "C) Cal", "D) Dev", "E) Eva"], "not_four_choices"),
    ("A) Ana B) Ben C) Cal D) Dev", "choices_not_list"),
    (["A) Ana", "B) Ben", "C) Cal", 4], "choice_not_string"),
    (["A) Ana", "B) Ben", "C)", "D) Dev"], "choice_too_short"),
    (["A) Ana", "B) Ben", "E) Cal", "D) Dev"], "choice_bad_letter"),
    (["A) Ana", "B) Ben", "Ca", "D) Dev"], "choice_too_short"),
    (["A) Ana", "B) Ben", "Carl", "D) Dev"], None),  # starts with C: the rule only reads the first character
    (["a) Ana", "b) Ben", "c) Cal", "d) Dev"], None),  # case-insensitive first character
    (["A) x", "B) y", "C) z", "D) w"], None),  # longer than 2 characters is enough
    (["Zed", "B) Ben", "C) Cal", "D) Dev"], "choice_bad_letter"),
])
def test_choice_rules(choices, reason):
    result = filters.check_question(question(choices=choices), TOK)
    assert result.reason == reason and result.ok is (reason is None)


@pytest.mark.parametrize("answer, ok", [("B", True), ("b", True), ("B) Ben", True), (1, False), (None, False), (["B"], False)])
def test_question_answer_must_be_a_string(answer, ok):
    result = filters.check_question(question(answer=answer), TOK)
    assert result.ok is ok
    assert ok or result.reason == "answer_not_string"


def test_question_token_limit_boundary():
    # question q words + answer 1 + choices 8 - 15 = q - 6 must stay below 130
    assert filters.check_question(question(question=words(135)), TOK).ok
    over = filters.check_question(question(question=words(136)), TOK)
    assert over.reason == "question_too_long" and over.tokens["core"] == 130


def test_explanation_total_boundary():
    # core = 100 - 6 = 94; 94 + 930 = 1024 is allowed, 1025 is not
    assert filters.check_question(question(question=words(100), explanation=words(930)), TOK).ok
    over = filters.check_question(question(question=words(100), explanation=words(931)), TOK)
    assert over.reason == "explanation_too_long" and over.tokens["total"] == 1025
    assert filters.check_question(question(explanation=["not", "text"]), TOK).reason == "explanation_not_string"


def test_non_object_and_non_text_question():
    assert filters.check_question("text", TOK).reason == "not_an_object"
    assert filters.check_question(question(question=None), TOK).reason == "question_not_string"


@pytest.mark.parametrize("answer, reason", [
    ({"answer": "B", "reasoning": "short"}, None),
    ({"answer": "b"}, None),  # passes the filter; the scorer's exact compare is a separate matter
    ({"answer": "D", "reasoning": None}, "reasoning_not_string"),  # a present null is not an absent reasoning
    ({"answer": "E"}, "bad_letter"),
    ({"answer": "1"}, "bad_letter"),
    ({"answer": 2}, "answer_not_string"),
    ({"reasoning": "no answer"}, "missing_answer"),
    (None, "not_an_object"),
    ({"answer": words(49)}, None),
    ({"answer": words(50)}, "answer_too_long"),
    ({"answer": "B", "reasoning": words(510)}, None),  # 1 + 510 = 511 < 512
    ({"answer": "B", "reasoning": words(511)}, "reasoning_too_long"),
    ({"answer": "B", "reasoning": 7}, "reasoning_not_string"),
])
def test_answer_rules(answer, reason):
    result = filters.check_answer(answer, TOK)
    assert result.reason == reason and result.ok is (reason is None)


def test_absent_reasoning_counts_as_the_string_none():
    assert filters.check_answer({"answer": "A"}, TOK).tokens == {"answer": 1, "reasoning": 1, "total": 2}


def test_filter_questions_keeps_passing_and_counts_reasons():
    items = [question(), question(answer=3), {"question": "x"}, question(choices=["A) a", "B) b"]), question()]
    kept, dropped = filters.filter_questions(items, TOK)
    assert kept == [items[0], items[4]]
    assert dropped == Counter({"answer_not_string": 1, "missing_topic": 1, "not_four_choices": 1})


def test_filter_answers_keeps_positions_and_nulls_failures():
    items = [{"answer": "A"}, {"answer": "E"}, None, {"answer": "c", "reasoning": words(600)}, {"answer": "d"}]
    out, dropped = filters.filter_answers(items, TOK)
    assert out == [items[0], None, None, None, items[4]]
    assert dropped == Counter({"bad_letter": 1, "not_an_object": 1, "reasoning_too_long": 1})


def test_hf_and_raw_tokenizers_count_the_same(bpe_tokenizer, hf_tokenizer):
    text = "Ana, Ben and Cal sit in a row, all facing north. Who sits at the left end?"
    raw = bpe_tokenizer.encode(text, add_special_tokens=False)  # a tokenizers.Encoding, not a list
    assert filters.count_tokens(text, bpe_tokenizer) == len(raw.ids) > 0
    assert filters.count_tokens(text, hf_tokenizer) == len(raw.ids)
    assert filters.check_question(question(question=text), hf_tokenizer).tokens == \
        filters.check_question(question(question=text), bpe_tokenizer).tokens


def record(**over) -> dict:
    rec = make_record(id="r1", source="test", question="Who sits at the left end?", choices=["Ana", "Ben", "Cal", "Dev"],
                      answer=2, explanation="Cal is first.", topic="Puzzles", origin="generated")
    rec.update(over)
    return rec


def test_to_official_question_shape_and_letter():
    q = filters.to_official_question(record(), "Puzzles")
    assert q == {"topic": "Puzzles", "question": "Who sits at the left end?",
                 "choices": ["A) Ana", "B) Ben", "C) Cal", "D) Dev"], "answer": "C", "explanation": "Cal is first."}
    assert filters.letter_of(q) == "C"
    assert filters.check_question(q, TOK).ok
    assert "explanation" not in filters.to_official_question(record(explanation=""), "Puzzles")


def test_letter_of_reads_the_first_character_like_the_scorer():
    assert filters.letter_of({"answer": "B) Ben"}) == "B"
    assert filters.letter_of({"answer": "b"}) == "b"  # the scorer compares this exactly: no upper-casing


@pytest.mark.parametrize("answer", [0, 1, 2, 3])
def test_official_round_trip(answer):
    rec = record(answer=answer)
    back = filters.from_official_question(filters.to_official_question(rec, "Puzzles"), id="r1", source="test",
                                          origin="generated")
    assert back["choices"] == rec["choices"] and back["answer"] == answer
    assert {k: back[k] for k in ("question", "explanation", "topic")} == \
        {k: rec[k] for k in ("question", "explanation", "topic")}


@pytest.mark.parametrize("n", [3, 5])
def test_to_official_question_needs_four_choices(n):
    with pytest.raises(RecordError) as err:
        filters.to_official_question(record(choices=["Ana", "Ben", "Cal", "Dev", "Eva"][:n], answer=0), "Puzzles")
    assert err.value.reason == "not_four_choices" and "choices" in str(err.value)


def test_an_empty_answer_key_matches_no_letter():
    assert filters.letter_of({"answer": ""}) == "" and filters.letter_of({"answer": "B) x"}) == "B"
