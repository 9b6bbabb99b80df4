"""The run report: runs/<run>/report.md and a self-contained report.html, from what the stages left there.

Parts: build (header and sections in order, write_report), sections (one per stage artifact), render (Markdown and
HTML); the command line in __main__ (`python -m helpers.report --run NAME`).
"""

from helpers.report.build import build, write_report

__all__ = ["build", "write_report"]
