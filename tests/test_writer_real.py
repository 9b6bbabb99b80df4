"""The question writer on the real SmolLM2-135M (CI tier, a few minutes): trained by the kit's own stage, it beats the
base model on proven questions, measured by the kit's own measurement (docs/results.md, "The question writer")."""

from __future__ import annotations

import pytest

from helpers import config
from helpers.agents.stages import writer_train
from helpers.config import WRITER

from _tiny import cpu_recommendation, one_torch_thread

_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)

# The setting where the 135M writer proves questions at all: level-1 pointing puzzles ('Introducing Fred, Carol said,
# "He is my mother's husband." How is Fred related to Carol?'), 240 chats (30 steps). Measured at one reply per
# request: every reply JSON, 20/24 pass the filter, 11/24 read back and solve with the answer among the choices, and
# 2/24 carry the right key (the model puts the requested letter on a choice without working out which is right);
# with 8 replies sampled together, 6 of 96 and 2 of 64 replies were proven. 12 requests x 8 replies (96) at ~5% a
# reply prove none with probability under 1% (at 3%, 5%). The base writes no proven question (no JSON in the
# generators' words). The budget is lifted and replies capped at 120 tokens (a pointing question's JSON is ~80):
# this tier checks what the writer writes, not how fast (docs/results.md's measurement is on the real budget).
OVERRIDES = {"agents.puzzle_kinds": ["family_pointing"], "writer.levels": [1], "writer.examples": 240,
             "writer.lr": 1.0e-3, "writer.measure": 12, "agents.writer_candidates": 8,
             "agents.question_time_limit_s": 600.0, "train.cpu_threads": 1, "train.logging_steps": 5}
MAX_NEW_TOKENS = 120


@pytest.mark.realmodel
def test_the_trained_writer_beats_the_base_on_proven_questions(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("cpu", "writer-ci", OVERRIDES)
    summary = writer_train.train(cfg, recommendation=cpu_recommendation(), progress=False)
    assert summary["complete"] and summary["last_loss"] < summary["first_loss"]
    report = writer_train.measure_run(cfg, recommendation=cpu_recommendation(), gen={"max_new_tokens": MAX_NEW_TOKENS})
    base, trained = report["base"], report[WRITER]
    assert trained["replies"] == base["replies"] == 12 * 8
    assert trained["json_share"] > base["json_share"] and trained["filter_share"] > base["filter_share"]
    assert trained["proven_replies"] > base["proven_replies"], (base, trained)
    for question in trained["accepted"]:  # what a proven question looks like: the solver's deduction attached
        assert question["answer"] in "ABCD" and question["explanation"]
