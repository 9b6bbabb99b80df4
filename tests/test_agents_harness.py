"""The export for the challenge harness: a stand-in harness (written from tournament-rules.md, not the organisers'
code) builds QAgent/AAgent from the exported files with **kwargs, counts tokens with their `.tokenizer`, calls
generate_response(list | str, system_prompt, **gen_kwargs), json-parses the texts and applies the filters."""

from __future__ import annotations

import importlib
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import config, edition, filters, scoring
from helpers.agents.harness import export
from helpers.io import InputError
from helpers.layout import RunLayout

from _harness import harness_answers, harness_questions
from _tiny import ROOT, tiny_model_dir


def _save_adapter(out_dir: Path, seed: int) -> None:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    from helpers.models.adapters import _quiet_peft
    with _quiet_peft():
        model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                init_lora_weights=False))
        model.save_pretrained(str(out_dir))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A run with two trained adapters and an ensemble summary, exported into <tmp>/challenge/agents/."""
    runs = tmp_path_factory.mktemp("harness-runs")
    mp = pytest.MonkeyPatch()
    mp.setenv("KIT_RUNS_DIR", str(runs))
    try:
        cfg = config.load_profile("smoke", "harness", {"model.base": str(tiny_model_dir())})
        for seed, name in enumerate(("model1_lora", "model3_dora"), 1):
            _save_adapter(RunLayout.of(cfg).adapter_dir(name), seed)
        lay = RunLayout.of(cfg)
        lay.made(lay.ensemble_dir)
        ens = lay.ensemble_summary
        ens.write_text(json.dumps({"method": "soft", "members": ["model1_lora", "model3_dora"],
                                   "weights": {"model1_lora": 0.6, "model3_dora": 0.4}, "best_member": "model3_dora"}))
        challenge = tmp_path_factory.mktemp("challenge")
        conf = export.export(cfg, challenge / "agents")
    finally:
        mp.undo()
    (challenge / "agents" / "__init__.py").write_text("")
    sys.path.insert(0, str(challenge))
    try:
        qm = importlib.import_module("agents.question_model")
        am = importlib.import_module("agents.answer_model")
        yield {"conf": conf, "dir": challenge, "QAgent": qm.QAgent, "AAgent": am.AAgent}
    finally:
        sys.path.remove(str(challenge))
        for name in ("agents.question_model", "agents.answer_model", "agents"):
            sys.modules.pop(name, None)


def test_export_folder_holds_what_the_harness_imports(exported):
    d = exported["dir"] / "agents"
    for name in ("question_model.py", "answer_model.py", "kit_agent.json", "README.txt",
                 "adapters/model1_lora/adapter_model.safetensors", "adapters/model3_dora/adapter_config.json",
                 "kit/helpers/agents/harness/kit_agents.py", "kit/helpers/filters.py"):
        assert (d / name).exists(), name
    conf = json.loads((d / "kit_agent.json").read_text())
    assert conf["members"] == ["model1_lora", "model3_dora"] and conf["weights"] == {"model1_lora": 0.6,
                                                                                     "model3_dora": 0.4}
    assert conf["selection"]["source"] == "ensemble" and conf["adapters"]["model1_lora"] == "adapters/model1_lora"
    assert conf["model"]["trust_remote_code"] is False and Path(conf["base"]).is_absolute()
    assert not list(d.rglob("*.bin")) and not list(d.rglob("*.pt"))  # safetensors only
    # the edition travels: the shipped ones beside the vendored helpers, the profile's named from the export
    assert conf["agents"]["edition"] == "kit/data/editions/2025-10-aiac.yaml"
    assert (d / conf["agents"]["edition"]).is_file()
    assert {p.name for p in (d / "kit" / "data" / "editions").glob("*.yaml")} == {f"{n}.yaml" for n in edition.names()}


def test_a_teams_own_edition_file_travels_with_the_export(tmp_path):
    own = tmp_path / "finals.yaml"
    text = (ROOT / "data" / "editions" / "2025-10-aiac.yaml").read_text()
    own.write_text(text.replace("answer_s: 6.0", "answer_s: 7.5"))
    out = tmp_path / "agents"
    recorded = export.vendor_editions(out, str(own))
    assert recorded == "kit/data/editions/finals.yaml" and edition.load(out / recorded).answer_s == 7.5
    shipped = tmp_path / "2025-10-aiac.yaml"
    shipped.write_text(own.read_text())
    with pytest.raises(InputError, match="rename your file"):  # it would shadow the shipped one of that name
        export.vendor_editions(out, str(shipped))


def test_harness_runs_the_exported_agents_end_to_end(exported):
    topics = json.loads((ROOT / "data" / "topics.json").read_text())
    qagent = exported["QAgent"]()  # the harness passes no arguments it does not own
    aagent = exported["AAgent"](select_prompt1=True)  # unknown kwargs are accepted
    assert hasattr(qagent, "tokenizer") and hasattr(aagent, "tokenizer")
    kept, letters = harness_questions(qagent, topics, 20, 5, random.Random(0))
    assert len(kept) == 20  # every question format-correct: far above the 50% disqualification line
    assert [q["answer"] for q in kept] == letters  # the letter each prompt asked for
    answers = harness_answers(aagent, kept, 5)
    assert all(a is not None and a["answer"] in "ABCD" for a in answers)
    assert all(len(a["reasoning"].split()) <= 100 for a in answers)
    # the ensemble really scores: the reasoning names both members
    assert "model1_lora" in answers[0]["reasoning"] and "model3_dora" in answers[0]["reasoning"]
    assert sorted(aagent.agent.predictor.members) == ["model1_lora", "model3_dora"]


def test_single_prompts_get_single_texts_and_bad_prompts_still_answer(exported):
    qagent, aagent = exported["QAgent"](), exported["AAgent"]()
    text, tokens, seconds = qagent.generate_response("MCQ on topic: Blood Relations and Family Tree/Puzzles "
                                                     "involving generations and family tree logic.", None)
    q = json.loads(text)
    assert isinstance(text, str) and filters.check_question(q, qagent.tokenizer).ok and tokens > 0 and seconds > 0
    for bad in ("", "no question here", "Question: only a question\n", json.dumps({"choices": ["A) x"]})):
        out, _, _ = aagent.generate_response(bad)
        a = json.loads(out)
        assert a["answer"] in "ABCD" and filters.check_answer(a, aagent.tokenizer).ok


def test_the_export_runs_without_the_kit_on_the_path(exported):
    """A fresh interpreter in the challenge folder imports the vendored helpers copy, not the kit's."""
    code = ("import json\nfrom agents.question_model import QAgent\nimport helpers\n"
            "q = QAgent()\nt, n, s = q.generate_response(['topic: Puzzles/Seating Arrangements (Linear, Circular)'])\n"
            "print(json.dumps({'helpers': helpers.__file__, 'q': json.loads(t[0])}))")
    env = {"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=exported["dir"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["helpers"] is not None and str(exported["dir"]) in out["helpers"]
    assert out["q"]["topic"] == "Seating Arrangements (Linear, Circular)"


def test_missing_config_names_the_file(tmp_path):
    from helpers.agents.harness.kit_agents import KitAAgent
    from helpers.io import InputError
    with pytest.raises(InputError, match="agent config not found"):
        KitAAgent(config=str(tmp_path / "kit_agent.json"))


def moved_config(exported) -> dict:
    """The export's kit_agent.json, to be written elsewhere: its edition file named by its absolute path (it is
    recorded relative to the export's folder)."""
    folder = exported["dir"] / "agents"
    conf = json.loads((folder / export.CONFIG_NAME).read_text())
    conf["agents"]["edition"] = str(folder / conf["agents"]["edition"])
    return conf


@pytest.mark.parametrize("drop", ["seed", "agents.answer_mode"])
def test_a_config_missing_a_key_names_the_file_and_the_key(exported, tmp_path, drop):
    from helpers.agents.harness.kit_agents import KitQAgent
    from helpers.io import InputError
    conf = moved_config(exported)
    section, _, key = drop.rpartition(".")
    (conf[section] if section else conf).pop(key)
    path = tmp_path / export.CONFIG_NAME
    path.write_text(json.dumps(conf))
    with pytest.raises(InputError, match=f"{export.CONFIG_NAME}.*{drop}.*missing from the exported agent config"):
        KitQAgent(config=str(path))


@pytest.mark.parametrize("section, key, value, problem", [("agents", "colour", "red", "unknown key"),
                                                          ("model", "dtype", 3, "expected text"),
                                                          ("agents", "answer_mode", "auto", "auto")])
def test_a_config_with_a_bad_key_names_the_file_and_the_key(exported, tmp_path, section, key, value, problem):
    from helpers.agents.harness.kit_agents import KitAAgent
    from helpers.io import InputError
    conf = moved_config(exported)
    conf[section][key] = value
    path = tmp_path / export.CONFIG_NAME
    path.write_text(json.dumps(conf))
    with pytest.raises(InputError, match=f"{export.CONFIG_NAME}.*{section}.{key}.*{problem}"):
        KitAAgent(config=str(path))


def test_the_reinforced_reasoner_chosen_is_the_one_exported_and_loaded(tmp_path, monkeypatch):
    from helpers.agents import build
    from helpers.agents.harness.kit_agents import KitAAgent
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path / "runs"))
    cfg = config.load_profile("smoke", "reinforced", {"model.base": str(tiny_model_dir())})
    _save_adapter(RunLayout.of(cfg).adapter_dir(config.REASONER_RL), 9)
    sel = {**build.selection(cfg), "reasoner": config.REASONER_RL}  # what section 7 sets when the measurement says so
    conf = export.export(cfg, tmp_path / "agents", sel=sel, answer_mode="reason")
    assert conf["reasoner"] == config.REASONER_RL and config.REASONER not in conf["adapters"]
    assert (tmp_path / "agents" / "adapters" / config.REASONER_RL / "adapter_model.safetensors").exists()
    aagent = KitAAgent(config=str(tmp_path / "agents" / export.CONFIG_NAME))
    assert aagent.agent.reasoner.member == config.REASONER_RL


def test_the_harness_runs_the_exported_agent_in_reasoning_mode(tmp_path, monkeypatch):
    """Exported with answer_mode reason: the reasoner's adapter goes along, each harness batch is reasoned over
    together inside the budget, every answer passes the filter with the model's own words as its reasoning."""
    from helpers.agents.stages import reasoner_measure
    from helpers.agents.harness.kit_agents import KitAAgent
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path / "runs"))
    cfg = config.load_profile("smoke", "reasoning", {"model.base": str(tiny_model_dir())})
    _save_adapter(RunLayout.of(cfg).adapter_dir(config.REASONER), 7)
    conf = export.export(cfg, tmp_path / "agents", answer_mode="reason")
    assert conf["reasoner"] == config.REASONER and conf["agents"]["answer_mode"] == "reason"
    assert (tmp_path / "agents" / "adapters" / config.REASONER / "adapter_model.safetensors").exists()
    aagent = KitAAgent(config=str(tmp_path / "agents" / export.CONFIG_NAME))
    assert aagent.agent.reasoner is not None
    questions = reasoner_measure.held_out(10, seed=2, kinds=["seating_linear", "family_pointing"], levels=[1, 2])
    answers = harness_answers(aagent, questions, 5)
    assert all(a is not None and a["answer"] in "ABCD" for a in answers)
    assert all(a["reasoning"] and "Letter scor" not in a["reasoning"] for a in answers)  # the model's own words
    assert aagent.agent.stats["filter_fixed"] == 0
    assert aagent.agent.stats["model"] == 10 and sum(v for k, v in aagent.agent.stats.items()
                                                     if k.startswith("stop:")) == 10
    _, tokens, seconds = aagent.generate_response([f"Question: {q['question']}\nChoices: {' '.join(q['choices'])}"
                                                   for q in questions[:5]], None, max_new_tokens=8)
    assert aagent.agent.reasoner.max_new_tokens == 8 and seconds > 0  # its time: make bench's reasoning p99
    # the Q-agent of the same export, with model-written questions on, checks keys by letters (no reasoner loaded)
    qconf = json.loads((tmp_path / "agents" / export.CONFIG_NAME).read_text())
    qconf["agents"]["model_question_share"] = 1.0
    (tmp_path / "agents" / "q.json").write_text(json.dumps(qconf))
    from helpers.agents.harness.kit_agents import KitQAgent
    qagent = KitQAgent(config=str(tmp_path / "agents" / "q.json"))
    assert qagent.agent.writer is not None and qagent.agent.writer.checker.reasoner is None
