"""The answer-only head's guard: a forward that takes logits_to_keep but drops the positions (as an Unsloth-patched
forward does) falls back to the Trainer's own loss, counted per batch and in summary.json, never a crash."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from helpers import config, models
from helpers.io import read_json
from helpers.train import prepare_adapter, train_adapter
from helpers.train.data import IGNORE_INDEX, make_collator, tokenize_example
from helpers.train.hf import AnswerOnlyRefused, accepts_logits_to_keep, check_kept_logits

from _tiny import bundled_records, cpu_recommendation, one_torch_thread, tiny_model_dir, write_curriculum

_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer
    return models.prepare_tokenizer(AutoTokenizer.from_pretrained(str(tiny_model_dir())), for_training=True)


def _peft():
    """The tiny model with a LoRA adapter, in training mode (dropout 0: two forwards give the same loss)."""
    torch.manual_seed(0)
    smoke = config.load_profile("smoke")
    model, _, _ = models.load_model(tiny_model_dir(), model=dataclasses.replace(smoke.model, gradient_checkpointing=False),
                                    for_training=True)
    lora = dataclasses.replace(smoke.models["model1_lora"], r=4, alpha=8.0, dropout=0.0)
    return models.add_adapter(model, lora, ["q_proj", "v_proj"]).train()


def drop_positions(model) -> None:
    """Patch the base model's forward as Unsloth does: it takes logits_to_keep but returns every position's logits."""
    base = model.get_base_model()
    own = base.forward

    def forward(*args, logits_to_keep=0, **kwargs):
        return own(*args, **kwargs)  # the tensor of positions is dropped

    base.forward = forward


def _batch(tok, n: int = 4) -> dict:
    recs = bundled_records(n)
    for i, rec in enumerate(recs):
        rec["question"] += " Think about it" * (2 * i)  # answers at different positions
    return make_collator(tok)([tokenize_example(tok, r) for r in recs])


def _trainer(tmp_path, model, tok, **kw):
    from helpers.train.data import make_dataset
    from helpers.train.hf import ChunkTrainer, make_training_args, trainer_tokenizer_kwarg
    args, _ = make_training_args(output_dir=str(tmp_path / "o"), per_device_train_batch_size=4, use_cpu=True,
                                 report_to="none", remove_unused_columns=False)
    return ChunkTrainer(model=model, args=args, train_dataset=make_dataset([]), data_collator=make_collator(tok),
                        **trainer_tokenizer_kwarg(tok), **kw)


def test_only_a_batch_x_kept_x_vocab_tensor_passes():
    check_kept_logits(torch.zeros(2, 3, 10), 2, 3, 10)
    check_kept_logits(torch.zeros(2, 3, 10), 2, 3, None)  # vocabulary unknown: not checked
    for bad in (torch.zeros(2, 7, 10), torch.zeros(1, 3, 10), torch.zeros(2, 3, 9), torch.zeros(6, 10), None):
        with pytest.raises(AnswerOnlyRefused, match="logits_to_keep=3 positions"):
            check_kept_logits(bad, 2, 3, 10)


def test_a_forward_that_drops_the_positions_falls_back_to_the_trainers_loss(tmp_path, tok, capsys):
    model = _peft()
    drop_positions(model)
    assert accepts_logits_to_keep(model)  # the signature says yes: only the logits' shape tells
    batch = _batch(tok)
    guarded = _trainer(tmp_path / "a", model, tok, answer_only_logits=True)
    plain = _trainer(tmp_path / "b", model, tok, answer_only_logits=False)
    for n in (None, (batch["labels"][:, 1:] != IGNORE_INDEX).sum()):
        own = plain.compute_loss(model, batch, num_items_in_batch=n)
        assert torch.equal(guarded.compute_loss(model, batch, num_items_in_batch=n), own)
    assert guarded.answer_only_guard.fallbacks == 2 and plain.answer_only_guard.fallbacks == 0  # one per batch
    reason = guarded.answer_only_guard.reason
    assert "returned logits of shape" in reason and f"[4, {batch['input_ids'].shape[1]}," in reason
    assert capsys.readouterr().out.count("warning: answer-only logits off") == 1  # once, not per batch


def test_a_model_that_honours_the_positions_uses_the_answer_only_loss(tmp_path, tok):
    from helpers.train.hf import answer_only_loss
    model = _peft()
    batch = _batch(tok)
    widths = []
    hook = model.get_base_model().lm_head.register_forward_hook(lambda m, i, o: widths.append(o.shape[1]))
    trainer = _trainer(tmp_path, model, tok, answer_only_logits=True)
    loss = trainer.compute_loss(model, batch)
    hook.remove()
    cols = int((batch["labels"][:, 1:] != IGNORE_INDEX).any(dim=0).sum())
    assert widths == [cols] and cols < batch["input_ids"].shape[1]  # the head ran on the labelled columns only
    assert trainer.answer_only_guard.fallbacks == 0 and trainer.answer_only_guard.reason is None
    assert torch.allclose(loss, answer_only_loss(model, batch)) and torch.allclose(loss, model(**batch).loss, atol=1e-5)


def test_the_count_reaches_every_chunk_row_and_summary_json(tmp_path):
    cur = write_curriculum(tmp_path / "c.jsonl", 2, 8)
    over = {"model.base": str(tiny_model_dir()), "train.batch_size": 4, "train.grad_accum": 1,
            "train.epochs_per_chunk": 1, "train.logging_steps": 1, "models.model1_lora.dropout": 0.0}
    rec, summaries = cpu_recommendation(), {}
    for label, answer_only in (("patched", True), ("full", False)):
        cfg = config.load_profile("smoke", "t", {**over, "train.answer_only_logits": answer_only})
        model, tok, info = prepare_adapter(cfg, "model1_lora", rec)
        if label == "patched":
            drop_positions(model)
        summaries[label] = train_adapter(cfg, "model1_lora", curriculum_path=cur, out_dir=tmp_path / label,
                                         recommendation=rec, progress=False, prepared=(model, tok, info))
    s, full = read_json(tmp_path / "patched" / "summary.json"), summaries["full"]
    assert s["params"]["answer_only_logits"] is True  # asked for, and the signature allowed it
    assert [c["answer_only_fallbacks"] for c in s["per_chunk"]] == [c["steps"] for c in s["per_chunk"]]  # accum 1
    assert s["answer_only_fallbacks"] == sum(c["steps"] for c in s["per_chunk"]) > 0
    reason = s["answer_only_fallback_reason"]
    assert "returned logits of shape" in reason and reason in s["warnings"]
    assert s["chunk_losses"] == full["chunk_losses"]  # the fallback is exactly the Trainer's own loss
    assert full["answer_only_fallbacks"] == 0 and full["answer_only_fallback_reason"] is None
