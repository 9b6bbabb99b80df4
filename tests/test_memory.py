"""helpers.env.memory: shapes, parameter counts, the original team's MI300X calibration, monotonicity and the CLI."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.env import memory
from helpers.io import InputError
from helpers.env.memory import GIB, estimate, fits, get_shape

ROOT = Path(__file__).resolve().parent.parent
Q72 = "Qwen/Qwen2.5-72B-Instruct"
# The original team's MI300X run (seeds 000/003): Qwen2.5-72B-Instruct, bf16, LoRA r=64 on all linear layers,
# batch 4 x seq 2048, gradient checkpointing, adamw_torch, through Unsloth: rocm-smi showed 135-159 "GB"
# (GiB-like: the 192 "GB" device is 191.7 GiB); the middle is 147.
SEED_RUN = dict(method="lora", dtype="bf16", rank=64, target_modules="all-linear", batch_size=4, seq_len=2048,
                grad_checkpointing=True, optimizer="adamw_torch")


def small_config(**over) -> dict:
    """A tiny Qwen2-style config.json as a dict."""
    cfg = {"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 3,
           "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "tie_word_embeddings": False}
    cfg.update(over)
    return cfg


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """python -m helpers.env memory ARGS from the project root."""
    return subprocess.run([sys.executable, "-m", "helpers.env", "memory", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


# --- shapes and parameter counts -------------------------------------------------------------------

@pytest.mark.parametrize("name, published_b, tol", [
    (Q72, 72.7, 0.005),                        # model card: 72.7B
    ("Qwen/Qwen2.5-0.5B-Instruct", 0.49, 0.01),  # model card: 0.49B
    ("Qwen/Qwen2.5-7B-Instruct", 7.61, 0.005),
    ("Qwen/Qwen3-4B", 4.0, 0.01),
    ("Qwen/Qwen3-235B-A22B", 235.0, 0.01),
    ("meta-llama/Llama-3.1-8B", 8.03, 0.005),
    ("meta-llama/Llama-3.1-70B", 70.6, 0.005),
])
def test_param_counts_match_published_sizes(name, published_b, tol):
    total = memory.count_params(get_shape(name))["total"] / 1e9
    assert total == pytest.approx(published_b, rel=tol)


def test_moe_total_vs_active():
    p = memory.count_params(get_shape("Qwen/Qwen3-235B-A22B"))
    assert p["total"] / 1e9 == pytest.approx(235, rel=0.01)
    assert p["active"] / 1e9 == pytest.approx(22, rel=0.03)  # "A22B": 8 of 128 experts per token
    dense = memory.count_params(get_shape(Q72))
    assert dense["active"] == dense["total"] and dense["experts"] == 0


def test_tiny_config_counts_by_hand():
    s = get_shape(small_config())
    h, q, kv, i, v, layers = 64, 64, 2 * 16, 96, 1000, 3
    attn = 2 * h * q + 2 * h * kv + (q + 2 * kv)  # q/o, k/v weights + Qwen2's q/k/v biases
    expected = v * h * 2 + layers * (attn + 3 * h * i + 2 * h) + h
    assert memory.count_params(s)["total"] == expected
    tied = memory.count_params(get_shape(small_config(tie_word_embeddings=True)))["total"]
    assert expected - tied == v * h  # a tied lm_head adds nothing


def test_lora_trainable_params_match_the_seeds_report():
    # seed 002: "Trainable params: 839M (1.15% of total)" for 72B, r=64, all linear layers
    n = memory.adapter_params(get_shape(Q72), 64, "all-linear")
    by_hand = 80 * 64 * (2 * (8192 + 8192) + 2 * (8192 + 1024) + 3 * (8192 + 29568))
    assert n == by_hand
    assert n / 1e6 == pytest.approx(839, rel=0.01)
    assert 100 * n / memory.count_params(get_shape(Q72))["total"] == pytest.approx(1.15, abs=0.02)


def test_a_72b_chunk_checkpoint_is_ten_gigabytes_at_rank_64_and_twenty_at_128():
    """Adapter weights in fp32 (4 B) + AdamW's two fp32 moments (8 B) a trainable parameter: 839M parameters (the
    seeds' count; the shapes give 842M) are ~10 GB, not the 3.4 GB of the adapter's weights alone."""
    n = memory.adapter_params(get_shape(Q72), 64, "all-linear")
    one = memory.adapter_checkpoint_bytes(Q72, rank=64)
    assert one == n * (4 + 8) + memory.CHECKPOINT_FIXED_BYTES
    assert one / 1e9 == pytest.approx(839e6 * 12 / 1e9, rel=0.01) and 10.0 < one / 1e9 < 10.2
    assert n * 4 / 1e9 == pytest.approx(3.4, abs=0.05)  # the weights alone: what "3.4 GB" counted
    assert memory.adapter_checkpoint_bytes(Q72, rank=128, method="rslora") / 1e9 == pytest.approx(20.2, abs=0.05)
    assert memory.adapter_checkpoint_bytes(Q72, rank=64, method="dora") > one  # + the magnitude vectors
    eight_bit = memory.adapter_checkpoint_bytes(Q72, rank=64, optimizer="adamw_8bit")
    assert eight_bit == int(n * (4 + 2 + 8 / 256)) + memory.CHECKPOINT_FIXED_BYTES  # 1-byte moments + absmax
    assert memory.checkpoint_bytes(n, "adafactor") == memory.checkpoint_bytes(n)  # unknown: counted as AdamW
    assert memory.checkpoint_bytes(n, extra_bytes=5000) == memory.checkpoint_bytes(n) + 5000
    with pytest.raises(ValueError, match="not an adapter"):
        memory.adapter_checkpoint_bytes(Q72, rank=64, method="full")


def test_the_checkpoint_table_follows_the_profiles_adapters():
    from helpers import config
    cfg = config.load_profile("mi300x")
    rows = {r["adapter"]: r for r in memory.checkpoint_table(cfg.model.base, cfg.models,
                                                              target_modules=cfg.train.target_modules,
                                                              keep=cfg.train.keep_checkpoints)}
    assert set(rows) == set(cfg.models)
    lora, rs = rows["model1_lora"], rows["model2_rslora"]
    assert lora["checkpoint_gib"] == pytest.approx(memory.adapter_checkpoint_bytes(Q72, rank=64) / GIB, abs=0.01)
    assert rs["checkpoint_gib"] == pytest.approx(2 * lora["checkpoint_gib"], rel=0.001) and rs["r"] == 128
    assert lora["kept_gib"] == pytest.approx(cfg.train.keep_checkpoints * lora["checkpoint_gib"], abs=0.02)
    every = memory.checkpoint_table(Q72, {"m": cfg.models["model1_lora"]}, keep=0)
    assert every[0]["kept_gib"] is None  # keep 0: every chunk's stays


@pytest.mark.parametrize("alias", ["qwen2.5-72b", "QWEN2.5-72B-INSTRUCT", "Qwen/Qwen2.5-72B", " qwen/qwen2.5-72b-instruct "])
def test_aliases_resolve(alias):
    assert get_shape(alias) == get_shape(Q72)


def test_235b_instruct_2507_alias_and_llama_aliases():
    assert get_shape("Qwen/Qwen3-235B-A22B-Instruct-2507") == get_shape("Qwen/Qwen3-235B-A22B")
    assert get_shape("llama-3.1-70b-instruct").hidden_size == 8192
    assert get_shape("meta-llama/Llama-3.1-8B-Instruct").vocab_size == 128256


def test_unknown_model_lists_known_names():
    with pytest.raises(ValueError) as err:
        get_shape("gpt-5-ultra")
    assert "gpt-5-ultra" in str(err.value) and Q72 in str(err.value)


def test_config_json_file_dir_dict_and_object(tmp_path):
    cfg = dict(memory.KNOWN_MODELS["Qwen/Qwen2.5-7B-Instruct"], architectures=["Qwen2ForCausalLM"])
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    want = dataclasses.replace(get_shape("qwen2.5-7b"), name="x")
    for src in (tmp_path / "config.json", str(tmp_path), cfg):
        assert dataclasses.replace(get_shape(src), name="x") == want

    class FakeConfig:  # what a transformers PretrainedConfig offers; unset fields come out as null
        def to_dict(self):
            return {**cfg, "head_dim": None, "attention_bias": None}
    assert dataclasses.replace(get_shape(FakeConfig()), name="x") == want


def test_multimodal_text_config_is_used():
    assert get_shape({"model_type": "wrapper", "text_config": small_config()}).hidden_size == 64


def test_bad_config_json_names_file_and_field(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in small_config().items() if k != "vocab_size"}))
    with pytest.raises(InputError) as err:
        get_shape(path)
    assert str(path) in str(err.value) and "vocab_size" in str(err.value)
    path.write_text(json.dumps(small_config(hidden_size="64")))
    with pytest.raises(InputError, match="hidden_size"):
        get_shape(path)
    path.write_text("{not json")
    with pytest.raises(InputError, match="line 1"):
        get_shape(path)
    with pytest.raises(InputError, match="not found"):
        get_shape(tmp_path / "missing.json")


# --- calibration against the seeds ----------------------------------------------------------------

def test_seed_72b_run_within_15_percent_of_measured():
    est = estimate(Q72, backend="unsloth", **SEED_RUN)  # the seeds trained through Unsloth
    assert est.total_gib == pytest.approx(147, rel=0.15)
    assert fits(est, memory.MI300X_GIB)
    # seed 000's "135.44GB used" reading is the bf16 weights alone, read as GiB
    assert est.weights / GIB == pytest.approx(135.44, rel=0.005)


def test_plain_transformers_path_costs_more_but_still_fits_mi300x():
    plain, fused = estimate(Q72, backend="transformers", **SEED_RUN), estimate(Q72, **SEED_RUN)
    assert plain.total_bytes > fused.total_bytes
    assert plain.logits > fused.logits and plain.activations > fused.activations
    assert fused.host_offload == 80 * 4 * 2048 * 8192 * 2  # Unsloth parks the 80 layer inputs in host RAM
    assert fits(plain, memory.MI300X_GIB)


@pytest.mark.parametrize("backend", memory.BACKENDS)
@pytest.mark.parametrize("targets", ["all-linear", ["q_proj", "k_proj", "v_proj", "o_proj"]])
def test_qwen3_235b_16bit_does_not_fit_mi300x(backend, targets):
    est = estimate("Qwen/Qwen3-235B-A22B-Instruct-2507", dtype="bf16", target_modules=targets, backend=backend)
    assert not fits(est, memory.MI300X_GIB, headroom=0.0)
    assert est.weights > memory.MI300X_GIB * GIB  # all 128 experts are resident, not only the active 8


def test_parts_sum_and_json_roundtrip():
    est = estimate(Q72, **SEED_RUN)
    d = json.loads(json.dumps(est.to_dict()))
    assert sum(d["parts"].values()) == d["total_bytes"] == est.total_bytes
    assert d["total_gib"] == pytest.approx(est.total_bytes / GIB, abs=0.01)
    assert est.transient == max(est.logits, est.layer_backward)


# --- monotonicity ---------------------------------------------------------------------------------

def test_grad_checkpointing_lowers_activations():
    on = estimate(Q72, grad_checkpointing=True)
    off = estimate(Q72, grad_checkpointing=False)
    assert on.activations < off.activations / 10 and on.total_bytes < off.total_bytes
    assert on.layer_backward > off.layer_backward > 0  # checkpointing recomputes a layer in backward


def test_4bit_lowers_weights():
    bf16, q4 = estimate(Q72, dtype="bf16"), estimate(Q72, dtype="4bit")
    assert q4.weights < bf16.weights / 3
    p = memory.count_params(get_shape(Q72))
    assert q4.weights > p["total"] * 0.5  # NF4 overhead + embeddings/lm_head kept in 16-bit
    assert estimate(Q72, dtype="float32").weights == 2 * bf16.weights


def test_full_is_bigger_than_lora_and_dora_at_least_lora():
    lora = estimate(Q72)
    assert estimate(Q72, method="full").total_bytes > lora.total_bytes
    dora = estimate(Q72, method="dora")
    assert dora.total_bytes >= lora.total_bytes and dora.trainable_params > lora.trainable_params
    assert dora.layer_backward > lora.layer_backward  # weight-norm and magnitude-scaling cost
    assert estimate(Q72, method="rslora").total_bytes == lora.total_bytes


def test_rank_raises_adapter_memory():
    r16, r128 = estimate(Q72, rank=16), estimate(Q72, rank=128)
    for part in ("trainable", "gradients", "optimizer"):
        assert getattr(r128, part) > getattr(r16, part)
    assert r128.trainable_params == 8 * r16.trainable_params


def test_vocab_raises_logits():
    small, big = estimate(small_config(vocab_size=32000)), estimate(small_config(vocab_size=152064))
    assert big.logits > small.logits
    assert big.logits / small.logits == pytest.approx(152064 / 32000)


@pytest.mark.parametrize("gc", [True, False])
def test_batch_and_seq_scale_activations_linearly(gc):
    base = estimate(Q72, batch_size=2, seq_len=1024, grad_checkpointing=gc).activations
    assert estimate(Q72, batch_size=4, seq_len=1024, grad_checkpointing=gc).activations == pytest.approx(2 * base)
    assert estimate(Q72, batch_size=2, seq_len=4096, grad_checkpointing=gc).activations == pytest.approx(4 * base)


def test_moe_weights_follow_all_experts_activations_follow_active_ones():
    base = get_shape("Qwen/Qwen3-235B-A22B")
    more_experts = dataclasses.replace(base, num_experts=256)
    more_active = dataclasses.replace(base, num_experts_per_tok=16)
    kw = dict(target_modules=["q_proj"], grad_checkpointing=False)
    e0, e1, e2 = estimate(base, **kw), estimate(more_experts, **kw), estimate(more_active, **kw)
    assert e1.weights > 1.9 * e0.weights and e2.weights == e0.weights
    assert e1.activations < 1.01 * e0.activations  # only the router's per-expert probabilities grow
    assert e2.activations > 1.3 * e0.activations


def test_optimizers_and_dropout():
    adam, adam8, sgd = (estimate(Q72, optimizer=o) for o in ("adamw_torch", "adamw_8bit", "sgd"))
    assert sgd.optimizer == 0 < adam8.optimizer < adam.optimizer / 3
    assert estimate(Q72, lora_dropout=0.05).layer_backward > adam.layer_backward


@pytest.mark.parametrize("kwargs", [dict(method="qlora"), dict(dtype="int8"), dict(rank=0), dict(batch_size=-1),
                                    dict(target_modules=["lm_head"]), dict(optimizer="lion"),
                                    dict(method="full", dtype="4bit"), dict(lora_dropout=1.5)])
def test_bad_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        estimate(Q72, **kwargs)


# --- table and chart ------------------------------------------------------------------------------

def test_fit_table_and_plot(tmp_path):
    rows = memory.fit_table(["qwen2.5-0.5b", Q72, "qwen3-235b-a22b"], memory.MI300X_GIB, backend="unsloth")
    assert [r["fits"] for r in rows] == [True, True, False]
    for r in rows:
        parts = r["weights_gib"] + r["train_state_gib"] + r["activations_gib"] + r["transient_gib"] + r["overhead_gib"]
        assert parts == pytest.approx(r["total_gib"], abs=0.05)
    png = memory.plot_fit_table(rows, memory.MI300X_GIB, tmp_path / "fit" / "fit.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


# --- command line ---------------------------------------------------------------------------------

def test_cli_json_matches_api():
    res = run_cli("--model", "qwen2.5-72b", "--dtype", "bf16", "--method", "lora", "--rank", "64",
                  "--batch-size", "4", "--seq-len", "2048", "--grad-checkpointing", "--json", "--device-gib", "191.7")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["total_gib"] == round(estimate(Q72, **SEED_RUN).total_gib, 2)
    assert set(out["parts"]) == set(memory.MemoryEstimate.PARTS) and out["fits"] is True


def test_cli_table_and_no_grad_checkpointing():
    on, off = run_cli("--model", "qwen2.5-0.5b"), run_cli("--model", "qwen2.5-0.5b", "--no-grad-checkpointing")
    assert on.returncode == off.returncode == 0
    assert "total" in on.stdout and "grad checkpointing on" in on.stdout and "grad checkpointing off" in off.stdout


def test_cli_list_models():
    res = run_cli("--list-models", "--json")
    assert res.returncode == 0 and set(json.loads(res.stdout)) == set(memory.KNOWN_MODELS)


@pytest.mark.parametrize("args", [("--model", "qwen2.5-72b", "--rank", "abc"), ("--model", "qwen2.5-72b", "--dtype", "int3"),
                                  ("--model", "qwen2.5-72b", "--rank", "0"), ()])
def test_cli_bad_argument_exits_2_without_traceback(args):
    res = run_cli(*args)
    assert res.returncode == 2 and "Traceback" not in res.stderr and "error" in res.stderr


def test_cli_unknown_model_is_one_line():
    res = run_cli("--model", "gpt-5-ultra")
    assert res.returncode == 2 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and "unknown model" in res.stderr


def test_cli_config_json_path(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(small_config()))
    res = run_cli("--model", str(path), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["params"]["total"] == memory.count_params(get_shape(small_config()))["total"]
    path.write_text('{"hidden_size": 64,')
    bad = run_cli("--model", str(path))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and str(path) in bad.stderr


def test_the_readme_command_line_lands_within_15_percent_of_the_seeds_147():
    """The exact command a team would type; the default backend is the kit's GPU path (Unsloth)."""
    proc = subprocess.run([sys.executable, "-m", "helpers.env", "memory", "--model", "Qwen/Qwen2.5-72B-Instruct",
                           "--dtype", "bf16", "--method", "lora", "--rank", "64", "--batch-size", "4",
                           "--seq-len", "2048", "--grad-checkpointing", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    total = json.loads(proc.stdout)["total_gib"]
    assert abs(total - 147) / 147 <= 0.15, total


# --- the RL stage: one GRPO step ---------------------------------------------------------------------

def test_an_rl_step_holds_the_kv_cache_of_every_completion_and_trains_them_as_one_batch():
    """The generating phase's KV cache is 2 x layers x kv heads x head_dim x 2 bytes a token (Qwen2.5-72B: 80 x 8 x
    128: 320 KiB a token), for every completion at full length; the training phase is estimate() over those
    completions, plus one fp32 reference log-probability a token when beta > 0."""
    kw = dict(prompt_len=320, completion_len=256, method="lora", rank=16, dtype="bf16", backend="transformers")
    one = memory.rl_estimate(Q72, completions=8, beta=0.0, **kw)
    two = memory.rl_estimate(Q72, completions=16, beta=0.0, **kw)
    assert one["kv_cache_gib"] == pytest.approx(2 * 80 * 8 * 128 * 2 * 8 * 576 / GIB, abs=0.01)
    assert two["kv_cache_gib"] == pytest.approx(2 * one["kv_cache_gib"], abs=0.01)
    plain = estimate(Q72, batch_size=16, seq_len=576, method="lora", rank=16, dtype="bf16", backend="transformers")
    assert two["training_gib"] == pytest.approx(plain.total_gib, abs=0.01)
    kl = memory.rl_estimate(Q72, completions=16, beta=0.04, **kw)
    assert kl["training_gib"] - two["training_gib"] == pytest.approx(16 * 576 * 4 / GIB, abs=0.01)
    assert two["peak_gib"] == max(two["generating_gib"], two["training_gib"]) and two["phase"] == "training"


def test_the_mi300x_rl_stage_fits_one_card_only_with_checkpointing():
    """The mi300x profile's group (2 puzzles x 8 completions of 256 tokens) on the 72B: inside 95% of an MI300X with
    gradient checkpointing, far over it without (16 x 576 tokens of saved activations)."""
    kw = dict(completions=16, prompt_len=320, completion_len=256, beta=0.04, method="lora", rank=16, dtype="bf16",
              backend="transformers")
    assert memory.fits_gib(memory.rl_estimate(Q72, grad_checkpointing=True, **kw)["peak_gib"], memory.MI300X_GIB)
    assert not memory.fits_gib(memory.rl_estimate(Q72, grad_checkpointing=False, **kw)["peak_gib"], memory.MI300X_GIB)
