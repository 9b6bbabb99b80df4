"""Upstream readers: every format's quirks on the project's own fixtures, the hub mappings offline, and the
shared upstream samples read with the counts their SOURCE.md files state."""

from __future__ import annotations

import collections
import hashlib
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, shared_samples
from helpers.data import hub, rows
from helpers.data import readers
from helpers.io import InputError
from helpers.records import RecordError

UP = FIXTURES / "upstream"

# file -> (fmt, source, read, kept, open-ended, unlabeled, dropped by reason); all by hand from the fixture text
EXPECTED = {
    "mmlu/test/astronomy_test.csv": ("mmlu_csv", "mmlu/astronomy", 5, 5, 0, 0, {}),
    "mmlu/dev/world_geography_dev.csv": ("mmlu_csv", "mmlu/world_geography", 4, 4, 0, 0, {}),
    "mmlu/test/headered_test.csv": ("mmlu_csv", "mmlu/headered", 1, 1, 0, 0, {}),
    "mmlu/test/quirky_checks_test.csv": ("mmlu_csv", "mmlu/quirky_checks", 7, 2, 0, 0,
                                         {"bad_csv_row": 2, "bad_label": 1, "empty_text": 1, "duplicate_choices": 1}),
    "arc/ARC-Challenge/ARC-Challenge-Mini.jsonl": ("arc_jsonl", "arc/challenge", 5, 5, 0, 0, {}),
    "arc/ARC-Easy/ARC-Easy-Quirks.jsonl": ("arc_jsonl", "arc/easy", 7, 1, 0, 1,
                                           {"bad_json": 1, "bad_label": 2, "missing_field": 1, "not_an_object": 1}),
    "nameless/set_one.jsonl": ("arc_jsonl", "openbookqa", 1, 1, 0, 0, {}),
    "nameless/set_two.jsonl": ("arc_jsonl", "arc", 1, 1, 0, 0, {}),
    "openbookqa/Main/test.jsonl": ("arc_jsonl", "openbookqa", 3, 3, 0, 0, {}),
    "openbookqa/Additional/test_complete.jsonl": ("arc_jsonl", "openbookqa", 3, 3, 0, 0, {}),
    "openbookqa/Main/test.tsv": ("obqa_tsv", "openbookqa", 3, 3, 0, 0, {}),
    "openbookqa/Main/quirks.tsv": ("obqa_tsv", "openbookqa", 5, 1, 0, 1,
                                   {"bad_csv_row": 1, "bad_choices": 1, "bad_label": 1}),
    "commonsenseqa/train_rand_split.jsonl": ("commonsenseqa", "commonsenseqa", 3, 2, 0, 0, {"duplicate_choices": 1}),
    "commonsenseqa/test_rand_split_no_answers.jsonl": ("commonsenseqa", "commonsenseqa", 2, 0, 0, 2, {}),
    "sciq/test.json": ("sciq", "sciq", 5, 5, 0, 0, {}),
    "sciq/quirks.json": ("sciq", "sciq", 5, 1, 0, 0,
                         {"missing_field": 1, "not_an_object": 1, "duplicate_choices": 1, "empty_text": 1}),
    "sciq/valid_lines.jsonl": ("sciq", "sciq", 1, 1, 0, 0, {}),
    "triviaqa/web-dev.json": ("triviaqa", "triviaqa", 4, 0, 2, 0, {"missing_field": 1, "empty_text": 1}),
    "triviaqa/web-test-without-answers.json": ("triviaqa", "triviaqa", 2, 0, 0, 2, {}),
    "hellaswag/hellaswag_val.jsonl": ("hellaswag", "hellaswag", 5, 2, 0, 0,
                                      {"answer_out_of_range": 1, "bad_label": 1, "missing_field": 1}),
    "hellaswag/hellaswag_test.jsonl": ("hellaswag", "hellaswag", 2, 0, 0, 2, {}),
    "winogrande/dev.jsonl": ("winogrande", "winogrande", 3, 3, 0, 0, {}),
    "winogrande/train_xs.jsonl": ("winogrande", "winogrande", 2, 2, 0, 0, {}),
    "winogrande/test.jsonl": ("winogrande", "winogrande", 2, 0, 0, 2, {}),
    "winogrande/quirks.jsonl": ("winogrande", "winogrande", 4, 1, 0, 0, {"bad_label": 2, "no_blank": 1}),
    "kit/kit_records.jsonl": ("kit_jsonl", "kit_records,team/handmade", 5, 2, 1, 1, {"answer_out_of_range": 1}),
}


def _read(rel: str, **kw) -> readers.ReadResult:
    return readers.read_file(UP / rel, **kw)


# ---------------------------------------------------------------- counts, detection, overrides

@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_tolerant_counts_are_exact(rel):
    fmt, source, read, kept, open_, unlabeled, dropped = EXPECTED[rel]
    res = _read(rel)
    assert (res.fmt, res.source, res.read) == (fmt, source, read)
    assert (len(res.records), len(res.open_ended), res.unlabeled) == (kept, open_, unlabeled)
    assert dict(res.dropped) == dropped
    assert set(res.examples) == set(dropped)  # one located example per reason, for the report
    res.check()
    assert all(r["origin"] == "native" for r in res.records) or res.fmt == "kit_jsonl"


def test_every_fixture_is_covered_or_deliberately_fatal():
    files = {str(p.relative_to(UP)) for p in UP.rglob("*") if p.is_file() and p.suffix != ".lst"}
    fatal = {f for f in files if f.startswith("fatal/")}
    assert files - fatal == set(EXPECTED)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_detect_format_by_name_and_by_content_alone(rel, tmp_path):
    assert readers.detect_format(UP / rel) == EXPECTED[rel][0]
    bare = tmp_path / "data"  # no extension: the content has to decide
    shutil.copyfile(UP / rel, bare)
    assert readers.detect_format(bare) == EXPECTED[rel][0]


@pytest.mark.parametrize("rel, problem", [
    ("fatal/unknown.json", "unrecognised format"),
    ("fatal/empty.jsonl", "is empty"),
    ("winogrande/dev-labels.lst", "read with its .jsonl"),
    ("fatal/no_header.tsv", "unrecognised format"),
    ("fatal/does_not_exist.jsonl", "no such file"),
])
def test_detect_format_errors_name_the_file(rel, problem):
    with pytest.raises(InputError) as err:
        readers.detect_format(UP / rel)
    assert err.value.path == str(UP / rel) and problem in str(err.value)


def test_explicit_format_and_source_override(tmp_path):
    odd = tmp_path / "rows.dat"
    shutil.copyfile(UP / "hellaswag/hellaswag_val.jsonl", odd)
    res = readers.read_file(odd, "hellaswag", source="team/hs")
    assert (res.fmt, res.source, len(res.records)) == ("hellaswag", "team/hs", 2)
    assert {r["source"] for r in res.records} == {"team/hs"}
    # the override is obeyed even when wrong: WinoGrande rows read as HellaSwag all drop, counted
    wrong = readers.read_file(UP / "winogrande/dev.jsonl", "hellaswag")
    assert (wrong.read, dict(wrong.dropped)) == (3, {"missing_field": 3})
    with pytest.raises(InputError, match="unknown format 'csv'"):
        readers.read_file(UP / "winogrande/dev.jsonl", "csv")


# ---------------------------------------------------------------- per-format quirks

def test_mmlu_lf_quotes_newlines_and_topic():
    recs = _read("mmlu/test/astronomy_test.csv").records
    assert recs[1]["question"].endswith('according to the "colour index"?')  # "" escape inside quotes
    assert recs[2]["question"] == "Which of the following are gas giants?\nI. Jupiter\nII. Saturn\nIII. Mars"
    assert recs[2]["choices"][3] == "I, II and III" and recs[2]["answer"] == 2
    assert recs[3]["choices"] == ["0", "1", "2", "4"]  # unquoted numbers stay text
    assert recs[0]["topic"] == "astronomy" and recs[0]["id"] == "mmlu/astronomy/test-1"


def test_mmlu_crlf_without_final_newline():
    raw = (UP / "mmlu/dev/world_geography_dev.csv").read_bytes()
    assert b"\r\n" in raw and not raw.endswith(b"\n")  # the fixture really has both quirks
    recs = _read("mmlu/dev/world_geography_dev.csv").records
    assert recs[1]["question"] == "Which of these lines are imaginary?\nI. the equator\nII. the Nile"
    assert not any("\r" in r["question"] or any("\r" in c for c in r["choices"]) for r in recs)
    assert recs[-1]["question"] == 'Which sea is called the "Dead" sea?' and recs[-1]["answer"] == 0
    assert recs[0]["topic"] == "world geography" and recs[2]["choices"][2] == "Montréal"


def test_mmlu_record_numbers_follow_quoted_newlines(tmp_path):
    text = (UP / "mmlu/test/astronomy_test.csv").read_text(encoding="utf-8")
    bad = tmp_path / "astronomy_test.csv"
    bad.write_text(text.replace("0,1,2,4,C", "0,1,2,4,Q"), encoding="utf-8")  # record 4 starts on line 7
    with pytest.raises(RecordError) as err:
        readers.read_file(bad, tolerant=False)
    assert (err.value.where, err.value.field, err.value.reason) == ("4 (line 7)", "answer", "bad_label")


def test_mmlu_stray_quote_is_one_bad_row_and_reading_resumes():
    res = _read("mmlu/test/quirky_checks_test.csv")
    assert [r["question"] for r in res.records] == ["A good row to start with?", "A good row at the end?"]
    assert res.records[1]["answer"] == 3 and res.records[1]["id"] == "mmlu/quirky_checks/test-7"


def test_arc_labels_and_choice_counts():
    recs = _read("arc/ARC-Challenge/ARC-Challenge-Mini.jsonl").records
    assert [len(r["choices"]) for r in recs] == [4, 4, 3, 5, 4]
    assert [r["answer"] for r in recs] == [1, 2, 1, 3, 0]  # "B", "3" of 1234, "B" of ABC, "D" of ABCDE, "A"
    assert recs[3]["choices"][0] == "0°C" and recs[4]["question"].startswith("Which formula is water, written H_{2}O")
    assert recs[1]["id"] == "arc/challenge/Invented_2024_5_2"


def test_openbookqa_fact1_becomes_explanation_and_tsv_matches_jsonl():
    main = _read("openbookqa/Main/test.jsonl").records
    extra = _read("openbookqa/Additional/test_complete.jsonl").records
    tsv = _read("openbookqa/Main/test.tsv").records
    assert extra[0]["explanation"] == "wood is a poor conductor of heat" and main[0]["explanation"] == ""
    def strip(recs: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "explanation"} for r in recs]

    assert strip(main) == strip(tsv) == strip(extra) and main == tsv  # three representations, one set of records
    assert tsv[2]["question"] == 'A "leaf" is mostly used by a plant to'  # bare quotes in a TSV field


def test_commonsenseqa_concept_is_topic_and_test_split_unlabeled():
    recs = _read("commonsenseqa/train_rand_split.jsonl").records
    assert recs[0]["topic"] == "umbrella" and len(recs[0]["choices"]) == 5
    assert recs[0]["question"] == "Where would you  leave a wet umbrella?"  # upstream double space kept as is
    assert recs[1]["answer"] == 1 and recs[1]["id"] == "commonsenseqa/c0ffee02"


def test_sciq_position_is_a_stable_hash_of_the_question():
    first = _read("sciq/test.json").records
    again = _read("sciq/test.json").records
    assert first == again
    for rec in first:
        want = int.from_bytes(hashlib.sha256(rec["question"].encode()).digest()[:8], "big") % 4
        assert rec["answer"] == want and len(rec["choices"]) == 4
    assert first[0]["choices"][first[0]["answer"]] == "gravity"
    assert first[1]["explanation"] == "" and first[1]["question"] == "Which organelle makes most of a cell’s energy?"
    assert "1.6 × 10^-19" in first[2]["explanation"]  # \u00d7 escape decoded


def test_triviaqa_becomes_open_ended_with_deduplicated_aliases():
    res = _read("triviaqa/web-dev.json")
    first = res.open_ended[0]
    assert first == {"id": "triviaqa/inv_1", "source": "triviaqa",
                     "question": "Which ocean lies between Africa and Australia?", "answer_text": "Indian Ocean",
                     "aliases": ["The Indian Ocean"], "topic": "", "explanation": ""}
    assert res.open_ended[1]["answer_text"] == "Au" and res.open_ended[1]["aliases"] == []


def test_hellaswag_ctx_endings_and_labels():
    recs = _read("hellaswag/hellaswag_val.jsonl").records
    assert recs[0]["question"] == "A kettle is filled with water. it" and recs[0]["answer"] == 2
    assert recs[1]["answer"] == 0 and recs[1]["topic"] == "Washing a dog"  # label "0" as a string
    assert recs[0]["id"] == "hellaswag/101"


def test_winogrande_answers_from_rows_and_labels_file():
    dev = _read("winogrande/dev.jsonl").records
    assert [r["answer"] for r in dev] == [0, 1, 1]
    assert dev[0]["choices"] == ["trophy", "case"] and "_" in dev[0]["question"]
    assert dev[0]["question"].endswith('Which option correctly fills the blank "_"?')
    assert [r["answer"] for r in _read("winogrande/train_xs.jsonl").records] == [0, 1]


def test_kit_jsonl_keeps_extras_origin_and_open_ended():
    res = _read("kit/kit_records.jsonl")
    assert res.records[0]["chunk"] == 3 and res.records[0]["origin"] == "generated"
    assert res.records[1]["source"] == "kit_records" and res.records[1]["id"] == "kit_records/kit_records-5"
    assert res.open_ended == [{"id": "k2", "source": "team/handmade", "question": "Capital of Italy?",
                               "answer_text": "Rome", "aliases": ["Roma"], "topic": "geography", "explanation": ""}]


# ---------------------------------------------------------------- strict mode and file-level errors

@pytest.mark.parametrize("rel, where, field, reason", [
    ("mmlu/test/quirky_checks_test.csv", "2 (line 2)", None, "bad_csv_row"),
    ("arc/ARC-Easy/ARC-Easy-Quirks.jsonl", "2 (line 2)", None, "bad_json"),
    ("commonsenseqa/train_rand_split.jsonl", "3 (line 3)", "choices", "duplicate_choices"),
    ("openbookqa/Main/quirks.tsv", "2 (line 3)", None, "bad_csv_row"),
    ("sciq/quirks.json", "2 (line 10)", "correct_answer", "missing_field"),
    ("triviaqa/web-dev.json", "3 (QuestionId inv_3)", "question", "missing_field"),
    ("hellaswag/hellaswag_val.jsonl", "3 (line 3)", "answer", "answer_out_of_range"),
    ("winogrande/quirks.jsonl", "2 (line 2)", "answer", "bad_label"),
    ("kit/kit_records.jsonl", "4 (line 4)", "answer", "answer_out_of_range"),
])
def test_strict_mode_raises_the_first_bad_record_located(rel, where, field, reason):
    with pytest.raises(RecordError) as err:
        _read(rel, tolerant=False)
    exc = err.value
    assert (exc.path, exc.where, exc.field, exc.reason) == (str(UP / rel), where, field, reason)
    assert str(UP / rel) in str(exc) and f"record {where}" in str(exc)


def test_strict_mode_does_not_treat_unlabeled_rows_as_errors():
    res = _read("winogrande/test.jsonl", tolerant=False)
    assert (res.read, res.unlabeled) == (2, 2)


@pytest.mark.parametrize("rel, fmt, problem", [
    ("fatal/sciq_truncated.json", None, "not valid JSON"),
    ("fatal/mismatch.jsonl", None, "has 1 labels but mismatch.jsonl has 2 rows"),
    ("fatal/no_header.tsv", "obqa_tsv", "header lacks column(s)"),
    ("fatal/unclosed_quote_test.csv", None, "a quoted field never closes"),
    ("fatal/triviaqa_not_nested.json", "triviaqa", '{"Data": [questions...]}'),
])
@pytest.mark.parametrize("tolerant", [True, False])
def test_file_level_breakage_raises_in_both_modes(rel, fmt, problem, tolerant):
    with pytest.raises(InputError) as err:
        readers.read_file(UP / rel, fmt, tolerant=tolerant)
    assert problem in str(err.value) and Path(err.value.path).parent == UP / "fatal"


def test_unclosed_quote_error_names_the_line():
    with pytest.raises(InputError) as err:
        _read("fatal/unclosed_quote_test.csv")
    assert err.value.where == "line 2"


# ---------------------------------------------------------------- folders

def test_folder_reads_sorted_and_consumes_labels_lists():
    results = readers.read_source(str(UP / "winogrande"))
    assert [Path(r.path).name for r in results] == ["dev.jsonl", "quirks.jsonl", "test.jsonl", "train_xs.jsonl"]
    assert sum(len(r.records) for r in results) == 6 and sum(r.unlabeled for r in results) == 2


def test_folder_of_mixed_formats_keeps_every_count():
    results = readers.read_source(str(UP / "openbookqa"))
    assert [r.fmt for r in results] == ["arc_jsonl", "obqa_tsv", "arc_jsonl", "obqa_tsv"]
    assert sum(r.read for r in results) == 14


@pytest.mark.parametrize("spec, problem", [
    (UP / "orphan", "a labels list without its X.jsonl"),
    (UP / "fatal", "fatal/empty.jsonl: is empty"),  # sorted: the first broken file stops the folder, loudly
    (UP / "nowhere", "no such file or folder"),
    (UP / "winogrande/dev-labels.lst", "read with its .jsonl"),
])
def test_folder_and_path_errors(spec, problem):
    with pytest.raises(InputError) as err:
        readers.read_source(str(spec))
    assert problem in str(err.value)


# ---------------------------------------------------------------- hub mappings (hand-made rows in hub schemas)

def test_hub_mmlu_row():
    rec = rows.map_mmlu({"question": "2+2?", "subject": "elementary_mathematics", "choices": ["3", "4", "5", "6"],
                        "answer": 1}, "all", "test-1")
    assert (rec["source"], rec["topic"], rec["answer"], rec["id"]) == (
        "mmlu/elementary_mathematics", "elementary mathematics", 1, "mmlu/elementary_mathematics/test-1")


def test_hub_arc_row_digit_labels():
    row = {"id": "Mercury_1", "question": "Which?", "choices": {"text": ["a", "b", "c", "d"], "label": list("1234")},
           "answerKey": "4"}
    rec = rows.map_arc(row, "ARC-Easy", "test-1")
    assert (rec["answer"], rec["source"], rec["id"]) == (3, "arc/easy", "arc/easy/Mercury_1")


def test_hub_commonsenseqa_row_and_empty_test_key():
    row = {"id": "x1", "question": "Where?", "question_concept": "place",
           "choices": {"label": list("ABCDE"), "text": ["a", "b", "c", "d", "e"]}, "answerKey": "E"}
    assert rows.map_commonsenseqa(row, None, "train-1")["answer"] == 4
    assert rows.map_commonsenseqa({**row, "answerKey": ""}, None, "test-1") is None


def test_hub_openbookqa_additional_fact1():
    row = {"id": "7-1", "question_stem": "Heat moves", "choices": {"text": ["up", "down", "around", "never"],
                                                                   "label": list("ABCD")},
           "answerKey": "C", "fact1": "convection moves heat", "humanScore": 1.0, "clarity": 2.0,
           "turkIdAnonymized": "ab"}
    rec = rows.map_openbookqa(row, "additional", "test-1")
    assert (rec["question"], rec["answer"], rec["explanation"]) == ("Heat moves", 2, "convection moves heat")


def test_hub_sciq_hellaswag_winogrande_rows():
    sci = rows.map_sciq({"question": "Q?", "distractor3": "a", "distractor1": "b", "distractor2": "c",
                        "correct_answer": "d", "support": "s"}, None, "train-1")
    assert sci["choices"][sci["answer"]] == "d" and sci["explanation"] == "s"
    hs = {"ind": 5, "activity_label": "Cooking", "ctx_a": "A pan heats.", "ctx_b": "", "ctx": "A pan heats.",
          "endings": ["a", "b", "c", "d"], "source_id": "x", "split": "val", "split_type": "indomain", "label": "3"}
    assert rows.map_hellaswag(hs, None, "validation-1")["answer"] == 3
    assert rows.map_hellaswag({**hs, "label": ""}, None, "test-1") is None
    wg = {"sentence": "A helped B because _ was kind.", "option1": "A", "option2": "B", "answer": "1"}
    assert rows.map_winogrande(wg, "winogrande_xl", "train-7")["id"] == "winogrande/train-7"
    assert rows.map_winogrande({**wg, "answer": ""}, "winogrande_xl", "test-1") is None


def test_hub_triviaqa_row():
    row = {"question": "Q?", "question_id": "tc_1", "question_source": "x",
           "answer": {"aliases": ["Big Ben", "big ben"], "normalized_aliases": ["big ben", "elizabeth tower"],
                      "value": "Big Ben", "normalized_value": "big ben", "type": "WikipediaEntity"}}
    item = rows.map_triviaqa(row, "rc.nocontext", "validation-1")
    assert (item["answer_text"], item["aliases"], item["id"]) == ("Big Ben", ["elizabeth tower"], "triviaqa/tc_1")
    assert rows.map_triviaqa({**row, "answer": {"aliases": [], "value": "<unk>"}}, None, "test-1") is None


def test_hub_spec_parsing():
    assert hub.parse_spec("hub:allenai/ai2_arc:ARC-Easy@validation") == ("allenai/ai2_arc", "ARC-Easy", "validation")
    assert hub.parse_spec("hub:mmlu") == ("cais/mmlu", "all", None)
    assert hub.parse_spec("hub:hellaswag@test") == ("Rowan/hellaswag", None, "test")
    with pytest.raises(InputError, match="unsupported hub dataset 'squad'"):
        hub.parse_spec("hub:squad")


def test_hub_full_path_counts_with_a_fake_loader(monkeypatch):
    calls = []

    def fake(name, config, split):
        calls.append((name, config, split))
        choices = {"label": list("ABCDE"), "text": ["a", "b", "c", "d", "e"]}
        return {"validation": [{"id": "v1", "question": "Q1?", "question_concept": "c", "choices": choices,
                                "answerKey": "B"},
                               {"id": "v2", "question": "Q2?", "question_concept": "c", "choices": choices,
                                "answerKey": "Z"}],
                "test": [{"id": "t1", "question": "Q3?", "question_concept": "c", "choices": choices,
                          "answerKey": ""}]}

    monkeypatch.setattr(hub, "load_rows", fake)
    val, test = readers.read_source("hub:commonsense_qa")
    assert calls == [("tau/commonsense_qa", None, None)]
    assert (val.path, val.fmt, val.source) == ("hub:tau/commonsense_qa/validation", "hub:tau/commonsense_qa",
                                                "commonsenseqa")
    assert (val.read, len(val.records), dict(val.dropped)) == (2, 1, {"bad_label": 1})
    assert "hub:tau/commonsense_qa/validation: record 2: field 'answerKey'" in val.examples["bad_label"]
    assert (test.read, test.unlabeled) == (1, 1)
    with pytest.raises(RecordError, match="record 2: field 'answerKey'"):
        readers.read_source("hub:commonsense_qa", tolerant=False)


def test_hub_loader_may_return_a_plain_list_of_rows(monkeypatch):
    rows = [{"question": "Q?", "subject": "anatomy", "choices": ["a", "b", "c", "d"], "answer": 2},
            {"question": "R?", "subject": "virology", "choices": ["a", "b", "c", "d"], "answer": 0}]
    monkeypatch.setattr(hub, "load_rows", lambda name, config, split: rows)
    (res,) = readers.read_source("hub:cais/mmlu:all@test")
    assert (res.path, res.source, len(res.records)) == ("hub:cais/mmlu/all/test", "mmlu", 2)


def test_hub_unreachable_is_a_clear_input_error():
    # the real datasets.load_dataset; conftest sets HF_HUB_OFFLINE, and the config does not exist anyway
    with pytest.raises(InputError) as err:
        readers.read_source("hub:allenai/ai2_arc:no-such-config@test")
    assert "hub may be unreachable" in str(err.value) and "local file or folder" in str(err.value)


# ---------------------------------------------------------------- the shared upstream samples

# file -> (rows per SOURCE.md, of which unlabeled, open-ended); every other row must be kept or dropped by the
# record checks listed in SHARED_DROPS
SHARED = {
    "mmlu/test/abstract_algebra_test.csv": (45, 0, 0), "mmlu/test/high_school_geography_test.csv": (40, 0, 0),
    "mmlu/test/college_biology_test.csv": (40, 0, 0), "mmlu/test/high_school_chemistry_test.csv": (40, 0, 0),
    "mmlu/dev/abstract_algebra_dev.csv": (5, 0, 0), "mmlu/dev/high_school_geography_dev.csv": (5, 0, 0),
    "mmlu/dev/college_biology_dev.csv": (5, 0, 0), "mmlu/dev/high_school_chemistry_dev.csv": (5, 0, 0),
    "mmlu/val/college_biology_val.csv": (16, 0, 0),
    "arc/ARC-Challenge/ARC-Challenge-Test.jsonl": (50, 0, 0), "arc/ARC-Challenge/ARC-Challenge-Dev.jsonl": (100, 0, 0),
    "arc/ARC-Easy/ARC-Easy-Dev.jsonl": (40, 0, 0),
    "commonsenseqa/dev_rand_split.jsonl": (50, 0, 0), "commonsenseqa/train_rand_split.jsonl": (50, 0, 0),
    "commonsenseqa/test_rand_split_no_answers.jsonl": (20, 20, 0),
    "openbookqa/Main/test.jsonl": (50, 0, 0), "openbookqa/Main/test.tsv": (50, 0, 0),
    "openbookqa/Additional/test_complete.jsonl": (50, 0, 0),
    "sciq/test.json": (50, 0, 0),
    "triviaqa/triviaqa_sample.json": (1, 0, 1),
    "hellaswag/hellaswag_train.jsonl": (50, 0, 0),
    "winogrande/dev.jsonl": (50, 0, 0), "winogrande/train_xs.jsonl": (50, 0, 0), "winogrande/test.jsonl": (20, 20, 0),
}
SHARED_DROPS = {
    # CommonsenseQA really repeats an option in these 3 of 50 (SOURCE.md: "duplicate choice texts occur")
    "commonsenseqa/dev_rand_split.jsonl": {"duplicate_choices": 3},
}


def test_every_shared_sample_converts_with_the_stated_counts():
    root = shared_samples()
    results = {str(Path(r.path).relative_to(root)): r for r in readers.read_source(str(root))}
    assert set(results) == set(SHARED)  # a new sample file must be added to the table above
    for rel, (n_rows, unlabeled, open_) in SHARED.items():
        res = results[rel]
        res.check()
        drops = SHARED_DROPS.get(rel, {})
        assert (res.read, res.unlabeled, len(res.open_ended)) == (n_rows, unlabeled, open_), rel
        assert dict(res.dropped) == drops, (rel, res.examples)
        assert len(res.records) == n_rows - unlabeled - open_ - sum(drops.values()), rel
    # README table: 201 MMLU + 190 ARC + 120 CSQA + 150 OBQA + 50 SciQ + 1 TriviaQA + 50 HellaSwag + 120 WinoGrande
    assert sum(r.read for r in results.values()) == 882


def test_shared_sample_quirks_survive():
    root = shared_samples()
    algebra = readers.read_file(root / "mmlu/test/abstract_algebra_test.csv").records
    assert '"*"' in algebra[40]["question"] and "\\in" in algebra[44]["question"]
    for crlf in ("high_school_geography_test.csv", "high_school_chemistry_test.csv"):
        recs = readers.read_file(root / "mmlu/test" / crlf).records
        assert not any("\r" in r["question"] or any("\r" in c for c in r["choices"]) for r in recs)
    assert any("\n" in r["question"] for r in readers.read_file(root / "mmlu/val/college_biology_val.csv").records)
    easy = readers.read_file(root / "arc/ARC-Easy/ARC-Easy-Dev.jsonl").records
    assert len(easy[17]["choices"]) == 5 and easy[8]["id"].startswith("arc/easy/")  # line 18 ABCDE, line 9 1234
    dev = readers.read_file(root / "arc/ARC-Challenge/ARC-Challenge-Dev.jsonl").records
    assert len(dev[35]["choices"]) == len(dev[56]["choices"]) == 3  # lines 36 and 57 (before the line-85 drop)
    sciq = readers.read_file(root / "sciq/test.json").records
    spread = collections.Counter(r["answer"] for r in sciq)
    assert set(spread) == {0, 1, 2, 3} and max(spread.values()) <= 20  # 50 questions: ~12 per letter
    (trivia,) = readers.read_file(root / "triviaqa/triviaqa_sample.json").open_ended
    assert trivia["answer_text"] == "Sunset Boulevard" and "Sunset Blvd" in trivia["aliases"]


def test_undecodable_bytes_drop_only_their_own_record(tmp_path):
    good = (UP / "arc/ARC-Challenge/ARC-Challenge-Mini.jsonl").read_bytes().split(b"\n")
    bad = tmp_path / "ARC-Challenge-Bytes.jsonl"
    bad.write_bytes(b"\n".join([good[0], good[1].replace(b"puddle", b"pud\xffdle"), good[2]]) + b"\n")
    res = readers.read_file(bad)
    assert (res.read, len(res.records), dict(res.dropped)) == (3, 2, {"bad_encoding": 1})
    assert "record 2 (line 2): field 'question" in res.examples["bad_encoding"]
    csv_bad = tmp_path / "botany_test.csv"
    csv_bad.write_bytes(b"Fine?,a,b,c,d,A\nBro\xe9ken?,a,b,c,d,B\n")  # Latin-1 byte in a UTF-8 file
    res = readers.read_file(csv_bad)
    assert (res.read, len(res.records), dict(res.dropped)) == (2, 1, {"bad_encoding": 1})
