"""Train one adapter (LoRA / rsLoRA / DoRA) through the curriculum chunks with replay, resumable after a crash.

    python -m helpers.train --profile smoke --model model1_lora [--run NAME] [--overrides JSON] [--no-resume]
    torchrun --nproc_per_node 2 -m helpers.train --profile smoke --model model1_lora --run-name NAME  # DDP
"""

from __future__ import annotations

import argparse
import sys

from helpers import config
from helpers.train.run import train_adapter
from helpers.train.world import is_main_process


def main(argv: list[str] | None = None) -> int:
    """Command line: train one adapter of a profile (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m helpers.train", description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="smoke", help=f"one of {', '.join(config.available_profiles())}")
    ap.add_argument("--model", required=True, help="a key of the profile's models, e.g. model1_lora")
    # torchrun reads "--run" as an abbreviation of its own --run-path: under torchrun write --run-name.
    ap.add_argument("--run", "--run-name", dest="run", default=None, help="run name (default: the profile's)")
    ap.add_argument("--overrides", default="{}", help='JSON of dotted keys, e.g. \'{"train.batch_size": 8}\'')
    ap.add_argument("--curriculum", default=None, help="curriculum JSONL (default runs/<run>/curriculum/train.jsonl)")
    ap.add_argument("--out-dir", default=None, help="output folder (default runs/<run>/models/<model>)")
    ap.add_argument("--no-resume", action="store_true", help="start over instead of resuming after the last chunk")
    args = ap.parse_args(argv)
    try:
        cfg = config.load_profile(args.profile, args.run, config.parse_overrides(args.overrides))
    except (KeyError, ValueError) as exc:
        print(f"train: {exc}", file=sys.stderr)
        return 2
    if args.model not in cfg.models:
        print(f"train: no model '{args.model}' in profile {args.profile} (models: {', '.join(cfg.models)})",
              file=sys.stderr)
        return 2
    summary = train_adapter(cfg, args.model, curriculum_path=args.curriculum, out_dir=args.out_dir,
                            resume=not args.no_resume, progress="lines")
    if is_main_process():
        print(f"[train {args.model}] done: {summary['chunks_done']}/{summary['chunks_total']} chunks, loss "
              f"{summary['first_loss']} -> {summary['last_loss']}, {summary['wall_seconds']:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
