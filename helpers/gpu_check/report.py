"""The gpu-check's one-page report.html: the verdict, the device and versions, each step's status and reason, the
figures per method, the letters compared, and the loss and memory plots (inlined: one file to carry off the box)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from helpers.io import atomic_write_text

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
