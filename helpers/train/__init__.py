"""Train one adapter (LoRA / rsLoRA / DoRA) through the curriculum chunks with replay, resumable after a crash.

Parts: run (the chunk loop, train_adapter), adapter (load the base, attach the adapter), state (what a run carries
and how it resumes), outputs (checkpoints, summary.json, plot), progress, world (ranks), replay (reservoir buffer,
chunk mixing), data, hf, checkpoints, telemetry; the command line in __main__. The lr and replay share per chunk
are the curriculum's (helpers.curriculum.schedule).
"""

from helpers.train.adapter import adapter_summary, prepare_adapter
from helpers.train.run import train_adapter

__all__ = ["adapter_summary", "prepare_adapter", "train_adapter"]
