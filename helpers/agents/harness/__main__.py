"""The harness export from a shell: a run's agents written as the folder the challenge's agents/ takes.

    python -m helpers.agents.harness export --profile mi300x --run NAME --out DIR [--link-adapters]
        [--model_share 0.2] [--answer_mode letter|reason]

The agents themselves run with the harness's flags: `python -m helpers.agents question|answer`
(helpers.agents.harness.cli).
"""

from __future__ import annotations

import argparse
import sys

from helpers import config
from helpers.agents.harness import export
from helpers.io import InputError


def parse(argv: list[str] | None) -> argparse.Namespace:
    """`export` and its flags: --profile/--run pick the run whose adapters and ensemble are exported to --out."""
    ap = argparse.ArgumentParser(prog="python -m helpers.agents.harness", description=__doc__.splitlines()[0])
    commands = ap.add_subparsers(dest="command", required=True)
    sp = commands.add_parser("export", help=export.__doc__.splitlines()[0], description=export.__doc__.splitlines()[0])
    sp.add_argument("--profile", default="smoke")
    sp.add_argument("--run", default=None)
    sp.add_argument("--out", required=True, help="folder to write (its contents go into the challenge's agents/)")
    sp.add_argument("--link-adapters", action="store_true", help="record adapter paths instead of copying them")
    sp.add_argument("--model_share", type=float, default=None, help="share of questions the model tries first")
    sp.add_argument("--answer_mode", choices=config.ANSWER_MODES, default=None,
                    help="letter scoring or reasoning (default: the profile's agents.answer_mode, auto = measured)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Command line: export a run's agents to --out."""
    args = parse(argv)
    try:
        cfg = config.load_profile(args.profile, args.run)
        from helpers import env
        conf = export.export(cfg, args.out, link_adapters=args.link_adapters,
                             recommendation=env.read_recommendation(cfg),
                             model_question_share=args.model_share, answer_mode=args.answer_mode)
    except (InputError, KeyError, ValueError) as exc:
        print(f"export: {exc}", file=sys.stderr)
        return 2
    print(f"exported {conf['members']} ({conf['selection']['source']}, answers by {conf['agents']['answer_mode']}) "
          f"on {conf['base']} to {args.out}; "
          f"copy its contents into the challenge's agents/ folder")
    return 0


raise SystemExit(main())
