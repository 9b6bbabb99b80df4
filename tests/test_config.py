"""Profiles: one source of truth, overrides checked, run folders where KIT_RUNS_DIR says."""

from __future__ import annotations

import pytest

from helpers import config
from helpers.io import InputError


def test_profiles_exist_and_resolve():
    assert {"smoke", "laptop", "mi300x"} <= set(config.available_profiles())
    for name in config.available_profiles():
        cfg = config.load_profile(name)
        assert cfg.profile == name and cfg.run
        assert {"model", "data", "curriculum", "train", "models"} <= set(cfg.as_dict())


def test_mi300x_carries_the_seeds_settings():
    cfg = config.load_profile("mi300x")
    assert cfg.model.base == "Qwen/Qwen2.5-72B-Instruct"
    m = cfg.models
    assert (m["model1_lora"].r, m["model1_lora"].alpha) == (64, 128)
    assert (m["model2_rslora"].method, m["model2_rslora"].r, m["model2_rslora"].alpha) == ("rslora", 128, 256)
    assert (m["model3_dora"].method, m["model3_dora"].magnitude_lr_multiplier) == ("dora", 5.0)
    t = cfg.train
    assert (t.batch_size, t.grad_accum, t.lr_start, t.lr_end) == (4, 4, 2e-5, 1e-5)
    assert (t.replay_start, t.replay_end, t.optim) == (0.10, 0.20, "adamw_torch")
    assert cfg.curriculum.chunks == 10 and cfg.model.dtype == "bfloat16"
    assert cfg.model.trust_remote_code is False


def test_smoke_is_cpu_and_local():
    cfg = config.load_profile("smoke")
    assert cfg.model.base == "tiny" and cfg.model.use_unsloth is False


def test_a_stand_in_changes_what_loads_never_the_model_named(monkeypatch):
    """model.weights is what every loader opens; model.base stays the name every estimate and plan reads."""
    from helpers.agents import build
    from helpers.models import load as model_load
    own = config.load_profile("mi300x")
    assert own.model.stand_in is None and own.model.weights == own.model.base
    cfg = config.load_profile("mi300x", "stand-in", {"model.stand_in": "tiny"})
    assert (cfg.model.base, cfg.model.weights) == ("Qwen/Qwen2.5-72B-Instruct", "tiny")
    opened = []

    class Opened(Exception):
        pass

    def resolve(base, *args, **kwargs):
        opened.append(str(base))
        raise Opened

    monkeypatch.setattr(model_load, "resolve_base", resolve)
    with pytest.raises(Opened):
        build.load_tokenizer(cfg)
    assert opened == ["tiny"]
    with pytest.raises(InputError, match="model.stand_in"):
        config.load_profile("mi300x", "x", {"model.stand_in": ""})


def test_overrides_apply_and_typos_fail():
    cfg = config.load_profile("smoke", overrides={"train.batch_size": 2})
    assert cfg.train.batch_size == 2
    with pytest.raises(InputError, match="batchsize"):
        config.load_profile("smoke", overrides={"train.batchsize": 2})
    with pytest.raises(InputError, match="no section"):
        config.load_profile("smoke", overrides={"nosuch.key": 1})


def test_an_unknown_key_names_where_it_came_from_and_the_known_keys():
    with pytest.raises(InputError) as err:
        config.load_profile("smoke", overrides={"train.batchsize": 2})
    assert err.value.path == "overrides" and err.value.field == "train.batchsize"
    assert "unknown key" in str(err.value) and "batch_size" in str(err.value)
    with pytest.raises(InputError) as err:
        config.with_params(config.load_profile("smoke"), "data", puzles=7)
    assert str(err.value).startswith("notebook parameters: field 'data.puzles': unknown key (known here: ")
    assert "puzzles" in str(err.value)
    with pytest.raises(InputError) as err:
        config.load_profile("smoke", overrides={"nosuch.key": 1})
    assert err.value.field == "nosuch.key" and "train" in str(err.value)


def test_notebook_parameters_make_a_new_profile_and_ignore_none():
    cfg = config.load_profile("smoke")
    changed = config.with_params(cfg, "data", puzzles=7, sources=None)
    assert changed.data.puzzles == 7 and changed.data.sources == cfg.data.sources
    assert cfg.data.puzzles == config.load_profile("smoke").data.puzzles  # the original is left as it was


def test_unknown_profile_names_the_file():
    with pytest.raises(InputError, match="no profile 'nope'"):
        config.load_profile("nope")


# ---------------------------------------------------------------- typed sections, checked once at load
@pytest.fixture
def profiles(tmp_path, monkeypatch):
    """A configs/ folder of our own: base.yaml copied, plus the profile text each test writes."""
    (tmp_path / "base.yaml").write_text((config.CONFIG_DIR / "base.yaml").read_text())
    monkeypatch.setattr(config, "CONFIG_DIR", tmp_path)

    def write(name: str, text: str):
        (tmp_path / f"{name}.yaml").write_text("extends: base\n" + text)
        return tmp_path / f"{name}.yaml"
    return write


@pytest.mark.parametrize("text, key, needle", [
    ("train:\n  batchsize: 4\n", "train.batchsize", "unknown key"),
    ("trian:\n  batch_size: 4\n", "trian", "unknown key"),
    ("train:\n  batch_size: 2.5\n", "train.batch_size", "whole number"),
    ("train:\n  lr_start: 1e-4\n", "train.lr_start", "write it with one (1.0e-4)"),
    ("data:\n  val_fraction: 1.5\n", "data.val_fraction", "in [0, 0.9]"),
    ("model:\n  use_unsloth: maybe\n", "model.use_unsloth", "true, false or auto"),
    ("models:\n  model1_lora: {method: qlora}\n", "models.model1_lora.method", "one of lora, rslora, dora"),
    ("models:\n  model4: {method: lora, r: 8}\n", "models.model4", "missing alpha, dropout"),
    ("agents:\n  puzzle_levels: [1, 4]\n", "agents.puzzle_levels", "one of 1, 2, 3"),
    ("data:\n  puzzle_kinds: [sudoku]\n", "data.puzzle_kinds", "expected one of seating_linear"),
])
def test_a_bad_profile_names_its_file_and_key(profiles, text, key, needle):
    path = profiles("bad", text)
    with pytest.raises(InputError) as err:
        config.load_profile("bad")
    assert str(path) in str(err.value) and key in str(err.value) and needle in str(err.value)


def test_values_are_cast_once_at_load(profiles):
    profiles("ints", "train:\n  lr_start: 1\n  epochs_per_chunk: 2\n")
    train = config.load_profile("ints").train
    assert train.lr_start == 1.0 and isinstance(train.lr_start, float)
    assert isinstance(train.epochs_per_chunk, float) and isinstance(train.batch_size, int)


def test_base_yaml_must_give_every_key(profiles, tmp_path):
    base = tmp_path / "base.yaml"
    base.write_text(base.read_text().replace("  keep_checkpoints: 2", "  # keep_checkpoints removed"))
    profiles("p", "")
    with pytest.raises(InputError, match="train.keep_checkpoints.*missing"):
        config.load_profile("p")


def test_every_schema_key_is_in_base_yaml_and_nothing_else():
    import yaml
    base = yaml.safe_load((config.CONFIG_DIR / "base.yaml").read_text())
    for section, keys in config.SCHEMA.items():
        if isinstance(keys, dict):
            assert set(base[section]) == set(keys), section
    assert set(base) == set(config.SCHEMA) - {"run"}


def test_overrides_and_notebook_parameters_are_checked_and_named():
    with pytest.raises(InputError, match="overrides.*train.batch_size.*whole number"):
        config.load_profile("smoke", overrides={"train.batch_size": "8"})
    cfg = config.load_profile("smoke")
    with pytest.raises(InputError, match="notebook parameters.*data.puzzles"):
        config.with_params(cfg, "data", puzzles=-1)
    assert config.load_profile("smoke", overrides={"models.model1_lora.r": 32}).models["model1_lora"].r == 32


def test_agent_parameters_are_checked_against_the_same_schema():
    from helpers.agents import build
    cfg = config.load_profile("smoke")
    assert build.agents_cfg(cfg, num_questions=None).num_questions == cfg.agents.num_questions
    assert build.agents_cfg(cfg, time_margin=0.4).time_margin == 0.4
    with pytest.raises(InputError, match="agent parameters.*time_margin"):
        build.agents_cfg(cfg, time_margin=3)


def test_every_profile_asks_every_tournament_family_at_the_hardest_level():
    from helpers import puzzles
    for name in config.available_profiles():
        agents = config.load_profile(name).agents
        assert agents.puzzle_kinds == list(puzzles.KINDS) and agents.puzzle_levels == [3], name
        assert agents.puzzle_candidates > 1, name


def test_the_tournament_profile_trains_on_every_family_with_a_general_replay_share():
    from helpers import puzzles
    cfg = config.load_profile("tournament")
    data = cfg.data
    assert data.puzzle_kinds == list(puzzles.KINDS) and data.sources == ["data/general_mcq.jsonl"]
    general = sum(1 for _ in open(config.resolve_path(data.sources[0]), encoding="utf-8"))
    assert 0.05 < general / (general + data.puzzles) < 0.2
    assert cfg.model.trust_remote_code is False and cfg.curriculum.chunks >= 3


def test_a_profile_is_frozen_and_records_every_key():
    import dataclasses
    cfg = config.load_profile("smoke")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.train.lr_start = 1.0
    assert not hasattr(cfg.train, "get")  # no downstream default can be given: base.yaml gives every value
    recorded = cfg.as_dict()
    assert config.profile_from_dict(recorded, "params") == cfg
    assert recorded["models"]["model1_lora"]["magnitude_lr_multiplier"] == 1.0  # the one key with a default


def test_recorded_sections_are_checked_when_read_back():
    agents = config.as_dict(config.load_profile("smoke").agents)
    with pytest.raises(InputError, match="kit_agent.json.*agents.answer_mode.*missing"):
        config.section_from_dict(config.AgentsSettings, {k: v for k, v in agents.items() if k != "answer_mode"},
                                 "kit_agent.json", "agents")
    with pytest.raises(InputError, match="kit_agent.json.*agents.nosuch.*unknown key"):
        config.section_from_dict(config.AgentsSettings, {**agents, "nosuch": 1}, "kit_agent.json", "agents")


# ---------------------------------------------------------------- python -m helpers.env profile
def _own_keys(name: str) -> set[str]:
    """The dotted keys a profile file sets itself, read straight from its YAML (not through helpers.config)."""
    import yaml
    raw = yaml.safe_load((config.CONFIG_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    raw.pop("extends", None)
    return set(config.flat(raw))


def test_show_names_the_file_each_value_came_from_down_the_extends_chain():
    """tournament extends mi300x, which extends base: each key is credited to the last file that sets it, and the
    value shown is the resolved one."""
    rows = {key: (value, where) for key, value, where in config.provenance("tournament")}
    own, middle, base = _own_keys("tournament"), _own_keys("mi300x") - _own_keys("tournament"), _own_keys("base")
    assert own and middle and base - own - middle
    assert all(rows[k][1] == "configs/tournament.yaml" for k in own)
    assert all(rows[k][1] == "configs/mi300x.yaml" for k in middle)
    assert all(rows[k][1] == "configs/base.yaml" for k in base - own - middle)
    resolved = config.flat(config.as_dict(config.load_profile("tournament")))
    assert {k: v for k, (v, _) in rows.items()} == resolved


@pytest.mark.parametrize("command", ["python -m helpers.config show", "python -m helpers.env profile"])
def test_show_credits_an_override_and_refuses_a_bad_one_in_one_line(capsys, command):
    from helpers.env.__main__ import main as env_main
    main = config.main if command.endswith("show") else env_main
    verb = "show" if command.endswith("show") else "profile"
    assert main([verb, "smoke", "--overrides", '{"train.lr_start": 0.0025}']) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("train.lr_start "))
    assert line.split() == ["train.lr_start", "0.0025", "(overrides)"]
    assert main([verb, "smoke", "--overrides", '{"train.nope": 1}']) == 2
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "train.nope" in out[0] and "unknown key" in out[0]
    assert main([verb, "smoke", "--overrides", "[1]"]) == 2
    assert "object of dotted keys" in capsys.readouterr().out


def test_show_credits_a_whole_section_override_key_by_key_and_the_run_name():
    lora = config.as_dict(config.load_profile("smoke"))["models"]["model1_lora"]
    rows = {k: (v, w) for k, v, w in config.provenance("smoke", {"models.model1_lora": {**lora, "r": 4}}, run="mine")}
    assert rows["models.model1_lora.r"] == (4, "overrides") and rows["models.model1_lora.alpha"][1] == "overrides"
    assert rows["run"] == ("mine", "RUN") and rows["models.model2_rslora.r"][1] != "overrides"
