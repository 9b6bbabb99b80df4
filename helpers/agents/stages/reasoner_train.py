"""The reasoning A-agent's stage: training chats (helpers.agents.stages.reasoner_data) -> its own adapter
(config.REASONER under runs/<run>/models/, trained like the others by helpers.agents.stages.own_adapter with the
profile's `reasoner:` settings) -> letter-only against reasoning on held-out puzzles
(helpers.agents.stages.reasoner_measure; the reinforced reasoner of helpers.agents.stages.reasoner_rl too, when it is
trained), whose decision (`justified_answer`: the mode for agents.answer_mode: auto, and which reasoner adapter)
goes into agents/reasoner.json for helpers.agents.build to read. Notebook 08 trains it and notebook 09 measures it;
so can a shell:

    python -m helpers.agents.stages reasoner --profile cpu [--run NAME] [--overrides JSON] [--measure-only]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from helpers import config, filters, io
from helpers.agents import build, reasoner
from helpers.agents.stages import reasoner_data, reasoner_measure
from helpers.agents.stages.own_adapter import train_own_adapter, write_chats
from helpers.config import REASONER, REASONER_RL
from helpers.io import stamp
from helpers.layout import RunLayout


def build_data(cfg: config.Profile) -> Path:
    """runs/<run>/agents/reasoner_train.jsonl: reasoner.examples chats over the edition's families (build.asked_kinds)
    x reasoner.levels, their reasoning inside the profile's token budget where a draw allows (counted with the base's
    tokenizer), and beside it their sources and what was left out or redrawn, counted by reason
    (reasoner_train.counts.json)."""
    lay, counts = RunLayout.of(cfg), Counter()
    tokenizer, budget = build.load_tokenizer(cfg), reasoner.token_budget(cfg.agents)
    path = write_chats(cfg, REASONER, lay.reasoner_data, lambda n: reasoner_data.reasoner_records(
        n, seed=cfg.seed, kinds=build.asked_kinds(cfg), levels=cfg.reasoner.levels, stats=counts,
        tokens=lambda text: filters.count_tokens(text, tokenizer), budget=budget))
    io.write_json(lay.reasoner_data_counts, {"token_budget": budget, **dict(sorted(counts.items()))})
    return path


def train(cfg: config.Profile, *, recommendation: dict | None = None, progress: Any = None,
          resume: bool = True) -> dict:
    """Build the chats and train the reasoner's adapter (resumable like the others); returns its training summary."""
    return train_own_adapter(cfg, REASONER, build_data(cfg), recommendation=recommendation, progress=progress,
                             resume=resume)


def rl_is_current(cfg: config.Profile, model: Any) -> bool:
    """Whether the reinforced reasoner is loaded and is the profile's: rl.prompts > 0 and its report's rl settings
    are the profile's (an adapter left from other settings is not measured)."""
    lay = RunLayout.of(cfg)
    if cfg.rl.prompts <= 0 or REASONER_RL not in getattr(model, "peft_config", {}) or not lay.rl_report.exists():
        return False
    return (io.read_json(lay.rl_report).get("params") or {}).get("rl") == config.as_dict(cfg.rl)


def measure_questions(cfg: config.Profile) -> list[dict]:
    """The held-out puzzles a run's reasoner is measured on (reasoner.measure of them, from the run's seed)."""
    return reasoner_measure.held_out(cfg.reasoner.measure, seed=cfg.seed, kinds=build.asked_kinds(cfg),
                                     levels=cfg.reasoner.levels)


def measure_run(cfg: config.Profile, *, model: Any = None, tokenizer: Any = None, sel: dict | None = None,
                recommendation: dict | None = None) -> dict:
    """Letter-only (the A-agent's selection) against reasoning (the reasoner), and the reinforced reasoner when its
    adapter is loaded, on reasoner.measure held-out puzzles, on cfg.agents's budget; writes agents/reasoner.json
    (the mode and the reasoner adapter it justifies, the settings it measured) and returns it.
    model/tokenizer/sel: a team model already holding the selection's members and the reasoners (else loaded)."""
    if model is None:
        sel = build.selection(cfg)
        model, tokenizer, info = build.load_team_model(cfg, sel["members"] + [REASONER, REASONER_RL], recommendation)
        sel = build.loaded_selection(sel, info)
    if REASONER not in getattr(model, "peft_config", {}):
        raise io.InputError(RunLayout.of(cfg).adapter_dir(REASONER), None, None,
                            "missing: the reasoner is not trained (notebook 08 section 3, or "
                            "`python -m helpers.agents.stages reasoner`)")
    agents = replace(cfg.agents, model_question_share=0.0)
    questions = measure_questions(cfg)
    lay = RunLayout.of(cfg)
    training = io.read_jsonl(lay.reasoner_data) if lay.reasoner_data.exists() else []
    wordings = reasoner_measure.mark_wordings(questions, training) if training else Counter()
    from helpers.models.adapters import adapter_sha256
    reasoners = {"reason": REASONER} | ({"rl": REASONER_RL} if rl_is_current(cfg, model) else {})
    report = {"letter": reasoner_measure.measure(build.answer_agent(model, tokenizer, sel, agents, mode="letter"),
                                                 questions)}
    for name, member in reasoners.items():  # each reasoner named here, never the selection's earlier choice
        agent = build.answer_agent(model, tokenizer, {**sel, "reasoner": member}, agents, mode="reason")
        report[name] = reasoner_measure.measure(agent, questions)
    mode, member, why = reasoner_measure.justified_answer(report)
    report.update(justified_mode=mode, reasoner_member=member, why=f"answer_mode {mode}: {why}",
                  letter_members=sel["members"],
                  adapters_sha256={m: adapter_sha256(lay.adapter_dir(m)) for m in reasoners.values()})
    report["wordings"] = dict(wordings)  # held-out puzzles whose wording the chats never used ("new") and the rest
    if lay.reasoner_data_counts.exists():
        report["training_chats"] = io.read_json(lay.reasoner_data_counts)
    lay.made(lay.agents_dir)
    io.write_json(lay.reasoner_report, {**report, **stamp(reasoner_measure.measured_settings(cfg))})
    return report
