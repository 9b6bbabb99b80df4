"""The run report's sections, one per stage artifact: each turns one parsed JSON file into report blocks.

Used by helpers.report.build; everything here reads only files under the run folder (`Ctx.run_dir`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers import edition as edition_mod
from helpers.config import REASONER, REASONER_RL, WRITER
from helpers.evaluate.metrics import COLLAPSE_ADVICE, COLLAPSE_SHARE
from helpers.io import InputError, read_json, read_jsonl
from helpers.layout import NOTEBOOKS, RunLayout
from helpers.puzzles.deduction import reading
from helpers.report.render import Block
from helpers.train import plan as time_plan

# Adapter -> the notebook number that trains it: "03_train_model1_lora" trains model1_lora; 08 trains the agents' two.
MODEL_STAGES = {**{nb.removeprefix(f"{nn}_train_"): nn for nn, nb in NOTEBOOKS.items()
                   if nb.startswith(f"{nn}_train_")}, WRITER: "08", REASONER: "08"}
VERDICT = {"pass": "ready", "info": "ready (see the notes)", "warn": "usable, with warnings",
           "fail": "NOT ready: fix the failures below before training"}
# What a well-formed file can still get wrong (a missing key, a list where a dict was expected, ...).
UNEXPECTED = (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError)



@dataclass
class Ctx:
    """The run folder being reported on and what each section found."""

    run_dir: Path
    status: dict = field(default_factory=dict)

    @property
    def lay(self) -> RunLayout:
        """The run's layout: every file a section reads is named there."""
        return RunLayout(self.run_dir)

    def rel(self, path: Path) -> str:
        """A file of the run as the report names and links it (relative to the run folder)."""
        return self.lay.rel(path)

    def load(self, rel: str, stage: str, section: str) -> Any:
        """A JSON artifact, or None after recording why (not run / unreadable) for `section`."""
        path = self.run_dir / rel
        if not path.exists():  # the layout's stage table (helpers.layout.STAGES) names the notebook to run
            self.status[section] = f"not run: notebooks/{NOTEBOOKS[stage]}.ipynb"
            return None
        try:
            obj = read_json(path)
        except (InputError, OSError, UnicodeDecodeError) as exc:
            self.status[section] = f"unreadable: {rel}: {_short(exc, path)}"
            return None
        if not isinstance(obj, dict):
            self.status[section] = f"unreadable: {rel}: expected a JSON object, got {type(obj).__name__}"
            return None
        self.status.setdefault(section, "ok")
        return obj


def _short(exc: BaseException, path: Path) -> str:
    """An error message without the absolute path it starts with (the report names the relative one)."""
    return str(exc).replace(f"{path}: ", "").replace(str(path), path.name)


def num(x: Any, nd: int = 2) -> str:
    """A number for a table cell; None and non-numbers as they are."""
    if x is None:
        return "n/a"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    return f"{x:,}" if isinstance(x, int) else f"{x:,.{nd}f}"


def pct(x: Any, nd: int = 1) -> str:
    """A 0..1 share as a percentage."""
    return f"{100 * x:.{nd}f}%" if isinstance(x, (int, float)) and not isinstance(x, bool) else num(x)


def plot(ctx: Ctx, rel: str, alt: str) -> Block:
    """An image block if the PNG exists, else a note naming the missing file."""
    return ("img", alt, rel) if (ctx.run_dir / rel).is_file() else ("note", f"plot missing: {rel}")


def nb_link(ctx: Ctx, stage: str) -> Any:
    """A link to the executed copy of a stage's notebook, or its plain name."""
    path = ctx.lay.executed_notebook(NOTEBOOKS[stage])
    return [("link", path.name, ctx.rel(path))] if path.exists() else path.name


def kv_table(pairs: list[tuple[str, Any]]) -> Block:
    """A two-column figure/value table."""
    return ("table", ["figure", "value"], [[k, num(v) if not isinstance(v, (str, list)) else v] for k, v in pairs])


def _backend(rec: dict) -> str:
    """'transformers + PEFT (no GPU: ...)': the backend the recommendation picked, and why."""
    item = rec.get("use_unsloth") or {}
    if not isinstance(item, dict) or "value" not in item:
        return "n/a"
    return f"{'Unsloth' if item['value'] else 'transformers + PEFT'} ({item.get('reason', '')})"


def env_section(ctx: Ctx, env: dict) -> list[Block]:
    """env.json: the verdict, the facts, the checks that did not pass, the settings, will-it-fit."""
    summ, facts = env["summary"], env.get("facts", {})
    worst = summ.get("worst", "pass")
    gpu, system, torch = facts.get("gpu") or {}, facts.get("system") or {}, facts.get("torch") or {}
    counts = ", ".join(f"{summ.get(k, 0)} {k}" for k in ("pass", "info", "warn", "fail"))
    out: list[Block] = [("p", [("b", f"Verdict: {VERDICT.get(worst, worst)}"), f" ({counts})"])]
    out.append(kv_table([("backend", facts.get("backend", "n/a")), ("GPU", gpu.get("name") or "none"),
                          ("VRAM GiB", gpu.get("vram_total_gib")), ("CPUs", system.get("cpu_usable")),
                          ("RAM GiB", system.get("ram_total_gib")), ("torch", torch.get("version", "n/a")),
                          ("ROCm (HIP) / CUDA", f"{torch.get('hip') or '-'} / {torch.get('cuda') or '-'}"),
                          ("Unsloth", (facts.get("unsloth") or {}).get("detail", "n/a")),
                          ("training backend", _backend(env.get("recommendation") or {}))]))
    bad = [c for c in env.get("checks", []) if c.get("status") != "pass"]
    order = {"fail": 0, "warn": 1, "info": 2}
    if bad:
        out += [("h", 3, "Checks that did not pass")]
        out.append(("table", ["status", "check", "message", "fix"],
                    [[c["status"].upper(), c.get("title", c.get("id", "")), c.get("message", ""), c.get("fix", "")]
                     for c in sorted(bad, key=lambda c: order.get(c["status"], 3))]))
    rec = env.get("recommendation", {})
    rows = [[k, str(v.get("value")), v.get("reason", "")] for k, v in rec.items() if isinstance(v, dict) and "value" in v]
    if rows:
        out += [("h", 3, "Recommended settings"), ("table", ["setting", "value", "reason"], rows)]
    fit = env.get("fit") or {}
    if fit.get("rows"):
        out += [("h", 3, f"Will it fit ({num(fit.get('device_gib'))} GiB device)"),
                ("table", ["model", "params (B)", "estimated peak GiB", "fits"],
                 [[r["model"], num(r.get("params_b")), num(r.get("total_gib")), "yes" if r.get("fits") else "NO"]
                  for r in fit["rows"]]), plot(ctx, ctx.rel(ctx.lay.fit_plot), "estimated peak memory per model")]
    return out + _plan_blocks(env)


def _plan_blocks(env: dict) -> list[Block]:
    """The RL stage's memory, the reasoning budget and the time plan notebook 00 recorded, where it did."""
    out: list[Block] = []
    rl, tokens, plan = env.get("rl_memory"), env.get("reasoning_tokens"), env.get("time_plan")
    if rl:
        out.append(("p", f"RL stage (one GRPO step): est. peak {num(rl.get('peak_gib'))} GiB ({rl.get('phase')})."))
    if tokens:
        out.append(("p", f"Reasoning budget: {tokens.get('tokens')} tokens at {tokens.get('decode_ms_per_token')} ms a "
                         f"token inside {tokens.get('answer_budget_s')} s an answer."))
    if plan:
        out += [("h", 3, "Time plan"), ("p", "; ".join(time_plan.describe(plan)) + ".")]
    return out


def data_section(ctx: Ctx, rep: dict) -> list[Block]:
    """data/report.json: totals, drops by reason, per source, letter balance."""
    t = rep["totals"]
    keys = ("read", "generated", "converted", "unlabeled", "dropped", "kept", "train", "val")
    out: list[Block] = [("table", list(keys), [[num(t.get(k)) for k in keys]])]
    dropped = rep.get("dropped") or {}
    out.append(("p", "Dropped by reason: " + (", ".join(f"{k} {v:,}" for k, v in dropped.items()) or "none") + "."))
    per = rep.get("per_source") or {}
    cols = ("read", "generated", "converted", "dropped", "kept", "train", "val")
    if per:
        out.append(("table", ["source", *cols], [[src, *(num(v.get(c)) for c in cols)] for src, v in per.items()]))
    letters = rep.get("letters") or {}
    if letters:
        out.append(("p", "Answer letters: " + "; ".join(f"{split} " + ", ".join(f"{k} {v}" for k, v in d.items())
                                                        for split, d in letters.items()) + "."))
    return out + [plot(ctx, ctx.rel(ctx.lay.data_plot), "dataset build")]


def curriculum_section(ctx: Ctx, cur: dict) -> list[Block]:
    """curriculum/stats.json: difficulty buckets and each chunk's mix."""
    st, sched = cur["stats"], cur.get("schedule") or {}
    th = st.get("thresholds") or {}
    out: list[Block] = [("p", f"{st.get('n', 0):,} training questions; difficulty buckets " + ", ".join(
        f"{k} {v:,} ({pct((st.get('bucket_share') or {}).get(k))})" for k, v in (st.get("buckets") or {}).items())
        + f" (easy below {th.get('easy_below', 'n/a')}, hard from {th.get('hard_from', 'n/a')}).")]
    rows = []
    for i, c in enumerate(st.get("per_chunk") or []):
        b, srcs = c.get("buckets") or {}, sorted((c.get("sources") or {}).items(), key=lambda kv: -kv[1])[:3]
        lr, rp = (sched.get("lr") or [])[i:i + 1], (sched.get("replay") or [])[i:i + 1]
        rows.append([num(c.get("chunk")), num(c.get("n")), *(num(b.get(k, 0)) for k in ("easy", "medium", "hard")),
                     num(c.get("mean_difficulty")), num(lr[0], 4) if lr else "n/a",
                     pct(rp[0]) if rp else "n/a", ", ".join(f"{s} {n}" for s, n in srcs)])
    out.append(("table", ["chunk", "questions", "easy", "medium", "hard", "mean difficulty", "lr",
                          "replay share", "largest sources"], rows))
    files = cur.get("files") or {}
    for key, default, alt in (("difficulty_plot", ctx.rel(ctx.lay.difficulty_plot), "difficulty"),
                              ("chunk_mix_plot", ctx.rel(ctx.lay.chunk_mix_plot), "chunk mix")):
        rel = str(files.get(key) or default)
        out.append(plot(ctx, rel if not Path(rel).is_absolute() and ".." not in rel else default, alt))
    return out


def _model_names(ctx: Ctx, env: dict | None) -> list[str]:
    """The profile's adapters (env.json's stamp), else the default three, plus any other folder under models/ but the
    reinforced reasoner's."""
    names = list(((env or {}).get("params") or {}).get("models") or MODEL_STAGES)
    models_dir = ctx.lay.models_dir
    extra = sorted(p.name for p in models_dir.glob("*") if p.is_dir() and p.name not in names + [REASONER_RL]) \
        if models_dir.is_dir() else []  # the reinforced reasoner has a section of its own (rl_section)
    return names + extra


def models_section(ctx: Ctx, env: dict | None) -> list[Block]:
    """models/<name>/summary.json: one row each, then each loss curve."""
    rows, plots = [], []
    for name in _model_names(ctx, env):
        stage = MODEL_STAGES.get(name, "03")
        s = ctx.load(ctx.rel(ctx.lay.model_summary(name)), stage, f"model {name}")
        if s is None:
            note = ctx.status[f"model {name}"]
            plots.append(("note", f"{name}: {note}" if name in MODEL_STAGES or not note.startswith("not run")
                          else f"{name}: not run (no summary.json)"))
            continue
        try:
            spec, peak = (s.get("params") or {}).get("spec") or {}, s.get("peak_memory") or {}
            rows.append([name, s.get("method", "n/a"), f"r={spec.get('r', '?')}, alpha={spec.get('alpha', '?')}",
                         f"{s['chunks_done']}/{s['chunks_total']}" + ("" if s.get("complete") else " (incomplete)"),
                         num(s.get("global_steps")), num(s.get("first_loss"), 3), num(s.get("last_loss"), 3),
                         ", ".join(num(x, 3) for x in s.get("chunk_losses") or []), num(s.get("tokens_per_s"), 0),
                         num(s.get("train_seconds"), 0),
                         f"{num(peak.get('gib'))} GiB ({str(peak.get('kind', '?')).upper()})"])
            warnings = [("note", f"{name}: {w}") for w in s.get("warnings") or []]
        except UNEXPECTED as exc:
            ctx.status[f"model {name}"] = (f"unexpected content: {ctx.rel(ctx.lay.model_summary(name))} "
                                           f"({type(exc).__name__}: {exc})")
            plots.append(("note", ctx.status[f"model {name}"]))
            continue
        plots += [("h", 3, name), plot(ctx, ctx.rel(ctx.lay.training_plot(name)), f"{name} loss curve")]
        plots += warnings
    out: list[Block] = []
    if rows:
        out.append(("table", ["model", "method", "rank", "chunks", "steps", "first loss", "last loss", "chunk losses",
                              "tokens/s", "train s", "peak memory"], rows))
    return out + plots


def accuracy_section(ctx: Ctx, ev: dict | None, ens: dict | None) -> list[Block]:
    """The base model, each adapter and the ensemble, on all validation questions and on the held-out half."""
    models = (ev or {}).get("models") or {}
    held = (ens or {}).get("heldout_accuracy") or {}
    held_ids = set((ens or {}).get("heldout_ids") or [])
    names = list(dict.fromkeys(list(models) + [m for m in (ens or {}).get("member_scores") or {}]))
    rows = []
    for name in names:
        h = held.get(name)
        if h is None and held_ids and ctx.lay.eval_rows(name).is_file():
            try:  # the base model does not vote, but it scored the same questions: the same held-out half
                hits = [bool(r.get("correct")) for r in read_jsonl(ctx.lay.eval_rows(name))
                        if r.get("id") in held_ids]
                h = sum(hits) / len(hits) if hits else None
            except (InputError, OSError):
                h = None
        m = models.get(name) or {}
        rows.append([name, pct(m.get("accuracy")), pct(h)])
    if ens is not None:
        kind = ens.get("candidate", "?") + ("" if ens.get("candidate") == ens.get("method") else f": {ens.get('method')}")
        rows.append([[("b", f"ensemble ({kind})")], "n/a",
                     [("b", pct(ens.get("accuracy")))]])
        rows.append(["oracle (any member right)", "n/a", pct(ens.get("oracle_heldout"))])
    n_all = (ev or {}).get("n_questions", "?")
    return [("table", ["model", f"validation accuracy ({n_all} questions)",
                       f"held-out accuracy ({(ens or {}).get('heldout_items', '?')} questions, as the ensemble)"],
             rows)] if rows else []


def _favourite(fav: dict | None) -> str:
    """'B 54% (key 26%)', with COLLAPSED when over the bound; '' for summaries written before the field."""
    if not fav or fav.get("letter") is None:
        return ""
    flag = " COLLAPSED" if fav.get("collapsed") else ""
    return f"{fav['letter']} {pct(fav['share'])} (key {pct(fav.get('key_share'))}){flag}"


def evaluation_section(ctx: Ctx, ev: dict) -> list[Block]:
    """eval/summary.json: each member's accuracy, interval, calibration, speed; the letters-vs-generate timing."""
    timing = ev.get("timing") or {}
    out: list[Block] = [("p", f"{ev.get('n_questions', '?')} validation questions, method {ev.get('method', '?')}, "
                              f"chance {pct(ev.get('chance'))}; skipped: "
                              + (", ".join(f"{k} ({v})" for k, v in (ev.get("skipped") or {}).items()) or "none") + ".")]
    rows = [[n, pct(s["accuracy"]), f"{pct(s['ci95'][0])} to {pct(s['ci95'][1])}",
             num((s.get("calibration") or {}).get("ece"), 3), pct(s.get("parse_rate")), _favourite(s.get("favourite")),
             num((timing.get(n) or {}).get("questions_per_s"), 1)] for n, s in ev["models"].items()]
    out.append(("table", ["member", "accuracy", "95% interval", "ECE", "parsed", "favourite letter", "questions/s"],
                rows))
    collapsed = [n for n, s in ev["models"].items() if (s.get("favourite") or {}).get("collapsed")]
    if collapsed:
        out.append(("note", f"Collapsed to one letter: {', '.join(collapsed)} (over {COLLAPSE_SHARE:.0%} of answers on "
                            f"its favourite, far above the key's share). A model {COLLAPSE_ADVICE}."))
    cmp = ev.get("comparison")
    if isinstance(cmp, dict) and "ratio" in cmp:
        out.append(("p", f"Letter scoring ran {cmp['ratio']:.2f}x the questions/s of generate-and-parse on "
                         f"{cmp.get('member', '?')}; generation parsed {pct(cmp.get('baseline_parse_rate'))}, "
                         f"same letter on {cmp.get('agreeing', '?')}/{cmp.get('parsed', '?')}."))
        if "base_parse_rate" in cmp:
            out.append(("p", f"Generate mode, the base against {cmp.get('member', '?')}: parsed "
                             f"{pct(cmp['base_parse_rate'])} against {pct(cmp.get('baseline_parse_rate'))}; a letter "
                             f"and nothing else {pct(cmp.get('base_letter_only_rate'))} against "
                             f"{pct(cmp.get('letter_only_rate'))}."))
    for name, alt in (("accuracy", "accuracy"), ("by_source", "accuracy by source"), ("by_bucket", "by difficulty"),
                      ("by_topic", "by topic"), ("reliability", "reliability"), ("letter_bias", "letter bias"),
                      ("forgetting", "change from the base model")):
        if ctx.lay.eval_plot(name).is_file() or name == "accuracy":
            out.append(plot(ctx, ctx.rel(ctx.lay.eval_plot(name)), alt))
    return out


def ensemble_section(ctx: Ctx, ens: dict) -> list[Block]:
    """ensemble/summary.json: the choice, every candidate on the held-out half, agreement."""
    w = ", ".join(f"{m} {x:.2f}" for m, x in (ens.get("weights") or {}).items())
    kind = ens["candidate"] + ("" if ens["candidate"] == ens["method"] else f" ({ens['method']})")
    out: list[Block] = [("p", [("b", f"Chosen: {kind}"),
                               f" with {w or 'no weights'}: held-out accuracy {pct(ens.get('accuracy'))}; best single "
                               f"member {ens.get('best_member')}; oracle {pct(ens.get('oracle_heldout'))}; "
                               f"{ens.get('fit_items', '?')} fitting / {ens.get('heldout_items', '?')} held-out "
                               "questions."])]
    cands = ens.get("candidates") or {}
    if cands:
        out.append(("table", ["candidate", "method", "cv accuracy", "fitting accuracy", "held-out accuracy", "weights"],
                    [[k, c.get("method"), pct(c.get("cv_accuracy")), pct(c.get("fit_accuracy")),
                      pct(c.get("heldout_accuracy")),
                      ", ".join(f"{m} {x:.2f}" for m, x in (c.get("weights") or {}).items() if x > 0)]
                     for k, c in cands.items()]))
    agree = ens.get("agreement_heldout") or {}
    if agree:
        cols = list(agree)
        out.append(("table", ["agreement", *cols], [[a, *(pct((agree[a] or {}).get(b)) for b in cols)] for a in cols]))
    return out + [plot(ctx, ctx.rel(ctx.lay.ensemble_plot(n)), n) for n in ("accuracy", "agreement", "weights")]


def match_section(ctx: Ctx, tour: dict) -> list[Block]:
    """agents/tournament.json: the scoreboard, the original team's replay, the agents' output checks and latency."""
    out: list[Block] = []
    for title, res in (("Match against the untrained base model", tour["match"]),
                       ("The original team's round-0 question format, replayed", tour.get("seeds_replay"))):
        if not res:
            continue
        out += [("h", 3, title), ("table", ["team", "Q-score", "A-score", "total /200", "format-correct",
                                            "disqualified", "question p99 s", "answer p99 s"],
                                  [[("b", t) if t == res.get("winner") else t, num(s["q_score"]), num(s["a_score"]),
                                    num(s["total"]), f"{s.get('format_correct')}/{s.get('requested')}",
                                    "YES" if s.get("disqualified") else "no", num(s.get("question_p99_s"), 3),
                                    num(s.get("answer_p99_s"), 3)] for t, s in res["scores"].items()]),
                ("p", f"Winner: {res.get('winner') or 'none'} (decided by {res.get('decided_by', '?')}; judged by the "
                      f"edition {res.get('edition', edition_mod.DEFAULT)}).")]
    q, a, sel = tour.get("questions") or {}, tour.get("answers") or {}, tour.get("selection") or {}
    keys = a.get("against_keys") or {}
    out.append(("p", f"Q-agent: {q.get('format_correct', '?')}/{q.get('requested', '?')} questions format-correct. "
                     f"A-agent ({', '.join(sel.get('members') or []) or '?'}, {sel.get('method', '?')}): "
                     f"{a.get('passed_filter', '?')}/{a.get('answers', '?')} answers pass the filter, "
                     f"{keys.get('correct', '?')}/{keys.get('keyed', '?')} right against the keys; fallbacks "
                     f"{a.get('fallbacks') or 'none'}."))
    mix = (q.get("difficulty") or {}).get("by_family") or {}
    if mix:
        out += [("p", "Difficulty of the puzzles the Q-agent asked, as the solver measured it (0-10: a point per "
                      "deduction needed, one per 4 bits of possibilities; levels: "
                      + ", ".join(f"{lv} x{n}" for lv, n in (q["difficulty"].get("levels") or {}).items()) + "):"),
                ("table", ["family", "questions", "mean", "min", "max"],
                 [[k, num(v.get("n")), num(v.get("mean"), 2), num(v.get("min"), 2), num(v.get("max"), 2)]
                  for k, v in mix.items()])]
    lat = tour.get("latency") or {}
    if lat:
        out.append(("table", ["agent", "items", "p50 s", "p99 s", "max s", "limit s", "over limit"],
                    [[{"questions": "Q-agent", "answers": "A-agent"}.get(k, k), num(v.get("items")), num(v.get("p50_s"), 3), num(v.get("p99_s"), 3),
                      num(v.get("max_s"), 3), num(v.get("limit_s"), 1), num(v.get("over_limit"))]
                     for k, v in lat.items()]))
    return out + [plot(ctx, ctx.rel(ctx.lay.agents_plot(n)), n) for n in ("latency", "match")]


def elimination_section(ctx: Ctx, rep: dict) -> list[Block]:
    """agents/elimination.json: the A-agent on the seeding set by topic, against its score on the kit's own questions."""
    rows = [[r["topic"], f"{pct(r['seeding_accuracy'])} of {r['seeding_n']}",
             f"{pct(r['own_accuracy'])} of {r['own_n']}" if r.get("own_accuracy") is not None else "n/a",
             num(r.get("gap_points"), 1) if r.get("gap_points") is not None else "n/a"]
            for r in rep.get("against_own") or []]
    return [("table", ["topic", "seeding set", "the kit's own questions", "gap (points)"], rows),
            ("p", f"{rep.get('correct', '?')} of {rep.get('questions', '?')} seeding questions right under the edition "
                  f"{rep.get('edition', '?')}. A large gap: the A-agent learned the kit's templates, not the reading.")]


def writer_section(ctx: Ctx, rep: dict) -> list[Block]:
    """agents/writer.json: the base and the trained question writer on the same requests, and the share chosen."""
    rows = [[m, pct(r["json_share"]), pct(r["filter_share"]), f"{pct(r['proven_share'])} ({r['proven']}/{r['requests']})",
             num(r.get("seconds_mean"), 2), num(r.get("seconds_p90"), 2),
             ", ".join(f"{k} {v}" for k, v in sorted((r.get("rejected") or {}).items(), key=lambda kv: -kv[1])[:4])]
            for m, r in ((name, rep[name]) for name in ("base", WRITER) if name in rep)]
    out: list[Block] = [("table", ["model", "JSON", "passes the filter", "proven, right key", "s a question",
                                   "p90 s", "most common rejections"], rows),
                        ("p", f"Budget {num(rep.get('budget_s'), 1)} s a question. {rep.get('why', '')}.")]
    accepted = (rep.get(WRITER) or {}).get("accepted") or []
    if accepted:
        out.append(("p", f"A proven question the writer wrote: {accepted[0]['question']} "
                         f"{' '.join(accepted[0]['choices'])} (key {accepted[0]['answer']})"))
    return out


REASONERS = {"letter": "letter", "reason": "reason", "rl": "reason (reinforced)"}  # reasoner.json's answerers


def reasoner_section(ctx: Ctx, rep: dict) -> list[Block]:
    """agents/reasoner.json: letter-only against reasoning (the supervised and, when trained, the reinforced
    reasoner) on the same held-out puzzles, and the answer mode chosen."""
    modes = [m for m in REASONERS if m in rep]
    rows = [[REASONERS[m], f"{r['correct']}/{r['n']} ({pct(r['accuracy'])})", f"{pct(r['ci95'][0])}-{pct(r['ci95'][1])}",
             num(r["latency"]["p50_s"], 2), num(r["latency"]["p99_s"], 2), num(r["latency"]["limit_s"], 1),
             pct(r["cut_share"]), num(r.get("tokens_mean"), 1),
             reading.summary((r.get("first_step") or {}).get("all") or {}) or "-",
             f"{r['favourite']['letter']} {pct(r['favourite']['share'])}", num(r["filter_failed"])]
            for m, r in ((m, rep[m]) for m in modes)]
    out: list[Block] = [("table", ["mode", "correct", "95% interval", "p50 s", "p99 s", "limit s", "cut",
                                   "tokens written", "first step true", "favourite letter", "failed filter"], rows)]
    for key, label in (("by_kind", "family"), ("by_level", "level")):
        names = sorted({k for m in modes for k in rep[m][key]})
        out.append(("table", [label] + [f"{m} (n)" for m in modes],
                    [[k] + [f"{pct(rep[m][key][k]['accuracy'])} ({rep[m][key][k]['n']})" if k in rep[m][key] else ""
                            for m in modes] for k in names]))
    out.append(("p", f"{rep.get('why', '')}. Reasoning seconds are each answer's wait for its whole batch of 5, "
                     "generated together; letter seconds are a batch's time shared by its answers."))
    if rep.get("reasoner_member"):
        out.append(("p", f"Reasoning adapter chosen: {rep['reasoner_member']}."))
    example = ((rep.get("reason") or {}).get("examples") or [None])[0]
    if example:
        out.append(("p", f"A reasoning answer (key {example['key']}): {example['answer']}, "
                         f"\"{example.get('reasoning', '')[:300]}\""))
    return out


def _halves(rep: dict, kind: str, name: str) -> str:
    """ "0.250 to 0.375": a family's reward in the run's first and second half; the whole run's when no halves."""
    halves = (rep.get("rewards_by_kind_half") or {}).get(kind) or {}
    if not halves:
        return num((rep.get("rewards_by_kind") or {}).get(kind, {}).get(name), 3)
    return f"{num((halves.get('first') or {}).get(name), 3)} to {num((halves.get('last') or {}).get(name), 3)}"


def _backend_name(backend: str | None) -> str:
    """ "Unsloth" / "transformers + PEFT": the training backend a report names ("backend ?" when it does not say)."""
    return {"unsloth": "Unsloth", "transformers": "transformers + PEFT"}.get(backend or "", "backend ?")


def _rl_checkpointing(gc: dict | None) -> str:
    """ ", gradient checkpointing reentrant": the checkpointing GRPO really ran with (Unsloth's GRPOConfig makes it
    reentrant), or nothing where the report does not say."""
    if not gc:
        return ""
    if not gc.get("enabled"):
        return ", no gradient checkpointing"
    reentrant = gc.get("use_reentrant")
    return f", gradient checkpointing {'reentrant' if reentrant else 'non-reentrant' if reentrant is False else '?'}"


def rl_section(ctx: Ctx, rep: dict) -> list[Block]:
    """agents/reasoner_rl.json: the reinforcement stage's steps, seconds a step, each reward at its first and last
    logged step and per family in the run's first and second half, zero rewards by reason, and its curves."""
    curve = rep.get("rewards") or {}
    first, last = curve.get("first") or {}, curve.get("last") or {}
    rewards = list(first)
    out: list[Block] = [
        ("p", f"{num(rep.get('steps'))} GRPO steps from the {(rep.get('start') or {}).get('from', '?')} reasoner, "
              f"{num(rep.get('seconds_per_step'), 2)} s a step (generation included), token budget "
              f"{num(rep.get('token_budget'))}, {_backend_name(rep.get('backend'))}, trl {rep.get('trl')}, KL against "
              f"{rep.get('kl_reference')}{_rl_checkpointing(rep.get('gradient_checkpointing'))}; zero rewards by "
              f"reason: {rep.get('zero_reasons') or 'none'}."),
        ("table", ["reward", "first step", "last step", "whole run"],
         [[n, num(first.get(n), 3), num(last.get(n), 3), num((rep.get("rewards_overall") or {}).get(n), 3)]
          for n in rewards]),
        ("table", ["family (first half to second half of the run)"] + rewards,
         [[k] + [_halves(rep, k, n) for n in rewards] for k in (rep.get("rewards_by_kind") or {})])]
    if rep.get("plot"):
        out.append(plot(ctx, rep["plot"], "reinforcement curves"))
    return out
