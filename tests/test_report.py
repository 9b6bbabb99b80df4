"""helpers.report: the run report from fabricated run folders (every section, none, malformed files)."""

from __future__ import annotations

import base64
import json
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from helpers import config, pipeline, report
from helpers.layout import NOTEBOOKS

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("model1_lora", "model2_rslora", "model3_dora")
PNG_SIG = b"\x89PNG\r\n\x1a\n"


def _png(path: Path) -> None:
    """A valid 1x1 PNG (no matplotlib needed)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(PNG_SIG + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


def _json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


def make_run(run: Path) -> Path:
    """A run folder with every stage's artifacts, small and with distinctive numbers."""
    _json(run / "pipeline.json", {"stages": [{"notebook": f"{v}.ipynb", "status": "ok", "seconds": 1.5}
                                             for v in NOTEBOOKS.values()], "params": {"PROFILE": "smoke"}})
    for v in NOTEBOOKS.values():
        _json(run / "notebooks" / f"{v}.ipynb", {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    _json(run / "env.json", {
        "params": {"models": {m: {} for m in MODELS}}, "summary": {"pass": 20, "info": 0, "warn": 1, "fail": 0,
                                                                   "worst": "warn"},
        "facts": {"backend": "rocm", "gpu": {"name": "AMD Instinct MI300X", "vram_total_gib": 191.69},
                  "system": {"cpu_usable": 2, "ram_total_gib": 23.5}, "torch": {"version": "2.4.1+rocm6.0"}},
        "checks": [{"id": "x", "status": "pass", "title": "fine"},
                   {"id": "hf", "status": "warn", "title": "big | cache", "message": "578 GiB in *cache*",
                    "fix": "delete [old] snapshots"}],
        "recommendation": {"dtype": {"value": "bfloat16", "reason": "MI300X has bf16"},
                           "use_unsloth": {"value": False, "reason": "unsloth 2026.10.9 needs what this Python "
                                                                     "lacks: transformers 4.51.3"}},
        "fit": {"device_gib": 191.69, "rows": [{"model": "Qwen/Qwen2.5-72B-Instruct", "params_b": 72.71,
                                                "total_gib": 155.5, "fits": True}]},
        "rl_memory": {"peak_gib": 171.2, "phase": "training"},
        "reasoning_tokens": {"tokens": 100, "decode_ms_per_token": 27, "answer_budget_s": 3.0},
        "time_plan": {"sources": [{"source": "hub:sciq@nosuch", "rows": None, "how": "unknown: no split 'nosuch'"}],
                      "puzzles": 5000, "examples": 5000, "train": 4500, "val": 500, "unknown": ["hub:sciq@nosuch"],
                      "chunks": [{"fresh": 4500, "replayed": 0, "examples": 4500, "steps": 282}], "steps": 282,
                      "step_seconds": 4.5, "hours": {"model1_lora": 0.3525, "model3_dora": 0.423}}})
    _png(run / "env" / "fit.png")
    _json(run / "data" / "report.json", {
        "totals": {"read": 4321, "generated": 600, "converted": 310, "unlabeled": 2, "dropped": 17, "kept": 4902,
                   "train": 4167, "val": 735}, "dropped": {"duplicate": 15, "bad_answer": 2},
        "per_source": {"kit/geo": {"read": 4321, "generated": 0, "converted": 310, "dropped": 17, "kept": 4302,
                                   "train": 3657, "val": 645}},
        "letters": {"val": {"A": 184, "B": 184, "C": 184, "D": 183}}})
    _png(run / "data" / "report.png")
    _json(run / "curriculum" / "stats.json", {
        "files": {"difficulty_plot": "curriculum/difficulty.png", "chunk_mix_plot": "curriculum/chunk_mix.png"},
        "schedule": {"lr": [0.0002, 0.0001], "replay": [0.1, 0.2]},
        "stats": {"n": 4167, "thresholds": {"easy_below": 5.3, "hard_from": 6.6},
                  "buckets": {"easy": 2000, "medium": 1167, "hard": 1000},
                  "bucket_share": {"easy": 0.48, "medium": 0.28, "hard": 0.24},
                  "per_chunk": [{"chunk": 0, "n": 2084, "buckets": {"easy": 2000, "medium": 84, "hard": 0},
                                 "sources": {"kit/geo": 2084}, "replayed": 0, "mean_difficulty": 4.1},
                                {"chunk": 1, "n": 2083, "buckets": {"easy": 0, "medium": 1083, "hard": 1000},
                                 "sources": {"kit/geo": 2083}, "replayed": 0, "mean_difficulty": 6.9}]}})
    for rel in ("curriculum/difficulty.png", "curriculum/chunk_mix.png"):
        _png(run / rel)
    for i, m in enumerate(MODELS):
        _json(run / "models" / m / "summary.json", {
            "params": {"spec": {"r": 64 * (i + 1), "alpha": 128}}, "model": m, "method": m.split("_")[1],
            "complete": True, "chunks_done": 2, "chunks_total": 2, "global_steps": 344, "first_loss": 1.089,
            "last_loss": 0.833 - i / 100, "chunk_losses": [0.9, 0.833], "tokens_per_s": 1234.5,
            "train_seconds": 3600, "peak_memory": {"kind": "vram", "gib": 150.5 + i}, "warnings": []})
        _png(run / "models" / m / "training.png")
    _json(run / "eval" / "summary.json", {
        "method": "letters", "n_questions": 8, "members": ["base", *MODELS], "skipped": {}, "chance": 0.25,
        "models": {m: {"n": 8, "accuracy": 0.375 + i / 8, "ci95": [0.1, 0.7], "parse_rate": 1.0,
                       "calibration": {"ece": 0.123},
                       "favourite": {"letter": "B", "share": 0.75 if m == "model2_rslora" else 0.375,
                                     "key_share": 0.25, "collapsed": m == "model2_rslora"}}
                   for i, m in enumerate(["base", *MODELS])},
        "timing": {m: {"questions_per_s": 55.5} for m in ["base", *MODELS]},
        "comparison": {"ratio": 3.21, "member": "model1_lora", "baseline_parse_rate": 0.5, "agreeing": 4,
                       "parsed": 4, "letter_only_rate": 0.5, "base_parse_rate": 0.75, "base_letter_only_rate": 0.0}})
    (run / "eval" / "base.jsonl").write_text("".join(
        json.dumps({"id": f"q{k}", "correct": k in (1, 5, 7, 8)}) + "\n" for k in range(1, 9)))
    _png(run / "eval" / "accuracy.png")
    _json(run / "ensemble" / "summary.json", {
        "method": "soft", "candidate": "soft_fitted", "members": list(MODELS),
        "weights": {"model1_lora": 0.5, "model2_rslora": 0.3, "model3_dora": 0.2}, "best_member": "model1_lora",
        "accuracy": 0.777, "heldout_accuracy": {"soft_fitted": 0.777, "model1_lora": 0.611, "model2_rslora": 0.555,
                                                "model3_dora": 0.444, "oracle": 0.888},
        "candidates": {"soft_fitted": {"method": "soft", "cv_accuracy": 0.7, "fit_accuracy": 0.72,
                                       "heldout_accuracy": 0.777, "weights": {"model1_lora": 0.5}}},
        "member_scores": {m: {} for m in MODELS}, "oracle_heldout": 0.888,
        "agreement_heldout": {"model1_lora": {"model1_lora": 1.0, "model2_rslora": 0.66},
                              "model2_rslora": {"model1_lora": 0.66, "model2_rslora": 1.0}},
        "fit_items": 4, "heldout_items": 4, "heldout_ids": ["q5", "q6", "q7", "q8"]})
    for n in ("accuracy", "agreement", "weights"):
        _png(run / "ensemble" / f"{n}.png")
    score = {"q_score": 65.0, "a_score": 86.0, "total": 151.0, "format_correct": 20, "requested": 20,
             "disqualified": False, "question_p99_s": 0.012, "answer_p99_s": 0.3}
    lat = {"items": 20, "p50_s": 0.01, "p99_s": 0.02, "max_s": 0.03, "limit_s": 6.0, "over_limit": 0}
    _json(run / "agents" / "tournament.json", {
        "match": {"scores": {"kit": score, "base": {**score, "total": 97.5}}, "winner": "kit", "decided_by": "score"},
        "seeds_replay": {"scores": {"kit": score, "seeds-format": {**score, "format_correct": 0,
                                                                   "disqualified": True}},
                         "winner": "kit", "decided_by": "disqualification"},
        "selection": {"members": list(MODELS), "method": "soft"},
        "questions": {"requested": 10, "format_correct": 10}, "answers": {"answers": 10, "passed_filter": 10,
                                                                          "against_keys": {"correct": 7, "keyed": 10}},
        "latency": {"questions": lat, "answers": lat}})
    for n in ("latency", "match"):
        _png(run / "agents" / f"{n}.png")
    _json(run / "agents" / "elimination.json", {
        "questions": 60, "correct": 40, "edition": "2025-10-aiac",
        "against_own": [{"topic": "Seating", "seeding_n": 30, "seeding_accuracy": 0.5, "own_n": 10,
                         "own_accuracy": 0.9, "gap_points": 40.0}]})
    writer = {"requests": 24, "json_share": 1.0, "filter_share": 0.625, "proven_share": 0.375, "proven": 9,
              "seconds_mean": 3.21, "seconds_p90": 4.44, "rejected": {"unproven:unknown_text": 9, "no_json": 2},
              "accepted": [{"question": "Ana is Ben's mother. Who is Ana to Ben?", "choices": ["A) mother", "B) aunt",
                                                                                              "C) sister", "D) niece"],
                            "answer": "A"}]}
    _json(run / "agents" / "writer.json", {"base": {**writer, "json_share": 0.0, "filter_share": 0.0,
                                                    "proven_share": 0.0, "proven": 0, "accepted": []},
                                           "writer": writer, "budget_s": 5.0,
                                           "why": "model_question_share 0: the trained writer proves 38%"})
    _json(run / "agents" / "reasoner.json", {m: _reasoner_side(*v) for m, v in REASONER_SIDES.items()}
          | {"why": "answer_mode reason: reasoning answered 30/48 (62%)", "reasoner_member": "reasoner_rl"})
    _json(run / "agents" / "reasoner_rl.json", {
        "steps": 20, "seconds_per_step": 31.5, "token_budget": 27, "trl": "1.16.0", "start": {"from": "supervised"},
        "backend": "transformers", "kl_reference": "the starting adapter (trl's frozen copy, \"ref\")",
        "gradient_checkpointing": {"enabled": True, "use_reentrant": False}, "zero_reasons": {"correct:no_letter": 3},
        "rewards": {"first": {"correct": 0.25, "format": 0.5, "length": -0.2},
                    "last": {"correct": 0.375, "format": 0.75, "length": 0.1}},
        "rewards_overall": {"correct": 0.3, "format": 0.6, "length": 0.0},
        "rewards_by_kind": {"family": {"correct": 0.4, "format": 0.7, "length": 0.2}},
        "rewards_by_kind_half": {"family": {"first": {"correct": 0.25, "format": 0.6, "length": 0.1},
                                            "last": {"correct": 0.5, "format": 0.8, "length": 0.3}}},
        "plot": "models/reasoner_rl/training.png"})
    _png(run / "models" / "reasoner_rl" / "training.png")
    return run


# mode: (correct, p50, p99, cut, favourite letter, favourite share)
REASONER_SIDES = {"letter": (12, 0.02, 0.04, 0.0, "C", 0.4), "reason": (30, 2.9, 3.1, 0.75, "B", 0.3),
                  "rl": (36, 2.1, 2.8, 0.5, "A", 0.3)}


def _reasoner_side(correct, p50, p99, cut, fav, share) -> dict:
    kinds = {"family": {"n": 24, "correct": correct // 2, "accuracy": correct / 48},
             "seating_linear": {"n": 24, "correct": correct - correct // 2, "accuracy": correct / 48}}
    first = {"all": {"valid": correct // 6, "invalid": 4, "unreadable": 2}} if cut else {}
    return {"n": 48, "correct": correct, "accuracy": correct / 48, "ci95": [0.1, 0.9], "first_step": first,
            "latency": {"p50_s": p50, "p99_s": p99, "limit_s": 6.0}, "cut_share": cut, "tokens_mean": 40.0,
            "favourite": {"letter": fav, "share": share}, "filter_failed": 0, "by_kind": kinds,
            "by_level": {"1": {"n": 48, "correct": correct, "accuracy": correct / 48}},
            "examples": [{"question": "q", "key": "B", "answer": "B", "reasoning": "Ravi's mother's brother is Tom"}]}


def table_after(md: str, heading: str, index: int = 0) -> list[list[str]]:
    """The rows (cells stripped) of the index-th table after a heading line (and before the next ## heading)."""
    rest = md.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    lines = [b.strip() for b in rest.split("\n\n") if b.strip().startswith("|")][index].splitlines()
    return [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines if not ln.startswith("| ---")]


def row(table: list[list[str]], first: str) -> list[str]:
    """The row whose first cell contains `first`."""
    return next(r for r in table if first in r[0])


def test_every_section_present(tmp_path):
    run = make_run(tmp_path / "full")
    out = report.write_report(run)
    assert out["md"] == run / "report.md" and out["html"] == run / "report.html"
    assert set(out["sections"].values()) == {"ok"}, out["sections"]
    md = out["md"].read_text()
    assert "not run" not in md and "plot missing" not in md
    assert "Verdict: usable, with warnings" in md
    assert "- Data: 4,902 questions kept (4,167 train, 735 validation), 17 dropped" in md
    assert "- Best adapter on validation: model3_dora 75.0% (base 37.5%, chance 25.0%)" in md
    assert "- Ensemble (soft_fitted): 77.7% on held-out questions (best single member 61.1%)" in md
    assert "- Match: winner kit (kit 151, base 97.5 of 200)" in md
    data = table_after(md, "## Data")
    assert data[0][:3] == ["read", "generated", "converted"] and data[1][0] == "4,321" and data[1][4] == "17"
    assert row(table_after(md, "## Models"), "model2_rslora")[6] == "0.823"  # last loss
    assert "151.50 GiB (VRAM)" in row(table_after(md, "## Models"), "model2_rslora")
    acc = table_after(md, "## Accuracy: base model, adapters, ensemble")
    assert row(acc, "base")[1:] == ["37.5%", "75.0%"]  # held-out: q5, q7, q8 of q5..q8 from eval/base.jsonl
    assert row(acc, "model1_lora")[1:] == ["50.0%", "61.1%"]
    assert row(acc, "ensemble (soft_fitted: soft)")[2] == "**77.7%**" and row(acc, "oracle")[2] == "88.8%"
    board = table_after(md, "### Match against the untrained base model")
    assert row(board, "kit")[3] == "151.00" and row(board, "base")[3] == "97.50"
    assert row(table_after(md, "### The original team's round-0 question format, replayed"), "seeds-format")[5] == "YES"
    assert row(table_after(md, "## Elimination round at home"), "Seating") == ["Seating", "50.0% of 30", "90.0% of 10",
                                                                              "40.0"]
    ev = table_after(md, "## Evaluation")
    assert row(ev, "model2_rslora")[5] == "B 75.0% (key 25.0%) COLLAPSED" and row(ev, "base")[5] == "B 37.5% (key 25.0%)"
    assert "Collapsed to one letter: model2_rslora (over 55% of answers" in md
    assert ("Generate mode, the base against model1_lora: parsed 75.0% against 50.0%; a letter and nothing else 0.0% "
            "against 50.0%.") in md
    assert "| training backend | transformers + PEFT (unsloth 2026.10.9 needs what this Python lacks: " \
           "transformers 4.51.3) |" in md
    cur = table_after(md, "## Curriculum")
    assert row(cur, "1")[2:5] == ["0", "1,083", "1,000"]
    assert "RL stage (one GRPO step): est. peak 171.20 GiB (training)" in md
    assert "Reasoning budget: 100 tokens at 27 ms a token inside 3.0 s an answer." in md
    plan = md.split("### Time plan", 1)[1]
    assert "no size for hub:sciq@nosuch: unknown: no split 'nosuch'" in plan and "at least 282" in plan
    assert "model1_lora at least 21 min, model3_dora at least 25 min" in plan
    # a check message with | * [ ] stays one table row with four cells
    warn = row(table_after(md, "### Checks that did not pass"), "WARN")
    assert len(warn) == 4 and warn[2] == "578 GiB in \\*cache\\*" and warn[1] == "big \\| cache"


def test_images_exist_and_html_is_self_contained(tmp_path):
    run = make_run(tmp_path / "full")
    out = report.write_report(run)
    md, page = out["md"].read_text(), out["html"].read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert len(images) == 14  # fit, data, 2 curriculum, 3 models, eval accuracy, 3 ensemble, reinforcement, 2 agents
    assert all(not Path(i).is_absolute() and (run / i).is_file() for i in images)
    sources = re.findall(r'src="([^"]+)"', page)
    assert len(sources) == len(images) and all(s.startswith("data:image/png;base64,") for s in sources)
    assert base64.b64decode(sources[0].split(",", 1)[1]).startswith(PNG_SIG)
    assert not re.search(r"https?://|<script|<link|@import|url\(", page)
    for name in NOTEBOOKS.values():
        assert f"[{name}.ipynb](notebooks/{name}.ipynb)" in md and f'href="notebooks/{name}.ipynb"' in page
    assert "<td>4,321</td>" in page and "<strong>Verdict: usable, with warnings</strong>" in page


def test_every_section_missing(tmp_path):
    run = tmp_path / "empty"
    run.mkdir()
    out = report.write_report(run)
    md, page = out["md"].read_text(), out["html"].read_text()
    for name in NOTEBOOKS.values():
        assert f"not run: notebooks/{name}.ipynb" in md, name
    assert "![" not in md and "data:image" not in page and "No pipeline.json" in md
    assert all(v.startswith("not run") for v in out["sections"].values()), out["sections"]


def test_malformed_and_unexpected_files_are_named_and_the_rest_still_reports(tmp_path):
    run = make_run(tmp_path / "bad")
    (run / "data" / "report.json").write_text('{"totals": {"read": 1,\n')
    _json(run / "eval" / "summary.json", {"models": 3})
    _json(run / "agents" / "tournament.json", [1, 2])
    (run / "models" / "model3_dora" / "summary.json").write_text("{}")
    _json(run / "pipeline.json", {"stages": 5})
    out = report.write_report(run)
    md = out["md"].read_text()
    assert re.search(r"unreadable: data/report\.json: record line 2 col \d+: not valid JSON", md)
    assert "unexpected content: eval/summary.json (AttributeError" in md
    assert "unreadable: agents/tournament.json: expected a JSON object, got list" in md
    assert "unexpected content: models/model3_dora/summary.json (KeyError" in md
    assert "unexpected content: pipeline.json (TypeError" in md and "## Stages" in md
    assert str(run) not in md  # errors name the file relative to the run folder
    assert row(table_after(md, "## Models"), "model1_lora")[1] == "lora"  # the other sections are intact
    assert out["sections"]["Curriculum"] == "ok" and out["sections"]["Data"].startswith("unreadable")


def test_failed_stage_is_called_out(tmp_path):
    run = make_run(tmp_path / "failed")
    for d in ("eval", "ensemble", "agents"):
        for p in (run / d).iterdir():
            p.unlink()
    _json(run / "pipeline.json", {"stages": [
        {"notebook": "05_train_model3_dora.ipynb", "status": "ok", "seconds": 2.0},
        {"notebook": "06_validate.ipynb", "status": "failed", "seconds": 1.0,
         "error": "06_validate.ipynb failed at cell 4: RuntimeError: out of memory 77"}]})
    nb = {"cells": [], "nbformat": 4, "nbformat_minor": 5}
    _json(run / "notebooks" / f"{NOTEBOOKS['00']}.ipynb", {**nb, "metadata": {"papermill": {
        "exception": None, "end_time": "2026-10-26T10:00:03", "duration": 3.25}}})
    _json(run / "notebooks" / f"{NOTEBOOKS['01']}.ipynb", {**nb, "metadata": {"papermill": {
        "exception": True, "end_time": "2026-10-26T10:00:09", "duration": 6.0}}})
    _json(run / "notebooks" / f"{NOTEBOOKS['02']}.ipynb", {**nb, "metadata": {"papermill": {"end_time": None}}})
    md = report.write_report(run)["md"].read_text()
    assert "**Stage 06_validate failed**: 06_validate.ipynb failed at cell 4: RuntimeError: out of memory 77" in md
    stages = table_after(md, "## Stages")
    assert row(stages, "06")[2] == "failed" and row(stages, "05")[2:] == ["ok", "2.0"]
    assert row(stages, "00")[2:] == ["ok (executed copy)", "3.2"]  # not in pipeline.json: papermill's record
    assert row(stages, "01")[2] == "failed (executed copy)"
    assert row(stages, "02")[2] == "started, not finished (executed copy)"
    assert row(stages, "03")[2] == "executed copy (no papermill record)"
    assert "not run: notebooks/07_ensemble.ipynb" in md


def test_pipeline_writes_the_report_after_a_failure(tmp_path, monkeypatch):
    import papermill

    nb_dir = tmp_path / "nbs"
    for name in (NOTEBOOKS[nn] for nn in ("00", "01", "02")):
        _json(nb_dir / f"{name}.ipynb", {})

    def fake_execute(src, out, **kwargs):
        if "01_" in src:
            raise RuntimeError("deliberate failure 4242")
        Path(out).write_text("{}")
    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    with pytest.raises(pipeline.StageFailed):
        pipeline.run_pipeline("smoke", "reportfail", nb_dir=nb_dir)
    md = (config.runs_root() / "reportfail" / "report.md").read_text()
    assert "Stage 01_dataset_build failed" in md and "deliberate failure 4242" in md
    assert (config.runs_root() / "reportfail" / "report.html").is_file()
    assert "not run: notebooks/02_curriculum.ipynb" in md


def test_cli(tmp_path):
    make_run(config.runs_root() / "clirun")
    ok = subprocess.run([sys.executable, "-m", "helpers.report", "--run", "clirun"], cwd=ROOT, capture_output=True,
                        text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert str(config.runs_root() / "clirun" / "report.md") in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "helpers.report", "--run-dir", str(tmp_path / "nope")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no such run folder" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_the_reasoner_section_compares_letter_only_and_reasoning(tmp_path):
    md = (report.write_report(make_run(tmp_path / "r"))["md"]).read_text(encoding="utf-8")
    table = table_after(md, "## Reasoning A-agent")
    assert row(table, "letter")[1:7] == ["12/48 (25.0%)", "10.0%-90.0%", "0.02", "0.04", "6.0", "0.0%"]
    assert row(table, "reason")[1:7] == ["30/48 (62.5%)", "10.0%-90.0%", "2.90", "3.10", "6.0", "75.0%"]
    assert row(table, "reason")[8:10] == ["5/9 (2 unreadable)", "B 30.0%"] and row(table, "letter")[8] == "-"
    assert row(table, "reason (reinforced)")[1] == "36/48 (75.0%)" and "adapter chosen: reasoner_rl" in md
    families = table_after(md, "## Reasoning A-agent", 1)
    assert row(families, "seating_linear")[1:] == ["25.0% (24)", "62.5% (24)", "75.0% (24)"]
    assert "answer_mode reason" in md and "Ravi's mother's brother is Tom" in md


def test_the_reinforcement_section_shows_each_reward_first_and_last(tmp_path):
    md = (report.write_report(make_run(tmp_path / "g"))["md"]).read_text(encoding="utf-8")
    assert "20 GRPO steps from the supervised reasoner, 31.50 s a step" in md and "token budget 27" in md
    assert ("transformers + PEFT, trl 1.16.0, KL against the starting adapter (trl's frozen copy, \"ref\"), gradient "
            "checkpointing non-reentrant;") in md
    table = table_after(md, "## Reasoner reinforcement (GRPO)")
    assert row(table, "correct")[1:] == ["0.250", "0.375", "0.300"] and row(table, "length")[1:3] == ["-0.200", "0.100"]
    assert table_after(md, "## Reasoner reinforcement (GRPO)", 1)[-1] == ["family", "0.250 to 0.500", "0.600 to 0.800",
                                                                          "0.100 to 0.300"]
    assert "models/reasoner_rl/training.png" in md and "## Models" in md
    assert "reasoner_rl:" not in md.split("## Models", 1)[1].split("\n## ", 1)[0]  # not an ensemble model


def test_the_reinforcement_section_says_what_an_unsloth_run_held_the_policy_to(tmp_path):
    """On Unsloth the KL reference is the base model and checkpointing reentrant: the report says both, as recorded."""
    from helpers.agents.stages import reasoner_rl
    run = make_run(tmp_path / "u")
    path = run / "agents" / "reasoner_rl.json"
    kl = reasoner_rl.kl_reference(object(), 0.04, "unsloth")  # no "ref" adapter: Unsloth deletes trl's copy
    path.write_text(json.dumps({**json.loads(path.read_text()), "backend": "unsloth", "trl": "1.15.0",
                                "kl_reference": kl, "gradient_checkpointing": {"enabled": True,
                                                                               "use_reentrant": True}}))
    md = (report.write_report(run)["md"]).read_text(encoding="utf-8")
    assert (f"Unsloth, trl 1.15.0, KL against {reasoner_rl.KL_BASE_MODEL}: Unsloth removes trl's copy of the starting "
            "adapter, gradient checkpointing reentrant;") in md


def test_the_question_writer_section_compares_base_and_writer(tmp_path):
    md = (report.write_report(make_run(tmp_path / "w"))["md"]).read_text(encoding="utf-8")
    table = table_after(md, "## Question writer")
    assert row(table, "base")[1:4] == ["0.0%", "0.0%", "0.0% (0/24)"]
    assert row(table, "writer")[1:6] == ["100.0%", "62.5%", "37.5% (9/24)", "3.21", "4.44"]
    assert "unproven:unknown_text 9" in row(table, "writer")[6] and "proves 38%" in md and "Ana is Ben" in md
