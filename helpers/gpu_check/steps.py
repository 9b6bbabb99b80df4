"""The gpu-check's record: each step's name, status (pass, fail or skip), one-line reason, seconds and figures.

A step is a function returning its figures (a dict; "summary" is its one line when it passes). An exception fails
it with the exception's first line (the traceback is kept in the JSON); `Skip` skips it with its reason; a step whose
prerequisite did not pass is skipped naming it. Nothing a step raises stops the check.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

from helpers.io import package_version

STATUSES = ("pass", "fail", "skip")
# The versions gpu-check.json records: distribution -> the module that must import ("missing" when it cannot).
PACKAGES = {"torch": "torch", "transformers": "transformers", "peft": "peft", "accelerate": "accelerate",
            "trl": "trl", "datasets": "datasets", "unsloth": "unsloth", "unsloth_zoo": "unsloth_zoo",
            "tokenizers": "tokenizers", "safetensors": "safetensors", "bitsandbytes": "bitsandbytes",
            "triton": "triton", "pytorch-triton-rocm": "triton", "numpy": "numpy", "matplotlib": "matplotlib",
            "papermill": "papermill"}
MAX_REASON = 400  # characters of a reason: one line in a terminal, a table cell in the report


class Skip(Exception):
    """Raised inside a step: skip it, with this one-line reason (a missing package, a precondition not met) and the
    figures it had measured by then."""

    def __init__(self, reason: str, figures: dict | None = None):
        super().__init__(reason)
        self.figures = dict(figures or {})


class Failed(Skip):
    """Raised inside a step: fail it with this one-line reason as it is (bad input said plainly: no traceback)."""


def one_line(text: Any) -> str:
    """The first non-empty line of `text`, at most MAX_REASON characters."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= MAX_REASON else line[:MAX_REASON - 3] + "..."


def importable(module: str) -> bool:
    """Whether `module` can be imported here, without importing it (a top-level find_spec)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules, a broken parent
        return False


def missing(*modules: str) -> str | None:
    """'trl is not installed' for the first of `modules` that cannot be imported here, else None."""
    gone = [m for m in modules if not importable(m)]
    return f"{' and '.join(gone)} {'is' if len(gone) == 1 else 'are'} not installed" if gone else None


def versions() -> dict[str, str]:
    """Each recorded package's installed version, or "missing" where its module cannot be imported."""
    out = {}
    for dist, module in PACKAGES.items():
        version = package_version(dist) if importable(module) else None
        if version or dist != "pytorch-triton-rocm":  # ROCm's triton is named only where it is the one installed
            out[dist] = version or "missing"
    return out


def finite(values: Sequence[float]) -> bool:
    """Every value a finite number."""
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)


class Record:
    """The steps run so far, in order; `say` gets one line per step as it ends. What the libraries print while a step
    runs (progress bars, warnings, trl's log dicts) goes to `log` when given, so the terminal shows one line a step."""

    def __init__(self, say: Callable[[str], None] = print, cleanup: Callable[[], None] | None = None,
                 log: Path | None = None):
        self.steps: list[dict] = []
        self.say, self.cleanup, self.log = say, cleanup, log  # cleanup: after a failed step (a failed load, an OOM)
        self.after: Callable[[], None] | None = None  # called as each step is recorded (run_check: the partial record)

    @contextlib.contextmanager
    def _quiet(self, name: str):
        if self.log is None:
            yield
            return
        with open(self.log, "a", encoding="utf-8") as fh, contextlib.redirect_stdout(fh), \
                contextlib.redirect_stderr(fh):
            print(f"==== {name} ({time.strftime('%H:%M:%S')})", flush=True)
            yield

    def get(self, name: str) -> dict | None:
        """The recorded step `name`, or None."""
        return next((s for s in self.steps if s["name"] == name), None)

    def passed(self, name: str) -> bool:
        """Whether step `name` ran and passed."""
        step = self.get(name)
        return step is not None and step["status"] == "pass"

    def blocker(self, needs: Sequence[str]) -> tuple[str, str] | None:
        """(the step, why) when a step needing `needs` cannot run: the first of them that did not pass, with the
        reason at the root of it (a skip for want of an earlier step names that step's own reason)."""
        for name in needs:
            step = self.get(name)
            if step is None:
                return name, f"needs the {name} step, which did not run"
            if step["status"] != "pass":
                root = step.get("blocked_by") or name
                root_step = self.get(root) or step
                return root, f"needs the {root} step, which {'failed' if root_step['status'] == 'fail' else 'was skipped'}: " \
                             f"{root_step['reason']}"
        return None

    def run(self, name: str, fn: Callable[[], dict], needs: Sequence[str] = ()) -> dict:
        """Run step `name` (unless a prerequisite did not pass) and record it; returns its record."""
        t0 = time.perf_counter()
        figures: dict = {}
        blocked = self.blocker(needs)
        if blocked is not None:
            status, reason = "skip", blocked[1]
            figures = {"blocked_by": blocked[0]}
        else:
            try:
                with self._quiet(name):
                    figures = dict(fn() or {})
                status, reason = "pass", str(figures.pop("summary", "ok"))
            except Skip as exc:  # Failed too: the reason as it is, with the figures measured before it
                status, reason = "fail" if isinstance(exc, Failed) else "skip", str(exc)
                figures = exc.figures
            except Exception as exc:  # a failing step is recorded, and the check goes on with what it can
                status, reason = "fail", f"{type(exc).__name__}: {exc}"
                figures = {"traceback": traceback.format_exc(limit=-12)}
            if status == "fail" and self.cleanup is not None:
                self.cleanup()
        return self.add(name, status, reason, time.perf_counter() - t0, figures)

    def add(self, name: str, status: str, reason: str, seconds: float = 0.0, figures: dict | None = None) -> dict:
        """Record a step as it ended (also what run() does) and say it in one line."""
        if status not in STATUSES:
            raise ValueError(f"step {name}: status {status!r} is not one of {', '.join(STATUSES)}")
        head = {"name": name, "status": status, "reason": one_line(reason), "seconds": round(seconds, 2)}
        step = {**head, **{k: v for k, v in (figures or {}).items() if k not in head}}
        self.steps.append(step)
        self.say(f"gpu-check: {status.upper():4} {name} ({step['seconds']:.1f} s): {step['reason']}")
        if self.after is not None:
            self.after()
        return step

    def failed(self) -> list[str]:
        """The names of the steps that failed."""
        return [s["name"] for s in self.steps if s["status"] == "fail"]
