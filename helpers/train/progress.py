"""What a person sees while an adapter trains: a tqdm bar in a notebook or terminal, one line per chunk headless."""

from __future__ import annotations

import sys
from typing import Any

from helpers.train import telemetry
from helpers.train.state import ChunkRun


def progress_mode(progress: Any) -> str:
    """"off", "bar" or "lines": as asked, else a bar when a person watches and lines when headless."""
    if progress is False or progress == "off":
        return "off"
    if progress in ("bar", "lines"):
        return progress
    interactive = telemetry.in_notebook() or sys.stderr.isatty()
    return "bar" if interactive and not telemetry.headless() else "lines"


class Progress:
    """What a person sees per chunk: a tqdm bar in a notebook or terminal, one line per chunk headless."""

    def __init__(self, run: ChunkRun):
        self.run, self.bar = run, None
        name, spec, info = run.name, run.spec, run.info
        if run.mode == "bar" and run.main:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=len(run.chunks), initial=run.start, desc=f"{name} chunks", unit="chunk")
        if run.mode == "lines" and run.main:
            print(f"[train {name}] {spec.method} r={spec.r} alpha={spec.alpha}: {len(run.chunks)} chunks, "
                  f"{info['trainable_params']:,} trainable of {info['total_params']:,} params, backend "
                  f"{info['backend']}, {info['dtype']}, world {run.world}"
                  + (f"; resuming after chunk {run.resumed_from}" if run.resumed_from is not None else ""), flush=True)

    def chunk_done(self, row: dict) -> None:
        """Advance the bar, or print the chunk's line (examples, steps, lr, loss, tokens/s)."""
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(loss=row["loss"])
        if self.run.mode == "lines" and self.run.main:
            print(f"[train {self.run.name}] chunk {row['chunk'] + 1}/{len(self.run.chunks)}: {row['examples']} "
                  f"examples ({row['replayed']} replayed), {row['steps']} steps at lr {row['lr']:.2e}, loss "
                  f"{row['loss']:.4f}, {row['tokens'] / max(row['seconds'], 1e-9):,.0f} tok/s, {row['seconds']:.1f}s",
                  flush=True)

    def close(self) -> None:
        """Close the bar (if any)."""
        if self.bar is not None:
            self.bar.close()
