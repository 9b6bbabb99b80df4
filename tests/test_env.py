"""helpers.env and helpers.env.rules: each rule fires on a fabricated record and stays quiet on a near miss."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from conftest import FIXTURES
from helpers import env
from helpers.env import facts as env_facts
from helpers.env import pinsets
from helpers.config import deep_merge, load_profile
from helpers.env.rules import RULES, Rule, evaluate, normalize_settings, settings_from_cfg, summarize, unsloth_keeps_4bit
from helpers.io import read_json

ENV_FIXTURES = FIXTURES / "env"


def fixture(name: str) -> dict:
    """A fabricated facts record from tests/fixtures/env/ (see each file's _about)."""
    data = json.loads((ENV_FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    data.pop("_about")
    return data


# The seeds' MI300X once every lesson is applied: the base on which each rule is made to fire. Unsloth imports, so it
# is the backend, and no allocator variable is set (Unsloth removes expandable_segments on ROCm).
HEALTHY_PATCH = {
    "packages": {"triton": None},
    "triton": {"module_version": "3.1.0"},
    "unsloth": {"importable": True, "detail": "ok (21.0 s)"},
    "bitsandbytes": {"usable": True, "detail": "ok (5.2 s)", "libs": ["libbitsandbytes_rocm62.so"]},
    "env": {"TORCH_COMPILE": "0", "TORCHDYNAMO_DISABLE": "1", "PYTORCH_HIP_ALLOC_CONF": None,
            "TOKENIZERS_PARALLELISM": "false"},
    "disk": {"runs": {"free_gib": 400.0}, "hf_cache": {"free_gib": 400.0}},
    "hf_cache": {"size_gib": 150.0},
}
BASE_SETTINGS = {"min_free_disk_gb": 200, "hf_cache_warn_gb": 300, "dtype": "bfloat16", "load_in_4bit": False,
                 "use_unsloth": "auto", "optim": "adamw_torch", "model_gib": None}


def base_facts(patch: dict | None = None) -> dict:
    """A healthy fabricated MI300X record, with `patch` deep-merged over it."""
    return deep_merge(deep_merge(fixture("mi300x_seeds"), HEALTHY_PATCH), patch or {})


def verdict(rule_id: str, facts_patch: dict, settings_patch: dict) -> dict:
    checks = evaluate(base_facts(facts_patch), {**BASE_SETTINGS, **settings_patch})
    return next(c for c in checks if c["id"] == rule_id)


GFX906 = {"gpu": {"name": "AMD Instinct MI50/MI60", "arch": "gfx906:sramecc+:xnack-", "gfx": "gfx906",
                  "native_gfx": ["gfx906"], "vram_total_gib": 31.98, "vram_free_gib": 31.7, "bf16": False}}
CPU_ONLY = {"backend": "cpu", "torch": {"version": "2.13.0+cpu", "hip": None, "cuda_available": False},
            "gpu": {"count": 0, "name": None, "arch": None, "gfx": None, "native_gfx": [], "vram_total_gib": None,
                    "vram_free_gib": None, "bf16": None}}
CUDA = {"backend": "cuda", "torch": {"version": "2.5.1+cu124", "hip": None, "cuda": "12.4"},
        "triton": {"torch_requires": "3.1.0"},
        "gpu": {"name": "NVIDIA T4", "arch": None, "gfx": None, "native_gfx": [], "compute_capability": [7, 5],
                "bf16": False}}


def _with(*patches: dict) -> dict:
    out: dict = {}
    for p in patches:
        out = deep_merge(out, p)
    return out


# (rule id, (facts patch, settings patch) that fires it, (facts patch, settings patch) of a near miss)
RULE_CASES = [
    ("torch_missing", ({"torch": {"version": None}, "errors": {"torch": "ModuleNotFoundError: No module 'torch'"}}, {}),
     ({"errors": {"bitsandbytes": "OSError: boom"}}, {})),
    ("probe_errors", ({"errors": {"gpu.vram_free_gib": "RuntimeError: HIP error: invalid argument"}}, {}),
     ({"errors": {}}, {})),
    ("python_version", ({"python": {"version": "3.13.1"}}, {}), ({"python": {"version": "3.12.3"}}, {})),
    ("transformers_torch_mismatch", ({"packages": {"transformers": "5.23.0"}, "torch": {"version": "2.5.1+rocm6.2"}}, {}),
     ({"packages": {"transformers": "5.23.0"}, "torch": {"version": "2.6.0+rocm6.3"}}, {})),
    ("triton_torch_mismatch", ({"triton": {"module_version": "3.5.0"}}, {}),
     ({"triton": {"module_version": "3.1.0"}, "packages": {"triton": "3.5.0"}}, {})),
    ("torch_int1_torchao", ({"torch": {"int1": False}, "packages": {"torchao": "0.14.1"}}, {}),
     ({"torch": {"int1": True}, "packages": {"torchao": "0.14.1", "torchtune": "0.6.1"}}, {})),
    ("no_accelerator", (CPU_ONLY, {}), ({"backend": "mps", "torch": {"hip": None, "mps_available": True}}, {})),
    ("gpu_build_no_device", ({"backend": "cpu", "torch": {"cuda_available": False}}, {}), (CPU_ONLY, {})),
    ("bnb_unusable_rocm", ({"bitsandbytes": {"usable": False, "detail": "libbitsandbytes_rocm62.so not found"}}, {}),
     (_with(CUDA, {"bitsandbytes": {"usable": False}}), {})),
    ("bnb_requested_unusable", ({"bitsandbytes": {"usable": False}}, {"optim": "adamw_8bit"}),
     ({"bitsandbytes": {"usable": True}}, {"optim": "adamw_8bit", "load_in_4bit": True})),
    ("unsloth_4bit_rocm", ({}, {"load_in_4bit": True}), ({}, {"load_in_4bit": True, "use_unsloth": False})),
    ("unsloth_zoo_missing", ({"unsloth": {"zoo": None}}, {}), ({"unsloth": {"zoo": "2025.10.1"}}, {})),
    ("unsloth_version_unpinned", ({"unsloth": {"pinned": "2026.10.9"}}, {}),
     ({"unsloth": {"version": "2026.10.9", "pinned": "2026.10.9"}}, {})),
    ("unsloth_requirements_unmet",
     ({"unsloth": {"unmet": ["transformers 4.51.3 (Unsloth wants >=4.52.4)", "trl 0.19.0 (Unsloth wants !=0.19.0)"]}},
      {}),
     ({"unsloth": {"unmet": ["transformers 4.51.3 (Unsloth wants >=4.52.4)"]}}, {"use_unsloth": False})),
    ("unsloth_needs_bitsandbytes", ({"packages": {"bitsandbytes": None}}, {}),
     ({"packages": {"bitsandbytes": None}}, {"use_unsloth": False})),
    ("accelerator_stack_changed",
     ({"stack": {"changes": ["torch was 2.5.1+rocm6.2, now 2.9.0: pip replaced this box's build. Fix: ..."]}}, {}),
     ({"stack": {"changes": []}}, {})),
    ("unsloth_requested_unavailable", ({"unsloth": {"importable": False, "detail": "not importable: no GPU"}},
                                       {"use_unsloth": True}),
     ({"unsloth": {"importable": True}}, {"use_unsloth": True})),
    ("unsloth_import_broken", ({"unsloth": {"importable": False, "detail": "ImportError: triton_key"}}, {}),
     ({"unsloth": {"importable": False, "detail": "not installed"}, "packages": {"unsloth": None}}, {})),
    ("torch_compile_rocm", ({"env": {"TORCH_COMPILE": None, "TORCHDYNAMO_DISABLE": None}}, {}),
     ({"env": {"TORCH_COMPILE": None, "TORCHDYNAMO_DISABLE": "1"}}, {})),
    ("allocator_expandable_segments", ({"env": {"PYTORCH_HIP_ALLOC_CONF": "max_split_size_mb:512"}},
                                       {"use_unsloth": False}),
     ({"env": {"PYTORCH_HIP_ALLOC_CONF": "expandable_segments:True,max_split_size_mb:512"}}, {"use_unsloth": False})),
    ("allocator_unsloth_rocm", ({"env": {"PYTORCH_HIP_ALLOC_CONF": "expandable_segments:True"}}, {}),
     ({"env": {"PYTORCH_HIP_ALLOC_CONF": "expandable_segments:True"}}, {"use_unsloth": False})),
    # With an override torch reports the emulated arch; KFD's native gfx942 still gives it away.
    ("hsa_override_mi300x", ({"env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"},
                              "gpu": {"arch": "gfx1030", "gfx": "gfx1030"}}, {}),
     ({"env": {"HSA_OVERRIDE_GFX_VERSION": None}}, {})),
    ("gfx906_torch", (_with(GFX906, {"torch": {"version": "2.5.1+rocm6.2"}}), {}),
     (_with(GFX906, {"torch": {"version": "2.4.1+rocm6.0"}}), {})),
    ("gfx906_dtype", (GFX906, {"dtype": "bfloat16"}), (GFX906, {"dtype": "float32"})),
    ("gfx906_hsa_override", (_with(GFX906, {"env": {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}}), {}),
     (_with(GFX906, {"env": {"HSA_OVERRIDE_GFX_VERSION": "9.0.6"}}), {})),
    ("gfx906_hsa_unset", (GFX906, {}), (_with(GFX906, {"env": {"HSA_OVERRIDE_GFX_VERSION": "9.0.6"}}), {})),
    ("bf16_unsupported", (CUDA, {"dtype": "bfloat16"}), (_with(CUDA, {"gpu": {"compute_capability": [8, 0]}}),
                                                         {"dtype": "bfloat16"})),
    ("low_disk", ({"disk": {"runs": {"free_gib": 50.0}, "hf_cache": {"free_gib": 50.0}}}, {}),
     ({"disk": {"runs": {"free_gib": 250.0}, "hf_cache": {"free_gib": 250.0}}}, {})),
    ("hf_cache_large", ({"hf_cache": {"size_gib": 578.0}}, {}), ({"hf_cache": {"size_gib": 299.0}}, {})),
    ("model_too_big", ({}, {"model_gib": 438.0}), ({}, {"model_gib": 160.0})),
    ("model_fit_tight", ({}, {"model_gib": 180.0}), ({}, {"model_gib": 160.0})),
    ("vram_in_use", ({"gpu": {"vram_free_gib": 56.56}}, {}), ({"gpu": {"vram_free_gib": 180.0}}, {})),
]


def test_unsloth_without_a_loadable_bitsandbytes_warns_under_auto_and_fails_under_true():
    """Unsloth's loader imports bitsandbytes.nn on every load (an H200 without it: 'Please install bitsandbytes'), so
    a bitsandbytes missing or failing to import is a warning with auto (transformers + PEFT runs) and a failure with
    use_unsloth: true (the first load would stop); a CPU box says neither."""
    broken = {"bitsandbytes": {"importable": False, "detail": "OSError: libbitsandbytes_cuda130.so"}}
    for patch in ({"packages": {"bitsandbytes": None}}, broken):
        auto = verdict("unsloth_needs_bitsandbytes", patch, {})
        assert auto["status"] == "warn" and "transformers + PEFT" in auto["message"], auto
        true = verdict("unsloth_requested_unavailable", patch, {"use_unsloth": True})
        assert true["status"] == "fail" and "bitsandbytes" in true["message"] and "bitsandbytes" in true["fix"]
        assert verdict("unsloth_needs_bitsandbytes", patch, {"use_unsloth": True})["status"] == "pass"  # one, not two
    assert "fails to import (OSError" in verdict("unsloth_needs_bitsandbytes", broken, {})["message"]
    assert verdict("unsloth_needs_bitsandbytes", _with(CPU_ONLY, {"packages": {"bitsandbytes": None}}),
                   {})["status"] == "pass"


def test_rule_table_covers_every_rule():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids)), "duplicate rule ids"
    assert sorted(case[0] for case in RULE_CASES) == sorted(ids), "every rule needs a firing and a quiet case"
    assert all(r.severity in ("fail", "warn", "info") and r.fix and r.title for r in RULES)


def test_healthy_base_passes_every_rule():
    checks = evaluate(base_facts(), BASE_SETTINGS)
    assert [c["id"] for c in checks if c["status"] != "pass"] == []


@pytest.mark.parametrize("rule_id,fire,quiet", RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_rule_fires_and_stays_quiet(rule_id, fire, quiet):
    rule = next(r for r in RULES if r.id == rule_id)
    fired = verdict(rule_id, *fire)
    assert fired["status"] == rule.severity, fired
    assert fired["message"] and "could not evaluate" not in fired["message"]
    assert verdict(rule_id, *quiet)["status"] == "pass"


@pytest.mark.parametrize("torch", ["2.4.1+rocm6.0", "2.5.1+rocm6.2", "2.6.0+rocm6.3", "2.9.0+cu128"])
def test_the_env_check_agrees_with_the_pin_plan(torch):
    """The transformers `box plan` picks for a torch passes the env check there; the main pins' fail it exactly where
    the plan turned them down."""
    from helpers.env import pinsets
    plan = pinsets.plan("3.12", torch)
    main = pinsets.pins_of(pinsets.MAIN)["transformers"]
    for transformers, quiet in ((plan["transformers"], True), (main, plan["pins"] == "main")):
        status = verdict("transformers_torch_mismatch", {"packages": {"transformers": transformers},
                                                         "torch": {"version": torch}}, {})["status"]
        assert (status == "pass") == quiet, (torch, transformers, plan["pins"])


def test_seeds_mi300x_as_they_had_it():
    # Their day-1 settings: Qwen3-235B with adamw_8bit and load_in_4bit through Unsloth; its bf16 weights
    # alone are 235e9 x 2 bytes = 438 GiB (helpers.env.memory.estimate gives the full training peak).
    settings = {**BASE_SETTINGS, "optim": "adamw_8bit", "load_in_4bit": True, "use_unsloth": True,
                "model_gib": 438.0}
    fired = {c["id"] for c in evaluate(fixture("mi300x_seeds"), settings) if c["status"] != "pass"}
    assert fired == {"triton_torch_mismatch", "bnb_unusable_rocm", "bnb_requested_unusable", "unsloth_4bit_rocm",
                     "unsloth_requested_unavailable", "torch_compile_rocm", "allocator_expandable_segments",
                     "low_disk", "hf_cache_large", "model_too_big"}


def test_seeds_mi50_as_they_had_it():
    checks = evaluate(fixture("mi50_seeds"), {"dtype": "bfloat16"})
    fired = {c["id"]: c for c in checks if c["status"] != "pass"}
    assert set(fired) == {"torch_int1_torchao", "gfx906_torch", "gfx906_dtype", "gfx906_hsa_override",
                          "bnb_unusable_rocm", "torch_compile_rocm", "allocator_expandable_segments"}
    assert "10.3.0" in fired["gfx906_hsa_override"]["message"]
    assert summarize(checks)["worst"] == "fail"


def test_expandable_segments_is_asked_for_only_where_the_backend_keeps_it():
    """unsloth_zoo 2026.10.9 deletes PYTORCH_HIP_ALLOC_CONF and strips expandable_segments on a ROCm torch: with
    Unsloth on ROCm the kit neither recommends it nor warns without it; transformers + PEFT and CUDA keep both."""
    unsloth_rocm = base_facts()  # nothing set, Unsloth imports: the backend is Unsloth
    assert verdict("allocator_expandable_segments", {}, {})["status"] == "pass"
    rec = env.recommend(unsloth_rocm)
    assert "PYTORCH_HIP_ALLOC_CONF" not in rec["env"] and "unsloth_zoo 2026.10.9" in rec["env_not_set"][
        "PYTORCH_HIP_ALLOC_CONF"]
    # the same box on transformers + PEFT (the profile turns Unsloth off, or it does not import): asked for, warned
    model = dataclasses.replace(load_profile("mi300x").model, use_unsloth=False)
    assert env.recommend(unsloth_rocm, model)["env"]["PYTORCH_HIP_ALLOC_CONF"]["value"] == "expandable_segments:True"
    assert "env_not_set" not in env.recommend(unsloth_rocm, model)
    assert verdict("allocator_expandable_segments", {}, {"use_unsloth": False})["status"] == "warn"
    broken = {"unsloth": {"importable": False, "detail": "ImportError: triton_key"}}
    assert verdict("allocator_expandable_segments", broken, {})["status"] == "warn"
    assert "PYTORCH_HIP_ALLOC_CONF" in env.recommend(base_facts(broken))["env"]
    # a value set anyway is said to have no effect there, not silently trusted
    said = verdict("allocator_unsloth_rocm", {"env": {"PYTORCH_ALLOC_CONF": "expandable_segments:True"}}, {})
    assert said["status"] == "info" and "PYTORCH_ALLOC_CONF='expandable_segments:True'" in said["message"]
    cuda = env.recommend(fixture("a100"))  # Unsloth on CUDA keeps expandable_segments
    assert cuda["use_unsloth"]["value"] is True and "PYTORCH_CUDA_ALLOC_CONF" in cuda["env"]


def test_triton_uses_release_table_when_torch_pins_nothing():
    facts = base_facts({"triton": {"torch_requires": None, "module_version": "3.5.0"}})
    assert next(c for c in evaluate(facts) if c["id"] == "triton_torch_mismatch")["status"] == "fail"
    cpu = deep_merge(fixture("cpu_laptop"), {"triton": {"module_version": "3.5.0"}})  # CPU torch never loads triton
    assert next(c for c in evaluate(cpu) if c["id"] == "triton_torch_mismatch")["status"] == "pass"


def test_python_313_is_fine_where_everything_installed():
    cpu = deep_merge(fixture("cpu_laptop"), {"python": {"version": "3.13.1"}})
    assert next(c for c in evaluate(cpu) if c["id"] == "python_version")["status"] == "pass"
    cpu["packages"]["peft"] = None
    assert next(c for c in evaluate(cpu) if c["id"] == "python_version")["status"] == "warn"


def test_low_disk_names_the_hf_cache_disk_when_separate():
    facts = base_facts({"disk": {"hf_cache": {"free_gib": 12.0, "device": 7, "path": "/mnt/hf"}}})
    check = next(c for c in evaluate(facts, BASE_SETTINGS) if c["id"] == "low_disk")
    assert check["status"] == "warn" and "/mnt/hf" in check["message"] and "runs" not in check["message"]


def test_hf_cache_truncated_walk_says_at_least():
    facts = base_facts({"hf_cache": {"size_gib": 400.0, "truncated": True}})
    check = next(c for c in evaluate(facts, BASE_SETTINGS) if c["id"] == "hf_cache_large")
    assert "at least 400" in check["message"]


def test_a_crashing_rule_is_reported_not_raised():
    bad = Rule("bad", "fail", "broken", lambda f, s: f["nope"]["x"], lambda f, s: "", "none")
    [row] = evaluate(base_facts(), BASE_SETTINGS, rules=[bad])
    assert row["status"] == "warn" and "could not evaluate" in row["message"] and "KeyError" in row["message"]


def test_rules_tolerate_an_empty_record():
    checks = evaluate(env.empty_facts(), None)
    assert not [c for c in checks if "could not evaluate" in c["message"]]
    assert next(c for c in checks if c["id"] == "torch_missing")["status"] == "fail"


def test_settings_from_profile():
    cfg = load_profile("mi300x")
    s = settings_from_cfg(cfg, model_gib=160.0)
    assert s["min_free_disk_gb"] == cfg.env.min_free_disk_gb
    assert s["hf_cache_warn_gb"] == cfg.env.hf_cache_warn_gb
    assert s["load_in_4bit"] == cfg.model.load_in_4bit and s["optim"] == cfg.train.optim
    assert s["model_gib"] == 160.0
    assert normalize_settings(cfg) == settings_from_cfg(cfg)  # evaluate() accepts the profile itself
    assert normalize_settings(None)["min_free_disk_gb"] == 20.0


def test_summarize_and_table():
    checks = evaluate(fixture("mi50_seeds"), None)
    s = summarize(checks)
    assert sum(s[k] for k in ("pass", "info", "warn", "fail")) == len(RULES)
    assert s["worst"] == "fail"
    text = env.checks_table(checks)
    assert text.splitlines()[0].startswith("FAIL") and "fix:" in text
    assert env.checks_table([{"status": "pass"}]) == "all checks passed"


# ---------------------------------------------------------------- recommend / apply_env / report
def test_recommend_mi300x():
    rec = env.recommend(fixture("mi300x_seeds"))
    assert rec["dtype"]["value"] == "bfloat16"
    assert rec["optim"]["value"] == "adamw_torch" and rec["optim"]["allowed"] == ["adamw_torch"]
    assert rec["load_in_4bit"]["value"] is False
    assert rec["use_unsloth"]["value"] is False  # the triton_key failure: Unsloth does not import
    assert rec["gradient_checkpointing"]["value"] is True
    envs = {k: v["value"] for k, v in rec["env"].items()}
    assert envs["TORCH_COMPILE"] == "0" and envs["TORCHDYNAMO_DISABLE"] == "1"
    assert envs["PYTORCH_HIP_ALLOC_CONF"] == "expandable_segments:True"
    assert "HSA_OVERRIDE_GFX_VERSION" not in envs  # must never be set on gfx942
    assert all(item["reason"] for item in list(rec.values())[1:-1] + list(rec["env"].values()))


def test_recommend_mi300x_with_working_unsloth_and_bnb_stays_16bit():
    rec = env.recommend(base_facts())
    assert rec["use_unsloth"]["value"] is True
    assert set(rec["env"]) == {"TORCH_COMPILE", "TORCHDYNAMO_DISABLE", "TOKENIZERS_PARALLELISM"}  # no allocator var
    assert rec["optim"]["value"] == "adamw_torch" and "adamw_8bit" in rec["optim"]["allowed"]
    assert rec["load_in_4bit"]["value"] is False and "16-bit" in rec["load_in_4bit"]["reason"]


def test_unsloth_keeps_4bit_on_rocm_only_from_bitsandbytes_0_48_2():
    """Unsloth's gate is `Version(bnb) > Version("0.48.2.dev0")`: 0.48.2 itself keeps 4-bit."""
    for bnb, kept in (("0.44.1", False), ("0.48.1", False), ("0.48.2.dev0", False), ("0.48.2", True),
                      ("0.49.0", True), ("0.50.2", True)):
        facts = base_facts({"packages": {"bitsandbytes": bnb}})
        assert unsloth_keeps_4bit(facts) is kept, bnb
        assert env.recommend(facts)["load_in_4bit"]["value"] is kept, bnb
        assert verdict("unsloth_4bit_rocm", {"packages": {"bitsandbytes": bnb}},
                       {"load_in_4bit": True})["status"] == ("pass" if kept else "warn"), bnb


def test_backend_choice_names_why_unsloth_is_not_used():
    for patch, why in (({"backend": "cpu"}, "no GPU"), ({"unsloth": {"version": None}, "packages": {"unsloth": None}},
                                                        "not installed"),
                       ({"unsloth": {"zoo": None}, "packages": {"unsloth_zoo": None}}, "without unsloth_zoo"),
                       ({"unsloth": {"unmet": ["transformers 4.51.3 (Unsloth wants >=4.52.4)"]}}, "transformers 4.51.3"),
                       ({"unsloth": {"importable": False, "detail": "ImportError: triton_key"}}, "triton_key")):
        rec = env.recommend(base_facts(patch))["use_unsloth"]
        assert rec["value"] is False and why in rec["reason"] and "transformers + PEFT" in rec["reason"], rec
    assert env.recommend(base_facts())["use_unsloth"]["value"] is True


def test_the_backend_says_when_the_unsloth_it_uses_is_the_boxs_own():
    """The starter kit's Dockerfile box brings its own Unsloth (git head): the kit uses it where it imports, and says
    that it is not the pin it was checked against."""
    pin = pinsets.read_pins(pinsets.ROOT / "constraints-gpu.txt")["unsloth"]
    own = env.recommend(base_facts({"unsloth": {"version": "2099.1.1"}, "packages": {"unsloth": "2099.1.1"}}))
    assert own["use_unsloth"]["value"] is True
    assert f"unsloth 2099.1.1 (this box's own, not the kit's pin {pin}) imports" in own["use_unsloth"]["reason"]
    pinned = env.recommend(base_facts({"unsloth": {"version": pin}, "packages": {"unsloth": pin}}))["use_unsloth"]
    assert pinned["value"] is True and "own" not in pinned["reason"]


def test_recommend_mi50():
    rec = env.recommend(fixture("mi50_seeds"))
    assert rec["dtype"]["value"] == "float32"
    assert rec["env"]["HSA_OVERRIDE_GFX_VERSION"]["value"] == "9.0.6"
    assert rec["env"]["TORCH_COMPILE"]["value"] == "0"
    assert rec["optim"]["value"] == "adamw_torch" and rec["load_in_4bit"]["value"] is False


def test_recommend_a100_and_t4():
    rec = env.recommend(fixture("a100"))
    assert rec["dtype"]["value"] == "bfloat16" and rec["optim"]["value"] == "adamw_8bit"
    assert rec["load_in_4bit"]["value"] is True and rec["use_unsloth"]["value"] is True
    assert rec["attn_implementation"]["value"] == "flash_attention_2"
    assert set(rec["env"]) == {"PYTORCH_CUDA_ALLOC_CONF", "TOKENIZERS_PARALLELISM"}
    t4 = env.recommend(deep_merge(fixture("a100"), {"gpu": {"compute_capability": [7, 5], "bf16": False}}))
    assert t4["dtype"]["value"] == "float16" and t4["attn_implementation"]["value"] == "sdpa"


def test_recommend_cpu_and_profile_annotation():
    model = dataclasses.replace(load_profile("smoke").model, dtype="bfloat16", use_unsloth="auto")
    rec = env.recommend(fixture("cpu_laptop"), model)
    assert rec["dtype"]["value"] == "float32" and rec["dtype"]["profile"] == "bfloat16"
    assert "profile" not in rec["use_unsloth"]
    assert rec["use_unsloth"]["value"] is False and rec["load_in_4bit"]["value"] is False
    assert rec["attn_implementation"]["value"] == "sdpa" and rec["optim"]["value"] == "adamw_torch"
    assert set(rec["env"]) == {"TOKENIZERS_PARALLELISM"}
    assert env.recommend(deep_merge(fixture("cpu_laptop"), {"torch": {"sdpa": False}}))[
        "attn_implementation"]["value"] == "eager"


def test_apply_env_never_overwrites(monkeypatch):
    rec = env.recommend(fixture("mi300x_seeds"))
    for var in rec["env"]:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "true")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "max_split_size_mb:512")
    done = env.apply_env(rec)
    assert done == {"TORCH_COMPILE": "0", "TORCHDYNAMO_DISABLE": "1"}
    assert os.environ["TOKENIZERS_PARALLELISM"] == "true"
    assert os.environ["PYTORCH_HIP_ALLOC_CONF"] == "max_split_size_mb:512"
    assert os.environ["TORCH_COMPILE"] == "0"
    assert env.apply_env(rec) == {}  # idempotent


def test_apply_env_on_a_given_mapping():
    target = {"TORCH_COMPILE": "1"}
    done = env.apply_env({"env": {"TORCH_COMPILE": "0", "TOKENIZERS_PARALLELISM": {"value": "false"}}}, target)
    assert done == {"TOKENIZERS_PARALLELISM": "false"} and target["TORCH_COMPILE"] == "1"


def test_write_env_report_round_trips(tmp_path):
    facts = fixture("mi300x_seeds")
    checks = evaluate(facts, BASE_SETTINGS)
    rec = env.recommend(facts)
    path = env.write_env_report(tmp_path, facts, checks, rec, {"PROFILE": "mi300x"})
    assert path == tmp_path / "env.json"
    data = read_json(path)
    assert data["params"] == {"PROFILE": "mi300x"} and data["versions"]["python"]
    assert data["facts"] == facts and data["checks"] == checks and data["recommendation"] == rec
    assert data["summary"] == summarize(checks)
    # a later notebook applies the saved recommendation before importing torch
    target: dict = {}
    assert env.apply_env(data["recommendation"], target)["TORCH_COMPILE"] == "0"


# ---------------------------------------------------------------- probes on this machine
def _keys(d: dict, prefix: str = "") -> set[str]:
    out = set()
    for k, v in d.items():
        out.add(prefix + k)
        if isinstance(v, dict) and k not in ("packages", "env", "errors", "disk"):
            out |= _keys(v, prefix + k + ".")
    return out


def test_collect_facts_on_this_machine(tmp_path):
    hf = tmp_path / "hf"
    (hf / "hub").mkdir(parents=True)
    (hf / "hub" / "blob").write_bytes(b"x" * 4096)
    facts = env.collect_facts(runs_dir=tmp_path / "runs" / "not-yet", hf_cache=hf)
    json.loads(json.dumps(facts))  # plain JSON, no torch objects
    assert facts["backend"] == "cpu"
    assert facts["errors"] == {}
    assert facts["torch"]["version"] and facts["torch"]["hip"] is None
    assert facts["python"]["version"].count(".") == 2
    assert facts["system"]["ram_total_gib"] > 0 and facts["system"]["cpu_logical"] >= 1
    assert facts["disk"]["runs"]["measured_at"] == str(tmp_path) and facts["disk"]["runs"]["free_gib"] > 0
    assert facts["hf_cache"]["files"] == 1 and facts["hf_cache"]["truncated"] is False
    assert facts["unsloth"]["importable"] is False and facts["bitsandbytes"]["usable"] is False
    assert _keys(facts) == _keys(env.empty_facts())
    checks = evaluate(facts, load_profile("smoke"))
    json.dumps(checks)
    assert next(c for c in checks if c["id"] == "no_accelerator")["status"] == "info"


@pytest.mark.parametrize("name", ["mi300x_seeds", "mi50_seeds", "a100", "cpu_laptop"])
def test_fixtures_have_the_real_schema(name):
    assert _keys(fixture(name)) == _keys(env.empty_facts())


def test_a_failing_probe_is_recorded_not_raised(monkeypatch, tmp_path):
    def boom(facts):
        raise RuntimeError("psutil exploded")
    monkeypatch.setattr(env_facts, "_probe_system", boom)
    facts = env.collect_facts(runs_dir=tmp_path, hf_cache=tmp_path)
    assert facts["errors"] == {"system": "RuntimeError: psutil exploded"}
    assert facts["system"]["ram_total_gib"] is None and facts["torch"]["version"]
    assert next(c for c in evaluate(facts) if c["id"] == "probe_errors")["status"] == "warn"


def test_dir_size_budget_and_symlinks(tmp_path):
    (tmp_path / "blobs").mkdir()
    for i in range(30):
        (tmp_path / "blobs" / f"b{i}").write_bytes(b"x" * 1000)
    (tmp_path / "snap").mkdir()
    os.symlink(tmp_path / "blobs" / "b0", tmp_path / "snap" / "model.safetensors")
    os.symlink(tmp_path / "blobs", tmp_path / "snap" / "dir")
    full = env.dir_size([tmp_path])
    assert full["files"] == 30 and full["truncated"] is False  # links counted once, at their blobs
    cut = env.dir_size([tmp_path], max_files=10)
    assert cut["truncated"] is True and cut["files"] == 10
    assert env.dir_size([tmp_path], budget_s=-1.0)["truncated"] is True
    missing = env.dir_size([tmp_path / "absent"])
    assert missing["files"] == 0 and missing["size_gib"] == 0.0 and not missing["truncated"]


def test_hf_cache_paths():
    assert env.hf_cache_paths({"HF_HOME": "/data/hf"}) == ["/data/hf"]
    assert env.hf_cache_paths({"HF_HOME": "/data/hf", "HF_HUB_CACHE": "/data/hf/hub"}) == ["/data/hf"]
    assert env.hf_cache_paths({"HF_HOME": "/data/hf", "HF_HUB_CACHE": "/big/hub"}) == ["/data/hf", "/big/hub"]
    assert env.hf_cache_paths({"XDG_CACHE_HOME": "/x"}) == ["/x/huggingface"]
    assert env.hf_cache_paths({})[0] == str(Path("~/.cache/huggingface").expanduser())


def test_kfd_native_gfx(monkeypatch, tmp_path):
    for node, version in (("0", 0), ("1", 90402), ("2", 90010), ("3", 90006)):
        (tmp_path / node).mkdir()
        (tmp_path / node / "properties").write_text(f"cpu_cores_count 0\ngfx_target_version {version}\n")
    monkeypatch.setattr(env_facts, "KFD_NODES", tmp_path)
    facts = env.empty_facts()
    env_facts._probe_kfd(facts)
    assert facts["gpu"]["native_gfx"] == ["gfx942", "gfx90a", "gfx906"]


def test_unsloth_probe_never_imports_without_gpu(monkeypatch):
    monkeypatch.setattr(env_facts, "package_version", lambda name: "2025.10.1")
    monkeypatch.setattr(env_facts, "_run_python", lambda code, t: pytest.fail("must not import without a GPU"))
    facts = env.empty_facts()
    env_facts._probe_unsloth(facts, 5)
    env_facts._probe_bitsandbytes(facts, 5)
    assert (facts["unsloth"]["importable"], facts["unsloth"]["detail"]) == (False, "not tried: the kit uses Unsloth only on a GPU")
    assert facts["unsloth"]["version"] == "2025.10.1" and facts["unsloth"]["pinned"] == "2026.10.9"
    assert facts["bitsandbytes"]["usable"] is False and "no GPU" in facts["bitsandbytes"]["detail"]


def test_bitsandbytes_probe_names_the_missing_rocm_library(monkeypatch):
    monkeypatch.setattr(env_facts, "package_version", lambda name: "0.44.1")
    monkeypatch.setattr(env_facts, "_run_python", lambda code, t: (False, "RuntimeError: CUDA Setup failed"))
    facts = deep_merge(env.empty_facts(), {"backend": "rocm", "torch": {"hip": "6.2.41133-dd7f95766"}})
    env_facts._probe_bitsandbytes(facts, 5)
    bnb = facts["bitsandbytes"]
    assert bnb["usable"] is False and bnb["expected_lib"] == "libbitsandbytes_rocm62.so"
    assert bnb["detail"].startswith("libbitsandbytes_rocm62.so not found") and "CUDA Setup failed" in bnb["detail"]


def test_run_python_reports_errors_and_timeouts():
    assert env_facts._run_python("pass", 30)[0] is True
    assert env_facts._run_python("raise ImportError('no triton_key')", 30) == (False, "ImportError: no triton_key")
    assert env_facts._run_python("import sys; sys.exit(3)", 30) == (False, "exit code 3")
    ok, detail = env_facts._run_python("import time; time.sleep(5)", 0.5)
    assert ok is False and "timed out" in detail


def test_disk_free_of_a_path_not_created_yet(tmp_path):
    d = env.disk_free(tmp_path / "a" / "b")
    assert d["measured_at"] == str(tmp_path) and d["path"] == str(tmp_path / "a" / "b")
    assert 0 < d["free_gib"] <= d["total_gib"]


def test_env_module_does_not_import_torch():
    import subprocess
    import sys
    code = "import sys, helpers.env; sys.exit(1 if 'torch' in sys.modules else 0)"
    root = Path(__file__).resolve().parent.parent
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0
