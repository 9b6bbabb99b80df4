"""Built model folders under the cache (the tiny model, converted packaged models): hashed, installed atomically.

A build is written into a temporary sibling folder, ends with a marker JSON listing every file's sha256, and
is renamed into place; a folder whose marker is missing or whose files no longer match is not a build.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from helpers.io import read_json


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks (a model's weights need not fit in memory twice)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_complete(path: Path, marker: str) -> bool:
    """A finished build: the marker present and every file it lists has the recorded sha256."""
    try:
        info = read_json(path / marker)
        return bool(info["files"]) and all(sha256_file(path / n) == h for n, h in info["files"].items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def install_dir(tmp: Path, final: Path, marker: str) -> None:
    """Move a finished build into place; a stale or half-written folder there is moved aside and removed."""
    if final.exists():
        trash = final.with_name(f".{final.name}.{os.getpid()}.old")
        os.rename(final, trash)
        shutil.rmtree(trash, ignore_errors=True)
    try:
        os.rename(tmp, final)
    except OSError:
        if not is_complete(final, marker):  # another process won the race with a finished build: keep theirs
            raise
