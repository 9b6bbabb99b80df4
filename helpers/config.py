"""Profiles: one YAML file per profile under configs/, the single source of truth for parameters.

A profile is a frozen `Profile` of frozen sections (`cfg.train.lr_start`), built once, when it loads: each key
carries its check (helpers.checks), so a key no section knows, a value of the wrong type or range, an override or
notebook parameter that does either, stops with the file and the dotted key named. configs/base.yaml holds every
key's value (and must hold every key), so nothing downstream supplies defaults or casts: an int where a float is
expected becomes a float here, a float never becomes an int. A change is a new Profile (with_overrides,
with_params), never an edit.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import yaml

from helpers import edition as edition_mod
from helpers.checks import (Check, edition_name, flag, flag_or_auto, integer, list_of, number, one_of, one_of_int,
                            optional, or_auto, puzzle_kind, text)
from helpers.io import InputError

ROOT = Path(__file__).resolve().parent.parent
CONFIG_DIR = ROOT / "configs"


def project_root() -> Path:
    """The kit's checkout (helpers/ lives directly below it)."""
    return ROOT


def runs_root() -> Path:
    """Where runs go: $KIT_RUNS_DIR, else <project>/runs."""
    return Path(os.environ.get("KIT_RUNS_DIR") or ROOT / "runs")


def cache_root() -> Path:
    """Built artifacts shared by every run (the tiny model): $KIT_CACHE_DIR, else <runs>/_cache."""
    return Path(os.environ.get("KIT_CACHE_DIR") or runs_root() / "_cache")


# ---------------------------------------------------------------- the typed sections
WRITER = "writer"  # the question writer's adapter name (runs/<run>/models/writer/): not an ensemble member
REASONER = "reasoner"  # the reasoning A-agent's adapter ("reason, then the letter"): not an ensemble member
REASONER_RL = "reasoner_rl"  # the reasoner after reinforcement (the rl section): not an ensemble member
RESERVED = {WRITER: "the question writer (the writer section)",  # the agents' adapters with a section of their own
            REASONER: "the reasoning A-agent (the reasoner section)"}
# the agents' own adapters, each with its owner: loadable by name, never ensemble members
AGENT_ADAPTERS = {**RESERVED, REASONER_RL: "the reasoner after reinforcement (the rl section)"}
ANSWER_MODES = ("letter", "reason")  # agents.answer_mode, or auto: chosen by notebook 09's measurement
MODELS = "adapters"  # marks the `models:` section in SCHEMA: any adapter names, each an AdapterSpec


# Keys a profile no longer has, and where what they set lives now.
REMOVED = {key: "the tournament's rules are its edition's now: agents.edition (data/editions/, docs/agents.md)"
           for key in ("agents.topics_file", "agents.answer_time_limit_s", "agents.question_time_limit_s")}


def _moved(dotted: str) -> str:
    """Where a removed key's setting lives now ("; ..."), or ""."""
    return f"; {REMOVED[dotted]}" if dotted in REMOVED else ""


def setting(check: Check, **default: Any) -> Any:
    """A profile key: its check travels with the field; configs/base.yaml gives its value (no default here)."""
    return field(metadata={"check": check}, **default)


def section(cls: type) -> Any:
    """A nested section (a dataclass of settings)."""
    return field(metadata={"section": cls})


@dataclass(frozen=True)
class AdapterSpec:
    """An adapter of `models:` (or a writer's / reasoner's `adapter:`): PEFT method, rank, scale, dropout."""
    method: str = setting(one_of("lora", "rslora", "dora"))
    r: int = setting(integer(1))
    alpha: float = setting(number(low=0))
    dropout: float = setting(number(0, 1))
    # DoRA's magnitude vectors train at this multiple of the learning rate; absent means the base rate
    magnitude_lr_multiplier: float = setting(number(low=0), default=1.0)


@dataclass(frozen=True)
class EnvSettings:
    """env: what the env check warns about."""
    min_free_disk_gb: float = setting(number(low=0))
    hf_cache_warn_gb: float = setting(number(low=0))


@dataclass(frozen=True)
class ModelSettings:
    """model: the base model and how it loads."""
    base: str = setting(text)
    max_seq_len: int = setting(integer(1))
    dtype: str = setting(text)
    load_in_4bit: bool | str = setting(flag_or_auto)
    attn_implementation: str = setting(text)
    trust_remote_code: bool = setting(flag)
    use_unsloth: bool | str = setting(flag_or_auto)
    gradient_checkpointing: bool = setting(flag)
    unsloth_inference: bool = setting(flag, default=False)  # Unsloth for inference too (scoring, the agents)
    stand_in: str | None = setting(optional(text), default=None)  # loaded in base's place (the rehearsal's tiny)

    @property
    def weights(self) -> str:
        """What loads (weights and tokenizer): the stand-in where one is set, else the base. Every estimate, budget
        and plan reads `base`, so a rehearsal's figures stay the profile's real model's."""
        return self.stand_in or self.base


@dataclass(frozen=True)
class DataSettings:
    """data: what notebook 01 builds the dataset from."""
    sources: list = setting(list_of(text))
    puzzles: int = setting(integer(0))
    puzzle_kinds: list = setting(list_of(puzzle_kind))
    val_fraction: float = setting(number(0, 0.9))
    tolerant: bool = setting(flag)
    balance_letters: bool = setting(flag)


@dataclass(frozen=True)
class CurriculumSettings:
    """curriculum: chunks, the replay reservoir, the difficulty scorer (notebook 02)."""
    chunks: int = setting(integer(1))
    replay_capacity: int = setting(integer(0))
    scorer: str = setting(text)


@dataclass(frozen=True)
class TrainSettings:
    """train: the chunked training of notebooks 03-05."""
    epochs_per_chunk: float = setting(number(low=0.01))
    batch_size: int = setting(integer(1))
    grad_accum: int = setting(integer(1))
    lr_start: float = setting(number(low=0))
    lr_end: float = setting(number(low=0))
    replay_start: float = setting(number(0, 1))
    replay_end: float = setting(number(0, 1))
    optim: str = setting(text)
    warmup_ratio: float = setting(number(0, 1))
    weight_decay: float = setting(number(low=0))
    logging_steps: int = setting(integer(1))
    max_grad_norm: float = setting(number(low=0))
    target_modules: list = setting(list_of(text))
    keep_checkpoints: int = setting(integer(0))
    answer_only_logits: bool = setting(flag)
    cpu_threads: int | None = setting(optional(integer(1)))
    step_seconds: float = setting(number(low=0.0001))  # an optimizer step on the profile's target machine (time plan)


@dataclass(frozen=True)
class EvalSettings:
    """eval: notebook 06's letter scoring."""
    batch_size: int = setting(integer(1))
    max_questions: int = setting(integer(0))


@dataclass(frozen=True)
class OwnAdapterSettings:
    """writer: / reasoner: an agent's own adapter (helpers.agents.stages.own_adapter): chats, adapter, training."""
    examples: int = setting(integer(0))
    levels: list = setting(list_of(one_of_int(1, 2, 3)))
    adapter: AdapterSpec = section(AdapterSpec)
    lr: float = setting(number(low=0))
    epochs: float = setting(number(low=0.01))
    max_seq_len: int = setting(integer(1))
    measure: int = setting(integer(1))


@dataclass(frozen=True)
class RLSettings:
    """rl: the reasoner's reinforcement stage (helpers.agents.stages.reasoner_rl): GRPO on fresh solver-proven puzzles
    with the kit's rewards (helpers.agents.rewards)."""
    prompts: int = setting(integer(0))
    levels: list = setting(list_of(one_of_int(1, 2, 3)))
    num_generations: int = setting(integer(2))
    prompts_per_step: int = setting(integer(1))
    max_completion_tokens: int = setting(integer(1, 512))
    token_budget: int | str = setting(or_auto(integer(1, 512)))  # auto: reasoner.token_budget(agents)
    beta: float = setting(number(low=0))
    lr: float = setting(number(low=0))
    steps: int = setting(integer(1))
    temperature: float = setting(number(low=0.01))
    save_steps: int = setting(integer(1))


@dataclass(frozen=True)
class AgentsSettings:
    """agents: the Q- and A-agents of notebooks 08-10 and the export. The edition (helpers.edition) gives the topics,
    the time limits, the filters' bounds, the pass share and the models allowed."""
    edition: str = setting(edition_name)
    unserved_topics: str = setting(one_of("writer", "refuse"))  # a topic no puzzle family writes
    num_questions: int = setting(integer(1))
    time_margin: float = setting(number(0.05, 1))
    model_question_share: float | str = setting(or_auto(number(0, 1)))  # auto: the writer's measurement decides
    writer_max_failures: int = setting(integer(1))
    writer_candidates: int = setting(integer(1))
    puzzle_kinds: list = setting(list_of(puzzle_kind))
    puzzle_levels: list = setting(list_of(one_of_int(1, 2, 3)))
    puzzle_candidates: int = setting(integer(1))
    answer_chunk_size: int = setting(integer(1))
    answer_mode: str = setting(one_of("auto", *ANSWER_MODES))  # auto: notebook 09's measurement decides
    reason_max_tokens: int = setting(integer(1, 512))
    decode_ms_per_token: float = setting(number(low=0.01))  # the target machine's, writing a chunk of answers

    @property
    def rules(self) -> edition_mod.Edition:
        """The edition's rules, loaded from its file."""
        return edition_mod.load(self.edition)

    @property
    def question_time_limit_s(self) -> float:
        """The edition's limit on one question."""
        return self.rules.question_s

    @property
    def answer_time_limit_s(self) -> float:
        """The edition's limit on one answer."""
        return self.rules.answer_s


@dataclass(frozen=True)
class Profile:
    """A resolved profile: configs/base.yaml <- the profile's extends chain <- its file <- overrides, checked once.

    Sections are frozen: a change is a new Profile (with_overrides, with_params), recorded as an override."""
    profile: str = field(metadata={"loader": True})  # the profile's name (configs/<profile>.yaml), set by the loader
    seed: int = setting(integer(0))
    run: str = setting(text)
    env: EnvSettings = section(EnvSettings)
    model: ModelSettings = section(ModelSettings)
    data: DataSettings = section(DataSettings)
    curriculum: CurriculumSettings = section(CurriculumSettings)
    train: TrainSettings = section(TrainSettings)
    models: dict = field(metadata={"adapters": True})  # adapter name -> AdapterSpec (the ensemble members)
    eval: EvalSettings = section(EvalSettings)
    writer: OwnAdapterSettings = section(OwnAdapterSettings)  # the Q-agent's question writer (notebook 08)
    reasoner: OwnAdapterSettings = section(OwnAdapterSettings)  # the reasoning A-agent (notebook 08)
    rl: RLSettings = section(RLSettings)  # the reasoner's reinforcement stage (helpers.agents.stages.reasoner_rl)
    agents: AgentsSettings = section(AgentsSettings)

    def as_dict(self) -> dict:
        """The resolved parameters as plain data (what every stage records in its JSON as `params`)."""
        return as_dict(self)


def schema_of(cls: type) -> dict[str, Any]:
    """The checks of a settings dataclass by key (nested sections as dicts; `models:` as MODELS)."""
    out: dict[str, Any] = {}
    for f in fields(cls):
        if f.metadata.get("loader"):
            continue
        out[f.name] = (MODELS if f.metadata.get("adapters") else
                       schema_of(f.metadata["section"]) if "section" in f.metadata else f.metadata["check"])
    return out


def required_keys(cls: type) -> tuple[str, ...]:
    """The keys a section must set (every field without a default)."""
    return tuple(f.name for f in fields(cls) if f.default is MISSING and not f.metadata.get("loader"))


ADAPTER_SCHEMA: dict[str, Check] = schema_of(AdapterSpec)
SCHEMA: dict[str, Any] = schema_of(Profile)


def as_dict(settings: Any) -> Any:
    """A Profile or a section as plain dicts and lists (JSON-ready); anything else as it is."""
    if is_dataclass(settings):
        return {f.name: as_dict(getattr(settings, f.name)) for f in fields(settings)}
    if isinstance(settings, dict):
        return {k: as_dict(v) for k, v in settings.items()}
    if isinstance(settings, list):
        return [as_dict(v) for v in settings]
    return settings


def build(cls: type, values: dict) -> Any:
    """A settings dataclass from a checked, complete dict (the loader's last step)."""
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in values:
            continue  # a field with a default (magnitude_lr_multiplier)
        value = values[f.name]
        if f.metadata.get("adapters"):
            value = {name: build(AdapterSpec, spec) for name, spec in value.items()}
        elif "section" in f.metadata:
            value = build(f.metadata["section"], value)
        else:
            value = copy.deepcopy(value)
        kwargs[f.name] = value
    return cls(**kwargs)


def _schema_at(keys: list[str]) -> Any:
    """The schema node at a dotted path (None when no section knows it)."""
    node: Any = SCHEMA
    for key in keys:
        if node == MODELS:  # `key` names an adapter: what follows are its settings
            node = ADAPTER_SCHEMA
            continue
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def check_section(values: Any, schema: Any, where: Any, prefix: str = "") -> Any:
    """`values` checked against `schema` (a dict of checks, MODELS or a check); returns it with values cast.

    Raises InputError(where, key=<dotted key>) for an unknown key, a wrong type or a value out of range.
    """
    if schema == MODELS:
        if not isinstance(values, dict):
            raise InputError(where, None, prefix, f"expected adapters by name, got {values!r}")
        return {name: check_section(spec, ADAPTER_SCHEMA, where, f"{prefix}.{name}") for name, spec in values.items()}
    if isinstance(schema, dict):
        if not isinstance(values, dict):
            raise InputError(where, None, prefix or None, f"expected a section of keys, got {values!r}")
        out = {}
        for key, value in values.items():
            dotted = f"{prefix}.{key}" if prefix else str(key)
            if key not in schema:
                raise InputError(where, None, dotted,
                                 f"unknown key{_moved(dotted)} (known here: {', '.join(sorted(schema))})")
            out[key] = check_section(value, schema[key], where, dotted)
        return out
    try:
        return schema(values)
    except ValueError as exc:
        raise InputError(where, None, prefix, str(exc)) from None


def check_complete(values: dict, where: Any) -> None:
    """Every key of SCHEMA is set (base.yaml's job) and every adapter names its method, r, alpha and dropout."""
    def walk(schema: dict, node: dict, prefix: str) -> None:
        for key, sub in schema.items():
            dotted = f"{prefix}{key}"
            if key not in node:
                raise InputError(where, None, dotted, "missing: configs/base.yaml must give every key its default")
            if isinstance(sub, dict) and sub != ADAPTER_SCHEMA:
                walk(sub, node[key], f"{dotted}.")
    walk(SCHEMA, values, "")
    adapters = {f"models.{name}": spec for name, spec in values["models"].items()}
    for dotted, spec in {**adapters, **{f"{n}.adapter": values[n]["adapter"] for n in RESERVED}}.items():
        missing = [k for k in required_keys(AdapterSpec) if k not in spec]
        if missing:
            raise InputError(where, None, dotted, f"missing {', '.join(missing)}")
    for name, owner in AGENT_ADAPTERS.items():
        if name in values["models"]:
            raise InputError(where, None, f"models.{name}", f"reserved for {owner}")


def available_profiles() -> list[str]:
    """Profile names (configs/*.yaml, minus the shared base)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml") if p.stem != "base")


def deep_merge(base: dict, over: dict) -> dict:
    """Recursively merge `over` into a copy of `base` (dicts merge, everything else replaces)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def set_dotted(cfg: dict, dotted: str, value: Any, where: str = "overrides") -> None:
    """Set cfg['a']['b'] from 'a.b', checked against the schema: an unknown key or a wrong type raises InputError
    naming `where` (e.g. "overrides", "notebook parameters") and the dotted key, never passes silently."""
    keys = dotted.split(".")
    node = cfg
    for i, key in enumerate(keys[:-1]):
        if key not in node or not isinstance(node[key], dict):
            sections = sorted(k for k, v in node.items() if isinstance(v, dict))
            raise InputError(where, None, dotted, f"no section '{'.'.join(keys[:i + 1])}' in the profile "
                                                  f"(known here: {', '.join(sections)})")
        node = node[key]
    if keys[-1] not in node:
        raise InputError(where, None, dotted, f"unknown key{_moved(dotted)} (known here: {', '.join(sorted(node))})")
    node[keys[-1]] = check_section(copy.deepcopy(value), _schema_at(keys), where, dotted)


def _read_profile_file(name: str) -> dict:
    """A profile's values: its files merged, base first, the profile's own last."""
    merged: dict = {}
    for _, data in profile_layers(name):
        merged = deep_merge(merged, data)
    return merged


def profile_layers(name: str, seen: tuple[str, ...] = ()) -> list[tuple[Path, dict]]:
    """(file, the keys it sets) for each file of a profile's `extends` chain, base first, each checked."""
    path = CONFIG_DIR / f"{name}.yaml"
    if not path.exists():
        raise InputError(path, None, None,
                         f"no profile '{name}' (available: {', '.join(available_profiles())})")
    if name in seen:
        raise InputError(path, None, "extends", f"circular 'extends' chain {' -> '.join(seen + (name,))}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise InputError(path, None, None, f"not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(path, None, None, f"expected sections of keys, got {type(data).__name__}")
    parent = data.pop("extends", None)
    data = check_section(data, SCHEMA, path)
    return (profile_layers(parent, seen + (name,)) if parent else []) + [(path, data)]


def load_profile(profile: str = "smoke", run: str | None = None, overrides: dict | None = None) -> Profile:
    """Resolve a profile: base.yaml <- extends chain <- configs/<profile>.yaml <- dotted overrides (all checked)."""
    values = _read_profile_file(profile)
    values["run"] = run or values.get("run") or profile
    check_complete(values, CONFIG_DIR / f"{profile}.yaml")
    for dotted, value in (overrides or {}).items():
        set_dotted(values, dotted, value)
    return build(Profile, {**values, "profile": profile})


def profile_from_dict(values: dict, where: Any) -> Profile:
    """A Profile from recorded parameters (a stage's `params`, an export's profile), checked as a profile file is."""
    values = dict(values)
    name = values.pop("profile", None) or str(where)
    cfg = check_section(values, SCHEMA, where)
    check_complete(cfg, where)
    return build(Profile, {**cfg, "profile": name})


def section_from_dict(cls: type, values: dict, where: Any, prefix: str = "") -> Any:
    """One section (e.g. AgentsSettings) from a dict another file recorded, checked: unknown, missing or bad keys
    are an InputError naming `where` and the dotted key (`prefix` + key)."""
    checked = check_section(values, schema_of(cls), where, prefix)
    missing = [k for k in required_keys(cls) if k not in checked]
    if missing:
        raise InputError(where, None, f"{prefix}.{missing[0]}" if prefix else missing[0], "missing")
    return build(cls, checked)


def parse_overrides(text: str | None) -> dict:
    """A command line's --overrides: a JSON object of dotted keys (empty when none is given); ValueError otherwise."""
    try:
        overrides = json.loads(text or "{}")
    except ValueError as exc:
        raise ValueError(f"--overrides: not JSON ({exc})") from None
    if not isinstance(overrides, dict):
        raise ValueError(f"--overrides: expected a JSON object of dotted keys, got {type(overrides).__name__}")
    return overrides


def with_overrides(cfg: Profile, overrides: dict, where: str = "overrides") -> Profile:
    """A new Profile: `cfg` with dotted overrides laid over it, each checked (unknown key, type, range)."""
    values = as_dict(cfg)
    for dotted, value in overrides.items():
        set_dotted(values, dotted, value, where=where)
    return build(Profile, values)


def with_params(cfg: Profile, section_name: str, *, where: str = "notebook parameters", **params: Any) -> Profile:
    """A new Profile with every non-None parameter laid over `section_name`, checked as an override (an error names
    `where`: a notebook's parameters, an agent's)."""
    given = {f"{section_name}.{key}": value for key, value in params.items() if value is not None}
    return with_overrides(cfg, given, where=where)


def resolve_path(value: str | os.PathLike) -> Path:
    """A profile path: absolute as given, otherwise relative to the project root."""
    path = Path(os.path.expanduser(str(value)))
    return path if path.is_absolute() else ROOT / path


def flat(tree: dict, prefix: str = "") -> dict:
    """{"a.b": value} for every leaf of a nested dict (lists are leaves)."""
    out: dict = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def provenance(profile: str, overrides: dict | None = None, run: str | None = None) -> list[tuple[str, Any, str]]:
    """(dotted key, resolved value, where it came from) for every key of the profile as load_profile(profile, run,
    overrides) resolves it: the last file of its `extends` chain that sets it (configs/base.yaml first, the profile's
    own last), "overrides", "RUN", or the section's own default in this file (an adapter's optional keys)."""
    where: dict[str, str] = {}
    for path, data in profile_layers(profile):
        label = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
        where.update(dict.fromkeys(flat(data), label))
    for dotted, value in (overrides or {}).items():  # a whole section given as one override credits each of its keys
        where.update(dict.fromkeys(flat(value, f"{dotted}.") if isinstance(value, dict) else [dotted], "overrides"))
    where.setdefault("run", "the profile's name")
    if run:
        where["run"] = "RUN"
    where["profile"] = "the command line"
    resolved = flat(as_dict(load_profile(profile, run, overrides)))
    return [(key, value, where.get(key, "default, helpers/config.py")) for key, value in resolved.items()]


def provenance_lines(profile: str, overrides: dict | None = None, run: str | None = None) -> list[str]:
    """provenance() as aligned lines: key, value (JSON), (where it came from)."""
    rows = provenance(profile, overrides, run)
    width = max(len(key) for key, _, _ in rows)
    return [f"{key:<{width}}  {json.dumps(value)}  ({where})" for key, value, where in rows]


def main(argv: list[str] | None = None) -> int:
    """python -m helpers.config show PROFILE [--overrides JSON] [--run R]: the resolved profile, each key with the
    layer it came from (base, the profile's chain, overrides, RUN, a default); 2 with one line on bad input."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m helpers.config", description="A profile as it resolves.")
    sub = ap.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="every key of the profile with where its value came from")
    show.add_argument("profile", help="a profile of configs/ (smoke, cpu, laptop, mi300x, tournament, aaipl)")
    show.add_argument("--overrides", default="{}", help="dotted keys as JSON, as make pipeline takes them")
    show.add_argument("--run", help="the run name (RUN); default: the profile's own")
    args = ap.parse_args(argv)
    try:
        lines = provenance_lines(args.profile, parse_overrides(args.overrides), args.run)
    except (ValueError, InputError) as exc:
        print(f"profile: {str(exc).splitlines()[0]}")
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
