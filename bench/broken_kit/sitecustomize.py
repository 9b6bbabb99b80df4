"""A deliberately broken kit for the learning tests (bench/broken_kit/run.py): with KIT_SABOTAGE set and this folder
first on PYTHONPATH, Python imports this module at start-up (its `site` step), in every process that environment
reaches: pytest, `python -m helpers.train`, notebook kernels. It changes no file of the kit: it wraps one function
of the kit right after that module is imported, so a learning test that cannot tell can be shown up.

Sabotages (KIT_SABOTAGE):
- lr0: every TrainingArguments the kit makes (helpers.train.hf.make_training_args) has learning rate 0;
- shift: every training example's labels move one token left (helpers.train.data.tokenize_example): each position
  is trained on the token two ahead, the classic double shift of labels the model shifts again;
- one_letter: every multiple-choice training target is the letter A (the record -> chat step of
  helpers.train.data, which renders the target with helpers.prompts.render_example); scoring and generation keep
  the true prompts and letters;
- not_puzzles: the question writer proves nothing: every chat it trains on (helpers.agents.stages.writer_data's
  writer_records) keeps its request, topic, choices and key letter, but its question is a bundled general-knowledge
  one (data/general_mcq.jsonl) instead of the generated puzzle's, so the writer learns well-formed JSON that no
  solver reads back (puzzles.prove_text: unknown text).
Each time a sabotaged function runs, one line "<sabotage> <function>" goes to KIT_SABOTAGE_LOG (when set), so the
runner can show the sabotage was reached and not merely asked for.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
from pathlib import Path

SABOTAGE = os.environ.get("KIT_SABOTAGE", "")


def note(name: str) -> None:
    """Append "<sabotage> <function>" to KIT_SABOTAGE_LOG: proof the sabotaged path ran."""
    path = os.environ.get("KIT_SABOTAGE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{SABOTAGE} {name}\n")


def break_learning_rate(module) -> None:
    """lr0: make_training_args always asks for learning rate 0 (and so does every optimizer group built from it)."""
    real = module.make_training_args

    def make_training_args(**wanted):
        """The kit's make_training_args with learning_rate 0."""
        note("make_training_args")
        return real(**{**wanted, "learning_rate": 0.0})

    module.make_training_args = make_training_args


def break_labels(module) -> None:
    """shift: tokenize_example's labels moved one token left, the last padded with the ignored label."""
    real = module.tokenize_example

    def tokenize_example(tokenizer, record):
        """The kit's tokenize_example with its labels one token left."""
        note("tokenize_example")
        ex = real(tokenizer, record)
        return {**ex, "labels": ex["labels"][1:] + [module.IGNORE_INDEX]}

    module.tokenize_example = tokenize_example


def break_targets(module) -> None:
    """one_letter: the training data's render_example renders every multiple-choice record with answer 0 (A)."""
    real = module.render_example

    def render_example(tokenizer, record, *args, **kwargs):
        """The kit's render_example on the record with answer A."""
        note("render_example")
        return real(tokenizer, {**record, "answer": 0}, *args, **kwargs)

    module.render_example = render_example


def break_writer_chats(module) -> None:
    """not_puzzles: writer_records' chats with a bundled general-knowledge question in each reply's place."""
    real = module.writer_records

    def writer_records(n, **kwargs):
        """The kit's writer chats, the i-th reply's question replaced by the i-th bundled question."""
        note("writer_records")
        bundled = Path(__file__).resolve().parents[2] / "data" / "general_mcq.jsonl"
        others = [json.loads(line)["question"] for line in bundled.read_text(encoding="utf-8").splitlines()]
        out = real(n, **kwargs)
        for i, rec in enumerate(out):
            reply = json.loads(rec["chat"][-1]["content"])
            rec["chat"][-1]["content"] = json.dumps({**reply, "question": others[i % len(others)]}, ensure_ascii=False)
        return out

    module.writer_records = writer_records


PATCHES = {"lr0": ("helpers.train.hf", break_learning_rate), "shift": ("helpers.train.data", break_labels),
           "one_letter": ("helpers.train.data", break_targets),
           "not_puzzles": ("helpers.agents.stages.writer_data", break_writer_chats)}


class PatchAfterImport(importlib.abc.MetaPathFinder):
    """Finds one module as the other finders do, and runs the sabotage on it once it has been executed."""

    def __init__(self, target: str, patch) -> None:
        self.target, self.patch = target, patch

    def find_spec(self, fullname, path, target=None):
        """The normal spec of the target module, its loader wrapped; None for every other module."""
        if fullname != self.target:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        real_exec, patch = spec.loader.exec_module, self.patch

        def exec_module(module):
            """Run the module as usual, then break it."""
            real_exec(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    """Put the chosen sabotage's finder first on sys.meta_path; an unknown name stops the process."""
    if SABOTAGE not in PATCHES:
        raise SystemExit(f"KIT_SABOTAGE={SABOTAGE!r}: expected one of {', '.join(PATCHES)}")
    sys.meta_path.insert(0, PatchAfterImport(*PATCHES[SABOTAGE]))


if SABOTAGE:
    install()
