"""A tournament edition as data: its topics, time limits, question and answer filters, pass share, allowed base
models and chat-template switches, one small YAML file each (data/editions/<name>.yaml).

The tournament recurs and each edition sets its own rules (../shared/tournament-rules.md, "The tournament recurs").
A profile names one (agents.edition: a name under data/editions/ or a path to a team's own file); the filters, both
agents, the match at home, the export and notebook 00 read it, never a constant. A missing, unknown, mistyped or
out-of-range key stops with the file and the key named.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from helpers.io import InputError

EDITIONS_SUBDIR = Path("data", "editions")  # under the kit's checkout, and under an export's kit/ folder
EDITIONS_DIR = Path(__file__).resolve().parent.parent / EDITIONS_SUBDIR
DEFAULT = "2025-10-aiac"  # configs/base.yaml's agents.edition (a test holds the two equal)
COUNTABLE = ("topic", "question", "choices", "answer")  # the question keys a filter can count
# The chat-template switches the kit renders every chat with (helpers.prompts.render_messages): an edition may ask
# for these values and no others (every known edition turns Qwen3's thinking off).
TEMPLATE_SWITCHES = {"enable_thinking": False}


@dataclass(frozen=True)
class QuestionRules:
    """The Q-agent's format filter: the tokens of `counts` minus `minus` must be at most `max_core` (the rules'
    "under 130" is 129, "at most 100" is 100), and with the explanation's at most `total_at_most`."""
    counts: tuple[str, ...]
    minus: int
    max_core: int
    total_at_most: int
    wording: str  # the bound as the rules say it ("under 130", "at most 100")


@dataclass(frozen=True)
class AnswerRules:
    """The A-agent's format filter: the answer's tokens under `answer_under`, with the reasoning's under
    `total_under`."""
    answer_under: int
    total_under: int


@dataclass(frozen=True)
class Edition:
    """One edition's rules, read from its file."""
    name: str
    path: Path
    title: str
    topics: dict
    question_s: float
    answer_s: float
    question_rules: QuestionRules
    answer_rules: AnswerRules
    pass_share: float
    models: tuple[str, ...] | None  # None: any base model
    chat_template: dict

    def allows(self, model: str) -> bool:
        """Whether a base model (a hub id or a local folder named after one) is allowed: its last path part, in any
        case, equals an allowed id's."""
        if self.models is None:
            return True
        name = str(model).rstrip("/").rsplit("/", 1)[-1].lower()
        return any(name == m.rsplit("/", 1)[-1].lower() for m in self.models)

    def refusal(self, model: str) -> str | None:
        """One line when the edition forbids the model, else None."""
        if self.allows(model):
            return None
        return (f"{model} is not allowed by the edition {self.name} ({self.title}): it allows only "
                f"{', '.join(self.models or ())} ({self.path})")

    def disqualified(self, format_correct: int, requested: int) -> bool:
        """Whether a Q-agent with this many format-correct questions of those requested is out."""
        return format_correct < self.pass_share * requested


class ForbiddenModel(ValueError):
    """A profile's base model its edition does not allow (any other base model disqualifies)."""


def check_model(edition: Edition, model: str) -> None:
    """Refuse, in one line, a base model the edition does not allow."""
    why = edition.refusal(model)
    if why:
        raise ForbiddenModel(why)


def describe(edition: Edition) -> str:
    """The edition in one line: limits, the question filter's bound, the pass share, the models."""
    q = edition.question_rules
    counted = " + ".join(q.counts) + (f" - {q.minus}" if q.minus else "")
    models = ", ".join(edition.models) if edition.models else "any base model"
    return (f"edition {edition.name} ({edition.title}): {edition.question_s:g} s a question, {edition.answer_s:g} s an "
            f"answer; tokens of {counted} {q.wording} ({q.total_at_most} with the explanation); disqualified under "
            f"{edition.pass_share:.0%} format-correct; {models}")


def path_of(name_or_path: str | Path) -> Path:
    """An edition's file: a name under data/editions/ (with or without .yaml), else a path (a relative one from the
    current folder, else from the kit's checkout)."""
    text = str(name_or_path)
    named = EDITIONS_DIR / (text if text.endswith((".yaml", ".yml")) else f"{text}.yaml")
    if "/" not in text and named.is_file():
        return named
    path = Path(text)
    if not path.is_absolute() and not path.is_file():
        path = EDITIONS_DIR.parent.parent / path
    if not path.is_file():
        known = ", ".join(names())
        raise InputError(path, None, None, f"no edition file here, and no edition of that name (known: {known})")
    return path


def names() -> list[str]:
    """The editions the kit ships."""
    return sorted(p.stem for p in EDITIONS_DIR.glob("*.yaml"))


def load(name_or_path: str | Path = DEFAULT) -> Edition:
    """The edition, checked: every key present, none unknown, each of its type and range (read once per file
    version)."""
    path = path_of(name_or_path).resolve()
    return _load(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _load(path: Path, _version: int) -> Edition:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(path, None, None, f"not valid YAML: {exc}") from None
    keys = _Keys(data, path, "")
    title = keys.text("title")
    topics = check_topics(keys.take("topics"), path, "topics")
    limits = keys.section("time_limits")
    question_s, answer_s = limits.number("question_s", low=0.1), limits.number("answer_s", low=0.1)
    limits.done()
    edition = Edition(
        name=path.stem, path=path, title=title, topics=topics, question_s=question_s, answer_s=answer_s,
        question_rules=_question_rules(keys.section("question_filter")),
        answer_rules=_answer_rules(keys.section("answer_filter")),
        pass_share=keys.number("pass_share", low=0.0, high=1.0), models=_models(keys, path),
        chat_template=_chat_template(keys, path))
    keys.done()
    return edition


@functools.lru_cache(maxsize=None)
def default() -> Edition:
    """The edition a call that names none is held to (DEFAULT, the original team's)."""
    return load(DEFAULT)


def check_topics(data: Any, path: Any, key: str | None = None) -> dict[str, list[str]]:
    """{topic: [subtopics]}: a non-empty mapping of non-empty lists of names, else an InputError naming the key."""
    if not isinstance(data, dict) or not data:
        raise InputError(path, None, key, "expected a non-empty mapping {topic: [subtopic, ...]}")
    for topic, subs in data.items():
        if not isinstance(subs, list) or not subs or not all(isinstance(s, str) and s.strip() for s in subs):
            raise InputError(path, None, f"{key}.{topic}" if key else str(topic),
                             "expected a non-empty list of subtopic names")
    return {str(t): list(s) for t, s in data.items()}


class _Keys:
    """A section's keys, each taken once and checked; done() refuses any left over (a mistyped key)."""

    def __init__(self, data: Any, path: Path, prefix: str):
        if not isinstance(data, dict):
            raise InputError(path, None, prefix or None, f"expected a mapping of keys, got {data!r}")
        self.data, self.path, self.prefix, self.seen = data, path, prefix, set()

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def take(self, name: str) -> Any:
        if name not in self.data:
            raise InputError(self.path, None, self.key(name), "missing")
        self.seen.add(name)
        return self.data[name]

    def has(self, name: str) -> bool:
        return name in self.data

    def text(self, name: str) -> str:
        value = self.take(name)
        if not isinstance(value, str) or not value.strip():
            raise InputError(self.path, None, self.key(name), f"expected text, got {value!r}")
        return value

    def number(self, name: str, low: float, high: float | None = None) -> float:
        value = self.take(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(self.path, None, self.key(name), f"expected a number, got {value!r}")
        if value < low or (high is not None and value > high):
            span = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise InputError(self.path, None, self.key(name), f"{value} out of range: expected {span}")
        return float(value)

    def count(self, name: str, low: int = 0) -> int:
        value = self.take(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InputError(self.path, None, self.key(name), f"expected a whole number >= {low}, got {value!r}")
        return value

    def section(self, name: str) -> "_Keys":
        return _Keys(self.take(name), self.path, f"{self.key(name)}.")

    def done(self) -> None:
        extra = sorted(set(self.data) - self.seen)
        if extra:
            raise InputError(self.path, None, self.key(str(extra[0])),
                             f"unknown key (known here: {', '.join(sorted(self.seen))})")


def _question_rules(keys: _Keys) -> QuestionRules:
    counts = keys.take("counts")
    if (not isinstance(counts, list) or not counts or len(set(counts)) != len(counts)
            or not set(counts) <= set(COUNTABLE)):
        raise InputError(keys.path, None, keys.key("counts"),
                         f"expected distinct keys among {', '.join(COUNTABLE)}, got {counts!r}")
    minus = keys.count("minus")
    if keys.has("under") == keys.has("at_most"):
        raise InputError(keys.path, None, keys.key("under"), "give exactly one of under and at_most")
    if keys.has("under"):
        bound = keys.count("under", low=1)
        max_core, wording = bound - 1, f"under {bound}"
    else:
        max_core = keys.count("at_most", low=1)
        wording = f"at most {max_core}"
    total = keys.count("total_at_most", low=1)
    if total <= max_core:
        raise InputError(keys.path, None, keys.key("total_at_most"), f"{total} leaves no room over the bound")
    keys.done()
    return QuestionRules(tuple(counts), minus, max_core, total, wording)


def _answer_rules(keys: _Keys) -> AnswerRules:
    rules = AnswerRules(keys.count("answer_under", low=2), keys.count("total_under", low=2))
    keys.done()
    return rules


def _models(keys: _Keys, path: Path) -> tuple[str, ...] | None:
    value = keys.take("models")
    if value == "any":
        return None
    if not isinstance(value, list) or not value or not all(isinstance(m, str) and m.strip() for m in value):
        raise InputError(path, None, keys.key("models"), f"expected any or a list of model ids, got {value!r}")
    return tuple(value)


def _chat_template(keys: _Keys, path: Path) -> dict:
    value = keys.take("chat_template")
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise InputError(path, None, keys.key("chat_template"), f"expected a mapping of switches, got {value!r}")
    for switch, wanted in value.items():
        if switch not in TEMPLATE_SWITCHES or TEMPLATE_SWITCHES[switch] != wanted:
            raise InputError(path, None, f"{keys.key('chat_template')}.{switch}",
                             f"the kit renders every chat with {TEMPLATE_SWITCHES}; {switch}={wanted!r} is not one")
    return dict(value)
