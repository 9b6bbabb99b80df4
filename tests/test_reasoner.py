"""The reasoning A-agent (helpers.agents.reasoner; stages.reasoner_data, reasoner_measure, reasoner_train): writing
stopped by the deadline, the token cap or its own end; the letter scored after the reasoning, finished or cut; the
model's own words returned; the A-agent in reason mode; the measurement and the mode it justifies; the training chats; the export."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter

import pytest

from helpers import config, filters, puzzles
from helpers.agents import build, reasoner
from helpers.agents.answer import AnswerAgent
from helpers.agents.stages import reasoner_data, reasoner_measure, reasoner_train
from helpers.config import REASONER, REASONER_RL
from helpers.io import InputError
from helpers.layout import RunLayout
from helpers.prompts import render_prompt
from helpers.puzzles import deduction, variety
from helpers.records import LETTERS

from _tiny import one_torch_thread, tiny_model_dir

_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)

ITEMS = [{"question": "Ana, Ben and Cy sit in a row facing north. Ben is at the left end. Who is in the middle?",
          "choices": ["Ana", "Ben", "Cy", "Dee"]},
         {"question": "Ravi's mother's only brother is Tom. Who is Tom to Ravi?", "choices": ["Uncle", "Father",
                                                                                          "Cousin", "Son"]},
         {"question": "Five people sit round a table. How many sit between two neighbours?",
          "choices": ["0", "1", "2", "3"]}]


@pytest.fixture(scope="module")
def tiny():
    """The tiny model with a random (non-zero) LoRA named "reasoner" and its tokenizer."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from helpers.models.adapters import _quiet_peft
    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    with _quiet_peft():
        model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                init_lora_weights=False), adapter_name=REASONER)
    model.eval()
    return model, AutoTokenizer.from_pretrained(str(tiny_model_dir()))


def _never_stopping(model, tokenizer, **kwargs) -> reasoner.Reasoner:
    r = reasoner.Reasoner(model, tokenizer, member=REASONER, **kwargs)
    r.stop_ids = [len(tokenizer) - 1]  # an id greedy decoding does not reach here: only the deadline or cap stop it
    return r


# ---------------------------------------------------------------- text
def test_reasoning_is_the_text_before_the_answer_mark_cut_to_the_rules_words():
    assert reasoner.reasoning_of("Bo is left of Cy.\nAnswer: B") == ("Bo is left of Cy.", True)
    text, marked = reasoner.reasoning_of(" ".join(f"w{i}" for i in range(300)))
    assert not marked and len(text.split()) == reasoner.MAX_REASON_WORDS and text.startswith("w0 w1")
    assert reasoner.reasoner_reply("Two  seatings\nfit.", "C") == "Two seatings fit.\nAnswer: C"


def test_the_returned_reasoning_is_cut_by_tokens_too(tiny):
    model, tok = tiny
    r = reasoner.Reasoner(model, tok, member=REASONER, max_new_tokens=2000)
    digits = tok("7" * 3000, add_special_tokens=False)["input_ids"]  # one 'word' of many tokens
    keep, text, stop = r._row(digits[:1500], 3.0)
    assert keep == 1500 and len(tok(text, add_special_tokens=False)["input_ids"]) <= reasoner.MAX_REASON_TOKENS + 2
    assert filters.check_answer({"answer": "A", "reasoning": reasoner.reasoning_of(text)[0]}, tok).ok


def test_a_harness_cap_only_lowers_the_configured_one_each_call(tiny):
    model, tok = tiny
    r = reasoner.Reasoner(model, tok, member=REASONER, max_new_tokens=300)
    for given, cap in ((8, 8), (1024, 300), (None, 300), ("lots", 300), (0, 300)):
        r.limit_tokens(given)
        assert r.max_new_tokens == cap, given


def test_letters_after_the_mark_are_single_tokens_of_their_own(tiny):
    _, tok = tiny
    ids = reasoner.mark_letter_ids(tok)
    assert len(set(ids)) == len(ids) == 10
    head = tok("\nAnswer:", add_special_tokens=False)["input_ids"]
    assert tok("\nAnswer: C", add_special_tokens=False)["input_ids"] == head + [ids[2]]


def test_a_tokenizer_that_splits_the_letter_is_refused():
    class Splitting:
        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [ord(c) for c in text.replace(" ", "  ")]}
    with pytest.raises(ValueError, match="one token"):
        reasoner.mark_letter_ids(Splitting())


# ---------------------------------------------------------------- stopping
def test_the_deadline_stops_every_reasoning_and_the_batch_keeps_its_seconds(tiny):
    model, tok = tiny
    r = _never_stopping(model, tok, max_new_tokens=100_000)
    r.answer(ITEMS[:1], 0.3)  # warm-up: the letter pass is measured once
    rows = r.answer(ITEMS, 0.8)
    # how far past its deadline a reply ends is a timing, held by make bench ("reasoning, 3 s deadline: p99 < limit"),
    # not by a unit test sharing its cores with others
    assert [row["stop"] for row in rows] == ["deadline"] * 3
    assert all(row["tokens"] > 5 and abs(sum(row["probs"]) - 1) < 1e-5 and len(row["probs"]) == 4 for row in rows)


def test_the_token_cap_stops_writing_before_the_deadline(tiny):
    model, tok = tiny
    rows = _never_stopping(model, tok, max_new_tokens=4).answer(ITEMS, 30.0)
    assert [(row["stop"], row["tokens"]) for row in rows] == [("token_cap", 4)] * 3


def test_no_time_left_scores_the_letter_straight_after_the_prompt(tiny):
    model, tok = tiny
    rows = _never_stopping(model, tok).answer(ITEMS, 0.01)
    assert [(row["stop"], row["reasoning"], row["tokens"]) for row in rows] == [("no_time", "", 0)] * 3
    assert all(abs(sum(row["probs"]) - 1) < 1e-5 for row in rows)


def test_a_prompt_unsloth_would_cut_stops_before_any_answer_is_scored(tiny, monkeypatch):
    """Unsloth's fast forward cuts input past the max_seq_length it loaded the model with (a warning, no error), and
    sets that attribute on the model; the reasoner and letter scoring refuse such a prompt in one line first. A model
    loaded through transformers has no such attribute and is never refused."""
    from helpers import scoring
    from helpers.models.unsloth_api import CutByUnsloth
    model, tok = tiny
    longest = max(len(tok(render_prompt(tok, item), add_special_tokens=False)["input_ids"]) for item in ITEMS)
    monkeypatch.setattr(model.get_base_model(), "max_seq_length", longest - 1, raising=False)  # as Unsloth sets it
    with pytest.raises(CutByUnsloth, match=f"letter scoring's longest prompt: {longest} tokens, more than the "
                                           f"max_seq_length of {longest - 1}.*raise model.max_seq_len"):
        scoring.score_letters(model, tok, ITEMS)
    with pytest.raises(CutByUnsloth, match="the reasoner's longest prompt, its reasoning and its letter"):
        reasoner.Reasoner(model, tok, member=REASONER, max_new_tokens=8).answer(ITEMS, 30.0)
    monkeypatch.setattr(model.get_base_model(), "max_seq_length", 4096, raising=False)  # room for all of it
    assert len(reasoner.Reasoner(model, tok, member=REASONER, max_new_tokens=8).answer(ITEMS, 30.0)) == 3


def test_the_reply_shape_lifts_the_deadline_so_only_the_cap_or_the_reply_stops_it(tiny, monkeypatch):
    model, tok = tiny
    r = _never_stopping(model, tok, max_new_tokens=6)
    calls = []
    answer = r.answer
    monkeypatch.setattr(r, "answer", lambda items, s: calls.append((len(items), s)) or answer(items, s))
    shape = reasoner_measure.reply_shape(r, ITEMS * 2, batch_size=4)
    assert calls == [(4, reasoner_measure.NO_DEADLINE_S), (2, reasoner_measure.NO_DEADLINE_S)]  # batches of 4
    assert shape == {"n": 6, "stops": {"token_cap": 1.0}, "tokens_mean": 6.0}


# ---------------------------------------------------------------- the letter after the reasoning
def _letter_probs_by_hand(model, tok, prompt_ids: list[int], reasoning_ids: list[int]) -> list[float]:
    """One unbatched forward over prompt + reasoning + "\\nAnswer:", no cache: the letter a trained reasoner writes."""
    import torch
    ids = torch.tensor([prompt_ids + reasoning_ids + tok("\nAnswer:", add_special_tokens=False)["input_ids"]])
    from helpers.scoring import use_member
    with torch.no_grad(), use_member(model, REASONER):
        logits = model(input_ids=ids).logits[0, -1]
    return torch.softmax(logits[reasoner.mark_letter_ids(tok)[:4]], -1).tolist()


def test_the_letter_is_scored_on_the_generations_cache_as_after_the_reasoning_alone(tiny):
    """Rows cut at different points (all 10 tokens, 4, none) in one left-padded batch score the letter exactly as
    one forward over each row's own prompt + kept reasoning + "\\nAnswer:" would. So do they when the generation
    hands back no cache object: Unsloth's generate returns past_key_values as a tuple of tensors per layer, with no
    get_seq_length (GPU check run 11 on an H200: the reasoner step failed there); the prompt is then fed again, no
    cache, and the tuple's tensors (random here) are never read."""
    import dataclasses
    import torch
    model, tok = tiny
    r = _never_stopping(model, tok, max_new_tokens=10)
    prompts = [render_prompt(tok, it, reasoner.REASONER_SYSTEM) for it in ITEMS]
    from helpers.scoring import inference, use_member
    with use_member(model, REASONER), inference(model, tok):
        enc = tok(prompts, add_special_tokens=False, padding=True, return_tensors="pt")
        gen = r._generate(dict(enc), 30.0)
        new = gen.sequences[:, enc["input_ids"].shape[1]:].tolist()
        assert [len(x) for x in new] == [10, 10, 10]
        probs = r._letters(dict(enc), gen, [10, 4, 0], [4, 4, 4])
        legacy = tuple((torch.randn(3, 2, 40, 32), torch.randn(3, 2, 40, 32))
                       for _ in range(model.config.num_hidden_layers))
        uncached = [r._letters(dict(enc), dataclasses.replace(gen, past_key_values=past), [10, 4, 0], [4, 4, 4])
                    for past in (legacy, None)]
        gen = r._generate(dict(enc), 30.0)
        shorter = r._letters(dict(enc), gen, [3, 4, 0], [4, 4, 4])
    for i, keep in enumerate([10, 4, 0]):
        own = tok(prompts[i], add_special_tokens=False)["input_ids"]
        assert probs[i] == pytest.approx(_letter_probs_by_hand(model, tok, own, new[i][:keep]), abs=1e-4)
    for again in uncached:
        for i in range(3):
            assert again[i] == pytest.approx(probs[i], abs=1e-5)
    for i in (1, 2):
        assert shorter[i] == pytest.approx(probs[i], abs=1e-5)
    assert max(abs(a - b) for a, b in zip(shorter[0], probs[0])) > 1e-4  # the reasoning conditions the letter


def test_the_reasoning_ends_where_the_model_starts_its_answer(tiny):
    model, tok = tiny
    r = reasoner.Reasoner(model, tok, member=REASONER)
    ids = tok("Ben is at the left end.\nAnswer: A", add_special_tokens=False)["input_ids"]
    keep, text, stop = r._row(ids + [r.stop_ids[0]], 3.0)
    assert (text, stop) == ("Ben is at the left end.", "finished")
    assert keep == len(tok("Ben is at the left end.", add_special_tokens=False)["input_ids"])
    assert r._row(ids[:3], 3.0)[2] == "deadline" and r._row(ids[:3], 0.0) == (0, "", "no_time")


# ---------------------------------------------------------------- the A-agent in reason mode
def test_reason_mode_answers_with_the_models_own_words_inside_the_budget(tiny):
    model, tok = tiny
    acfg = dataclasses.replace(config.load_profile("smoke").agents, answer_mode="reason", model_question_share=0.0)
    agent = build.answer_agent(model, tok, {"members": ["base"]}, acfg)
    assert agent.reasoner is not None and agent.reasoner.member == REASONER
    agent.reasoner.stop_ids = [len(tok) - 1]
    agent.reasoner.max_new_tokens = 100_000  # only the deadline stops it
    answers, metas = agent.answer(ITEMS + [None, {"question": "Pick one."}])
    assert [m["source"] for m in metas] == ["model"] * 3 + ["fallback"] * 2
    assert all(filters.check_answer(a, tok).ok and a["answer"] in "ABCD" for a in answers)
    assert all(m["stop"] == "deadline" for m in metas[:3])  # how far past it: make bench's reasoning p99
    for a, m in zip(answers[:3], metas[:3]):  # the reasoning is what the model wrote, not a template
        assert a["reasoning"] and "Letter scores" not in a["reasoning"] and m["tokens"] > 0
        # the letter is the likeliest (meta's probs are rounded to 4 places: the tiny model's near ties may show equal)
        assert m["probs"][LETTERS.index(a["answer"])] == max(m["probs"])
    assert agent.stats["stop:deadline"] == 3


def test_a_reasoner_failure_costs_the_chunks_letters_counted_never_the_call(tiny, monkeypatch):
    model, tok = tiny
    agent = AnswerAgent(None, tok, reasoner=reasoner.Reasoner(model, tok, member=REASONER), chunk_size=2)
    monkeypatch.setattr(agent.reasoner, "answer", lambda items, s: 1 / 0)
    answers, metas = agent.answer(ITEMS)
    assert [m["reason"] for m in metas] == ["model_error:ZeroDivisionError"] * 3
    assert all(filters.check_answer(a, tok).ok for a in answers)


def test_reason_mode_without_the_reasoner_adapter_is_refused():
    from transformers import AutoModelForCausalLM, AutoTokenizer
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    acfg = dataclasses.replace(config.load_profile("smoke").agents, answer_mode="reason", model_question_share=0.0)
    with pytest.raises(ValueError, match="reasoner"):
        build.answer_agent(model, AutoTokenizer.from_pretrained(str(tiny_model_dir())), {"members": ["base"]}, acfg)


# ---------------------------------------------------------------- settings
def test_answer_mode_and_the_token_cap_are_checked():
    for bad in ({"agents.answer_mode": "think"}, {"agents.reason_max_tokens": 513}, {"reasoner.levels": [4]}):
        with pytest.raises((InputError, KeyError)):
            config.load_profile("smoke", overrides=bad)
    values = config.load_profile("smoke").as_dict()
    values["models"][REASONER] = values["reasoner"]["adapter"]
    with pytest.raises(InputError, match="reserved for the reasoning A-agent"):
        config.check_complete(values, "test")


# ---------------------------------------------------------------- training chats
def test_training_chats_cover_every_family_level_and_letter_with_the_solvers_deduction():
    kinds, levels = ["seating_linear", "family_pointing", "family_coded"], [1, 2]
    counts = Counter()
    recs = reasoner_data.reasoner_records(len(kinds) * len(levels) * 4, seed=5, kinds=kinds, levels=levels,
                                          stats=counts)
    combos = Counter((r["puzzle"]["kind"], r["puzzle"]["level"], LETTERS[r["answer"]]) for r in recs)
    assert set(combos) == {(k, lv, L) for k in kinds for lv in levels for L in "ABCD"}  # each exactly once
    for r in recs:
        system, user, reply = r["chat"]
        assert system["content"] == reasoner.REASONER_SYSTEM and user["content"].startswith("Question: ")
        reasoning_, letter_ = reply["content"].rsplit(reasoner.ANSWER_MARK, 1)
        assert letter_.strip() == LETTERS[r["answer"]] and len(reasoning_.split()) <= reasoner.MAX_REASON_WORDS
        assert puzzles.prove_text(r["question"], r["choices"])[0] == r["answer"]
        if r["puzzle"]["kind"] == "seating_linear":  # a deduction every step of which the checker proves
            key = r["choices"][r["answer"]]
            steps = deduction.write(r["puzzle"], key)
            assert r["reasoning"] == "deduction" and deduction.check(r["puzzle"], steps, key) == []
            assert reasoning_.strip() == " ".join(s.text for s in steps) and "seatings" not in reasoning_
        else:  # the chain of links, each link proven from the facts it cites
            key = r["choices"][r["answer"]]
            steps = deduction.write_kinship(r["puzzle"], key)
            assert r["reasoning"] == "deduction" and deduction.check_kinship(r["puzzle"], steps, key) == []
            assert reasoning_.strip() == r["explanation"] == " ".join(s.text for s in steps)
    assert counts["source:deduction"] == 24 and "source:links" not in counts, counts


def test_a_family_without_a_deduction_is_left_out_and_counted(monkeypatch):
    """The count over every seating is no training target: a seating family the deduction writer does not cover
    gives no chats, and says so; a profile whose families all lack one is refused. The writer covers every seating
    family now, so two are taken out of its list here."""
    monkeypatch.setattr(deduction, "KINDS", tuple(k for k in deduction.KINDS
                                                  if k not in ("seating_square", "seating_row_facing")))
    counts = Counter()
    recs = reasoner_data.reasoner_records(8, seed=2, kinds=["seating_square", "seating_circular"], levels=[1],
                                          stats=counts)
    assert {r["puzzle"]["kind"] for r in recs} == {"seating_circular"} and len(recs) == 8
    assert counts["left_out:seating_square:no_deduction:family_not_covered"] == 1
    assert counts["source:deduction"] == 8, counts
    with pytest.raises(ValueError, match="deduction writer covers"):
        reasoner_data.reasoner_records(4, seed=2, kinds=["seating_square", "seating_row_facing"], levels=[1])


def test_reasoning_over_the_token_budget_is_redrawn_and_the_shortest_kept_when_none_fits():
    words = lambda text: len(text.split())  # noqa: E731 - a tokenizer's count stand-in: one token a word
    counts = Counter()
    recs = reasoner_data.reasoner_records(12, seed=4, kinds=["seating_circular", "family"], levels=[2], stats=counts,
                                          tokens=words, budget=40)
    inside = [r for r in recs if words(r["chat"][-1]["content"].rsplit(reasoner.ANSWER_MARK, 1)[0]) <= 40]
    assert len(recs) == 12 and len(inside) == 12 - counts["kept_shortest:over_token_budget"]
    assert counts["redrawn:over_token_budget"] >= 1, counts  # circular level-2 deductions run ~39 words (median)
    none_fit = Counter()
    tight = reasoner_data.reasoner_records(4, seed=4, kinds=["seating_circular"], levels=[2], stats=none_fit,
                                           tokens=words, budget=1)
    assert len(tight) == 4 and none_fit["kept_shortest:over_token_budget"] == 4
    assert none_fit["redrawn:over_token_budget"] == 4 * reasoner_data.REDRAWS


def test_the_reasoning_token_budget_is_what_finishes_in_time_on_the_target_machine():
    """3 s (time_margin 0.5 x 6 s) less the letter step's tenth, at the profile's decode speed, at most the cap."""
    cpu = config.load_profile("cpu").agents  # SmolLM2 on 2 cores: 100 ms a token
    assert reasoner.token_budget(cpu) == 27
    assert reasoner.token_budget(dataclasses.replace(cpu, decode_ms_per_token=27.0)) == 100  # a 72B on an MI300X
    assert reasoner.token_budget(dataclasses.replace(cpu, decode_ms_per_token=27.0, time_margin=1.0)) == 200
    assert reasoner.token_budget(dataclasses.replace(cpu, decode_ms_per_token=1.0)) == cpu.reason_max_tokens


def test_held_out_wordings_the_chats_never_used_are_marked_new():
    """A held-out puzzle with a sentence template no training chat has is "new" (a family never trained: all new);
    one whose every sentence a chat has is "seen" (the chats' own puzzles, read back as questions)."""
    train = reasoner_data.reasoner_records(12, seed=3, kinds=["seating_circular"], levels=[1])
    other = reasoner_measure.held_out(4, seed=3, kinds=["family_pointing"], levels=[1])
    own = [{"templates": variety.templates(r)} for r in train[:4]]
    counts = reasoner_measure.mark_wordings(other + own, train)
    assert [q["wording"] for q in other] == ["new"] * 4 and [q["wording"] for q in own] == ["seen"] * 4
    assert counts == Counter(new=4, seen=4)


def test_held_out_questions_hide_the_deduction_and_cover_the_families():
    qs = reasoner_measure.held_out(8, seed=3, kinds=["seating_circular", "family"], levels=[1, 2])
    assert {(q["kind"], q["level"]) for q in qs} == {(k, lv) for k in ("seating_circular", "family") for lv in (1, 2)}
    assert all("explanation" not in q and q["answer"] in "ABCD" for q in qs)
    train = reasoner_data.reasoner_records(8, seed=3, kinds=["seating_circular", "family"], levels=[1, 2])
    assert not {q["question"] for q in qs} & {r["question"] for r in train}


# ---------------------------------------------------------------- the measurement and the mode it justifies
def _side(correct: int, n: int = 20, p99: float = 1.0, failed: int = 0, collapsed: bool = False,
          items: list[int] | None = None) -> dict:
    items = items if items is not None else [1] * correct + [0] * (n - correct)
    return {"correct": correct, "n": n, "accuracy": correct / n, "filter_failed": failed,
            "latency": {"p99_s": p99, "limit_s": 6.0}, "item_correct": items,
            "favourite": {"letter": "C", "share": 0.85 if collapsed else 0.3, "collapsed": collapsed}}


@pytest.mark.parametrize("letter_, reason_, mode, why", [
    (_side(8), _side(14), "reason", "right alone on 6, wrong alone on 0, p 0.016"),
    (_side(8), _side(9), "letter", "sign test p 0.50"),  # one more right answer is not evidence
    # 14 against 8 in total, but right alone on 9 and wrong alone on 3: p 0.073, not significant
    (_side(8), _side(14, items=[0] * 3 + [1] * 5 + [1] * 9 + [0] * 3), "letter", "p 0.07"),
    (_side(8), _side(8), "letter", "no more than"),
    (_side(8), _side(14, p99=6.2), "letter", "over the 6 s limit"),
    (_side(8), _side(14, failed=1), "letter", "failed the answer filter"),
    (_side(8), _side(14, collapsed=True), "letter", "C on 85% of the puzzles (collapsed)")])
def test_reasoning_is_chosen_only_when_it_answers_significantly_more_inside_the_limit(letter_, reason_, mode, why):
    got, text = reasoner_measure.justified_mode({"letter": letter_, "reason": reason_})
    assert got == mode and why in text


def test_the_sign_test_is_exact():
    assert reasoner_measure.sign_test(6, 0) == pytest.approx(1 / 64)
    assert reasoner_measure.sign_test(9, 3) == pytest.approx(299 / 4096)
    assert reasoner_measure.sign_test(0, 0) == 1.0 and reasoner_measure.sign_test(1, 1) == pytest.approx(0.75)


@pytest.mark.parametrize("rl, member, why", [
    (_side(20, n=30), REASONER_RL, "right alone on 6, wrong alone on 0"),  # beats both, significantly
    (_side(16, n=30), REASONER, "not significantly more"),  # beats letter-only, not the supervised reasoner
    (_side(20, n=30, collapsed=True), REASONER, "C on 85% of the puzzles (collapsed)"),
    (_side(20, n=30, p99=6.5), REASONER, "over the 6 s limit"),
    (None, REASONER, "right alone on 6, wrong alone on 0, p 0.016")])  # the supervised reasoner's own decision
def test_the_reinforced_reasoner_answers_only_when_it_beats_both_the_others(rl, member, why):
    report = {"letter": _side(8, n=30), "reason": _side(14, n=30), **({"rl": rl} if rl else {})}
    mode, got, text = reasoner_measure.justified_answer(report)
    assert (mode, got) == ("reason", member) and why in text
    assert reasoner_measure.measured(report) == ["letter", "reason"] + (["rl"] if rl else [])


def test_a_reinforced_reasoner_that_beats_letter_only_answers_when_the_supervised_one_cannot():
    report = {"letter": _side(8, n=30), "reason": _side(25, n=30, p99=7.0), "rl": _side(22, n=30)}
    assert reasoner_measure.justified_answer(report)[:2] == ("reason", REASONER_RL)
    report["rl"] = _side(9, n=30)  # and not when it does not beat letter-only either
    assert reasoner_measure.justified_answer(report)[:2] == ("letter", REASONER)


def _fake_adapter(path, data: bytes) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "adapter_config.json").write_text("{}")
    (path / "adapter_model.safetensors").write_bytes(data)


def test_the_measurement_names_each_reasoner_itself_and_only_a_current_reinforced_one(tmp_path, monkeypatch):
    """After the reinforced reasoner won once, the selection names it: the measurement must still measure the
    supervised reasoner as "reason" (not the selection's choice twice), and the reinforced one only while its
    report's rl settings are the profile's."""
    from types import SimpleNamespace
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("smoke", "names")
    lay = RunLayout.of(cfg)
    for name in (REASONER, REASONER_RL):
        _fake_adapter(lay.adapter_dir(name), name.encode())
    lay.made(lay.agents_dir)
    lay.rl_report.write_text(json.dumps({"params": {"rl": config.as_dict(cfg.rl)}}))
    built = []
    monkeypatch.setattr(build, "answer_agent", lambda model, tok, sel, agents, mode=None: built.append(
        (mode, sel.get("reasoner") if mode == "reason" else None)))
    monkeypatch.setattr(reasoner_measure, "measure", lambda agent, qs: _side(3, n=len(qs)))
    model = SimpleNamespace(peft_config={REASONER: 1, REASONER_RL: 1})
    sel = {"members": ["base"], "reasoner": REASONER_RL}
    report = reasoner_train.measure_run(cfg, model=model, tokenizer=None, sel=sel)
    assert built == [("letter", None), ("reason", REASONER), ("reason", REASONER_RL)] and "rl" in report
    assert set(report["adapters_sha256"]) == {REASONER, REASONER_RL}
    lay.rl_report.write_text(json.dumps({"params": {"rl": {**config.as_dict(cfg.rl), "beta": 0.5}}}))
    built.clear()
    assert "rl" not in reasoner_train.measure_run(cfg, model=model, tokenizer=None, sel=sel)
    assert built == [("letter", None), ("reason", REASONER)]


def test_auto_stops_trusting_a_reasoner_trained_again_after_its_measurement(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("smoke", "again")
    lay = RunLayout.of(cfg)
    _fake_adapter(lay.adapter_dir(REASONER), b"first")
    lay.made(lay.agents_dir)
    report = {"letter": _side(5), "reason": _side(12), "params": reasoner_measure.measured_settings(cfg),
              "adapters_sha256": {REASONER: hashlib.sha256(b"first").hexdigest()}}
    mode, member, why = reasoner_measure.justified_answer(report)
    lay.reasoner_report.write_text(json.dumps({**report, "justified_mode": mode, "reasoner_member": member,
                                               "why": why}))
    assert build.measured_answer(cfg)[:2] == ("reason", REASONER)
    _fake_adapter(lay.adapter_dir(REASONER), b"second")
    mode, member, why = build.measured_answer(cfg)
    assert mode == "letter" and "trained again" in why


def test_auto_uses_the_reinforced_reasoner_only_while_its_adapter_is_there(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("smoke", "modes")
    lay = RunLayout.of(cfg)
    lay.made(lay.agents_dir)
    report = {"letter": _side(8, n=30), "reason": _side(14, n=30), "rl": _side(20, n=30),
              "params": reasoner_measure.measured_settings(cfg)}
    mode, member, why = reasoner_measure.justified_answer(report)
    lay.reasoner_report.write_text(json.dumps({**report, "justified_mode": mode, "reasoner_member": member,
                                               "why": why}))
    for name in (REASONER, REASONER_RL):
        adapter = lay.adapter_dir(name)
        adapter.mkdir(parents=True)
        (adapter / "adapter_config.json").write_text("{}")
        (adapter / "adapter_model.safetensors").write_bytes(b"")
    assert build.measured_answer(cfg)[:2] == ("reason", REASONER_RL) and build.selection(cfg)["reasoner"] == REASONER_RL
    (lay.adapter_dir(REASONER_RL) / "adapter_model.safetensors").unlink()
    mode, member, why = build.measured_answer(cfg)
    assert (mode, member) == ("letter", REASONER) and "adapter is missing" in why


def test_auto_trusts_only_a_measurement_of_the_reasoner_that_is_there(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("smoke", "modes")
    assert build.measured_mode(cfg)[0] == "letter"
    lay = RunLayout.of(cfg)
    lay.made(lay.agents_dir)
    report = {"letter": _side(5), "reason": _side(12), "params": reasoner_measure.measured_settings(cfg)}
    mode, why = reasoner_measure.justified_mode(report)  # the decision the stage writes beside its measurement
    lay.reasoner_report.write_text(json.dumps({**report, "justified_mode": mode, "why": why}))
    mode, why = build.measured_mode(cfg)
    assert mode == "letter" and "adapter is missing" in why
    adapter = lay.adapter_dir(REASONER)
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text("{}")
    (adapter / "adapter_model.safetensors").write_bytes(b"")
    assert build.measured_mode(cfg)[0] == "reason"
    assert build.agents_cfg(cfg).answer_mode == "reason"
    for changed in ({"reasoner.lr": 1e-2}, {"agents.time_margin": 0.8}, {"agents.reason_max_tokens": 100},
                    {"rl.beta": 0.2}):
        other = config.load_profile("smoke", "modes", changed)
        assert "other reasoner, rl or answer-budget settings" in build.measured_mode(other)[1], changed
    fixed = config.load_profile("smoke", "modes", {"agents.answer_mode": "letter"})
    assert build.measured_mode(fixed) == ("letter", "set in the profile")


def test_the_measurement_reports_both_modes_on_the_same_questions(tiny):
    model, tok = tiny
    acfg = dataclasses.replace(config.load_profile("smoke").agents, model_question_share=0.0)
    qs = reasoner_measure.held_out(6, seed=1, kinds=["seating_linear", "family"], levels=[1])
    wordings = reasoner_measure.mark_wordings(qs, reasoner_data.reasoner_records(8, seed=1, kinds=["family"],
                                                                                 levels=[1]))
    out = {m: reasoner_measure.measure(build.answer_agent(model, tok, {"members": ["base"]}, acfg, mode=m), qs)
           for m in reasoner_measure.MODES}
    for m, r in out.items():
        assert r["n"] == 6 and sum(v["n"] for v in r["by_kind"].values()) == 6 and r["filter_failed"] == 0
        assert r["correct"] == sum(v["correct"] for v in r["by_level"].values())
        assert {k: v["n"] for k, v in r["by_wording"].items()} == dict(wordings) and wordings["new"] >= 3
        assert r["latency"]["items"] == 6 and r["favourite"]["letter"] in "ABCD"
    assert out["letter"]["stops"] == {} and sum(out["reason"]["stops"].values()) == pytest.approx(1.0)
    first = out["reason"]["first_step"]  # every reasoning's first sentence is read, seating and family alike
    assert out["letter"]["first_step"] == {} and sum(first["all"].values()) == 6 and "no_reader" not in first["all"]
    assert sum(first["by_kind"]["family"].values()) == sum(first["by_kind"]["seating_linear"].values()) == 3
    assert "[reasoner] reason:" in reasoner_measure.describe({**out, "why": "x"})
    assert "first step true" in reasoner_measure.describe({**out, "why": "x"})


# ---------------------------------------------------------------- the real model
@pytest.mark.realmodel
def test_the_real_model_reasons_in_its_own_words_under_the_deadline():
    """SmolLM2-135M-Instruct, untrained, with the reasoning prompt on held-out puzzles in one harness batch: it writes
    prose until the deadline stops it (generate gets the budget less the letter step's reserve), and every answer
    comes back valid, in its own words. Wall time is a benchmark's figure (bench/bench_reason.py), not asserted here:
    on a 2-core CI box beside another test process, reading the prompts alone (which no deadline can cut) took
    2.4-5 s where it takes 0.9 s on an idle one."""
    from helpers.models import members
    from helpers.models.members import BASE
    from helpers.agents.predictor import LetterPredictor
    from _tiny import smollm2_dir
    smoke_model = dataclasses.replace(config.load_profile("smoke").model, dtype="float32", use_unsloth=False,
                                      load_in_4bit=False)
    model, tok, _ = members.load_with_adapters(str(smollm2_dir()), smoke_model, {}, threads=1)
    agent = AnswerAgent(LetterPredictor(model, tok, [BASE]), tok, reasoner=reasoner.Reasoner(model, tok, member=BASE))
    given, generate = [], agent.reasoner._generate
    agent.reasoner._generate = lambda enc, seconds: given.append(seconds) or generate(enc, seconds)
    questions = reasoner_measure.held_out(6, seed=4, kinds=["seating_circular", "family_pointing"], levels=[2])
    agent.answer(questions[:1])  # warm-up: the letter step is measured once
    answers, metas = agent.answer(questions[1:])
    seen = [(m["source"], m.get("stop"), m.get("tokens"), round(m["seconds"], 2)) for m in metas]
    assert all(filters.check_answer(a, tok).ok and a["answer"] in "ABCD" for a in answers), seen
    assert all(m["source"] == "model" and m["tokens"] >= 1 and a["reasoning"] for a, m in zip(answers, metas)), seen
    assert {m["stop"] for m in metas} <= {"deadline", "finished"} and agent.stats["filter_fixed"] == 0, seen
    assert len(given) == 2 and all(0 < s < agent.budget_s for s in given), given  # the deadline, inside the budget
    assert given[1] <= agent.budget_s - reasoner.MIN_WRITE_S  # the second call keeps a measured reserve back


@pytest.mark.parametrize("stage", ["writer", "reasoner", "rl"])
def test_every_stage_command_can_start_over(stage):
    """A checkpoint of other settings is refused with "run with --no-resume": every stage's command takes it."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "helpers.agents.stages", stage, "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "--no-resume" in out


def test_measuring_only_and_starting_over_together_is_refused():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "helpers.agents.stages", "reasoner", "--measure-only", "--no-resume"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "give one" in done.stderr


def test_the_reasoner_trains_and_is_measured_on_the_families_its_edition_asks(monkeypatch):
    """October 2025 asks seating and blood relations: its reasoner's chats, held-out puzzles and RL prompts come from
    those 12 families, not the truth-teller, syllogism, series or direction families the base profile also lists;
    July 2025 asks truth-tellers too. A family no topic routes to would teach the A-agent puzzles it never meets."""
    from helpers.agents.stages import reasoner_rl
    new = {"truth_liars", "syllogism", "alnum_series", "direction_sense"}
    october = config.load_profile("smoke")
    july = config.load_profile("smoke", overrides={"agents.edition": "2025-07-aaipl"})
    assert set(build.asked_kinds(october)) == set(october.agents.puzzle_kinds) - new
    assert set(build.asked_kinds(july)) == set(october.agents.puzzle_kinds) - new | {"truth_liars"}
    drawn: dict = {}  # the families each draw is given (the chats: two written; the profile's 96 take ~1 min)
    chats, held, prompts = reasoner_data.reasoner_records, reasoner_measure.held_out, reasoner_rl.rl_records
    monkeypatch.setattr(reasoner_data, "reasoner_records", lambda n, **kw: drawn.update(chats=kw["kinds"]) or
                        chats(2, **kw))
    monkeypatch.setattr(reasoner_measure, "held_out", lambda n, **kw: drawn.update(held=kw["kinds"]) or held(n, **kw))
    monkeypatch.setattr(reasoner_rl, "rl_records", lambda n, **kw: drawn.update(rl=kw["kinds"]) or prompts(n, **kw))
    reasoner_train.build_data(october)
    reasoner_train.measure_questions(october)
    reasoner_rl.build_prompts(october)
    assert {k: tuple(v) for k, v in drawn.items()} == dict.fromkeys(("chats", "held", "rl"), build.asked_kinds(october))
    assert reasoner_measure.measured_settings(october)["kinds"] == list(build.asked_kinds(october))
    measured = reasoner_measure.measured_settings(october)
    assert build._still_the_profiles(measured, october)  # a measurement is trusted while its families are asked
    on_july_s = dict(measured, kinds=list(build.asked_kinds(july)))  # measured on other families: measured again
    assert not build._still_the_profiles(on_july_s, october)
