"""The kit's agents behind the challenge harness's interface (what the exported question_model.py /
answer_model.py subclass).

The organisers' fixed `agents/question_agent.py` and `agents/answer_agent.py` build `QAgent(**kwargs)` /
`AAgent(**kwargs)`, count tokens with their `.tokenizer`, and call
`generate_response(message: str | list[str], system_prompt=None, **kwargs)` expecting
`(text or list of texts, generated token count or None, seconds or None)`; they json-parse each text and
apply the format filters. The prompts are theirs: the Q-side names "<topic>/<subtopic>" (and usually the
correct letter), the A-side carries "Question: ..." and "Choices: A) ... B) ..." lines. Generation
kwargs (max_new_tokens, temperature, ...) are accepted and only bound the model writer.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from helpers import config
from helpers.agents import build
from helpers.agents import predictor as pred
from helpers.agents.writer import GEN_DEFAULTS
from helpers.io import InputError, read_json
from helpers.models import members

CONFIG_NAME = "kit_agent.json"
CONFIG_ENV = "KIT_AGENT_CONFIG"  # overrides where the exported classes look for their config
# Every key the exported classes read; helpers.agents.harness.export writes them all (None where a role is off).
CONFIG_KEYS = ("base", "model", "members", "weights", "method", "best_member", "writer", "reasoner", "adapters",
               "topics", "agents", "seed", "cpu_threads")


def load_export_config(path: str | os.PathLike | None = None) -> tuple[dict, Path]:
    """(config, its folder): the path given, else $KIT_AGENT_CONFIG; relative adapter paths resolve from the folder.
    Its `agents` and `model` come back as checked sections (config.AgentsSettings, config.ModelSettings)."""
    path = Path(path or os.environ.get(CONFIG_ENV) or CONFIG_NAME)
    if not path.exists():
        raise InputError(path, None, None,
                         "agent config not found: export it with `python -m helpers.agents.harness export`")
    conf = read_json(path)
    for key in CONFIG_KEYS:
        if key not in conf:
            raise InputError(path, None, key, "missing from the exported agent config")
    folder = path.resolve().parent
    agents = _section(config.AgentsSettings, _edition_from(conf["agents"], folder), path, "agents")
    for key in ("model_question_share", "answer_mode"):
        if getattr(agents, key) == "auto":  # the export records what notebook 09 measured, never auto
            raise InputError(path, None, f"agents.{key}", "auto: export the run again to record the decided value")
    model = _section(config.ModelSettings, _model_settings(conf, folder), path, "model")
    return {**conf, "agents": agents, "model": model}, folder


def _edition_from(agents: Any, folder: Path) -> Any:
    """The export's agents settings with its edition file (recorded relative to the export) found from the folder."""
    if isinstance(agents, dict) and isinstance(agents.get("edition"), str) and (folder / agents["edition"]).is_file():
        return {**agents, "edition": str(folder / agents["edition"])}
    return agents


def _section(cls: type, values: Any, path: Path, prefix: str) -> Any:
    """One section of the export, checked: a missing, unknown or bad key names the file and the key."""
    for key in config.required_keys(cls):
        if isinstance(values, dict) and key not in values:
            raise InputError(path, None, f"{prefix}.{key}", "missing from the exported agent config")
    return config.section_from_dict(cls, values, path, prefix)


def _model_settings(conf: dict, folder: Path) -> Any:
    """The export's resolved model settings with its base (a relative base resolved from the folder)."""
    if not isinstance(conf["model"], dict):
        return conf["model"]  # _section names the bad section
    base = conf["base"]
    if not Path(base).is_absolute() and (folder / base).exists():
        base = str(folder / base)
    return {**conf["model"], "base": base}


def _adapter_paths(conf: dict, folder: Path, names: list[str]) -> dict[str, str]:
    out = {}
    for name in names:
        if name == pred.BASE:
            continue
        rel = conf["adapters"].get(name)
        if rel is None:
            raise InputError(folder / CONFIG_NAME, None, "adapters", f"no folder for member {name!r}")
        path = Path(rel)
        out[name] = str(path if path.is_absolute() else folder / path)
    return out


def _load(conf: dict, folder: Path, names: list[str]) -> tuple[Any, Any, dict]:
    model = conf["model"]
    return members.load_with_adapters(model.base, model, _adapter_paths(conf, folder, names),
                                      threads=conf["cpu_threads"])


def _load_tokenizer(conf: dict) -> Any:
    from helpers.models import load_tokenizer
    return load_tokenizer(conf["model"].base, conf["model"])


def _reply(message: Any, texts: list[str], tokenizer: Any, t0: float) -> tuple[Any, int, float]:
    tokens = sum(len(tokenizer.encode(t, add_special_tokens=False)) for t in texts)
    return (texts if isinstance(message, (list, tuple)) else texts[0]), tokens, time.perf_counter() - t0


def _messages(message: Any) -> list[str]:
    items = list(message) if isinstance(message, (list, tuple)) else [message]
    return [m if isinstance(m, str) else str(m) for m in items]


class KitQAgent:
    """QAgent(**kwargs): verified puzzles (and model-written questions when the export enables them)."""

    def __init__(self, **kwargs: Any):
        conf, folder = load_export_config(kwargs.get("config"))
        self.config = conf
        agents = conf["agents"]
        self.model = None
        checker, member = None, pred.BASE
        if build.writes_questions(agents, conf["topics"]):  # at share 0 only on the topics no family writes
            best = conf["best_member"]
            member = conf["writer"] or best  # the trained question writer when the export holds it
            self.model, self.tokenizer, _ = _load(conf, folder, list(dict.fromkeys(conf["members"] + [best, member])))
            sel = {"members": conf["members"], "weights": conf["weights"], "method": conf["method"]}
            checker = build.answer_agent(self.model, self.tokenizer, sel, agents, name="checker", mode="letter")
        else:
            self.tokenizer = _load_tokenizer(conf)
        self.agent = build.question_agent(self.tokenizer, conf["topics"], agents, seed=int(conf["seed"]),
                                          model=self.model, member=member, checker=checker)

    def generate_response(self, message: str | list[str], system_prompt: str | None = None,
                          **kwargs: Any) -> tuple[str | list[str], int | None, float | None]:
        """One question JSON text per prompt (a list for a list); every text passes the format filter."""
        t0 = time.perf_counter()
        if self.agent.writer is not None and kwargs.get("max_new_tokens"):  # the harness's 1024 bounds, never raises
            self.agent.writer.gen["max_new_tokens"] = min(int(kwargs["max_new_tokens"]), GEN_DEFAULTS["max_new_tokens"])
        texts = []
        for prompt in _messages(message):
            question, _ = self.agent.respond(prompt)
            texts.append(json.dumps(question, ensure_ascii=False) if question is not None else "{}")
        return _reply(message, texts, self.tokenizer, t0)


class KitAAgent:
    """AAgent(**kwargs): letter scoring with the exported members, or the exported reasoner's deduction then the
    letter (agents.answer_mode reason); one valid answer JSON per prompt."""

    def __init__(self, **kwargs: Any):
        conf, folder = load_export_config(kwargs.get("config"))
        self.config = conf
        self.model, self.tokenizer, info = _load(conf, folder, list(conf["members"]) + ([conf["reasoner"]]
                                                                                     if conf["reasoner"] else []))
        sel = build.loaded_selection({"members": conf["members"], "weights": conf["weights"],
                                      "method": conf["method"], "best_member": conf["best_member"],
                                      "reasoner": conf["reasoner"]}, info)
        self.agent = build.answer_agent(self.model, self.tokenizer, sel, conf["agents"], name="kit")

    def generate_response(self, message: str | list[str], system_prompt: str | None = None,
                          **kwargs: Any) -> tuple[str | list[str], int | None, float | None]:
        """One {"answer", "reasoning"} JSON text per prompt (a list for a list), inside the time budget; a list is
        reasoned over together (agents.answer_mode reason). The harness's max_new_tokens only lowers the 512 cap."""
        t0 = time.perf_counter()
        if self.agent.reasoner is not None:
            self.agent.reasoner.limit_tokens(kwargs.get("max_new_tokens"))
        answers, _ = self.agent.answer(_messages(message))
        texts = [json.dumps(a, ensure_ascii=False) for a in answers]
        return _reply(message, texts, self.tokenizer, t0)
