"""Give a model's memory back before the next one loads: collect it, empty the accelerator's cache, say what moved.

On one 192 GB MI300X two copies of a 72B model (~145 GB each in bf16) cannot coexist, so a notebook or stage that
loads one model after another must drop the first completely before the second loads. A function cannot delete its
caller's names, so the pattern is two steps, both at the place that holds the model:

    gone = watch(model)                    # weak references: they keep nothing alive
    del model, tokenizer, agent            # every name that holds the model (an agent holds it too)
    free_memory(gone, label="before the export check")

A stage that loads its own model (helpers.train.train_adapter without `prepared`) returns nothing that holds it and
calls free_memory() itself once the model is out of scope. free_memory() says which watched objects survived (a
name still holding one): then the next load is the second copy that runs out of memory.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

GIB = 1024 ** 3


def accelerator_memory() -> dict:
    """{"allocated_gib", "reserved_gib"} on the current accelerator (CUDA or ROCm); zeros without one."""
    import torch
    if not torch.cuda.is_available():
        return {"allocated_gib": 0.0, "reserved_gib": 0.0}
    return {"allocated_gib": round(torch.cuda.memory_allocated() / GIB, 3),
            "reserved_gib": round(torch.cuda.memory_reserved() / GIB, 3)}


def watch(*objects: Any) -> list[weakref.ref]:
    """Weak references to `objects`, for free_memory() to report which of them are still alive."""
    return [weakref.ref(o) for o in objects if o is not None]


def free_memory(*watched: weakref.ref, label: str = "", quiet: bool = False) -> dict:
    """Collect garbage and return the accelerator's cached blocks; memory before and after, and which watched
    objects survived (printed as a warning even when quiet)."""
    import torch
    before = accelerator_memory()
    gc.collect()  # a PeftModel, its Trainer and hooks hold cycles: refcounting alone would keep them
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # kernels still queued may use the freed blocks: wait before handing them back
        # Freed blocks otherwise stay reserved by this process's caching allocator: fragments the next model's
        # tensors may not fit, and memory no other process (nor the numbers reported here) sees as free.
        torch.cuda.empty_cache()
    after = accelerator_memory()
    alive = [type(o).__name__ for o in (ref() for ref in watched) if o is not None]
    report = {"label": label, "before": before, "after": after, "still_alive": alive,
              "freed_gib": round(before["reserved_gib"] - after["reserved_gib"], 3)}
    _print(report, quiet)
    return report


def _print(report: dict, quiet: bool) -> None:
    """One line: reserved and allocated before -> after (unless quiet); a warning naming what is still alive."""
    b, a = report["before"], report["after"]
    where = f" {report['label']}" if report["label"] else ""
    if not quiet:
        print(f"[release]{where}: accelerator reserved {b['reserved_gib']:.2f} -> {a['reserved_gib']:.2f} GiB, "
              f"allocated {b['allocated_gib']:.2f} -> {a['allocated_gib']:.2f} GiB", flush=True)
    if report["still_alive"]:
        print(f"[release]{where}: warning: still referenced after del: {', '.join(report['still_alive'])} "
              "(a name or an object still holds it; the next load adds a second copy)", flush=True)
