"""The dress rehearsal of every GPU profile on CPU (helpers.rehearse, configs/overlays/rehearsal.yaml).

Tier `rehearsal` (make test-rehearsal; make test leaves it out): mi300x, tournament, aaipl and laptop each run notebooks
00..10 through `python -m helpers.pipeline --rehearse`, in a run folder of their own, and what each profile's
settings must produce is read back from the run: every adapter's rank, alpha, dropout and method, the chunk count,
the LR and replay schedules, the DoRA magnitude group in the optimizer itself, the writer's and the reasoner's rates,
the agents' settings, outputs that pass the format filter, and the swaps recorded exactly as the overlay says.

The unit tests at the top are cheap and run in every tier: the overlay applied to each GPU profile changes its own
keys and nothing else.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat
import pytest
import yaml

from helpers import config, edition, pipeline, rehearse
from helpers.agents import topics as topics_mod
from helpers.config import REASONER, WRITER
from helpers.io import InputError
from helpers.layout import RunLayout
from conftest import terminal_to


def _expected_swaps(profile: str) -> dict:
    """The overlay read straight from its YAML, applied by hand: {key: (profile's value, rehearsal's value)} for every
    key it changes (independent of helpers.rehearse.swaps, which the run's record comes from)."""
    overlay = yaml.safe_load(rehearse.OVERLAY.read_text(encoding="utf-8"))
    flat = config.flat(config.load_profile(profile).as_dict())
    out = {}
    for key, entry in overlay.items():
        before = flat[key]
        after = [x for x in before if not x.startswith(entry["drop_prefix"])] if "drop_prefix" in entry else entry["to"]
        if after != before:
            out[key] = (before, after)
    return out


# ---------------------------------------------------------------- cheap: the overlay itself (every tier)
@pytest.mark.parametrize("profile", rehearse.GPU_PROFILES)
def test_the_overlay_changes_its_own_keys_and_nothing_else(profile):
    own = config.flat(config.load_profile(profile).as_dict())
    run, overrides, record = rehearse.plan(profile)
    rehearsed = config.flat(config.load_profile(profile, run, overrides).as_dict())
    swapped = {s["key"]: s for s in record["swaps"]}
    expected = _expected_swaps(profile)
    assert set(swapped) == set(expected) and run == f"rehearse-{profile}"
    assert set(rehearsed) == set(own)
    for key, value in own.items():
        if key == "run":
            assert rehearsed[key] == run
        elif key in swapped:
            assert (swapped[key]["from"], swapped[key]["to"]) == expected[key] == (value, rehearsed[key]), key
            assert value != rehearsed[key] and swapped[key]["why"], key
        else:
            assert rehearsed[key] == value, f"{key}: the overlay changed {value!r} to {rehearsed[key]!r}"
    # what makes it a CPU rehearsal at all, on every GPU profile
    assert rehearsed["model.stand_in"] == "tiny" and "model.stand_in" in swapped
    assert rehearsed["model.base"] == own["model.base"] != "tiny", "the rehearsal swaps the weights, not the name"
    assert not any(s.startswith("hub:") for s in rehearsed["data.sources"]) and rehearsed["data.sources"]


def test_the_overlay_keeps_what_the_issue_names():
    """The settings a rehearsal exists to exercise are never in the overlay."""
    keys = set(rehearse.load_overlay())
    kept = ("models.", "curriculum.chunks", "train.lr_", "train.replay_", "train.batch_size", "train.grad_accum",
            "train.optim", "model.dtype", "writer.lr", "writer.adapter", "reasoner.lr", "reasoner.adapter",
            "agents.writer_candidates", "agents.answer_mode", "agents.model_question_share")
    assert not {k for k in keys if k.startswith(kept)}, "the overlay swaps a setting the rehearsal must keep"


@pytest.mark.parametrize("text, key, needle", [
    ("train.nosuch: {to: 1, why: x}\n", "train.nosuch", "not a key of profile"),
    ("data.puzzles: {to: many, why: x}\n", "data.puzzles", "whole number"),
    ("data.puzzles: {to: 5}\n", "data.puzzles", "expected {to: value, why: text}"),
    ("data.puzzles: {to: 5, why: ' '}\n", "data.puzzles", "the reason"),
    ("model.base: {drop_prefix: 'hub:', why: x}\n", "model.base", "drop_prefix needs a list"),
])
def test_a_bad_overlay_names_its_file_and_key(tmp_path, text, key, needle):
    path = tmp_path / "rehearsal.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        rehearse.swaps("mi300x", path=path)
    assert str(path) in str(err.value) and key in str(err.value) and needle in str(err.value)


@pytest.mark.parametrize("override, needle", [({"model.use_unsloth": True}, "model.use_unsloth is True"),
                                               ({"model.load_in_4bit": True}, "model.load_in_4bit is True"),
                                               ({"train.optim": "adamw_8bit"}, "train.optim is 'adamw_8bit'")])
def test_a_profile_that_cannot_rehearse_on_cpu_says_why(override, needle):
    with pytest.raises(ValueError, match=rf"profile 'mi300x' cannot rehearse on CPU: {needle}: .*GPU"):
        rehearse.plan("mi300x", overrides=override)
    assert rehearse.gpu_only_settings(config.load_profile("mi300x")) == []  # as shipped, every GPU profile can


def test_the_rehearsal_hides_every_gpu_from_its_kernels():
    environ = {"CUDA_VISIBLE_DEVICES": "0", "PATH": "/bin"}
    assert rehearse.hide_accelerators(environ) == {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}
    assert environ == {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "PATH": "/bin"}
    assert rehearse.plan("laptop")[2]["hidden_devices"] == {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}


def test_a_rehearsal_and_a_real_run_never_share_a_folder():
    lay = RunLayout.of("shared")
    lay.made(lay.root)
    lay.rehearsal_record.write_text("{}")
    with pytest.raises(ValueError, match="holds a rehearsal"):
        pipeline.run_pipeline("smoke", "shared")
    lay.rehearsal_record.unlink()
    lay.pipeline_record.write_text("{}")
    with pytest.raises(ValueError, match="holds a real run"):
        pipeline.run_pipeline("mi300x", "shared", rehearsal=rehearse.plan("mi300x", "shared")[2])


def test_the_report_says_it_is_a_rehearsal_with_every_swap():
    from helpers import report
    _, _, record = rehearse.plan("tournament")
    lay = RunLayout.of("r")
    lay.made(lay.root)
    lay.rehearsal_record.write_text(json.dumps(record))
    text = report.write_report(lay.root)["md"].read_text(encoding="utf-8")
    assert "**Rehearsal**" in text and "not a GPU result" in text
    assert all(s["key"] in text for s in record["swaps"])


# ---------------------------------------------------------------- the tier: 00..10 per GPU profile
def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module", params=rehearse.GPU_PROFILES)
def rehearsed(request, tmp_path_factory):
    """One profile rehearsed through the command line (python -m helpers.pipeline --profile P --rehearse), offline,
    under a runs folder of its own; what it printed goes to terminal.txt beside the run."""
    profile = request.param
    mp = pytest.MonkeyPatch()
    runs = tmp_path_factory.mktemp(f"rehearse-{profile}")
    for var, value in (("KIT_RUNS_DIR", str(runs)), ("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"),
                       ("TRANSFORMERS_OFFLINE", "1")):
        mp.setenv(var, value)
    try:
        t0 = time.time()
        with terminal_to(runs / "terminal.txt"):
            code = pipeline.main(["--profile", profile, "--rehearse"])
        seconds = time.time() - t0
        print(f"\n[rehearsal] {profile}: exit {code}, {seconds:.0f} s", flush=True)
        yield {"profile": profile, "code": code, "seconds": seconds, "run": runs / rehearse.run_name(profile),
               "terminal": runs / "terminal.txt",
               # the profile as the rehearsal must have run it: its own settings with the overlay's swaps
               "cfg": config.load_profile(profile, rehearse.run_name(profile),
                                          {k: to for k, (_, to) in _expected_swaps(profile).items()}),
               "own": config.load_profile(profile)}
    finally:
        mp.undo()


@pytest.mark.rehearsal
def test_every_notebook_runs_and_the_run_says_it_is_a_rehearsal(rehearsed):
    run, profile = rehearsed["run"], rehearsed["profile"]
    tail = "\n".join(rehearsed["terminal"].read_text(errors="replace").splitlines()[-15:])
    assert rehearsed["code"] == 0, f"{profile}: the rehearsal failed:\n{tail}"
    record = _read(run / "pipeline.json")
    names = [p.name for p in pipeline.discover_notebooks()]
    # in the order they ran: 08 beside 03-05 where the cores allow (helpers.pipeline.side_by_side)
    assert sorted(s["notebook"] for s in record["stages"]) == names and {s["status"] for s in record["stages"]} == {"ok"}
    for name in names:
        cells = nbformat.read(str(run / "notebooks" / name), as_version=4).cells
        assert not [o for c in cells if c.cell_type == "code" for o in c.get("outputs", [])
                    if o.get("output_type") == "error"], f"{name}: error outputs in the executed copy"
    bad = [line for line in rehearsed["terminal"].read_text(errors="replace").splitlines()
           if "ERROR" in line or "Traceback" in line]
    assert not bad, "\n".join(bad[:10])
    # the swaps, recorded exactly as the overlay says, in rehearsal.json, pipeline.json and every notebook's params
    expected = _expected_swaps(profile)
    saved = _read(run / "rehearsal.json")
    assert saved["rehearsal"] is True and saved["profile"] == profile and "not a GPU result" in saved["note"]
    assert {s["key"]: (s["from"], s["to"]) for s in saved["swaps"]} == expected
    assert all(s["why"] for s in saved["swaps"]) and record["rehearsal"]["swaps"] == saved["swaps"]
    overrides = {k: to for k, (_, to) in expected.items()}
    assert record["params"]["OVERRIDES"] == saved["params"]["OVERRIDES"] == overrides
    for path in ("eval/summary.json", "ensemble/summary.json", "agents/tournament.json"):
        assert _read(run / path)["params"]["overrides"] == overrides, path
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "**Rehearsal**" in report and all(k in report for k in expected)
    for needle in ("not run:", "unreadable:", "unexpected content:", "failed**"):
        assert needle not in report, f"report.md says {needle!r}"


@pytest.mark.rehearsal
def test_the_notebooks_ran_the_profile_with_only_the_swaps(rehearsed):
    """Notebook 00 records the resolved profile it ran (env.json params): the profile's own values but the swaps.
    It ran on this CPU without failing the run, as it must for a GPU profile."""
    env = _read(rehearsed["run"] / "env.json")
    ran, own = config.flat(env["params"]), config.flat(rehearsed["own"].as_dict())
    swapped = _expected_swaps(rehearsed["profile"])
    assert set(ran) == set(own)
    for key, value in own.items():
        want = rehearsed["cfg"].run if key == "run" else swapped[key][1] if key in swapped else value
        assert ran[key] == want, f"{key}: ran with {ran[key]!r}, the profile has {value!r}"
    assert env["facts"]["backend"] == "cpu"


@pytest.mark.rehearsal
def test_every_estimate_budget_and_plan_is_the_profiles_real_models(rehearsed):
    """The rehearsal swaps the weights, not the name: notebook 00's fit and RL memory are model.base's (the tiny model
    has no estimate at all), the reasoning budget is the target machine's, the time plan is the profile's as meant,
    and rehearsal.json says which figures came from the stand-in."""
    from helpers.agents import reasoner
    from helpers.train import plan
    own, run = rehearsed["own"], rehearsed["run"]
    env, saved = _read(run / "env.json"), _read(run / "rehearsal.json")
    assert saved["stand_in"] == {"weights": "tiny", "for": own.model.base}
    assert set(saved["figures"]) == {"profile_model", "stand_in"} and all(saved["figures"].values())
    assert (env["params"]["model"]["base"], env["params"]["model"]["stand_in"]) == (own.model.base, "tiny")
    assert env["fit"]["profile_model_gib"] > 1, "the estimate is not the profile's real model's"
    rec = env["recommendation"]
    dtype = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}.get(rec["dtype"]["value"], "bf16")
    from helpers.agents.stages import reasoner_rl
    want = reasoner_rl.memory_estimate(own, dtype=dtype, grad_checkpointing=rec["gradient_checkpointing"]["value"],
                                       backend="unsloth" if rec["use_unsloth"]["value"] else "transformers")
    assert env["rl_memory"] == json.loads(json.dumps(want)), "the RL memory is not the profile's as meant"
    assert env["rl_memory"]["completions"] == own.rl.prompts_per_step * own.rl.num_generations
    assert env["reasoning_tokens"]["tokens"] == reasoner.token_budget(own.agents)
    assert env["time_plan"] == json.loads(json.dumps(plan.from_sources(own))), "the plan is not the profile's own"
    assert env["time_plan"]["puzzles"] == own.data.puzzles != rehearsed["cfg"].data.puzzles  # not the overlay's size
    exported = _read(run / "agents" / "export" / "kit_agent.json")
    assert exported["model_name"] == own.model.base and "tiny" in exported["base"]


def _resolved(cfg: config.Profile, env: dict, section: str, key: str):
    """A profile setting as training resolved it: the profile's own value, or the env check's for "auto"."""
    value = getattr(getattr(cfg, section), key)
    return env["recommendation"][key]["value"] if value == "auto" else value


def _optimizer_groups(model_dir: Path) -> tuple[int, dict]:
    """(chunk, {group name: lr}) of the optimizer state in the adapter's last checkpoint."""
    import torch
    latest = _read(model_dir / "latest.json")
    state = torch.load(model_dir / latest["path"] / "optimizer.pt", map_location="cpu", weights_only=False)
    return latest["chunk"], {g["name"]: g["lr"] for g in state["param_groups"]}


def _check_adapter(model_dir: Path, spec: config.AdapterSpec, target_modules: list) -> None:
    conf = _read(model_dir / "adapter" / "adapter_config.json")
    got = (conf["r"], conf["lora_alpha"], conf["lora_dropout"], conf["use_rslora"], conf["use_dora"])
    want = (spec.r, spec.alpha, spec.dropout, spec.method == "rslora", spec.method == "dora")
    assert got == want, f"{model_dir.name}: adapter_config (r, alpha, dropout, rslora, dora) {got}, profile {want}"
    assert set(conf["target_modules"]) == set(target_modules)


@pytest.mark.rehearsal
def test_each_member_trained_with_the_profiles_adapter_and_schedule(rehearsed):
    cfg, run = rehearsed["cfg"], rehearsed["run"]
    env, train, chunks = _read(run / "env.json"), cfg.train, cfg.curriculum.chunks
    assert _read(run / "curriculum" / "stats.json")["schedule"]["lr"] == pytest.approx(
        _read(run / "models" / next(iter(cfg.models)) / "summary.json")["params"]["lr_schedule"])
    for name, spec in cfg.models.items():
        model_dir = run / "models" / name
        _check_adapter(model_dir, spec, train.target_modules)
        s = _read(model_dir / "summary.json")
        p = s["params"]
        assert s["complete"] and s["chunks_done"] == s["chunks_total"] == chunks, name
        assert len(p["lr_schedule"]) == len(p["replay_schedule"]) == chunks
        assert (p["lr_schedule"][0], p["lr_schedule"][-1]) == pytest.approx((train.lr_start, train.lr_end))
        assert (p["replay_schedule"][0], p["replay_schedule"][-1]) == pytest.approx(
            (train.replay_start, train.replay_end))
        assert [c["lr"] for c in s["per_chunk"]] == pytest.approx(p["lr_schedule"]), "a chunk ran at another rate"
        assert all(c["steps"] >= 1 for c in s["per_chunk"])
        assert p["effective_batch"] == train.batch_size * train.grad_accum
        assert (p["train.batch_size"], p["train.grad_accum"]) == (train.batch_size, train.grad_accum)
        assert p["spec"] == config.as_dict(spec) and p["adapter"]["method"] == spec.method
        assert p["optim"] == _resolved(cfg, env, "train", "optim")
        assert p["dtype"] == _resolved(cfg, env, "model", "dtype")
        # the optimizer itself, as the last chunk left it: every group at lr_end, DoRA's magnitude at lr_end x mult
        chunk, groups = _optimizer_groups(model_dir)
        assert chunk == chunks - 1
        if spec.method == "dora":
            mult = spec.magnitude_lr_multiplier
            assert p["adapter"]["magnitude_lr_multiplier"] == mult
            assert groups.pop("magnitude") == pytest.approx(train.lr_end * mult), name
        assert "magnitude" not in groups and groups, f"{name}: {groups}"
        assert all(lr == pytest.approx(train.lr_end) for lr in groups.values()), f"{name}: {groups}"


@pytest.mark.rehearsal
def test_the_writer_and_the_reasoner_trained_at_the_profiles_rate(rehearsed):
    cfg, run = rehearsed["cfg"], rehearsed["run"]
    train = cfg.train
    for name in (WRITER, REASONER):
        own, model_dir = getattr(cfg, name), run / "models" / name
        _check_adapter(model_dir, own.adapter, train.target_modules)
        s = _read(model_dir / "summary.json")
        assert s["complete"] and s["chunks_total"] == 1 and s["params"]["lr_schedule"] == pytest.approx([own.lr])
        assert s["per_chunk"][0]["lr"] == pytest.approx(own.lr)
        assert s["per_chunk"][0]["examples"] == own.examples and not s["dropped"], (name, s["dropped"])
        assert s["params"]["effective_batch"] == train.batch_size * train.grad_accum
        _, groups = _optimizer_groups(model_dir)
        assert groups and all(lr == pytest.approx(own.lr) for lr in groups.values()), f"{name}: {groups}"
    writer, reasoner = _read(run / "agents" / "writer.json"), _read(run / "agents" / "reasoner.json")
    assert writer["base"]["requests"] == writer["writer"]["requests"] == cfg.writer.measure
    assert reasoner["letter"]["n"] == reasoner["reason"]["n"] == cfg.reasoner.measure


@pytest.mark.rehearsal
def test_the_agents_ran_with_the_profiles_settings_and_pass_the_filter(rehearsed):
    from transformers import AutoTokenizer

    from helpers import filters
    cfg, run = rehearsed["cfg"], rehearsed["run"]
    agents = run / "agents"
    writer, reasoner = _read(agents / "writer.json"), _read(agents / "reasoner.json")
    assert writer["base"]["candidates"] == writer["writer"]["candidates"] == cfg.agents.writer_candidates
    exported = _read(agents / "export" / "kit_agent.json")
    measured = {"model_question_share": writer["justified_share"], "answer_mode": reasoner["justified_mode"]}
    for key, value in config.as_dict(cfg.agents).items():
        want = measured[key] if value == "auto" else value
        got = exported["agents"][key]
        if key == "edition":  # the export names the edition's file it carries, relative to its folder
            got, want = edition.load(agents / "export" / got).name, edition.load(value).name
        assert got == want, f"agents.{key}: exported {got!r}, want {want!r}"
    tour = _read(agents / "tournament.json")
    assert tour["answer_mode"] == exported["agents"]["answer_mode"]
    rules = cfg.agents.rules
    n, unserved = cfg.agents.num_questions, tour["questions"]["sources"].get("none", 0)
    # nothing asked only where no family writes, or where the topic's one family never fits the edition's length bound
    # with this tokenizer (the rehearsal's stand-in counts ~1.3 characters a token: truth-tellers under July's 100
    # tokens, which Qwen's vocabulary fits 93% of the time at level 1, never fit it)
    none = [i for i in _read(agents / "questions.report.json")["items"] if i["source"] == "none"]
    assert len(none) == unserved and all(i["reason"] in ("unserved_topic", "too_long_for_filter") for i in none), none
    assert all(i["reason"] == "too_long_for_filter" for i in none) or topics_mod.unserved_pairs(rules.topics)
    asked = n - unserved
    assert tour["questions"]["requested"] == n and tour["questions"]["format_correct"] == asked
    assert not rules.disqualified(asked, n)
    assert tour["answers"]["answers"] == tour["answers"]["passed_filter"] == asked
    tok = AutoTokenizer.from_pretrained(exported["base"])
    questions, answers = _read(agents / "questions.json"), _read(agents / "answers.json")
    assert len(questions) == len(answers) == asked
    assert [filters.check_question(q, tok, rules.question_rules).reason for q in questions] == [None] * asked
    assert [filters.check_answer(a, tok, rules.answer_rules).reason for a in answers] == [None] * asked
