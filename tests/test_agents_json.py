"""JSON recovery from model text: direct parse, extraction, repair; never eval, never an exception."""

from __future__ import annotations

import pytest

from helpers.agents.json_repair import balanced_spans, extract_json, repair


@pytest.mark.parametrize("text, expected, how", [
    ('{"answer": "B", "reasoning": "x"}', {"answer": "B", "reasoning": "x"}, "direct"),
    ('Sure!\n```json\n{"answer": "B"}\n```\nGood luck.', {"answer": "B"}, "fenced"),
    ('The JSON: {"answer": "C"} and then {"other": 1}', {"answer": "C"}, "span"),
    ('prefix {"a": {"b": "}"}} suffix', {"a": {"b": "}"}}, "span"),  # a brace inside a string is not structure
    ("{'answer': 'D', 'ok': True, 'n': None,}", {"answer": "D", "ok": True, "n": None}, "repaired"),
    ('{answer: B, reasoning: "short"}', {"answer": "B", "reasoning": "short"}, "repaired"),
    ('{"question": "Who?", "choices": ["A) x", "B) y"', {"question": "Who?", "choices": ["A) x", "B) y"]}, "repaired"),
    ('{"answer": "B", "reasoning": "cut off mid', {"answer": "B", "reasoning": "cut off mid"}, "repaired"),
    ('{"q": "line one\nline two"}', {"q": "line one\nline two"}, "repaired"),
    ('{"a": [1, 2,], }', {"a": [1, 2]}, "repaired"),
    ("{\u201canswer\u201d: \u201cA\u201d}", {"answer": "A"}, "repaired"),
    ("{'a': 'say \"hi\"'}", {"a": 'say "hi"'}, "repaired"),
    ('{"a": 1} // a comment', {"a": 1}, "span"),
])
def test_recovers_objects(text, expected, how):
    assert extract_json(text) == (expected, how)


@pytest.mark.parametrize("text, reason", [("", "empty"), ("   ", "empty"), ("no json here", "no_json"),
                                          (None, "not_text"), (42, "not_text"), ("[1, 2]", "no_json")])
def test_unrecoverable_input_gives_a_reason(text, reason):
    assert extract_json(text) == (None, reason)


def test_lists_when_asked_for_lists():
    assert extract_json("here: [1, 2, 3]", want=list) == ([1, 2, 3], "span")
    assert extract_json('{"a": 1}', want=list) == (None, "no_json")


def test_code_in_model_text_is_never_evaluated(tmp_path):
    marker = tmp_path / "ran"
    text = "{'answer': __import__('pathlib').Path(%r).touch()}" % str(marker)
    obj, how = extract_json(text)
    assert not marker.exists()
    assert obj is None or all(isinstance(v, (str, list, dict, int, float, bool, type(None))) for v in obj.values())


def test_huge_and_brace_heavy_text_is_bounded():
    text = "{" * 50000 + '{"answer": "A"}'
    obj, _ = extract_json(text)  # must return (fast), whatever it finds
    assert obj is None or isinstance(obj, dict)
    assert len(balanced_spans("{a} " * 1000)) == 24


def test_repair_closes_open_structures_in_order():
    assert repair('{"a": [1, {"b": "c') == '{"a": [1, {"b": "c"}]}'
