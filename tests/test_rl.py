"""The reasoner's reinforcement stage (helpers.agents.rewards, helpers.agents.stages.reasoner_rl): the rewards on
known-right, known-wrong, over-long, empty and letterless replies and a raising reward; the rl: profile section; the
GRPOConfig arguments chosen from the installed trl; and a few GRPO steps on the tiny model from a supervised
reasoner adapter: the adapter moves, the rewards are the solver's, the report is written, a resumed run continues."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import config, edition, filters, io, puzzles
from helpers.agents import build, rewards
from helpers.agents.reasoner import ANSWER_MARK, REASONER_SYSTEM
from helpers.agents.stages import reasoner_rl
from helpers.config import REASONER, REASONER_RL
from helpers.io import InputError, version_tuple
from helpers.layout import RunLayout
from helpers.models.unsloth_api import PATCHED_ON_IMPORT
from helpers.records import LETTERS

from _tiny import cpu_recommendation, one_torch_thread, tiny_model_dir

_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)
ROOT = Path(__file__).resolve().parent.parent


class Words:
    """A tokenizer stub: one token per whitespace-separated word (the filter's count, exactly)."""

    def encode(self, text, add_special_tokens=False):
        return text.split()


def _score(completions, keys, budget=10, ids=None):
    """(correct, format, length) rewards of `completions` against `keys`, and the book."""
    funcs, book = rewards.make_rewards(Words(), budget)
    columns = {"key": keys, "id": [f"q{i}" for i in range(len(keys))]}
    if ids is not None:
        columns["completion_ids"] = ids
    return [f(prompts=[None] * len(completions), completions=completions, **columns) for f in funcs], book


# ---------------------------------------------------------------- the rewards
def test_a_right_reply_earns_every_reward_and_a_wrong_one_only_format_and_length():
    (correct, fmt, length), book = _score(["Bo sits left of Cy.\nAnswer: B", "Bo sits left of Cy.\nAnswer: C"],
                                          ["B", "B"])
    assert correct == [1.0, 0.0] and fmt == [1.0, 1.0] and length == [1.0, 1.0]
    assert book.reasons == {} and book.means() == {"correct": 0.5, "format": 1.0, "length": 1.0}
    assert [(s["letter"], s["key"], s["correct"]) for s in book.samples] == [("B", "B", 1.0), ("C", "B", 0.0)]


def test_rewards_are_also_kept_per_puzzle_family():
    funcs, book = rewards.make_rewards(Words(), 10)
    funcs[0](prompts=[None] * 3, completions=["Answer: A", "Answer: B", "Answer: A"], key=["A", "A", "A"],
             kind=["family", "family", "seating_linear"])
    assert book.means_by_kind() == {"family": {"correct": 0.5}, "seating_linear": {"correct": 1.0}}
    again = rewards.RewardBook()
    again.restore(json.loads(json.dumps(book.state())))  # what a checkpoint keeps, read back
    assert again.means_by_kind() == book.means_by_kind() and again.means() == book.means()


def test_each_familys_rewards_are_kept_for_each_half_of_the_run():
    funcs, book = rewards.make_rewards(Words(), 10)
    book.half = 2  # the first two completions scored are the run's first half
    funcs[0](prompts=[None] * 4, completions=["Answer: B", "Answer: A", "Answer: A", "Answer: A"], key=["A"] * 4,
             kind=["family", "family", "family", "seating_linear"])
    assert book.means_by_half() == {"family": {"first": {"correct": 0.5}, "last": {"correct": 1.0}},
                                    "seating_linear": {"last": {"correct": 1.0}}}
    again = rewards.RewardBook()
    again.restore(json.loads(json.dumps(book.state())))
    assert again.means_by_half() == book.means_by_half()


def test_the_letter_is_read_after_the_first_mark_as_the_reasoner_reads_it():
    assert rewards.answer_letter(f"x\n{ANSWER_MARK} **D**") == "D"
    assert rewards.answer_letter(f"{ANSWER_MARK} (A) Hari") == "A"
    assert rewards.answer_letter(f"{ANSWER_MARK} B\n{ANSWER_MARK} C") == "B"
    assert rewards.answer_letter(f"{ANSWER_MARK} Bo") is None  # a name, not a letter
    assert rewards.answer_letter("The answer is B") is None


def test_conversational_and_plain_completions_score_alike():
    chat = [[{"role": "assistant", "content": "Two fit.\nAnswer: A"}]]
    assert _score(chat, ["A"])[0] == _score(["Two fit.\nAnswer: A"], ["A"])[0] == [[1.0], [1.0], [1.0]]


def test_the_length_reward_falls_past_the_budget_to_its_floor():
    assert [rewards.length_reward(n, 100) for n in (0, 100, 150, 200, 300, 5000)] == [1.0, 1.0, 0.5, 0.0, -1.0, -1.0]
    long_reply = " ".join(["step"] * 14) + "\nAnswer: A"  # 14 words of reasoning: 4 over a budget of 10
    (correct, fmt, length), _ = _score([long_reply], ["A"], budget=10)
    assert correct == [1.0] and length == [pytest.approx(0.6)]
    # the reasoning is what counts, as the agent writes it before scoring the letter: not the mark, the letter or a tail
    (_, _, tail), _ = _score(["Bo sits left.\nAnswer: A and then it goes on"], ["A"], budget=3, ids=[list(range(30))])
    assert tail == [1.0]


def test_a_reply_over_the_organisers_limit_fails_the_format_reward_and_is_counted():
    too_long = " ".join(["w"] * edition.default().answer_rules.total_under)
    (correct, fmt, _), book = _score([too_long + "\nAnswer: C"], ["C"])
    assert correct == [1.0] and fmt == [0.0] and book.reasons == {"format:filter:reasoning_too_long": 1}


def test_empty_and_letterless_replies_get_a_counted_zero_from_every_reward():
    (correct, fmt, length), book = _score(["", "   ", "I think it is Bo.", [{"role": "assistant", "content": ""}]],
                                          ["A"] * 4)
    assert correct == fmt == length == [0.0] * 4
    assert book.reasons == {f"{name}:{why}": n for name in rewards.REWARDS
                            for why, n in (("empty", 3), ("no_letter", 1))}


def test_a_reward_that_raises_gives_a_counted_zero_and_the_run_goes_on():
    book = rewards.RewardBook()

    def broken(text, letter_, row):
        raise RuntimeError("boom")
    f = rewards.guarded("broken", broken, book)
    assert f(prompts=[None, None], completions=["Answer: A", 42]) == [0.0, 0.0]
    assert book.reasons == {"broken:error:RuntimeError": 1, "broken:error:TypeError": 1}
    (correct, _, _), book = _score(["Answer: A", "Answer: A"], ["not a letter", "AB"])  # a bad key: counted
    assert correct == [0.0, 0.0] and book.reasons == {"correct:error:KeyError": 2}
    assert f.__name__ == "broken"  # TRL logs rewards/<name>/mean


def test_a_budget_under_one_token_is_refused():
    with pytest.raises(ValueError, match="budget"):
        rewards.make_rewards(Words(), 0)


# ---------------------------------------------------------------- the profile section
def test_the_rl_section_is_typed_and_every_profile_gives_it():
    for name in config.available_profiles():
        cfg = config.load_profile(name)
        rl = cfg.rl
        assert isinstance(rl, config.RLSettings) and rl.num_generations >= 2
        assert 1 <= reasoner_rl.token_budget(cfg) <= rl.max_completion_tokens <= 512
        reasoner_rl.check_settings(rl)
    assert config.load_profile("smoke", overrides={"rl.beta": 0}).rl.beta == 0.0  # an int becomes a float


@pytest.mark.parametrize("key,value,needle", [("rl.num_generations", 1, "at least 2"),
                                              ("rl.max_completion_tokens", 600, "at most 512"),
                                              ("rl.lr", "1e-4", "YAML reads"), ("rl.levels", [4], "one of 1, 2, 3"),
                                              ("rl.beta", -0.1, "expected a number in"),
                                              ("rl.group", 4, "unknown key")])
def test_a_bad_rl_value_is_refused_naming_the_key(key, value, needle):
    with pytest.raises(InputError, match=needle) as err:
        config.load_profile("smoke", overrides={key: value})
    assert key in str(err.value)


def test_settings_that_contradict_each_other_are_refused():
    cfg = config.load_profile("smoke")
    for over, needle in (({"rl.prompts": 0}, "no reinforcement"), ({"rl.token_budget": 64}, "token_budget"),
                         ({"rl.prompts": 1}, "prompts_per_step")):
        with pytest.raises(ValueError, match=needle):
            reasoner_rl.check_settings(config.with_overrides(cfg, over).rl)


def test_an_auto_budget_is_what_finishes_in_time_on_the_target_machine():
    """auto: the answer budget (3 s) less the letter step's tenth, at the profile's decode speed, under the cap."""
    cfg = config.load_profile("cpu")  # 100 ms a token: 2.7 s -> 27 tokens
    assert cfg.rl.token_budget == "auto" and reasoner_rl.token_budget(cfg) == 27
    slow = config.with_overrides(cfg, {"agents.decode_ms_per_token": 270.0})
    assert reasoner_rl.token_budget(slow) == 10
    fast = config.with_overrides(cfg, {"agents.decode_ms_per_token": 0.5})
    assert reasoner_rl.token_budget(fast) == cfg.rl.max_completion_tokens  # 5,400 would pass the generation cap
    assert reasoner_rl.token_budget(config.with_overrides(cfg, {"rl.token_budget": 40})) == 40
    with pytest.raises(InputError, match="rl.token_budget"):
        config.load_profile("cpu", overrides={"rl.token_budget": "soon"})


def test_the_rl_adapter_name_is_reserved():
    values = config.as_dict(config.load_profile("smoke"))
    values["models"][REASONER_RL] = values["reasoner"]["adapter"]
    with pytest.raises(InputError, match="reserved"):
        config.profile_from_dict(values, "test")


# ---------------------------------------------------------------- GRPOConfig from the installed trl
def _wanted(cfg):
    return reasoner_rl.wanted_args(cfg, {"dtype": "float32", "gradient_checkpointing": True}, [0], quiet=True)


def test_the_grpo_arguments_fit_the_installed_trl():
    from trl import GRPOConfig
    cfg = config.load_profile("smoke")
    accepted = reasoner_rl.accepted_fields(GRPOConfig)
    kwargs, dropped = reasoner_rl.grpo_config_kwargs(_wanted(cfg), accepted)
    assert set(kwargs) <= accepted and set(dropped) == {"max_prompt_length"} - accepted
    args = GRPOConfig(**kwargs)  # the installed trl's own checks (group divides the batch, ...) pass
    assert (args.num_generations, args.max_completion_length, args.beta) == (2, 24, 0.04)
    assert args.per_device_train_batch_size == 4 and not args.bf16 and args.max_steps == cfg.rl.steps


def test_old_and_new_trl_names_are_chosen_and_a_missing_essential_refused():
    cfg = config.load_profile("smoke")
    old = set(_wanted(cfg)) - {"use_cpu"} | {"no_cuda"}  # a trl on transformers before use_cpu
    kwargs, dropped = reasoner_rl.grpo_config_kwargs(_wanted(cfg), old)
    assert kwargs["no_cuda"] is True and "use_cpu" not in kwargs and dropped == []
    new = set(_wanted(cfg)) - {"max_prompt_length"}  # trl 1.x dropped it
    assert reasoner_rl.grpo_config_kwargs(_wanted(cfg), new)[1] == ["max_prompt_length"]
    with pytest.raises(ValueError, match="num_generations"):
        reasoner_rl.grpo_config_kwargs(_wanted(cfg), set(_wanted(cfg)) - {"num_generations"})


# ---------------------------------------------------------------- resume
def test_resume_follows_latest_json_only_to_a_whole_checkpoint_of_the_same_settings(tmp_path):
    from helpers.train import checkpoints as ckpt
    out = tmp_path / "reasoner_rl"
    assert reasoner_rl.find_resume(out, {"rl.beta": 0.04}, True) is None  # nothing saved yet: start
    done = out / "checkpoints" / "checkpoint-2"
    done.mkdir(parents=True)
    for name in ckpt.REQUIRED:
        (done / name).write_text("{}")
    (out / "metrics.jsonl").write_text('{"step": 1}\n{"step": 2}\n{"step": 3}\n')  # step 3 logged, never saved
    io.write_json(out / ckpt.LATEST, {"step": 2, "path": "checkpoints/checkpoint-2", "metrics_lines": 2,
                                      "fingerprint": {"rl.beta": 0.04}})
    found, latest = reasoner_rl.find_resume(out, {"rl.beta": 0.04}, True)
    assert found == done and latest["step"] == 2 and len(io.read_jsonl(out / "metrics.jsonl")) == 2
    with pytest.raises(ValueError, match="rl.beta"):
        reasoner_rl.find_resume(out, {"rl.beta": 0.0}, True)
    (done / "optimizer.pt").unlink()  # latest.json names a checkpoint that lost a file: said, never half-loaded
    with pytest.raises(InputError, match="optimizer.pt"):
        reasoner_rl.find_resume(out, {"rl.beta": 0.04}, True)
    assert reasoner_rl.find_resume(out, {"rl.beta": 0.04}, False) is None and not (out / ckpt.LATEST).exists()


# ---------------------------------------------------------------- the prompts
def _question_and_choices(prompt: list[dict]) -> tuple[str, list[str]]:
    """The question and choices back out of the reasoning prompt's user turn."""
    text = prompt[-1]["content"]
    question, _, rest = text.removeprefix("Question: ").partition("\nChoices:\n")
    return question, [line.split(") ", 1)[1] for line in rest.splitlines()]


def test_the_prompts_are_fresh_puzzles_whose_key_the_solver_proves():
    from helpers.agents.stages import reasoner_data, reasoner_measure
    kinds = ["seating_linear", "family"]
    rows = reasoner_rl.rl_records(8, seed=3, kinds=kinds, levels=[1, 2])
    assert rows == reasoner_rl.rl_records(8, seed=3, kinds=kinds, levels=[1, 2])  # deterministic
    assert {r["key"] for r in rows} == set("ABCD") and rows[0]["prompt"][0]["content"] == REASONER_SYSTEM
    for row in rows:
        proven, _, why = puzzles.prove_text(*_question_and_choices(row["prompt"]))
        assert why is None and LETTERS[proven] == row["key"], row["id"]
    supervised = {r["question"] for r in reasoner_data.reasoner_records(8, seed=3, kinds=kinds, levels=[1, 2])}
    held_out = {q["question"] for q in reasoner_measure.held_out(8, seed=3, kinds=kinds, levels=[1, 2])}
    ours = {_question_and_choices(r["prompt"])[0] for r in rows}
    assert not ours & supervised and not ours & held_out


# ---------------------------------------------------------------- a few GRPO steps on the tiny model
def _primed_base(out) -> str:
    """The tiny model taught, in ~4 s, to reply "Answer: <letter>" and end its turn, the letter spread over A-D, so a
    group's replies differ (GRPO learns nothing from a group that scores alike; the random tiny model never writes the
    mark). The whole model is trained: a LoRA on the random tiny model does not learn it in seconds."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from helpers.scoring import end_of_turn_ids
    cfg = config.load_profile("smoke")
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir()))
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    end = end_of_turn_ids(tok, REASONER_SYSTEM)[-1:]
    seqs = []
    for row in reasoner_rl.rl_records(2, seed=cfg.seed, kinds=cfg.agents.puzzle_kinds, levels=cfg.rl.levels):
        text = tok.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
        prompt = tok(text, add_special_tokens=False)["input_ids"]
        for letter_ in "ABCD":
            seqs.append((prompt, tok(f"{ANSWER_MARK} {letter_}", add_special_tokens=False)["input_ids"] + end))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(20):  # the reply's loss falls from 7.8 to ~0.7 (ln 4 / 4 = 0.35 is the floor: 4 letters)
        opt.zero_grad()
        for prompt, reply in seqs:
            labels = torch.tensor([[-100] * len(prompt) + reply])
            model(input_ids=torch.tensor([prompt + reply]), labels=labels).loss.backward()
        opt.step()
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    return str(out)


def _stand_in_reasoner(cfg) -> None:
    """The supervised reasoner's adapter as the stage finds it (the reasoner's settings, freshly initialised)."""
    from transformers import AutoModelForCausalLM

    from helpers.models import add_adapter
    model = add_adapter(AutoModelForCausalLM.from_pretrained(cfg.model.base), cfg.reasoner.adapter,
                        cfg.train.target_modules)
    model.save_pretrained(str(RunLayout.of(cfg).adapter_dir(REASONER)))


def _tensors(path) -> dict:
    from safetensors.torch import load_file
    return load_file(str(path / "adapter_model.safetensors"))


def test_an_install_that_cannot_run_grpo_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    """trl 1.15 without Triton (the GPU stack's pins on a CPU torch) would fail inside its first step: the stage says
    so and why, before it loads a model or writes a file."""
    from trl.trainer import utils as trl_utils
    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", None, raising=False)
    cfg = config.load_profile("smoke", run="blocked")
    with pytest.raises(RuntimeError, match="Triton"):
        reasoner_rl.train(cfg, recommendation=cpu_recommendation())
    assert not RunLayout.of(cfg).root.exists()


def test_grpo_with_trl_1_15_on_a_gpu_build_that_sees_no_gpu_is_refused(monkeypatch):
    """trl 1.15 runs its Triton kernel on whatever device the model is on: a CUDA torch on a box with no GPU visible
    (make test-gpu-stack on Python 3.12, PyPI's CUDA torch) failed inside the first step with '0 active drivers'."""
    from trl.trainer import utils as trl_utils
    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", object(), raising=False)  # a Triton kernel is there
    monkeypatch.setattr(reasoner_rl, "_triton_falls_back", lambda: False)
    monkeypatch.setattr(reasoner_rl, "_gpu_visible", lambda: False)
    assert "sees no GPU" in reasoner_rl.grpo_blocker() and "trl 1.16" in reasoner_rl.grpo_blocker()
    monkeypatch.setattr(reasoner_rl, "_gpu_visible", lambda: True)
    assert reasoner_rl.grpo_blocker() is None
    monkeypatch.setattr(reasoner_rl, "_gpu_visible", lambda: False)
    monkeypatch.setattr(reasoner_rl, "_triton_falls_back", lambda: True)  # trl 1.16: torch on the CPU
    assert reasoner_rl.grpo_blocker() is None


def test_grpo_on_transformers_in_a_process_that_imported_unsloth_is_refused(monkeypatch):
    """Imported, Unsloth swaps trl's GRPOTrainer for its own, which calls model.for_training(): on the H200 a model
    transformers + PEFT loaded failed inside the first step (docs/results.md, run 13). Refused before anything loads."""
    cfg = config.load_profile("smoke", run="unsloth-in-process")  # transformers + PEFT on a CPU
    assert reasoner_rl.grpo_blocker(cfg, cpu_recommendation()) != reasoner_rl.UNSLOTH_IN_PROCESS
    monkeypatch.setitem(sys.modules, "unsloth", type(sys)("unsloth"))  # what an earlier `import unsloth` leaves
    assert reasoner_rl.grpo_blocker(cfg, cpu_recommendation()) == reasoner_rl.UNSLOTH_IN_PROCESS
    with pytest.raises(RuntimeError, match="swapped trl's GRPOTrainer"):
        reasoner_rl.train(cfg, recommendation=cpu_recommendation())
    assert not RunLayout.of(cfg).root.exists()


def test_grpo_steps_on_the_tiny_model_move_the_adapter_with_the_solvers_rewards(tmp_path):
    blocker = reasoner_rl.grpo_blocker()  # asked here, not in a skipif: trl at collection cost each tier ~9 s
    if blocker is not None:
        pytest.skip(f"this trl cannot run GRPO here ({blocker}): the refusals are tested above, and the main and "
                    "container tiers run the steps")
    t0 = time.perf_counter()
    # checkpointing on, as every GPU profile has it (smoke turns it off: the tiny model needs no activation savings)
    cfg = config.load_profile("smoke", overrides={"model.base": _primed_base(tmp_path / "primed"), "rl.steps": 2,
                                                  "model.gradient_checkpointing": True})
    lay = RunLayout.of(cfg)
    _stand_in_reasoner(cfg)
    primed = time.perf_counter() - t0
    report = reasoner_rl.train(cfg, recommendation=cpu_recommendation())
    assert report["start"]["from"] == "supervised" and report["steps"] == 2
    before, after = _tensors(lay.adapter_dir(REASONER)), _tensors(lay.adapter_dir(REASONER_RL))
    assert set(before) == set(after) and any(not (before[k] == after[k]).all() for k in before), "the adapter moved"
    # the rewards are the solver's: every letter read is held against the key the solver proves for that puzzle
    keys = {r["id"]: r["key"] for r in io.read_jsonl(lay.rl_data)}
    for r in io.read_jsonl(lay.rl_data):
        proven, _, _ = puzzles.prove_text(*_question_and_choices(r["prompt"]))
        assert LETTERS[proven] == r["key"], r["id"]
    assert report["samples"] and all(s["key"] == keys[s["id"]] and s["correct"] == float(s["letter"] == s["key"])
                                     for s in report["samples"])
    assert report["completions_scored"] == 2 * cfg.rl.prompts_per_step * cfg.rl.num_generations
    # some group's replies scored differently (letters right, wrong or missing), so there was something to learn
    assert any(r["reward_std"] > 0 for r in report["per_step"])
    assert [r["step"] for r in report["per_step"]] == [1, 2] and report["seconds_per_step"] > 0
    assert set(report["rewards"]["first"]) == set(rewards.REWARDS)
    assert report["rewards_by_kind"] and set(report["rewards_by_kind"]) <= set(build.asked_kinds(cfg))
    assert (lay.root / report["plot"]).stat().st_size > 0
    # transformers + PEFT on trl 1.x copies the supervised adapter as "ref"; trl 0.19 makes no copy
    held_to = reasoner_rl.KL_STARTING_ADAPTER if version_tuple(report["trl"]) >= (1,) else reasoner_rl.KL_BASE_MODEL
    assert report["backend"] == "transformers" and report["kl_reference"].startswith(held_to)
    # the profile's checkpointing, non-reentrant as the kit asks (Unsloth's GRPOConfig would make it reentrant)
    assert report["gradient_checkpointing"] == {"enabled": True, "use_reentrant": False}
    assert json.loads(lay.rl_report.read_text()) == json.loads(json.dumps(report))
    took = time.perf_counter() - t0
    print(f"\n[rl] priming {primed:.1f} s, 2 GRPO steps + report {took - primed:.1f} s, "
          f"{report['seconds_per_step']:.2f} s/step")
    # resumed for one more step: from the step-2 checkpoint, the reward counts carried over
    more = reasoner_rl.train(config.with_overrides(cfg, {"rl.steps": 3}), recommendation=cpu_recommendation())
    assert more["resumed_from_step"] == 2 and more["steps"] == 3 and [r["step"] for r in more["per_step"]] == [1, 2, 3]
    assert more["completions_scored"] == 3 * cfg.rl.prompts_per_step * cfg.rl.num_generations
    with pytest.raises(ValueError, match="rl.beta"):  # a checkpoint of other settings is never resumed
        reasoner_rl.train(config.with_overrides(cfg, {"rl.beta": 0.0}), recommendation=cpu_recommendation())


# ---------------------------------------------------------------- what the KL term and checkpointing really were
def test_the_kl_reference_is_read_off_the_trained_model_and_says_why_per_backend():
    with_ref = SimpleNamespace(peft_config={"default": None, "ref": None})
    without = SimpleNamespace(peft_config={"default": None})
    assert reasoner_rl.kl_reference(with_ref, 0.04, "transformers").startswith(reasoner_rl.KL_STARTING_ADAPTER)
    # Unsloth (2026.10.9, trl >= 1.4) deletes trl's "ref" copy: the base model, and the report says why
    on_unsloth = reasoner_rl.kl_reference(without, 0.04, "unsloth")
    assert on_unsloth.startswith(reasoner_rl.KL_BASE_MODEL) and "Unsloth removes" in on_unsloth
    plain = reasoner_rl.kl_reference(without, 0.04, "transformers")  # trl 0.19: no copy
    assert plain.startswith(reasoner_rl.KL_BASE_MODEL) and "Unsloth" not in plain and "trl " in plain
    assert reasoner_rl.kl_reference(with_ref, 0.0, "unsloth") == "none (beta 0)"


def test_the_checkpointing_recorded_is_the_built_configs_not_the_one_asked_for():
    """Unsloth's GRPOConfig turns the kit's use_reentrant=False into True once built: the report records the result."""
    asked = {"gradient_checkpointing": True, "gradient_checkpointing_kwargs": {"use_reentrant": False}}
    assert reasoner_rl.checkpointing_applied(SimpleNamespace(**asked)) == {"enabled": True, "use_reentrant": False}
    unsloth_built = {**asked, "gradient_checkpointing_kwargs": {"use_reentrant": True}}
    assert reasoner_rl.checkpointing_applied(SimpleNamespace(**unsloth_built)) == {"enabled": True,
                                                                                  "use_reentrant": True}
    assert reasoner_rl.checkpointing_applied(SimpleNamespace(gradient_checkpointing=False)) == {
        "enabled": False, "use_reentrant": None}


def _fake_unsloth(folder: Path, record: Path) -> Path:
    """A package named unsloth that records, when imported, which of trl/transformers/peft were already imported and
    where Unsloth would write its compiled code, then fails as Unsloth does without its stack (no GPU here)."""
    pkg = folder / "unsloth"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import json, os, sys\n"
        f"seen = {{'before': [m for m in {PATCHED_ON_IMPORT!r} if m in sys.modules],\n"
        "        'compile_location': os.environ.get('UNSLOTH_COMPILE_LOCATION')}\n"
        f"open({str(record)!r}, 'w').write(json.dumps(seen))\n"
        "raise ImportError('a stand-in for unsloth: no GPU here')\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("entry", ["train", "blocker"])
def test_on_unsloth_the_stage_imports_it_before_trl_transformers_and_peft(tmp_path, entry):
    """Unsloth patches trl, transformers and peft when it is imported, so it must come first. A fresh interpreter runs
    the stage (train, or notebook 08's grpo_blocker check before it) on a profile whose backend is Unsloth, with a
    stand-in unsloth that records what was imported before it, as far as the stage goes without a GPU."""
    record = tmp_path / "seen.json"
    fake = _fake_unsloth(tmp_path / "fake", record)
    call = {"train": "reasoner_rl.train(cfg, recommendation=rec)",
            "blocker": "reasoner_rl.grpo_blocker(cfg, rec)"}[entry]
    script = (f"import sys\nsys.path.insert(0, {str(fake)!r})\n"
              "from helpers import config\nfrom helpers.agents.stages import reasoner_rl\n"
              "cfg = config.load_profile('smoke', run='order', overrides={'model.use_unsloth': 'auto', "
              "'model.base': 'Qwen/Qwen2.5-0.5B-Instruct'})\n"  # Unsloth refuses the tiny model (models.settings)
              "rec = {'use_unsloth': {'value': True, 'reason': 'a GPU with Unsloth (stand-in)'}}\n"
              f"try:\n    {call}\nexcept RuntimeError as exc:\n    print(exc)\n")
    env = {**os.environ, "KIT_RUNS_DIR": str(tmp_path / "runs"), "KIT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("UNSLOTH_COMPILE_LOCATION", None)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert "import unsloth failed" in done.stdout, done.stdout + done.stderr
    seen = json.loads(record.read_text(encoding="utf-8"))
    assert seen["before"] == [], f"imported before unsloth: {seen['before']}"
    # and its compiled code goes under the kit's cache, not into the working directory (notebooks/ in a notebook)
    assert seen["compile_location"] == str(tmp_path / "cache" / "unsloth_compiled_cache")


def test_the_memory_estimate_follows_the_profile_and_knows_no_tiny_model():
    cfg = config.load_profile("mi300x")
    est = reasoner_rl.memory_estimate(cfg, dtype="bf16", grad_checkpointing=True, backend="transformers")
    rl = cfg.rl
    assert est["completions"] == rl.prompts_per_step * rl.num_generations
    assert est["seq_len"] == reasoner_rl.PROMPT_TOKENS + rl.max_completion_tokens
    bigger = config.with_overrides(cfg, {"rl.num_generations": 2 * rl.num_generations})
    more = reasoner_rl.memory_estimate(bigger, dtype="bf16", grad_checkpointing=True, backend="transformers")
    assert more["kv_cache_gib"] == pytest.approx(2 * est["kv_cache_gib"], abs=0.01)
    assert more["peak_gib"] > est["peak_gib"]
    with pytest.raises(ValueError, match="unknown model 'tiny'"):
        reasoner_rl.memory_estimate(config.load_profile("smoke"), dtype="fp32", grad_checkpointing=False,
                                    backend="transformers")


def test_the_reward_curves_are_drawn_live_from_the_logged_steps(monkeypatch):
    """In a notebook the stage redraws its own curves (rewards, loss and KL, seconds) as each step is logged."""
    from helpers.train import telemetry
    import IPython.display as disp
    shown = []

    class Handle:
        def update(self, obj):
            shown.append("update")

    monkeypatch.setattr(disp, "display", lambda obj, display_id=False: shown.append("display") or Handle())
    drawn = []

    def draw(rows, title):
        drawn.append(len(rows))
        return reasoner_rl.steps_figure(rows, title)

    live = telemetry.LivePlot(every_s=0.0, enabled=True, draw=draw)
    rows = [{"step": s, "seconds": 1.0, "loss": 0.1, "kl": 0.0, **{f"rewards/{n}/mean": 0.5 for n in rewards.REWARDS}}
            for s in (1, 2)]
    assert live.update(rows[:1]) and live.update(rows)
    assert drawn == [1, 2] and shown == ["display", "update"]
