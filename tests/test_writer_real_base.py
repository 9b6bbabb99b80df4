"""The base SmolLM2-135M as a question writer, in the real-writer test's setting (tests/test_writer_real.py): it stays
under every bar the trained writer must clear, so clearing them is the training's doing. A file of its own, so that
make test's two workers measure the base and train the writer at the same time."""

from __future__ import annotations

import pytest

from helpers import config
from helpers.agents import build
from helpers.agents.stages import writer_train
from helpers.models.members import BASE

from _tiny import cpu_recommendation, one_torch_thread
from test_writer_real import (MAX_NEW_TOKENS, MEASURED, MIN_FILTER_SHARE, MIN_JSON_SHARE, MIN_PROVEN_REPLIES,
                              OVERRIDES)

_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)


@pytest.mark.realmodel
def test_the_base_stays_under_the_bars_the_trained_writer_clears(tmp_path, monkeypatch, record_property):
    """Measured: JSON on 1 of 12 requests, the filter on 0, no proven reply of 96 (the base writes no JSON in the
    generators' words)."""
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    cfg = config.load_profile("cpu", "writer-ci-base", OVERRIDES)
    model, tokenizer, info = build.load_team_model(cfg, [BASE], cpu_recommendation())
    base = writer_train.measure_members(cfg, model, tokenizer, (BASE,), {"max_new_tokens": MAX_NEW_TOKENS})[BASE]
    record_property("measured", {k: base.get(k) for k in MEASURED})
    assert base["replies"] == 12 * 8
    assert base["json_share"] < MIN_JSON_SHARE and base["filter_share"] < MIN_FILTER_SHARE, base
    assert base["proven_replies"] < MIN_PROVEN_REPLIES, base
