"""Build the run report from the run folder: a header of the stages, then one section per stage artifact.

Reads only files under the run folder; a stage that did not run gets "not run: <notebook>", an unreadable or
unexpected file a line naming it, never a crash.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from helpers.io import InputError, atomic_write_text, read_json
from helpers.layout import NOTEBOOKS, RunLayout
from helpers.report.render import Block, to_html, to_markdown
from helpers.report.sections import (UNEXPECTED, VERDICT, Ctx, accuracy_section, curriculum_section,
                                     data_section, elimination_section, ensemble_section, env_section,
                                     evaluation_section, match_section, models_section, nb_link, num, pct,
                                     reasoner_section, rl_section, writer_section)


def _header(ctx: Ctx) -> list[Block]:
    """Title, where the stages stand, a failed stage first."""
    out: list[Block] = [("h", 1, f"Run report: {ctx.run_dir.name}")]
    lay = ctx.lay
    pipe = ctx.load(ctx.rel(lay.pipeline_record), "00", "pipeline") if lay.pipeline_record.exists() else None
    if pipe is None and ctx.status.get("pipeline", "").startswith("unreadable"):
        out.append(("note", ctx.status["pipeline"]))
    params = (pipe or {}).get("params", {})
    out.append(("p", f"Profile {params.get('PROFILE', 'n/a')}, run {ctx.run_dir.name}; report written "
                     f"{time.strftime('%Y-%m-%d %H:%M:%S')}."))
    if lay.rehearsal_record.exists():  # make rehearse: said before any number, with every key it swapped
        out.append(("note", [("b", "Rehearsal"), f": {_rehearsal_line(ctx)}"]))
    stages = {str(s.get("notebook", ""))[:2]: s for s in (pipe or {}).get("stages", []) if isinstance(s, dict)}
    for nn, s in stages.items():
        if s.get("status") == "failed" and nn in NOTEBOOKS:
            out.append(("note", [("b", f"Stage {NOTEBOOKS[nn]} failed"), f": {s.get('error') or 'see its notebook'}. "
                                 "The executed copy holds the traceback: ", *_as_list(nb_link(ctx, nn)),
                                 ". The sections below show what the stages before it left."]))
    rows = []
    for nn in NOTEBOOKS:
        s = stages.get(nn)
        if s:  # the last pipeline invocation ran it
            rows.append([nn, nb_link(ctx, nn), str(s.get("status", "?")), num(s.get("seconds"), 1)])
        else:  # an earlier invocation (--only) or a run by hand: what its executed copy says
            status, secs = _executed_status(lay.executed_notebook(NOTEBOOKS[nn]))
            rows.append([nn, nb_link(ctx, nn), status, num(secs, 1) if secs is not None else ""])
    out += [("h", 2, "Stages"), ("table", ["stage", "notebook (executed copy)", "status", "seconds"], rows)]
    if pipe is None and "pipeline" not in ctx.status:
        out.append(("p", ["No pipeline.json: the notebooks were run by hand, or ", ("code", "make pipeline"),
                          " has not run."]))
    return out


def _rehearsal_line(ctx: Ctx) -> str:
    """What rehearsal.json says: the note and every swap (key, from, to), or why it cannot be read."""
    rel = ctx.rel(ctx.lay.rehearsal_record)
    rec = ctx.load(rel, "00", "rehearsal")
    try:
        swaps = "; ".join(f"{s['key']} {s['from']!r} -> {s['to']!r}" for s in rec["swaps"])
        return f"{rec['note']} Swapped ({rec['overlay']}, why in {rel}): {swaps}."
    except UNEXPECTED as exc:  # None (unreadable) included: the run is still marked a rehearsal
        return f"{rel} is {ctx.status.get('rehearsal') if rec is None else f'unexpected ({type(exc).__name__}: {exc})'}"


def _executed_status(path: Path) -> tuple[str, float | None]:
    """A stage's status from its executed notebook's papermill record: (status, seconds)."""
    if not path.exists():
        return "not run", None
    try:
        meta = read_json(path)["metadata"]["papermill"]
    except (InputError, OSError, UnicodeDecodeError, KeyError, TypeError):
        return "executed copy (no papermill record)", None
    if meta.get("exception"):
        return "failed (executed copy)", meta.get("duration")
    if not meta.get("end_time"):
        return "started, not finished (executed copy)", None
    return "ok (executed copy)", meta.get("duration")


def _as_list(inline: Any) -> list:
    """An inline as a list of parts."""
    return list(inline) if isinstance(inline, list) else [inline]


def _glance(ctx: Ctx, env: dict | None, data: dict | None, ev: dict | None, ens: dict | None,
            tour: dict | None) -> list:
    """One line per stage that ran: the verdict, the data, the adapters, the accuracies, the match."""
    out: list = []
    if env and ctx.status.get("Environment") == "ok":
        out.append(f"Environment: {VERDICT.get(env['summary']['worst'], env['summary']['worst'])}")
    if data and ctx.status.get("Data") == "ok":
        t = data["totals"]
        out.append(f"Data: {t['kept']:,} questions kept ({t['train']:,} train, {t['val']:,} validation), "
                   f"{t['dropped']:,} dropped")
    trained = [k[6:] for k, v in ctx.status.items() if k.startswith("model ") and v == "ok"]
    out.append(f"Adapters trained: {len(trained)} ({', '.join(trained) or 'none'})")
    if ev and ctx.status.get("Evaluation") == "ok":
        accs = {n: m["accuracy"] for n, m in ev["models"].items()}
        best = max((n for n in accs if n != "base"), key=accs.get, default=None)
        if best:
            out.append(f"Best adapter on validation: {best} {pct(accs[best])} (base {pct(accs.get('base'))}, "
                       f"chance {pct(ev.get('chance'))})")
    if ens and ctx.status.get("Ensemble") == "ok":
        out.append(f"Ensemble ({ens['candidate']}): {pct(ens['accuracy'])} on held-out questions (best single "
                   f"member {pct((ens.get('heldout_accuracy') or {}).get(ens.get('best_member')))})")
    if tour and ctx.status.get("Match") == "ok":
        m = tour["match"]
        totals = ", ".join(f"{t} {s['total']:g}" for t, s in m["scores"].items())
        out.append(f"Match: winner {m.get('winner') or 'none'} ({totals} of 200)")
    return out


def _section(ctx: Ctx, out: list[Block], title: str, rel: str, stage: str, fn: Callable[..., list[Block]],
             *extra: Any) -> dict | None:
    """One report section from one JSON file: its blocks, or the reason it has none."""
    out.append(("h", 2, title))
    obj = ctx.load(rel, stage, title)
    if obj is None:
        out.append(("note", ctx.status[title]))
        return None
    try:
        out += fn(ctx, obj, *extra)
    except UNEXPECTED as exc:
        ctx.status[title] = f"unexpected content: {rel} ({type(exc).__name__}: {exc})"
        out.append(("note", ctx.status[title]))
    return obj


def build(run_dir: Path) -> tuple[list[Block], dict]:
    """Every section's blocks and each section's status."""
    ctx, out = Ctx(Path(run_dir)), []
    try:
        out += _header(ctx)
    except UNEXPECTED as exc:
        ctx.status["pipeline"] = f"unexpected content: pipeline.json ({type(exc).__name__}: {exc})"
        out = [("h", 1, f"Run report: {ctx.run_dir.name}"), ("note", ctx.status["pipeline"]), ("h", 2, "Stages")]
    lay = ctx.lay
    env = _section(ctx, out, "Environment", ctx.rel(lay.env), "00", env_section)
    data = _section(ctx, out, "Data", ctx.rel(lay.data_report), "01", data_section)
    _section(ctx, out, "Curriculum", ctx.rel(lay.curriculum_stats), "02", curriculum_section)
    out.append(("h", 2, "Models"))
    try:
        out += models_section(ctx, env)
    except UNEXPECTED as exc:  # e.g. env.json's params.models is not a list or mapping of names
        out.append(("note", f"unexpected content: env.json params.models or models/ ({type(exc).__name__}: {exc})"))
    ev_blocks: list[Block] = []
    ev = _section(ctx, ev_blocks, "Evaluation", ctx.rel(lay.eval_summary), "06", evaluation_section)
    ens_blocks: list[Block] = []
    ens = _section(ctx, ens_blocks, "Ensemble", ctx.rel(lay.ensemble_summary), "07", ensemble_section)
    out.append(("h", 2, "Accuracy: base model, adapters, ensemble"))
    try:
        acc = accuracy_section(ctx, ev, ens)
    except UNEXPECTED as exc:
        acc = [("note", f"unexpected content in eval/summary.json or ensemble/summary.json ({type(exc).__name__}: {exc})")]
    out += acc or [("note", "not run: notebooks/06_validate.ipynb and notebooks/07_ensemble.ipynb")]
    out += ev_blocks + ens_blocks
    _section(ctx, out, "Question writer", ctx.rel(lay.writer_report), "09", writer_section)
    _section(ctx, out, "Reasoner reinforcement (GRPO)", ctx.rel(lay.rl_report), "08", rl_section)
    _section(ctx, out, "Reasoning A-agent", ctx.rel(lay.reasoner_report), "09", reasoner_section)
    tour = _section(ctx, out, "Match", ctx.rel(lay.tournament), "10", match_section)
    _section(ctx, out, "Elimination round at home", ctx.rel(lay.elimination), "10", elimination_section)
    try:
        glance = _glance(ctx, env, data, ev, ens, tour)
    except UNEXPECTED:  # each section below already names what is wrong with its file
        glance = []
    at = out.index(("h", 2, "Stages"))
    out[at:at] = [("h", 2, "At a glance"), ("ul", glance)] if glance else []
    nbs = sorted(lay.notebooks_dir.glob("*.ipynb")) if lay.notebooks_dir.is_dir() else []
    out += [("h", 2, "Executed notebooks"),
            ("ul", [[("link", p.name, ctx.rel(p))] for p in nbs]) if nbs else ("note", "none under notebooks/")]
    return out, ctx.status


def write_report(run_dir: Path) -> dict:
    """Write runs/<run>/report.md and report.html; returns their paths and each section's status."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    blocks, status = build(run_dir)
    lay = RunLayout(run_dir)
    md = atomic_write_text(lay.report_md, to_markdown(blocks))
    page = atomic_write_text(lay.report_html, to_html(blocks, run_dir, f"Run report: {run_dir.name}"))
    return {"md": md, "html": page, "sections": status}
