"""The starter kit's Dockerfile stack (constraints-starter.txt: transformers 4.56.2, trl 0.23.0), between the challenge
container's (4.51.3, 0.19.0: make test-container) and the main pins (5.x, 1.x): every seam where the kit chooses by
version or signature, run through the kit's own choice against the signatures read from those wheels (make setup
downloads them; never installed or imported here). `make test-container CSTACK=starter` runs the unit tiers on that
stack for real (docs/boxes.md)."""

from __future__ import annotations

import ast
import zipfile
from pathlib import Path

import pytest

from helpers import config
from helpers.agents.stages import reasoner_rl
from helpers.env import gpu_setup
from helpers.models.compat import dtype_kwarg
from helpers.train import hf
from helpers.train.run import chunk_args

pytestmark = pytest.mark.unslothwheels  # reads downloaded wheels (the container tier's pin set has none)


@pytest.fixture(scope="module")
def wheels() -> dict[str, zipfile.ZipFile]:
    return {w.name.split("-")[0]: zipfile.ZipFile(w) for w in gpu_setup.starter_wheels(fetch=False)}


def _class(wheels: dict, package: str, path: str, name: str) -> ast.ClassDef:
    tree = ast.parse(wheels[package].read(path).decode("utf-8"))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)


def _fields(cls: ast.ClassDef) -> set[str]:
    """A dataclass's init fields: its annotated class attributes, less those declared field(init=False)."""
    out = set()
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            call = node.value if isinstance(node.value, ast.Call) else None
            if call is not None and any(k.arg == "init" and getattr(k.value, "value", True) is False
                                        for k in call.keywords):
                continue
            out.add(node.target.id)
    return out


def _params(cls: ast.ClassDef, method: str) -> set[str]:
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == method)
    return {a.arg for a in [*fn.args.args, *fn.args.kwonlyargs]}


def _info() -> dict:
    return {"dtype": "bfloat16", "optim": "adamw_torch", "gradient_checkpointing": True}


def test_every_training_argument_the_kit_asks_for_exists_on_transformers_4_56(wheels, tmp_path):
    accepted = _fields(_class(wheels, "transformers", "transformers/training_args.py", "TrainingArguments"))
    assert {"output_dir", "learning_rate", "seed"} <= accepted and len(accepted) > 100  # the reader reads
    wanted = chunk_args(config.load_profile("smoke"), _info(), chunk=0, lr=1e-4, warmup=2, scratch=tmp_path,
                        quiet=True)
    kwargs, dropped = hf.compat_training_kwargs(wanted, accepted)
    assert dropped == [] and kwargs["group_by_length"] is True and "eval_strategy" in kwargs and "use_cpu" in kwargs
    trainer = _class(wheels, "transformers", "transformers/trainer.py", "Trainer")
    assert "processing_class" in _params(trainer, "__init__")  # hf.trainer_tokenizer_kwarg's choice, as on 5.x


def test_the_models_load_with_dtype_and_score_only_the_answer_positions(wheels):
    source = wheels["transformers"].read("transformers/modeling_utils.py").decode("utf-8")
    assert 'kwargs.pop("dtype"' in source  # from_pretrained(dtype=): what helpers.models.compat picks for 4.56
    assert dtype_kwarg("bfloat16", "4.56.2") == {"dtype": "bfloat16"}
    assert dtype_kwarg("bfloat16", "4.51.3") == {"torch_dtype": "bfloat16"}
    for arch, cls in (("qwen2", "Qwen2ForCausalLM"), ("llama", "LlamaForCausalLM")):
        forward = _params(_class(wheels, "transformers", f"transformers/models/{arch}/modeling_{arch}.py", cls),
                          "forward")
        assert "logits_to_keep" in forward, cls  # hf.accepts_logits_to_keep: the answer-only head


def test_grpo_gets_every_setting_the_kit_asks_for_on_trl_0_23(wheels, tmp_path, monkeypatch):
    training = _fields(_class(wheels, "transformers", "transformers/training_args.py", "TrainingArguments"))
    grpo = _fields(_class(wheels, "trl", "trl/trainer/grpo_config.py", "GRPOConfig"))
    assert {"num_generations", "beta"} <= grpo
    cfg = config.load_profile("smoke")
    monkeypatch.setattr(config, "runs_root", lambda: tmp_path)
    kwargs, dropped = reasoner_rl.grpo_config_kwargs(reasoner_rl.wanted_args(cfg, _info(), [2], quiet=True),
                                                     training | grpo)
    # trl 0.23 still takes max_prompt_length (trl 1.x dropped it): nothing is dropped, every ESSENTIAL one is kept
    assert dropped == [] and set(reasoner_rl.ESSENTIAL) <= set(kwargs)
    trainer = _params(_class(wheels, "trl", "trl/trainer/grpo_trainer.py", "GRPOTrainer"), "__init__")
    assert {"model", "reward_funcs", "args", "train_dataset", "processing_class", "callbacks"} <= trainer


def test_trl_0_23_scores_grpo_log_probabilities_without_triton_as_0_19_does(wheels):
    """reasoner_rl.grpo_blocker refuses trl 1.15 on a torch without Triton; trl 0.23, like 0.19, has no such kernel."""
    names = wheels["trl"].namelist()
    assert "trl/trainer/utils.py" in names and not any(n.startswith("trl/kernels/") for n in names)
    assert "_ChunkedLogProbFunction" not in wheels["trl"].read("trl/trainer/utils.py").decode("utf-8")
