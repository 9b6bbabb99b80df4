"""The writer's and the reasoner's stages from a shell: train the adapter, measure it, write the decision.

    python -m helpers.agents.stages writer --profile cpu [--run NAME] [--overrides JSON] [--no-resume]
    python -m helpers.agents.stages reasoner --profile cpu [--run NAME] [--overrides JSON] [--measure-only]
        [--no-resume]
    python -m helpers.agents.stages rl --profile cpu [--run NAME] [--overrides JSON] [--no-resume]
"""

from __future__ import annotations

import argparse
import json
import sys

from helpers import config, env
from helpers.agents.stages import reasoner_measure, reasoner_rl, reasoner_train, writer_measure, writer_train


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The stage to run and the profile it runs on."""
    ap = argparse.ArgumentParser(prog="python -m helpers.agents.stages", description=__doc__.splitlines()[0])
    stages = ap.add_subparsers(dest="stage", required=True)
    for name, what in (("writer", "train the question writer, measure it against the base -> agents/writer.json"),
                       ("reasoner", "train the reasoner, measure it against letter scoring -> agents/reasoner.json"),
                       ("rl", "GRPO from the trained reasoner on fresh puzzles -> models/reasoner_rl, "
                              "agents/reasoner_rl.json")):
        sp = stages.add_parser(name, help=what, description=what)
        sp.add_argument("--profile", default="smoke", help=f"one of {', '.join(config.available_profiles())}")
        sp.add_argument("--run", default=None, help="run name (default: the profile's)")
        sp.add_argument("--overrides", default="{}", help=f'JSON of dotted keys, e.g. \'{{"{name}.examples": 400}}\'')
        if name == "reasoner":
            sp.add_argument("--measure-only", action="store_true", help="measure the trained reasoner without training")
        sp.add_argument("--no-resume", action="store_true", help="start over instead of resuming a checkpoint")
    return ap.parse_args(argv)


def run_writer(cfg: config.Profile, rec: dict, *, resume: bool) -> str:
    """Train the profile's writer, measure it against the base; what the measurement says."""
    summary = writer_train.train(cfg, recommendation=rec, progress="lines", resume=resume)
    print(f"[writer] trained: loss {summary['first_loss']} -> {summary['last_loss']}, {summary['wall_seconds']:.0f}s")
    return writer_measure.describe(writer_train.measure_run(cfg, recommendation=rec))


def run_reasoner(cfg: config.Profile, rec: dict, *, measure_only: bool, resume: bool) -> str:
    """Train the profile's reasoner (unless measure_only), measure it against letter scoring; what that says."""
    if not measure_only:
        s = reasoner_train.train(cfg, recommendation=rec, progress="lines", resume=resume)
        print(f"[reasoner] trained: loss {s['first_loss']} -> {s['last_loss']}, {s['wall_seconds']:.0f}s")
    return reasoner_measure.describe(reasoner_train.measure_run(cfg, recommendation=rec))


def run_rl(cfg: config.Profile, rec: dict, *, resume: bool) -> str:
    """GRPO on the profile's rl settings; its rewards first and last, seconds per step and zero rewards by reason."""
    r = reasoner_rl.train(cfg, recommendation=rec, resume=resume, quiet=False)
    return (f"[rl] {r['steps']} steps from the {r['start']['from']} reasoner, {r['seconds_per_step']} s/step; rewards "
            f"{r['rewards']['first']} -> {r['rewards']['last']}; zero rewards {r['zero_reasons'] or 'none'}")


def main(argv: list[str] | None = None) -> int:
    """Command line: `writer`, `reasoner` or `rl`, then the profile and run."""
    args = parse(argv)
    if getattr(args, "measure_only", False) and args.no_resume:
        print(f"{args.stage}: --no-resume starts training over, and --measure-only trains nothing: give one",
              file=sys.stderr)
        return 2
    try:
        cfg = config.load_profile(args.profile, args.run, json.loads(args.overrides or "{}"))
        rec = env.read_recommendation(cfg)
        if args.stage == "rl":
            text = run_rl(cfg, rec, resume=not args.no_resume)
        else:
            text = (run_writer(cfg, rec, resume=not args.no_resume) if args.stage == "writer"
                    else run_reasoner(cfg, rec, measure_only=args.measure_only, resume=not args.no_resume))
    except (KeyError, ValueError) as exc:  # InputError is a ValueError: it names the file and key
        print(f"{args.stage}: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


raise SystemExit(main())
