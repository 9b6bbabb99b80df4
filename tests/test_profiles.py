"""Notebook 00 on every profile in configs/, as the profile is (no swap, no weights, no network).

Tier `profiles` (make test-profiles; CI runs it after make test): the env check of each profile runs through the
pipeline's own papermill path with the profile's real model name, so the estimates only a team's box would otherwise
compute (the 72B's training memory and fit, its RL stage's memory, the reasoning token budget of the target machine,
the time plan from the sources' real sizes) are computed and recorded here, and checked against the helpers that
make them. A profile whose model or sources' sizes are unknown gets a line saying which estimate is missing and why.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from helpers import config, pipeline
from helpers.agents import reasoner
from helpers.agents.stages import reasoner_rl
from helpers.env import memory
from helpers.io import read_json
from helpers.layout import RunLayout
from helpers.train import plan
from conftest import shared_samples

pytestmark = pytest.mark.profiles
DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def _run_env_check(profile: str, run: str, overrides: dict | None = None) -> dict:
    """Notebook 00 through helpers.pipeline (papermill, the kit's kernel); what it recorded and printed."""
    pipeline.run_pipeline(profile, run, overrides or {}, only=["00"])
    lay = RunLayout.of(run)
    cells = nbformat.read(str(lay.notebooks_dir / "00_env_check.ipynb"), as_version=4).cells
    outputs = [o for c in cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    errors = [f"{o.get('ename')}: {o.get('evalue')}" for o in outputs if o.get("output_type") == "error"]
    return {"env": read_json(lay.env), "text": text, "errors": errors}


def _known(model: str) -> bool:
    """Whether the memory estimator knows the model (its table, an alias or a config.json)."""
    try:
        memory.get_shape(model)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module", params=config.available_profiles())
def checked(request):
    profile = request.param
    if any("../shared" in s for s in config.load_profile(profile).data.sources):
        shared_samples()  # cpu reads ../shared/upstream-samples: required in CI, a skip with the reason elsewhere
    return {"profile": profile, "cfg": config.load_profile(profile, f"env-{profile}"),
            **_run_env_check(profile, f"env-{profile}")}


def test_the_env_check_runs_on_the_profile_as_it_is(checked):
    cfg, env = checked["cfg"], checked["env"]
    assert not checked["errors"], checked["errors"]
    assert "Traceback" not in checked["text"]
    assert env["params"] == cfg.as_dict(), "notebook 00 ran another profile than the one shipped"
    assert env["params"]["model"]["base"] == config.load_profile(checked["profile"]).model.base


def test_its_estimates_are_the_profiles_real_models(checked):
    cfg, env = checked["cfg"], checked["env"]
    rec = env["recommendation"]
    backend = "unsloth" if rec["use_unsloth"]["value"] else "transformers"
    dtype = DTYPES.get(rec["dtype"]["value"], "bf16")
    known = _known(cfg.model.base)
    assert (env["fit"]["profile_model_gib"] is not None) == known, cfg.model.base
    if known:
        lora = cfg.models["model1_lora"]
        est = memory.estimate(cfg.model.base, dtype=dtype, method="lora", rank=lora.r,
                              batch_size=cfg.train.batch_size, seq_len=cfg.model.max_seq_len, backend=backend,
                              grad_checkpointing=rec["gradient_checkpointing"]["value"])
        assert env["fit"]["profile_model_gib"] == pytest.approx(est.total_gib, abs=0.01)
    if cfg.rl.prompts > 0 and known:
        want = reasoner_rl.memory_estimate(cfg, dtype=dtype, backend=backend,
                                           grad_checkpointing=rec["gradient_checkpointing"]["value"])
        assert env["rl_memory"] == json.loads(json.dumps(want))
    else:
        assert env["rl_memory"] is None
    assert env["reasoning_tokens"]["tokens"] == reasoner.token_budget(cfg.agents)
    assert env["time_plan"] == json.loads(json.dumps(plan.from_sources(cfg)))
    assert env["time_plan"]["hours"] and not env["time_plan"]["unknown"]


def test_a_model_and_sources_nobody_knows_get_a_line_each_not_a_traceback():
    overrides = {"model.base": "acme/never-heard-of-it-7B", "data.puzzles": 0,
                 "data.sources": ["hub:sciq@nosuch", "hub:acme/questions@train", "data/nope.jsonl"]}
    got = _run_env_check("mi300x", "env-unknowns", overrides)
    text = got["text"]
    assert not got["errors"] and "Traceback" not in text
    assert "training memory: no estimate for 'acme/never-heard-of-it-7B': unknown model" in text
    assert "RL stage: no memory estimate for 'acme/never-heard-of-it-7B': unknown model" in text
    assert "no size for hub:sciq@nosuch: unknown:" in text and "no split 'nosuch'" in text
    assert "no size for hub:acme/questions@train: unknown: " in text and "unsupported hub dataset" in text
    assert "no size for data/nope.jsonl: unknown: " in text
    assert "examples: at least 0" in text and "no steps: 0 training examples cannot fill curriculum.chunks=10" in text
    env = got["env"]
    assert env["fit"]["profile_model_gib"] is None and env["rl_memory"] is None
    assert env["time_plan"]["unknown"] == overrides["data.sources"] and env["time_plan"]["chunks"] == []


def test_a_model_the_edition_forbids_stops_notebook_00_in_one_line():
    """mi300x's Qwen2.5-72B under July 2025, which allows Qwen3-4B only: notebook 00 stops before any probe or
    download, and the error is one line naming the edition and what it allows."""
    with pytest.raises(pipeline.StageFailed):
        pipeline.run_pipeline("mi300x", "env-forbidden", {"agents.edition": "2025-07-aaipl"}, only=["00"])
    lay = RunLayout.of("env-forbidden")
    cells = nbformat.read(str(lay.notebooks_dir / "00_env_check.ipynb"), as_version=4).cells
    errors = [o for c in cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert [e["ename"] for e in errors] == ["ForbiddenModel"] and "\n" not in errors[0]["evalue"]
    assert "2025-07-aaipl" in errors[0]["evalue"] and "Qwen/Qwen3-4B" in errors[0]["evalue"]
    assert not lay.env.exists()  # nothing was probed or written
