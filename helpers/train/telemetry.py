"""Training telemetry: one JSON line per logging step (models/<name>/metrics.jsonl) and a live loss/VRAM/throughput plot.

No transformers import at module level (see helpers.models on the Unsloth import seam): the Trainer
callback class is built on first use by metrics_callback().
"""

from __future__ import annotations

import io as _io
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any, Callable

GIB = 1024 ** 3
FIELDS = ("time", "wall_s", "chunk", "step", "global_step", "epoch", "loss", "learning_rate", "grad_norm",
          "tokens", "tokens_per_s", "vram_allocated_gib", "vram_reserved_gib", "vram_peak_gib", "rss_gib",
          "world_size")


def headless() -> bool:
    """True under the pipeline runner (KIT_HEADLESS=1): quiet lines instead of bars and live plots."""
    return os.environ.get("KIT_HEADLESS") == "1"


def in_notebook() -> bool:
    """True inside a Jupyter kernel (live display handles work there)."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return bool(shell) and type(shell).__name__ == "ZMQInteractiveShell"


def memory_gib() -> dict:
    """GPU memory (allocated / reserved / peak, GiB; None without a GPU; ROCm shows up as cuda) and process RSS."""
    out: dict[str, float | None] = {"vram_allocated_gib": None, "vram_reserved_gib": None, "vram_peak_gib": None}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        out.update(vram_allocated_gib=round(torch.cuda.memory_allocated() / GIB, 3),
                   vram_reserved_gib=round(torch.cuda.memory_reserved() / GIB, 3),
                   vram_peak_gib=round(torch.cuda.max_memory_allocated() / GIB, 3))
    import psutil
    out["rss_gib"] = round(psutil.Process().memory_info().rss / GIB, 3)
    return out


def peak_rss_gib() -> float:
    """The process's peak resident memory (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (GIB if sys.platform == "darwin" else 1024 ** 2), 3)


class TokenCounter:
    """Real (non-pad) tokens seen: the Trainer adds attention_mask sums, the logger reads and resets."""

    def __init__(self) -> None:
        self.total = 0
        self.since_log = 0

    def add(self, n: int) -> None:
        """Count n real tokens."""
        self.total += int(n)
        self.since_log += int(n)

    def take(self) -> int:
        """Tokens since the last take()."""
        n, self.since_log = self.since_log, 0
        return n


class MetricsLogger:
    """Appends one JSON line per Trainer log with loss, lr, grad norm, tokens/s, memory, wall time."""

    def __init__(self, path: str | os.PathLike, counter: TokenCounter, *, world_size: int = 1,
                 live: "LivePlot | None" = None, start_time: float | None = None):
        self.path, self.counter, self.world_size, self.live = Path(path), counter, world_size, live
        self.chunk, self.step_offset = 0, 0
        self.start = start_time if start_time is not None else time.time()
        self._last = time.time()
        self.records: list[dict] = []

    def begin_chunk(self, chunk: int, step_offset: int) -> None:
        """Set the chunk index and the global step at the start of this chunk."""
        self.chunk, self.step_offset = chunk, step_offset
        self._last = time.time()
        self.counter.take()

    def log(self, logs: dict, step: int, epoch: float | None) -> dict | None:
        """Write one record for a Trainer log that carries a training loss; other logs are ignored."""
        if "loss" not in logs:
            return None
        now = time.time()
        tokens = self.counter.take()
        dt = max(now - self._last, 1e-9)
        self._last = now
        rec = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "wall_s": round(now - self.start, 3),
               "chunk": self.chunk, "step": step, "global_step": self.step_offset + step,
               "epoch": None if epoch is None else round(float(epoch), 4), "loss": float(logs["loss"]),
               "learning_rate": _num(logs.get("learning_rate")), "grad_norm": _num(logs.get("grad_norm")),
               "tokens": tokens, "tokens_per_s": round(tokens / dt, 1), **memory_gib(),
               "world_size": self.world_size}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
        self.records.append(rec)
        if self.live is not None:
            self.live.update(self.records)
        return rec


def _num(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


_CALLBACK_CLS: type | None = None


def metrics_callback(logger: MetricsLogger) -> Any:
    """A transformers TrainerCallback that feeds `logger` on every logging step (rank 0 only)."""
    global _CALLBACK_CLS
    if _CALLBACK_CLS is None:
        from transformers import TrainerCallback

        class MetricsCallback(TrainerCallback):
            """Writes metrics.jsonl lines through a MetricsLogger."""

            def __init__(self, metrics: MetricsLogger):
                self.metrics = metrics

            def on_log(self, args, state, control, logs=None, **kwargs):
                if state.is_world_process_zero and logs:
                    self.metrics.log(logs, state.global_step, state.epoch)

        _CALLBACK_CLS = MetricsCallback
    return _CALLBACK_CLS(logger)


def read_metrics(path: str | os.PathLike) -> list[dict]:
    """metrics.jsonl as a list (empty when absent)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plot_metrics(records: list[dict], path: str | os.PathLike | None = None, title: str = ""):
    """Three panels (loss, memory, tokens/s) against the global step, chunk starts dashed; optional PNG."""
    from matplotlib.figure import Figure  # no pyplot: headless-safe, no global figure leaks
    fig = Figure(figsize=(13, 3.6), layout="constrained")
    ax_loss, ax_mem, ax_tps = fig.subplots(1, 3)
    x = [r["global_step"] for r in records]
    ax_loss.plot(x, [r["loss"] for r in records], "-", color="#1f77b4", marker="." if len(x) < 60 else None)
    ax_loss.set(title="training loss (answer tokens)", xlabel="optimizer step", ylabel="loss")
    if any(r.get("vram_allocated_gib") is not None for r in records):
        ax_mem.plot(x, [r.get("vram_allocated_gib") for r in records], label="VRAM allocated")
        ax_mem.plot(x, [r.get("vram_reserved_gib") for r in records], label="VRAM reserved")
        ax_mem.plot(x, [r.get("vram_peak_gib") for r in records], "--", label="VRAM peak")
        ax_mem.set(title="GPU memory (GiB)")
    else:
        ax_mem.plot(x, [r.get("rss_gib") for r in records], label="process RSS")
        ax_mem.set(title="memory (GiB; no GPU: process RSS)")
    ax_mem.set(xlabel="optimizer step", ylabel="GiB")
    ax_mem.legend(fontsize="small")
    ax_tps.plot(x, [r.get("tokens_per_s") for r in records], color="#2ca02c")
    ax_tps.set(title="throughput (real tokens/s, this process)", xlabel="optimizer step", ylabel="tokens/s")
    first_step: dict[int, int] = {}
    for r in records:
        first_step[r["chunk"]] = min(first_step.get(r["chunk"], r["global_step"]), r["global_step"])
    for chunk, step in first_step.items():
        if chunk > 0:  # a dashed line where each later chunk (harder questions, new lr) starts
            for ax in (ax_loss, ax_mem, ax_tps):
                ax.axvline(step, color="grey", linestyle="--", linewidth=0.8)
    if title:
        fig.suptitle(title)
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=100)
    return fig


def figure_png(fig) -> bytes:
    """A Figure rendered to PNG bytes."""
    buf = _io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


class LivePlot:
    """Redraws a figure of the records in place in Jupyter (one display handle), at most every `every_s` seconds:
    plot_metrics (the loss curves) unless `draw(records, title) -> Figure` is given (the RL stage's rewards)."""

    def __init__(self, title: str = "", every_s: float = 2.0, enabled: bool | None = None,
                 draw: Callable[[list[dict], str], Any] | None = None):
        self.title, self.every_s = title, every_s
        self.draw = draw or (lambda records, title: plot_metrics(records, title=title))
        self.enabled = (in_notebook() and not headless()) if enabled is None else enabled
        self._handle = None
        self._last = 0.0
        self.draws = 0

    def update(self, records: list[dict], force: bool = False) -> bool:
        """Redraw if enabled and the throttle allows; returns whether it drew."""
        if not self.enabled or not records or (not force and time.time() - self._last < self.every_s):
            return False
        from IPython.display import Image, display
        image = Image(data=figure_png(self.draw(records, self.title)))
        if self._handle is None:
            self._handle = display(image, display_id=True)
        else:
            self._handle.update(image)
        self._last = time.time()
        self.draws += 1
        return True

    def finish(self, records: list[dict], path: str | os.PathLike) -> Path | None:
        """Save the final PNG and leave it (static) where the live plot was."""
        if not records:
            return None
        fig = plot_metrics(records, path, title=self.title)
        if self._handle is not None:
            from IPython.display import Image
            self._handle.update(Image(data=figure_png(fig)))
        return Path(path)
