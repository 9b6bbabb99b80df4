"""The question writer's stage (helpers.agents.stages.writer_train, writer_measure): its own config entry, the
profile its training sees, the measurement by check reached, the share a measurement justifies (read back by
helpers.agents.build), and the export that carries it."""

from __future__ import annotations

import json

import pytest

from helpers import config, io, puzzles
from helpers.agents import build
from helpers.agents import topics as topics_mod
from helpers.agents.harness import export
from helpers.agents.stages import own_adapter, writer_data, writer_measure, writer_train
from helpers.agents.writer import ModelWriter
from helpers.config import WRITER
from helpers.layout import RunLayout

from _tiny import ROOT, tiny_model_dir

TOPICS = topics_mod.read_topics(ROOT / "data" / "topics.json")


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(str(tiny_model_dir()))


# ---------------------------------------------------------------- the config entry
def test_the_writer_has_its_own_config_entry_and_its_name_is_reserved(tmp_path):
    cfg = config.load_profile("smoke")
    assert cfg.writer.examples > 0 and cfg.writer.adapter.method == "lora"
    values = cfg.as_dict()
    with pytest.raises(io.InputError, match="models.writer.*reserved"):
        config.check_complete({**values, "models": {**values["models"], WRITER: values["writer"]["adapter"]}},
                              "x.yaml")
    with pytest.raises(io.InputError, match="writer.adapter.*missing r"):
        config.check_complete({**values, "writer": {**values["writer"], "adapter": {"method": "lora", "alpha": 2,
                                                                                      "dropout": 0.0}}}, "x.yaml")
    assert config.load_profile("smoke", overrides={"agents.model_question_share": 0.3}).agents.model_question_share \
        == 0.3
    with pytest.raises(io.InputError, match="agents.model_question_share"):
        config.load_profile("smoke", overrides={"agents.model_question_share": "sometimes"})


def test_the_writer_trains_alone_in_one_chunk_at_its_own_rate_and_length():
    cfg = config.load_profile("cpu", overrides={"writer.lr": 3.0e-4, "writer.max_seq_len": 300})
    prof = own_adapter.own_adapter_profile(cfg, config.WRITER)
    assert prof.models == {WRITER: cfg.writer.adapter} and prof.curriculum.chunks == 1
    assert prof.train.lr_start == prof.train.lr_end == 3.0e-4 and prof.model.max_seq_len == 300
    assert prof.train.batch_size == cfg.train.batch_size and cfg.models != prof.models


def test_the_writer_chats_are_built_over_the_q_agents_families(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("smoke", "w", {"writer.examples": 12, "agents.puzzle_kinds": ["family", "family_coded"],
                                             "writer.levels": [1, 3]})
    path = writer_train.build_data(cfg)
    rows = [r for _, r in io.iter_jsonl(path)]
    assert path == RunLayout.of(cfg).writer_data and len(rows) == 12 and {r["chunk"] for r in rows} == {0}
    assert {(r["puzzle"]["kind"], r["puzzle"]["level"]) for r in rows} == {
        (k, lv) for k in ("family", "family_coded") for lv in (1, 3)}
    with pytest.raises(ValueError, match="writer.examples is 0"):
        writer_train.build_data(config.load_profile("smoke", "w", {"writer.examples": 0}))


# ---------------------------------------------------------------- the measurement
def _reply(rec: dict, **change) -> str:
    obj = json.loads(writer_data.writer_reply(rec, "x"))
    return json.dumps({**obj, **change})


def test_the_measurement_counts_how_far_each_reply_got(tok, monkeypatch):
    import random
    rec = puzzles.make_puzzle("family", 1, 1, random.Random(3), {}, id="m")  # key at B
    family = next(p for p in topics_mod.pairs(TOPICS) if "family" in topics_mod.generator_kinds(*p))
    seating = next(p for p in topics_mod.pairs(TOPICS) if "family" not in topics_mod.generator_kinds(*p))
    asked = [
        (family, "no json here"),                                              # reaches nothing
        (family, json.dumps({"question": "Who?", "choices": ["a", "b"]})),     # JSON, not a question
        (family, _reply(rec, question="w " * 200)),                            # a question, fails the filter
        (family, _reply(rec, question="Ana sits left of Ben. Who is left?")),  # passes it, not a generator's text
        (family, _reply(rec, answer="C")),                                     # solved: the key is B, not C
        (seating, _reply(rec)),                                                # proven, but not a seating puzzle
        (family, _reply(rec)),                                                 # proven
    ]
    replies = iter(text for _, text in asked)
    monkeypatch.setattr(ModelWriter, "_sample", lambda self, prompt, seconds: [next(replies)])
    report = writer_measure.measure(None, tok, "writer", [(*pair, "B") for pair, _ in asked], budget_s=5.0, seed=1)
    shares = (report["json_share"], report["filter_share"], report["proven_share"])
    assert shares == pytest.approx((6 / 7, 4 / 7, 1 / 7), abs=1e-4) and report["proven"] == 1
    assert report["rejected"] == {"no_json": 1, "not_four_choices": 1, "filter:question_too_long": 1,
                                  "unproven:unknown_text": 1, "key_not_proven": 1, "off_topic:family": 1}
    assert report["accepted"][0]["explanation"] == rec["explanation"]  # the solver's deduction, not the model's
    assert report["explained"] == {"deduction": 1}  # a family puzzle's chain of links, each link proven
    assert {a[2] for a in writer_measure.requests(TOPICS, 8)} == set("ABCD")


@pytest.mark.parametrize("base, trained, share, why", [
    (0.0, None, 0.0, "no trained writer"),
    (0.2, 0.2, 0.0, "no better than the base"),
    (0.0, 0.4, 0.0, "under 50%"),
    (0.1, 0.5, 1.0, "proves 50%"),
])
def test_the_share_is_what_the_measurement_justifies(base, trained, share, why):
    report = {"base": {"proven_share": base}}
    if trained is not None:
        report[WRITER] = {"proven_share": trained}
    got, reason = writer_measure.justified_share(report)
    assert got == share and why in reason


def test_auto_reads_the_runs_measurement_and_a_number_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("smoke", "auto")
    assert cfg.agents.model_question_share == "auto" and build.agents_cfg(cfg).model_question_share == 0.0
    lay = RunLayout.of(cfg)
    lay.made(lay.agents_dir)
    measured = {"base": {"proven_share": 0.0}, WRITER: {"proven_share": 0.75}, "params": {"writer": config.as_dict(cfg.writer)}}
    measured.update(zip(("justified_share", "why"), writer_measure.justified_share(measured)))  # the stage's decision
    io.write_json(lay.writer_report, measured)
    share, why = build.measured_share(cfg)
    assert share == 0.0 and "adapter is missing" in why  # a measurement of a writer that is not there earns nothing
    _fake_adapter(lay.adapter_dir(WRITER))
    assert build.agents_cfg(cfg).model_question_share == 1.0
    io.write_json(lay.writer_report, {**measured, "params": {"writer": {**config.as_dict(cfg.writer), "examples": 7}}})
    share, why = build.measured_share(cfg)
    assert share == 0.0 and "other writer settings" in why
    io.write_json(lay.writer_report, measured)
    assert build.agents_cfg(cfg, model_question_share=0.2).model_question_share == 0.2
    assert build.measured_share(config.load_profile("smoke", "auto", {"agents.model_question_share": 0.4}))[
        0] == 0.4


# ---------------------------------------------------------------- the export carries the writer the Q-agent uses
def _fake_adapter(folder):
    from helpers import models
    folder.mkdir(parents=True)
    for name in models.ADAPTER_FILES:
        (folder / name).write_text("{}")


@pytest.mark.parametrize("share, exported", [(1.0, True), (0.0, False)])
def test_the_export_takes_the_writer_only_when_the_q_agent_uses_it(tmp_path, monkeypatch, share, exported):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setattr(export, "vendor_helpers", lambda out: 0)
    cfg = config.load_profile("smoke", "exp")
    _fake_adapter(RunLayout.of(cfg).adapter_dir(WRITER))
    sel = {"members": ["base"], "weights": None, "best_member": "base", "method": "soft"}
    conf = export.export(cfg, tmp_path / "out", sel=sel, model_question_share=share)
    assert conf["agents"]["model_question_share"] == share
    assert (conf["writer"] == WRITER) is exported and (WRITER in conf["adapters"]) is exported
    assert (tmp_path / "out" / "adapters" / WRITER).is_dir() is exported


def test_of_the_replies_sampled_together_the_first_proven_is_kept_else_the_furthest_reason(tok):
    import random
    from helpers.agents import timing
    rec = puzzles.make_puzzle("family", 1, 2, random.Random(4), {}, id="c")  # key at C
    family = next(p for p in topics_mod.pairs(TOPICS) if "family" in topics_mod.generator_kinds(*p))
    writer = ModelWriter(None, tok, candidates=3)
    batches = iter([["no json", _reply(rec, answer="A"), _reply(rec)], ["no json", _reply(rec, question="w " * 200)]])
    writer._sample = lambda prompt, seconds: next(batches)
    question, why = writer.write(*family, "C", timing.Deadline(5.0), kinds=("family",))
    assert why is None and question["answer"] == "C" and writer.reached == "accepted"
    question, why = writer.write(*family, "C", timing.Deadline(5.0), kinds=("family",))
    assert question is None and why == "filter:question_too_long" and writer.reached == "question"
    assert writer.replies == {"sampled": 2, "filter": 1, "proven": 1, "question": 1}  # every reply, by stage
    assert writer.candidates == 3 and ModelWriter(None, tok, candidates=0).candidates == 1


def test_the_exported_q_agent_writes_with_the_trained_writer(tmp_path, monkeypatch):
    """A tiny writer trained by the stage, exported with the share on: the harness's QAgent loads it as its writer
    and every question it returns still passes the filter (a toy writer's replies fail and puzzles replace them)."""
    import torch
    from helpers import filters
    from helpers.agents.harness.kit_agents import CONFIG_NAME, KitQAgent
    from _tiny import cpu_recommendation
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setattr(export, "vendor_helpers", lambda out: 0)
    cfg = config.load_profile("smoke", "exported-writer", {"writer.examples": 8, "writer.measure": 2})
    threads = torch.get_num_threads()
    try:
        writer_train.train(cfg, recommendation=cpu_recommendation(), progress=False)
    finally:
        torch.set_num_threads(threads)
    sel = {"members": ["base"], "weights": None, "best_member": "base", "method": "soft"}
    conf = export.export(cfg, tmp_path / "out", sel=sel, model_question_share=1.0)
    qagent = KitQAgent(config=str(tmp_path / "out" / CONFIG_NAME))
    assert conf["writer"] == WRITER and qagent.agent.writer.member == WRITER
    from helpers.agents.writer import harness_prompt
    prompt = harness_prompt(*topics_mod.pairs(TOPICS)[0], "B")
    texts, _, _ = qagent.generate_response([prompt], "You are an examiner.", max_new_tokens=64)
    question = json.loads(texts[0])
    assert filters.check_question(question, qagent.tokenizer).ok and question["answer"] == "B"
    assert qagent.agent.writer.stats["attempts"] == 1 and qagent.agent.writer.gen["max_new_tokens"] == 64
    qagent.generate_response(prompt, "You are an examiner.", max_new_tokens=1024)  # the harness's budget
    assert qagent.agent.writer.gen["max_new_tokens"] == 200  # bounds the writer's cap, never raises it
