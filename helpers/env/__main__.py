"""`python -m helpers.env memory|box|gpu-setup ...`: the environment stage's command lines.

    memory --model NAME [...]                  peak training memory for one model ("will it fit")
    box record | box constraints FILE          the box's torch stack: recorded once, FILE's pins filtered for it
    box plan [--python V --torch V] [--json]   the tested pin set for this box or a described one (exit 2: none)
    gpu-setup download|install|plan|check      make setup-gpu: pinned Unsloth, the box's torch stack untouched
    gpu-wheels --box FILE --python V [--cuda V] make gpu-wheels: the wheels an offline GPU box needs, <= 60 MiB
    profile NAME [--overrides JSON] [--run R]  the profile as it resolves, each key with the file it came from
`box` runs before make setup installs anything: this module and what it imports at the top are standard library
only; gpu_setup (which needs `packaging`) is imported when its command runs. make gpu-check is
`python -m helpers.gpu_check` (it imports the stages it checks, so it sits above them and above env).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from helpers import moved
from helpers.env import box, memory, pinsets


def _memory_parser(sub: argparse._SubParsersAction) -> None:
    """The memory estimator's arguments."""
    ap = sub.add_parser("memory", help="peak training memory for one model", description=memory.__doc__.splitlines()[0])
    ap.add_argument("--model", help="known name or alias, a config.json path or a folder holding one")
    ap.add_argument("--list-models", action="store_true", help="print the built-in model table")
    ap.add_argument("--method", default="lora", choices=memory.METHODS)
    ap.add_argument("--dtype", default="bf16", choices=tuple(memory.DTYPES) + tuple(memory.DTYPE_ALIASES))
    for flag, default in (("--rank", 64), ("--batch-size", 4), ("--seq-len", 2048)):
        ap.add_argument(flag, type=int, default=default)
    ap.add_argument("--target-modules", default="all-linear", help="all-linear or a comma list, e.g. q_proj,v_proj")
    ap.add_argument("--grad-checkpointing", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--optimizer", default="adamw_torch", choices=tuple(memory.OPTIMIZERS))
    # Default: the kit's accelerator path (Unsloth, as the seeds ran); plain PEFT costs ~20 GiB more on 72B.
    ap.add_argument("--backend", default="unsloth", choices=memory.BACKENDS,
                    help="unsloth (the kit's GPU path) or transformers (plain PEFT, fp32 loss upcast)")
    ap.add_argument("--lora-dropout", type=float, default=0.0)
    ap.add_argument("--device-gib", type=float, help="device memory in GiB (MI300X: 191.7); adds a fits verdict")
    ap.add_argument("--headroom", type=float, default=0.05, help="fraction of the device kept free")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run_memory(args: argparse.Namespace) -> int:
    """The breakdown for one model (or the model table); bad input exits 2 with a one-line error."""
    try:
        if args.list_models:
            rows = {n: round(memory.count_params(memory.get_shape(n))["total"] / 1e9, 2) for n in memory.KNOWN_MODELS}
            print(json.dumps(rows, indent=2) if args.json else "\n".join(f"{n:<32}{b:>8.2f}B" for n, b in rows.items()))
            return 0
        if not args.model:
            raise ValueError("--model is required (or --list-models)")
        est = memory.estimate(args.model, method=args.method, dtype=args.dtype, rank=args.rank,
                              target_modules=args.target_modules, batch_size=args.batch_size, seq_len=args.seq_len,
                              grad_checkpointing=args.grad_checkpointing, optimizer=args.optimizer,
                              backend=args.backend, lora_dropout=args.lora_dropout)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    out = est.to_dict()
    if args.device_gib is not None:
        out.update(device_gib=args.device_gib, headroom=args.headroom,
                   fits=memory.fits(est, args.device_gib, args.headroom))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    st, p = est.settings, est.params
    print(f"{est.model}: {p['total'] / 1e9:.2f}B params ({p['active'] / 1e9:.2f}B active), "
          f"{est.trainable_params / 1e6:,.1f}M trainable")
    print(f"{st['method']}{'' if st['rank'] is None else ' r=%d' % st['rank']} {st['dtype']}, batch "
          f"{st['batch_size']} x seq {st['seq_len']}, grad checkpointing {'on' if st['grad_checkpointing'] else 'off'}, "
          f"{st['optimizer']}, {st['backend']}")
    for part, nbytes in [*out["parts"].items(), ("total", est.total_bytes)]:
        print(f"  {part:<12}{nbytes / memory.GIB:>9.2f} GiB")
    if args.device_gib is not None:
        print(f"  fits {args.device_gib:g} GiB with {args.headroom:.0%} headroom: {'yes' if out['fits'] else 'NO'}")
    return 0


def _box_parser(sub: argparse._SubParsersAction) -> None:
    """`box record` and `box constraints FILE`."""
    ap = sub.add_parser("box", help="the box's torch stack (standard library only)")
    acts = ap.add_subparsers(dest="action", required=True)
    acts.add_parser("record", help="record this box's torch stack in the venv, once")
    pins = acts.add_parser("constraints", help="FILE's pins for this box, on stdout")
    pins.add_argument("file", type=Path)
    plan = acts.add_parser("plan", help="the tested pin set for this box, or a described one (exit 2: none fits)")
    plan.add_argument("--python", help="a described box's Python, e.g. 3.10 (default: this one)")
    plan.add_argument("--torch", help="a described box's torch, e.g. 2.5.1+rocm6.2, or 'none' (default: this one's)")
    plan.add_argument("--has", default=None, metavar="NAME==V,...",
                      help="a described box's own unsloth, transformers and trl, e.g. unsloth==2026.11.1,"
                           "transformers==4.56.2,trl==0.23.0 (default: this box's, when it is not described)")
    plan.add_argument("--json", action="store_true", help="the plan as JSON")
    plan.add_argument("--pins", action="store_true", help="the chosen set as one constraints file, on stdout")
    plan.add_argument("--stack", choices=sorted({s.stack for s in pinsets.PIN_SETS}),
                      help="only the sets that carry this stack (make test-container: the challenge container's)")
    plan.add_argument("--setup", type=Path, metavar="VENV",
                      help="make setup's first step: refuse in one line, or record the plan in VENV")


def run_box(args: argparse.Namespace) -> int:
    """Record the box's stack (the first record stands), print FILE's pins with the box's own versions held, or plan
    the pin set."""
    if args.action == "plan":
        return run_plan(args)
    if args.action == "record":
        wrote = box.record_stack(box.installed_versions(), box.stack_path())
        print(f"setup: {'recorded' if wrote else 'kept the record of'} this box's torch stack in {box.stack_path()}")
    else:
        print("\n".join(box.constraint_lines(args.file.read_text().splitlines(), box.installed_versions())))
    return 0


def run_plan(args: argparse.Namespace) -> int:
    """`box plan`: one line (or JSON, or the pins); exit 2 when no tested set fits the box."""
    python, torch = pinsets.this_box()
    if args.torch is not None:
        torch = None if args.torch.lower() == "none" else args.torch
    if args.setup is not None:
        status, line = pinsets.setup_check(args.setup, torch)
        print(line, file=sys.stderr if status else sys.stdout)
        return status
    described = args.python is not None or args.torch is not None
    try:
        own = (pinsets.parse_has(args.has) if args.has is not None
               else {} if described else pinsets.this_box_stack())
    except ValueError as exc:
        print(f"setup: REFUSED: {exc}", file=sys.stderr)
        return 2
    p = pinsets.plan(args.python or python, torch, stack=args.stack, own=own)
    if args.pins:
        if not p["ok"]:
            print(pinsets.describe(p), file=sys.stderr)
            return 2
        print(pinsets.constraint_text(next(s for s in pinsets.PIN_SETS if s.name == p["pins"])), end="")
        return 0
    print(json.dumps(p, indent=2) if args.json else pinsets.describe(p))
    return 0 if p["ok"] else 2


def _gpu_setup_parser(sub: argparse._SubParsersAction) -> None:
    """make setup-gpu's four steps."""
    ap = sub.add_parser("gpu-setup", help="pinned Unsloth on a GPU box, its torch stack untouched")
    acts = ap.add_subparsers(dest="action", required=True)
    acts.add_parser("download", help="fetch the pinned unsloth / unsloth_zoo wheels (and the starter stack's "
                                     "transformers / trl, for its seam test) into the venv")
    inst = acts.add_parser("install", help="install Unsloth without touching the box's torch stack")
    inst.add_argument("--cpu-rehearsal", action="store_true",
                      help="run on a CPU torch and past box findings (the GPU-stack test tier; never on a team's box)")
    plan = acts.add_parser("plan", help="what install would do")
    plan.add_argument("--versions", type=Path, help="judge a constraints file's versions instead of this Python's")
    acts.add_parser("check", help="the environment check: which backend runs, and why")


def run_gpu_setup(args: argparse.Namespace) -> int:
    """One make setup-gpu step."""
    from helpers.env import gpu_setup  # needs `packaging`, which box's commands may run without
    if args.action == "download":
        print("setup: Unsloth wheels for the wheel test: " + ", ".join(w.name for w in gpu_setup.download()))
        print("setup: the starter stack's wheels for its seam test: "
              + ", ".join(w.name for w in gpu_setup.starter_wheels()))
        return 0
    if args.action == "install":
        return gpu_setup.install(args.cpu_rehearsal)
    if args.action == "plan":
        return gpu_setup.plan_on(args.versions)
    return gpu_setup.check()


def _gpu_wheels_parser(sub: argparse._SubParsersAction) -> None:
    """make gpu-wheels' arguments."""
    ap = sub.add_parser("gpu-wheels", help="the folder of wheels an offline GPU box needs (Unsloth, GRPO)")
    ap.add_argument("--box", type=Path, required=True, help="the box's package list: pip list --format=freeze there")
    ap.add_argument("--python", required=True, help="the box's Python, e.g. 3.12")
    ap.add_argument("--cuda", help="the box's CUDA, e.g. 13.0: carry bitsandbytes repacked for it if the box lacks it")
    ap.add_argument("--dest", type=Path, help="the folder (default: runs/gpu-wheels)")
    ap.add_argument("--trust-unlisted", action="store_true",
                    help="a bare name in the box list meets any version bound (each one listed as assumed)")


def run_gpu_wheels(args: argparse.Namespace) -> int:
    """Build the folder (helpers.env.wheels)."""
    from helpers import config, layout
    from helpers.env import wheels  # needs `packaging`
    return wheels.main(args.box, args.python, args.cuda, args.dest or layout.RunLayout.of(layout.GPU_WHEELS).root,
                       config.cache_root() / layout.GPU_WHEELS, args.trust_unlisted)


def _profile_parser(sub: argparse._SubParsersAction) -> None:
    """The resolved profile's arguments."""
    ap = sub.add_parser("profile", help="the profile as it resolves, each key with the file it came from",
                        description="Every key of the profile as it resolves, one a line, with where its value came "
                                    "from: configs/base.yaml, each file of the extends chain, the overrides, RUN, or "
                                    "the section's own default. Exit 2 on a bad profile or override (one line).")
    ap.add_argument("name", help="a profile of configs/ (smoke, cpu, laptop, mi300x, tournament, ...)")
    ap.add_argument("--overrides", default="{}", help="dotted profile keys as JSON, as make pipeline takes them: "
                                                      "'{\"train.lr_start\": 2.0e-5}'")
    ap.add_argument("--run", help="the run name (RUN); default: the profile's own")


def run_profile(args: argparse.Namespace) -> int:
    """Print the resolved profile (python -m helpers.config show's lines); 2 with one line on bad input."""
    from helpers import config  # yaml: after make setup, unlike box
    return config.main(["show", args.name, "--overrides", args.overrides, *(["--run", args.run] if args.run else [])])


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the one command it names."""
    if (sys.argv[1:] if argv is None else argv)[:1] == ["gpu-check"]:  # its own command now (it imports the stages
        moved.refuse("helpers.env gpu-check")                          # it checks: env sits below them)
    ap = argparse.ArgumentParser(prog="python -m helpers.env", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    _memory_parser(sub)
    _box_parser(sub)
    _gpu_setup_parser(sub)
    _gpu_wheels_parser(sub)
    _profile_parser(sub)
    args = ap.parse_args(argv)
    run = {"memory": run_memory, "box": run_box, "gpu-setup": run_gpu_setup, "gpu-wheels": run_gpu_wheels,
           "profile": run_profile}[args.command]
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
