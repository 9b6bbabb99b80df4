"""The reasoning A-agent's stage: training chats (solver-proven puzzles; the reply is the solver's step-by-step
deduction, then "Answer: <letter>") -> its own adapter (config.REASONER under runs/<run>/models/, trained like the
others by helpers.agents.own_adapter with the profile's `reasoner:` settings) -> letter-only against reasoning on
held-out puzzles (helpers.agents.reason_measure), which decides agents.answer_mode: auto. Notebook 08 runs it; so can
a shell:

    python -m helpers.agents.reason_train --profile cpu [--run NAME] [--overrides JSON]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any, Sequence

from helpers import config, io, puzzles
from helpers.agents import build, reason_measure
from helpers.agents.own_adapter import train_own_adapter, write_chats
from helpers.agents.reason import reason_messages, reason_reply
from helpers.config import REASONER
from helpers.io import stamp
from helpers.layout import RunLayout
from helpers.records import LETTERS


def reasoner_records(n: int, *, seed: int, kinds: Sequence[str], levels: Sequence[int]) -> list[dict]:
    """n training records: each a generated puzzle's shared record with "chat": the reasoning prompt and, as the reply,
    the solver's deduction then "Answer: <letter>" ("task": "reasoner"). Every family x level in turn; a combination's
    key letter moves on each round, so every family and level learns every letter."""
    rng, out = random.Random(f"reasoner:{seed}"), []
    for i, (kind, level, target) in enumerate(reason_measure.puzzle_cycle(n, kinds, levels)):
        rec = puzzles.make_puzzle(kind, level, target, rng, {}, id=f"reasoner-{seed}-{i:06d}")
        chat = reason_messages(rec) + [{"role": "assistant",
                                        "content": reason_reply(rec["explanation"], LETTERS[rec["answer"]])}]
        out.append({**rec, "chat": chat, "task": "reasoner"})
    return out


def build_data(cfg: dict) -> Path:
    """runs/<run>/agents/reasoner_train.jsonl: reasoner.examples chats over agents.puzzle_kinds x reasoner.levels."""
    return write_chats(cfg, REASONER, RunLayout.of(cfg).reasoner_data, lambda n: reasoner_records(
        n, seed=cfg["seed"], kinds=cfg["agents"]["puzzle_kinds"], levels=cfg["reasoner"]["levels"]))


def train(cfg: dict, *, recommendation: dict | None = None, progress: Any = None, resume: bool = True) -> dict:
    """Build the chats and train the reasoner's adapter (resumable like the others); returns its training summary."""
    return train_own_adapter(cfg, REASONER, build_data(cfg), recommendation=recommendation, progress=progress,
                             resume=resume)


def measure_run(cfg: dict, *, model: Any = None, tokenizer: Any = None, sel: dict | None = None,
                recommendation: dict | None = None) -> dict:
    """Letter-only (the A-agent's selection) against reasoning (the reasoner) on reasoner.measure held-out puzzles, on
    cfg["agents"]'s budget; writes agents/reasoner.json (with the settings it measured) and returns it.
    model/tokenizer/sel: a team model already holding the selection's members and the reasoner (else loaded)."""
    if model is None:
        sel = build.selection(cfg)
        model, tokenizer, info = build.load_team_model(cfg, sel["members"] + [REASONER], recommendation)
        sel = build.loaded_selection(sel, info)
    if REASONER not in getattr(model, "peft_config", {}):
        raise io.InputError(RunLayout.of(cfg).adapter_dir(REASONER), None, None,
                            "missing: the reasoner is not trained (notebook 08 section 4, or this module's command)")
    acfg = {**cfg["agents"], "model_question_share": 0.0}
    questions = reason_measure.held_out(cfg["reasoner"]["measure"], seed=cfg["seed"],
                                        kinds=acfg["puzzle_kinds"], levels=cfg["reasoner"]["levels"])
    report = {mode: reason_measure.measure(build.answer_agent(model, tokenizer, sel, acfg, mode=mode), questions)
              for mode in reason_measure.MODES}
    mode, why = reason_measure.justified_mode(report)
    report.update(justified_mode=mode, why=f"answer_mode {mode}: {why}", letter_members=sel["members"])
    lay = RunLayout.of(cfg)
    lay.made(lay.agents_dir)
    io.write_json(lay.reasoner_report, {**report, **stamp(reason_measure.measured_settings(cfg))})
    return report


def main(argv: list[str] | None = None) -> int:
    """Command line: train the profile's reasoner, measure it against letter scoring, write agents/reasoner.json."""
    from helpers import env
    ap = argparse.ArgumentParser(prog="python -m helpers.agents.reason_train", description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="smoke", help=f"one of {', '.join(config.available_profiles())}")
    ap.add_argument("--run", default=None, help="run name (default: the profile's)")
    ap.add_argument("--overrides", default="{}", help='JSON of dotted keys, e.g. \'{"reasoner.examples": 400}\'')
    ap.add_argument("--measure-only", action="store_true", help="measure the trained reasoner without training")
    args = ap.parse_args(argv)
    try:
        cfg = config.load_profile(args.profile, args.run, json.loads(args.overrides or "{}"))
        rec = env.read_recommendation(cfg)
        if not args.measure_only:
            s = train(cfg, recommendation=rec, progress="lines")
            print(f"[reasoner] trained: loss {s['first_loss']} -> {s['last_loss']}, {s['wall_seconds']:.0f}s")
        report = measure_run(cfg, recommendation=rec)
    except (KeyError, ValueError) as exc:  # InputError is a ValueError: it names the file and key
        print(f"reason_train: {exc}", file=sys.stderr)
        return 2
    print(reason_measure.describe(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
