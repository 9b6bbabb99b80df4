"""Letter scoring against a hand-computed softmax on the tiny model; left padding; adapters as members."""

from __future__ import annotations

import inspect
import math

import pytest
import torch

from _tiny import bundled_records, tiny_model_dir
from helpers import config, scoring
from helpers.layout import RunLayout
from helpers.models import members
from helpers.io import InputError
from helpers.prompts import render_prompt


@pytest.fixture(scope="module")
def tiny():
    from transformers import AutoModelForCausalLM, AutoTokenizer
    torch.manual_seed(0)
    torch.set_num_threads(1)
    path = tiny_model_dir()
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path)).eval()
    return model, tok


def _close(a: list[list[float]], b: list[list[float]], tol: float) -> bool:
    """Same shape and every probability within tol."""
    return len(a) == len(b) and all(len(x) == len(y) and all(abs(u - v) <= tol for u, v in zip(x, y))
                                    for x, y in zip(a, b))


def _items() -> list[dict]:
    """Bundled questions cut to 2, 3, 4, 5 choices and one with 7 (letters up to G), lengths all different."""
    recs = bundled_records(6)
    out = []
    for rec, n in zip(recs, (2, 3, 4, 5, 4, 7)):
        choices = (rec["choices"] + ["red", "seven", "north", "glass"])[:n]
        out.append({"question": rec["question"] + " (think)" * n, "choices": choices, "answer": 0})
    return out


def _hand_softmax(model, tok, item: dict) -> list[float]:
    """One prompt alone, every position's logits, letters looked up by their ChatML token, softmax by math."""
    ids = tok(render_prompt(tok, item), add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        last = model(input_ids=ids).logits[0, -1]
    letter_ids = tok.convert_tokens_to_ids(list("ABCDEFGHIJ"[:len(item["choices"])]))
    vals = [float(last[t]) for t in letter_ids]
    top = max(vals)
    exps = [math.exp(v - top) for v in vals]
    return [e / sum(exps) for e in exps]


def test_letter_tokens_follow_the_training_completion(tiny):
    _, tok = tiny
    # ChatML: the assistant turn opens on a new line and the letter is its own token "A".
    assert scoring.letter_token_ids(tok) == tok.convert_tokens_to_ids(list("ABCDEFGHIJ"))
    # Without a chat template the plain layout ends "Assistant:" and training writes " A": the spaced token.
    saved = tok.chat_template
    try:
        tok.chat_template = None
        assert scoring.letter_token_ids(tok) == tok.convert_tokens_to_ids(["\u0120" + x for x in "ABCDEFGHIJ"])
    finally:
        tok.chat_template = saved


def test_scores_equal_a_hand_computed_softmax(tiny):
    model, tok = tiny
    items = _items()
    got = scoring.score_letters(model, tok, items, batch_size=16)
    for item, probs in zip(items, got):
        assert len(probs) == len(item["choices"])
        assert sum(probs) == pytest.approx(1.0, abs=1e-6)
        assert probs == pytest.approx(_hand_softmax(model, tok, item), abs=1e-5)
    # The untrained model is not uniform: a broken index (e.g. every row reading the pad column) would show.
    assert max(max(p) - min(p) for p in got) > 1e-3


def test_left_padded_batches_equal_one_at_a_time(tiny):
    model, tok = tiny
    items = _items()
    batched = scoring.score_letters(model, tok, items, batch_size=6)
    pairs = scoring.score_letters(model, tok, items, batch_size=2)
    single = [scoring.score_letters(model, tok, [it], batch_size=1)[0] for it in items]
    for b, p, s in zip(batched, pairs, single):
        assert b == pytest.approx(s, abs=1e-5) and p == pytest.approx(s, abs=1e-5)


def test_shared_prompt_head_is_reused_without_changing_results(tiny):
    model, tok = tiny
    items = _items()
    seqs = [tok(render_prompt(tok, it), add_special_tokens=False)["input_ids"] for it in items]
    head = scoring.common_prefix_length(seqs)
    # The system turn and "Question:" are shared; the questions differ right after.
    assert 20 < head < min(len(s) for s in seqs) and len({tuple(s[:head + 1]) for s in seqs}) > 1
    assert scoring.common_prefix_length([[1, 2, 3], [1, 2, 3]]) == 2  # at least one token left to run
    assert _close(scoring.score_letters(model, tok, items, batch_size=4),
                  scoring.score_letters(model, tok, items, batch_size=4, reuse_prefix=False), 1e-5)


def test_mode_and_padding_side_are_restored(tiny):
    model, tok = tiny
    model.train()
    tok.padding_side = "right"
    try:
        scoring.score_letters(model, tok, _items()[:2])
        assert model.training and tok.padding_side == "right"
    finally:
        model.eval()


class _OldForward(torch.nn.Module):
    """A transformers-4.45-style model: only `num_logits_to_keep`; records what it was called with."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.calls = inner, []

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None, use_cache=None,
                num_logits_to_keep=0):
        self.calls.append(num_logits_to_keep)
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                          past_key_values=past_key_values, use_cache=use_cache, logits_to_keep=num_logits_to_keep)


def test_only_the_last_position_is_computed_on_either_keyword(tiny):
    model, tok = tiny
    assert "logits_to_keep" in inspect.signature(model.forward).parameters
    assert scoring._keep_last_kwarg(model) == "logits_to_keep"
    old = _OldForward(model)
    assert scoring._keep_last_kwarg(old) == "num_logits_to_keep"
    items = _items()[:3]
    assert _close(scoring.score_letters(old, tok, items, batch_size=2), scoring.score_letters(model, tok, items), 1e-6)
    assert old.calls == [1, 1, 1]  # the shared prompt head once, then two batches: each keeps one position


def test_bad_items_name_the_record_and_field(tiny):
    model, tok = tiny
    with pytest.raises(InputError, match=r"record 1: field 'choices'.*got 1"):
        scoring.score_letters(model, tok, [_items()[0], {"question": "q?", "choices": ["only"]}])
    assert scoring.score_letters(model, tok, []) == []


def test_parse_letter_is_the_seeds_regex():
    assert scoring.parse_letter("B", 4) == "B"
    assert scoring.parse_letter("The answer is C) water.", 4) == "C"
    assert scoring.parse_letter("Answer:D", 4) == "D"
    assert scoring.parse_letter("Apple and Banana", 4) is None  # letters inside words do not count
    assert scoring.parse_letter("E", 4) is None  # not one of this question's letters
    assert scoring.parse_letter("", 4) is None


def test_generate_letters_returns_parsed_letters_or_none(tiny):
    model, tok = tiny
    items = _items()[:3]
    out = scoring.generate_letters(model, tok, items, max_new_tokens=4, batch_size=2)
    assert len(out) == 3
    for item, row in zip(items, out):
        assert set(row) == {"letter", "text"} and isinstance(row["text"], str)
        assert row["letter"] is None or row["letter"] in "ABCDEFG"[:len(item["choices"])]
        assert row["letter"] == scoring.parse_letter(row["text"], len(item["choices"]))


# ---------------------------------------------------------------- adapters as members
def _save_adapter(base_dir, out_dir, *, use_dora: bool, seed: int):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    torch.manual_seed(seed)
    from helpers.models.adapters import _quiet_peft
    base = AutoModelForCausalLM.from_pretrained(str(base_dir))
    # init_lora_weights=False: B is random too, so the adapter really changes the logits.
    with _quiet_peft():
        peft_model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                     use_dora=use_dora, init_lora_weights=False))
    peft_model.save_pretrained(str(out_dir))


def test_members_share_one_base_and_match_separately_loaded_adapters(tiny):
    from transformers import AutoModelForCausalLM
    from helpers import models
    model, tok = tiny
    cfg = config.with_overrides(config.load_profile("smoke", "members"), {"model.base": str(tiny_model_dir())})
    for name, dora, seed in (("model1_lora", False, 1), ("model3_dora", True, 2)):
        _save_adapter(tiny_model_dir(), RunLayout.of(cfg).adapter_dir(name), use_dora=dora, seed=seed)
    items = _items()[:4]
    names = ["base", "model1_lora", "model3_dora"]
    ens, etok, info = members.load_members(cfg, names)
    assert info["members"] == names and info["skipped"] == {}
    got = scoring.score_members(ens, etok, names, items, batch_size=4)
    assert _close(got["base"], scoring.score_letters(model, tok, items), 1e-5)
    for name in names[1:]:
        alone = models.load_adapter(AutoModelForCausalLM.from_pretrained(str(tiny_model_dir())),
                                    RunLayout.of(cfg).adapter_dir(name))
        expect = scoring.score_letters(alone, tok, items)
        assert _close(got[name], expect, 1e-5)
        assert not _close(got[name], got["base"], 1e-3)  # the adapter is really on
    assert not _close(got["model1_lora"], got["model3_dora"], 1e-3)


def test_missing_adapter_raises_or_is_counted():
    cfg = config.with_overrides(config.load_profile("smoke", "nomembers"), {"model.base": str(tiny_model_dir())})
    with pytest.raises(InputError, match=r"model2_rslora.*not trained"):
        members.load_members(cfg, ["base", "model2_rslora"])
    with pytest.raises(InputError, match="not an adapter of the profile"):
        members.load_members(cfg, ["nosuch"])
    _, _, info = members.load_members(cfg, ["base", "model2_rslora"], skip_missing=True)
    assert info["members"] == ["base"] and list(info["skipped"]) == ["model2_rslora"]


def test_score_member_rows_for_both_methods(tiny):
    from helpers import evaluate
    model, tok = tiny
    items = [dict(it, id=f"q{i}", source="kit/x", topic="t") for i, it in enumerate(_items()[:3])]
    rows, timing = evaluate.score_member(model, tok, "base", items, ["easy"] * 3, method="letters", batch_size=2)
    assert _close([r["probs"] for r in rows], scoring.score_letters(model, tok, items), 1e-5)
    assert timing["parse_rate"] == 1.0 and timing["questions_per_s"] > 0 and rows[0]["member"] == "base"
    gen_rows, gen_timing = evaluate.score_member(model, tok, "base", items, ["easy"] * 3, method="generate",
                                                 batch_size=2, max_new_tokens=3)
    gens = scoring.generate_letters(model, tok, items, max_new_tokens=3)
    assert [r["pred_letter"] for r in gen_rows] == [g["letter"] for g in gens]
    assert gen_timing["parse_rate"] == sum(g["letter"] is not None for g in gens) / 3
    with pytest.raises(KeyError, match="not loaded"):
        evaluate.score_member(model, tok, "model1_lora", items, ["easy"] * 3)
    with pytest.raises(ValueError, match="method"):
        evaluate.score_member(model, tok, "base", items, ["easy"] * 3, method="vote")


def test_generation_form_tells_a_letter_alone_from_a_letter_that_goes_on():
    from helpers.scoring import generation_form, parse_letter
    texts = ["B", " (C) ", "D.", "B) September is the ninth month", "I am not sure"]
    form = generation_form([{"text": t, "letter": parse_letter(t, 4)} for t in texts])
    assert form == {"parse_rate": 4 / 5, "letter_only_rate": 3 / 5}
