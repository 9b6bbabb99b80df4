"""The dataset build: every row accounted for, duplicates gone, letters balanced, a clean stratified split."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from conftest import FIXTURES, ROOT
from helpers import data
from helpers.data.balance import balance_letters
from helpers.data.build import Item, Ledger, build_dataset, convert_items, dedupe_items, split_items, validate_items
from helpers.io import InputError, read_jsonl
from helpers.records import RecordError, dedupe_key, make_record, normalize_text

FX = FIXTURES / "data"
SOURCES = [FX / "mmlu" / "world_geography_test.csv", FX / "arc.jsonl", FX / "kit.jsonl", FX / "trivia.json"]
# Counted by hand from the fixture files (tests/fixtures/data/README.md):
#   mmlu 11 rows: row 9 has 5 fields (bad_csv_row), row 10 answer "E" (bad_label) -> 9 records
#   arc 7 rows: Fix_7 answerKey "Z" (bad_label); Fix_3 = mmlu row 1 with shuffled choices (duplicate)
#   kit 22 rows: sci-12 "Saturn"/"Saturn " (duplicate_choices), sci-13 no answer (unlabeled),
#                sci-11 = sci-1 shuffled (duplicate), oe-1 converts, oe-2 is a 250-character answer (answer_too_long)
#   trivia 31 questions: fx_30 empty Value (empty_text), fx_31 no Answer (unlabeled), 29 convert
EXPECTED_DROPS = {"bad_csv_row": 1, "bad_label": 2, "duplicate_choices": 1, "empty_text": 1,
                  "answer_too_long": 1, "duplicate": 2}


def build(tmp_path, sources=SOURCES, **kw):
    args = dict(out_dir=tmp_path / "out", puzzles=0, val_fraction=0.25, seed=11)
    args.update(kw)
    return build_dataset([str(s) for s in sources], **args)


def rec(i, question, choices, answer=0, source="s", origin="native"):
    return make_record(id=f"r{i}", source=source, question=question, choices=choices, answer=answer, origin=origin)


def test_every_row_lands_in_exactly_one_bucket(tmp_path):
    report = build(tmp_path)
    t = report["totals"]
    assert (t["read"], t["generated"], t["unlabeled"], t["dropped"]) == (71, 0, 2, 8)
    assert t["kept"] == 61 == t["train"] + t["val"]
    assert t["converted"] == 30
    assert report["dropped"] == EXPECTED_DROPS
    assert report["dropped_by_stage"]["dedupe"] == {"duplicate": 2}
    assert report["dropped_by_stage"]["convert"] == {"answer_too_long": 1}
    for name, row in report["per_source"].items():
        assert row["read"] + row["generated"] == row["kept"] + row["unlabeled"] + row["dropped"], name
        assert row["kept"] == row["train"] + row["val"], name
    # what was written is what the report says, and every written record is valid
    train, val = read_jsonl(tmp_path / "out" / "train.jsonl"), read_jsonl(tmp_path / "out" / "val.jsonl")
    assert (len(train), len(val)) == (t["train"], t["val"])
    validate_items([Item(r, "out") for r in train + val], Ledger(), tolerant=False)
    on_disk = json.loads((tmp_path / "out" / "report.json").read_text())
    assert on_disk["totals"] == t and on_disk["params"]["seed"] == 11 and "versions" in on_disk
    # each drop reason carries its first located message
    assert set(report["examples"]) == set(EXPECTED_DROPS)
    ex = report["examples"]
    assert "world_geography_test.csv" in ex["bad_csv_row"] and "line 9" in ex["bad_csv_row"]
    assert "kit.jsonl" in ex["answer_too_long"] and "answer_text" in ex["answer_too_long"]


def test_duplicates_go_including_shuffled_choices(tmp_path):
    build(tmp_path)
    out = read_jsonl(tmp_path / "out" / "train.jsonl") + read_jsonl(tmp_path / "out" / "val.jsonl")
    keys = [dedupe_key(r) for r in out]
    assert len(keys) == len(set(keys))
    ids = {r["id"] for r in out}
    assert "sci-1" in ids and "sci-11" not in ids  # the first copy stays
    gold = [r for r in out if normalize_text(r["question"]) == "what is the longest river in africa"]
    assert len(gold) == 1 and gold[0]["choices"][gold[0]["answer"]] == "Nile"


def test_dedupe_keeps_first_and_counts_by_source():
    items = [Item(rec(1, "Q one?", ["a", "b", "c"]), "f"), Item(rec(2, "q  ONE", ["c", "a", "b"], 1, source="t"), "g"),
             Item(rec(3, "Q one?", ["a", "b", "d"]), "f")]
    ledger = Ledger()
    kept = dedupe_items(items, ledger)
    assert [it.rec["id"] for it in kept] == ["r1", "r3"]
    assert ledger.dropped == Counter(duplicate=1) and ledger.sources["t"]["dropped"] == 1
    assert kept[0].key == dedupe_key(kept[0].rec)


def test_letters_balanced_in_train_and_val(tmp_path):
    report = build(tmp_path)
    for side in ("train", "val"):
        counts = report["letters"][side]
        assert set(counts) == set("ABCD") and max(counts.values()) - min(counts.values()) <= 1, (side, counts)


def test_balance_off_keeps_every_choice_order(tmp_path):
    report = build(tmp_path, balance=False)
    assert report["balance"] == {"enabled": False, "fixed_order": None}
    balanced = build(tmp_path / "b")
    assert balanced["balance"]["enabled"] and balanced["letters"]["train"] != report["letters"]["train"]
    original = {r["id"]: r["choices"] for r in read_jsonl(FIXTURES / "data" / "kit.jsonl") if "choices" in r}
    kept = [r for side in ("train", "val") for r in read_jsonl(tmp_path / "out" / f"{side}.jsonl")
            if r["id"] in original]
    assert len(kept) >= 10 and all(r["choices"] == [c.strip() for c in original[r["id"]]] for r in kept)


def test_balance_letters_exact_and_keeps_what_must_stay():
    recs = [rec(i, f"Q{i}?", [f"right {i}", f"w{i}a", f"w{i}b", f"w{i}c"]) for i in range(400)]
    recs += [rec(900, "Which are fruit?", ["apple", "pear", "plum", "All of the above"], 3),
             rec(901, "Which?", ["x", "y", "Both A and B", "none"], 2)]
    recs += [rec(950 + i, f"Puzzle {i}?", ["p", "q", "r", "s"], i % 4, origin="generated") for i in range(8)]
    before = {r["id"]: (r["choices"][r["answer"]], sorted(r["choices"]), list(r["choices"])) for r in recs}
    fixed = balance_letters(recs, seed=3)
    assert fixed == 10
    counts = Counter(r["answer"] for r in recs)
    assert max(counts.values()) - min(counts.values()) <= 1, counts
    for r in recs:
        right, multiset, order = before[r["id"]]
        assert r["choices"][r["answer"]] == right and sorted(r["choices"]) == multiset
        if r["origin"] == "generated" or r["id"] in ("r900", "r901"):
            assert r["choices"] == order
    a = [rec(i, f"Q{i}?", ["w", "x", "y", "z"]) for i in range(40)]
    b = [rec(i, f"Q{i}?", ["w", "x", "y", "z"]) for i in range(40)]
    balance_letters(a, seed=5)
    balance_letters(b, seed=5)
    assert a == b


def test_split_is_stratified_per_source():
    items = []
    for source, n in (("one", 1), ("two", 2), ("ten", 10), ("hundred", 100)):
        items += [Item(rec(i, f"{source} question {i}?", ["a", "b"], source=source), "f") for i in range(n)]
    for it in items:
        it.qkey = normalize_text(it.rec["question"])
        it.key = dedupe_key(it.rec)
    train, val, moved = split_items(items, val_fraction=0.1, seed=1)
    per = Counter(it.rec["source"] for it in val)
    assert per == Counter(two=1, ten=1, hundred=10) and moved == 0
    assert len(train) + len(val) == len(items)
    _, val0, _ = split_items(items, val_fraction=0.0, seed=1)
    assert val0 == []
    with pytest.raises(ValueError):
        split_items(items, val_fraction=1.0, seed=1)


def test_no_question_shared_between_train_and_val(tmp_path):
    build(tmp_path, val_fraction=0.4)
    train, val = read_jsonl(tmp_path / "out" / "train.jsonl"), read_jsonl(tmp_path / "out" / "val.jsonl")
    assert not {normalize_text(r["question"]) for r in train} & {normalize_text(r["question"]) for r in val}
    mammals = [r for r in train + val if r["question"] == "Which of the following is a mammal?"]
    assert len(mammals) == 3 and len({r in train for r in mammals}) == 1  # one stem, one side


def test_cross_source_stem_collision_moves_to_train():
    def items_for(spec):
        out = [Item(rec(i, q, [f"{q} x", f"{q} y"], source=s), "f") for i, (s, q) in enumerate(spec)]
        for it in out:
            it.qkey, it.key = normalize_text(it.rec["question"]), dedupe_key(it.rec)
        return out

    base = [("a", f"Question {i}?") for i in range(10)]
    _, val, moved = split_items(items_for(base), val_fraction=0.1, seed=2)
    assert moved == 0 and len(val) == 1
    held = val[0].rec["question"]
    # another source (1 record, so always train) asks the same stem with other choices
    _, val2, moved2 = split_items(items_for(base + [("b", held)]), val_fraction=0.1, seed=2)
    assert moved2 == 1 and held not in {it.rec["question"] for it in val2}


def test_deterministic_for_a_seed(tmp_path):
    build(tmp_path / "a")
    build(tmp_path / "b")
    build(tmp_path / "c", seed=12)
    read = lambda d, f: (d / "out" / f).read_bytes()  # noqa: E731
    for f in ("train.jsonl", "val.jsonl"):
        assert read(tmp_path / "a", f) == read(tmp_path / "b", f)
    assert read(tmp_path / "a", "train.jsonl") != read(tmp_path / "c", "train.jsonl")


def test_strict_mode_names_file_line_and_field(tmp_path):
    bad = FX / "strict" / "kit_bad.jsonl"
    with pytest.raises(InputError) as err:
        build(tmp_path, sources=[bad], tolerant=False)
    msg = str(err.value)
    assert "kit_bad.jsonl" in msg and "line 3" in msg and "'answer'" in msg
    report = build(tmp_path, sources=[bad])
    assert report["dropped"] == {"answer_out_of_range": 1} and report["totals"]["kept"] == 3


def test_strict_validation_raises_located_and_tolerant_counts():
    bad = {"id": "r2", "question": "Bad?", "choices": ["a", "b"], "answer": 5, "source": "s"}
    items = [Item(rec(1, "Fine?", ["a", "b"]), "x.jsonl"), Item(bad, "x.jsonl")]
    with pytest.raises(RecordError) as err:
        validate_items(items, Ledger(), tolerant=False)
    assert "x.jsonl" in str(err.value) and "r2" in str(err.value) and "'answer'" in str(err.value)
    ledger = Ledger()
    assert len(validate_items(items, ledger)) == 1 and ledger.dropped == Counter(answer_out_of_range=1)


def test_generated_puzzles_are_counted_as_generated_not_read(tmp_path):
    base = build(tmp_path / "a")["totals"]
    report = build(tmp_path / "b", puzzles=12)
    t = report["totals"]
    assert t["generated"] == 12 and t["read"] == base["read"] and t["kept"] == base["kept"] + 12
    out = read_jsonl(tmp_path / "b" / "out" / "train.jsonl") + read_jsonl(tmp_path / "b" / "out" / "val.jsonl")
    assert sum(r["origin"] == "generated" for r in out) == 12


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "helpers.data", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_cli_happy_path(tmp_path):
    res = run_cli("build", *SOURCES, "--out", tmp_path / "cli", "--val-fraction", "0.25", "--seed", "11")
    assert res.returncode == 0, res.stderr
    assert "TOTAL" in res.stdout and "triviaqa" in res.stdout
    report = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert report["totals"]["kept"] == 61 and (tmp_path / "cli" / "train.jsonl").exists()


@pytest.mark.parametrize("args,needle", [
    (["build", FX / "missing.jsonl"], "missing.jsonl"),
    (["build", FX / "strict" / "kit_bad.jsonl", "--strict"], "line 3"),
    (["build", FX / "arc.jsonl", "--format", "nope"], "unknown format"),
    (["build", FX / "arc.jsonl", "--val-fraction", "1.5"], "val_fraction"),
])
def test_cli_errors_are_one_line_exit_2(tmp_path, args, needle):
    res = run_cli(*args, "--out", tmp_path / "err")
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in res.stderr, res.stderr


@pytest.mark.parametrize("choices,fixed", [
    (["red", "blue", "All of the above"], True), (["x", "Both A and B", "y"], True), (["None of these.", "q"], True),
    (["A and B", "c"], True), (["option C", "d"], True), (["(A) & (C)", "x"], True),
    (["Neither of the above", "z"], True),
    (["apple", "banana"], False), (["Sand and gravel", "b"], False), (["Vitamin A and iron", "q"], False),
    (["a and a half", "two"], False), (["the option of a loan", "a grant"], False),
])
def test_positional_choices_are_recognised(choices, fixed):
    assert data.positional(choices) is fixed


def test_report_plot_is_written(tmp_path):
    report = build(tmp_path)
    data.plot_report(report, tmp_path / "report.png")
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_conversion_in_strict_mode_stops_on_bad_input_but_counts_a_small_pool():
    items = [Item({"id": "q1", "source": "s", "question": "What is it?", "answer_text": "", "aliases": []}, "o.jsonl")]
    with pytest.raises(RecordError) as err:
        convert_items(items, Ledger(), seed=1, tolerant=False)
    assert "o.jsonl" in str(err.value) and "q1" in str(err.value) and "answer_text" in str(err.value)
    lonely = [Item({"id": "q2", "source": "s", "question": "What is it?", "answer_text": "zyx", "aliases": []}, "o")]
    ledger = Ledger()
    assert convert_items(lonely, ledger, seed=1, tolerant=False)[0] == []
    assert ledger.dropped == Counter(pool_too_small=1)


def test_letters_are_balanced_within_each_choice_count(tmp_path):
    report = build(tmp_path, sources=SOURCES + [FX / "two_choice.jsonl"])
    for side, groups in report["letters_by_choice_count"].items():
        assert set(groups) == {"2", "4"}, groups
        for n, counts in groups.items():
            assert len(counts) == int(n) and max(counts.values()) - min(counts.values()) <= 1, (side, n, counts)
