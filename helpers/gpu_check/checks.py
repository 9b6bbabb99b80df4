"""The checks the gpu-check runs on the device: training, letters, the reasoner and GRPO.

LoRA, rsLoRA and DoRA trained through the kit's chunk loop (helpers.train.train_adapter), each with its loss and
memory plot (models/<name>/training.png), and the "will it fit" estimate (helpers.env.memory) for the model it trained
against the peak it measured.

Letter scoring and the generate check on the device against the CPU, for the same saved adapters.

Both sides load the base once with every adapter attached (notebook 06's path: helpers.models.members), letter-score
each member (helpers.evaluate.score_member) and generate a few tokens per question for each adapter
(helpers.scoring.generate_letters). Each side runs in a fresh interpreter (side by side on a GPU): the device side
as the exported agents run on the day (nothing of the training process imported, so no Unsloth patches unless the
profile infers through Unsloth), the CPU side with every GPU hidden, in fp32 on transformers + PEFT: the reference a
team's CPU would give.

A letter may differ only where the CPU's top two letters are nearer than what the device's number format can move
them (NEAR_TIE); every such near tie is recorded with its margin, every other difference fails the step.

The reasoner's answer mode (notebook 10's A-agent, reasoning then the letter, inside the answer budget) and two GRPO
steps of the reasoner's reinforcement stage (helpers.agents.stages.reasoner_rl), where trl and datasets are installed.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from helpers import config, env, io
from helpers.env import memory
from helpers.gpu_check import inputs
from helpers.gpu_check.steps import Skip, finite, missing, one_line
from helpers.layout import RunLayout
from helpers.records import letter
from helpers.rehearse import HIDDEN_DEVICES


# ---------------------------------------------------------------- training
METHODS = ("lora", "rslora", "dora")
# The estimate counts the runtime context (CONTEXT_BYTES: HIP/CUDA context, BLAS workspaces, kernels); torch's
# max_memory_allocated never sees it, so the ratio compares the measured peak with the estimate less that budget.
UNDER_ESTIMATE = 1.10  # the tolerance: a peak past 1.1x what is allowed is reported: plan that model with more headroom
# Every size is judged, against the estimate less its context, times the backend's measured factor, plus the backend's
# fixed costs that no model term sets (cuBLAS workspaces, the allocator's first blocks; Unsloth's own buffers), all read
# off the H200 runs (docs/results.md, GPU check runs). The fixed costs: the tiny model's peak less its estimate of
# ~0.02 GiB, rounded up: 0.053-0.059 GiB through transformers + PEFT (runs 2 and 13), 0.119-0.120 through Unsloth
# (runs 12 and 14). Less those, transformers + PEFT's peaks were 0.95-0.99x its estimates on a 360M model (runs 3 and
# 7), Unsloth's 0.87-0.98x (run 11), so each backend's factor is 1.0: the estimator's assumed Unsloth saving shows on
# neither size.
BACKEND_FIT = {"transformers": (0.06, 1.0), "unsloth": (0.12, 1.0)}  # (fixed GiB, factor) per backend


def adapter_for(cfg: config.Profile, method: str) -> str | None:
    """The profile's first adapter of `method` (smoke: model1_lora, model2_rslora, model3_dora), or None."""
    return next((name for name, spec in cfg.models.items() if spec.method == method), None)


def longest_example(cfg: config.Profile, tokenizer: Any, curriculum: Path) -> int:
    """Tokens in the curriculum's longest training example (prompt + answer), as the chunk loop tokenises it."""
    from helpers.train.data import build_examples, load_curriculum
    records = [r for chunk in load_curriculum(curriculum).values() for r in chunk]
    examples, _ = build_examples(tokenizer, records, cfg.model.max_seq_len)
    return max((len(e["input_ids"]) for e in examples), default=cfg.model.max_seq_len)


def estimate(cfg: config.Profile, name: str, settings: dict, backend: str, model_dir: Path,
             seq_len: int) -> memory.MemoryEstimate:
    """The peak training memory helpers.env.memory estimates for adapter `name` of this model, at the settings that
    ran (dtype, 4-bit, gradient checkpointing, optimizer, backend) and the longest example's length."""
    spec = cfg.models[name]
    dtype = "4bit" if settings["load_in_4bit"] else memory.DTYPE_ALIASES.get(settings["dtype"], settings["dtype"])
    return memory.estimate(str(model_dir), method=spec.method, dtype=dtype, rank=spec.r,
                           target_modules=cfg.train.target_modules, batch_size=cfg.train.batch_size,
                           seq_len=seq_len, grad_checkpointing=settings["gradient_checkpointing"],
                           optimizer=settings["optim"], backend=backend, lora_dropout=spec.dropout)


def train_method(cfg: config.Profile, name: str, recommendation: dict, lay: RunLayout, device: dict) -> dict:
    """Train adapter `name` through train_adapter (loaded, trained through every chunk, saved, released) and return
    its figures; a loss that is not finite fails the step."""
    from helpers.train import telemetry, train_adapter
    inputs.reset_peak()
    t0 = time.perf_counter()
    summary = train_adapter(cfg, name, curriculum_path=lay.curriculum, out_dir=lay.model_dir(name), resume=False,
                            progress="off", recommendation=recommendation, live_plot=False)
    rows = telemetry.read_metrics(lay.metrics(name))  # read once: the seconds and the losses
    seconds = startup_split(rows, time.perf_counter() - t0)
    peak = inputs.peak_memory(device)
    losses = [r["loss"] for r in rows]
    if not losses:
        raise RuntimeError(f"{name}: no loss was logged ({lay.rel(lay.metrics(name))} is empty)")
    if not finite(losses):
        bad = next(i for i, v in enumerate(losses) if not finite([v]))
        raise FloatingPointError(f"{name}: loss {losses[bad]} at logged step {bad + 1} of {len(losses)} "
                                 f"({summary['params']['dtype']}, {summary['params']['backend']})")
    figures = {
        "adapter": name, "method": summary["method"], "backend": summary["params"]["backend"],
        "dtype": summary["params"]["dtype"], "optim": summary["params"]["optim"], "steps": summary["global_steps"],
        "chunks": summary["chunks_done"], "loss_first": round(losses[0], 4), "loss_last": round(losses[-1], 4),
        "loss_min": round(min(losses), 4), "tokens": summary["tokens"], "tokens_per_s": summary["tokens_per_s"],
        "train_seconds": summary["train_seconds"], "trainable_params": summary["trainable_params"],
        "total_params": summary["total_params"], "peak_memory": peak, "seconds": seconds,
        "plot": lay.rel(lay.training_plot(name)) if lay.training_plot(name).is_file() else None,
        "adapter_dir": lay.rel(lay.adapter_dir(name)), "warnings": summary["warnings"]}
    figures["summary"] = (f"{summary['method']} r={cfg.models[name].r} on {figures['backend']}, {figures['dtype']}: "
                          f"{figures['steps']} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}, "
                          f"{figures['tokens_per_s']:.0f} tokens/s, peak {peak['gib']} GiB ({peak['kind']}); "
                          f"{seconds['total']:.1f} s, of which start-up {seconds['startup']} s")
    return figures


def startup_split(rows: list[dict], total_s: float) -> dict:
    """Where an adapter's seconds went, measured: `total` (load, adapter set-up, every step, every chunk's save),
    `steady_step` (the median gap between logged steps of one chunk), `first_step` (the first logged step's seconds
    since training started: a backend's first-forward compile lands there) and `startup` (total less the steps at the
    steady pace: what the backend costs before and around training, which a short check cannot pay back)."""
    walls = [r["wall_s"] for r in rows if isinstance(r.get("wall_s"), (int, float))]
    chunks = [r.get("chunk") for r in rows if isinstance(r.get("wall_s"), (int, float))]
    gaps = sorted(b - a for a, b, ca, cb in zip(walls, walls[1:], chunks, chunks[1:]) if ca == cb)
    steady = gaps[len(gaps) // 2] if gaps else None
    return {"total": round(total_s, 2), "first_step": walls[0] if walls else None,
            "steady_step": round(steady, 4) if steady is not None else None,
            "startup": round(total_s - steady * len(walls), 2) if steady is not None else None}


def fit_row(est: memory.MemoryEstimate, trained: dict) -> dict:
    """One method's estimate against its measured peak, and its throughput."""
    peak = trained["peak_memory"]
    device_part = max(est.total_bytes - memory.CONTEXT_BYTES, 1) / memory.GIB
    row = {"method": trained["method"], "adapter": trained["adapter"], "estimate_gib": round(est.total_gib, 3),
           "estimate_without_context_gib": round(device_part, 3), "measured_gib": peak["gib"],
           "measured_kind": peak["kind"], "tokens_per_s": trained["tokens_per_s"],
           "estimate_parts_gib": est.to_dict()["parts_gib"], "settings": est.settings}
    if peak["kind"] == "vram":
        fixed, factor = BACKEND_FIT.get(trained.get("backend", "transformers"), BACKEND_FIT["transformers"])
        allowed = factor * device_part
        row.update(ratio=round(peak["gib"] / device_part, 3), comparable=True, reserved_gib=peak.get("reserved_gib"),
                   backend_factor=factor, fixed_gib=fixed, allowed_gib=round(allowed + fixed, 3),
                   judged_ratio=round(max(peak["gib"] - fixed, 0.0) / allowed, 3))
    else:  # the estimate is of device memory; a CPU's RSS holds Python, torch and the libraries too
        row.update(ratio=round(peak["gib"] / device_part, 3), comparable=False,
                   note="CPU: the process's peak RSS (Python, torch and every library, all methods so far), not "
                        "device memory: the ratio is recorded, not judged")
    return row


def fit_warnings(rows: list[dict]) -> list[str]:
    """A line for each method whose measured GPU peak, less its backend's fixed costs, is over UNDER_ESTIMATE x the
    estimate (without its context) times its backend's measured factor (BACKEND_FIT): at every size."""
    return [f"{r['method']}: measured {r['measured_gib']} GiB is {r['judged_ratio']:.2f}x what the estimate allows "
            f"({r['estimate_without_context_gib']} GiB without its 1 GiB context x {r['backend_factor']} for its "
            f"backend, plus {r['fixed_gib']} GiB of fixed costs): plan with more headroom"
            for r in rows if r.get("comparable") and r["judged_ratio"] > UNDER_ESTIMATE]


# ---------------------------------------------------------------- letters
GENERATE_TOKENS = 4  # a trained adapter answers with the letter, then ends its turn: 4 tokens hold that form
SIDE_TIMEOUT_S = 600  # each side's process, the device side's reasoner included
# How far the device's number format can move a letter's probability from fp32's on the same weights. bf16 and fp16
# keep 8 and 11 bits of mantissa: each product is off by up to 2^-9 (bf16) relative, and through a network's layers the
# letter logits move by a few hundredths, a probability by p(1-p) x that, at most ~0.01-0.03: a margin between the top
# two letters under 0.05 may flip. fp32 on a GPU matches the CPU's to ~1e-6 unless TF32 is on (10 bits: ~1e-3).
NEAR_TIE = {"bfloat16": 0.05, "float16": 0.02, "float32": 0.005}
ROUNDING_SHIFT = 0.25  # a probability moved more than this is not rounding: reported (an adapter not applied, say)


def cpu_recommendation(model: config.ModelSettings) -> dict:
    """env.recommend() for a CPU with torch's SDPA (no probing: the reference process runs with the GPUs hidden)."""
    facts = env.empty_facts()
    facts["torch"]["sdpa"] = True
    return env.recommend(facts, model)


def reference_profile(cfg: config.Profile) -> config.Profile:
    """The profile as the CPU runs it: fp32, transformers + PEFT, no 4-bit (every other setting the same)."""
    return config.with_overrides(cfg, {"model.dtype": "float32", "model.use_unsloth": False,
                                       "model.load_in_4bit": False}, where="the gpu-check's CPU reference")


def load_scored(cfg: config.Profile, recommendation: dict, adapter_dirs: dict[str, str]) -> tuple[Any, Any, dict]:
    """The base loaded for inference with every adapter attached under its name (notebook 06's loader)."""
    from helpers.models.members import load_with_adapters
    return load_with_adapters(cfg.model.weights, cfg.model, adapter_dirs, recommendation, train=cfg.train)


def score_loaded(cfg: config.Profile, model: Any, tokenizer: Any, members: list[str], questions: list[dict]) -> dict:
    """Per member: each question's letter probabilities (score_member), and for the adapters the generated letter and
    text (generate_letters, GENERATE_TOKENS tokens)."""
    from helpers import scoring
    from helpers.evaluate import score_member
    out: dict[str, Any] = {}
    for member in members:
        rows, timing = score_member(model, tokenizer, member, questions, ["all"] * len(questions), method="letters",
                                    batch_size=cfg.eval.batch_size)
        out[member] = {"probs": [r["probs"] for r in rows], "questions_per_s": timing["questions_per_s"]}
        if member != scoring.BASE:
            with scoring.use_member(model, member):
                gens = scoring.generate_letters(model, tokenizer, questions, max_new_tokens=GENERATE_TOKENS,
                                                batch_size=max(1, cfg.eval.batch_size // 2))
            out[member].update(generated=[g["letter"] for g in gens], texts=[g["text"] for g in gens])
    return out


# A DoRA adapter's generation past its first tokens (its magnitudes applied at every decode step), compared teacher-
# forced: the device reads the CPU's greedy tokens and must predict each one, unless the CPU's two likeliest next tokens
# were nearer than the device's format can move a logit. bf16 keeps 8 bits of mantissa: a logit of 10-20 carries
# 0.05-0.1 of rounding, two to four times that through a decode step's sums. Measured (docs/results.md, runs 12 and
# 14): the H200 in bf16 picked another token where the CPU's gap was 0.226 and 0.290; the same tiny DoRA model cast to
# bf16 on the CPU moved gaps by up to 0.233 over 576 positions. So 0.4 for bf16 (0.25 until run 14 failed on a 0.290
# gap), fp16's 3 more bits an eighth of it. A vocabulary's probabilities are too flat for a probability margin: an
# untrained adapter's top two differ by 0.0005.
LONG_TOKENS, LONG_QUESTIONS = 24, 6  # 144 decode steps of the CPU's: seconds for a 0.5B model in fp32
LOGIT_NEAR_TIE = {"float32": 0.01, "float16": 0.05, "bfloat16": 0.4}


def dora_member(cfg: config.Profile, members: list[str]) -> str | None:
    """The first DoRA adapter among the members, if any."""
    return next((m for m in members if m in cfg.models and cfg.models[m].method == "dora"), None)


def long_generation(model: Any, tokenizer: Any, member: str, questions: list[dict], n: int = LONG_TOKENS) -> dict:
    """The CPU side: per question, `member`'s first n greedy tokens, its end-of-sequence tokens held off (past the
    letter a trained adapter would pick them at every position, which would compare nothing: the decode path is what
    is compared, not the answer), and at each the logit gap between its two likeliest of the rest."""
    import torch
    from helpers import scoring
    from helpers.prompts import render_prompt
    eos = model.generation_config.eos_token_id
    out: dict[str, Any] = {"member": member, "tokens": [], "likeliest": [], "margins": [],
                           "held_off": sorted({eos} if isinstance(eos, int) else set(eos or []))}
    with torch.no_grad(), scoring.use_member(model, member):
        for question in questions:
            ids = tokenizer(render_prompt(tokenizer, question), add_special_tokens=False, return_tensors="pt")
            gen = model.generate(ids["input_ids"], attention_mask=ids["attention_mask"], max_new_tokens=n,
                                 min_new_tokens=n, do_sample=False, output_scores=True, return_dict_in_generate=True,
                                 pad_token_id=tokenizer.pad_token_id)
            top = [scores[0].float().topk(2) for scores in gen.scores]  # the held-off tokens at -inf
            out["tokens"].append(gen.sequences[0, ids["input_ids"].shape[1]:].tolist())
            out["likeliest"].append([int(t.indices[0]) for t in top])
            out["margins"].append([round(float(t.values[0] - t.values[1]), 6) for t in top])
    return out


def compare_long(model: Any, tokenizer: Any, cpu_long: dict, questions: list[dict], tolerance: float) -> dict:
    """The device side, teacher-forced on the CPU's tokens: each position's likeliest token (the CPU's held-off tokens
    left out, as there) against the CPU's, a difference a near tie where the CPU's logit gap there is under
    `tolerance` (LOGIT_NEAR_TIE)."""
    import torch
    from helpers import scoring
    from helpers.prompts import render_prompt
    rows, total, stops = [], 0, set(scoring.end_of_turn_ids(tokenizer))
    device = next(model.parameters()).device
    with torch.no_grad(), scoring.use_member(model, cpu_long["member"]):
        for i, (question, tokens, likeliest, margins) in enumerate(zip(questions, cpu_long["tokens"],
                                                                         cpu_long["likeliest"], cpu_long["margins"])):
            prompt = tokenizer(render_prompt(tokenizer, question), add_special_tokens=False)["input_ids"]
            ids = torch.tensor([prompt + tokens], device=device)
            logits = model(input_ids=ids).logits[0, len(prompt) - 1:len(prompt) - 1 + len(tokens)].float()
            logits[:, cpu_long["held_off"]] = float("-inf")
            total += len(tokens)
            for j, (got, want, m) in enumerate(zip(logits.argmax(-1).tolist(), likeliest, margins)):
                if got != want:
                    rows.append({"question": i, "position": j, "device": tokenizer.decode([got]),
                                 "cpu": tokenizer.decode([want]), "cpu_margin": m, "near_tie": m < tolerance})
    picks = [t for q in cpu_long["likeliest"] for t in q]
    return {"questions": total, "agree": total - len(rows), "near_ties": [r for r in rows if r["near_tie"]],
            "disagree": [r for r in rows if not r["near_tie"]], "tokens_per_question_max": LONG_TOKENS,
            "end_of_turn_picks": sum(t in stops for t in picks), "distinct_picks": len(set(picks))}


# ---------------------------------------------------------------- the two inference processes
# Both sides of the letters run in fresh interpreters, as the exported agents do on the day: nothing the training
# process imported reaches them (once Unsloth loads a model it swaps transformers' Qwen2 and Llama forward passes for
# its own in the whole process: unsloth/models/qwen2.py, pre_patch). The CPU side has every GPU hidden and runs fp32 on
# transformers + PEFT; the device side runs the box's dtype on the profile's inference path (transformers + PEFT
# unless model.unsloth_inference). On a GPU they score side by side (on a CPU one after the other: Check.run_sides);
# the device side then waits on its stdin for the CPU side to end, reads its DoRA tokens teacher-forced, and times the
# reasoner with the cores free.
SIDE_CODE = ("import sys; from helpers.gpu_check.checks import side_main; "
             "sys.exit(side_main(sys.argv[1], sys.argv[2]))")


def side_main(spec_path: str, out_path: str) -> int:
    """One side of the letters, in its own process: read the spec gpu-check wrote, score, write the result."""
    spec = io.read_json(spec_path)
    cfg = config.profile_from_dict(spec["profile"], spec_path)
    cpu = spec["side"] == "cpu"
    if cpu:
        cfg = reference_profile(cfg)
    model, tokenizer, info = load_scored(cfg, cpu_recommendation(cfg.model) if cpu else spec["recommendation"],
                                         spec["adapters"])
    if cpu and spec.get("threads"):  # at most this many, over what the loader chose (1 for the tiny model)
        import torch
        torch.set_num_threads(min(torch.get_num_threads(), spec["threads"]))
    adapters, questions = list(spec["adapters"]), spec["questions"]
    result: dict[str, Any] = {"device": info["device"], "dtype": info["torch_dtype"], "backend": info["backend"],
                              "members": score_loaded(cfg, model, tokenizer, ["base", *adapters], questions)}
    dora = dora_member(cfg, adapters)
    if cpu:  # the letters stand whatever the longer generation or the reasoner does
        result["long"] = guarded(lambda: long_generation(model, tokenizer, dora, questions[:LONG_QUESTIONS])
                                 ) if dora else None
    else:  # the rest once the CPU side has ended: its tokens to read, and the reasoner timed with the cores free
        cpu_path = sys.stdin.readline().strip()  # "" when the CPU side did not run or failed
        cpu_long = io.read_json(cpu_path).get("long") if cpu_path else None
        if cpu_long and not cpu_long.get("error"):
            tol = LOGIT_NEAR_TIE.get(info["torch_dtype"], LOGIT_NEAR_TIE["bfloat16"])
            result["long"] = guarded(lambda: compare_long(model, tokenizer, cpu_long, questions, tol))
        result["reasoner"] = guarded(lambda: reasoner_answers(cfg, model, tokenizer, adapters[0]))
        result["unsloth_imported"] = "unsloth" in sys.modules
    io.write_json(out_path, result)
    return 0


def guarded(work: Any) -> Any:
    """work(), or {"error": its one line} (each part of a side is reported by its own step)."""
    try:
        return work()
    except Exception as exc:  # noqa: BLE001
        return {"error": one_line(f"{type(exc).__name__}: {exc}")}


def start_side(side: str, cfg: config.Profile, adapter_dirs: dict[str, str], questions: list[dict], lay: RunLayout,
               recommendation: dict | None = None, threads: int | None = None) -> subprocess.Popen:
    """side_main for "cpu" (every GPU hidden; `threads` torch threads) or "device" in a fresh interpreter, its output
    in <side>-side.log."""
    spec, out = lay.gpu_check_side(side, "spec"), lay.gpu_check_side(side, "result")
    io.write_json(spec, {"side": side, "profile": cfg.as_dict(), "adapters": adapter_dirs, "questions": questions,
                         "recommendation": recommendation, "threads": threads})
    out.unlink(missing_ok=True)
    root = str(config.project_root())
    environ = {**os.environ, **(HIDDEN_DEVICES if side == "cpu" else {}),
               "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    with open(lay.gpu_check_side(side, "log"), "w", encoding="utf-8") as log:
        return subprocess.Popen([sys.executable, "-c", SIDE_CODE, str(spec), str(out)], cwd=root, env=environ,
                                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, text=True)


def finish_side(proc: subprocess.Popen, side: str, lay: RunLayout, tell: str = "") -> dict:
    """Wait for a side (telling it `tell` on its stdin); its result, or a one-line error naming its log."""
    try:
        proc.communicate(tell + "\n", timeout=SIDE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
    out, log = lay.gpu_check_side(side, "result"), lay.gpu_check_side(side, "log")
    if proc.returncode != 0 or not out.is_file():
        lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
        raise RuntimeError(f"the {side} side's process failed (exit {proc.returncode}, {log.name}): "
                           f"{one_line(lines[-1] if lines else 'no output')}")
    return io.read_json(out)


def margin(probs: list[float]) -> float:
    """The gap between the two most likely letters."""
    top = sorted(probs, reverse=True)
    return top[0] - top[1] if len(top) > 1 else 1.0


def argmax_letter(probs: list[float]) -> str:
    """The most likely letter (the first on a tie, as helpers.evaluate.rows does)."""
    return letter(max(range(len(probs)), key=lambda j: (probs[j], -j)))


def compare_scores(device: dict, cpu: dict, tolerance: float) -> dict:
    """Per member: the device's letters against the CPU's, the near ties (margin under `tolerance`) and the real
    disagreements, and the largest probability moved."""
    out = {}
    for member, dev_side in device.items():
        rows = []
        for i, (p_dev, p_cpu) in enumerate(zip(dev_side["probs"], cpu[member]["probs"])):
            a, b = argmax_letter(p_dev), argmax_letter(p_cpu)
            if a != b:
                rows.append({"question": i, "device": a, "cpu": b, "cpu_margin": round(margin(p_cpu), 5),
                             "device_margin": round(margin(p_dev), 5), "near_tie": margin(p_cpu) < tolerance})
        n = len(dev_side["probs"])
        shift = max((abs(x - y) for p, q in zip(dev_side["probs"], cpu[member]["probs"]) for x, y in zip(p, q)),
                    default=0.0)
        out[member] = {"questions": n, "agree": n - len(rows), "near_ties": [r for r in rows if r["near_tie"]],
                       "disagree": [r for r in rows if not r["near_tie"]], "max_prob_shift": round(shift, 5),
                       "questions_per_s_device": dev_side["questions_per_s"],
                       "questions_per_s_cpu": cpu[member]["questions_per_s"]}
    return out


def compare_generated(device: dict, cpu: dict, tolerance: float) -> dict:
    """Per adapter: the letter each side's generation gave (None: no letter in its first tokens), where they differ,
    and whether the CPU's letter scoring called that question a near tie."""
    out = {}
    for member, dev_side in device.items():
        if "generated" not in dev_side:
            continue
        cpu_side, rows = cpu[member], []
        for i, (a, b) in enumerate(zip(dev_side["generated"], cpu_side["generated"])):
            if a != b:
                m = margin(cpu_side["probs"][i])
                rows.append({"question": i, "device": a, "cpu": b, "device_text": dev_side["texts"][i],
                             "cpu_text": cpu_side["texts"][i], "cpu_margin": round(m, 5), "near_tie": m < tolerance})
        n = len(dev_side["generated"])
        out[member] = {"questions": n, "agree": n - len(rows), "near_ties": [r for r in rows if r["near_tie"]],
                       "disagree": [r for r in rows if not r["near_tie"]],
                       "parsed_device": sum(g is not None for g in dev_side["generated"]),
                       "parsed_cpu": sum(g is not None for g in cpu_side["generated"])}
    return out


def verdict(compared: dict, what: str, tolerance: float) -> tuple[str, list[str]]:
    """(one line, the members with real disagreements) for a comparison."""
    n = sum(c["questions"] for c in compared.values())
    agree = sum(c["agree"] for c in compared.values())
    ties = sum(len(c["near_ties"]) for c in compared.values())
    bad = [m for m, c in compared.items() if c["disagree"]]
    line = (f"{what}: {agree} of {n} the same on the device and the CPU over {len(compared)} members"
            + (f", {ties} near ties (CPU margin < {tolerance})" if ties else ""))
    if bad:
        line += "; different beyond a near tie: " + ", ".join(f"{m} ({len(compared[m]['disagree'])})" for m in bad)
    return line, bad


def shift_warnings(compared: dict) -> list[str]:
    """A line for each member whose letter probabilities moved more than rounding explains."""
    return [f"{m}: a letter's probability moved {c['max_prob_shift']} between the device and the CPU (more than "
            f"{ROUNDING_SHIFT}: look for an adapter or a setting not applied on one side)"
            for m, c in compared.items() if c["max_prob_shift"] > ROUNDING_SHIFT]


# ---------------------------------------------------------------- agents
REASONER_QUESTIONS = 4  # held-out puzzles answered in one harness batch
GRPO_NEEDS = ("trl", "datasets")


def reasoner_answers(cfg: config.Profile, model: Any, tokenizer: Any, member: str) -> dict:
    """Held-out puzzles answered by `member` in answer mode "reason" (build.answer_agent), measured as notebook 09
    measures it; fails when an answer misses the filter, falls back, or is over the answer limit."""
    from helpers.agents import build
    from helpers.agents.stages import reasoner_measure
    agents = dataclasses.replace(cfg.agents, model_question_share=0.0)
    questions = reasoner_measure.held_out(REASONER_QUESTIONS, seed=cfg.seed, kinds=build.asked_kinds(cfg),
                                          levels=cfg.reasoner.levels)
    agent = build.answer_agent(model, tokenizer, {"members": [member], "reasoner": member}, agents, mode="reason")
    report = reasoner_measure.measure(agent, questions)
    lat, fallbacks = report["latency"], sum(report["fallbacks"].values())
    problems = ([f"{report['filter_failed']} answers failed the answer filter"] if report["filter_failed"] else []) + \
        ([f"{fallbacks} answers fell back ({report['fallbacks']})"] if fallbacks else []) + \
        ([f"{lat['over_limit']} answers over the {lat['limit_s']} s limit"] if lat["over_limit"] else [])
    if problems:
        raise RuntimeError(f"reasoner ({member}): " + "; ".join(problems))
    return {"member": member, "questions": len(questions), "accuracy": report["accuracy"], "stops": report["stops"],
            "tokens_mean": report["tokens_mean"], "latency": lat, "examples": report["examples"],
            "summary": f"{len(questions)} puzzles reasoned then answered by {member}: every answer through the "
                       f"filter, p99 {lat['p99_s']} s of the {lat['limit_s']} s limit, {report['tokens_mean']} "
                       f"tokens of reasoning on average, stops {report['stops']}"}


def grpo_steps(cfg: config.Profile, recommendation: dict) -> dict:
    """Two GRPO steps (the overlay's rl sizes) through reasoner_rl.train; skipped with the reason when trl or datasets
    is missing or the installed trl cannot run GRPO here (reasoner_rl.grpo_blocker)."""
    gone = missing(*GRPO_NEEDS)
    if gone:
        raise Skip(f"{gone}: GRPO needs trl and datasets (README, \"Is this box ready?\": carry their wheels)")
    from helpers.agents.stages import reasoner_rl
    blocker = reasoner_rl.grpo_blocker(cfg, recommendation)
    if blocker:
        raise Skip(blocker)
    report = reasoner_rl.train(cfg, recommendation=recommendation, resume=False, quiet=True)
    losses = [r["loss"] for r in report["per_step"] if r.get("loss") is not None]
    if report["steps"] != cfg.rl.steps:
        raise RuntimeError(f"GRPO ran {report['steps']} steps, not {cfg.rl.steps}")
    if not finite(losses):
        raise FloatingPointError(f"GRPO loss not finite: {losses}")
    return {"steps": report["steps"], "trl": report["trl"], "backend": report["backend"],
            "seconds_per_step": report["seconds_per_step"], "rewards": report["rewards"],
            "kl_reference": report["kl_reference"], "losses": losses, "zero_reasons": report["zero_reasons"],
            "start": report["start"], "plot": report["plot"],
            "summary": f"{report['steps']} GRPO steps on trl {report['trl']} ({report['backend']}): "
                       f"{report['seconds_per_step']} s a step, loss {losses}, last rewards "
                       f"{(report['rewards'] or {}).get('last')}"}
