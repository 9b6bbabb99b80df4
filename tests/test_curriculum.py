"""Curriculum helpers: heuristic difficulty, buckets, ordering and chunks, reservoir replay, schedules, outputs."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pytest

from helpers import curriculum as C
from helpers import difficulty as D
from helpers import io
from helpers.config import load_profile, runs_root
from helpers.io import InputError
from helpers.records import RecordError, make_record
from helpers.train import replay as R
from helpers.curriculum import schedule as S


def rec(question="Name the capital city of the country", choices=("Paris", "Rome", "Oslo", "Bern"), source="other",
        i=0, **kw) -> dict:
    """A record with neutral defaults."""
    return make_record(id=f"r{i}", source=source, question=question, choices=list(choices), answer=0, **kw)


# ---------------------------------------------------------------- heuristic

def test_hard_keywords_raise_difficulty():
    base = D.heuristic_score(rec("The area of a circle of radius 3 in square units"))
    for q in ("Calculate the area of a circle of radius 3 in square units",
              "Evaluate the area of a circle of radius 3 in square units",
              "Explain why the area of a circle of radius 3 matters",
              "All of these are areas of a circle of radius 3 EXCEPT"):
        assert D.heuristic_score(rec(q)) > base, q


def test_negated_which_is_hard_not_easy():
    plain = D.heuristic_score(rec("Which of the following is a prime number"))
    negated = D.heuristic_score(rec("Which of the following is NOT a prime number"))
    # Text score: +1.5 for the hard phrase and the easy "which" (-1.0) no longer applies; half-weighted.
    assert negated > plain + 2.0 * (1 - D.PRIOR_WEIGHT)


def test_easy_keywords_lower_difficulty():
    neutral = D.heuristic_score(rec("The river flowing through the old town of Prague"))
    for q in ("What is the river flowing through the old town of Prague",
              "Where does the river flowing through the old town of Prague go",
              "Define the river flowing through the old town of Prague"):
        assert D.heuristic_score(rec(q)) < neutral, q


def test_length_of_question_and_choices_raises_difficulty():
    short = D.heuristic_score(rec("The river flowing through Prague is"))
    long_q = D.heuristic_score(rec("The river flowing through Prague is " + "very " * 60))
    assert long_q - short >= 2.0 * (1 - D.PRIOR_WEIGHT) - 1e-9  # the original team's +2.0 for > 50 words, half-weighted
    long_choices = D.heuristic_score(rec("The river flowing through Prague is",
                                         choices=[f"a long river option number {k} with many words here" for k in "ABCD"]))
    assert long_choices > short


def test_source_prior_table_and_matching():
    q = "The river flowing through the old town of Prague"
    scores = {s: D.heuristic_score(rec(q, source=s)) for s in
              ("mmlu/abstract_algebra", "mmlu/high_school_geography", "triviaqa", "unknown_source")}
    assert scores["mmlu/abstract_algebra"] > scores["mmlu/high_school_geography"] > scores["unknown_source"] > scores["triviaqa"]
    assert D.source_prior("mmlu/abstract_algebra") == 9.0
    assert D.source_prior("mmlu_abstract_algebra") == 9.0            # the original team's spelling
    assert D.source_prior("mmlu", topic="abstract_algebra") == 9.0    # subject carried in the topic
    assert D.source_prior("mmlu/marketing") == 6.5
    assert D.source_prior("ARC-Challenge-Test") == 6.5
    assert D.source_prior("arc/easy") == 4.0
    assert D.source_prior("trivia_qa") == 4.0
    assert D.source_prior("something/else") == D.DEFAULT_PRIOR == 5.0


def test_generated_records_keep_generator_difficulty():
    assert D.heuristic_score(rec(origin="generated", difficulty=8.25)) == 8.25
    assert D.heuristic_score(rec(origin="generated", difficulty=42.0)) == 10.0  # clipped to the scale
    text_based = D.heuristic_score(rec())
    assert D.heuristic_score(rec(origin="generated", difficulty=None)) == text_based
    assert D.heuristic_score(rec(origin="native", difficulty=9.9)) == text_based  # only the generator is trusted


def test_heuristic_stays_on_scale():
    extremes = [rec("x"), rec("Calculate analyze evaluate derive compute EXCEPT " + "1 2 3 " * 80,
                              choices=["w " * 40, "v " * 40], source="mmlu/abstract_algebra")]
    for r in extremes:
        assert 0.0 <= D.heuristic_score(r) <= 10.0


# ---------------------------------------------------------------- buckets on a seeds-like mix

FILLER = ("atom cell river law market energy protein theory court vector field orbit tissue rate price "
          "angle enzyme treaty signal charge layer region policy index carbon motion crystal").split()
# MMLU test counts of the subjects with a hard prior, out of 14,042 test questions.
HARD_SUBJECTS = {"abstract_algebra": 100, "college_mathematics": 100, "formal_logic": 126,
                 "college_physics": 102, "high_school_mathematics": 270}


def _lognormal_words(rng: random.Random, median: float, sigma: float) -> int:
    return max(1, int(round(median * math.exp(rng.gauss(0, sigma)))))


def _question(rng: random.Random, median: float, sigma: float, openers: list[tuple[float, str]]) -> str:
    n, r, acc = _lognormal_words(rng, median, sigma), rng.random(), 0.0
    for p, opener in openers:
        acc += p
        if r < acc:
            return opener + " " + " ".join(rng.choice(FILLER) for _ in range(max(n - len(opener.split()), 1))) + "?"
    return " ".join(rng.choice(FILLER) for _ in range(n)) + "?"


def seeds_like_mix(n: int, seed: int) -> list[dict]:
    """Synthetic records shaped like the original team's 50,000: 37% TriviaQA, 28% MMLU, 19.5% CommonsenseQA, 15.5% other.

    Question lengths are log-normal around the medians measured on the upstream samples (MMLU 16-18 words with
    a long tail, CommonsenseQA 13, SciQ 10); opener rates ("Which of the following", NOT/EXCEPT, Calculate)
    are typical of each dataset.
    """
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = rng.random()
        if r < 0.37:
            src, cw, cs = "triviaqa", 1.5, 0.5
            q = _question(rng, 14, 0.4, [(0.25, "Which"), (0.2, "What is"), (0.15, "Who"), (0.05, "Where"), (0.05, "When")])
        elif r < 0.65:
            t, acc, subj = rng.random() * 14042, 0, f"subject_{rng.randrange(52)}"
            for name, k in HARD_SUBJECTS.items():
                acc += k
                if t < acc:
                    subj = name
                    break
            src, cw, cs = f"mmlu/{subj}", 3.0, 0.9
            q = _question(rng, 18, 0.7, [(0.35, "Which of the following"), (0.03, "Which of the following is NOT"),
                                         (0.02, "All of the following EXCEPT"), (0.04, "Calculate"), (0.08, "What is")])
        elif r < 0.845:
            src, cw, cs = "commonsenseqa", 1.4, 0.4
            q = _question(rng, 13, 0.35, [(0.3, "What"), (0.2, "Where"), (0.05, "What is"), (0.1, "Who")])
        else:
            src, cw, cs = rng.choice(["sciq", "arc/easy", "arc/challenge", "openbookqa"]), 2.5, 0.7
            q = _question(rng, 14, 0.5, [(0.3, "Which"), (0.2, "What is")])
        choices = [" ".join(rng.choice(FILLER) for _ in range(_lognormal_words(rng, cw, cs))) + f" {k}" for k in range(4)]
        out.append(rec(q, choices, source=src, i=i))
    return out


def test_bucket_thresholds():
    assert D.bucket(0.0) == "easy" and D.bucket(D.EASY_BELOW - 0.01) == "easy"
    assert D.bucket(D.EASY_BELOW) == "medium" and D.bucket(D.HARD_FROM - 0.01) == "medium"
    assert D.bucket(D.HARD_FROM) == "hard" and D.bucket(10.0) == "hard"


@pytest.mark.parametrize("seed", [1, 2])
def test_bucket_distribution_matches_the_seeds(seed):
    records = seeds_like_mix(3000, seed)
    counts = Counter(D.bucket(D.heuristic_score(r)) for r in records)
    share = {b: counts[b] / len(records) for b in D.BUCKETS}
    # seeds: 52.6% easy / 42.3% medium / 5.1% hard
    assert abs(share["easy"] - 0.526) < 0.05, share
    assert abs(share["medium"] - 0.423) < 0.05, share
    assert 0.025 < share["hard"] < 0.08, share


# ---------------------------------------------------------------- order and chunk

def test_order_is_monotone_and_annotated():
    records = seeds_like_mix(200, 3)
    before = json.dumps(records)
    out = C.order_and_chunk(records, chunks=7, scorer="heuristic", seed=5)
    assert json.dumps(records) == before  # input untouched
    assert sorted(r["id"] for r in out) == sorted(r["id"] for r in records)
    ds = [r["difficulty"] for r in out]
    assert ds == sorted(ds)
    assert [r["chunk"] for r in out] == sorted(r["chunk"] for r in out)
    for r in out:
        assert r["bucket"] == D.bucket(r["difficulty"]) and isinstance(r["difficulty"], float)
    assert ds[0] < ds[-1]


@pytest.mark.parametrize("n,chunks", [(10, 3), (11, 3), (100, 10), (45002, 10), (5, 5), (7, 1)])
def test_chunk_sizes_near_equal(n, chunks):
    sizes = C.chunk_sizes(n, chunks)
    assert sum(sizes) == n and len(sizes) == chunks and max(sizes) - min(sizes) <= 1
    if n <= 200:
        out = C.order_and_chunk([rec(i=i) for i in range(n)], chunks=chunks, scorer=lambda r: 5.0, seed=0)
        assert sorted(Counter(r["chunk"] for r in out).values()) == sorted(sizes)


def test_ties_follow_a_seeded_shuffle():
    records = [rec(i=i) for i in range(50)]
    ids = lambda out: [r["id"] for r in out]  # noqa: E731
    a = ids(C.order_and_chunk(records, chunks=2, scorer=lambda r: 3.0, seed=11))
    b = ids(C.order_and_chunk(records, chunks=2, scorer=lambda r: 3.0, seed=11))
    c = ids(C.order_and_chunk(records, chunks=2, scorer=lambda r: 3.0, seed=12))
    assert a == b
    assert a != c
    assert a != [r["id"] for r in records]  # not the input order


def test_order_rejects_bad_input():
    with pytest.raises(ValueError, match="cannot fill"):
        C.order_and_chunk([rec()], chunks=2, seed=0)
    with pytest.raises(ValueError):
        C.order_and_chunk([rec()], chunks=0, seed=0)
    with pytest.raises(InputError, match=r"id 'r0'.*difficulty.*not a finite number"):
        C.order_and_chunk([rec()], chunks=1, scorer=lambda r: float("nan"), seed=0)
    with pytest.raises(InputError, match="outside 0..10"):
        C.order_and_chunk([rec()], chunks=1, scorer=lambda r: 12.5, seed=0)


# ---------------------------------------------------------------- scorers

def test_pluggable_scorer_by_name():
    D.register_scorer("test_word_count", lambda r: float(min(len(r["question"].split()), 10)))
    records = [rec("one two three four five six", i=0), rec("one", i=1), rec("one two three", i=2)]
    out = C.order_and_chunk(records, chunks=1, scorer="test_word_count", seed=0)
    assert [r["id"] for r in out] == ["r1", "r2", "r0"]
    assert [r["difficulty"] for r in out] == [1.0, 3.0, 6.0]
    assert D.get_scorer("heuristic") is D.heuristic_score
    assert D.get_scorer("helpers.difficulty:heuristic_score") is D.heuristic_score
    with pytest.raises(KeyError, match="unknown scorer"):
        D.get_scorer("no_such_scorer")
    with pytest.raises(TypeError):
        D.register_scorer("broken", 3)  # type: ignore[arg-type]


def test_letter_prob_scorer_maps_onto_scale():
    scorer = D.letter_prob_scorer(lambda r: r["p"])
    assert scorer({"p": 1.0}) == 0.0 and scorer({"p": 0.25}) == 7.5 and scorer({"p": 0.0}) == 10.0


# ---------------------------------------------------------------- replay buffer

def _inclusion_chi2(buffer_factory, n_items=100, capacity=10, trials=2000) -> float:
    """Chi-square of how often each of n_items ends up in the buffer, against capacity/n_items."""
    counts = [0] * n_items
    for t in range(trials):
        buf = buffer_factory(capacity, t)
        buf.add(range(n_items))
        for x in buf.items:
            counts[x] += 1
    expected = trials * capacity / n_items
    return sum((c - expected) ** 2 / expected for c in counts)


class SeedsBuffer(R.ReplayBuffer):
    """The original team's add_batch: once full, every new item replaces a random slot (not a reservoir)."""

    def add(self, items):
        for item in items:
            if len(self.items) < self.capacity:
                self.items.append(item)
            else:
                self.items[self._rng.randrange(len(self.items))] = item


def test_reservoir_is_uniform():
    # 100 items, capacity 10, 2,000 fixed seeds: each item expected 200 times. The statistic has ~99 degrees
    # of freedom (mean ~90 here, sd ~13); 180 is ~7 sd out, so a correct reservoir never trips it.
    assert _inclusion_chi2(R.ReplayBuffer) < 180
    # The original team's replace-always buffer keeps mostly the last items: far beyond the bound.
    assert _inclusion_chi2(SeedsBuffer) > 1000


def test_buffer_basics():
    buf = R.ReplayBuffer(5, seed=1)
    buf.add([{"id": i} for i in range(3)])
    assert len(buf) == 3 and buf.seen == 3
    buf.add([{"id": i} for i in range(3, 40)])
    assert len(buf) == 5 and buf.seen == 40
    drawn = buf.sample(99, 0)
    assert len(drawn) == 5 and len({d["id"] for d in drawn}) == 5  # capped, without replacement
    drawn[0]["id"] = "edited"
    assert all(item["id"] != "edited" for item in buf.items)  # samples are copies
    assert buf.sample(0, 0) == []
    with pytest.raises(ValueError):
        buf.sample(-1)
    assert len(R.ReplayBuffer(0, seed=1)) == 0


def test_buffer_is_deterministic_per_seed():
    def run(seed):
        buf = R.ReplayBuffer(8, seed)
        buf.add(range(100))
        return buf.items, buf.sample(4)
    assert run(3) == run(3)
    assert run(3) != run(4)


def test_buffer_state_dict_round_trip_reproduces_draws():
    a = R.ReplayBuffer(8, seed=9)
    a.add([{"id": i} for i in range(30)])
    state = json.loads(json.dumps(a.state_dict()))  # must survive JSON
    b = R.ReplayBuffer(1, seed=0)
    b.load_state_dict(state)
    assert b.capacity == 8 and b.seen == 30 and b.items == a.items
    for step in range(3):  # resumed run: same adds, same draws
        more = [{"id": f"{step}-{i}"} for i in range(20)]
        a.add(more)
        b.add(more)
        assert a.sample(5) == b.sample(5)
        assert R.mix_chunk(more, a, 0.2, seed=step) == R.mix_chunk(more, b, 0.2, seed=step)
    with pytest.raises(InputError, match="replay_buffer"):
        b.load_state_dict({"items": []})


# ---------------------------------------------------------------- schedules and mixing

def test_replay_and_lr_schedules():
    ratios = S.replay_schedule(10, 0.10, 0.20)
    assert len(ratios) == 10 and ratios[0] == pytest.approx(0.10) and ratios[-1] == pytest.approx(0.20)
    assert ratios == sorted(ratios)
    assert S.replay_schedule(1, 0.1, 0.2) == [0.1]
    with pytest.raises(ValueError):
        S.replay_schedule(3, 0.1, 1.0)
    with pytest.raises(ValueError):
        S.replay_schedule(0, 0.1, 0.2)
    lrs = S.lr_schedule(10, 2e-5, 1e-5)
    assert lrs[0] == pytest.approx(2e-5) and lrs[-1] == pytest.approx(1e-5) and lrs == sorted(lrs, reverse=True)
    seeds_last = 2e-5 * (1.0 - 9 / 10 * 0.5)  # the original team's formula on chunk 10 of 10
    assert seeds_last == pytest.approx(1.1e-5)


def test_replay_count_means_share_of_the_mix():
    assert R.replay_count(4500, 0.10) == 500  # 500 of 5,000 = 10%
    assert R.replay_count(90, 0.10) == 10
    assert R.replay_count(80, 0.20) == 20
    assert R.replay_count(100, 0.0) == 0
    with pytest.raises(ValueError):
        R.replay_count(10, 1.0)


def test_mix_chunk_exact_counts_and_flags():
    buf = _refill(50, 2)
    chunk = [rec(i=i) for i in range(90)]
    before = json.dumps(chunk)
    mixed = R.mix_chunk(chunk, buf, 0.10, seed=4)
    assert json.dumps(chunk) == before
    replayed = [r for r in mixed if r["replay"]]
    fresh = [r for r in mixed if r["replay"] is False]
    assert len(mixed) == 100 and len(replayed) == 10 and len(replayed) / len(mixed) == 0.10
    assert [r["id"] for r in fresh] == [r["id"] for r in chunk]  # curriculum order kept
    assert mixed == R.mix_chunk(chunk, _refill(50, 2), 0.10, seed=4)  # same buffer state + seed: same mix
    # Capped by what the buffer holds: 20% of 90 wants 22, a 5-item buffer gives 5.
    small = R.ReplayBuffer(5, seed=0)
    small.add([rec(i=2000 + i) for i in range(5)])
    assert sum(r["replay"] for r in R.mix_chunk(chunk, small, 0.20, seed=0)) == 5


def _refill(capacity: int, seed: int) -> R.ReplayBuffer:
    buf = R.ReplayBuffer(capacity, seed)
    buf.add([rec(i=1000 + i) for i in range(50)])
    return buf


def test_mix_chunk_never_replays_its_own_chunk():
    records = C.order_and_chunk([rec(i=i) for i in range(300)], chunks=5, scorer=lambda r: 1.0, seed=0)
    chunks = [[r for r in records if r["chunk"] == c] for c in range(5)]
    buf = R.ReplayBuffer(40, seed=0)
    earlier: set[str] = set()
    for c, ratio in enumerate(S.replay_schedule(5, 0.1, 0.2)):
        mixed = R.mix_chunk(chunks[c], buf, ratio, seed=c)
        own = {r["id"] for r in chunks[c]}
        replayed = {r["id"] for r in mixed if r["replay"]}
        assert not replayed & own
        assert replayed <= earlier
        assert (c == 0) == (not replayed)  # the first chunk has nothing to replay
        earlier |= own
    assert buf.seen == 300 and len(buf) == 40


# ---------------------------------------------------------------- stats, plots, files

def test_curriculum_stats_counts():
    records = C.order_and_chunk(seeds_like_mix(300, 5), chunks=3, seed=1)
    stats = C.curriculum_stats(records)
    assert stats["n"] == 300 and sum(stats["buckets"].values()) == 300
    assert sum(stats["histogram"]["counts"]) == 300 and len(stats["histogram"]["edges"]) == 21
    assert [row["n"] for row in stats["per_chunk"]] == [100, 100, 100]
    for row in stats["per_chunk"]:
        assert sum(row["buckets"].values()) == row["n"] == sum(row["sources"].values())
    means = [row["mean_difficulty"] for row in stats["per_chunk"]]
    assert means == sorted(means)
    assert sum(s["n"] for s in stats["per_source"].values()) == 300
    with pytest.raises(InputError, match="bucket"):
        C.curriculum_stats([rec()])


def test_write_curriculum_writes_stamped_outputs():
    cfg = load_profile("smoke", "curriculum_test")
    records = C.order_and_chunk(seeds_like_mix(120, 6), chunks=cfg.curriculum.chunks, seed=cfg.seed)
    doc = C.write_curriculum(cfg, records)
    out = runs_root() / "curriculum_test" / "curriculum"
    assert io.read_jsonl(out / "train.jsonl") == records
    stats = io.read_json(out / "stats.json")
    assert stats == json.loads(json.dumps(doc))
    assert stats["params"]["curriculum"]["chunks"] == 3 and stats["params"]["seed"] == cfg.seed
    assert stats["versions"]["python"] and stats["created"]
    assert stats["stats"]["n"] == 120
    assert stats["schedule"]["lr"][0] == cfg.train.lr_start and len(stats["schedule"]["replay"]) == 3
    for name in ("difficulty.png", "chunk_mix.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plots_return_figures(tmp_path):
    records = C.order_and_chunk(seeds_like_mix(60, 8), chunks=3, seed=0)
    fig = C.plot_difficulty(records, tmp_path / "d.png")
    fig2 = C.plot_chunk_mix(C.curriculum_stats(records), tmp_path / "m.png")
    assert fig.axes and fig2.axes and (tmp_path / "d.png").stat().st_size > 1000 and (tmp_path / "m.png").stat().st_size > 1000


def test_load_train_errors_are_located(tmp_path):
    with pytest.raises(InputError, match="run notebooks/01_dataset_build.ipynb first"):
        C.load_train(tmp_path / "missing.jsonl")
    path = tmp_path / "train.jsonl"
    good = rec()
    bad = {**rec(i=1), "answer": 7}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"train.jsonl: record line 2: field 'answer'") as err:
        C.load_train(path)
    assert err.value.reason == "answer_out_of_range"
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert C.load_train(path) == [good]
