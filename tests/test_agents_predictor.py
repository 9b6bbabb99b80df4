"""Which members the A-agent scores with: notebook 07's ensemble, else 06's best model, else the first trained
adapter, else the base model; each fallback stated. Plus the agents' settings and the ensemble predictor."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from helpers import config
from helpers.agents import build
from helpers.agents.predictor import LetterPredictor, best_from_eval, choose_members, trained_adapters
from helpers.layout import RunLayout

NAMES = ["model1_lora", "model2_rslora", "model3_dora"]


def _adapter(run: Path, name: str) -> None:
    folder = run / "models" / name / "adapter"
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text("{}")
    (folder / "adapter_model.safetensors").write_bytes(b"")


def _write(path: Path, obj: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def test_no_adapters_means_the_base_model_and_says_why(tmp_path):
    sel = choose_members(RunLayout(tmp_path), NAMES)
    assert sel["members"] == ["base"] and sel["source"] == "base"
    assert "notebook 07" in sel["why"] and "notebook 06" in sel["why"] and "no trained adapter" in sel["why"]


def test_first_trained_adapter_in_profile_order(tmp_path):
    _adapter(tmp_path, "model3_dora")
    _adapter(tmp_path, "model2_rslora")
    (tmp_path / "models" / "model1_lora" / "adapter").mkdir(parents=True)  # no weights: not trained
    assert trained_adapters(RunLayout(tmp_path), NAMES) == ["model2_rslora", "model3_dora"]
    sel = choose_members(RunLayout(tmp_path), NAMES)
    assert sel["members"] == ["model2_rslora"] and sel["source"] == "first_adapter"


def test_best_single_model_from_notebook_06(tmp_path):
    for name in NAMES:
        _adapter(tmp_path, name)
    _write(tmp_path / "eval" / "summary.json", {"method": "letters", "members": ["base"] + NAMES,
                                                "models": {"base": {"accuracy": 0.25}, "model1_lora": {"accuracy": 0.3},
                                                           "model2_rslora": {"accuracy": 0.41},
                                                           "model3_dora": {"accuracy": 0.38}}})
    sel = choose_members(RunLayout(tmp_path), NAMES)
    assert sel["members"] == ["model2_rslora"] and sel["source"] == "eval_best" and "model2_rslora" in sel["why"]


def test_the_ensemble_of_notebook_07_wins_and_untrained_members_are_left_out(tmp_path):
    _adapter(tmp_path, "model1_lora")
    _adapter(tmp_path, "model3_dora")
    _write(tmp_path / "ensemble" / "summary.json", {"method": "majority", "members": NAMES,
                                                    "weights": {"model1_lora": 0.5, "model2_rslora": 0.2,
                                                                "model3_dora": 0.3}, "best_member": "model2_rslora"})
    sel = choose_members(RunLayout(tmp_path), NAMES)
    assert sel["source"] == "ensemble" and sel["method"] == "majority"
    assert sel["members"] == ["model1_lora", "model3_dora"] and "model2_rslora" in sel["why"]
    assert sel["best_member"] == "model1_lora"  # the named best is not trained here
    assert sel["weights"] == {"model1_lora": 0.5, "model3_dora": 0.3}  # the left-out member's weight goes too
    from helpers.ensemble import combine  # which combine() accepts (it refuses weights without probabilities)
    assert len(combine({m: [[0.25] * 4] for m in sel["members"]}, sel["weights"], "soft")) == 1


def test_an_empty_ensemble_falls_back_and_says_so(tmp_path):
    _adapter(tmp_path, "model1_lora")
    _write(tmp_path / "ensemble" / "summary.json", {"method": "soft", "members": ["model9"]})
    sel = choose_members(RunLayout(tmp_path), NAMES)
    assert sel["source"] == "first_adapter" and "names no usable member" in sel["why"]


@pytest.mark.parametrize("summary, best", [
    ({"best_member": "b"}, "b"), ({"best": {"name": "c"}}, "c"),
    ({"models": {"a": {"accuracy": 0.2}, "b": {"accuracy": 0.5}}}, "b"),
    ({"results": [{"name": "a", "accuracy": 0.6}, {"name": "b", "accuracy": 0.5}]}, "a"),
    ({"models": {"zzz": {"accuracy": 0.9}}}, None), ({}, None),
])
def test_best_from_eval_reads_several_shapes(summary, best):
    assert best_from_eval(summary, ["a", "b", "c"]) == best


def test_agents_settings_have_defaults_and_take_notebook_parameters():
    cfg = config.load_profile("smoke")
    acfg = build.agents_cfg(cfg, time_margin=0.4, num_questions=None)
    assert acfg.answer_time_limit_s == 6.0 and acfg.question_time_limit_s == 10.0
    assert acfg.time_margin == 0.4 and acfg.num_questions == cfg.agents.num_questions
    with pytest.raises(ValueError, match="margin"):
        build.answer_agent(None, object(), {"members": ["base"]}, dataclasses.replace(acfg, time_margin=1.5))


def test_loaded_selection_drops_what_did_not_load():
    sel = {"members": ["model1_lora", "model2_rslora"], "weights": {"model1_lora": 0.5, "model2_rslora": 0.5},
           "best_member": "model2_rslora", "method": "soft"}
    out = build.loaded_selection(sel, {"members": ["model1_lora", "base"], "skipped": {"model2_rslora": "missing"}})
    assert out["members"] == ["model1_lora"] and out["weights"] == {"model1_lora": 0.5}
    assert out["best_member"] == "model1_lora" and out["skipped"] == {"model2_rslora": "missing"}


def test_the_ensemble_predictor_combines_member_scores(monkeypatch):
    from helpers import scoring
    fake = {"m1": [[0.7, 0.1, 0.1, 0.1]], "m2": [[0.1, 0.1, 0.1, 0.7]]}
    monkeypatch.setattr(scoring, "score_members", lambda model, tok, names, items, batch_size=16: fake)
    items = [{"question": "q", "choices": ["a", "b", "c", "d"]}]
    soft = LetterPredictor(None, None, ["m1", "m2"], weights={"m1": 0.25, "m2": 0.75}).predict(items)
    assert soft[0] == pytest.approx([0.25, 0.1, 0.1, 0.55])
    assert LetterPredictor(None, None, ["m1"]).predict(items) == fake["m1"]
    assert "soft vote of m1, m2" == LetterPredictor(None, None, ["m1", "m2"]).describe()
    with pytest.raises(ValueError):
        LetterPredictor(None, None, [])
