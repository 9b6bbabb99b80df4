"""`make bench`'s verdict on hand-made rows: missed goals and crashed benchmarks fail the run, goal-less rows never."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_all  # noqa: E402


row = bench_all._row


def _met_table() -> list[dict]:
    return [row("data", "50,000 rows: build + curriculum", 2.85, "< 5 s", True, "s"),
            row("scoring", "letters / generate (questions/s)", 2.82, ">= 1.5", True, "x"),
            row("memory", "Qwen2.5-3B fp32 b1 x 1024 r8 on MI50", "est. 14.9 GiB: fits", "fits", True)]


def test_a_table_with_every_goal_met_exits_zero():
    assert bench_all.missed_goals(_met_table()) == []
    assert bench_all.exit_status(_met_table()) == 0


def test_one_missed_goal_exits_non_zero_and_is_named():
    rows = _met_table() + [row("train", "kit / plain Trainer (real tokens/s)", 0.8, ">= 1.0", False, "x")]
    assert bench_all.missed_goals(rows) == [
        "[bench] goal missed: train / kit / plain Trainer (real tokens/s): 0.80x, goal >= 1.0"]
    assert bench_all.exit_status(rows) == 1


def test_a_crashed_benchmark_exits_non_zero_and_is_named():
    rows = _met_table() + [row("agents", "failed", "failed: RuntimeError: no model", "", False)]
    assert bench_all.missed_goals(rows) == ["[bench] agents failed: RuntimeError: no model"]
    assert bench_all.exit_status(rows) == 1


@pytest.mark.parametrize("met", [None, False, True])
def test_a_row_without_a_goal_never_fails_the_run(met):
    rows = _met_table() + [row("data", "5,000 rows: records/s", 120_000.0, "", met, "/s")]
    assert bench_all.missed_goals(rows) == []
    assert bench_all.exit_status(rows) == 0


def test_agreement_with_nothing_parsed_is_not_met():
    got = bench_all.agreement_row("scoring", "same pick", float("nan"), {"generate": 0.0}, 0.5)
    assert (got["value"], got["met"], got["goal"]) == ("n/a: generate parsed 0%", False, "100%, parsed >= 50%")
    assert bench_all.missed_goals([got]) == [
        "[bench] goal missed: scoring / same pick: n/a: generate parsed 0%, goal 100%, parsed >= 50%"]
    assert bench_all.exit_status([got]) == 1


def test_agreement_needs_every_method_over_the_minimum():
    got = bench_all.agreement_row("scoring", "same pick", 1.0, {"letters": 1.0, "generate": 0.49}, 0.5)
    assert (got["value"], got["met"]) == ("n/a: generate parsed 49%", False)


@pytest.mark.parametrize("agreement, met", [(1.0, True), (0.95, False)])
def test_agreement_over_the_minimum_is_judged_on_the_picks(agreement, met):
    got = bench_all.agreement_row("scoring", "same pick", agreement, {"generate": 0.5}, 0.5)
    assert (got["value"], got["met"], got["unit"]) == (agreement, met, "share")
    assert bench_all.exit_status([got]) == (0 if met else 1)


def test_the_scoring_rows_carry_the_parsed_share():
    res = {"ratio": 2.0, "parsed": 3, "questions": 96, "agreement": 1.0, "baseline_parse_rate": 3 / 96,
           "questions_per_s": {"letters": 800.0}, "model": "tiny"}
    same = bench_all._scoring_rows("scoring", res, 1.5, 0.5)[1]
    assert (same["figure"], same["value"], same["met"]) == (
        "same pick where generate parsed (3/96)", "n/a: generate parsed 3%", False)


# ---------------------------------------------------------------- the CI tier (make bench-quick)
CACHE_ROW = "letters / letters without the shared-head cache (questions/s)"


def test_a_ci_ratio_under_its_floor_fails_the_run_and_is_named():
    bound = bench_all.CI_BOUNDS["prefix_cache"]
    low = bench_all._bound_row("scoring", CACHE_ROW, 1.0, "prefix_cache")
    assert bench_all.missed_goals([low]) == [f"[bench] goal missed: scoring / {CACHE_ROW}: 1.00x, goal >= {bound}"]
    assert bench_all.exit_status([bench_all._bound_row("scoring", CACHE_ROW, bound, "prefix_cache")]) == 0


@pytest.mark.parametrize("growth, status", [(3.0, 0), (9.0, 1)])
def test_the_data_growth_bound_is_a_ceiling(growth, status):
    row = bench_all._bound_row("data", "time 60,000 / time 20,000 (cpu)", growth, "data_growth_cpu", upper=True)
    assert (row["goal"], bench_all.exit_status([row])) == (f"<= {bench_all.CI_BOUNDS['data_growth_cpu']}", status)


def test_without_needs_the_ci_tier(capsys):
    assert bench_all.main(["--without", "prefix-cache"]) == 2
    assert "--without needs --ci" in capsys.readouterr().err

# ---------------------------------------------------------------- bench/cpu_figures.py on a fabricated run
import cpu_figures  # noqa: E402
from helpers import io, pipeline  # noqa: E402
from helpers.layout import NOTEBOOKS as STAGES, RunLayout  # noqa: E402

NOTEBOOKS = tuple(STAGES.values())  # the stage names, from the run layout


def _member(acc: float, lo: float, hi: float, letter: str, share: float, arc: float = 0.41) -> dict:
    sources = [{"group": "arc_challenge", "n": 22, "accuracy": arc, "ci_low": 0.1, "ci_high": 0.6},
               {"group": "winogrande", "n": 113, "accuracy": 0.6 if arc < 0.41 else 0.53, "ci_low": 0.2,
                "ci_high": 0.7},
               {"group": "sciq", "n": 6, "accuracy": 0.5, "ci_low": 0.3 if arc < 0.15 else 0.2, "ci_high": 0.8}]
    return {"accuracy": acc, "ci95": [lo, hi], "favourite": {"letter": letter, "share": share, "key_share": 0.26},
            "by_source": sources}


def _adapters(lay: RunLayout) -> None:
    for name, method, r, steps, secs, tps, gib in (("model1_lora", "lora", 8, 140, 420.0, 190.4, 5.0),
                                                   ("model2_rslora", "rslora", 16, 140, 420.0, 180.0, 5.2),
                                                   ("model3_dora", "dora", 8, 140, 420.0, 149.0, 7.5)):
        io.write_json(lay.model_summary(name), {"method": method, "params": {"spec": {"r": r}}, "global_steps": steps,
                                                "train_seconds": secs, "tokens_per_s": tps, "peak_memory": {"gib": gib},
                                                "first_loss": 4.5, "last_loss": 0.7})
    for name, steps, secs, first, last in (("writer", 60, 312.0, 2.37, 0.67), ("reasoner", 60, 360.0, 1.75, 0.67)):
        io.write_json(lay.model_summary(name), {"method": "lora", "global_steps": steps, "train_seconds": secs,
                                                "first_loss": first, "last_loss": last})


def _eval_and_ensemble(lay: RunLayout) -> None:
    io.write_json(lay.data_report, {"totals": {"train": 2102, "val": 373}})
    models = {"base": _member(0.279, 0.236, 0.326, "B", 0.54),
              "model1_lora": _member(0.268, 0.226, 0.315, "B", 0.42, arc=0.14),
              "model2_rslora": _member(0.279, 0.236, 0.326, "B", 0.45, arc=0.18),
              "model3_dora": _member(0.268, 0.226, 0.315, "B", 0.43, arc=0.16)}
    cmp = {"member": "model1_lora", "ratio": 1.49, "questions_per_s": {"letters": 6.1, "generate": 4.1},
           "agreeing": 48, "parsed": 48, "baseline_parse_rate": 1.0, "letter_only_rate": 1.0,
           "base_parse_rate": 0.96, "base_letter_only_rate": 0.0}
    io.write_json(lay.eval_summary, {"models": models, "comparison": cmp})
    io.write_json(lay.ensemble_summary, {"candidates": {f"c{i}": {"heldout_accuracy": a} for i, a in
                                                        enumerate((0.227, 0.243, 0.235, 0.24, 0.23, 0.231, 0.238))}})
    team = {"format_correct": 200, "requested": 200, "question_p99_s": 4.6, "answer_p99_s": 1.9}
    io.write_json(lay.tournament, {"match": {"scores": {"kit": {**team, "total": 105},
                                                        "base": {**team, "total": 95}}}})


def _writer_and_reasoner(lay: RunLayout) -> None:
    io.write_jsonl(lay.writer_data, [{"n": i} for i in range(480)])
    io.write_jsonl(lay.reasoner_data, [{"n": i} for i in range(480)])
    base = {"requests": 24, "json_share": 0.0, "filter_share": 0.0, "proven_share": 0.0, "proven": 0,
            "seconds_p50": 4.55, "seconds_p90": 4.56, "rejected": {"no_json": 24}}
    writer = {**base, "json_share": 0.75, "filter_share": 0.25, "seconds_p50": 4.39, "seconds_p90": 4.55,
              "rejected": {"no_json": 6, "not_four_choices": 7}}
    io.write_json(lay.writer_report, {"budget_s": 5.0, "base": base, "writer": writer})
    levels = {"letter": ((5, 24), (4, 12), (5, 12)), "reason": ((7, 24), (4, 12), (3, 12))}

    def mode(name: str, p50: float, p99: float, cut: float, tokens: float, fav: str, share: float) -> dict:
        return {"correct": 14, "n": 48, "accuracy": 14 / 48, "ci95": [0.18, 0.43], "cut_share": cut,
                "tokens_mean": tokens, "latency": {"p50_s": p50, "p99_s": p99, "limit_s": 6.0},
                "favourite": {"letter": fav, "share": share},
                "by_level": {str(i + 1): {"correct": c, "n": n} for i, (c, n) in enumerate(levels[name])}}
    io.write_json(lay.reasoner_report, {"letter": mode("letter", 0.14, 0.23, 0.0, 0.0, "C", 0.52),
                                        "reason": mode("reason", 2.82, 2.87, 0.88, 26.0, "C", 0.71)})


def _fabricated_run(root: Path) -> RunLayout:
    """A run folder holding just the fields cpu_figures reads, at the values docs/results.md quotes."""
    lay = RunLayout(root)
    _adapters(lay)
    _eval_and_ensemble(lay)
    _writer_and_reasoner(lay)
    # the run of results.md came before notebook 08 was split in three: 09 and 10 are 0 s here, 08 is the old 08
    seconds = (5, 4, 3, 546, 498, 666, 384, 6, 150, 0, 0)
    io.write_json(lay.pipeline_record, {
        "params": {"PROFILE": "cpu", "RUN": root.name, "OVERRIDES": {}}, "source": pipeline.source_fingerprint(),
        "versions": io.versions(),
        "stages": [{"notebook": f"{nb}.ipynb", "status": "ok", "seconds": s} for nb, s in zip(NOTEBOOKS, seconds)]})
    lay.terminal_log.write_text("")
    return lay


def test_cpu_figures_print_the_results_page_lines(tmp_path):
    out = cpu_figures.figures(_fabricated_run(tmp_path).root)
    for line in ("2,102 training and 373 validation questions; optimizer steps per adapter: model1_lora 140, "
                 "model2_rslora 140, model3_dora 140",
                 "| base | 27.9% (23.6-32.6%) | B on 54% (key 26%) | 96% / 0% |",
                 "| LoRA r 8 | 26.8% (22.6-31.5%) | B on 42% | 100% / 100% |",
                 "| rsLoRA r 16 | 27.9% (23.6-32.6%) | B on 45% |  |",
                 "| arc_challenge | 22 | 41% -> 14-18% | yes |", "| winogrande | 113 | 53% -> 60% | yes |",
                 "| sciq | 6 | 50% -> 50% | NO |",
                 "The 7-way ensemble search of notebook 07 ends at 22.7-24.3% on its held-out half.",
                 "2,262 s (38 min) in the notebooks: 03 9.1 min, 04 8.3 min, 05 11.1 min, 06 6.4 min, 08 2.5 min; "
                 "the rest under 10 s each",
                 "~3.0 s a step; loss LoRA 4.50 -> 0.70, rsLoRA 4.50 -> 0.70, DoRA 4.50 -> 0.70; real tokens/s "
                 "LoRA 190, rsLoRA 180, DoRA 149; peak RSS LoRA 5.0 GiB, rsLoRA 5.2 GiB, "
                 "DoRA 7.5 GiB",
                 "Letter scoring ran 1.49x the questions/s of generate-and-parse on model1_lora (6.1 against 4.1) with "
                 "the same letter on 48 of 48",
                 "The match at home: the kit 105, the base 95 of 200; every question and answer "
                 "format-correct; p99 4.6 s per question and 1.9 s per answer",
                 "480 chats, 60 steps in 5.2 min (loss 2.37 to 0.67); 24 requests for each model, each on the 5 s "
                 "budget",
                 "| base | 0% | 0% | 0% (0/24) | 4.55 / 4.56 | no JSON 24 |",
                 "| trained writer | 75% | 25% | 0% (0/24) | 4.39 / 4.55 | not four choices 7, no JSON 6 |",
                 "| letter-only | 14/48 (29%) | 18-43% | 0.14 / 0.23 | - | - | C 52% |",
                 "| reasoning, 3 s | 14/48 (29%) | 18-43% | 2.82 / 2.87 | 88% | 26 | C 71% |",
                 "By level, letter-only 5/24, 4/12, 5/12 and reasoning 7/24, 4/12, 3/12 (levels 1, 2, 3)"):
        assert line in out, line
    assert out[0].endswith("profile cpu, current")


def test_cpu_figures_name_a_missing_file_and_print_the_rest(tmp_path):
    lay = _fabricated_run(tmp_path)
    lay.writer_report.unlink()
    out = cpu_figures.figures(lay.root)
    gap = out[out.index("## The question writer") + 1]
    assert gap.startswith("not available: FileNotFoundError") and "writer.json" in gap
    assert "| letter-only | 14/48 (29%) | 18-43% | 0.14 / 0.23 | - | - | C 52% |" in out


def test_cpu_figures_take_a_run_only_when_it_is_a_complete_cpu_run_of_this_code(tmp_path):
    lay = _fabricated_run(tmp_path)
    assert cpu_figures.main(["--complete", str(lay.root)]) == 0
    record = io.read_json(lay.pipeline_record)
    for change in ({"stages": [*record["stages"][:-1], {**record["stages"][-1], "status": "failed"}]},
                   {"source": "0" * 64}, {"params": {**record["params"], "OVERRIDES": {"seed": 1}}}):
        io.write_json(lay.pipeline_record, {**record, **change})
        assert cpu_figures.main(["--complete", str(lay.root)]) == 1, change
        assert "NOT current" in cpu_figures.figures(lay.root)[0]
    assert cpu_figures.main(["--complete", str(tmp_path / "nowhere")]) == 1
