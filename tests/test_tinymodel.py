"""The offline tiny model: built from the bundled data, reloads as a Qwen2 checkpoint, caches atomically, offline."""

from __future__ import annotations

import hashlib
import json
import math
import socket

import pytest
import torch

from helpers.models import tiny as tinymodel

# Small warm-ups keep every build a few seconds; the default (800 steps) is measured, not tested.
WARM = 30
TEXTS = [
    "Hello world", " leading space", "Ünïcödé café naïve — “quotes” 日本語 🙂 ∑x²",
    "numbers 12345, 3.14 and -7",
    "tabs\tand\nnewlines\r\n\n  spaces   at the end   ", "Question: What is a dog?\nA. mammal\nB. bird\nAnswer: A",
    "Who sits to the immediate left of Priya? How is Amit's father-in-law related to Neha?", "e\u0301 (decomposed é)",
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
]


@pytest.fixture(scope="module", autouse=True)
def _no_network():
    """Any socket connection during these tests is a failure, not a silent download."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket, "create_connection", refuse)
    yield
    mp.undo()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return tinymodel.build_tiny_model(out_dir=tmp_path_factory.mktemp("tiny") / "model", warmup_steps=WARM,
                                      progress=False)


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load(path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return (AutoTokenizer.from_pretrained(path, local_files_only=True),
            AutoModelForCausalLM.from_pretrained(path, local_files_only=True))


def test_offline_env_is_set():
    import os

    assert os.environ.get("HF_HUB_OFFLINE") == "1" and os.environ.get("TRANSFORMERS_OFFLINE") == "1"


def test_build_writes_a_complete_checkpoint(built):
    names = {p.name for p in built.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt",
            "generation_config.json", "tiny_build.json"} <= names
    assert not any(n.endswith((".bin", ".pt", ".pth")) for n in names)  # safetensors only, no pickles
    assert not any(n.startswith(".") or n == "_trainer" for n in names)
    info = json.loads((built / "tiny_build.json").read_text())
    assert info["spec"]["warmup_steps"] == WARM and info["warmup"]["steps"] == WARM
    assert 500_000 < info["n_params"] < 3_000_000
    assert tinymodel.is_complete(built)


def test_reloaded_tokenizer_is_qwen2_and_tokenises_identically(built):
    from tokenizers import Tokenizer

    tok, _ = _load(built)
    assert type(tok).__name__ in ("Qwen2Tokenizer", "Qwen2TokenizerFast")
    raw = Tokenizer.from_file(str(built / "tokenizer.json"))
    for text in TEXTS:
        assert tok.encode(text, add_special_tokens=False) == raw.encode(text).ids, text
    assert tok.decode(tok.encode(TEXTS[2], add_special_tokens=False)) == TEXTS[2]  # byte-level: nothing is lost
    ids = {t: tok.convert_tokens_to_ids(t) for t in tinymodel.SPECIAL_TOKENS}
    assert ids == {"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2}
    assert tok.encode("<|im_start|>user", add_special_tokens=False)[0] == 1  # one token, not split into bytes
    assert tok.eos_token == tok.pad_token == "<|endoftext|>" and tok.bos_token is None
    assert len(tok.encode(" B", add_special_tokens=False)) == 1  # answer letters are single tokens for scoring


def test_pipeline_matches_transformers_qwen2(built):
    from transformers.models.qwen2 import tokenization_qwen2

    assert tinymodel.QWEN2_PRETOKENIZE_REGEX == tokenization_qwen2.PRETOKENIZE_REGEX
    spec = json.loads((built / "tokenizer.json").read_text())
    assert spec["normalizer"]["type"] == "NFC" and spec["decoder"]["type"] == "ByteLevel"
    split, byte_level = spec["pre_tokenizer"]["pretokenizers"]
    assert split["pattern"]["Regex"] == tokenization_qwen2.PRETOKENIZE_REGEX and split["behavior"] == "Isolated"
    assert byte_level["type"] == "ByteLevel" and byte_level["add_prefix_space"] is False
    cfg = json.loads((built / "tokenizer_config.json").read_text())
    assert cfg["tokenizer_class"] == "Qwen2Tokenizer"
    # 4.51 reads additional_special_tokens and fails on the list-valued extra_special_tokens that 5.x writes
    assert isinstance(cfg["additional_special_tokens"], list) and "extra_special_tokens" not in cfg


def test_chat_template_renders_chatml(built):
    tok, _ = _load(built)
    messages = [{"role": "system", "content": "Answer with one letter."}, {"role": "user", "content": "Hi?"}]
    text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text == ("<|im_start|>system\nAnswer with one letter.<|im_end|>\n"
                    "<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\n")
    assert not tok.apply_chat_template(messages, tokenize=False).endswith("assistant\n")
    ids = tok.encode(text, add_special_tokens=False)
    assert ids.count(1) == 3 and ids.count(2) == 2


def test_model_config_and_generation(built):
    from transformers import AutoConfig, GenerationConfig

    tok, model = _load(built)
    cfg = AutoConfig.from_pretrained(built, local_files_only=True)
    assert cfg.model_type == "qwen2" and type(model).__name__ == "Qwen2ForCausalLM"
    assert cfg.tie_word_embeddings and cfg.vocab_size == len(tok) and cfg.use_cache
    raw = json.loads((built / "config.json").read_text())
    assert raw["rope_theta"] == 10000.0 and raw["torch_dtype"] == "float32"  # the names 4.51 reads
    gen = GenerationConfig.from_pretrained(built, local_files_only=True)
    assert tok.convert_tokens_to_ids("<|im_end|>") in gen.eos_token_id and gen.pad_token_id == 0
    ids = torch.tensor([tok.encode("A dog is a", add_special_tokens=False)])
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, do_sample=False)
    assert out.shape[1] > ids.shape[1]
    assert torch.isfinite(model(input_ids=ids).logits).all()


@pytest.mark.unslothwheels
def test_unsloth_refuses_the_tiny_model_so_the_kit_trains_it_on_peft(built, tmp_path):
    """Unsloth will not pad with the eos and looks for a pad-named token in the vocabulary: the tiny model (pad = eos,
    like Qwen's base models, and no such token) is refused, as it was on an H200 (make gpu-check). The pinned
    unsloth_zoo's own repair, read from its wheel (pad_token.py imports nothing of Unsloth's), raises here, which is why
    helpers.models.settings.choose_backend keeps the tiny model on transformers + PEFT; when a release accepts it, this
    fails and that rule can go."""
    import importlib.util
    import zipfile

    from helpers.env import gpu_setup
    zoo = next((w for w in gpu_setup.pinned_wheels() if w.name.startswith("unsloth_zoo-")), None)
    assert zoo, "make setup downloads the pinned Unsloth wheels"
    (tmp_path / "pad_token.py").write_bytes(zipfile.ZipFile(zoo).read("unsloth_zoo/pad_token.py"))
    spec = importlib.util.spec_from_file_location("unsloth_zoo_pad_token", tmp_path / "pad_token.py")
    pad_token = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pad_token)
    tok, model = _load(built)
    with pytest.raises(RuntimeError, match="Could not find a valid pad token"):
        pad_token.fix_pad_token(tok, model)
    # tiny-pad (make gpu-check's default model): the same weights with <|fim_pad|> as pad, which the repair takes
    padded = tinymodel.padded_from(built)
    tok, model = _load(padded)
    pad_token.fix_pad_token(tok, model)
    assert tok.pad_token == tinymodel.PAD_TOKEN and model.config.pad_token_id == tok.pad_token_id == len(tok) - 1
    ids = torch.tensor([tok.encode("A dog is a", add_special_tokens=False)])
    same = _load(built)[1](input_ids=ids).logits
    assert torch.allclose(model(input_ids=ids).logits[..., :-1], same, atol=1e-5)  # one row added, nothing moved


def _corpus_loss(path) -> float:
    tok, model = _load(path)
    lines = (tinymodel.data_dir() / "corpus.txt").read_text(encoding="utf-8").splitlines()[::40]
    losses = []
    with torch.no_grad():
        for line in lines:
            ids = torch.tensor([tok.encode(line, add_special_tokens=False)])
            losses.append(model(input_ids=ids, labels=ids).loss.item())
    return sum(losses) / len(losses)


def test_warm_up_lowers_corpus_loss(built, tmp_path):
    fresh = tinymodel.build_tiny_model(out_dir=tmp_path / "fresh", warmup_steps=0, progress=False)
    before, after = _corpus_loss(fresh), _corpus_loss(built)
    assert before > math.log(1000)  # untrained: about uniform over the 2,048-token vocabulary
    assert after < before - 2.0, (before, after)
    warm = json.loads((built / "tiny_build.json").read_text())["warmup"]
    assert warm["loss_last"] < warm["loss_first"] - 1.0


def test_build_is_deterministic_at_one_and_two_threads(monkeypatch, tmp_path):
    monkeypatch.setattr(tinymodel, "build_threads", lambda: 1)
    a = tinymodel.build_tiny_model(out_dir=tmp_path / "a", warmup_steps=4, progress=False)
    monkeypatch.setattr(tinymodel, "build_threads", lambda: 2)  # what make pipeline uses on two cores
    b = tinymodel.build_tiny_model(out_dir=tmp_path / "b", warmup_steps=4, progress=False)
    for name in ("model.safetensors", "tokenizer.json", "vocab.json", "merges.txt", "config.json"):
        assert _sha(a / name) == _sha(b / name), name
    assert [json.loads((m / "tiny_build.json").read_text())["threads"] for m in (a, b)] == [1, 2]
    c = tinymodel.build_tiny_model(out_dir=tmp_path / "c", warmup_steps=4, seed=7, progress=False)
    assert _sha(a / "model.safetensors") != _sha(c / "model.safetensors")  # the seed does reach the weights


def test_the_build_takes_every_core_up_to_two_unless_tests_run_beside_it(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setattr(tinymodel.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5, 6, 7})
    assert tinymodel.build_threads() == 2
    monkeypatch.setattr(tinymodel.os, "sched_getaffinity", lambda pid: {0})
    assert tinymodel.build_threads() == 1
    monkeypatch.setattr(tinymodel.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")  # the other worker runs tests on the other core
    assert tinymodel.build_threads() == 1


def test_threads_and_determinism_flags_are_restored(tmp_path):
    before = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
    tinymodel.build_tiny_model(out_dir=tmp_path / "m", warmup_steps=1, progress=False)
    assert (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()) == before


def test_cache_is_reused(monkeypatch, tmp_path):
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "_cache"))  # never the shared cache the other tests use
    first = tinymodel.ensure_tiny_model(warmup_steps=2, progress=False)
    assert first.parent == tmp_path / "_cache" and first.name.startswith("tiny-")
    monkeypatch.delenv("KIT_CACHE_DIR")
    assert tinymodel.config.cache_root() == tinymodel.config.runs_root() / "_cache"  # the default: under runs/
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "_cache"))

    def no_rebuild(*args, **kwargs):
        raise AssertionError("rebuilt a complete cached model")

    monkeypatch.setattr(tinymodel, "_build_into", no_rebuild)
    assert tinymodel.ensure_tiny_model(warmup_steps=2, progress=False) == first
    assert tinymodel.cache_path(tinymodel.spec_for(3, None)) != first  # other parameters, other cache entry


def test_half_written_or_corrupted_cache_is_rebuilt(monkeypatch, tmp_path):
    monkeypatch.setenv("KIT_CACHE_DIR", str(tmp_path / "_cache"))  # it corrupts a build on purpose: never the shared one
    path = tinymodel.cache_path(tinymodel.spec_for(2, None))
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")  # a crash mid-build: no tiny_build.json
    assert not tinymodel.is_complete(path)
    assert tinymodel.ensure_tiny_model(warmup_steps=2, progress=False) == path
    assert tinymodel.is_complete(path) and (path / "model.safetensors").exists()
    good = _sha(path / "model.safetensors")
    (path / "model.safetensors").write_bytes(b"truncated")
    assert not tinymodel.is_complete(path)
    tinymodel.ensure_tiny_model(warmup_steps=2, progress=False)
    assert _sha(path / "model.safetensors") == good


def test_out_dir_built_with_other_parameters_is_rebuilt(tmp_path):
    out = tmp_path / "model"
    tinymodel.build_tiny_model(out_dir=out, warmup_steps=1, progress=False)
    tinymodel.build_tiny_model(out_dir=out, warmup_steps=2, progress=False)
    assert json.loads((out / "tiny_build.json").read_text())["spec"]["warmup_steps"] == 2
    # the old build was moved aside and removed; the empty lock file that one build at a time holds stays
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "model.lock"]


def test_failed_build_leaves_nothing_behind(monkeypatch, tmp_path):
    def boom(*args, **kwargs):
        raise RuntimeError("simulated crash during warm-up")

    monkeypatch.setattr(tinymodel, "warm_up", boom)
    with pytest.raises(RuntimeError, match="simulated crash"):
        tinymodel.build_tiny_model(out_dir=tmp_path / "model", warmup_steps=2, progress=False)
    assert [p.name for p in tmp_path.iterdir()] == ["model.lock"]  # neither the target nor a temp directory


def test_processes_asking_at_once_build_the_model_once(monkeypatch, tmp_path):
    """Notebooks 03-05 side by side (and two test tiers) ask for the same folder at once: one builds, the others wait
    for it and find it current. Threads stand in for the processes: each opens the lock file itself, as they do."""
    import threading
    import time

    calls = []

    def slow_build(tmp, spec, threads, *, progress):
        calls.append(spec)
        time.sleep(0.3)  # long enough that every caller arrives while the first is still building
        (tmp / "model.safetensors").write_bytes(b"weights")
        files = {"model.safetensors": tinymodel.sha256_file(tmp / "model.safetensors")}
        (tmp / tinymodel.MARKER).write_text(json.dumps({"hash": tinymodel.build_hash(spec, tinymodel.data_dir()),
                                                        "files": files}))

    monkeypatch.setattr(tinymodel, "_build_into", slow_build)
    got = []
    callers = [threading.Thread(target=lambda: got.append(tinymodel.build_tiny_model(
        out_dir=tmp_path / "model", warmup_steps=2, progress=False))) for _ in range(3)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert got == [tmp_path / "model"] * 3 and len(calls) == 1, (got, len(calls))


def test_build_hash_covers_data_and_spec(tmp_path):
    spec = tinymodel.spec_for(2, None)
    for name in tinymodel.BUNDLED_FILES:
        (tmp_path / name).write_bytes((tinymodel.data_dir() / name).read_bytes())
    base = tinymodel.build_hash(spec, tmp_path)
    assert tinymodel.build_hash(tinymodel.spec_for(3, None), tmp_path) != base
    (tmp_path / "corpus.txt").write_text((tmp_path / "corpus.txt").read_text() + "A new fact.\n")
    assert tinymodel.build_hash(spec, tmp_path) != base
