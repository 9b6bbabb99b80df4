"""What the gpu-check runs on and what it trains and asks.

The device gpu-check runs on: the GPU torch sees (ROCm shows up as cuda), or the CPU when asked; its name, driver,
memory and bf16 support; and the one line (exit 2) when there is no GPU to check.

torch is imported inside the functions: `--device cpu` hides every GPU (hide_accelerators) before the first import.
CUDA starts in this process only after the env step has set the recommended variables (PYTORCH_CUDA_ALLOC_CONF and
PYTORCH_HIP_ALLOC_CONF are read once, when it starts), as in the kit's own notebooks: choose() asks torch only whether
a GPU is there, the env check's probe runs in a child process (collect_facts_apart), describe() comes after.

What the gpu-check trains and asks: the profile with configs/overlays/gpu-check.yaml over it, the model (the tiny
model built locally, or a local folder checked before anything loads it), and the questions: a curriculum of the
bundled data sized for --steps optimizer steps, and held-out questions to score on the device and on the CPU.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

from helpers import config, io, rehearse
from helpers.env import rules
from helpers.layout import RunLayout
from helpers.records import validate
from helpers.rehearse import HIDDEN_DEVICES


# ---------------------------------------------------------------- device
GIB = 1024 ** 3
SMI_TIMEOUT_S = 10
FACTS_TIMEOUT_S = 600  # the probe imports Unsloth and bitsandbytes in children of its own (180 s each at most)
CPU_HINT = "`make gpu-check DEVICE=cpu` runs the whole check on the CPU"


class NoDevice(Exception):
    """No GPU to check (or --device cpu after torch already saw one): one line, exit 2, nothing written."""


def hide_accelerators() -> dict:
    """Hide every GPU from this process (before torch is imported) and from the processes it starts."""
    os.environ.update(HIDDEN_DEVICES)
    return dict(HIDDEN_DEVICES)


def no_gpu_line(torch: Any) -> str:
    """The one line for a torch that sees no GPU: the env check's gpu_build_no_device wording for a GPU build of torch
    (its devices not passed in), else a CPU build."""
    hip, cuda = getattr(torch.version, "hip", None), getattr(torch.version, "cuda", None)
    if hip or cuda:
        facts = {"backend": "cpu", "torch": {"version": torch.__version__, "hip": hip, "cuda": cuda},
                 "env": {var: os.environ.get(var) for var in HIDDEN_DEVICES}}
        rule = next(r for r in rules.RULES if r.id == "gpu_build_no_device")
        return f"gpu-check: {rule.message(facts, {})} Fix: {rule.fix} ({CPU_HINT})"
    return f"gpu-check: no GPU here: torch {torch.__version__} is a CPU build ({CPU_HINT})"


def choose(requested: str) -> dict:
    """The device to check ({"kind"}, the CPU described; a GPU's name and memory come from describe(), once CUDA may
    start); raises NoDevice (its one line) when `requested` is auto and torch sees no GPU, or is cpu but torch already
    sees one in this process (hide_accelerators came too late)."""
    import torch
    if requested not in ("auto", "cpu"):
        raise ValueError(f"--device: {requested!r} is not auto or cpu")
    if requested == "cpu":
        if torch.cuda.is_available():
            raise NoDevice("gpu-check: --device cpu, but torch already sees the GPU in this process: set "
                           "CUDA_VISIBLE_DEVICES= and HIP_VISIBLE_DEVICES= before it starts")
        return cpu_facts(torch)
    if not torch.cuda.is_available():  # asks the driver how many devices there are: CUDA itself does not start
        raise NoDevice(no_gpu_line(torch))
    return {"kind": "rocm" if getattr(torch.version, "hip", None) else "cuda", "name": "a GPU (not described yet)"}


def describe(device: dict) -> dict:
    """The device with its name, memory, driver and bf16 filled in (a GPU's: this starts CUDA here)."""
    if device["kind"] == "cpu":
        return device
    import torch
    return {**device, **gpu_facts(torch)}


def collect_facts_apart(path: Path) -> dict:
    """helpers.env.collect_facts in a child interpreter (written to `path`, returned): its GPU probe starts CUDA there,
    not here, as notebook 00's kernel does for the notebooks after it. `import unsloth` is not tried there: the check
    imports it once, in its own process (Check.import_unsloth_here)."""
    path.unlink(missing_ok=True)
    root = str(config.project_root())
    code = ("import json, sys; from helpers import env; from helpers.io import write_json; "
            "write_json(sys.argv[1], env.collect_facts(sys.argv[2], hf_budget_s=2.0, import_unsloth=False))")
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", code, str(path), str(path.parent)], cwd=root, env=environ,
                          capture_output=True, text=True, timeout=FACTS_TIMEOUT_S)
    if done.returncode != 0 or not path.is_file():
        last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or [f"exit {done.returncode}"]
        raise RuntimeError(f"the env check's probe failed in its process: {last[0]}")
    return json.loads(path.read_text(encoding="utf-8"))


def cpu_facts(torch: Any) -> dict:
    """The CPU as the device: its model name, usable cores, RAM."""
    import psutil
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"kind": "cpu", "name": cpu_name(), "count": 0, "cores": cores, "driver": None,
            "runtime": f"torch {torch.__version__} (CPU)", "bf16": False,
            "memory_total_gib": round(psutil.virtual_memory().total / GIB, 2)}


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else what platform says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            match = re.search(r"^model name\s*:\s*(.+)$", fh.read(), re.M)
        if match:
            return match.group(1).strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def gpu_facts(torch: Any) -> dict:
    """GPU 0: name, architecture, memory, bf16, the runtime torch was built for and the driver."""
    kind = "rocm" if getattr(torch.version, "hip", None) else "cuda"
    props = torch.cuda.get_device_properties(0)
    free, total = torch.cuda.mem_get_info(0)
    out = {"kind": kind, "name": torch.cuda.get_device_name(0), "count": torch.cuda.device_count(),
           "arch": getattr(props, "gcnArchName", None) or f"sm_{props.major}{props.minor}",
           "runtime": f"ROCm {torch.version.hip}" if kind == "rocm" else f"CUDA {torch.version.cuda}",
           "driver": driver_version(kind, torch), "bf16": bool(torch.cuda.is_bf16_supported()),
           "memory_total_gib": round(total / GIB, 2), "memory_free_gib_at_start": round(free / GIB, 2)}
    return out


def driver_version(kind: str, torch: Any = None) -> str:
    """The GPU driver's version: nvidia-smi / rocm-smi when present, else CUDA's driver API through torch."""
    cmd = (["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"] if kind == "cuda"
           else ["rocm-smi", "--showdriverversion"])
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=SMI_TIMEOUT_S)
        text = done.stdout.strip()
        if done.returncode == 0 and text:
            match = re.search(r"[Dd]river version:?\s*(\S+)", text)
            return match.group(1) if match else text.splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    get = getattr(getattr(torch, "_C", None), "_cuda_getDriverVersion", None) if kind == "cuda" else None
    if get is not None:
        try:
            v = int(get())  # 13000 -> 13.0: the newest CUDA this driver runs, not its release number
            return f"supports CUDA {v // 1000}.{(v % 1000) // 10} ({cmd[0]} not found)"
        except Exception:
            pass
    return f"unknown ({cmd[0]} not found)"


def free_memory(device: dict) -> tuple[int, int]:
    """(free, total) bytes now: the GPU's (torch.cuda.mem_get_info), or on the CPU the RAM psutil calls available."""
    if device["kind"] == "cpu":
        import psutil
        mem = psutil.virtual_memory()
        return int(mem.available), int(mem.total)
    import torch
    free, total = torch.cuda.mem_get_info(0)
    return int(free), int(total)


def reset_peak() -> None:
    """Start a new peak for torch.cuda.max_memory_allocated / reserved (a GPU only; the CPU's RSS peak cannot be)."""
    import torch
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def peak_memory(device: dict) -> dict:
    """The peak since reset_peak(): allocated and reserved VRAM (GiB) on a GPU; on the CPU the process's peak RSS so
    far (it cannot be reset, so a later method's includes the earlier ones')."""
    from helpers.train.telemetry import peak_rss_gib
    if device["kind"] == "cpu":
        return {"kind": "cpu-rss", "gib": peak_rss_gib()}
    import torch
    torch.cuda.synchronize()
    return {"kind": "vram", "gib": round(torch.cuda.max_memory_allocated() / GIB, 3),
            "reserved_gib": round(torch.cuda.max_memory_reserved() / GIB, 3)}


# ---------------------------------------------------------------- inputs
OVERLAY = config.CONFIG_DIR / "overlays" / "gpu-check.yaml"
QUESTIONS_FILE = "data/general_mcq.jsonl"  # the bundled questions (1,437): the curriculum and the held-out set
HELD_OUT = 24  # questions scored on the device and on the CPU (and generated for): 4 members x 24 in seconds
MIN_STEPS, MAX_STEPS = 2, 500


def model_problem(path: str | os.PathLike) -> str | None:
    """Why `path` is not a model folder the check can load, in one line naming it and what is missing; None if it is.
    The check runs offline, so a hub id (not a folder here) is refused too."""
    p = Path(os.path.expanduser(str(path)))
    if not p.exists():
        return f"{p}: no such folder (gpu-check runs offline: give a local model folder, not a hub id)"
    if not p.is_dir():
        return f"{p}: a file, not a model folder (give the folder that holds config.json)"
    if not (p / "config.json").is_file():
        return (f"{p}: no config.json, so not a model folder (a Hugging Face model folder holds config.json, the "
                "tokenizer's files and *.safetensors weights)")
    try:
        model_type = json.loads((p / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError) as exc:
        return f"{p / 'config.json'}: not a JSON object ({str(exc).splitlines()[0]})"
    if not model_type:
        return f"{p / 'config.json'}: no model_type (transformers cannot tell the architecture)"
    if not any(p.glob("*.safetensors")):
        bins = sorted(x.name for x in p.glob("*.bin"))
        return (f"{p}: no *.safetensors weights" + (f" (only {bins[0]}: the kit loads safetensors only, never a "
                                                     "pickle; save the model again with save_pretrained)" if bins else ""))
    if not any((p / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")):
        return f"{p}: no tokenizer (tokenizer.json, tokenizer_config.json or tokenizer.model)"
    return None


def profile_for_check(profile: str, base: str, run: str,
                      overrides: dict | None = None) -> tuple[config.Profile, list[dict]]:
    """(the profile with the overlay's swaps, model.base and the user's overrides (last, recorded apart) laid over it,
    each checked as any override is; the swaps as recorded: key, from, to, why)."""
    swaps = rehearse.swaps(profile, rehearse.load_overlay(OVERLAY), OVERLAY)
    before = config.load_profile(profile).model.base
    if base != before:
        swaps.append({"key": "model.base", "from": before, "to": base,
                      "why": "the model the check trains: the tiny model built locally, or --model (MODEL=)"})
    return config.load_profile(profile, run, {**{s["key"]: s["to"] for s in swaps}, **(overrides or {})}), swaps


@contextlib.contextmanager
def runs_at(out: Path) -> Iterator[str]:
    """The run name under which RunLayout.of(cfg) is `out` (the stages that take a profile, GRPO's, write there):
    out's name, with $KIT_RUNS_DIR pointed at its parent for the duration when it is not under runs/ already (the
    model cache stays where it was)."""
    out = Path(out).resolve()
    if out.parent == config.runs_root().resolve():
        yield out.name
        return
    saved = {k: os.environ.get(k) for k in ("KIT_RUNS_DIR", "KIT_CACHE_DIR")}
    os.environ["KIT_CACHE_DIR"] = str(config.cache_root().resolve())
    os.environ["KIT_RUNS_DIR"] = str(out.parent)
    try:
        yield out.name
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def bundled_questions(seed: int) -> list[dict]:
    """The bundled questions, validated, in a seeded shuffle (the check's own order, the same on every box)."""
    path = config.resolve_path(QUESTIONS_FILE)
    records = [validate(obj, path, f"line {n}") for n, obj in io.iter_jsonl(path)]
    random.Random(f"gpu-check:{seed}").shuffle(records)
    return records


def training_size(cfg: config.Profile, steps: int) -> int:
    """Fresh examples for about `steps` optimizer steps (batch x accumulation each; replay adds a few more)."""
    if not MIN_STEPS <= steps <= MAX_STEPS:
        raise ValueError(f"--steps: {steps} is not in {MIN_STEPS}..{MAX_STEPS}")
    return steps * cfg.train.batch_size * cfg.train.grad_accum


def write_questions(cfg: config.Profile, lay: RunLayout, steps: int) -> tuple[list[dict], dict]:
    """The curriculum (lay.curriculum: the kit's ordering into cfg.curriculum.chunks) and the held-out questions;
    returns (held-out questions, figures)."""
    from helpers.curriculum.order import order_and_chunk
    records, n_train = bundled_questions(cfg.seed), training_size(cfg, steps)
    if n_train + HELD_OUT > len(records):
        raise ValueError(f"--steps {steps}: {n_train} training questions (batch {cfg.train.batch_size} x accumulation "
                         f"{cfg.train.grad_accum} a step) and {HELD_OUT} held out, but {QUESTIONS_FILE} has "
                         f"{len(records)}: lower --steps")
    train = order_and_chunk(records[:n_train], chunks=cfg.curriculum.chunks, scorer=cfg.curriculum.scorer,
                            seed=cfg.seed)
    lay.made(lay.curriculum_dir)
    io.write_jsonl(lay.curriculum, train)
    held = records[n_train:n_train + HELD_OUT]
    return held, {"source": QUESTIONS_FILE, "training_questions": n_train, "held_out": len(held),
                  "chunks": cfg.curriculum.chunks, "curriculum": lay.rel(lay.curriculum)}
