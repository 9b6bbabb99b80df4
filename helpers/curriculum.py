"""Curriculum: score difficulty (0-10), order easy to hard, cut into chunks, and replay earlier chunks.

Pluggable difficulty. A scorer is any `Callable[[dict], float]` returning 0 (trivial) .. 10 (hardest) for one
record; `bucket()` thresholds assume that scale. The profile names one (`curriculum.scorer`, default
"heuristic"). To swap in a model-based score, register it under a name and select it from the profile:

    from helpers import curriculum
    def base_model_score(rec):                       # e.g. 1 - P(right letter) under the base model,
        return 10.0 * (1.0 - prob_of_answer(rec))    # or the answer-token loss, mapped onto 0..10
    curriculum.register_scorer("base_model", base_model_score)
    # notebook 02: SCORER = "base_model", or OVERRIDES = {"curriculum.scorer": "base_model"}

A profile may also name an importable function directly, "package.module:function", so a headless
`make pipeline` run needs no notebook edit. Scorers are called once per record; a slow model scorer should
batch beforehand and look its scores up by record id.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import math
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

from helpers import io
from helpers.layout import RunLayout
from helpers.io import InputError
from helpers.records import contains_any, validate

Scorer = Callable[[dict], float]
BUCKETS = ("easy", "medium", "hard")

# Thresholds on the 0-10 scale: easy d < 5.3, medium 5.3 <= d < 6.6, hard d >= 6.6. They are the 52.6th and
# 94.9th percentiles (rounded to 0.1) of heuristic_score on a mix shaped like the seeds' 50,000 questions:
# 37% converted open-ended TriviaQA (the seeds' 18,518), 28% MMLU (its test set is 14,042 of 50,000),
# 19.5% CommonsenseQA (train 9,741) and 15.5% SciQ/ARC/OpenBookQA; so that mix splits close to the seeds'
# 52.6% easy / 42.3% medium / 5.1% hard (tests/test_curriculum.py rebuilds it: ~52 / 43 / 5).
# In words: TriviaQA/SciQ-style factoids are easy, ordinary MMLU and CommonsenseQA items medium, and hard
# needs a hard prior (abstract algebra 9.0) or a long, negated or calculating question.
EASY_BELOW = 5.3
HARD_FROM = 6.6

# Source priors, matched as the longest prefix after dropping case and separators ("ARC-Challenge-Test"
# matches "arc/challenge", "mmlu_abstract_algebra" matches "mmlu/abstract_algebra"). The first entries are
# the seeds' table; the math-heavy MMLU subjects sit with abstract algebra because models score nearest
# the 25% chance level on them.
SOURCE_PRIORS: dict[str, float] = {
    "mmlu/abstract_algebra": 9.0, "mmlu/college_mathematics": 8.0, "mmlu/formal_logic": 8.0,
    "mmlu/college_physics": 7.5, "mmlu/high_school_mathematics": 7.5, "mmlu": 6.5,
    "arc/challenge": 6.5, "arc/easy": 4.0, "arc": 5.5, "triviaqa": 4.0, "commonsenseqa": 6.5,
    "openbookqa": 5.5, "sciq": 4.5, "hellaswag": 5.0, "winogrande": 6.0,
}
DEFAULT_PRIOR = 5.0
PRIOR_WEIGHT = 0.5  # blend: half the source prior, half the text features (base 5.0)

# Hard phrases first: "which of the following is NOT" contains the easy word "which" and must not count as easy.
HARD_PATTERNS = [re.compile(p) for p in (
    r"\banaly[sz]e", r"\bsynthesi[sz]e", r"\bevaluate", r"\bcalculate", r"\bcompute", r"\bderive",
    r"\bexplain why", r"\bwhich of the following (?:is|are|was|were|would|does|do|could) not\b",
    r"\bexcept\b", r"\bleast likely\b", r"\bstatement 1\b")]
EASY_PATTERNS = [re.compile(p) for p in (
    r"\bwhat (?:is|are|was|were)\b", r"\bdefine\b", r"\bwhich\b", r"\bwhen\b", r"\bwhere\b", r"\bwho\b")]
_NUMBER = re.compile(r"\d+(?:\.\d+)?")

_SCORERS: dict[str, Scorer] = {}


def _compact(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", text.lower())


_COMPACT_PRIORS = sorted(((_compact(k), v) for k, v in SOURCE_PRIORS.items()), key=lambda kv: -len(kv[0]))


@functools.lru_cache(maxsize=4096)  # a build has tens of sources, scored for every one of 50k+ records
def source_prior(source: str, topic: str = "") -> float:
    """The prior difficulty of a source (longest prefix match; the topic may carry an MMLU subject)."""
    keys = [_compact(source or "")]
    if topic:
        keys.insert(0, keys[0] + _compact(topic))
    for prefix, value in _COMPACT_PRIORS:  # longest prefix first
        if prefix and any(k.startswith(prefix) for k in keys):
            return value
    return DEFAULT_PRIOR

_ANY_HARD = re.compile("|".join(f"(?:{p.pattern})" for p in HARD_PATTERNS))
# Each hard pattern starts with a plain phrase ("analy", "which of the following "); substring tests for those
# phrases rule out most questions faster than the regex scan (a new pattern without one fails here, at import).
_HARD_PHRASES = tuple(re.match(r"\\b([a-z0-9 ]+)", p.pattern)[1] for p in HARD_PATTERNS)
_ANY_EASY = re.compile("|".join(f"(?:{p.pattern})" for p in EASY_PATTERNS))


def text_score(question: str, choices: list[str]) -> float:
    """Difficulty from the text alone (0-10, base 5.0): length, keywords, numbers."""
    score = 5.0
    # Length, continuous so ties stay rare: 15 words (a typical MMLU stem) +0, 50 words +2.0 as in the seeds,
    # capped there; very short factoids down to -0.5.
    words = question.lower().split()  # lower() changes no whitespace: the same words as question.split()
    score += min(max((len(words) - 15) / 17.5, -0.5), 2.0)
    # Long options take reading: one-word options +0, ten-word (sentence) options +1.0, capped there.
    mean_choice = len(" ".join(choices).split()) / max(len(choices), 1)  # words of all choices, one split
    score += min(max((mean_choice - 1) / 9, 0.0), 1.0)
    text = " ".join(words)
    # Cheap tests first: most questions hold no hard phrase, and then no regex runs; else one combined search,
    # and only for the few that match, the eleven patterns one by one.
    hard = 0
    if contains_any(text, _HARD_PHRASES) and _ANY_HARD.search(text):
        hard = sum(1 for p in HARD_PATTERNS if p.search(text))
    if hard:
        score += min(1.5 + 0.5 * (hard - 1), 2.5)
    elif _ANY_EASY.search(text):
        score -= 1.0
    if len(_NUMBER.findall(question)) >= 3:  # three or more numbers usually means arithmetic
        score += 0.5
    return min(max(score, 0.0), 10.0)


def generator_difficulty(rec: dict) -> float | None:
    """The puzzle generator's own difficulty (origin "generated" with a number), clipped to 0-10, else None."""
    value = rec.get("difficulty")
    if rec.get("origin") != "generated" or value is None or isinstance(value, bool):
        return None
    return min(max(float(value), 0.0), 10.0)


def heuristic_score(rec: dict) -> float:
    """The seeds' heuristic: source prior blended with text features; generated puzzles keep their own."""
    own = generator_difficulty(rec)
    if own is not None:
        return own
    prior = source_prior(rec.get("source", ""), rec.get("topic", ""))
    return round(PRIOR_WEIGHT * prior + (1 - PRIOR_WEIGHT) * text_score(rec["question"], rec["choices"]), 4)


def letter_prob_scorer(prob_of_answer: Callable[[dict], float]) -> Scorer:
    """Wrap a function giving P(right letter) into a 0-10 scorer: 10 * (1 - p)."""
    return lambda rec: 10.0 * (1.0 - float(prob_of_answer(rec)))


def register_scorer(name: str, fn: Scorer) -> None:
    """Make a scorer selectable by name (profile key curriculum.scorer)."""
    if not callable(fn):
        raise TypeError(f"scorer '{name}' is not callable")
    _SCORERS[name] = fn


def get_scorer(name: str | Scorer) -> Scorer:
    """A registered scorer by name, an importable "module:function", or a callable passed through."""
    if callable(name):
        return name
    if name in _SCORERS:
        return _SCORERS[name]
    if isinstance(name, str) and ":" in name:
        module, _, attr = name.partition(":")
        fn = getattr(importlib.import_module(module), attr, None)
        if callable(fn):
            return fn
    raise KeyError(f"unknown scorer {name!r} (registered: {', '.join(sorted(_SCORERS))}; "
                   "or give 'package.module:function')")


register_scorer("heuristic", heuristic_score)


def bucket(d: float, easy_below: float = EASY_BELOW, hard_from: float = HARD_FROM) -> str:
    """'easy' below 5.3, 'hard' from 6.6, else 'medium' (see EASY_BELOW / HARD_FROM for why)."""
    return "easy" if d < easy_below else "hard" if d >= hard_from else "medium"


def chunk_sizes(n: int, chunks: int) -> list[int]:
    """Near-equal chunk sizes (the first n % chunks get one more)."""
    q, r = divmod(n, chunks)
    return [q + 1 if i < r else q for i in range(chunks)]


def _checked_score(d: Any, i: int, rec: dict) -> float:
    """A scorer's value as a float in 0..10, or a located InputError saying what is wrong with it."""
    if isinstance(d, bool) or not isinstance(d, (int, float)) or not math.isfinite(d):
        raise InputError(None, f"{i} (id {rec.get('id')!r})", "difficulty", f"scorer returned {d!r}, not a finite number")
    if not 0.0 <= d <= 10.0:
        raise InputError(None, f"{i} (id {rec.get('id')!r})", "difficulty",
                         f"scorer returned {d}, outside 0..10 (map model scores onto 0..10, e.g. 10 * (1 - p))")
    return float(d)


def order_and_chunk(records: list[dict], *, chunks: int, scorer: Scorer | str = "heuristic", seed: int,
                    progress: bool = False) -> list[dict]:
    """Copies of the records, easy to hard (ties in seeded-shuffle order), with difficulty, bucket and chunk."""
    if chunks < 1:
        raise ValueError(f"chunks must be at least 1, got {chunks}")
    if len(records) < chunks:
        raise ValueError(f"{len(records)} records cannot fill {chunks} chunks: lower curriculum.chunks")
    fn = get_scorer(scorer)
    items: Iterable[dict] = records
    if progress:
        from tqdm.auto import tqdm
        items = tqdm(records, desc="scoring", unit="q")
    # One new dict and list per record (see gc_paused); a model-based scorer keeps the collector on (its tensors).
    with io.gc_paused() if fn is heuristic_score else contextlib.nullcontext():
        scored = []
        for i, rec in enumerate(items):
            d = fn(rec)
            if type(d) is not float or not 0.0 <= d <= 10.0:  # a float in range (the usual) needs no more checks
                d = _checked_score(d, i, rec)
            scored.append(d)
        order = list(range(len(records)))
        random.Random(seed).shuffle(order)  # ties follow this shuffle, never the input order
        order.sort(key=scored.__getitem__)  # stable sort keeps the shuffled order within a tie
        out, pos = [], 0
        for c, size in enumerate(chunk_sizes(len(records), chunks)):
            for i in order[pos:pos + size]:
                rec, d = records[i], scored[i]  # shallow copy, 10x cheaper than deepcopy; choices copied too
                out.append({**rec, "choices": list(rec["choices"]), "difficulty": d, "bucket": bucket(d), "chunk": c})
            pos += size
    return out


class ReplayBuffer:
    """Reservoir sample (Algorithm R) of everything added: each item seen is kept with probability capacity/seen."""

    def __init__(self, capacity: int, seed: int):
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        self.capacity, self.seed, self.seen = capacity, seed, 0
        self.items: list[Any] = []
        self._rng = random.Random(seed)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, items: Iterable[Any]) -> None:
        """Offer items to the reservoir (copied, so later edits by the caller do not leak in)."""
        for item in items:
            self.seen += 1
            if len(self.items) < self.capacity:
                self.items.append(copy.deepcopy(item))
            else:
                # The seeds replaced a random slot on every add once full, which keeps mostly the last chunk;
                # Algorithm R keeps item n with probability capacity/n, uniform over all chunks seen.
                j = self._rng.randrange(self.seen)
                if j < self.capacity:
                    self.items[j] = copy.deepcopy(item)

    def sample(self, k: int, rng: random.Random | int | None = None) -> list:
        """k items without replacement (k capped at len); rng: a Random, a seed, or None for the buffer's own."""
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        r = self._rng if rng is None else rng if isinstance(rng, random.Random) else random.Random(rng)
        return [copy.deepcopy(self.items[i]) for i in r.sample(range(len(self.items)), min(k, len(self.items)))]

    def state_dict(self) -> dict:
        """JSON-able state: a resumed run restores it and draws exactly the same replays."""
        version, internal, gauss = self._rng.getstate()
        return {"capacity": self.capacity, "seed": self.seed, "seen": self.seen, "items": copy.deepcopy(self.items),
                "rng": [version, list(internal), gauss]}

    def load_state_dict(self, state: dict) -> None:
        """Restore from state_dict() output (also after a JSON round trip)."""
        try:
            version, internal, gauss = state["rng"]
            self.capacity, self.seed, self.seen = int(state["capacity"]), int(state["seed"]), int(state["seen"])
            self.items = copy.deepcopy(list(state["items"]))
            self._rng.setstate((version, tuple(internal), gauss))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(None, None, "replay_buffer", f"not a ReplayBuffer state ({exc!r})") from None


def _linear(n_chunks: int, start: float, end: float) -> list[float]:
    if n_chunks < 1:
        raise ValueError(f"n_chunks must be at least 1, got {n_chunks}")
    if n_chunks == 1:
        return [float(start)]
    return [start + (end - start) * i / (n_chunks - 1) for i in range(n_chunks)]


def replay_schedule(n_chunks: int, start: float, end: float) -> list[float]:
    """Replay share per chunk, linear from start (first chunk) to end (last); the seeds: 0.10 -> 0.20."""
    ratios = _linear(n_chunks, start, end)
    if any(not 0.0 <= r < 1.0 for r in ratios):
        raise ValueError(f"replay ratios must be in [0, 1), got start={start}, end={end}")
    return ratios


def lr_schedule(n_chunks: int, start: float, end: float) -> list[float]:
    """Learning rate per chunk, linear from start (first chunk) to end (last chunk).

    The seeds wrote lr = 2e-5 * (1 - chunk_idx / n_chunks * 0.5), which over 10 chunks ends at 1.1e-5 on the
    last chunk, never the 1e-5 they described; this schedule reaches `end` exactly.
    """
    return _linear(n_chunks, start, end)


def replay_count(n_fresh: int, ratio: float) -> int:
    """Replayed records wanted so they make `ratio` of the mixed chunk: round(ratio * n / (1 - ratio))."""
    if not 0.0 <= ratio < 1.0:
        raise ValueError(f"replay ratio must be in [0, 1), got {ratio}")
    return int(round(ratio * n_fresh / (1.0 - ratio)))


def mix_chunk(chunk_records: list[dict], buffer: ReplayBuffer, ratio: float, seed: int) -> list[dict]:
    """The chunk plus replayed records making `ratio` of the result, then the chunk goes into the buffer.

    "10% replay" means 10% of the mixed chunk comes from the buffer: 4,500 fresh + 500 replayed. The count is
    replay_count(), capped by what the buffer holds (sampling is without replacement). Replayed copies get
    "replay": true and fresh ones "replay": false; replayed records sit at seeded random positions, the fresh
    ones keep their curriculum order. The chunk is added to the buffer only after mixing, so it never
    replays itself.
    """
    rng = random.Random(seed)
    replayed = buffer.sample(replay_count(len(chunk_records), ratio), rng)
    for rec in replayed:
        rec["replay"] = True
    total = len(chunk_records) + len(replayed)
    slots = set(rng.sample(range(total), len(replayed)))
    fresh, again = iter(chunk_records), iter(replayed)
    out = []
    for pos in range(total):
        out.append(next(again) if pos in slots else {**copy.deepcopy(next(fresh)), "replay": False})
    buffer.add(chunk_records)
    return out


def _field(rec: dict, i: int, name: str) -> Any:
    if name not in rec:
        raise InputError(None, f"{i} (id {rec.get('id')!r})", name, "missing: run order_and_chunk() first")
    return rec[name]


def curriculum_stats(records: list[dict], bins: int = 20) -> dict:
    """Counts per bucket, chunk x bucket, chunk x source and source; difficulty histogram; mean per chunk."""
    n = len(records)
    by_bucket = Counter(_field(r, i, "bucket") for i, r in enumerate(records))
    per_chunk: dict[int, dict] = {}
    per_source: dict[str, dict] = {}
    hist = [0] * bins
    for i, rec in enumerate(records):
        d, b, c = float(_field(rec, i, "difficulty")), rec["bucket"], int(_field(rec, i, "chunk"))
        src = str(rec.get("source") or "unknown")
        hist[min(max(int(d / 10.0 * bins), 0), bins - 1)] += 1
        row = per_chunk.setdefault(c, {"chunk": c, "n": 0, "buckets": dict.fromkeys(BUCKETS, 0), "sources": {},
                                       "replayed": 0, "_sum": 0.0, "min": d, "max": d})
        row["n"] += 1
        row["buckets"][b] = row["buckets"].get(b, 0) + 1
        row["sources"][src] = row["sources"].get(src, 0) + 1
        row["replayed"] += bool(rec.get("replay"))
        row["_sum"] += d
        row["min"], row["max"] = min(row["min"], d), max(row["max"], d)
        s = per_source.setdefault(src, {"n": 0, "buckets": dict.fromkeys(BUCKETS, 0), "_sum": 0.0})
        s["n"] += 1
        s["buckets"][b] = s["buckets"].get(b, 0) + 1
        s["_sum"] += d
    for row in list(per_chunk.values()) + list(per_source.values()):
        row["mean_difficulty"] = round(row.pop("_sum") / row["n"], 4)
    return {
        "n": n,
        "thresholds": {"easy_below": EASY_BELOW, "hard_from": HARD_FROM},
        "buckets": {b: by_bucket.get(b, 0) for b in BUCKETS},
        "bucket_share": {b: round(by_bucket.get(b, 0) / n, 4) if n else 0.0 for b in BUCKETS},
        "per_chunk": [per_chunk[c] for c in sorted(per_chunk)],
        "per_source": dict(sorted(per_source.items(), key=lambda kv: -kv[1]["n"])),
        "histogram": {"edges": [round(10.0 * i / bins, 4) for i in range(bins + 1)], "counts": hist},
        "mean_difficulty": round(sum(float(r["difficulty"]) for r in records) / n, 4) if n else None,
    }


_COLORS = {"easy": "#4caf50", "medium": "#ff9800", "hard": "#e53935"}


def plot_difficulty(records: list[dict], path: str | Path):
    """Histogram of difficulty stacked by bucket, threshold lines; saves a PNG and returns the figure."""
    from matplotlib.figure import Figure  # no pyplot: works headless (Agg) and leaks no global figures
    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.subplots()
    edges = [i / 10 for i in range(101)]  # 0.1-wide bins: both thresholds (5.3, 6.6) fall on an edge
    data = [[float(r["difficulty"]) for r in records if r["bucket"] == b] for b in BUCKETS]
    ax.hist(data, bins=edges, stacked=True, color=[_COLORS[b] for b in BUCKETS],
            label=[f"{b} ({len(x)}, {len(x) / max(len(records), 1):.1%})" for b, x in zip(BUCKETS, data)])
    for x in (EASY_BELOW, HARD_FROM):
        ax.axvline(x, color="black", linestyle="--", linewidth=1)
    ax.set(xlabel="difficulty (0 = trivial, 10 = hardest)", ylabel="records", xlim=(0, 10),
           title=f"Difficulty of {len(records)} records (seeds: 52.6% easy / 42.3% medium / 5.1% hard)")
    ax.legend()
    fig.savefig(path, dpi=110)
    return fig


def _family(source: str) -> str:
    return re.split(r"[/:]", source, maxsplit=1)[0] or "unknown"


def plot_chunk_mix(stats: dict, path: str | Path, max_sources: int = 8):
    """Stacked bars per chunk, by bucket (with mean difficulty) and by source family; saves a PNG."""
    from matplotlib.figure import Figure
    rows = stats["per_chunk"]
    xs = [r["chunk"] for r in rows]
    fig = Figure(figsize=(12, 4.2), layout="constrained")
    ax_b, ax_s = fig.subplots(1, 2)
    bottom = [0] * len(rows)
    for b in BUCKETS:
        h = [r["buckets"].get(b, 0) for r in rows]
        ax_b.bar(xs, h, bottom=bottom, color=_COLORS[b], label=b)
        bottom = [x + y for x, y in zip(bottom, h)]
    ax_m = ax_b.twinx()
    ax_m.plot(xs, [r["mean_difficulty"] for r in rows], "ko-")
    ax_m.set(ylim=(0, 10), ylabel="mean difficulty (black line)")
    top_n = max([r["n"] for r in rows] + [1])
    ax_b.set(xlabel="chunk", ylabel="records", title="Per chunk, by bucket", xticks=xs, ylim=(0, top_n * 1.3))
    ax_b.legend(loc="upper left", ncols=3, fontsize="small")
    fams: Counter = Counter()
    per = []
    for r in rows:
        c = Counter()
        for src, k in r["sources"].items():
            c[_family(src)] += k
        per.append(c)
        fams.update(c)
    top = [f for f, _ in fams.most_common(max_sources)]
    groups = top + (["other"] if len(fams) > len(top) else [])
    bottom = [0] * len(rows)
    for f in groups:
        h = [sum(k for g, k in c.items() if g not in top) if f == "other" else c.get(f, 0) for c in per]
        ax_s.bar(xs, h, bottom=bottom, label=f)
        bottom = [x + y for x, y in zip(bottom, h)]
    ax_s.set(xlabel="chunk", ylabel="records", title="Per chunk, by source", xticks=xs, ylim=(0, top_n * 1.3))
    ax_s.legend(loc="upper left", ncols=3, fontsize="small")
    fig.savefig(path, dpi=110)
    return fig


def load_train(path: str | Path) -> list[dict]:
    """Read data/train.jsonl from notebook 01, every line validated (a bad one names file, line and field)."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "not found: run notebooks/01_dataset_build.ipynb first (same PROFILE and RUN)")
    out = []
    for lineno, obj in io.iter_jsonl(path):
        out.append(validate(obj, path, f"line {lineno}"))  # a RecordError names file, line and field
    if not out:
        raise InputError(path, None, None, "has no records: notebook 01 kept nothing (see data/report.json)")
    return out


def write_curriculum(cfg: dict, records: list[dict]) -> dict:
    """Write curriculum/train.jsonl, stats.json (stamped) and the two PNGs under runs/<run>/; return stats.json."""
    lay = RunLayout.of(cfg)
    lay.made(lay.curriculum_dir)
    stats = curriculum_stats(records)  # also checks every record has difficulty, bucket and chunk
    n_chunks = len(stats["per_chunk"])
    train = cfg.get("train", {})
    io.write_jsonl(lay.curriculum, records)
    plot_difficulty(records, lay.difficulty_plot)
    plot_chunk_mix(stats, lay.chunk_mix_plot)
    params = {"profile": cfg.get("profile"), "run": cfg.get("run"), "seed": cfg.get("seed"),
              "curriculum": cfg.get("curriculum", {}),
              "train": {k: train.get(k) for k in ("lr_start", "lr_end", "replay_start", "replay_end")}}
    doc = {
        **io.stamp(params),
        "files": {"train": lay.rel(lay.curriculum), "difficulty_plot": lay.rel(lay.difficulty_plot),
                  "chunk_mix_plot": lay.rel(lay.chunk_mix_plot)},
        "schedule": {
            "lr": lr_schedule(n_chunks, train["lr_start"], train["lr_end"]) if "lr_start" in train else None,
            "replay": replay_schedule(n_chunks, train["replay_start"], train["replay_end"])
            if "replay_start" in train else None},
        "stats": stats,
    }
    io.write_json(lay.curriculum_stats, doc)
    return doc
