"""Export the kit's agents for the challenge harness: `question_model.py` (QAgent) and `answer_model.py` (AAgent).

`python -m helpers.agents.harness export --profile mi300x --run NAME --out DIR [--link-adapters] [--model_share 0.2]
[--answer_mode letter|reason]`

DIR gets the two files the organisers' fixed `agents/question_agent.py` / `agents/answer_agent.py` import,
`kit_agent.json` (base model, members, weights, topics, the edition, answer mode), the trained adapters (and the
question writer's when the Q-agent uses it: agents.model_question_share > 0; the reasoner's when the A-agent reasons:
agents.answer_mode reason)
(`adapters/<name>/`, safetensors only; --link-adapters records their absolute paths instead), and a copy of
the kit's `helpers` package and the editions' files under `kit/` so the folder runs without the kit installed (the
edition's time limits and filters go with the agents). Copy DIR's contents
into the challenge's `agents/` folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import config
from helpers import edition as edition_mod
from helpers.agents import build
from helpers.agents import predictor as pred
from helpers.agents.harness.kit_agents import CONFIG_NAME
from helpers.config import REASONER, WRITER
from helpers.io import InputError, atomic_write_text, stamp, write_json
from helpers.layout import RunLayout
from helpers.models.members import cpu_threads
from helpers.models.packaged import is_packaged

_TEMPLATE = '''"""{role} for the challenge harness, exported by qa-agent-kit
(`python -m helpers.agents.harness export`).

The organisers' agents/{harness}.py builds `{cls}(**kwargs)`, counts tokens with its `.tokenizer` and calls
`generate_response(message, system_prompt=None, **kwargs)` -> (text or list of texts, tokens, seconds).
Settings: {config} next to this file (or the path in $KIT_AGENT_CONFIG).
"""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_KIT = _HERE / "kit"  # the kit's helpers package, copied at export time
if _KIT.is_dir() and str(_KIT) not in sys.path:
    sys.path.insert(0, str(_KIT))

from helpers.agents.harness.kit_agents import {base}  # noqa: E402


class {cls}({base}):
    """{role}: built with **kwargs, `.tokenizer`, `generate_response(message, system_prompt=None, **kwargs)`."""

    def __init__(self, **kwargs):
        kwargs.setdefault("config", str(_HERE / "{config}"))
        super().__init__(**kwargs)
'''
README = """Exported by qa-agent-kit. Copy everything in this folder into the challenge's agents/ folder
(next to the organisers' question_agent.py and answer_agent.py), then run, from the challenge folder:

  python -m agents.question_agent --output_file outputs/questions.json --num_questions 20 --batch_size 5
  python -m agents.answer_agent --input_file outputs/filtered_questions.json \
      --output_file outputs/answers.json --batch_size 5

kit_agent.json holds the base model, the adapters and their ensemble weights, the topics and the edition (its
file in kit/data/editions/: the time limits and the filters).
"""


def template(role: str, cls: str, base: str, harness: str) -> str:
    """The source of one exported class file."""
    return _TEMPLATE.format(role=role, cls=cls, base=base, harness=harness, config=CONFIG_NAME)


def resolve_base(base: str) -> str:
    """An absolute model folder for "tiny", packaged models and local paths; a hub id stays as it is."""
    if str(base) == "tiny" or is_packaged(str(base)):
        from helpers.models import resolve_base as model_source
        return str(model_source(base, {"progress": False} if str(base) == "tiny" else None)[0])
    path = config.resolve_path(base)
    return str(path) if path.exists() else str(base)


def vendor_editions(out_dir: Path, own: str) -> str:
    """Copy the editions the kit ships to out_dir/kit/data/editions (where the vendored helpers.edition looks), and
    the profile's own edition file when it is a path; returns what the export's agents section records: the
    edition's file, relative to out_dir (kit_agents resolves it from the export's folder)."""
    dst = out_dir / "kit" / edition_mod.EDITIONS_SUBDIR
    dst.mkdir(parents=True, exist_ok=True)
    for path in sorted(edition_mod.EDITIONS_DIR.glob("*.yaml")):
        shutil.copy2(path, dst / path.name)
    path = edition_mod.path_of(own)
    if path.resolve().parent != edition_mod.EDITIONS_DIR.resolve():  # a team's own file: it travels by its name
        if (edition_mod.EDITIONS_DIR / path.name).exists():
            raise InputError(path, None, None, f"an edition the kit ships is named {path.stem}: rename your file")
        shutil.copy2(path, dst / path.name)
    return str((dst / path.name).relative_to(out_dir))


def vendor_helpers(out_dir: Path) -> int:
    """Copy the kit's helpers package (Python sources only) to out_dir/kit/helpers; returns the file count."""
    src = Path(build.__file__).resolve().parent.parent
    dst = out_dir / "kit" / "helpers"
    if dst.exists():
        shutil.rmtree(dst)
    n = 0
    for path in sorted(src.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        n += 1
    return n


def export(cfg: config.Profile, out_dir: str | Path, *, sel: dict | None = None, link_adapters: bool = False,
           recommendation: dict | None = None, **agent_overrides) -> dict:
    """Write the harness folder for a run; returns the config written (kit_agent.json)."""
    from helpers import models
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sel = sel or build.selection(cfg)
    agents = build.agents_cfg(cfg, **agent_overrides)
    writer = WRITER if build.writes_questions(agents, build.read_topics(cfg)) and not models.missing_adapter_files(
        RunLayout.of(cfg).adapter_dir(WRITER)) else None  # the trained writer goes with the Q-agent that uses it
    reasoner = (sel.get("reasoner") or REASONER) if agents.answer_mode == "reason" else None  # the one it reasons with
    names = [m for m in dict.fromkeys(sel["members"] + [sel.get("best_member") or sel["members"][0], writer, reasoner])
             if m]
    adapters = {}
    for name in names:
        if name == pred.BASE:
            continue
        src = RunLayout.of(cfg).adapter_dir(name)
        missing = models.missing_adapter_files(src)
        if missing:
            where = "notebook 08" if name in config.AGENT_ADAPTERS else "notebooks 03-05"
            raise InputError(missing[0], None, None, f"missing: adapter {name!r} is not trained ({where})")
        if link_adapters:
            adapters[name] = str(src.resolve())
            continue
        dst = out / "adapters" / name
        dst.mkdir(parents=True, exist_ok=True)
        for f in models.ADAPTER_FILES:
            shutil.copy2(src / f, dst / f)
        adapters[name] = f"adapters/{name}"
    settings = models.resolve_settings(cfg.model, recommendation)
    # attn_implementation None: no recommendation chose one; the loader given "auto" without one does the same
    model_cfg = {"dtype": settings["dtype"], "load_in_4bit": settings["load_in_4bit"],
                 "attn_implementation": settings["attn_implementation"] or "auto", "trust_remote_code": False,
                 "use_unsloth": False, "gradient_checkpointing": False, "max_seq_len": settings["max_seq_len"],
                 "stand_in": None}  # "base" below is what loads: a rehearsal's stand-in already
    threads = cpu_threads(cfg.train, "tiny" if cfg.model.weights == "tiny" else None)
    conf = {"base": resolve_base(cfg.model.weights), "model_name": cfg.model.base, "model": model_cfg,
            "members": list(sel["members"]),
            "weights": sel.get("weights"), "method": sel.get("method", "soft"),
            "best_member": sel.get("best_member") or sel["members"][0], "writer": writer, "reasoner": reasoner,
            "adapters": adapters,
            "selection": {"source": sel.get("source"), "why": sel.get("why")},
            "topics": build.read_topics(cfg),
            "agents": {**config.as_dict(agents), "edition": vendor_editions(out, agents.edition)},
            "seed": cfg.seed, "run": cfg.run, "profile": cfg.profile,
            # torch threads on a CPU by the rule training and scoring use (helpers.models.members.cpu_threads)
            "cpu_threads": threads,
            **stamp({"link_adapters": link_adapters, **agent_overrides})}
    write_json(out / CONFIG_NAME, conf)
    atomic_write_text(out / "question_model.py", template("Q-agent", "QAgent", "KitQAgent", "question_agent"))
    atomic_write_text(out / "answer_model.py", template("A-agent", "AAgent", "KitAAgent", "answer_agent"))
    atomic_write_text(out / "README.txt", README)
    conf["vendored_files"] = vendor_helpers(out)
    return conf
