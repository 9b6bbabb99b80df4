"""Letter scoring and the generate check on the device against the CPU, for the same saved adapters.

Both sides load the base once with every adapter attached (notebook 06's path: helpers.models.members), letter-score
each member (helpers.evaluate.score_member) and generate a few tokens per question for each adapter
(helpers.scoring.generate_letters). The CPU side runs in a fresh interpreter with every GPU hidden and nothing of the
device side imported (no Unsloth patches), in fp32 on transformers + PEFT: the reference a team's CPU would give.

A letter may differ only where the CPU's top two letters are nearer than what the device's number format can move
them (NEAR_TIE); every such near tie is recorded with its margin, every other difference fails the step.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import config, env, io
from helpers.gpu_check.steps import one_line
from helpers.records import letter
from helpers.rehearse import HIDDEN_DEVICES

GENERATE_TOKENS = 4  # a trained adapter answers with the letter, then ends its turn: 4 tokens hold that form
REFERENCE_TIMEOUT_S = 600
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


def reference_main(spec_path: str, out_path: str) -> int:
    """The CPU side, in its own process: read the spec gpu-check wrote, score, write the result."""
    spec = io.read_json(spec_path)
    cfg = reference_profile(config.profile_from_dict(spec["profile"], spec_path))
    model, tokenizer, info = load_scored(cfg, cpu_recommendation(cfg.model), spec["adapters"])
    members = ["base", *spec["adapters"]]
    io.write_json(out_path, {"device": info["device"], "dtype": info["torch_dtype"], "backend": info["backend"],
                             "members": score_loaded(cfg, model, tokenizer, members, spec["questions"])})
    return 0


def cpu_reference(cfg: config.Profile, adapter_dirs: dict[str, str], questions: list[dict], spec: Path,
                  out: Path) -> dict:
    """Run reference_main in a fresh interpreter with every GPU hidden (what to score in `spec`, its result to `out`);
    the result, or a one-line error."""
    io.write_json(spec, {"profile": cfg.as_dict(), "adapters": adapter_dirs, "questions": questions})
    out.unlink(missing_ok=True)
    root = str(config.project_root())
    environ = {**os.environ, **HIDDEN_DEVICES,
               "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    code = ("import sys; from helpers.gpu_check.letters import reference_main; "
            "sys.exit(reference_main(sys.argv[1], sys.argv[2]))")
    done = subprocess.run([sys.executable, "-c", code, str(spec), str(out)], cwd=root, env=environ,
                          capture_output=True, text=True, timeout=REFERENCE_TIMEOUT_S)
    if done.returncode != 0 or not out.is_file():
        last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or [f"exit {done.returncode}"]
        raise RuntimeError(f"the CPU reference process failed: {one_line(last[0])}")
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
