"""Small seams between transformers versions and run modes, shared by every model loader (no heavy imports)."""

from __future__ import annotations

import os
from typing import Any

from helpers.io import package_version, version_tuple

# transformers 4.56 renamed from_pretrained(torch_dtype=) to dtype=; 4.51.3 (challenge container) only knows the old one.
DTYPE_KWARG_SINCE = (4, 56)


def dtype_kwarg(dtype: Any, transformers_version: str | None = None) -> dict:
    """{'dtype': d} on transformers >= 4.56 (and 5.x), {'torch_dtype': d} on older (4.51.3)."""
    ver = version_tuple(transformers_version or package_version("transformers"))
    return {"dtype": dtype} if ver >= DTYPE_KWARG_SINCE else {"torch_dtype": dtype}


def quiet_progress_if_headless() -> None:
    """Pipeline runs (KIT_HEADLESS=1): no per-tensor "Loading weights" bars from transformers in the log."""
    if os.environ.get("KIT_HEADLESS") == "1":
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
