"""The question writer on the real SmolLM2-135M (CI tier, a few minutes): trained by the kit's own stage, it clears
the bars the base model stays under (tests/test_writer_real_base.py, run beside it on the other core), measured by
the kit's own measurement (docs/results.md, "The question writer")."""

from __future__ import annotations

import pytest

from helpers import config
from helpers.agents import build
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
             "agents.edition": "tests/fixtures/editions/unhurried-questions.yaml", "train.cpu_threads": 1, "train.logging_steps": 5}
MAX_NEW_TOKENS = 120
# What the trained writer must reach, with the chance that a sound writer fails it (from the rates measured above).
# json_share and filter_share are shares of the 12 requests (a request counts when one of its 8 replies got there);
# a request gets there at least as often as a single reply does, so the worst case is 8 replies that always agree
# (a request = one reply): JSON at 23/24 a reply (24/24 measured): P(8 or fewer of 12) = 0.1%; the filter at 20/24:
# P(5 or fewer of 12) = 0.13%. Proven replies at 8/160 = 5% a reply (6/96 and 2/64 pooled): P(none of 96) =
# 0.95^96 = 0.7% (4.7% at the lower 2/64); 2 or more would fail a sound writer 4.4% of the time at 5%, so a proven
# share this sample can require is one reply in 96, beside the format shares (a writer with one lucky reply and
# broken JSON fails them).
# A run of this test (transformers 5.23, 2 shared cores, 16 min): JSON 12/12 requests, filter 12/12, proven 6/96
# replies (on 5 of 12 requests); the base 1/12, 0/12 and 0/96.
MIN_JSON_SHARE = 0.75     # of the 12 requests
MIN_FILTER_SHARE = 0.5    # of the 12 requests
MIN_PROVEN_REPLIES = 1    # of the 96 replies; ~5 expected
MEASURED = ("json_share", "filter_share", "proven_share", "replies", "proven_replies")


@pytest.mark.realmodel
def test_the_trained_writer_clears_the_bars_the_base_stays_under(tmp_path, monkeypatch, record_property):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("cpu", "writer-ci", OVERRIDES)
    summary = writer_train.train(cfg, recommendation=cpu_recommendation(), progress=False)
    assert summary["complete"] and summary["last_loss"] < summary["first_loss"]
    model, tokenizer, info = build.load_team_model(cfg, [WRITER], cpu_recommendation())
    assert WRITER in info["members"], info
    trained = writer_train.measure_members(cfg, model, tokenizer, (WRITER,), {"max_new_tokens": MAX_NEW_TOKENS})[WRITER]
    record_property("measured", {k: trained.get(k) for k in MEASURED})
    assert trained["replies"] == 12 * 8
    assert trained["json_share"] >= MIN_JSON_SHARE and trained["filter_share"] >= MIN_FILTER_SHARE, trained
    assert trained["proven_replies"] >= MIN_PROVEN_REPLIES, trained
    for question in trained["accepted"]:  # what a proven question looks like: the solver's deduction attached
        assert question["answer"] in "ABCD" and question["explanation"]
