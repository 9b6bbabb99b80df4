"""Validation metrics on hand-made rows: accuracy by group, ECE, letter bias, base deltas; inputs; charts."""

from __future__ import annotations

import json

import pytest

from helpers import evaluate
from helpers.evaluate import plots as evalplots
from helpers.io import InputError


def _rec(i: int, answer: int, source: str = "kit/a", topic: str = "t", n: int = 4, **extra) -> dict:
    return {"id": f"q{i}", "source": source, "question": f"Question {i}?", "choices": [f"c{j}" for j in range(n)],
            "answer": answer, "topic": topic, **extra}


def _rows(spec: list[tuple[int, list[float], str]]) -> list[dict]:
    """(answer, probs, source) triples -> rows."""
    recs = [_rec(i, a, source=s, n=len(p)) for i, (a, p, s) in enumerate(spec)]
    return evaluate.make_rows(recs, [p for _, p, _ in spec], ["easy"] * len(spec))


def test_rows_pick_the_argmax_and_unparsed_counts_as_wrong():
    recs = [_rec(0, 1), _rec(1, 0), _rec(2, 2, n=3)]
    rows = evaluate.make_rows(recs, [[0.1, 0.6, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25], None], ["easy", "hard", "easy"])
    assert [r["pred"] for r in rows] == [1, 0, None]
    assert [r["correct"] for r in rows] == [True, True, False]
    assert rows[1]["pred_letter"] == "A"  # a tie goes to the first letter, as argmax does
    assert rows[2]["probs"] == pytest.approx([1 / 3] * 3) and rows[2]["parsed"] is False
    with pytest.raises(ValueError, match="3 probabilities for 4 choices"):
        evaluate.make_rows([_rec(0, 0)], [[0.2, 0.3, 0.5]], ["easy"])


def test_accuracy_by_group_with_wilson_interval():
    rows = _rows([(0, [0.9, 0.1], "a"), (0, [0.2, 0.8], "a"), (1, [0.3, 0.7], "a"), (1, [0.4, 0.6], "b")])
    overall = evaluate.accuracy_by(rows)
    assert overall == [pytest.approx({"group": "all", "n": 4, "correct": 3, "accuracy": 0.75,
                                      "ci_low": overall[0]["ci_low"], "ci_high": overall[0]["ci_high"]})]
    by = {r["group"]: r for r in evaluate.accuracy_by(rows, "source")}
    assert by["a"]["n"] == 3 and by["a"]["accuracy"] == pytest.approx(2 / 3) and by["b"]["accuracy"] == 1.0
    lo, hi = evaluate.wilson(3, 4)
    # Wilson 95% for 3/4: centre (0.75 + 1.96^2/8) / (1 + 1.96^2/4) = 0.6275, half-width 0.3269
    assert lo == pytest.approx(0.3006, abs=1e-3) and hi == pytest.approx(0.9544, abs=1e-3)
    assert (by["a"]["ci_low"], by["a"]["ci_high"]) == pytest.approx(evaluate.wilson(2, 3))
    assert evaluate.wilson(0, 10)[0] == 0.0 and evaluate.wilson(10, 10)[1] == 1.0


def test_expected_calibration_error_by_hand():
    # confidences 0.95 (2 rows: 1 right) and 0.55 (2 rows: both right), 10 bins
    rows = _rows([(0, [0.95, 0.05], "s"), (1, [0.95, 0.05], "s"), (0, [0.55, 0.45], "s"), (1, [0.45, 0.55], "s")])
    cal = evaluate.calibration(rows, bins=10)
    # bin 0.9-1.0: confidence 0.95, accuracy 0.5 -> gap 0.45; bin 0.5-0.6: confidence 0.55, accuracy 1.0 -> 0.45
    assert cal["ece"] == pytest.approx(0.5 * 0.45 + 0.5 * 0.45)
    filled = [b for b in cal["bins"] if b["n"]]
    assert [(b["low"], b["n"]) for b in filled] == [(pytest.approx(0.5), 2), (pytest.approx(0.9), 2)]
    assert filled[1]["accuracy"] == 0.5 and filled[0]["confidence"] == pytest.approx(0.55)
    assert cal["mean_confidence"] == pytest.approx(0.75)
    perfect = _rows([(0, [1.0, 0.0], "s")] * 3)
    assert evaluate.calibration(perfect)["ece"] == pytest.approx(0.0)  # confidence 1.0 lands in the top bin


def test_letter_bias_counts_predictions_against_answers():
    # a model stuck on "A": answers are A, B, C, D once each
    rows = _rows([(j, [0.7, 0.1, 0.1, 0.1], "s") for j in range(4)])
    bias = {b["letter"]: b for b in evaluate.letter_bias(rows)}
    assert bias["A"]["predicted"] == 4 and bias["A"]["answer"] == 1 and bias["A"]["precision"] == 0.25
    assert bias["B"]["predicted"] == 0 and bias["B"]["answer_share"] == 0.25 and bias["B"]["precision"] is None
    recs = [_rec(0, 0), _rec(1, 1)]
    unparsed = evaluate.letter_bias(evaluate.make_rows(recs, [None, [0.1, 0.9, 0.0, 0.0]], ["easy"] * 2))
    assert unparsed[-1]["letter"] == "none" and unparsed[-1]["predicted"] == 1


def test_deltas_show_forgetting_per_source():
    base = _rows([(0, [0.9, 0.1], "old"), (0, [0.9, 0.1], "old"), (1, [0.9, 0.1], "new"), (1, [0.9, 0.1], "new")])
    tuned = _rows([(0, [0.9, 0.1], "old"), (0, [0.1, 0.9], "old"), (1, [0.1, 0.9], "new"), (1, [0.1, 0.9], "new")])
    d = {r["group"]: r for r in evaluate.deltas(base, tuned, "source")}
    assert d["old"]["delta"] == pytest.approx(-0.5) and d["old"]["lost"] == 1 and d["old"]["gained"] == 0
    assert d["new"]["delta"] == pytest.approx(1.0) and d["new"]["gained"] == 2
    with pytest.raises(ValueError, match="not scored for the base"):
        evaluate.deltas(base[:1], tuned)


def test_summary_holds_every_table():
    rows = _rows([(0, [0.9, 0.1], "a"), (1, [0.9, 0.1], "b")])
    s = evaluate.summarise(rows)
    assert s["accuracy"] == 0.5 and s["n"] == 2 and s["parse_rate"] == 1.0
    assert {"by_source", "by_topic", "by_bucket", "calibration", "letter_bias"} <= set(s)
    json.dumps(s)  # goes into eval/summary.json as is


def test_val_loading_names_file_line_and_field(tmp_path):
    path = tmp_path / "val.jsonl"
    path.write_text(json.dumps(_rec(0, 1)) + "\n" + json.dumps(_rec(1, 9)) + "\n")
    with pytest.raises(InputError, match=r"val\.jsonl: record line 2: field 'answer'"):
        evaluate.load_val(path)
    path.write_text(json.dumps(_rec(0, 1)) + "\n" + json.dumps(_rec(0, 2)) + "\n")
    with pytest.raises(InputError, match=r"record line 2: field 'id'.*repeats line 1"):
        evaluate.load_val(path)
    path.write_text("".join(json.dumps(_rec(i, 0)) + "\n" for i in range(5)))
    assert [r["id"] for r in evaluate.load_val(path, max_questions=3)] == ["q0", "q1", "q2"]
    with pytest.raises(InputError, match="not found: run notebooks/01"):
        evaluate.load_val(tmp_path / "nope.jsonl")


def test_eval_rows_round_trip_and_bad_rows_are_located(tmp_path):
    from helpers import io
    rows = _rows([(0, [0.9, 0.1], "a"), (1, [0.3, 0.7], "b")])
    path = tmp_path / "m.jsonl"
    io.write_jsonl(path, rows)
    assert evaluate.read_rows(path) == rows
    broken = dict(rows[1])
    del broken["probs"]
    io.write_jsonl(path, [rows[0], broken])
    with pytest.raises(InputError, match=r"m\.jsonl: record line 2: field 'probs'"):
        evaluate.read_rows(path)


def test_buckets_follow_the_curriculum_scorer():
    from helpers import difficulty
    recs = [_rec(0, 0, source="puzzles/family", difficulty=8.0, origin="generated"),
            _rec(1, 0, source="puzzles/family", difficulty=1.0, origin="generated"), _rec(2, 0, source="kit/a")]
    got = evaluate.assign_buckets(recs)
    assert got[:2] == ["hard", "easy"]  # a generated puzzle keeps its own difficulty, as in notebook 02
    assert got[2] == difficulty.bucket(difficulty.heuristic_score(recs[2]))
    assert evaluate.assign_buckets(recs, lambda r: 6.0) == ["medium"] * 3


def test_charts_are_written(tmp_path):
    rows = _rows([(0, [0.9, 0.1], "a"), (1, [0.2, 0.8], "b"), (1, [0.6, 0.4], "b")])
    other = _rows([(0, [0.4, 0.6], "a"), (1, [0.2, 0.8], "b"), (1, [0.3, 0.7], "b")])
    s = {"base": evaluate.summarise(rows), "m1": evaluate.summarise(other)}
    paths = [tmp_path / f"{k}.png" for k in ("acc", "rel", "bias", "delta")]
    evalplots.plot_group_accuracy({k: v["by_source"] for k, v in s.items()}, paths[0], chance=0.5)
    evalplots.plot_reliability({k: v["calibration"] for k, v in s.items()}, paths[1])
    evalplots.plot_letter_bias({k: v["letter_bias"] for k, v in s.items()}, paths[2])
    evalplots.plot_deltas({"m1": evaluate.deltas(rows, other)}, paths[3])
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


def test_favourite_letter_flags_a_collapse_and_not_a_learner():
    learner = _rows([(j % 4, [0.7 if k == j % 4 else 0.1 for k in range(4)], "kit/a") for j in range(8)])
    fav = evaluate.favourite_letter(learner)
    assert fav["share"] == 0.25 and fav["key_share"] == 0.25 and not fav["collapsed"]
    stuck = _rows([(j % 4, [0.1, 0.7, 0.1, 0.1] if j < 5 else [0.7, 0.1, 0.1, 0.1], "kit/a") for j in range(8)])
    fav = evaluate.favourite_letter(stuck)  # "B" on 5 of 8 (62.5%) where the key is B on 2
    assert fav == {"letter": "B", "share": 0.625, "key_share": 0.25, "collapsed": True}
    assert evaluate.summarise(stuck)["favourite"]["collapsed"]
    just_under = _rows([(0, [0.1, 0.7, 0.1, 0.1] if j < 11 else [0.7, 0.1, 0.1, 0.1], "kit/a") for j in range(20)])
    assert evaluate.favourite_letter(just_under)["share"] == 0.55 and not evaluate.favourite_letter(just_under)["collapsed"]


def test_a_favourite_the_key_itself_leans_to_is_not_a_collapse():
    key_b = _rows([(1 if j < 6 else 0, [0.1, 0.7, 0.1, 0.1] if j < 6 else [0.7, 0.1, 0.1, 0.1], "kit/a")
                   for j in range(10)])  # a perfect model on a key that is "B" on 60%
    fav = evaluate.favourite_letter(key_b)
    assert fav["share"] == 0.6 and fav["key_share"] == 0.6 and not fav["collapsed"]
    two = _rows([(j % 2, [0.6, 0.4] if j < 6 else [0.4, 0.6], "winogrande") for j in range(10)])
    assert not evaluate.favourite_letter(two)["collapsed"]  # 2 choices: "A" on 60% where the key is "A" on 50%
