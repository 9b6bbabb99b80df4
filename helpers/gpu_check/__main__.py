"""`python -m helpers.gpu_check`: make gpu-check, the kit's GPU path run on this box in minutes.

    [--device auto|cpu] [--model PATH] [--out DIR] [--steps N] [--profile NAME] [--overrides JSON]
Exit 0: no step failed; 1: a step failed; 2: no GPU, or bad arguments (one line).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    """make gpu-check's arguments."""
    ap = argparse.ArgumentParser(
        prog="python -m helpers.gpu_check",
        description="Train LoRA, rsLoRA and DoRA through the kit's loop on this box's GPU, score letters against the "
                    "CPU, run the reasoner and two GRPO steps, and compare the memory estimate with the measured "
                    "peak. Exit 0: no step failed; 1: a step failed; 2: no GPU (one line).")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu"),
                    help="auto: the GPU torch sees, else exit 2; cpu: the whole check on the CPU (GPUs hidden)")
    ap.add_argument("--model", help="a local model folder (Qwen2/Llama, safetensors); default: the tiny model, built "
                                    "locally")
    ap.add_argument("--out", type=Path, help="where to write (default runs/gpu-check, runs/gpu-check-cpu on the CPU)")
    ap.add_argument("--steps", type=int, default=30, help="optimizer steps per adapter, about (default 30)")
    ap.add_argument("--profile", default="smoke", help="the profile checked, with configs/overlays/gpu-check.yaml "
                                                       "over it (default smoke: its adapters learn on the tiny model)")
    ap.add_argument("--overrides", default="{}", help="dotted profile keys over the overlay, as JSON, e.g. "
                                                      "'{\"model.use_unsloth\": false}'")
    return ap


def run_gpu_check(args: argparse.Namespace) -> int:
    """The check; its exit status."""
    from helpers import config
    from helpers.gpu_check import run_check  # yaml, then torch and the rest inside: after --device cpu hid GPUs
    try:
        overrides = config.parse_overrides(args.overrides)
    except ValueError as exc:
        print(f"gpu-check: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    argv = [f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v is not None]
    return run_check(args.device, args.model, args.out, args.steps, args.profile, overrides, argv=argv)


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the check."""
    return run_gpu_check(parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
