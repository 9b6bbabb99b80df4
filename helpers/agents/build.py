"""Build the kit's agents from a profile: the agents settings, the members to load, the Q- and A-agents."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from helpers import config, io
from helpers.agents import predictor as pred
from helpers.agents import topics as topics_mod
from helpers.agents.answer import AnswerAgent
from helpers.agents.question import QuestionAgent
from helpers.agents.reasoner import Reasoner
from helpers.agents.writer import ModelWriter
from helpers.config import REASONER, WRITER
from helpers.layout import RunLayout
from helpers.models.adapters import adapter_sha256
from helpers.models.members import missing_adapter_files


def agents_cfg(cfg: config.Profile, **params: Any) -> config.AgentsSettings:
    """cfg.agents with every non-None notebook parameter laid over it, checked; model_question_share "auto" resolved
    from the run's writer measurement (measured_share), answer_mode "auto" from its reasoner measurement
    (measured_mode)."""
    cfg = config.with_params(cfg, "agents", where="agent parameters", **params)
    agents = cfg.agents
    if agents.model_question_share == "auto":
        agents = replace(agents, model_question_share=measured_share(cfg)[0])
    if agents.answer_mode == "auto":
        agents = replace(agents, answer_mode=measured_mode(cfg)[0])
    return agents


def measured_share(cfg: config.Profile) -> tuple[float, str]:
    """agents.model_question_share resolved for a run: the number set, or for "auto" the share the writer's stage wrote
    into agents/writer.json (helpers.agents.stages.writer_train), trusted only while the writer it measured is there
    and the profile's writer settings are the measured ones."""
    share = cfg.agents.model_question_share
    if share != "auto":
        return float(share), "set in the profile"
    path = RunLayout.of(cfg).writer_report
    if not path.exists():
        return 0.0, "no trained writer was measured (writer.examples 0, or notebooks 08-09 not run for this run)"
    report = io.read_json(path)
    missing = missing_adapter_files(cfg, WRITER)
    if missing:
        return 0.0, f"the measured writer's adapter is missing ({missing[0]})"
    if (report.get("params") or {}).get("writer") not in (None, config.as_dict(cfg.writer)):
        return 0.0, f"{path.name} measured other writer settings than the profile's: run notebooks 08 and 09 again"
    share = float(report["justified_share"])
    return share, report["why"].removeprefix(f"model_question_share {share:g}: ")  # the stage's reason, bare


def measured_answer(cfg: config.Profile) -> tuple[str, str, str]:
    """(answer mode, reasoner adapter, why) for a run: the mode set in the profile (with the supervised reasoner), or
    for "auto" what the reasoner's stage wrote into agents/reasoner.json (helpers.agents.stages.reasoner_train: the
    supervised or the reinforced reasoner), trusted only while the chosen reasoner's adapter is there, is the one
    measured (its weights' sha256) and every setting the measurement recorded (the reasoner's, the rl section's, the
    answer budget's) is still the profile's."""
    mode = cfg.agents.answer_mode
    if mode != "auto":
        return mode, REASONER, "set in the profile"
    path = RunLayout.of(cfg).reasoner_report
    if not path.exists():
        return "letter", REASONER, "no reasoner was measured (reasoner.examples 0, or notebooks 08-09 not run for this run)"
    report = io.read_json(path)
    member = report.get("reasoner_member", REASONER)
    missing = missing_adapter_files(cfg, member)
    if missing:
        return "letter", REASONER, f"the measured reasoner's adapter is missing ({missing[0]})"
    measured_sha = (report.get("adapters_sha256") or {}).get(member)
    if measured_sha and measured_sha != adapter_sha256(RunLayout.of(cfg).adapter_dir(member)):
        return "letter", REASONER, (f"{member}'s adapter was trained again after {path.name} measured it: run "
                                    "notebook 09 again")
    if not _still_the_profiles(report.get("params") or {}, cfg):
        return "letter", REASONER, (f"{path.name} measured other reasoner, rl or answer-budget settings than the "
                                    "profile's: run notebooks 08 and 09 again")
    mode = report["justified_mode"]
    return mode, member, report["why"].removeprefix(f"answer_mode {mode}: ")  # the stage's reason, bare


def measured_mode(cfg: config.Profile) -> tuple[str, str]:
    """agents.answer_mode resolved for a run, and why (measured_answer without the reasoner adapter)."""
    mode, _, why = measured_answer(cfg)
    return mode, why


def _still_the_profiles(measured: dict, cfg: config.Profile) -> bool:
    """Whether the reasoner and rl sections, the families the edition asks and every answer-budget key a measurement
    recorded equal the profile's."""
    budget, kinds = measured.get("agents"), list(asked_kinds(cfg))
    return (measured.get("reasoner") == config.as_dict(cfg.reasoner) and isinstance(budget, dict)
            and measured.get("rl", config.as_dict(cfg.rl)) == config.as_dict(cfg.rl)
            and measured.get("kinds", kinds) == kinds
            and budget == {k: getattr(cfg.agents, k, None) for k in budget})  # the edition's limits included


def writer_member(info: dict, sel: dict) -> str:
    """The member that writes questions: the trained question writer when it loaded, else the best answerer."""
    return WRITER if WRITER in info.get("members", ()) else sel["best_member"]


def selection(cfg: config.Profile) -> dict:
    """The A-agent's members: the ensemble from notebook 07, else the best model of 06, else a fallback; and the
    reasoner adapter a reasoning A-agent uses ("reasoner": measured_answer's)."""
    return {**pred.choose_members(RunLayout.of(cfg), list(cfg.models)), "reasoner": measured_answer(cfg)[1]}


def match_plan(cfg: config.Profile, *, answer_mode: str | None = None, time_margin: float | None = None,
               **params: Any) -> tuple[config.AgentsSettings, dict, str]:
    """What notebook 10 plays with: the agents' settings (every non-None parameter over the profile, "auto" resolved
    from notebook 09's measurements on the same time margin), the A-agent's selection with the reasoner it uses (the
    measured one, or the supervised one when answer_mode is given), and why that answer mode."""
    measured_on = config.with_params(cfg, "agents", time_margin=time_margin)
    mode, member, why = measured_answer(measured_on)  # read once: reasoner.json and the measured adapter's sha256
    agents = agents_cfg(cfg, answer_mode=answer_mode or mode, time_margin=time_margin, **params)
    sel = {**pred.choose_members(RunLayout.of(cfg), list(cfg.models)),
           "reasoner": member if answer_mode is None else REASONER}
    return agents, sel, why if answer_mode is None else "the ANSWER_MODE parameter"


def load_team_model(cfg: config.Profile, names: Sequence[str],
                    recommendation: dict | None = None) -> tuple[Any, Any, dict]:
    """The base model once with every named adapter attached ("base" = adapters off), for inference."""
    from helpers import env
    from helpers.models import members
    if recommendation is None:
        recommendation = env.read_recommendation(cfg)
    return members.load_members(cfg, list(dict.fromkeys(names)), recommendation, skip_missing=True)


def load_tokenizer(cfg: config.Profile) -> Any:
    """The base model's tokenizer alone (the Q-agent's puzzles need no model weights)."""
    from helpers.models import load_tokenizer as load
    return load(cfg.model.weights, cfg.model)


def answer_agent(model: Any, tokenizer: Any, sel: dict, agents: config.AgentsSettings, *, name: str = "kit",
                 mode: str | None = None) -> AnswerAgent:
    """An A-agent on an already loaded model: letter scoring with the selection's members, or (mode "reason", by
    default agents.answer_mode) the reasoner's deduction then the letter: the selection's "reasoner" adapter (the
    supervised one unless it names the reinforced one), which must be loaded."""
    mode = mode or agents.answer_mode
    p, reasoner = None, None
    if mode == "reason":
        member = sel.get("reasoner") or REASONER
        if member not in getattr(model, "peft_config", {}):
            raise ValueError(f"answer_mode reason needs the {member!r} adapter loaded (notebook 08 trains it)")
        reasoner = Reasoner(model, tokenizer, member=member, max_new_tokens=agents.reason_max_tokens)
    else:
        p = pred.LetterPredictor(model, tokenizer, sel["members"], weights=sel.get("weights"),
                                 method=sel.get("method", "soft"), batch_size=agents.answer_chunk_size)
    return AnswerAgent(p, tokenizer, margin=agents.time_margin, chunk_size=agents.answer_chunk_size, name=name,
                       reasoner=reasoner, edition=agents.rules)


def question_agent(tokenizer: Any, topics: dict, agents: config.AgentsSettings, *, seed: int, name: str = "kit",
                   model: Any = None, member: str = pred.BASE, checker: AnswerAgent | None = None,
                   bank: Sequence[dict] | None = None) -> QuestionAgent:
    """A Q-agent: puzzles always; a model writer too when a model is given and the share is above 0."""
    writer = None
    share = agents.model_question_share
    if model is not None and writes_questions(agents, topics):  # at share 0 only the topics no family writes
        writer = ModelWriter(model, tokenizer, member=member, checker=checker,
                             max_failures=agents.writer_max_failures,
                             candidates=agents.writer_candidates, rules=agents.rules.question_rules)
    return QuestionAgent(tokenizer, topics, seed=seed, margin=agents.time_margin, levels=agents.puzzle_levels,
                         kinds=agents.puzzle_kinds, candidates=agents.puzzle_candidates, writer=writer,
                         model_share=share, bank=bank, name=name, edition=agents.rules,
                         unserved=agents.unserved_topics)


def writes_questions(agents: config.AgentsSettings, topics: dict) -> bool:
    """Whether the Q-agent's model writes any question: a share above 0, or a topic no puzzle family writes that
    agents.unserved_topics gives the writer."""
    return agents.model_question_share > 0 or (agents.unserved_topics == "writer"
                                                and bool(topics_mod.unserved_pairs(topics)))


def read_topics(cfg: config.Profile, topics_file: str | None = None) -> dict:
    """The topics of a topics file named by the argument (an organisers' topics.json handed out on the day; relative
    paths from the project root), else the profile's edition's."""
    if topics_file:
        return topics_mod.read_topics(config.resolve_path(topics_file))
    return cfg.agents.rules.topics


def asked_kinds(cfg: config.Profile) -> tuple[str, ...]:
    """The families of agents.puzzle_kinds that the edition's topics route to (topics.families): those its Q-agents
    ask and its A-agent meets, which the reasoner is trained, measured and reinforced on (October 2025's seating and
    blood relations: 12 of the 16). Every family when no topic routes to one, so a reasoner still has puzzles."""
    kinds = tuple(cfg.agents.puzzle_kinds)
    asked = {k for t, s in topics_mod.pairs(read_topics(cfg)) for k in topics_mod.families(t, s, kinds)}
    return tuple(k for k in kinds if k in asked) or kinds


def kit_answer_agent(cfg: config.Profile) -> tuple[AnswerAgent, dict]:
    """(A-agent, selection) for a run: loads the base and the chosen members."""
    sel, agents = selection(cfg), agents_cfg(cfg)
    reasoning = [sel["reasoner"]] if agents.answer_mode == "reason" else []
    model, tok, info = load_team_model(cfg, sel["members"] + reasoning)
    sel = loaded_selection(sel, info)
    return answer_agent(model, tok, sel, agents), {**sel, "answer_mode": agents.answer_mode}


def loaded_selection(sel: dict, info: dict) -> dict:
    """The selection cut to the members that really loaded (a skipped adapter is listed, never silently lost)."""
    members = [m for m in sel["members"] if m in info["members"]] or [pred.BASE]
    weights = {m: w for m, w in (sel.get("weights") or {}).items() if m in members} or None
    best = sel.get("best_member") if sel.get("best_member") in info["members"] else members[0]
    return {**sel, "members": members, "weights": weights, "best_member": best, "skipped": info.get("skipped", {})}


def kit_question_agent(cfg: config.Profile, *, topics_file: str | None = None, model_share: float | None = None,
                       seed: int | None = None) -> tuple[QuestionAgent, dict]:
    """(Q-agent, build info): tokenizer only for puzzles; the model and the A-agent as checker when the model writes
    questions (a share > 0, or a topic no family writes: writes_questions)."""
    agents = agents_cfg(cfg, model_question_share=model_share)
    topics = read_topics(cfg, topics_file)
    seed = cfg.seed if seed is None else seed
    if not writes_questions(agents, topics):
        return question_agent(load_tokenizer(cfg), topics, agents, seed=seed), {"model": None, "topics": topics}
    sel = selection(cfg)
    model, tok, info = load_team_model(cfg, list(sel["members"]) + [sel["best_member"], WRITER])
    sel = loaded_selection(sel, info)
    writer = writer_member(info, sel)
    checker = answer_agent(model, tok, sel, agents, name="checker", mode="letter")
    agent = question_agent(tok, topics, agents, seed=seed, model=model, member=writer, checker=checker)
    return agent, {"model": writer, "selection": sel, "topics": topics}
