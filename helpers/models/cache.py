"""Built model folders under the cache (the tiny model, converted packaged models): hashed, installed atomically.

A build is written into a temporary sibling folder, ends with a marker JSON listing every file's sha256, and
is renamed into place; a folder whose marker is missing or whose files no longer match is not a build.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
from pathlib import Path
from typing import Iterator

from helpers.io import read_json


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks (a model's weights need not fit in memory twice)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# Folders this process has hashed, with each file's (size, mtime): a 540 MB model is hashed once per process, and
# again only if a file changed since.
_VERIFIED: dict[Path, tuple] = {}


def _signature(path: Path, names: list[str]) -> tuple:
    stats = {n: (path / n).stat() for n in sorted(names)}
    return tuple((n, s.st_size, s.st_mtime_ns) for n, s in stats.items())


def is_complete(path: Path, marker: str) -> bool:
    """A finished build: the marker present and every file it lists has the recorded sha256."""
    try:
        info = read_json(path / marker)
        names = list(info["files"])
        signature = _signature(path, names + [marker])
        if _VERIFIED.get(path) == signature:
            return True
        ok = bool(names) and all(sha256_file(path / n) == h for n, h in info["files"].items())
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if ok:
        _VERIFIED[path] = signature
    return ok


@contextlib.contextmanager
def build_lock(final: Path) -> Iterator[None]:
    """An exclusive lock on <final>.lock for as long as one process builds that folder (others wait)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.with_name(final.name + ".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def install_dir(tmp: Path, final: Path, marker: str, *, keep_complete: bool = False) -> None:
    """Move a finished build into place; a stale or half-written folder there is moved aside and removed.

    keep_complete: where the folder's name already fixes its content (a hash of everything that decides it), a
    complete folder found there is as good as this build: keep it, never pull it from under a reader.
    """
    if keep_complete and is_complete(final, marker):
        return
    if final.exists():
        trash = final.with_name(f".{final.name}.{os.getpid()}.old")
        os.rename(final, trash)
        shutil.rmtree(trash, ignore_errors=True)
    try:
        os.rename(tmp, final)
    except OSError:
        if not is_complete(final, marker):  # another process won the race with a finished build: keep theirs
            raise
