"""Run the numbered notebooks headless with papermill, in order, stopping at the first failure.

`python -m helpers.pipeline --profile smoke [--run NAME] [--only 00,01] [--overrides JSON] [--rehearse]`
(--rehearse: the profile's dress rehearsal on CPU, helpers.rehearse; its run is rehearse-<profile> by default)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from helpers import config
from helpers.io import read_json, stamp, versions, write_json
from helpers.layout import RunLayout

KERNEL_NAME = "qa-agent-kit"
NOTEBOOK_RE = re.compile(r"^(\d\d)_[A-Za-z0-9_]+\.ipynb$")
# What a run's outcome depends on besides the installed packages: the kit's code, notebooks, profiles, bundled
# data and pins. Their fingerprint goes into pipeline.json, so a run can be told apart from one of other code.
# pyproject.toml counts without its [tool.*] tables (pytest's markers, mypy's settings): they decide no run.
SOURCE_PARTS = ("helpers", "notebooks", "configs", "data", "pyproject.toml", "constraints.txt")


class StageFailed(RuntimeError):
    """A notebook failed; the message names the notebook, the cell and the error."""


PARAMS = ("PROFILE", "RUN", "OVERRIDES")  # what every stage's parameters cell declares and every run passes


def declared_parameters(nb: Path) -> set[str]:
    """The names a notebook's `parameters` cell assigns (papermill injects only those the pipeline passes)."""
    import ast
    try:
        cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
        cell = next((c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
        source = cell.get("source", "") if cell else ""
        tree = ast.parse(source if isinstance(source, str) else "".join(source))
    except (OSError, ValueError, SyntaxError):
        return set()
    targets = [t for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
               for t in (node.targets if isinstance(node, ast.Assign) else [node.target])]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def discover_notebooks(nb_dir: Path | None = None) -> list[Path]:
    """notebooks/NN_*.ipynb in stage order."""
    nb_dir = nb_dir or config.project_root() / "notebooks"
    return sorted(p for p in nb_dir.glob("*.ipynb") if NOTEBOOK_RE.match(p.name))


@functools.cache
def quiet_shutdown_kernel_manager() -> type:
    """jupyter_client's AsyncKernelManager minus the SIGINT it sends a kernel just before asking it to shut down.

    Why: papermill ends every notebook with a kernel_info request and shuts the kernel down as soon as the reply
    is in. The kernel sends that reply from inside its message handler, where SIGINT raises KeyboardInterrupt,
    so on a loaded or slower CPU the shutdown's interrupt lands before the handler returns and the kernel logs
    "ERROR | KeyboardInterrupt caught in kernel." for a notebook that passed (seen 2-3 times in 12 runs of a
    two-cell notebook on a busy 2-core box). An idle kernel needs no interrupt to shut down; a cell that is
    still running when the client gives up is ended by the shutdown's own kill after its grace period.
    Interrupts asked for outside shutdown (nbclient's interrupt_on_timeout) still go through.
    """
    from jupyter_client import AsyncKernelManager

    class QuietShutdownKernelManager(AsyncKernelManager):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            # Unix sockets named after each kernel's own connection file, not TCP ports: kernels started at once
            # (03-05 and 08 side by side, beside make test's other worker) picked the same free port and one died
            # ("Address already in use", "Kernel died before replying to kernel_info").
            if os.name == "posix":  # each kernel its own socket prefix (the default one is shared by all)
                import tempfile
                import uuid
                kwargs.setdefault("transport", "ipc")
                kwargs.setdefault("ip", os.path.join(tempfile.gettempdir(), f"kit-kernel-{uuid.uuid4().hex[:12]}"))
            super().__init__(*args, **kwargs)

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:  # set by shutdown_kernel() before it interrupts, cleared when it is done
                return
            await super()._async_interrupt_kernel()

    return QuietShutdownKernelManager


def kernel_name() -> str:
    """The kit's registered kernel (make setup registers it), else the current interpreter's python3."""
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL_NAME if KERNEL_NAME in KernelSpecManager().find_kernel_specs() else "python3"


def _describe_failure(nb: Path, out: Path, exc: Exception) -> str:
    cell = getattr(exc, "cell_index", None)
    source = (getattr(exc, "source", "") or "").strip().splitlines()
    first = next((line for line in source if line.strip() and not line.startswith("#")), source[0] if source else "")
    ename, evalue = getattr(exc, "ename", type(exc).__name__), getattr(exc, "evalue", str(exc))
    where = f"cell {cell} (In [{getattr(exc, 'exec_count', '?')}], starting `{first[:80]}`)" if cell is not None else "start-up"
    return f"{nb.name} failed at {where}: {ename}: {evalue}\n  executed copy with the traceback: {out}"


def source_fingerprint(root: Path | None = None) -> str:
    """sha256 over the files of SOURCE_PARTS (paths and bytes; caches and hidden folders left out)."""
    root = root or config.project_root()
    digest = hashlib.sha256()
    for part in SOURCE_PARTS:
        path = root / part
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for f in files:
            rel = f.relative_to(root)
            if f.is_file() and not any(x == "__pycache__" or x.startswith(".") for x in rel.parts):
                content = _without_tool_tables(f.read_bytes()) if rel.as_posix() == "pyproject.toml" else f.read_bytes()
                digest.update(rel.as_posix().encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


def _without_tool_tables(text: bytes) -> bytes:
    """pyproject.toml's bytes less every [tool.*] / [[tool.*]] table, header to the next header."""
    kept, in_tool = [], False
    for line in text.splitlines(keepends=True):
        header = line.strip()
        if header.startswith(b"["):
            in_tool = header.lstrip(b"[").startswith(b"tool.")
        if not in_tool:
            kept.append(line)
    return b"".join(kept)


def why_not_current(run_dir: Path, profile: str) -> str | None:
    """Why run_dir is not a complete run of `profile` (no overrides, no rehearsal) by this code and these packages;
    None when it is. make test uses it to take the smoke run `make pipeline` just made instead of running it again."""
    lay = RunLayout(run_dir)
    if not lay.pipeline_record.is_file():
        return f"{lay.pipeline_record} is missing"
    try:
        record = read_json(lay.pipeline_record)
        stages = [(s["notebook"], s["status"]) for s in record.get("stages", [])]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"{lay.pipeline_record} is unreadable ({type(exc).__name__})"
    wanted = {"PROFILE": profile, "RUN": run_dir.name, "OVERRIDES": {}}
    checks = (
        (record.get("params") == wanted, f"its parameters are {record.get('params')}, not {wanted}"),
        ("rehearsal" not in record, "it is a rehearsal"),
        (sorted(stages) == [(nb.name, "ok") for nb in discover_notebooks()], "not every notebook ran, or one failed"),
        (record.get("source") == source_fingerprint(), "the kit's files changed since it ran"),
        (record.get("versions") == versions(), "the installed packages changed since it ran"),
        (lay.terminal_log.is_file(), f"{lay.terminal_log.name} is missing"),
    )
    return next((why for ok, why in checks if not ok), None)


@contextlib.contextmanager
def tee_terminal(path: Path):
    """Copy what this process and the kernels it starts write to file descriptors 1 and 2 into `path`, still
    showing it where it went before: a kernel's own log lines (in no notebook) are kept with the run. (Inside
    Jupyter, print() goes through the kernel's own stream, so only the child processes' lines are kept.)"""
    sys.stdout.flush()
    sys.stderr.flush()
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    saved, pumps = [], []
    try:
        for fd in (1, 2):
            read_end, write_end = os.pipe()
            saved.append(os.dup(fd))
            # the pump owns its copies of the pipe's read end, the shown descriptor and the log, and closes them
            pump = threading.Thread(target=_pump, args=(read_end, os.dup(fd), os.dup(log)), daemon=True)
            os.dup2(write_end, fd)
            os.close(write_end)
            pump.start()
            pumps.append(pump)
    finally:
        os.close(log)
    try:
        yield path
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, old in zip((1, 2), saved):
            os.dup2(old, fd)  # the pipes end when the last child holding them exits
            os.close(old)
        for pump in pumps:
            pump.join(timeout=10)  # a child still alive keeps its pump draining on its own descriptors


def _pump(read_end: int, show: int, log: int) -> None:
    """Copy a pipe to a shown descriptor and to the log until every writer has closed it; a failing target is
    dropped, the pipe still drained, so a writer never blocks or breaks on it."""
    targets = [show, log]
    try:
        while chunk := os.read(read_end, 65536):
            for target in list(targets):
                try:
                    _write_all(target, chunk)
                except OSError:
                    targets.remove(target)
    finally:
        for fd in (read_end, show, log):
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is out (a pipe or terminal may take part of a chunk)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _refuse_mixing(lay: RunLayout, rehearsal: dict | None) -> None:
    """A rehearsal and a real run never share a run folder: one's stages would read the other's files."""
    if rehearsal is None and lay.rehearsal_record.exists():
        raise ValueError(f"{lay.root} holds a rehearsal ({lay.rehearsal_record.name}): add --rehearse "
                         "(make rehearse), or pick another run name")
    if rehearsal is not None and lay.pipeline_record.exists() and not lay.rehearsal_record.exists():
        raise ValueError(f"{lay.root} holds a real run ({lay.pipeline_record.name}, no {lay.rehearsal_record.name}): "
                         "rehearse into another run name (the default is rehearse-<profile>)")


def run_pipeline(profile: str, run: str | None = None, overrides: dict | None = None,
                 only: list[str] | None = None, nb_dir: Path | None = None,
                 rehearsal: dict | None = None, fresh: bool = False) -> list[dict]:
    """Execute each notebook (optionally only the given NN prefixes); raise StageFailed on the first failure.
    fresh: every training starts over (RESUME = False in each notebook that declares it) instead of resuming from
    its checkpoints, which a training refuses once its data or settings changed.

    rehearsal: helpers.rehearse.plan()'s record, for a rehearsal (its swaps are already in `overrides`): written to
    the run's rehearsal.json before any notebook runs and into pipeline.json, so the run says what it is.
    What the terminal shows meanwhile is kept in the run's terminal.txt."""
    cfg = config.load_profile(profile, run, overrides)  # fails fast on a bad profile or override
    lay = RunLayout.of(cfg)
    _refuse_mixing(lay, rehearsal)
    lay.made(lay.notebooks_dir)
    notebooks = [nb for nb in discover_notebooks(nb_dir) if not only or nb.name[:2] in only]
    if not notebooks:
        raise StageFailed(f"no notebooks to run (only={only})")
    os.environ["KIT_HEADLESS"] = "1"  # helpers print quiet progress lines instead of widget bars
    results: list[dict] = []
    params = {"PROFILE": profile, "RUN": cfg.run, "OVERRIDES": overrides or {}}
    extra = {"rehearsal": rehearsal} if rehearsal is not None else {}
    if rehearsal is not None:
        write_json(lay.rehearsal_record, {**rehearsal, **stamp(params)})
    extra["source"] = source_fingerprint()
    if fresh:
        extra["fresh"] = True
    lay.pipeline_record.unlink(missing_ok=True)  # an interrupted re-run must not pass for the run before it
    with tee_terminal(lay.terminal_log):
        _run_notebooks(notebooks, cfg, params, extra, results, fresh)
    write_json(lay.pipeline_record, {"stages": results, **extra, **stamp(params)})
    _write_report(lay.root)
    return results


def _run_notebooks(notebooks: list[Path], cfg: config.Profile, params: dict, extra: dict, results: list[dict],
                   fresh: bool = False) -> None:
    """Each notebook through papermill into the run's notebooks/, in order, the training notebooks side by side
    where the machine allows (training_jobs); a failure is recorded, then raised. fresh: RESUME = False too."""
    lay = RunLayout.of(cfg)
    given = {**params, "RESUME": False} if fresh else params  # the record keeps the run's own three
    out_dir = lay.notebooks_dir
    for group, jobs, why in run_order(notebooks, lambda n: training_jobs(cfg, n)):
        if jobs > 1:
            print(f"[pipeline] {', '.join(nb.name for nb in group)} side by side ({jobs} at a time: {why})",
                  flush=True)
            outcomes = _execute_together(group, out_dir, given, jobs)
        else:
            outcomes = [execute_notebook(str(group[0]), str(out_dir / group[0].name), given)]
        for nb, (message, secs) in zip(group, outcomes):
            if message is None:
                results.append({"notebook": nb.name, "status": "ok", "seconds": secs,
                                "executed": str(out_dir / nb.name)})
            else:
                results.append({"notebook": nb.name, "status": "failed", "seconds": secs,
                                "error": message.splitlines()[0]})
        failed = [message for message, _ in outcomes if message is not None]
        if failed:
            write_json(lay.pipeline_record, {"stages": results, **extra, **stamp(params)})
            _write_report(lay.root)  # a team wants the report of what did run
            raise StageFailed(failed[0])


def run_order(notebooks: list[Path], jobs: Callable[[int], tuple[int, str]]) -> Iterator[tuple[list[Path], int, str]]:
    """(group, jobs at a time, why) in the order the pipeline runs them: side_by_side's group where `jobs` (given the
    group's size) allows more than one at a time, else its first notebook alone; each notebook once."""
    left = list(notebooks)
    while left:
        group = side_by_side(left)
        n, why = jobs(len(group)) if len(group) > 1 else (1, "")
        group = group if n > 1 else group[:1]
        yield group, n, why
        left = [nb for nb in left if nb not in group]


# Training notebooks that read only what notebooks 00-02 wrote and write only their own models/<name>/: the three
# adapters' trainings (03/04/05) and the agents' (08, the writer and the reasoner on the base model), which may run
# side by side (helpers/layout.py's stage table says what each reads).
SIDE_BY_SIDE = ("03", "04", "05", "08")


def side_by_side(notebooks: list[Path]) -> list[Path]:
    """The first notebook and, when it is a training notebook, every training notebook after it (08 joins 03-05:
    nothing it reads comes from 06 or 07)."""
    group = notebooks[:1]
    if group and group[0].name[:2] in SIDE_BY_SIDE:
        group += [nb for nb in notebooks[1:] if nb.name[:2] in SIDE_BY_SIDE]
    return group


def training_jobs(cfg: config.Profile, n: int) -> tuple[int, str]:
    """How many training notebooks run at once: all n on a CPU where each trains on fewer threads than the cores
    (the tiny model trains on one: three side by side on 2 cores take about 1.5x one, not 3x); one where a GPU
    trains (its memory is planned for one training), where a training takes the cores (the cpu profile's 2
    threads on 2 cores), or where env.json says nothing (KIT_TRAINING_JOBS=1 forces one at a time). (jobs, why)"""
    from helpers.models.members import cpu_threads
    forced = os.environ.get("KIT_TRAINING_JOBS")
    if forced:
        return max(1, min(n, int(forced))), "KIT_TRAINING_JOBS"
    try:
        backend = (read_json(RunLayout.of(cfg).env).get("recommendation") or {}).get("backend")
    except (OSError, ValueError, AttributeError):
        backend = None
    threads = cpu_threads(cfg.train, "tiny" if cfg.model.weights == "tiny" else None)
    cores = os.cpu_count() or 1
    if backend != "cpu" or not threads or threads * 2 > cores:
        return 1, f"backend {backend}, {threads or 'all'} torch threads each, {cores} cores"
    return n, f"CPU training on {threads} torch thread(s) each, {cores} cores"


def execute_notebook(nb: str, out: str, params: dict) -> tuple[str | None, float]:
    """One notebook through papermill: (None or the failure's message naming notebook, cell and error, seconds).
    A top-level function so a side-by-side group can run it in spawned processes."""
    import papermill as pm

    t0 = time.time()
    declared = declared_parameters(Path(nb)) if set(params) - set(PARAMS) else set()  # read once, when needed
    params = {k: v for k, v in params.items() if k in PARAMS or k in declared}
    print(f"[pipeline] {Path(nb).name} ...", flush=True)
    try:
        pm.execute_notebook(nb, out, parameters=params, kernel_name=kernel_name(),
                            cwd=str(Path(nb).parent), progress_bar=False, log_output=False,
                            # the kernel app's own notices (e.g. "running over TCP without encryption" on
                            # localhost) once per notebook would bury the stage lines; errors still show
                            extra_arguments=["--IPKernelApp.log_level=ERROR"],
                            kernel_manager_class=quiet_shutdown_kernel_manager())
    except Exception as exc:  # papermill wraps cell errors; anything else (kernel death) too
        return _describe_failure(Path(nb), Path(out), exc), round(time.time() - t0, 1)
    secs = round(time.time() - t0, 1)
    print(f"[pipeline] {Path(nb).name} ok in {secs:.1f}s", flush=True)
    return None, secs


def _execute_together(group: list[Path], out_dir: Path, params: dict, jobs: int) -> list[tuple[str | None, float]]:
    """The group's notebooks in `jobs` spawned processes (each starts its own kernel), every one run to its end."""
    import concurrent.futures
    import multiprocessing

    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(execute_notebook, str(nb), str(out_dir / nb.name), params) for nb in group]
        return [f.result() for f in futures]


def _write_report(run_dir: Path) -> None:
    """runs/<run>/report.md and .html; a report error is printed, never hides the stages' own result."""
    from helpers import report

    try:
        paths = report.write_report(run_dir)
    except Exception as exc:  # noqa: BLE001 - the notebooks' outcome matters more than the summary of it
        print(f"[pipeline] report not written: {type(exc).__name__}: {exc}", flush=True)
        return
    print(f"[pipeline] report: {paths['md']} (and {paths['html'].name})", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; a failure prints one clear paragraph and exits 1."""
    ap = argparse.ArgumentParser(prog="python -m helpers.pipeline", description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="smoke", help=f"one of {', '.join(config.available_profiles())}")
    ap.add_argument("--run", default=None, help="run name (default: the profile's)")
    ap.add_argument("--overrides", default="{}", help='JSON of dotted keys, e.g. \'{"train.batch_size": 8}\'')
    ap.add_argument("--only", default=None, help="comma-separated stage numbers, e.g. 00,01")
    ap.add_argument("--fresh", action="store_true",
                    help="every training starts over (RESUME = False) instead of resuming its checkpoints")
    ap.add_argument("--rehearse", action="store_true",
                    help="dress rehearsal on CPU: the profile with the swaps of configs/overlays/rehearsal.yaml "
                         "(tiny model, offline data, small sizes), run rehearse-<profile>")
    args = ap.parse_args(argv)
    try:
        overrides = config.parse_overrides(args.overrides)
    except ValueError as exc:
        print(f"pipeline: {exc}", file=sys.stderr)
        return 2
    only = [s.strip().zfill(2) for s in args.only.split(",")] if args.only else None
    t0 = time.time()
    try:
        run, rehearsal = args.run, None
        if args.rehearse:
            from helpers import rehearse
            run, overrides, rehearsal = rehearse.plan(args.profile, args.run, overrides)
            rehearse.hide_accelerators(os.environ)  # a GPU box's rehearsal runs on its CPU too, as recorded
            print(f"[pipeline] {rehearse.describe(rehearsal)}", flush=True)
        results = run_pipeline(args.profile, run, overrides, only, rehearsal=rehearsal, fresh=args.fresh)
    except StageFailed as exc:
        print(f"[pipeline] FAILED: {exc}", file=sys.stderr)
        return 1
    except (KeyError, ValueError) as exc:  # bad profile name / override key
        print(f"pipeline: {exc}", file=sys.stderr)
        return 2
    print(f"[pipeline] {len(results)} notebook(s) ok in {time.time() - t0:.0f}s"
          + (f" (a rehearsal: {RunLayout.of(run).rehearsal_record} lists what was swapped)" if rehearsal else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
