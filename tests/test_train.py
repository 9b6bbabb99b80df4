"""Adapter training: version-tolerant arguments, label masking, padding, DoRA lr groups, atomic checkpoints,
crash + resume equality, the disk check, outputs, and a 2-process DDP run."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import TrainerCallback

from helpers.train import checkpoints as ckpt
from helpers import config, io, models
from helpers.train import telemetry
from helpers.io import InputError, read_json, write_json
from helpers.train import train_adapter
from helpers.train.data import IGNORE_INDEX, build_examples, load_curriculum, tokenize_example

from _tiny import ROOT, bundled_records, cpu_recommendation, one_torch_thread, tiny_model_dir, write_curriculum

N_CHUNKS, PER_CHUNK = 3, 8

# TrainingArguments field names of transformers 4.51.3 that matter here (from its training_args.py).
ARGS_4_51_3 = {"output_dir", "per_device_train_batch_size", "learning_rate", "group_by_length", "eval_strategy",
               "use_cpu", "no_cuda", "warmup_ratio", "warmup_steps", "report_to", "disable_tqdm", "seed"}
ARGS_5_X = {"output_dir", "per_device_train_batch_size", "learning_rate", "train_sampling_strategy", "eval_strategy",
            "use_cpu", "warmup_steps", "report_to", "disable_tqdm", "seed"}


def make_cfg(run: str = "t", **over) -> config.Profile:
    o = {"model.base": str(tiny_model_dir()), "train.batch_size": 4, "train.grad_accum": 1,
         "train.epochs_per_chunk": 1, "train.logging_steps": 1, "curriculum.replay_capacity": 16, "models.model3_dora.dropout": 0.1}
    o.update(over)
    return config.load_profile("smoke", run, o)


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer
    t = AutoTokenizer.from_pretrained(str(tiny_model_dir()))
    return models.prepare_tokenizer(t, for_training=True)



_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)

# ---------------------------------------------------------------- version-tolerant arguments
def test_training_kwargs_map_onto_4_51_3_and_5_x():
    from helpers.train.hf import compat_training_kwargs
    wanted = {"output_dir": "o", "group_by_length": True, "eval_strategy": "no", "use_cpu": True, "nosuch": 1}
    old, dropped_old = compat_training_kwargs(wanted, ARGS_4_51_3)
    new, dropped_new = compat_training_kwargs(wanted, ARGS_5_X)
    assert old == {"output_dir": "o", "group_by_length": True, "eval_strategy": "no", "use_cpu": True}
    assert new == {"output_dir": "o", "train_sampling_strategy": "group_by_length", "eval_strategy": "no", "use_cpu": True}
    assert dropped_old == dropped_new == ["nosuch"]
    older, _ = compat_training_kwargs(wanted, {"output_dir", "group_by_length", "evaluation_strategy", "no_cuda"})
    assert older == {"output_dir": "o", "group_by_length": True, "evaluation_strategy": "no", "no_cuda": True}


def test_installed_transformers_gets_length_grouping_and_the_tokenizer(tmp_path, tok):
    from helpers.train.hf import make_training_args, trainer_tokenizer_kwarg
    args, dropped = make_training_args(output_dir=str(tmp_path), group_by_length=True, eval_strategy="no",
                                       use_cpu=True, report_to="none")
    assert dropped == []
    grouped = getattr(args, "group_by_length", None) is True or \
        getattr(args, "train_sampling_strategy", None) == "group_by_length"
    assert grouped and args.use_cpu
    # Trainer(processing_class=) since 4.46, so both tested versions (4.51.3 and 5.x) take that spelling.
    assert trainer_tokenizer_kwarg(tok) == {"processing_class": tok}


def test_the_argument_sets_above_match_the_installed_transformers():
    """ARGS_4_51_3 / ARGS_5_X are copied from each version's source: the installed version must agree with its set,
    and lack the names only the other has (the unit tier runs on both: make test and make test-container)."""
    import transformers
    from helpers.train.hf import accepted_training_args
    accepted = accepted_training_args()
    mine, other = ((ARGS_5_X, ARGS_4_51_3) if io.version_tuple(transformers.__version__) >= (5,)
                   else (ARGS_4_51_3, ARGS_5_X))
    assert mine <= accepted
    # 5.x has no group_by_length, no_cuda, warmup_ratio; 4.51.3 has no train_sampling_strategy
    assert not (other - mine) & accepted


# ---------------------------------------------------------------- examples
def test_only_answer_tokens_carry_labels(tok):
    rec = bundled_records(1)[0]
    ex = tokenize_example(tok, rec)
    labelled = [i for i, lab in enumerate(ex["labels"]) if lab != IGNORE_INDEX]
    assert labelled and labelled == list(range(labelled[0], len(ex["input_ids"])))  # one block, at the end
    answer_ids = [ex["input_ids"][i] for i in labelled]
    assert [ex["labels"][i] for i in labelled] == answer_ids
    assert tok.decode(answer_ids) == "ABCDEFGHIJ"[rec["answer"]] + "<|im_end|>"
    assert len(ex["input_ids"]) == len(ex["labels"]) == sum(ex["attention_mask"])


def test_too_long_examples_are_dropped_and_counted(tok):
    recs = bundled_records(6)
    long = {**recs[0], "question": "Why? " * 300}
    examples, dropped = build_examples(tok, recs + [long], max_seq_len=256)
    assert len(examples) == 6 and dropped == Counter(too_long=1)


def test_curriculum_errors_name_file_line_and_field(tmp_path):
    with pytest.raises(InputError, match="02_curriculum"):
        load_curriculum(tmp_path / "nope.jsonl")
    path = write_curriculum(tmp_path / "c.jsonl", 2, 2)
    lines = path.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["chunk"] = "one"
    (tmp_path / "bad.jsonl").write_text("\n".join(lines[:2] + [json.dumps(bad)] + lines[3:]) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl: record line 3: field 'chunk'"):
        load_curriculum(tmp_path / "bad.jsonl")
    gap = [json.loads(x) for x in lines]
    for rec in gap[2:]:
        rec["chunk"] = 2
    (tmp_path / "gap.jsonl").write_text("\n".join(json.dumps(r) for r in gap) + "\n")
    with pytest.raises(InputError, match=r"chunks \[1\] have no records"):
        load_curriculum(tmp_path / "gap.jsonl")


def _trainer(tmp_path, model, tok, examples, **kw):
    from helpers.train.data import make_collator, make_dataset
    from helpers.train.hf import ChunkTrainer, make_training_args, trainer_tokenizer_kwarg
    args, _ = make_training_args(output_dir=str(tmp_path / "o"), per_device_train_batch_size=4, learning_rate=1e-3,
                                 group_by_length=True, use_cpu=True, report_to="none", seed=7,
                                 remove_unused_columns=False, optim="adamw_torch", weight_decay=0.01)
    return ChunkTrainer(model=model, args=args, train_dataset=make_dataset(examples), data_collator=make_collator(tok),
                        **trainer_tokenizer_kwarg(tok), **kw)


def spec(method: str, r: int, alpha: float) -> config.AdapterSpec:
    """An adapter of the smoke profile's kind (no dropout) with this method, rank and alpha."""
    return dataclasses.replace(config.load_profile("smoke").models["model1_lora"], method=method, r=r,
                               alpha=float(alpha))


def _peft(adapter: config.AdapterSpec):
    model, _, _ = models.load_model(tiny_model_dir(), model=dataclasses.replace(
        config.load_profile("smoke").model, gradient_checkpointing=False), for_training=True)
    return models.add_adapter(model, adapter, ["q_proj", "v_proj", "up_proj"])


def test_dynamic_padding_with_length_grouping(tmp_path, tok):
    import random
    recs = bundled_records(192)
    for i, rec in enumerate(recs):  # lengths spread widely: 0..23 extra words
        rec["question"] += " Think about it" * (i % 24)
    examples, _ = build_examples(tok, recs, 512)
    trainer = _trainer(tmp_path, _peft(spec("lora", 4, 8)), tok, examples)
    assert "LengthGrouped" in type(trainer._get_train_sampler()).__name__
    widths, pads = [], 0
    for batch in trainer.get_train_dataloader():
        real = batch["attention_mask"].sum(dim=1)
        widths.append(batch["input_ids"].shape[1])
        assert widths[-1] == int(real.max())  # padded to the longest in the batch, no further
        assert bool((batch["labels"][batch["attention_mask"] == 0] == IGNORE_INDEX).all())  # pads never trained
        pads += int((batch["attention_mask"] == 0).sum())
    lengths = [len(e["input_ids"]) for e in examples]
    fixed = len(lengths) * max(lengths) - sum(lengths)  # everything padded to the longest example
    random.Random(0).shuffle(lengths)
    shuffled = sum(max(b) * len(b) - sum(b) for b in (lengths[i:i + 4] for i in range(0, len(lengths), 4)))
    assert len(set(widths)) > 1 and pads < shuffled < fixed  # grouping beats random batches beats fixed padding


def test_dora_magnitudes_get_their_own_group_at_the_multiplied_lr(tmp_path, tok):
    model = _peft(spec("dora", 4, 8))
    examples, _ = build_examples(tok, bundled_records(4), 256)
    trainer = _trainer(tmp_path, model, tok, examples, magnitude_lr_multiplier=5.0)
    opt = trainer.create_optimizer()
    groups = {g["name"]: g for g in opt.param_groups}
    mags = {id(p) for n, p in model.named_parameters() if "lora_magnitude_vector" in n}
    others = {id(p) for n, p in model.named_parameters() if p.requires_grad and "lora_magnitude_vector" not in n}
    assert mags and {id(p) for p in groups["magnitude"]["params"]} == mags
    rest = {id(p) for name, g in groups.items() if name != "magnitude" for p in g["params"]}
    assert rest == others  # every other trainable parameter, no frozen one, none twice
    assert groups["magnitude"]["lr"] == pytest.approx(5.0 * groups["decay"]["lr"]) and groups["decay"]["lr"] == 1e-3
    assert groups["magnitude"]["weight_decay"] == 0.0
    lora_only = _trainer(tmp_path, _peft(spec("lora", 4, 8)), tok, examples,
                         magnitude_lr_multiplier=5.0).create_optimizer()
    assert "magnitude" not in {g["name"] for g in lora_only.param_groups}


def test_carried_optimizer_state_keeps_the_new_chunk_lr():
    from helpers.train.hf import load_optimizer_state
    p = torch.nn.Parameter(torch.ones(3))
    old = torch.optim.AdamW([{"params": [p], "lr": 2e-3}])
    p.grad = torch.ones(3)
    old.step()
    torch.optim.lr_scheduler.LambdaLR(old, lambda s: 1.0)  # leaves initial_lr=2e-3 in the state
    new = torch.optim.AdamW([{"params": [p], "lr": 1e-3}])
    load_optimizer_state(new, old.state_dict())
    assert new.param_groups[0]["lr"] == 1e-3 and "initial_lr" not in new.param_groups[0]
    assert torch.equal(new.state[p]["exp_avg"], old.state[p]["exp_avg"])


# ---------------------------------------------------------------- checkpoints
def _write(tmp: Path) -> None:
    for name in ("adapter_model.safetensors", "adapter_config.json", "optimizer.pt"):
        (tmp / name).write_text("x")


def test_crash_between_writing_and_renaming_leaves_latest_on_the_previous_chunk(tmp_path, monkeypatch):
    ckpt.save_checkpoint(tmp_path, 0, _write, {"chunk": 0})
    real_replace = os.replace

    def crash(src, dst):
        if Path(dst).name == "chunk-01":
            raise KeyboardInterrupt("killed while renaming")
        return real_replace(src, dst)

    monkeypatch.setattr(ckpt.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        ckpt.save_checkpoint(tmp_path, 1, _write, {"chunk": 1})
    monkeypatch.setattr(ckpt.os, "replace", real_replace)
    assert read_json(tmp_path / "latest.json")["path"] == "checkpoints/chunk-00"
    assert not (tmp_path / "checkpoints" / "chunk-01").exists()
    found = ckpt.latest_checkpoint(tmp_path)
    assert found[0].name == "chunk-00" and found[1] == {"chunk": 0}
    # a hard kill leaves the temp dir behind: the next run removes it, it was never pointed at
    (tmp_path / "checkpoints" / ".chunk-01.tmp-999").mkdir()
    assert ckpt.clean_stale(tmp_path) == [".chunk-01.tmp-999"]


def test_checkpoints_are_pruned_and_a_broken_pointer_is_named(tmp_path):
    for i in range(4):
        ckpt.save_checkpoint(tmp_path, i, _write, {"chunk": i}, keep=2)
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["chunk-02", "chunk-03"]
    (tmp_path / "checkpoints" / "chunk-03" / "optimizer.pt").unlink()
    with pytest.raises(InputError, match="lacks \\['optimizer.pt'\\]"):
        ckpt.latest_checkpoint(tmp_path)


def test_disk_check_names_path_needed_and_free(tmp_path, monkeypatch):
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=int(0.5 * 1024 ** 3)))
    with pytest.raises(ckpt.DiskSpaceError) as info:
        ckpt.check_disk(tmp_path / "models" / "m", 100 * 1024 ** 2, margin_gb=1.0)
    err = info.value
    assert err.needed_gb == pytest.approx(1.0 + 200 / 1024) and err.free_gb == pytest.approx(0.5)
    assert str(tmp_path / "models" / "m") in str(err) and "1.20 GiB" in str(err) and "0.50 GiB free" in str(err)
    assert ckpt.check_disk(tmp_path, 100 * 1024 ** 2, margin_gb=0.1)["free_gb"] == pytest.approx(0.5)


def test_training_stops_before_a_checkpoint_that_would_not_fit(tmp_path, monkeypatch):
    cur = write_curriculum(tmp_path / "c.jsonl", 1, 4)
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=10 * 1024 ** 2))
    with pytest.raises(ckpt.DiskSpaceError, match="need 1.0"):
        train_adapter(make_cfg(), "model1_lora", curriculum_path=cur, out_dir=tmp_path / "m",
                      recommendation=cpu_recommendation(), progress=False)
    assert not (tmp_path / "m" / "checkpoints" / "chunk-00").exists() and not (tmp_path / "m" / "latest.json").exists()


# ---------------------------------------------------------------- full runs: crash, resume, equality
class CrashInChunk(TrainerCallback):
    """Raises at optimizer step 2 of the n-th chunk this process trains (a kill mid-chunk)."""

    def __init__(self, nth: int):
        self.nth, self.seen = nth, -1

    def on_train_begin(self, args, state, control, **kwargs):
        self.seen += 1

    def on_step_end(self, args, state, control, **kwargs):
        if self.seen == self.nth and state.global_step >= 2:
            raise RuntimeError("simulated crash")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An uninterrupted DoRA run, and one killed in chunk 1 then resumed (same seed, same data)."""
    root = tmp_path_factory.mktemp("train")
    cur = write_curriculum(root / "curriculum.jsonl", N_CHUNKS, PER_CHUNK)
    cfg, rec = make_cfg(), cpu_recommendation()
    full = train_adapter(cfg, "model3_dora", curriculum_path=cur, out_dir=root / "full", recommendation=rec,
                         progress=False)
    crash = CrashInChunk(1)
    with pytest.raises(RuntimeError, match="simulated crash"):
        train_adapter(cfg, "model3_dora", curriculum_path=cur, out_dir=root / "resumed", recommendation=rec,
                      progress=False, callbacks=[crash])
    after_crash = read_json(root / "resumed" / "latest.json")
    lines_at_checkpoint = ckpt.latest_checkpoint(root / "resumed")[1]["metrics_lines"]
    lines_after_crash = len(telemetry.read_metrics(root / "resumed" / "metrics.jsonl"))
    resumed = train_adapter(cfg, "model3_dora", curriculum_path=cur, out_dir=root / "resumed", recommendation=rec,
                            progress=False)
    return {"root": root, "cur": cur, "cfg": cfg, "full": full, "resumed": resumed, "after_crash": after_crash,
            "lines_after_crash": lines_after_crash, "lines_at_checkpoint": lines_at_checkpoint}


def test_resumed_run_ends_with_the_same_adapter(runs):
    assert runs["after_crash"]["chunk"] == 0  # the kill in chunk 1 left latest on chunk 0
    assert runs["resumed"]["resumed_from"] == 0 and runs["full"]["resumed_from"] is None
    a = load_file(str(runs["root"] / "full" / "adapter" / "adapter_model.safetensors"))
    b = load_file(str(runs["root"] / "resumed" / "adapter" / "adapter_model.safetensors"))
    assert a.keys() == b.keys() and any("lora_magnitude_vector" in k for k in a)
    assert all(torch.allclose(a[k], b[k], atol=1e-6, rtol=0) for k in a)
    assert all(float(v.abs().sum()) > 0 for k, v in a.items() if "lora_B" in k)  # B starts at zero: it trained
    assert runs["full"]["chunk_losses"] == runs["resumed"]["chunk_losses"]


def test_the_disk_check_sizes_a_chunk_checkpoint_as_it_is_written(runs):
    """What the disk check before each save counts (memory.checkpoint_bytes: adapter + optimizer state + the replay
    buffer + the fixed part) against the files of a real chunk checkpoint: never under, at most a quarter over."""
    from helpers.env.memory import checkpoint_bytes
    summary, latest = runs["full"], ckpt.latest_checkpoint(runs["root"] / "full")
    folder, state = latest[0], latest[1]
    written = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
    counted = checkpoint_bytes(summary["trainable_params"], summary["params"]["optim"],
                               extra_bytes=len(json.dumps(state["replay_buffer"])))
    assert 0.8 * counted <= written <= counted, (written, counted)


def test_metrics_logged_after_the_last_checkpoint_are_dropped_on_resume(runs):
    assert runs["lines_after_crash"] > runs["lines_at_checkpoint"]  # the dying chunk had logged steps
    full = telemetry.read_metrics(runs["root"] / "full" / "metrics.jsonl")
    resumed = telemetry.read_metrics(runs["root"] / "resumed" / "metrics.jsonl")
    strip = lambda recs: [(r["chunk"], r["step"], r["global_step"], round(r["loss"], 5)) for r in recs]
    assert strip(resumed) == strip(full)


def test_metrics_jsonl_has_every_field(runs):
    recs = telemetry.read_metrics(runs["root"] / "full" / "metrics.jsonl")
    assert recs and all(set(telemetry.FIELDS) <= set(r) for r in recs)
    steps = [r["global_step"] for r in recs]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    assert {r["chunk"] for r in recs} == set(range(N_CHUNKS))
    assert all(r["tokens"] > 0 and r["tokens_per_s"] > 0 and r["rss_gib"] > 0 and r["grad_norm"] is not None
               and r["vram_allocated_gib"] is None for r in recs)  # no GPU here: VRAM fields are null
    assert recs[0]["learning_rate"] == 0.0 and all(r["learning_rate"] > 0 for r in recs[1:])  # warm-up from 0
    last_lr = make_cfg().train.lr_end  # the last chunk trains at lr_end, constant
    assert [r["learning_rate"] for r in recs if r["chunk"] == 2] == [last_lr] * sum(r["chunk"] == 2 for r in recs)
    summary = runs["full"]
    assert sum(r["tokens"] for r in recs) == summary["tokens"]  # real tokens: attention-mask sums, no pads


def test_outputs_and_summary(runs):
    out = runs["root"] / "full"
    s = read_json(out / "summary.json")
    assert (out / "adapter" / "adapter_model.safetensors").exists() and (out / "adapter" / "adapter_config.json").exists()
    assert (out / "training.png").stat().st_size > 5000
    assert read_json(out / "latest.json")["path"] == f"checkpoints/chunk-{N_CHUNKS - 1:02d}"
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["chunk-01", "chunk-02"]  # keep 2
    assert s["complete"] and s["chunks_done"] == N_CHUNKS and len(s["chunk_losses"]) == N_CHUNKS
    assert 0 < s["trainable_params"] < s["total_params"] and s["first_loss"] > s["last_loss"]
    assert s["peak_memory"]["kind"] == "rss" and s["peak_memory"]["gib"] > 0 and s["tokens_per_s"] > 0
    assert s["params"]["adapter"]["magnitude_lr_multiplier"] == 5.0 and s["params"]["dtype"] == "float32"
    assert s["params"]["answer_only_logits"] is True  # the tiny Qwen2 forward takes logits_to_keep
    assert s["answer_only_fallbacks"] == 0 and s["answer_only_fallback_reason"] is None  # ... and honours it
    assert all(c["answer_only_fallbacks"] == 0 for c in s["per_chunk"])
    assert [c["replayed"] for c in s["per_chunk"]] == [0, 1, 2]  # replay 0.10 -> 0.20 of 8 fresh records
    assert s["per_chunk"][0]["warmup_steps"] >= 1 and s["per_chunk"][1]["warmup_steps"] == 0
    assert s["versions"]["transformers"] and not (out / "_trainer-0").exists() and s["dropped"] == {}


def test_rerunning_a_finished_run_trains_nothing(runs):
    again = train_adapter(runs["cfg"], "model3_dora", curriculum_path=runs["cur"], out_dir=runs["root"] / "full",
                          recommendation=cpu_recommendation(), progress=False)
    assert again["resumed_from"] == N_CHUNKS - 1 and again["chunks_done"] == N_CHUNKS
    assert again["chunk_losses"] == runs["full"]["chunk_losses"]


def test_resume_refuses_a_checkpoint_from_other_settings(runs):
    cfg = make_cfg(**{"train.lr_start": 5e-3})
    with pytest.raises(ValueError, match="train.lr_start"):
        train_adapter(cfg, "model3_dora", curriculum_path=runs["cur"], out_dir=runs["root"] / "full",
                      recommendation=cpu_recommendation(), progress=False)


@pytest.mark.integration
def test_sigkill_mid_chunk_then_rerun_resumes_to_the_same_adapter(tmp_path):
    """A real kill (SIGKILL, no Python cleanup) of `python -m helpers.train` while chunk 1 trains."""
    import signal
    import time
    runs_dir = tmp_path / "runs"
    write_curriculum(runs_dir / "k" / "curriculum" / "train.jsonl", 3, 64)
    overrides = {"model.base": str(tiny_model_dir()), "train.batch_size": 4, "train.epochs_per_chunk": 1,
                 "train.logging_steps": 1, "train.cpu_threads": 1, "curriculum.replay_capacity": 16}
    env = {**os.environ, "KIT_RUNS_DIR": str(runs_dir), "KIT_HEADLESS": "1"}
    write_json(runs_dir / "k" / "env.json", {"recommendation": cpu_recommendation()})

    def cli(out: str) -> list[str]:
        return [sys.executable, "-m", "helpers.train", "--profile", "smoke", "--model", "model1_lora", "--run", "k",
                "--overrides", json.dumps(overrides), "--out-dir", str(tmp_path / out)]

    subprocess.run(cli("full"), cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    proc = subprocess.Popen(cli("killed"), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    metrics, deadline = tmp_path / "killed" / "metrics.jsonl", time.time() + 240
    try:
        while time.time() < deadline and proc.poll() is None:
            if any(r.get("chunk") == 1 for r in telemetry.read_metrics(metrics)) if metrics.exists() else False:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before chunk 1 started: make the chunks bigger"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert read_json(tmp_path / "killed" / "latest.json")["chunk"] == 0
    assert not (tmp_path / "killed" / "adapter").exists()
    done = subprocess.run(cli("killed"), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = read_json(tmp_path / "killed" / "summary.json")
    assert summary["resumed_from"] == 0 and summary["complete"]
    a = load_file(str(tmp_path / "full" / "adapter" / "adapter_model.safetensors"))
    b = load_file(str(tmp_path / "killed" / "adapter" / "adapter_model.safetensors"))
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-6, rtol=0) for k in a)


def test_stop_after_a_chunk_then_continue(tmp_path):
    cur = write_curriculum(tmp_path / "c.jsonl", 2, 4)
    kw = dict(curriculum_path=cur, out_dir=tmp_path / "m", recommendation=cpu_recommendation(), progress=False)
    first = train_adapter(make_cfg(), "model2_rslora", stop_after_chunk=0, **kw)
    assert first["stopped_early"] and not first["complete"] and not (tmp_path / "m" / "adapter").exists()
    second = train_adapter(make_cfg(), "model2_rslora", **kw)
    assert second["complete"] and second["resumed_from"] == 0 and (tmp_path / "m" / "adapter").exists()


def test_fsdp_is_refused_with_a_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    with pytest.raises(NotImplementedError, match="FSDP"):
        train_adapter(make_cfg(), "model1_lora", curriculum_path=tmp_path / "c.jsonl", out_dir=tmp_path / "m")


def test_cli_rejects_bad_arguments(capsys):
    from helpers.train.__main__ import main
    assert main(["--model", "model1_lora", "--overrides", "[1]"]) == 2
    assert main(["--model", "model9_nope"]) == 2
    assert "no model 'model9_nope'" in capsys.readouterr().err


# ---------------------------------------------------------------- DDP: two CPU processes (gloo)
@pytest.mark.integration
def test_two_process_ddp_run(tmp_path):
    runs_dir = tmp_path / "runs"
    write_curriculum(runs_dir / "ddp" / "curriculum" / "train.jsonl", 2, 8)
    write_json(runs_dir / "ddp" / "env.json", {"recommendation": cpu_recommendation()})
    overrides = {"model.base": str(tiny_model_dir()), "train.batch_size": 2, "train.logging_steps": 1,
                 "train.epochs_per_chunk": 1,
                 "model.gradient_checkpointing": False}
    env = {**os.environ, "KIT_RUNS_DIR": str(runs_dir), "OMP_NUM_THREADS": "1", "KIT_HEADLESS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "helpers.train", "--profile", "smoke", "--model", "model1_lora", "--run-name", "ddp",
           "--overrides", json.dumps(overrides)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = runs_dir / "ddp" / "models" / "model1_lora"
    s = read_json(out / "summary.json")
    assert s["world_size"] == 2 and s["complete"] and s["params"]["effective_batch"] == 2 * 1 * 2
    # 8 fresh (+2 replayed in chunk 1) examples over 2 ranks x batch 2: 2 + 3 optimizer steps
    assert [c["steps"] for c in s["per_chunk"]] == [2, 3]
    assert (out / "adapter" / "adapter_model.safetensors").exists() and (out / "latest.json").exists()
    assert all(r["world_size"] == 2 for r in telemetry.read_metrics(out / "metrics.jsonl"))
    assert proc.stdout.count("done: 2/2 chunks") == 1  # rank 0 reports, rank 1 stays quiet


def _first_adam_step_loss_drop(r: int, alpha: float, rslora: bool) -> float:
    """How much one small AdamW step (lr 1e-5: first order) lowers a LoRA-wrapped Linear's loss."""
    from peft import LoraConfig, get_peft_model
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(256, 256, bias=False))
    net = get_peft_model(net, LoraConfig(r=r, lora_alpha=alpha, use_rslora=rslora, target_modules=["0"])).double()
    x, target = torch.randn(64, 256, dtype=torch.float64), torch.randn(64, 256, dtype=torch.float64)
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-5, weight_decay=0.0)
    loss = torch.nn.functional.mse_loss(net(x), target)
    loss.backward()
    opt.step()
    with torch.no_grad():
        return float(loss - torch.nn.functional.mse_loss(net(x), target))


def test_adam_step_predicts_how_far_rslora_moves_against_lora():
    """adapter_summary's adam_step (scaling x r) predicts how far one real AdamW update moves the loss, relative to
    LoRA's: rsLoRA r=16 alpha=8 (the old smoke setting, same scaling as LoRA's) twice as far; alpha=4 as far;
    LoRA at twice the rank and the same alpha, as far (its scaling halves)."""
    from helpers.train import adapter_summary
    lora = adapter_summary(spec("lora", 8, 16))
    old = adapter_summary(spec("rslora", 16, 8))
    new = adapter_summary(spec("rslora", 16, 4))
    assert (lora["scaling"], old["scaling"]) == (2.0, 2.0) and (lora["adam_step"], old["adam_step"], new["adam_step"]) \
        == (16.0, 32.0, 16.0)
    wide = adapter_summary(spec("lora", 16, 16))
    base = _first_adam_step_loss_drop(8, 16, False)
    for summary, rslora in ((old, True), (new, True), (wide, False)):
        measured = _first_adam_step_loss_drop(summary["r"], summary["alpha"], rslora) / base
        predicted = summary["adam_step"] / lora["adam_step"]
        assert abs(measured / predicted - 1) < 0.15, f"r={summary['r']} alpha={summary['alpha']}: {measured:.2f}x"
    smoke = config.load_profile("smoke").models
    steps = {name: adapter_summary(spec)["adam_step"] for name, spec in smoke.items()}
    # No smoke adapter steps further than LoRA's (a larger step collapsed rsLoRA onto one letter); rsLoRA takes 12
    # against 16 since alpha 3 (docs/history.md, "The smoke recipe").
    assert max(steps.values()) == steps["model1_lora"] == steps["model3_dora"] == 16.0, steps
    assert 0.5 * steps["model1_lora"] <= steps["model2_rslora"] <= steps["model1_lora"], steps


# ---------------------------------------------------------------- answer-only logits
def test_answer_only_loss_has_the_models_loss_and_gradients(tok):
    from _tiny import answer_only_vs_full_loss
    torch.manual_seed(0)
    model = _peft(spec("lora", 4, 8))
    recs = bundled_records(6)
    for i, rec in enumerate(recs):
        rec["question"] += " Think about it" * (3 * i)  # answers at six different positions
    for loss_gap, grad_gap in answer_only_vs_full_loss(model.train(), tok, recs):
        assert loss_gap < 1e-5 and grad_gap < 1e-6, (loss_gap, grad_gap)


def test_answer_only_logits_train_the_same_adapter_with_a_narrow_lm_head(tmp_path, tok):
    from helpers.train.hf import accepts_logits_to_keep
    recs = bundled_records(24)
    for i, rec in enumerate(recs):
        rec["question"] += " Think about it" * (i % 7)
    examples, _ = build_examples(tok, recs, 512)
    adapters, widths = {}, {}
    for flag in (False, True):
        torch.manual_seed(0)
        model = _peft(spec("lora", 4, 8))
        assert accepts_logits_to_keep(model)
        seen = []
        hook = model.get_base_model().lm_head.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[1]))
        trainer = _trainer(tmp_path / str(flag), model, tok, examples, answer_only_logits=flag)
        trainer.args.max_steps = 6
        trainer.train()
        hook.remove()
        adapters[flag] = {k: v.detach().clone() for k, v in model.state_dict().items() if "lora_" in k}
        widths[flag] = seen
    longest = max(len(e["input_ids"]) for e in examples)
    # 2 answer tokens (letter, end of turn) per row, at each row's own position: at most 8 columns for 4 rows
    assert max(widths[True]) <= 8 < min(widths[False]) <= longest
    for k, v in adapters[False].items():
        assert torch.allclose(v, adapters[True][k], atol=1e-5), k


def test_a_trainer_checkpoints_rng_state_reloads_on_this_torch(tmp_path):
    """A GRPO resume reloads rng_state.pth through Trainer's own safe_globals() and torch.load(weights_only=True);
    transformers 4.51.3 allow-lists numpy's types there only on torch >= 2.6, so on the original team's torch 2.5.1 every resume
    failed ('Unsupported global: numpy._core.multiarray._reconstruct') until the kit allow-listed them
    (make test-container runs this on torch 2.5.1 in CI)."""
    import random

    import numpy as np
    from transformers import trainer as hf_trainer

    from helpers.train import hf
    path = tmp_path / "rng_state.pth"
    np.random.seed(7)
    torch.save({"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.random.get_rng_state()},
               path)
    wanted = np.random.rand(3)
    allowed = hf.allow_rng_state_on_old_torch()
    assert allowed == (tuple(int(x) for x in torch.__version__.split(".")[:2]) < (2, 6))
    with hf_trainer.safe_globals():
        state = torch.load(path, weights_only=True)
    np.random.set_state(state["numpy"])
    assert (np.random.rand(3) == wanted).all()
