"""The run report: runs/<run>/report.md and a self-contained report.html, from what the stages left there.

    python -m helpers.report --run NAME        (or --run-dir PATH)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from helpers.layout import RunLayout
from helpers.report.build import write_report


def main(argv: list[str] | None = None) -> int:
    """Command line: --run NAME (under the runs folder) or --run-dir PATH; prints the two paths."""
    ap = argparse.ArgumentParser(prog="python -m helpers.report", description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--run", help="run name under the runs folder ($KIT_RUNS_DIR or runs/)")
    g.add_argument("--run-dir", help="a run folder path")
    args = ap.parse_args(argv)
    run_dir = Path(args.run_dir) if args.run_dir else RunLayout.of(args.run).root
    try:
        out = write_report(run_dir)
    except FileNotFoundError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    missing = {k: v for k, v in out["sections"].items() if v != "ok"}
    print(f"report: {out['md']}\nreport: {out['html']}")
    for k, v in missing.items():
        print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
