"""`python -m helpers.data build SOURCE... --out DIR`: the dataset build's command line."""

from __future__ import annotations

import argparse
import sys

from helpers.data.build import build_dataset
from helpers.data.summary import summary_table
from helpers.io import InputError


def main(argv: list[str] | None = None) -> int:
    """`build SOURCE... --out DIR`; bad input prints one located line on stderr and exits 2."""
    ap = argparse.ArgumentParser(prog="python -m helpers.data", description="Build the multiple-choice dataset.")
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="read sources, convert, dedupe, split; write train/val/report")
    b.add_argument("sources", nargs="+", help="files, folders or hub:<dataset>[:<config>][@<split>]")
    b.add_argument("--out", required=True, help="output folder")
    b.add_argument("--puzzles", type=int, default=0, help="generated puzzles to add (default 0)")
    b.add_argument("--puzzle-kinds", nargs="+", default=None, help="puzzle families (default: every one)")
    b.add_argument("--val-fraction", type=float, default=0.1, help="share held out per source (default 0.1)")
    b.add_argument("--seed", type=int, default=1234)
    b.add_argument("--strict", action="store_true", help="stop at the first bad record instead of counting it")
    b.add_argument("--format", default=None, help="force one format for every file (default: detect)")
    b.add_argument("--keep-order", action="store_true", help="keep each question's choice order (no letter balancing)")
    args = ap.parse_args(argv)
    try:
        report = build_dataset(args.sources, out_dir=args.out, puzzles=args.puzzles, val_fraction=args.val_fraction,
                               seed=args.seed, tolerant=not args.strict, fmt=args.format,
                               balance=not args.keep_order, puzzle_kinds=args.puzzle_kinds)
    except (InputError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary_table(report))
    print(f"wrote {args.out}/train.jsonl ({report['totals']['train']:,}), val.jsonl ({report['totals']['val']:,}), "
          "report.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
