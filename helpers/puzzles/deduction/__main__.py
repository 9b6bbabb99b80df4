"""python -m helpers.puzzles.deduction --measure [--n 100] [--seed 0] [--tokenizer DIR]: the written deductions'
lengths per family and level as a markdown table (DIR: a tokenizer.json folder, e.g. the tiny model's)."""

from __future__ import annotations

import argparse
from pathlib import Path

from helpers.puzzles.deduction.measure import measure, table


def token_counter(folder: str):
    """A function counting a text's tokens with the tokenizer.json in folder (no special tokens)."""
    from tokenizers import Tokenizer  # only this option needs it
    tok = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def main(argv: list[str] | None = None) -> int:
    """Parse the flags and print the table."""
    parser = argparse.ArgumentParser(prog="python -m helpers.puzzles.deduction", description=__doc__)
    parser.add_argument("--measure", action="store_true", help="measure the deductions' lengths")
    parser.add_argument("--n", type=int, default=100, help="puzzles per family and level")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tokenizer", help="a folder holding tokenizer.json, to count tokens too")
    args = parser.parse_args(argv)
    if not args.measure:
        parser.print_help()
        return 0
    print(table(measure(args.n, args.seed, tokens=token_counter(args.tokenizer) if args.tokenizer else None)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
