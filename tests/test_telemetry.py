"""Telemetry: metrics.jsonl lines, real-token throughput, the Trainer callback, the plot and its throttle."""

from __future__ import annotations

import json
import math
import time
from types import SimpleNamespace

from helpers.train import telemetry


def _logger(tmp_path, live=None):
    counter = telemetry.TokenCounter()
    return telemetry.MetricsLogger(tmp_path / "m" / "metrics.jsonl", counter, world_size=2, live=live), counter


def test_each_loss_log_appends_one_line_with_every_field(tmp_path):
    logger, counter = _logger(tmp_path)
    logger.begin_chunk(1, step_offset=10)
    counter.add(300)
    counter.add(200)
    time.sleep(0.05)
    rec = logger.log({"loss": 1.5, "learning_rate": 2e-4, "grad_norm": 0.7, "epoch": 0.5}, step=3, epoch=0.5)
    assert logger.log({"train_runtime": 3.0, "train_loss": 1.4}, step=4, epoch=1.0) is None  # end-of-train summary
    lines = (tmp_path / "m" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == rec
    assert set(telemetry.FIELDS) == set(rec)
    assert (rec["chunk"], rec["step"], rec["global_step"], rec["world_size"]) == (1, 3, 13, 2)
    assert (rec["loss"], rec["learning_rate"], rec["grad_norm"], rec["tokens"]) == (1.5, 2e-4, 0.7, 500)
    assert 0 < rec["tokens_per_s"] <= 500 / 0.05 and rec["rss_gib"] > 0
    assert counter.since_log == 0 and counter.total == 500


def test_tokens_are_counted_per_interval(tmp_path):
    logger, counter = _logger(tmp_path)
    counter.add(100)
    first = logger.log({"loss": 2.0}, 1, 0.1)
    counter.add(40)
    second = logger.log({"loss": 1.9}, 2, 0.2)
    assert (first["tokens"], second["tokens"]) == (100, 40)
    assert first["learning_rate"] is None and first["grad_norm"] is None  # absent values are null, not invented


def test_callback_writes_only_on_the_main_process(tmp_path):
    logger, _ = _logger(tmp_path)
    cb = telemetry.metrics_callback(logger)
    from transformers import TrainerCallback
    assert isinstance(cb, TrainerCallback)
    for zero, step in ((False, 1), (True, 2)):
        state = SimpleNamespace(is_world_process_zero=zero, global_step=step, epoch=0.1 * step)
        cb.on_log(None, state, None, logs={"loss": 3.0 - step})
    recs = telemetry.read_metrics(tmp_path / "m" / "metrics.jsonl")
    assert [r["step"] for r in recs] == [2]


def test_memory_reading_on_cpu_has_rss_and_no_vram():
    mem = telemetry.memory_gib()
    assert mem["rss_gib"] > 0 and mem["vram_allocated_gib"] is None
    assert telemetry.peak_rss_gib() >= mem["rss_gib"] * 0.5


def _records(n=12):
    return [{"chunk": i // 4, "step": i % 4 + 1, "global_step": i + 1, "loss": 3 * math.exp(-i / 5), "tokens_per_s": 1000.0 + i,
             "rss_gib": 0.5, "vram_allocated_gib": None, "vram_reserved_gib": None, "vram_peak_gib": None}
            for i in range(n)]


def test_plot_has_three_panels_chunk_lines_and_a_png(tmp_path):
    fig = telemetry.plot_metrics(_records(), tmp_path / "p.png", title="t")
    axes = fig.get_axes()
    assert len(axes) == 3 and (tmp_path / "p.png").stat().st_size > 5000
    assert len(axes[0].lines) == 1 + 2  # the loss curve and dashed lines where chunks 1 and 2 start
    assert "RSS" in axes[1].get_title() or axes[1].get_legend().get_texts()[0].get_text() == "process RSS"
    gpu = [{**r, "vram_allocated_gib": 1.0, "vram_reserved_gib": 2.0, "vram_peak_gib": 1.5} for r in _records()]
    assert "GPU" in telemetry.plot_metrics(gpu).get_axes()[1].get_title()


def test_live_plot_is_throttled_and_off_headless(tmp_path, monkeypatch):
    shown = []
    import IPython.display as disp

    class Handle:
        def update(self, obj):
            shown.append(("update", obj))

    monkeypatch.setattr(disp, "display", lambda obj, display_id=False: shown.append(("display", obj)) or Handle())
    live = telemetry.LivePlot(every_s=60.0, enabled=True)
    assert live.update(_records()) and not live.update(_records())  # second call inside 60 s: skipped
    assert live.update(_records(), force=True) and live.draws == 2
    assert live.finish(_records(), tmp_path / "training.png") == tmp_path / "training.png"
    assert [kind for kind, _ in shown] == ["display", "update", "update"]  # one output, redrawn in place
    assert (tmp_path / "training.png").exists()
    monkeypatch.setenv("KIT_HEADLESS", "1")
    assert telemetry.headless() and not telemetry.LivePlot().enabled
