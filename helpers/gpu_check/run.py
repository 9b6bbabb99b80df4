"""`make gpu-check` / `python -m helpers.gpu_check`: the kit's own GPU path on this box, step by step.

    env        the env check's rules and the settings it recommends for this box (helpers.env)
    backend    Unsloth or transformers + PEFT (helpers.models.import_backend), and why
    model      the tiny model built locally (tiny-pad: with a pad-named token, so Unsloth takes it), or --model: a
               local folder, checked first; the curriculum and held-out questions from the bundled data
    memory     free device memory (torch.cuda.mem_get_info; RAM on the CPU) against the "will it fit" estimate
    train_*    LoRA, rsLoRA, DoRA through helpers.train.train_adapter, each with its loss/memory PNG
    letters    letter scoring on the device against the CPU, same saved adapters, each side a fresh process as the
               exported agents are (no Unsloth patch of the training process reaches it); generate: the same for the
               generated letter
    reasoner   the reasoner's answer mode (reasoning, then the letter, inside the answer limit), in the device side
    grpo       two GRPO steps of the reasoner's RL stage (skipped without trl or datasets)
    fit        the estimate against the measured peak per method, and tokens/s per method
Each step is recorded pass, fail or skip with its reason in <out>/gpu-check.json; report.html shows it on one page.
Exit 0: nothing failed; 1: a step failed; 2: no GPU (or bad arguments), said in one line, nothing written.

The one-page report.html: the verdict, the device and versions, each step's status and reason, the
figures per method, the letters compared, and the loss and memory plots (inlined: one file to carry off the box).
"""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from helpers import config, io, layout
from helpers.env import rules
from helpers.gpu_check import checks, inputs
from helpers.gpu_check.steps import Failed, Record, Skip, one_line, versions
from helpers.io import atomic_write_text
from helpers.layout import RunLayout
from helpers.models.tiny import TINY_PAD
from helpers.train.telemetry import read_metrics


# ---------------------------------------------------------------- run
SCHEMA = 1
BUDGET_S = 300  # on an H100/H200: every step through Unsloth, its compile included (the tiny model cached: 176 s to build)
OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")  # read when huggingface_hub is imported
RECOMMENDED = ("dtype", "optim", "load_in_4bit", "attn_implementation", "use_unsloth", "gradient_checkpointing")
VRAM_FIX = next(r.fix for r in rules.RULES if r.id == "vram_in_use")  # the env check's fix for a GPU others hold


def default_out(device: str) -> Path:
    """runs/gpu-check, or runs/gpu-check-cpu for --device cpu (a rehearsal never overwrites a GPU's result)."""
    return RunLayout.of(layout.GPU_CHECK_CPU_RUN if device == "cpu" else layout.GPU_CHECK_RUN).root


class Check:
    """One gpu-check: the steps, in order, and what they hand each other (the profile, the recommendation, the
    trained adapters, the device side's result)."""

    def __init__(self, device: dict, cfg: config.Profile, swaps: list[dict], lay: RunLayout, steps: int,
                 model_arg: str | None, say: Callable[[str], None]):
        self.device, self.cfg, self.swaps, self.lay, self.n_steps = device, cfg, swaps, lay, steps
        self.model_arg, self.say = model_arg, say
        self.record = Record(say, cleanup=self.free, log=lay.gpu_check_log)
        self.rec: dict = {}
        self.backend: dict = {}
        self.model: dict = {}
        self.data: dict = {}
        self.held: list[dict] = []
        self.seq_len = 0
        self.estimates: dict[str, Any] = {}
        self.trained: dict[str, dict] = {}
        self.scores: dict | None = None
        self.inference: dict | None = None  # the device side's result (checks.side_main)

    # ------------------------------------------------------------ the steps
    def step_env(self) -> dict:
        from helpers import env
        facts = inputs.collect_facts_apart(self.lay.gpu_check_facts)
        imported = self.import_unsloth_here(facts)
        checks = env.evaluate(facts, self.cfg)
        self.rec = env.recommend(facts, self.cfg.model)
        env.apply_env(self.rec)  # before CUDA starts here: the allocator reads its variables once
        counts = env.summarize(checks)
        shown = [c for c in checks if c["status"] != "pass"]
        figures = {"counts": counts, "checks": [{k: c[k] for k in ("id", "status", "message", "fix")} for c in shown],
                   "recommended": {k: self.rec[k] for k in RECOMMENDED if k in self.rec},
                   "facts": {k: facts[k] for k in ("backend", "python", "system", "torch", "gpu", "errors")},
                   "unsloth_import_seconds": imported}
        fails = [c["id"] for c in checks if c["status"] == "fail"]
        if fails:
            raise Failed(f"{len(fails)} env check(s) fail: {', '.join(fails)} (gpu-check.json lists each with its "
                         "fix)", figures)
        warns = [c["id"] for c in checks if c["status"] == "warn"]
        figures["summary"] = (f"no env check fails ({len(warns)} warn{': ' + ', '.join(warns) if warns else ''}); "
                              f"recommended dtype {self.rec['dtype']['value']}, optim {self.rec['optim']['value']}")
        return figures

    def import_unsloth_here(self, facts: dict) -> float | None:
        """Import Unsloth in this process, once, where the env probe left it to us (a GPU, Unsloth installed): the
        probe's facts get the outcome, and the seconds it took are returned (None: nothing to import). The variables
        the recommendation sets for Unsloth go in first, as import_backend would set them. Not where the backend
        would be transformers + PEFT even with the import working (model.use_unsloth false, no bitsandbytes): the check
        then runs as a process of that profile would, without Unsloth."""
        from helpers import env
        from helpers.env.facts import DEFERRED
        from helpers.models.settings import backend_choice
        from helpers.models.unsloth_api import import_unsloth
        if facts.get("unsloth", {}).get("detail") != DEFERRED:
            return None
        hoped = {**facts, "unsloth": {**facts["unsloth"], "importable": True}}
        try:
            backend, why = backend_choice(hoped, self.cfg.model)
        except RuntimeError:  # use_unsloth true where it cannot run: the import's outcome is part of the finding
            backend, why = "unsloth", ""
        if backend != "unsloth":  # imported, it would swap trl's trainers for its own anyway (run 13)
            facts["unsloth"].update(detail=f"not imported: {why}")
            return None
        env.apply_env(env.recommend(hoped, self.cfg.model))
        t0 = time.perf_counter()
        try:
            import_unsloth()
            facts["unsloth"].update(importable=True, detail="imported once, in the check's process")
        except Exception as exc:  # noqa: BLE001  (a git-head Unsloth may fail in any way: the finding, not a crash)
            detail = str(exc) if isinstance(exc, RuntimeError) else f"{type(exc).__name__}: {exc}"
            facts["unsloth"].update(importable=False, detail=one_line(detail))
        return round(time.perf_counter() - t0, 1)

    def step_backend(self) -> dict:
        from helpers.models import import_backend
        if not self.rec:
            raise Skip("no recommendation: the env step did not finish")
        from helpers.models.settings import backend_choice
        name = import_backend(self.cfg.model, self.rec)
        why = backend_choice(self.rec, self.cfg.model)[1]
        self.backend = {"name": name, "why": why}
        return {"backend": name, "why": why, "summary": f"{'Unsloth' if name == 'unsloth' else 'transformers + PEFT'}: {why}"}

    def step_model(self) -> dict:
        from helpers.env import memory
        from helpers.models import load_tokenizer, resolve_base
        if self.model_arg is not None:
            problem = inputs.model_problem(self.model_arg)
            if problem:
                raise Failed(problem)
        t0 = time.perf_counter()
        source, kind = resolve_base(self.cfg.model.weights, {"progress": False} if self.model_arg is None else None)
        shape = memory.get_shape(str(source))
        self.model = {"base": self.cfg.model.base, "kind": kind, "path": str(source), "model_type": shape.model_type,
                      "params": memory.count_params(shape)["total"], "ready_seconds": round(time.perf_counter() - t0, 1)}
        self.held, self.data = inputs.write_questions(self.cfg, self.lay, self.n_steps)
        self.seq_len = checks.longest_example(self.cfg, load_tokenizer(self.cfg.model.weights, self.cfg.model),
                                                self.lay.curriculum)
        self.data["longest_example_tokens"] = self.seq_len
        what = "the tiny model with a pad-named token (built locally)" if self.model_arg is None else str(source)
        return {**self.model, "data": self.data,
                "summary": f"{what}: {shape.model_type}, {self.model['params'] / 1e6:,.1f}M parameters, ready in "
                           f"{self.model['ready_seconds']} s; {self.data['training_questions']} training questions in "
                           f"{self.data['chunks']} chunks, {self.data['held_out']} held out"}

    def step_memory(self) -> dict:
        from helpers.models import resolve_settings
        settings = resolve_settings(self.cfg.model, self.rec, self.cfg.train)
        methods = [(m, checks.adapter_for(self.cfg, m)) for m in checks.METHODS]
        self.estimates = {m: checks.estimate(self.cfg, name, settings, self.backend["name"],
                                               Path(self.model["path"]), self.seq_len)
                          for m, name in methods if name}
        if not self.estimates:
            raise Skip(f"profile {self.cfg.profile} has no LoRA, rsLoRA or DoRA adapter")
        worst = max(self.estimates, key=lambda m: self.estimates[m].total_bytes)
        need, (free, total) = self.estimates[worst].total_bytes, inputs.free_memory(self.device)
        gib = checks.memory.GIB
        where = "GPU memory" if self.device["kind"] != "cpu" else "RAM"
        figures = {"free_gib": round(free / gib, 3), "total_gib": round(total / gib, 3), "where": where,
                   "estimates_gib": {m: round(e.total_gib, 3) for m, e in self.estimates.items()}}
        if free < need:
            raise Failed(f"{where} nearly full: {free / gib:.2f} GiB free of {total / gib:.2f} GiB, and training "
                         f"{worst} needs {need / gib:.2f} GiB (the estimate): training skipped. {VRAM_FIX}", figures)
        figures["summary"] = (f"{free / gib:.2f} GiB {where} free of {total / gib:.2f}; the largest estimate "
                              f"({worst}) is {need / gib:.2f} GiB")
        return figures

    def step_train(self, method: str) -> dict:
        name = checks.adapter_for(self.cfg, method)
        if name is None:
            raise Skip(f"profile {self.cfg.profile} has no {method} adapter")
        figures = checks.train_method(self.cfg, name, self.rec, self.lay, self.device)
        self.trained[method] = figures
        return figures

    def adapter_dirs(self) -> dict[str, str]:
        """The trained adapters' folders by name, absolute."""
        if not self.trained:
            raise Skip("no adapter was trained (see the train_* steps)")
        return {t["adapter"]: str(self.lay.adapter_dir(t["adapter"]).resolve()) for t in self.trained.values()}

    def step_letters(self) -> dict:
        dirs, ram = self.adapter_dirs(), self.cpu_ram_problem()
        cpu, cpu_failed = self.run_sides(dirs, ram)
        if cpu_failed is not None:
            raise cpu_failed
        if cpu is None:
            raise Skip(ram or "the CPU side did not run")
        dtype, device = self.inference["dtype"], self.inference["members"]
        tol = checks.NEAR_TIE.get(dtype, checks.NEAR_TIE["bfloat16"])
        self.scores = {"device": device, "cpu": cpu["members"], "tolerance": tol, "cpu_long": cpu.get("long"),
                       "logit_tolerance": checks.LOGIT_NEAR_TIE.get(dtype, checks.LOGIT_NEAR_TIE["bfloat16"])}
        compared = checks.compare_scores(device, cpu["members"], tol)
        line, bad = checks.verdict(compared, "letters", tol)
        figures = {"members": compared, "near_tie_below": tol, "device_dtype": dtype,
                   "device_backend": self.inference["backend"],
                   "device_process": "fresh" + (", Unsloth imported there" if self.inference["unsloth_imported"]
                                                else ", Unsloth not imported"),
                   "cpu_dtype": cpu["dtype"], "cpu_backend": cpu["backend"],
                   "warnings": checks.shift_warnings(compared)}
        if bad:
            raise Failed(line, figures)
        return {**figures, "summary": line}

    def run_sides(self, dirs: dict[str, str], ram: str | None) -> tuple[dict | None, Exception | None]:
        """Both sides of the letters (checks.side_main), each in a fresh process: side by side where the device is a
        GPU and the RAM holds both loads, the CPU side leaving a core to the device side's Python; else one after the
        other (on a CPU both would share its cores: two torch thread pools on 2 cores took 12-92 s, one after the
        other 9). Sets self.inference (the device side's result: it also answers the reasoner's puzzles); returns the
        CPU side's result (None where RAM is short) and its failure, if any."""
        cores = os.cpu_count() or 1
        together = self.device["kind"] != "cpu" and ram is None and self.ram_holds_both()
        device_side = checks.start_side("device", self.cfg, dirs, self.held, self.lay, self.rec) if together else None
        cpu, failed = None, None
        try:
            if ram is None:
                cpu = checks.finish_side(checks.start_side("cpu", self.cfg, dirs, self.held, self.lay,
                                                           threads=max(1, cores - 1) if together else None),
                                         "cpu", self.lay)
        except Exception as exc:  # noqa: BLE001  (the device side is still waited for: the reasoner's answers)
            failed = exc
        except BaseException:  # interrupted: nothing more is started or waited for
            if device_side is not None:
                device_side.kill()
            raise
        device_side = device_side or checks.start_side("device", self.cfg, dirs, self.held, self.lay, self.rec)
        try:
            self.inference = checks.finish_side(device_side, "device", self.lay,
                                                tell=str(self.lay.gpu_check_side("cpu", "result")) if cpu else "")
        except RuntimeError as exc:
            raise RuntimeError(f"{failed}; {exc}" if failed else str(exc)) from exc
        return cpu, failed

    def ram_for(self, bytes_per_param: int) -> tuple[float, int]:
        """(the RAM the model takes at this many bytes a parameter, x1.3 for its process; the RAM available)."""
        import psutil
        return self.model["params"] * bytes_per_param * 1.3, psutil.virtual_memory().available

    def cpu_ram_problem(self) -> str | None:
        """Why the CPU side cannot run: the model in fp32 (x1.3 for the process) over the available RAM; else None."""
        need, free = self.ram_for(4)
        if need > free:
            return (f"the CPU reference needs ~{need / 2**30:.1f} GiB of RAM for the model in fp32, "
                    f"{free / 2**30:.1f} GiB available: letters not compared")
        return None

    def ram_holds_both(self) -> bool:
        """Whether the RAM holds the CPU side's fp32 model and the device side's load (its 16-bit weights pass through
        host memory) at once, each x1.3 for its process."""
        need, free = self.ram_for(4 + 2)
        return need <= free

    def step_generate(self) -> dict:
        if self.scores is None:
            raise Skip("nothing scored: the letters step did not score on both sides")
        tol = self.scores["tolerance"]
        compared = checks.compare_generated(self.scores["device"], self.scores["cpu"], tol)
        line, bad = checks.verdict(compared, f"generated letters ({checks.GENERATE_TOKENS} tokens)", tol)
        figures: dict = {"members": compared}
        cpu_long, long = self.scores.get("cpu_long"), (self.inference or {}).get("long")
        if cpu_long and cpu_long.get("error"):
            raise Failed(f"{line}; {cpu_long['member']}'s longer generation failed on the CPU: {cpu_long['error']}",
                         figures)
        if long and long.get("error"):
            raise Failed(f"{line}; {cpu_long['member']}'s longer generation failed on the device: {long['error']}",
                         figures)
        if not cpu_long:
            line += "; no DoRA adapter's longer generation compared (no DoRA adapter trained)"
        elif not long:
            raise Failed(f"{line}; the device side did not read {cpu_long['member']}'s CPU tokens", figures)
        else:  # the DoRA adapter's generation past its first tokens
            long_line, long_bad = checks.verdict({cpu_long["member"]: long}, f"{cpu_long['member']}'s first "
                                                 f"{checks.LONG_TOKENS} tokens a question, teacher-forced",
                                                 self.scores["logit_tolerance"])
            long_line = long_line.replace("CPU margin <", "CPU logit gap <")
            figures["long"], line, bad = {cpu_long["member"]: long}, f"{line}; {long_line}", bad + long_bad
        if bad:
            raise Failed(line, figures)
        return {**figures, "summary": line}

    def step_reasoner(self) -> dict:
        self.adapter_dirs()  # skips, saying so, where no adapter was trained
        if self.inference is None:
            raise Skip("the device side's process did not finish (the letters step says why)")
        report = self.inference["reasoner"]
        if "error" in report:
            raise Failed(report["error"])
        return report

    def step_grpo(self) -> dict:
        self.free()  # what training left on the device: GRPO loads its own policy
        return checks.grpo_steps(self.cfg, self.rec)

    def step_fit(self) -> dict:
        rows = [checks.fit_row(self.estimates[m], t) for m, t in self.trained.items() if m in self.estimates]
        if not rows:
            raise Skip("no method trained, so no peak to compare")
        warnings = checks.fit_warnings(rows)
        shown = ", ".join(f"{r['method']} {r['measured_gib']}/{r['estimate_without_context_gib']} GiB "
                          f"({r['ratio']:.2f}x{'' if r['comparable'] else ', CPU RSS'}), "
                          f"{r['tokens_per_s']:.0f} tokens/s" for r in rows)
        return {"methods": rows, "warnings": warnings, "summary": f"measured/estimated: {shown}"}

    # ------------------------------------------------------------ the order
    def free(self) -> None:
        """Return the device memory training left (after a failed step, before GRPO)."""
        gc.collect()
        if self.device["kind"] != "cpu":
            import torch
            torch.cuda.empty_cache()

    def run(self) -> None:
        """Every step, in order; each is recorded whatever the others did."""
        r = self.record
        r.run("env", self.step_env)
        try:
            self.device.update(inputs.describe(self.device))
        except Exception as exc:  # recorded; the steps that need the GPU will say what fails
            self.device["describe_error"] = f"{type(exc).__name__}: {exc}"
        r.run("backend", self.step_backend)
        r.run("model", self.step_model, needs=("backend",))
        r.run("memory", self.step_memory, needs=("model",))
        for method in checks.METHODS:
            r.run(f"train_{method}", lambda m=method: self.step_train(m), needs=("memory",))
        r.run("letters", self.step_letters, needs=("model",))
        r.run("generate", self.step_generate, needs=("model",))
        r.run("reasoner", self.step_reasoner, needs=("model",))
        r.run("grpo", self.step_grpo, needs=("memory",))  # its own policy model: not on a GPU that is full
        r.run("fit", self.step_fit, needs=("memory",))
        self.free()


def run_check(device: str = "auto", model: str | None = None, out: str | Path | None = None, steps: int = 30,
              profile: str = "smoke", overrides: dict | None = None, argv: list[str] | None = None,
              say: Callable[[str], None] = print) -> int:
    """The whole check; returns the exit status (0 nothing failed, 1 a step failed, 2 no GPU or bad arguments)."""
    t0 = time.time()
    os.environ.setdefault("KIT_HEADLESS", "1")  # the kit's quiet lines, no live plots or weight-loading bars
    for var in OFFLINE:  # everything is local: no library may wait on a network the box may not have
        os.environ.setdefault(var, "1")
    if device == "cpu":
        inputs.hide_accelerators()  # before anything imports torch
    try:
        facts = inputs.choose(device)
    except inputs.NoDevice as exc:
        print(str(exc), file=sys.stderr)
        return 2
    out_dir = Path(out) if out else default_out(device)
    try:  # --steps, --profile and --overrides checked before any work
        inputs.training_size(config.load_profile(profile, None, overrides or {}), steps)
    except (ValueError, OSError, KeyError, TypeError) as exc:
        print(f"gpu-check: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    with inputs.runs_at(out_dir) as run:
        base = str(Path(model).expanduser().resolve()) if model else TINY_PAD  # Unsloth takes it, unlike "tiny"
        cfg, swaps = inputs.profile_for_check(profile, base, run, overrides)
        lay = RunLayout.of(cfg)
        say(f"gpu-check: {facts['name']} ({facts['kind']}), profile {profile}, model {base} -> {lay.root}")
        facts = dict(facts)  # described in place once the env step has set the recommended variables
        check = Check(facts, cfg, swaps, lay, steps, model, say)
        check.record.after = lambda: write_unfinished(check, facts, argv, time.time() - t0, say)
        check.run()
        curves = {m: read_metrics(lay.metrics(t["adapter"])) for m, t in check.trained.items()}
        plot = plot_methods(curves, lay.gpu_check_plot, facts["kind"])
        record = build_record(check, facts, argv, time.time() - t0)
        record.update(plot=lay.rel(plot) if plot else None, overrides=dict(overrides or {}))
        io.write_json(lay.gpu_check_record, record)
        write(record, lay.root, lay.report_html)
    say(f"gpu-check: {verdict(record)} in {record['wall_seconds']:.0f} s -> {lay.gpu_check_record}, "
        f"{lay.report_html}")
    if facts["kind"] != "cpu" and record["wall_seconds"] > BUDGET_S:
        say(f"gpu-check: took {record['wall_seconds']:.0f} s, over the {BUDGET_S} s it should take on a GPU")
    return record["exit_status"]


def build_record(check: Check, facts: dict, argv: list[str] | None, seconds: float) -> dict:
    """gpu-check.json: the device, the versions, what the check changed in the profile, every step."""
    failed = check.record.failed()
    return {"schema": SCHEMA, "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": "python -m helpers.gpu_check" + "".join(f" {a}" for a in argv or []),
            "ok": not failed, "exit_status": 1 if failed else 0, "failed": failed,
            "wall_seconds": round(seconds, 1), "budget_s": BUDGET_S, "device": facts, "versions": versions(),
            "python": sys.version.split()[0], "profile": check.cfg.profile, "swaps": check.swaps,
            "model": check.model or {"base": check.cfg.model.base}, "backend": check.backend, "data": check.data,
            "out": str(check.lay.root), "log": check.lay.rel(check.lay.gpu_check_log), "complete": True,
            "steps": check.record.steps}


def write_unfinished(check: Check, facts: dict, argv: list[str] | None, seconds: float,
                     say: Callable[[str], None]) -> None:
    """The partial gpu-check.json after a step; a failed write (a full disk) is said, never the end of the check."""
    try:
        io.write_json(check.lay.gpu_check_record, unfinished_record(check, facts, argv, seconds))
    except OSError as exc:
        say(f"gpu-check: could not write the partial record {check.lay.gpu_check_record}: {exc}")


def unfinished_record(check: Check, facts: dict, argv: list[str] | None, seconds: float) -> dict:
    """gpu-check.json while the check runs, rewritten as each step ends: a check cut short (a timeout, a hung step,
    the box taken back) leaves the steps it got through, and says it did not finish rather than that it passed."""
    last = check.record.steps[-1]["name"]  # written only after a step is recorded
    return {**build_record(check, facts, argv, seconds), "ok": False, "exit_status": None, "complete": False,
            "unfinished": f"the check stopped after the {last} step, or is still running: the steps after it have "
                          "no record"}


# ---------------------------------------------------------------- report
if TYPE_CHECKING:  # the run report's package imports its sections (numpy among them): loaded when writing
    from helpers.report.render import Block

STATUS_MARK = {"pass": "PASS", "fail": "FAIL", "skip": "skip"}
PLOT_DPI = 72  # ~70 KB, the whole page ~100 KB: small enough to mail


def plot_methods(curves: dict[str, list[dict]], path: Path, device_kind: str) -> Path | None:
    """Loss, memory and tokens/s against the optimizer step, one line per method (from each metrics.jsonl); inlined
    in report.html, each method's own PNG linked."""
    from matplotlib.figure import Figure  # no pyplot: headless-safe
    if not any(curves.values()):
        return None
    fig = Figure(figsize=(12, 3.2), layout="constrained")
    ax_loss, ax_mem, ax_tps = fig.subplots(1, 3)
    mem_key, mem_title = (("vram_allocated_gib", "VRAM allocated (GiB)") if device_kind != "cpu"
                          else ("rss_gib", "process RSS (GiB; CPU)"))
    for method, rows in curves.items():
        x = [r["global_step"] for r in rows]
        ax_loss.plot(x, [r["loss"] for r in rows], label=method)
        ax_mem.plot(x, [r.get(mem_key) for r in rows], label=method)
        ax_tps.plot(x, [r.get("tokens_per_s") for r in rows], label=method)
    for ax, title in ((ax_loss, "training loss"), (ax_mem, mem_title), (ax_tps, "real tokens/s")):
        ax.set(title=title, xlabel="optimizer step")
        ax.legend(fontsize="small")
    fig.savefig(path, dpi=PLOT_DPI)
    return path


def _num(x: Any, nd: int = 3) -> str:
    return "-" if x is None else f"{x:,.{nd}f}" if isinstance(x, float) else str(x)


def verdict(record: dict) -> str:
    """The report's first line: ready or not, and what failed."""
    failed = [s["name"] for s in record["steps"] if s["status"] == "fail"]
    skipped = [s["name"] for s in record["steps"] if s["status"] == "skip"]
    head = f"NOT READY: {len(failed)} step(s) failed: {', '.join(failed)}" if failed else "READY: no step failed"
    return head + (f"; skipped: {', '.join(skipped)}" if skipped else "")


def _device_rows(record: dict) -> list[list[Any]]:
    d = record["device"]
    keys = ("kind", "name", "arch", "count", "cores", "runtime", "driver", "bf16", "memory_total_gib",
            "memory_free_gib_at_start")
    return [[k, _num(d[k])] for k in keys if k in d]


def _training_rows(record: dict) -> list[list[Any]]:
    fit = {r["method"]: r for r in (_step(record, "fit") or {}).get("methods", [])}
    rows = []
    for s in record["steps"]:
        if not s["name"].startswith("train_") or s["status"] != "pass":
            continue
        f = fit.get(s["method"], {})
        rows.append([s["method"], s["adapter"], s["backend"], s["dtype"], str(s["steps"]),
                     f"{s['loss_first']} -> {s['loss_last']}", _num(s["tokens_per_s"], 0),
                     f"{s['peak_memory']['gib']} ({s['peak_memory']['kind']})",
                     f"{_num(f.get('estimate_gib'))} ({_num(f.get('estimate_without_context_gib'))})",
                     _num(f.get("ratio"), 2) + ("" if f.get("comparable", True) else " (CPU)")])
    return rows


def _letter_rows(step: dict | None) -> list[list[Any]]:
    rows = []
    for member, c in ((step or {}).get("members") or {}).items():
        ties = ", ".join(f"q{t['question']} {t['device']}/{t['cpu']} margin {t['cpu_margin']}" for t in c["near_ties"])
        bad = ", ".join(f"q{t['question']} {t['device']}/{t['cpu']}" for t in c["disagree"])
        rows.append([member, f"{c['agree']}/{c['questions']}", ties or "-", bad or "-",
                     _num(c.get("max_prob_shift"), 4)])
    return rows


def _step(record: dict, name: str) -> dict | None:
    return next((s for s in record["steps"] if s["name"] == name), None)


def blocks(record: dict) -> list[Block]:
    """The report's blocks (helpers.report.render's document model)."""
    dev = record["device"]
    out: list[Block] = [("h", 1, f"gpu-check: {dev.get('name', '?')}"), ("p", [("b", verdict(record))]),
                        ("p", f"{record['made']} | {record['wall_seconds']} s | profile {record['profile']} | model "
                              f"{record['model'].get('base')} | backend {record['backend'].get('name')}: "
                              f"{record['backend'].get('why')} | {record['command']}")]
    if dev.get("kind") == "cpu":
        out.append(("note", "Run on the CPU (--device cpu): the whole path rehearsed, not a GPU result."))
    out += [("h", 2, "Steps"), ("table", ["step", "status", "s", "reason"],
                                 [[s["name"], STATUS_MARK[s["status"]], _num(s["seconds"], 1), s["reason"]]
                                  for s in record["steps"]])]
    warnings = [f"{s['name']}: {w}" for s in record["steps"] for w in s.get("warnings") or []]
    if warnings:
        out.append(("ul", warnings))
    out += [("h", 2, "Device and versions"), ("table", ["device", ""], _device_rows(record)),
            ("table", ["package", "version"], [[k, v] for k, v in record["versions"].items()])]
    if _training_rows(record):
        out += [("h", 2, "Training: LoRA, rsLoRA, DoRA through the kit's chunk loop"),
                ("table", ["method", "adapter", "backend", "dtype", "steps", "loss first -> last", "tokens/s",
                           "peak GiB", "estimate GiB (less its 1 GiB context)", "measured / estimate less context"],
                 _training_rows(record))]
    for name, title in (("letters", "Letter scoring: device against CPU"), ("generate", "Generate: device against CPU")):
        rows = _letter_rows(_step(record, name))
        if rows:
            out += [("h", 2, title), ("table", ["member", "same", "near ties (device/CPU)", "different",
                                                "max prob shift"], rows)]
    plots = [(s["name"], s["plot"]) for s in record["steps"] if s.get("plot") and s["status"] == "pass"]
    if record.get("plot") or plots:
        out.append(("h", 2, "Loss, memory and throughput"))
        out += [("img", "the three methods", record["plot"])] if record.get("plot") else []
        out.append(("p", ["Each step's own plot: "] + [x for name, rel in plots for x in (("link", name, rel), " ")]))
    if record.get("swaps"):
        out += [("h", 2, "What the check changed in the profile"),
                ("ul", [[("code", s["key"]), f": {s['from']!r} -> {s['to']!r} ({s['why']})"] for s in record["swaps"]])]
    return out


def write(record: dict, out_dir: Path, path: Path) -> Path:
    """report.html in `out_dir` (plots inlined from there)."""
    from helpers.report.render import to_html
    atomic_write_text(path, to_html(blocks(record), out_dir, f"gpu-check: {record['device'].get('name', '?')}"))
    return path
