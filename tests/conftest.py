"""Shared test fixtures: every test writes runs under a temporary KIT_RUNS_DIR, never the real runs/."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# The tiny base model is deterministic and costs ~2 min to build: every test, the notebooks the pipeline test
# runs, and `make pipeline` share the one in runs/_cache/ rather than build it again in each temp run folder.
os.environ.setdefault("KIT_CACHE_DIR", str(ROOT / "runs" / "_cache"))
# Offline from the first import: huggingface_hub and datasets read these once, when they are imported, and some test
# modules import them at collection, before any fixture runs; then a hub call in a later test went to the network
# (23 s of retries inside make test for a test that takes 0.3 s alone). The autouse fixture below sets them per test.
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")
# Where `make pipeline` wrote its runs (read before the tests point KIT_RUNS_DIR at temp folders).
USER_RUNS = Path(os.environ.get("KIT_RUNS_DIR") or ROOT / "runs")


def smoke_run_to_check() -> tuple[Path | None, str]:
    """(<runs>/smoke, why) when `make pipeline` made it from this very code (every notebook ok, plain smoke profile,
    same files and packages: helpers.pipeline.why_not_current), else (None, why not); KIT_FRESH_PIPELINE=1 always
    says None. A new user's `make pipeline` then `make test` checks the run just made instead of making it twice."""
    from helpers import pipeline
    run = USER_RUNS / "smoke"
    if os.environ.get("KIT_FRESH_PIPELINE") == "1":
        return None, "KIT_FRESH_PIPELINE=1"
    why = pipeline.why_not_current(run, "smoke")
    return (run, "made by make pipeline from this code") if why is None else (None, f"{run} not taken: {why}")


def pytest_report_header(config):
    """Say which smoke run the pipeline tier checks."""
    run, why = smoke_run_to_check()
    return f"smoke pipeline: checking {run}, {why}" if run else f"smoke pipeline: a fresh run ({why})"


@pytest.fixture(autouse=True)
def _isolated_runs(tmp_path_factory, monkeypatch):
    """Point runs/ at a temp dir (the model cache excepted) and keep the tests offline."""
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path_factory.mktemp("runs")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def shared_samples() -> Path:
    """../shared/upstream-samples; in CI it must exist (a missing one fails rather than skips)."""
    path = SHARED / "upstream-samples"
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: CI must have ../shared beside the checkout")
        pytest.skip(f"{path} not present outside CI (the project's own fixtures still run)")
    return path


# The longest test file: the real question writer's training and measurement, 11-16 minutes on one core.
# The real writer's two files: the training (the longest file, 11-16 min) and the base it is held against (~3 min).
FIRST_FILES = ("test_writer_real.py", "test_writer_real_base.py")


def mark_pure_tests(items) -> None:
    """Mark `nolibs` every test that reaches no package the other pin sets change (tests/_tiers.py derives it from
    the source), unless it is marked `pins`: those tiers deselect it, and `make test` runs it once."""
    import _tiers
    for item in items:
        if item.get_closest_marker("pins") is None and not _tiers.varying(item.path.stem, item.function.__qualname__):
            item.add_marker(pytest.mark.nolibs)


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m deselection reads the markers
def pytest_collection_modifyitems(config, items):
    """The real writer's files first (its training, the longest file, and the base measured beside it), then the
    smoke pipeline, the browser test last. With `-n 2 --dist loadfile` each worker takes the next file
    as it finishes one, so the writer's training runs on one core from the start while the other measures the base,
    (make test-realmodel), and in make test one takes the pipeline (or the run make pipeline made) while the other
    runs the unit tests; started late, the writer left one
    core idle for its last minutes. The browser test finds the tiny model the
    pipeline built instead of building it a second time."""
    def tier(item) -> int:
        if item.get_closest_marker("browser"):
            return 3
        if item.path.name in FIRST_FILES:
            return 0
        return 1 if item.get_closest_marker("pipeline") else 2
    items.sort(key=tier)  # stable: file and test order kept within a tier
    if "nolibs" in (config.option.markexpr or ""):  # only the tiers that select on it pay for the derivation
        mark_pure_tests(items)


@contextlib.contextmanager
def terminal_to(path: Path):
    """Send this process's stdout and stderr file descriptors, which the kernels it starts inherit, to a file."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(path, "w", encoding="utf-8") as fh:
        os.dup2(fh.fileno(), 1)
        os.dup2(fh.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
