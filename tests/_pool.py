"""One shared sample of generated puzzles per family and level, built once from fixed seeds and kept on disk: the
statistical tests read the same records instead of each building its own.

A family's pool is puzzles.generate(3 * size(kind), seed=SEED, kinds=(kind,)), its levels cycling as the data build
makes them; records(kind, level) is one level's share of it. Each item has its own seeded generator and duplicates
are settled in item order, so the first n records of a level come out the same whatever the pool's size, and a test
that needs fewer takes a prefix. records(kind, level, form=f): one question form (make_puzzle(form=f) from one seeded
stream), for forms too rare in a family's own mix. Records are plain JSON (they round-trip exactly), so a pool is one
file, <KIT_CACHE_DIR>/puzzle-pool/<fingerprint>/<kind>[-<level>-<form>].json, the generation's stats beside the
records. The fingerprint hashes this file, the source of every helpers module the generators import (read from their
import statements, function-level ones too), the sizes and the seed: changed code builds a new pool. Not the Python
version: the generators draw the same records on 3.10, 3.11 and 3.12 (test_puzzles checks it on every tier's Python),
so the container and gpu-stack tiers read the pool the main tier built, or build it for it. A file is written to a
temp file and os.replace'd under an fcntl lock, so two xdist workers never build it twice, and warm() builds first
the files no other worker is building, so two workers share the work. cached() keeps any other JSON-able sample the
same way (the Q-agent's questions, a trained tokenizer).

KIT_POOL_SEED=<n> draws every pool from another seed, to see a statistical test hold on more than one sample.

`python tests/_pool.py [--background] [kind ...]` builds every (or each given) family's pool and every one-form pool
the tests read (warm_all): `make pipeline` runs it with --background (lowest_priority) beside the notebooks, on the
core they leave idle, so the `make test` after it starts warm.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import inspect
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from helpers import config, puzzles
from helpers.puzzles import catalogue

ROOT = Path(__file__).resolve().parent.parent
SEED = int(os.environ.get("KIT_POOL_SEED", "26"))
PUZZLE_ROOTS = ("helpers.puzzles",)
# Records per family and level: the most any test takes. The first three families 668 (test_puzzles' bulk check
# takes 556 of each level, 5,004 in all, and its tokenizer's 1,008 texts the next 112), the other fast families 240
# (test_puzzle_variety's level-3 sample; test_blind_strategies takes 200), the exact-solver seating families 40
# (~0.1-0.3 s a puzzle: test_blind_strategies and test_puzzle_variety take all 40). One form, per level: what its test
# takes (test_blind_strategies: the statements 100, the blood-relation keys' spread 120, the coded expressions 100).
CLASSIC, FAST, SLOW = 668, 240, 40
ONE_FORM = {"statement": 100, "relation": 120, "expression": 100}

_MEMO: dict[Path, Any] = {}
_FINGERPRINTS: dict[tuple, str] = {}


def size(kind: str, form: str | None = None) -> int:
    """The records a pool holds per level (of this family, or of one form at one level)."""
    if form is not None:
        return ONE_FORM[form]
    return CLASSIC if kind in puzzles.CLASSIC_KINDS else FAST if kind in puzzles.FAST_KINDS else SLOW


def records(kind: str, level: int, n: int | None = None, form: str | None = None) -> list[dict]:
    """The first n (default all) records of the family's pool at this level (of one question form if given)."""
    if form is None:
        recs = _pool(kind)["records"][puzzles.LEVELS.index(level)::len(puzzles.LEVELS)]
    else:
        recs = _pool(kind, level, form)["records"]
    if n is not None and n > len(recs):
        raise ValueError(f"the {kind} level {level} pool holds {len(recs)} records, not {n}: raise its size")
    return recs[:n]


def one_form_levels(form: str) -> list[tuple[str, int]]:
    """The (kind, level) whose question mix asks `form`: the one-form pools of that form that the tests read."""
    return [(kind, level) for kind in puzzles.KINDS for level in puzzles.LEVELS
            if dict(catalogue.form_shares(kind, level)).get(form, 0) > 0]


def stats(kind: str) -> dict:
    """What building the family's pool cost: attempts, accepted records and every rejection by reason."""
    return _pool(kind)["stats"]


def warm(kinds: Iterable[str]) -> None:
    """Build every family's pool not yet on disk: first those no other process is building, then wait for the rest
    (so two xdist workers asking for the same pools build about half each)."""
    kinds = list(kinds)
    for wait in (False, True):
        for kind in kinds:
            _pool(kind, wait=wait)


def warm_all(kinds: Iterable[str] = puzzles.KINDS) -> None:
    """Build the families' pools, then their one-form pools of one_form_levels (what `make test` reads cold)."""
    kinds = list(kinds)
    warm(kinds)
    for form in ONE_FORM:
        for kind, level in one_form_levels(form):
            if kind in kinds:
                _pool(kind, level, form)


def cached(name: str, build: Callable[[], Any], roots: tuple[str, ...] = PUZZLE_ROOTS,
           extra: tuple = ()) -> Any:
    """build()'s JSON-able result, built once for the source of the helpers modules `roots` import, of the module
    that defines build, and `extra` (what else decides it: parameters, data files' text, library versions)."""
    extra = (*extra, inspect.getsource(sys.modules[build.__module__]))
    return _load_or_build(folder(roots, extra) / f"{name}.json", build, wait=True)


def folder(roots: tuple[str, ...] = PUZZLE_ROOTS, extra: tuple = ()) -> Path:
    """<cache>/puzzle-pool/<fingerprint of the roots' sources, extra, the pools' sizes and seed>/."""
    return config.cache_root() / "puzzle-pool" / fingerprint(roots, extra)


def fingerprint(roots: tuple[str, ...], extra: tuple = ()) -> str:
    key = (roots, extra)
    if key not in _FINGERPRINTS:
        digest = hashlib.sha256(repr((SEED, CLASSIC, FAST, SLOW, ONE_FORM, extra)).encode())
        for path in [Path(__file__), *_sources(roots)]:  # this file too: it says how a pool is drawn
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
        _FINGERPRINTS[key] = digest.hexdigest()[:16]
    return _FINGERPRINTS[key]


def _sources(roots: tuple[str, ...]) -> list[Path]:
    """The files of the helpers modules the roots import, directly or not, and of the packages holding them."""
    seen: dict[str, Path] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        base = ROOT / name.replace(".", "/")
        path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
        if not name.startswith("helpers") or name in seen or path is None:
            continue
        seen[name] = path
        todo.append(name.rpartition(".")[0])  # its package's __init__ runs first
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                todo += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                todo += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return sorted(seen.values())


def _pool(kind: str, level: int | None = None, form: str | None = None, wait: bool = True) -> dict | None:
    name = kind if form is None else f"{kind}-{level}-{form}"
    return _load_or_build(folder() / f"{name}.json", lambda: _build(kind, level, form), wait)


def _build(kind: str, level: int | None, form: str | None) -> dict:
    """The pool's records and the stats of making them, on one core (a test runs inside an xdist worker)."""
    counts: dict = {}
    if form is None:  # one generate call: every record its own item, so no two levels start from one random state
        n = len(puzzles.LEVELS) * size(kind)
        recs = puzzles.generate(n, seed=SEED, kinds=(kind,), stats=counts, workers=1)
    else:
        rng = random.Random(f"pool:{SEED}:{kind}:{level}:{form}")
        recs = [puzzles.make_puzzle(kind, level, i % 4, rng, counts, id=f"{kind}-{level}-{form}-{i}", form=form)
                for i in range(size(kind, form))]
    return {"records": recs, "stats": counts}


def _load_or_build(path: Path, build: Callable[[], Any], wait: bool) -> Any:
    """The file's content (read once per process), built under <path>.lock when missing; None when wait is False
    and another process holds the lock."""
    if path not in _MEMO:
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path.with_name(path.name + ".lock"), "a") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                except BlockingIOError:
                    return None
                if not path.is_file():  # not built by the process we waited for
                    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                    tmp.write_text(json.dumps(build()), encoding="utf-8")
                    os.replace(tmp, path)
        _MEMO[path] = json.loads(path.read_text(encoding="utf-8"))
    return _MEMO[path]


AUTOGROUP = Path("/proc/self/autogroup")


def lowest_priority() -> None:
    """Take only the CPU nothing else wants: a session of its own at nice 19. On Linux the scheduler shares the cores
    between sessions first (autogroups), and Jupyter starts each kernel in its own, so plain `nice` beside the
    notebooks took a full share (docs/results.md: the four trainings 85 s longer). A process group leader (started
    from an interactive shell) cannot start a session: it forks, and the child goes on."""
    if os.getpgrp() == os.getpid() and os.fork():
        os._exit(0)
    os.setsid()
    try:
        AUTOGROUP.write_text("19")  # the new session's own share
    except OSError:
        pass  # no autogroups: nice alone decides
    os.nice(19)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--background" in args:  # make pipeline's way: beside the notebooks
        args.remove("--background")
        lowest_priority()
    began = time.time()
    warm_all(args or puzzles.KINDS)  # given kinds: only theirs
    share = AUTOGROUP.read_text().split()[-1] if AUTOGROUP.exists() else "none"
    print(f"puzzle pool ready in {folder()} after {time.time() - began:.0f} s (session {os.getsid(0)}, nice "
          f"{os.nice(0)}, autogroup nice {share})")
