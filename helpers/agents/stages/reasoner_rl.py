"""The reasoner's reinforcement stage: GRPO with verifiable rewards (docs/rl.md).

Fresh solver-proven puzzles (a seed stream of their own: not the supervised chats', not the held-out measure's) under
the reasoning prompt, each with its key letter, written to runs/<run>/agents/ (RunLayout.rl_data); TRL's GRPOTrainer
with PEFT samples `rl.num_generations` replies per puzzle and scores each with the kit's rewards
(helpers.agents.rewards: correct letter, answer filter, token budget). It starts from the supervised reasoner adapter
(config.REASONER) when it is trained, else from a fresh LoRA of the `reasoner:` adapter settings (the report says
which). Checkpoints go under models/reasoner_rl/checkpoints/, pointed at by latest.json only once complete, so a crash
resumes from the last whole one; the final adapter replaces models/reasoner_rl/adapter/ in one rename; the report
(RunLayout.rl_report) holds each reward's mean per logged step, seconds per step and zero rewards by reason.

The stage first makes the profile's backend ready (helpers.models.import_backend: on a GPU with Unsloth, Unsloth is
imported before trl, transformers and peft, as it requires), then loads through helpers.models.load_model; only the
CPU path (transformers + PEFT) runs GRPO in the tests. Works with trl 0.19 (the challenge container) and trl 1.x:
GRPOConfig's arguments are chosen from its installed fields (grpo_config_kwargs).
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from helpers import config, io, puzzles
from helpers.agents import reasoner, rewards
from helpers.agents.reasoner import REASONER_SYSTEM, reasoner_messages
from helpers.agents.stages.reasoner_data import puzzle_cycle
from helpers.config import REASONER, REASONER_RL
from helpers.layout import RunLayout
from helpers.records import LETTERS

# GRPOConfig arguments a run cannot do without: a trl that lacks one is refused, never silently run with its default.
ESSENTIAL = ("num_generations", "max_completion_length", "beta", "learning_rate", "max_steps",
             "per_device_train_batch_size", "temperature")
RESUMABLE_CHANGES = ("steps", "save_steps")  # rl settings a resumed run may change: the steps before are the same
LOGGED = ("loss", "kl", "reward", "reward_std", "completions/mean_length", "completions/clipped_ratio", "step_time")


# ---------------------------------------------------------------- the prompts
def rl_records(n: int, *, seed: int, kinds: Sequence[str], levels: Sequence[int]) -> list[dict]:
    """n fresh solver-proven puzzles as GRPO rows: "prompt" (the reasoning prompt's messages), "key" (the solver's
    letter), "id", "kind", "level"; every family x level in turn, the key letter moving on each round."""
    rng, out = random.Random(f"reasoner-rl:{seed}"), []
    for i, (kind, level, target) in enumerate(puzzle_cycle(n, kinds, levels)):
        rec = puzzles.make_puzzle(kind, level, target, rng, {}, id=f"rl-{seed}-{i:05d}")
        out.append({"id": rec["id"], "prompt": reasoner_messages(rec), "key": LETTERS[rec["answer"]],
                    "kind": kind, "level": level})
    return out


def token_budget(cfg: config.Profile) -> int:
    """The length reward's budget: rl.token_budget, or with "auto" the tokens a deduction can take inside the answer
    budget on the profile's target machine (reasoner.token_budget: agents.decode_ms_per_token), at most the
    generation cap."""
    if cfg.rl.token_budget != "auto":
        return int(cfg.rl.token_budget)
    return min(reasoner.token_budget(cfg.agents), cfg.rl.max_completion_tokens)


def check_settings(rl: config.RLSettings) -> None:
    """The rl section's settings that only make sense together (each key alone is checked when the profile loads)."""
    if rl.prompts <= 0:
        raise ValueError("rl.prompts is 0: this profile runs no reinforcement stage")
    if rl.token_budget != "auto" and rl.token_budget > rl.max_completion_tokens:
        raise ValueError(f"rl.token_budget {rl.token_budget} is over rl.max_completion_tokens "
                         f"{rl.max_completion_tokens}: no reply could ever be penalised for its length")
    if rl.prompts < rl.prompts_per_step:
        raise ValueError(f"rl.prompts {rl.prompts} is under rl.prompts_per_step {rl.prompts_per_step}")


def build_prompts(cfg: config.Profile) -> Path:
    """runs/<run>/agents/reasoner_rl_prompts.jsonl: rl.prompts puzzles over the edition's families (build.asked_kinds)
    x rl.levels (deterministic for the profile's seed, so a rebuild resumes the same run)."""
    from helpers.agents import build  # here: this module imports Unsloth before trl, transformers and peft
    check_settings(cfg.rl)
    path = RunLayout.of(cfg).rl_data
    path.parent.mkdir(parents=True, exist_ok=True)
    io.write_jsonl(path, rl_records(cfg.rl.prompts, seed=cfg.seed, kinds=build.asked_kinds(cfg), levels=cfg.rl.levels))
    return path


# ---------------------------------------------------------------- GRPOConfig, from what the installed trl accepts
def accepted_fields(config_cls: type) -> set[str]:
    """The init fields of a config dataclass (GRPOConfig)."""
    return {f.name for f in dataclasses.fields(config_cls) if f.init}


def grpo_config_kwargs(wanted: dict, accepted: Iterable[str]) -> tuple[dict, list[str]]:
    """GRPOConfig keywords from canonical names (helpers.train.hf's renames: use_cpu/no_cuda, eval_strategy, ...):
    (kwargs, dropped names). A name this trl lacks is dropped (max_prompt_length is gone in trl 1.x), unless it is
    ESSENTIAL: then ValueError."""
    from helpers.train.hf import compat_training_kwargs
    kwargs, dropped = compat_training_kwargs(wanted, accepted)
    missing = [k for k in ESSENTIAL if k in dropped]
    if missing:
        raise ValueError(f"the installed trl's GRPOConfig has no {', '.join(missing)}: the reinforcement stage needs "
                         "trl 0.19 or newer")
    return kwargs, dropped


def wanted_args(cfg: config.Profile, info: dict, stop_ids: list[int], *, quiet: bool) -> dict:
    """The GRPOConfig the profile asks for, by canonical names: one optimizer step per generation batch of
    prompts_per_step x num_generations completions, constant lr, checkpoints every rl.save_steps."""
    import torch
    rl, on_gpu = cfg.rl, torch.cuda.is_available()
    return dict(
        output_dir=str(RunLayout.of(cfg).rl_checkpoints), gradient_accumulation_steps=1,
        per_device_train_batch_size=rl.prompts_per_step * rl.num_generations, num_generations=rl.num_generations,
        max_completion_length=rl.max_completion_tokens, max_prompt_length=cfg.model.max_seq_len, beta=rl.beta,
        learning_rate=rl.lr, lr_scheduler_type="constant", max_steps=rl.steps, temperature=rl.temperature,
        logging_steps=1, save_strategy="steps", save_steps=rl.save_steps,
        save_total_limit=cfg.train.keep_checkpoints or None, report_to="none", seed=cfg.seed, data_seed=cfg.seed,
        # mixed precision only on a GPU with 16-bit weights; trl defaults bf16 on, which a CPU must not get
        bf16=on_gpu and info["dtype"] == "bfloat16", fp16=on_gpu and info["dtype"] == "float16", use_cpu=not on_gpu,
        # as load_model set it up (the Trainer turns it off when told False). Non-reentrant on transformers + PEFT;
        # unsloth 2026.10.9's GRPOConfig sets use_reentrant=True whenever checkpointing is on (its compiled paths need
        # the reentrant one), so there it is reentrant: the report's gradient_checkpointing says what applied
        gradient_checkpointing=bool(info["gradient_checkpointing"]),
        gradient_checkpointing_kwargs={"use_reentrant": False}, max_grad_norm=cfg.train.max_grad_norm, weight_decay=0.0,
        # the reply ends where the reasoner's does: the template's end of turn (trl 0.19 stops at EOS only)
        generation_kwargs={"eos_token_id": stop_ids}, disable_tqdm=quiet, dataloader_num_workers=0,
        remove_unused_columns=False, log_level="warning", log_completions=False)


# ---------------------------------------------------------------- will it fit
# A reasoning prompt's length for the memory estimate: the longest puzzle prompt is ~260 SmolLM2 tokens
# (configs/cpu.yaml), so 320 bounds it (trl 0.19 would truncate at model.max_seq_len, far above).
PROMPT_TOKENS = 320


def memory_estimate(cfg: config.Profile, *, dtype: str, grad_checkpointing: bool, backend: str) -> dict:
    """One GRPO step's estimated peak device memory for the profile's base (helpers.env.memory.rl_estimate: the
    larger of generating and training); ValueError saying why for a base the estimator does not know (the tiny
    model, a hub id outside its table)."""
    from helpers.env import memory
    rl, adapter = cfg.rl, cfg.reasoner.adapter
    return memory.rl_estimate(cfg.model.base, completions=rl.prompts_per_step * rl.num_generations,
                              prompt_len=PROMPT_TOKENS, completion_len=rl.max_completion_tokens, beta=rl.beta,
                              method=adapter.method, rank=adapter.r, dtype=dtype, backend=backend,
                              grad_checkpointing=grad_checkpointing)


# ---------------------------------------------------------------- the policy
def set_seed(seed: int) -> None:
    """transformers.set_seed, imported when called: after load_model has imported the backend (Unsloth first)."""
    from transformers import set_seed as seed_everything
    seed_everything(seed)


def load_policy(cfg: config.Profile, recommendation: dict | None) -> tuple[Any, Any, dict, dict]:
    """(peft model, tokenizer, load info, where it started): the supervised reasoner adapter, trainable, when it is
    trained; else a fresh adapter of the reasoner's settings."""

    from helpers.models import add_adapter, load_adapter, load_model, missing_adapter_files
    model, tokenizer, info = load_model(cfg.model.weights, model=cfg.model, recommendation=recommendation,
                                        for_training=True, train=cfg.train)
    set_seed(cfg.seed)
    lay = RunLayout.of(cfg)
    supervised = lay.adapter_dir(REASONER)
    missing = missing_adapter_files(supervised)
    if not missing:
        model = load_adapter(model, supervised, is_trainable=True)
        start = {"from": "supervised", "adapter": lay.rel(supervised)}
    else:
        model = add_adapter(model, cfg.reasoner.adapter, cfg.train.target_modules, backend=info["backend"],
                            seed=cfg.seed, gradient_checkpointing=info["gradient_checkpointing"])
        start = {"from": "fresh", "why": f"no supervised reasoner ({lay.rel(missing[0])} missing): a fresh "
                                         f"{cfg.reasoner.adapter.method} r={cfg.reasoner.adapter.r} adapter"}
    tokenizer.padding_side = "left"  # generation pads on the left
    return model, tokenizer, info, start


# ---------------------------------------------------------------- checkpoints and resume
def fingerprint_of(cfg: config.Profile, prompts: Path, start: dict) -> dict:
    """What a checkpoint must share with this run to be resumed: the rl settings (but steps and save_steps: a run may
    be resumed for more steps) and the token budget they give, the model settings (base, dtype, 4-bit, ...), the
    seed, the prompts and the starting adapter (its weights' hash)."""
    from helpers.models.adapters import adapter_sha256
    lay = RunLayout.of(cfg)
    start_sha = adapter_sha256(lay.adapter_dir(REASONER)) if start["from"] == "supervised" else "fresh"
    rl = {f"rl.{k}": v for k, v in config.as_dict(cfg.rl).items() if k not in RESUMABLE_CHANGES}
    # stand_in only where set: a checkpoint from before the key existed still resumes
    model = {k: v for k, v in config.as_dict(cfg.model).items() if k != "stand_in" or v is not None}
    return {**rl, "token_budget": token_budget(cfg), "model": model, "seed": cfg.seed,
            "start": start_sha, "adapter": config.as_dict(cfg.reasoner.adapter),
            "target_modules": list(cfg.train.target_modules),
            "prompts_sha256": io.file_sha256(prompts)}


def find_resume(out_dir: Path, fingerprint: dict, resume: bool) -> tuple[Path, dict] | None:
    """(checkpoint dir, latest.json) to resume from, or None (resume=False clears the folder's outputs first; so does
    a checkpoint that started from another supervised reasoner, one retrained since). A checkpoint of other settings
    is refused, naming them."""
    from helpers import layout
    from helpers.train import checkpoints as ckpt
    if not resume:
        ckpt.clear_outputs(out_dir)
        return None
    found = ckpt.latest_checkpoint(out_dir)  # None, or a complete checkpoint (a missing file is an InputError)
    if found is None:
        return None
    latest = io.read_json(out_dir / ckpt.LATEST)
    diff = ckpt.fingerprint_diff(latest.get("fingerprint", {}), ckpt.to_jsonable(fingerprint))
    if diff == ["start"]:  # the supervised reasoner was trained again: GRPO starts over from the new one
        print(f"[rl] {found[0]} started from another supervised reasoner: starting over from the current one")
        ckpt.clear_outputs(out_dir)
        return None
    if diff:
        raise ValueError(f"{found[0]} was trained with different settings ({', '.join(diff)}): run with RESUME = "
                         "False in notebook 08 (make pipeline FRESH=1, or --no-resume) to start over, or restore them")
    ckpt.truncate_lines(out_dir / layout.METRICS, int(latest["metrics_lines"]))
    return found[0], latest


def step_logger(out_dir: Path, book: rewards.RewardBook, fingerprint: dict, live: Any = None) -> Any:
    """A TrainerCallback: each logged step's rewards and losses appended to models/reasoner_rl/metrics.jsonl with its
    seconds (and the curves redrawn by `live`, a telemetry.LivePlot, in a notebook); after each checkpoint is whole,
    latest.json pointed at it (with the fingerprint and the reward counts)."""
    from transformers import TrainerCallback

    from helpers import layout
    from helpers.train import checkpoints as ckpt

    class StepLog(TrainerCallback):
        def __init__(self) -> None:
            self.metrics, self.seconds, self.t = out_dir / layout.METRICS, [], None
            self.rows = io.read_jsonl(self.metrics) if self.metrics.exists() else []  # a resumed run's steps before

        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.t is not None:
                self.seconds.append(time.perf_counter() - self.t)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kw: Any) -> None:
            if not logs or "train_runtime" in logs:  # the run's closing summary is no step
                return
            row = {"step": state.global_step, "seconds": round(self.seconds[-1], 3) if self.seconds else None}
            row.update({k: round(float(v), 5) for k, v in logs.items()
                        if v is not None and (k in LOGGED or k.startswith("rewards/"))})
            with open(self.metrics, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
            self.rows.append(row)
            if live is not None:
                live.update(self.rows)

        def on_save(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            path = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            io.write_json(out_dir / ckpt.LATEST, {
                "step": state.global_step, "path": path.relative_to(out_dir).as_posix(),
                "saved": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "fingerprint": ckpt.to_jsonable(fingerprint),
                "metrics_lines": len(self.rows), "rewards": book.state()})

    return StepLog()


# ---------------------------------------------------------------- the run
def save_adapter(model: Any, out_dir: Path) -> Path:
    """The trained adapter ("default": not trl's frozen "ref" copy) under <out_dir>/adapter, replaced in one rename."""
    import os
    import shutil

    from helpers import layout
    from helpers.train import checkpoints as ckpt
    tmp = out_dir / f".adapter.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp), selected_adapters=["default"])
    return ckpt.replace_dir(tmp, out_dir / layout.ADAPTER)


def reward_curve(rows: list[dict]) -> dict:
    """Each reward's mean at the first and the last logged step, and per step (the curve)."""
    names = [f"rewards/{n}/mean" for n in rewards.REWARDS]
    curve = {n.split("/")[1]: [r.get(n) for r in rows] for n in names}
    return {"first": {k: v[0] for k, v in curve.items() if v}, "last": {k: v[-1] for k, v in curve.items() if v},
            "per_step": curve}


def plot_steps(rows: list[dict], path: Path, title: str = "") -> Path | None:
    """The run's curves as a PNG (steps_figure), or None before any step."""
    if not rows:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    steps_figure(rows, title).savefig(path, dpi=100)
    return path


def steps_figure(rows: list[dict], title: str = "") -> Any:
    """The run's curves (no pyplot: headless-safe): each reward's mean, the loss and KL, seconds per step; drawn live
    in a notebook as the steps come (telemetry.LivePlot) and saved at the end (plot_steps)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(13, 3.6), layout="constrained")
    ax_r, ax_l, ax_s = fig.subplots(1, 3)
    x = [r["step"] for r in rows]
    for name in rewards.REWARDS:
        ax_r.plot(x, [r.get(f"rewards/{name}/mean") for r in rows], marker=".", label=name)
    ax_r.set(title="reward means (group of completions)", xlabel="step", ylabel="reward")
    ax_r.legend(fontsize="small")
    for key in ("loss", "kl"):
        ax_l.plot(x, [r.get(key) for r in rows], marker=".", label=key)
    ax_l.set(title="GRPO loss and KL", xlabel="step")
    ax_l.legend(fontsize="small")
    ax_s.plot(x, [r.get("seconds") for r in rows], marker=".", color="#2ca02c")
    ax_s.set(title="seconds per step (generation included)", xlabel="step", ylabel="s")
    if title:
        fig.suptitle(title)
    return fig


KL_STARTING_ADAPTER, KL_BASE_MODEL = "the starting adapter", "the base model (adapters off)"


def kl_reference(model: Any, beta: float, backend: str) -> str:
    """What the KL term holds the policy to, read off the trained PEFT model: trl's reference pass runs the adapter
    "ref" when the model has one, else the model with its adapters disabled. trl 1.x on transformers + PEFT copies
    the starting adapter as "ref"; trl 0.19 makes no copy, and Unsloth (2026.10.9, trl >= 1.4) deletes trl's
    copying code, so both hold the policy to the base model, not to the supervised reasoner it started from."""
    if beta == 0:
        return "none (beta 0)"
    if "ref" in (getattr(model, "peft_config", None) or {}):
        return f"{KL_STARTING_ADAPTER} (trl's frozen copy, \"ref\")"
    why = ("Unsloth removes trl's copy of the starting adapter" if backend == "unsloth"
           else f"trl {io.package_version('trl')} keeps no copy of the starting adapter")
    return f"{KL_BASE_MODEL}: {why}"


def checkpointing_applied(args: Any) -> dict:
    """The gradient checkpointing the GRPOConfig really holds once built: Unsloth's GRPOConfig (2026.10.9) turns the
    kit's use_reentrant=False into True whenever checkpointing is on; transformers + PEFT keeps False."""
    kwargs = dict(getattr(args, "gradient_checkpointing_kwargs", None) or {})
    on = bool(getattr(args, "gradient_checkpointing", False))
    return {"enabled": on, "use_reentrant": kwargs.get("use_reentrant") if on else None}


def trained_model(trainer: Any) -> Any:
    """The trainer's model without accelerate's wrappers (DDP), where the PEFT adapters live."""
    accelerator = getattr(trainer, "accelerator", None)
    return accelerator.unwrap_model(trainer.model) if accelerator is not None else trainer.model


def run_report(cfg: config.Profile, *, start: dict, info: dict, book: rewards.RewardBook, trainer: Any,
               dropped: list[str], resumed: dict | None, t0: float) -> dict:
    """agents/reasoner_rl.json: where it started, the rewards per logged step (first, last, curve), seconds per step,
    zero rewards by reason, the letters read against the keys, and the versions and settings that made it."""
    lay = RunLayout.of(cfg)
    rows = io.read_jsonl(lay.metrics(REASONER_RL))
    plot = plot_steps(rows, lay.training_plot(REASONER_RL), title=f"{REASONER_RL} (GRPO, {cfg.run})")
    seconds = [r["seconds"] for r in rows if r.get("seconds") is not None]
    params = {"rl": config.as_dict(cfg.rl), "reasoner_adapter": config.as_dict(cfg.reasoner.adapter),
              "base": cfg.model.base, "seed": cfg.seed, "profile": cfg.profile, "run": cfg.run}
    return {**io.stamp(params), "start": start, "backend": info["backend"], "trl": io.package_version("trl"),
            "steps": trainer.state.global_step, "resumed_from_step": resumed["step"] if resumed else None,
            "prompts": cfg.rl.prompts, "completions_scored": book.scored.get("correct", 0),
            "kl_reference": kl_reference(trained_model(trainer), cfg.rl.beta, info["backend"]),
            "gradient_checkpointing": checkpointing_applied(trainer.args), "rewards": reward_curve(rows),
            "rewards_overall": book.means(), "rewards_by_kind": book.means_by_kind(),
            "rewards_by_kind_half": book.means_by_half(),
            "zero_reasons": dict(sorted(book.reasons.items())),
            "seconds_per_step": round(sum(seconds) / len(seconds), 3) if seconds else None,
            "wall_seconds": round(time.time() - t0, 2), "per_step": rows, "samples": book.samples[-16:],
            "grpo_args_dropped": dropped, "adapter": lay.rel(lay.adapter_dir(REASONER_RL)),
            "plot": lay.rel(plot) if plot else None,
            "token_budget": token_budget(cfg), "token_budget_setting": cfg.rl.token_budget}


# Seen on an NVIDIA H200 (docs/results.md, run 13): once Unsloth is imported, trl's GRPOTrainer is Unsloth's, which
# calls model.for_training(); a model transformers + PEFT loaded has none ("'Qwen2ForCausalLM' object has no attribute
# 'for_training'"), so GRPO fails inside its first step.
UNSLOTH_IN_PROCESS = ("Unsloth was imported in this process and has swapped trl's GRPOTrainer for its own, which needs "
                      "a model Unsloth loaded; the backend here is transformers + PEFT: run GRPO in a fresh process "
                      "(restart the kernel) that does not import Unsloth")


def grpo_blocker(cfg: config.Profile | None = None, recommendation: dict | None = None) -> str | None:
    """Why the installed trl cannot run GRPO here, or None. trl 1.15 scores log-probabilities with a Triton kernel
    and, without Triton (a CPU build of torch), leaves it None and fails inside the first step; trl 0.19 does not
    use it and trl 1.16 falls back to plain torch. Given the profile, its backend is made ready first
    (helpers.models.import_backend: Unsloth, where it is the backend, imported before trl); a transformers + PEFT
    backend in a process that has imported Unsloth anyway is refused (UNSLOTH_IN_PROCESS)."""
    if cfg is not None:
        from helpers.models import import_backend
        backend = import_backend(cfg.model, recommendation)
        if backend != "unsloth" and "unsloth" in sys.modules:
            return UNSLOTH_IN_PROCESS
    import trl
    from trl.trainer import utils as trl_utils
    if getattr(trl_utils, "_ChunkedLogProbFunction", object) is None:
        return (f"trl {trl.__version__} computes GRPO's log-probabilities with Triton, and this install has none: use "
                "trl 1.16 or newer, or a torch build that ships Triton (ROCm and CUDA wheels do)")
    if not _triton_falls_back() and not _gpu_visible():
        return (f"trl {trl.__version__} runs GRPO's Triton log-probability kernel on the model's device, and this "
                "torch (a CUDA or ROCm build) sees no GPU, so it would fail inside the first step ('0 active drivers'):"
                " run where the GPU is visible, or use trl 1.16 or newer, which falls back to torch on the CPU")
    return None


def _triton_falls_back() -> bool:
    """Whether trl's chunked log-probability kernel picks torch over Triton on a CPU tensor (trl 1.16 does; 1.15 runs
    Triton on any device; trl 0.19 has no such kernel)."""
    try:
        from trl.kernels import chunked_logprob
    except ImportError:
        return True
    return hasattr(chunked_logprob, "_use_triton")


def _gpu_visible() -> bool:
    import torch
    return torch.cuda.is_available()


def train(cfg: config.Profile, *, recommendation: dict | None = None, resume: bool = True,
          quiet: bool = True) -> dict:
    """Build the prompts, run GRPO from the supervised reasoner (or a fresh adapter), save the adapter and write the
    report (returned). A checkpoint of the same settings is resumed; resume=False starts over. An install that
    cannot run GRPO (grpo_blocker) is refused before anything is loaded or written. Unsloth, where it is the backend,
    is imported before anything here imports trl, transformers or peft (grpo_blocker does it first)."""
    blocker = grpo_blocker(cfg, recommendation)
    from helpers.models import release
    from helpers.models.members import apply_cpu_threads, cpu_threads
    from helpers.scoring import end_of_turn_ids
    if blocker:
        raise RuntimeError(blocker)
    t0 = time.time()
    lay = RunLayout.of(cfg)
    prompts = build_prompts(cfg)
    out_dir = lay.made(lay.model_dir(REASONER_RL))
    model, tokenizer, info, start = load_policy(cfg, recommendation)
    fingerprint = fingerprint_of(cfg, prompts, start)
    found = find_resume(out_dir, fingerprint, resume)
    apply_cpu_threads(cpu_threads(cfg.train, info.get("kind")))
    funcs, book = rewards.make_rewards(tokenizer, token_budget(cfg), rules=cfg.agents.rules.answer_rules)
    book.half = cfg.rl.steps * cfg.rl.prompts_per_step * cfg.rl.num_generations // 2  # completions in half the run
    if found:
        book.restore(found[1].get("rewards", {}))
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    kwargs, dropped = grpo_config_kwargs(wanted_args(cfg, info, end_of_turn_ids(tokenizer, REASONER_SYSTEM),
                                                     quiet=quiet), accepted_fields(GRPOConfig))
    from helpers.train.telemetry import LivePlot
    live = LivePlot(title=f"{REASONER_RL} (GRPO, {cfg.run})", draw=steps_figure)
    log = step_logger(out_dir, book, fingerprint, live)
    trainer = GRPOTrainer(model=model, reward_funcs=funcs, args=GRPOConfig(**kwargs),
                          train_dataset=Dataset.from_list(io.read_jsonl(prompts)), processing_class=tokenizer,
                          callbacks=[log])
    if found:
        from helpers.train.hf import allow_rng_state_on_old_torch
        allow_rng_state_on_old_torch()
    trainer.train(resume_from_checkpoint=str(found[0]) if found else None)
    save_adapter(trainer.model, out_dir)
    report = run_report(cfg, start=start, info=info, book=book, trainer=trainer, dropped=dropped,
                        resumed=found[1] if found else None, t0=t0)
    lay.made(lay.agents_dir)
    io.write_json(lay.rl_report, report)
    gone = release.watch(model, trainer)  # nothing returned holds them: free them before the caller loads a model
    del model, trainer
    release.free_memory(*gone, label=f"after training {REASONER_RL}", quiet=quiet)
    return report
