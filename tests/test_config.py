"""Profiles: one source of truth, overrides checked, run folders where KIT_RUNS_DIR says."""

from __future__ import annotations

import pytest

from helpers import config
from helpers.io import InputError


def test_profiles_exist_and_resolve():
    assert {"smoke", "laptop", "mi300x"} <= set(config.available_profiles())
    for name in config.available_profiles():
        cfg = config.load_profile(name)
        assert cfg["profile"] == name and cfg["run"]
        assert {"model", "data", "curriculum", "train", "models"} <= set(cfg)


def test_mi300x_carries_the_seeds_settings():
    cfg = config.load_profile("mi300x")
    assert cfg["model"]["base"] == "Qwen/Qwen2.5-72B-Instruct"
    m = cfg["models"]
    assert (m["model1_lora"]["r"], m["model1_lora"]["alpha"]) == (64, 128)
    assert (m["model2_rslora"]["method"], m["model2_rslora"]["r"], m["model2_rslora"]["alpha"]) == ("rslora", 128, 256)
    assert (m["model3_dora"]["method"], m["model3_dora"]["magnitude_lr_multiplier"]) == ("dora", 5.0)
    t = cfg["train"]
    assert (t["batch_size"], t["grad_accum"], t["lr_start"], t["lr_end"]) == (4, 4, 2e-5, 1e-5)
    assert (t["replay_start"], t["replay_end"], t["optim"]) == (0.10, 0.20, "adamw_torch")
    assert cfg["curriculum"]["chunks"] == 10 and cfg["model"]["dtype"] == "bfloat16"
    assert cfg["model"]["trust_remote_code"] is False


def test_smoke_is_cpu_and_local():
    cfg = config.load_profile("smoke")
    assert cfg["model"]["base"] == "tiny" and cfg["model"]["use_unsloth"] is False


def test_overrides_apply_and_typos_fail():
    cfg = config.load_profile("smoke", overrides={"train.batch_size": 2})
    assert cfg["train"]["batch_size"] == 2
    with pytest.raises(KeyError, match="batchsize"):
        config.load_profile("smoke", overrides={"train.batchsize": 2})
    with pytest.raises(KeyError, match="no section"):
        config.load_profile("smoke", overrides={"nosuch.key": 1})


def test_apply_params_ignores_none():
    cfg = config.load_profile("smoke")
    section = config.apply_params(cfg, "data", puzzles=7, sources=None)
    assert section["puzzles"] == 7 and section["sources"] == config.load_profile("smoke")["data"]["sources"]


def test_unknown_profile_names_the_file():
    with pytest.raises(InputError, match="no profile 'nope'"):
        config.load_profile("nope")
