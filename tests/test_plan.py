"""The time plan (helpers.train.plan) and the sources' sizes it starts from (helpers.data.sizes): the arithmetic, the
hub table, what it says when a size is unknown, and that every profile's stated time matches its plan."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from helpers import config
from helpers.data import sizes
from helpers.train import plan
from helpers.train.replay import replay_count
from conftest import shared_samples

ROOT = Path(__file__).resolve().parent.parent
PROFILES = config.available_profiles()
TOLERANCE = 0.25  # a profile's stated time may differ from its plan by at most this share


# ---------------------------------------------------------------- the sources' sizes
@pytest.mark.parametrize("spec, rows", [
    ("hub:tau/commonsense_qa@train", 9_741),
    ("hub:commonsense_qa@validation", 1_221),  # an alias
    ("hub:allenai/ai2_arc@train", 1_119),  # the default config: ARC-Challenge
    ("hub:mandarjoshi/trivia_qa:rc.nocontext@train[:13500]", 13_500),
    ("hub:trivia_qa@train[1000:3000]", 2_000),
    ("hub:trivia_qa@train[:10%]", 13_838),
    ("hub:trivia_qa@train[-500:]", 500),
    ("hub:trivia_qa@train[:999999]", 138_384),  # a slice past the end stops at the end, as datasets does
    ("hub:allenai/sciq", 13_679),  # no split: every split
])
def test_a_hub_sources_rows_come_from_the_table_with_where_they_came_from(spec, rows):
    size = sizes.hub_size(spec)
    assert size.rows == rows and "huggingface.co/datasets/" in size.how


@pytest.mark.parametrize("spec, needle", [
    ("hub:tau/commonsense_qa@training", "no split 'training'"),
    ("hub:allenai/ai2_arc:ARC-Nope@train", "no row counts for allenai/ai2_arc config 'ARC-Nope'"),
    ("hub:someone/else@train", "unsupported hub dataset"),
])
def test_an_unknown_hub_size_says_which_and_why(spec, needle):
    size = sizes.hub_size(spec)
    assert size.rows is None and size.how.startswith("unknown:") and needle in size.how


def test_a_local_source_is_counted_by_the_builds_readers_and_a_missing_one_says_so(tmp_path):
    path = tmp_path / "mine.jsonl"
    rows = [{"id": str(i), "question": f"Q{i}?", "choices": ["a", "b", "c", "d"], "answer": i % 4} for i in range(7)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert sizes.source_size(str(path)).rows == 7
    bundled = sizes.source_size(str(ROOT / "data" / "general_mcq.jsonl"))
    assert bundled.rows == sum(1 for line in (ROOT / "data" / "general_mcq.jsonl").open() if line.strip())
    missing = sizes.source_size(str(tmp_path / "nope.jsonl"))
    assert missing.rows is None and missing.how.startswith("unknown:") and "nope.jsonl" in missing.how


# ---------------------------------------------------------------- the arithmetic
def test_each_chunk_replays_the_schedules_share_capped_by_the_reservoir():
    cfg = config.load_profile("mi300x")  # 10 chunks, replay 10% -> 20%, reservoir 500, batch 4 x 4
    chunks = plan.chunk_steps(cfg, [4_500] * 10)
    assert chunks[0]["replayed"] == 0  # nothing to replay yet
    assert [c["replayed"] for c in chunks[1:]] == [500] * 9  # 4,500 x 11% / 89% = 556 wanted, the reservoir holds 500
    small = config.with_overrides(cfg, {"curriculum.replay_capacity": 100_000})
    wanted = [replay_count(4_500, r) for r in plan.replay_schedule(10, 0.10, 0.20)]
    assert [c["replayed"] for c in plan.chunk_steps(small, [4_500] * 10)][1:] == wanted[1:]
    assert chunks[1]["steps"] == math.ceil(math.ceil(5_000 / 4) / 4) == 313


def test_fractional_epochs_and_the_hours_per_method():
    cfg = config.with_overrides(config.load_profile("cpu"), {"train.epochs_per_chunk": 0.5})
    p = plan.from_chunks(cfg, [100, 100])  # batch 8 x 1: 13 steps an epoch of 100 (+ replay in chunk 1)
    assert p["chunks"][0]["steps"] == math.ceil(0.5 * 13) == 7
    assert p["steps"] == sum(c["steps"] for c in p["chunks"])
    lora = p["steps"] * cfg.train.step_seconds / 3600
    assert p["hours"]["model1_lora"] == pytest.approx(lora, abs=1e-3)
    assert p["hours"]["model3_dora"] == pytest.approx(lora * plan.METHOD_COST["dora"], abs=1e-3)


def test_the_plan_from_sources_splits_as_the_build_does():
    cfg = config.load_profile("tournament")  # the bundled questions + 12,000 puzzles, 5% held out, 6 chunks
    p = plan.from_sources(cfg)
    bundled = p["sources"][0]["rows"]
    assert p["examples"] == bundled + 12_000 and p["val"] == round(p["examples"] * 0.05)
    assert p["train"] == p["examples"] - p["val"] and len(p["chunks"]) == 6 and not p["unknown"]


def test_no_examples_to_fill_the_chunks_is_a_line_not_a_crash():
    cfg = config.with_overrides(config.load_profile("mi300x"), {"data.sources": ["hub:sciq@nosuch"], "data.puzzles": 0})
    p = plan.from_sources(cfg)
    assert p["chunks"] == [] and p["steps"] == 0 and p["unknown"] == ["hub:sciq@nosuch"]
    text = "\n".join(plan.describe(p))
    assert "no size for hub:sciq@nosuch" in text
    assert "no steps: 0 training examples cannot fill curriculum.chunks=10" in text


def test_an_unknown_size_is_named_and_the_plan_says_at_least():
    cfg = config.with_overrides(config.load_profile("mi300x"),
                                {"data.sources": ["hub:sciq@train", "hub:sciq@nosuch", "data/missing.jsonl"]})
    p = plan.from_sources(cfg)
    assert p["unknown"] == ["hub:sciq@nosuch", "data/missing.jsonl"] and p["examples"] == 11_679 + 5_000
    text = "\n".join(plan.describe(p))
    assert "no size for hub:sciq@nosuch: unknown:" in text and "no size for data/missing.jsonl: unknown:" in text
    assert "examples: at least" in text and "model1_lora at least" in text


# ---------------------------------------------------------------- what each profile and the README say
HOURS = re.compile(r"(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?\s*(h|min) an adapter")


def _stated(text: str, where: str) -> tuple[float, float]:
    """(low, high) hours of the first 'X[-Y] h|min an adapter' in `text`."""
    match = HOURS.search(text)
    assert match, f"{where} states no 'X h an adapter' (or 'X-Y min an adapter')"
    low, high, unit = float(match[1]), float(match[2] or match[1]), match[3]
    scale = 1 / 60 if unit == "min" else 1
    return low * scale, high * scale


def _profile_statement(profile: str) -> str:
    """The profile file's '# Time plan ...' comment, with the comment lines that continue it."""
    blocks = re.findall(r"^# Time plan.*(?:\n#.*)*", (config.CONFIG_DIR / f"{profile}.yaml").read_text(), re.M)
    assert len(blocks) == 1, f"configs/{profile}.yaml: expected one '# Time plan ...' comment, found {len(blocks)}"
    return blocks[0]


def _readme_statement(profile: str) -> str:
    """The README's profile-table row of `profile`."""
    rows = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith(f"| `{profile}` |")]
    assert len(rows) == 1, f"README.md: expected one profile-table row for {profile}"
    return rows[0].split("|")[-2]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", ["profile", "README"])
def test_every_profiles_stated_time_is_its_plan(profile, where):
    cfg = config.load_profile(profile)
    if any("../shared" in s for s in cfg.data.sources):
        shared_samples()  # cpu counts ../shared/upstream-samples: required in CI, a skip with the reason elsewhere
    p = plan.from_sources(cfg)
    assert not p["unknown"], f"{profile}: sizes unknown for {p['unknown']}"
    low, high = min(p["hours"].values()), max(p["hours"].values())
    text = _profile_statement(profile) if where == "profile" else _readme_statement(profile)
    said_low, said_high = _stated(text, f"{where} of {profile}")
    for said, planned in ((said_low, low), (said_high, high)):
        assert abs(said - planned) <= TOLERANCE * planned, (
            f"{where} of {profile} says {said_low:.2f}-{said_high:.2f} h an adapter, the plan {low:.2f}-{high:.2f} h "
            f"({p['steps']:,} steps at {cfg.train.step_seconds:g} s): {text.strip()}")


def test_the_stated_time_check_can_fail():
    assert _stated("| ~10-15 h an adapter |", "x") == (10, 15)
    assert _stated("about 90 min an adapter", "x") == (1.5, 1.5)
    with pytest.raises(AssertionError, match="states no"):
        _stated("3.5 hours per adapter", "x")
