"""Which process this is under torchrun / accelerate, and the multi-GPU modes the chunked trainer refuses."""

from __future__ import annotations

import os


def world_size() -> int:
    """Processes in this run (torchrun / accelerate set WORLD_SIZE)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """Rank 0 (or a single process)."""
    return os.environ.get("RANK", "0") == "0"


def refuse_fsdp() -> None:
    """Raise under FSDP: each rank's chunk checkpoint would hold only its own shard of the adapter."""
    if os.environ.get("ACCELERATE_USE_FSDP", "").lower() == "true":
        raise NotImplementedError("FSDP is not supported by the chunked trainer yet: its checkpoints would hold one "
                                  "rank's shard. Use one GPU (the original team's 72B fits one MI300X) or DDP (docs/gpu.md, "
                                  "\"Several GPUs\").")
