"""Output file names the organisers' harness uses next to an agent's output file."""

from __future__ import annotations

from pathlib import Path


def filtered_name(path: str | Path) -> Path:
    """outputs/answers.json -> outputs/filtered_answers.json (the harness's naming; any name gets the prefix)."""
    path = Path(path)
    return path.with_name(f"filtered_{path.name}")


def report_name(path: str | Path) -> Path:
    """outputs/answers.json -> outputs/answers.report.json (the kit's per-item timings and counts)."""
    path = Path(path)
    return path.with_name(f"{path.stem}.report.json")
