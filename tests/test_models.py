"""Model loading and adapters: backend choice on fabricated facts, settings, dtype kwarg, LoRA/rsLoRA/DoRA."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import pytest
import torch

from helpers import config, io, models, scoring
from helpers.models import compat, settings
from helpers.io import InputError

from _tiny import ROOT, cpu_recommendation, one_torch_thread, tiny_model_dir

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
SMOKE = config.load_profile("smoke")
# every setting of the model section on "auto" (as base.yaml has them), the smoke profile's 256 tokens, and
# checkpointing on as base.yaml has it (the smoke profile turns it off: the tiny model needs no activation savings)
MODEL = dataclasses.replace(SMOKE.model, dtype="auto", load_in_4bit="auto", use_unsloth="auto",
                            gradient_checkpointing=True)


def spec(method: str, r: int, alpha: float) -> config.AdapterSpec:
    """An adapter of the smoke profile's kind (no dropout) with this method, rank and alpha."""
    return dataclasses.replace(SMOKE.models["model1_lora"], method=method, r=r, alpha=float(alpha))


def facts(backend: str, unsloth: bool, unmet: tuple = (), bnb: str | None = "0.50.2") -> dict:
    return {"backend": backend, "packages": {"bitsandbytes": bnb},
            "unsloth": {"importable": unsloth, "detail": "fabricated", "version": "2026.10.9", "zoo": "2026.10.9",
                        "unmet": list(unmet)}}



_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)

# ---------------------------------------------------------------- backend selection (pure, fabricated facts)
@pytest.mark.parametrize("env_info, use_unsloth, expected", [
    (facts("rocm", True), "auto", "unsloth"),
    (facts("cuda", True), True, "unsloth"),
    (facts("rocm", True), False, "transformers"),        # the profile opts out
    (facts("rocm", False), "auto", "transformers"),      # installed but broken / absent
    (facts("rocm", True, ("trl 0.19.0 (Unsloth wants !=0.19.0)",)), "auto", "transformers"),  # the container's pins
    (facts("cpu", True), "auto", "transformers"),        # the kit uses Unsloth only on a GPU
    (facts("cuda", True, bnb=None), "auto", "transformers"),  # imports, but loads nothing without bitsandbytes
    ({"use_unsloth": {"value": True, "reason": "r"}}, "auto", "unsloth"),   # env.recommend() output
    ({"use_unsloth": {"value": False, "reason": "r"}}, "auto", "transformers"),
    (None, "auto", "transformers"),
])
def test_choose_backend(env_info, use_unsloth, expected):
    real = dataclasses.replace(MODEL, base="Qwen/Qwen2.5-0.5B-Instruct", use_unsloth=use_unsloth)
    assert models.choose_backend(env_info, real) == expected


def test_unsloth_without_bitsandbytes_says_why_and_refuses_an_explicit_true():
    """On an H200, `import unsloth` worked without bitsandbytes but every load stopped in unsloth_zoo's
    patch_model_and_tokenizer ('Please install bitsandbytes'), for a 16-bit LoRA too: auto falls back and says so."""
    real = dataclasses.replace(MODEL, base="Qwen/Qwen2.5-0.5B-Instruct")
    backend, why = settings.backend_choice(facts("cuda", True, bnb=None), real)
    assert backend == "transformers" and "bitsandbytes is not installed" in why
    with pytest.raises(RuntimeError, match="bitsandbytes"):
        models.choose_backend(facts("rocm", True, bnb=None), dataclasses.replace(real, use_unsloth=True))
    assert settings.choose_backend(facts("cuda", True, bnb="0.44.1"), real) == "unsloth"  # an old build still imports
    broken = {**facts("cuda", True), "bitsandbytes": {"importable": False, "detail": "OSError: no CUDA library"}}
    backend, why = settings.backend_choice(broken, real)
    assert backend == "transformers" and "fails to import (OSError" in why


def test_the_tiny_model_stays_on_peft_where_unsloth_runs():
    """Unsloth refused the tiny model's tokenizer on an H200 (pad = eos, no pad-named token): auto trains it on
    transformers + PEFT, an explicit true says why, and a real model (or the tiny one standing in) is unaffected."""
    assert MODEL.weights == "tiny" and models.choose_backend(facts("cuda", True), MODEL) == "transformers"
    with pytest.raises(RuntimeError, match="Unsloth refuses the kit's tiny model"):
        models.choose_backend(facts("rocm", True), dataclasses.replace(MODEL, use_unsloth=True))
    assert models.choose_backend(facts("cpu", False), MODEL) == "transformers"
    stand_in = dataclasses.replace(MODEL, base="Qwen/Qwen2.5-72B-Instruct", stand_in="tiny")
    assert models.choose_backend(facts("rocm", True), stand_in) == "transformers"


def test_the_backend_choice_says_why():
    """One rule gives the backend and its reason (make gpu-check's backend step prints it): the tiny model's refusal
    where Unsloth runs, the recommendation's own reason, the profile's opt-out."""
    from helpers.models.settings import TINY_REFUSED, backend_choice
    assert backend_choice({"use_unsloth": {"value": True, "reason": "rocm, importable"}}, MODEL) == \
        ("transformers", TINY_REFUSED)
    real = dataclasses.replace(MODEL, base="Qwen/Qwen2.5-0.5B-Instruct")
    assert backend_choice({"use_unsloth": {"value": True, "reason": "rocm, importable"}}, real) == \
        ("unsloth", "rocm, importable")
    assert backend_choice({"use_unsloth": {"value": False, "reason": "no GPU"}}, MODEL) == ("transformers", "no GPU")
    assert backend_choice(facts("rocm", True), dataclasses.replace(real, use_unsloth=False))[0] == "transformers"


def test_explicit_unsloth_that_cannot_run_is_an_error():
    with pytest.raises(RuntimeError, match="use_unsloth is true"):
        models.choose_backend(facts("cpu", False), dataclasses.replace(MODEL, use_unsloth=True))


# ---------------------------------------------------------------- settings
def test_auto_settings_come_from_the_recommendation_and_explicit_ones_win():
    rec = {"dtype": {"value": "bfloat16"}, "optim": {"value": "adamw_torch"}, "load_in_4bit": {"value": False},
           "attn_implementation": {"value": "sdpa"}}
    s = models.resolve_settings(MODEL, rec, dataclasses.replace(SMOKE.train, optim="auto"))
    assert (s["dtype"], s["optim"], s["attn_implementation"], s["load_in_4bit"]) == ("bfloat16", "adamw_torch", "sdpa", False)
    s = models.resolve_settings(dataclasses.replace(MODEL, dtype="fp16", attn_implementation="eager"), rec,
                                dataclasses.replace(SMOKE.train, optim="sgd"))
    assert (s["dtype"], s["attn_implementation"], s["optim"]) == ("float16", "eager", "sgd")
    with pytest.raises(ValueError, match="model.dtype"):
        models.resolve_settings(dataclasses.replace(MODEL, dtype="int3"), rec)


def test_gradient_checkpointing_auto_follows_the_recommendation():
    for rec_value, expected in ((True, True), (False, False)):
        rec = {"gradient_checkpointing": {"value": rec_value, "reason": "r"}}
        auto = dataclasses.replace(MODEL, gradient_checkpointing="auto")
        assert models.resolve_settings(auto, rec)["gradient_checkpointing"] is expected
    rec = {"gradient_checkpointing": {"value": False, "reason": "CPU"}}
    assert models.resolve_settings(MODEL, rec)["gradient_checkpointing"] is True  # the profile's explicit true wins


@pytest.mark.parametrize("requested, recommended, expected", [
    (True, True, True), ("auto", True, True), (True, False, False), (False, True, False), ("auto", False, False)])
def test_4bit_only_when_requested_and_recommended(requested, recommended, expected):
    s = models.resolve_settings(dataclasses.replace(MODEL, load_in_4bit=requested),
                                {"load_in_4bit": {"value": recommended}})
    assert s["load_in_4bit"] is expected


@pytest.mark.parametrize("version, key", [("4.51.3", "torch_dtype"), ("4.55.4", "torch_dtype"), ("4.56.0", "dtype"),
                                          ("5.23.0", "dtype"), ("5.0.0rc1", "dtype")])
def test_dtype_kwarg_by_transformers_version(version, key):
    assert compat.dtype_kwarg(torch.bfloat16, version) == {key: torch.bfloat16}


def test_installed_transformers_accepts_the_chosen_dtype_kwarg():
    import transformers
    from transformers import AutoModelForCausalLM
    chosen = compat.dtype_kwarg(torch.bfloat16)
    key = next(iter(chosen))
    assert key == ("dtype" if io.version_tuple(transformers.__version__) >= (4, 56) else "torch_dtype")
    # Runs under both tiers (make test: 5.x, make test-container: 4.51.3). 4.51.3 raises TypeError on dtype=;
    # bfloat16, not the float32 default, so a keyword that was accepted but ignored fails too.
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()), **chosen)
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}


def test_target_modules_are_filtered_to_those_present():
    names = ["model.layers.0.self_attn.q_proj", "model.layers.0.mlp.up_proj", "lm_head"]
    assert models.filter_target_modules(names, ["q_proj", "k_proj", "up_proj"]) == ["q_proj", "up_proj"]


# ---------------------------------------------------------------- loading (the tiny model on CPU)
def _checkpointing(model) -> bool:
    flag = getattr(type(model), "is_activation_checkpointing", None)  # transformers 5.x name
    return bool(model.is_activation_checkpointing if flag is not None else model.is_gradient_checkpointing)


@pytest.fixture(scope="module")
def train_load():
    return models.load_model(tiny_model_dir(), model=MODEL, recommendation=cpu_recommendation(),
                             for_training=True)


def test_load_for_training(train_load):
    model, tok, info = train_load
    assert info["backend"] == "transformers" and info["dtype"] == "float32" and info["device"] == "cpu"
    assert tok.padding_side == "right" and tok.pad_token == "<|endoftext|>"
    assert _checkpointing(model) and model.config.use_cache is False
    assert info["total_params"] == sum(p.numel() for p in model.parameters())


def test_load_for_scoring_pads_left_and_evaluates():
    model, tok, _ = models.load_model(tiny_model_dir(), model=MODEL, recommendation=cpu_recommendation(),
                                      for_training=False)
    assert tok.padding_side == "left" and not model.training and not _checkpointing(model)


def test_base_tiny_goes_through_ensure_tiny_model(monkeypatch):
    import helpers.models.tiny as tm
    calls = []
    monkeypatch.setattr(tm, "ensure_tiny_model", lambda **kw: calls.append(kw) or tiny_model_dir())
    _, _, info = models.load_model("tiny", model=MODEL, recommendation=cpu_recommendation(),
                                   for_training=False, tiny_kwargs={"warmup_steps": 0})
    assert calls == [{"warmup_steps": 0}] and info["kind"] == "tiny"


def test_missing_local_model_dir_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="not found"):
        models.load_model("./no/such/model", model=MODEL, for_training=False)
    (tmp_path / "m").mkdir()
    with pytest.raises(InputError, match="config.json"):
        models.load_model(tmp_path / "m", model=MODEL, for_training=False)


def test_pad_token_falls_back_to_eos():
    class Tok:
        pad_token, eos_token, unk_token, padding_side = None, "</s>", None, "right"
    t = models.prepare_tokenizer(Tok(), for_training=False)
    assert t.pad_token == "</s>" and t.padding_side == "left"


# ---------------------------------------------------------------- adapters
def _fresh(train_load):
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))


def _lora_layers(model):
    return [m for n, m in model.named_modules() if n.endswith("self_attn.q_proj") and hasattr(m, "scaling")]


def test_lora_scaling_is_alpha_over_r(train_load):
    model = models.add_adapter(_fresh(train_load), spec("lora", 8, 16), TARGETS)
    assert all(m.scaling["default"] == pytest.approx(16 / 8) for m in _lora_layers(model))
    assert not any("lora_magnitude_vector" in n for n, _ in model.named_parameters())


def test_rslora_scaling_is_alpha_over_sqrt_r(train_load):
    model = models.add_adapter(_fresh(train_load), spec("rslora", 16, 32), TARGETS)
    layers = _lora_layers(model)
    assert layers and all(m.scaling["default"] == pytest.approx(32 / math.sqrt(16)) for m in layers)
    assert 32 / math.sqrt(16) != 32 / 16  # 8.0 vs 2.0: the test can tell the two apart


def test_dora_has_trainable_magnitude_vectors(train_load):
    model = models.add_adapter(_fresh(train_load), spec("dora", 8, 16), ["q_proj", "v_proj"])
    mags = [n for n, p in model.named_parameters() if "lora_magnitude_vector" in n and p.requires_grad]
    n_layers = model.config.num_hidden_layers
    assert len(mags) == 2 * n_layers  # one per adapted projection
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert all("lora_" in n for n in trainable)  # the base model stays frozen


def test_only_present_target_modules_are_adapted_and_none_is_an_error(train_load):
    model = models.add_adapter(_fresh(train_load), spec("lora", 4, 8), ["q_proj", "w_pack"])
    assert sorted(model.peft_config["default"].target_modules) == ["q_proj"]
    with pytest.raises(ValueError, match="linear layers are"):
        models.add_adapter(_fresh(train_load), spec("lora", 4, 8), ["w_pack", "c_attn"])
    with pytest.raises(ValueError, match="method"):
        models.add_adapter(_fresh(train_load), spec("qlora2", 4, 8), ["q_proj"])


def test_adapter_round_trip_is_safetensors_only(train_load, tmp_path):
    model = models.add_adapter(_fresh(train_load), spec("dora", 4, 8), ["q_proj"])
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.fill_(0.01)  # B starts at zero; make the saved adapter non-trivial
    model.save_pretrained(str(tmp_path / "a"))
    loaded = models.load_adapter(_fresh(train_load), tmp_path / "a")
    want, got = models.adapter_state(model), models.adapter_state(loaded)
    assert want.keys() == got.keys() and all(torch.equal(want[k], got[k]) for k in want)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "adapter_config.json").write_text((tmp_path / "a" / "adapter_config.json").read_text())
    torch.save(want, tmp_path / "b" / "adapter_model.bin")  # a pickle: refused
    with pytest.raises(InputError, match="safetensors"):
        models.load_adapter(_fresh(train_load), tmp_path / "b")


def test_resume_weights_must_match_the_adapter(train_load, tmp_path):
    lora = models.add_adapter(_fresh(train_load), spec("lora", 4, 8), ["q_proj"])
    lora.save_pretrained(str(tmp_path))
    dora = models.add_adapter(_fresh(train_load), spec("dora", 4, 8), ["q_proj"])
    with pytest.raises(InputError, match="does not match"):
        models.load_adapter_weights(dora, tmp_path)


def test_importing_the_training_helpers_leaves_transformers_unimported():
    # Unsloth must be imported before transformers/peft: the helpers may only import them lazily.
    code = ("import sys; import helpers.models, helpers.train, helpers.train.telemetry, helpers.prompts, "
            "helpers.train.data, helpers.train.checkpoints; "
            "bad = [m for m in ('transformers', 'peft', 'trl', 'unsloth') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("value, expected", [("false", False), (False, False), ("no", False), (None, False),
                                             (True, True), ("true", True)])
def test_tokenizer_alone_reads_trust_remote_code_as_load_model_does(monkeypatch, value, expected):
    import transformers
    seen = {}

    def fake(source, **kw):
        seen.update(kw)
        return transformers.PreTrainedTokenizerFast.from_pretrained(str(tiny_model_dir()))

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", fake)
    model = dataclasses.replace(MODEL, trust_remote_code=value)
    tok = models.load_tokenizer(str(tiny_model_dir()), model)
    assert seen["trust_remote_code"] is expected  # a string "false" must never switch remote code on
    assert models.resolve_settings(model, None)["trust_remote_code"] is expected
    assert tok.padding_side == "left"


def test_letter_check_agrees_with_batched_scoring():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from _tiny import bundled_records
    from helpers import scoring
    tok = models.prepare_tokenizer(AutoTokenizer.from_pretrained(str(tiny_model_dir())), for_training=False)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    recs = bundled_records(3)
    rows = scoring.letter_check(model, tok, recs)
    probs = scoring.score_letters(model, tok, recs)
    for row, rec, p in zip(rows, recs, probs):
        assert row["adapter_p_answer"] == pytest.approx(p[rec["answer"]], abs=2e-3)
