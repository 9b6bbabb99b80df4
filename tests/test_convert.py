"""Open-ended -> multiple choice: type-aware distractors, never the answer, deterministic, fast."""

from __future__ import annotations

import datetime as dt
import random
import re
import time
from collections import Counter

import pytest

from helpers.data import convert
from helpers.data.convert import build_pool, classify, convert_item, convert_open_ended
from helpers.records import normalize_text, validate

PEOPLE = ["Jane Austen", "Charles Darwin", "George Orwell", "Neil Armstrong", "Marie Curie", "Isaac Newton",
          "Ada Lovelace", "Alan Turing", "Rosalind Franklin", "Johannes Kepler", "Florence Nightingale",
          "Nikola Tesla", "Emily Bronte", "Oscar Wilde"]
PHRASES = ["diamond", "honey", "skin", "avocado", "ice", "copper", "granite", "oxygen", "silk", "amber"]


def item(i, question, answer, aliases=(), source="trivia"):
    return {"id": f"q{i}", "source": source, "question": question, "answer_text": answer, "aliases": list(aliases),
            "topic": "", "explanation": ""}


def people_items():
    return [item(i, f"Who is famous person number {i}?", name) for i, name in enumerate(PEOPLE)]


def phrase_items():
    return [item(100 + i, f"What is thing number {i}?", w) for i, w in enumerate(PHRASES)]


def distractors(rec):
    return [c for i, c in enumerate(rec["choices"]) if i != rec["answer"]]


def convert_one(it, others=(), seed=7):
    pool = build_pool([it, *others])
    rec = convert_item(it, pool, seed=seed)
    validate(rec)
    assert rec["origin"] == "converted" and rec["choices"][rec["answer"]] == it["answer_text"]
    return rec


@pytest.mark.parametrize("answer,question,kind", [
    ("12", "How many?", "number"), ("3.14", "", "number"), ("$1,500", "", "number"), ("25%", "", "number"),
    ("1969", "In what year?", "year"), ("1960s", "", "year"), ("500 BC", "", "year"),
    ("1500", "How many men?", "number"),
    ("July 20, 1969", "", "date"), ("20 July 1969", "", "date"), ("1969-07-20", "", "date"), ("07/20/1969", "", "date"),
    ("March 1969", "", "date"), ("Charles Darwin", "Who wrote On the Origin of Species?", "person"),
    ("Sir Isaac Newton", "", "person"), ("France", "", "place"), ("Stratford upon Avon", "Where was he born?", "place"),
    ("photosynthesis", "What process?", "phrase"), ("Sunset Boulevard", "Which musical?", "phrase"), ("", "", ""),
])
def test_classify(answer, question, kind):
    assert classify(answer, question) == kind


@pytest.mark.parametrize("seed", range(20))
def test_integers_near_and_same_magnitude(seed):
    rec = convert_one(item(1, "How many players are in a team?", "12"), seed=seed)
    values = [int(d) for d in distractors(rec)]
    assert all(d != 12 and 1 <= d <= 30 and str(d).isdigit() for d in values), values


@pytest.mark.parametrize("seed", range(20))
def test_decimals_keep_their_decimals_and_units(seed):
    rec = convert_one(item(1, "What is pi to two places?", "3.14"), seed=seed)
    assert all(re.fullmatch(r"\d\.\d\d", d) and abs(float(d) - 3.14) < 1.5 for d in distractors(rec))
    rec = convert_one(item(2, "What did it cost?", "$1,500"), seed=seed)
    assert all(re.fullmatch(r"\$\d,\d00", d) for d in distractors(rec)), rec["choices"]
    rec = convert_one(item(3, "How far is it?", "12 km"), seed=seed)
    assert all(d.endswith(" km") and d != "12 km" for d in distractors(rec))


@pytest.mark.parametrize("seed", range(20))
def test_years_near(seed):
    rec = convert_one(item(1, "In what year did man land on the Moon?", "1969"), seed=seed)
    years = [int(d) for d in distractors(rec)]
    assert all(1959 <= y <= 1979 and y != 1969 and len(str(y)) == 4 for y in years), years


DATE_FORMATS = [
    ("July 20, 1969", r"[A-Z][a-z]+ \d{1,2}, \d{4}", "%B %d, %Y"),
    ("20 July 1969", r"\d{1,2} [A-Z][a-z]+ \d{4}", "%d %B %Y"),
    ("1969-07-20", r"\d{4}-\d\d-\d\d", "%Y-%m-%d"),
    ("07/20/1969", r"\d\d/\d\d/\d{4}", "%m/%d/%Y"),
    ("20.07.1969", r"\d\d\.\d\d\.\d{4}", "%d.%m.%Y"),
]


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("answer,pattern,fmt", DATE_FORMATS, ids=[d[0] for d in DATE_FORMATS])
def test_dates_near_and_same_format(answer, pattern, fmt, seed):
    rec = convert_one(item(1, "On what date did Apollo 11 land?", answer), seed=seed)
    truth = dt.datetime.strptime(answer, fmt)
    for d in distractors(rec):
        assert re.fullmatch(pattern, d), (answer, d)
        assert 0 < abs((dt.datetime.strptime(d, fmt) - truth).days) <= 40, (answer, d)


def test_month_year_dates_shift_by_months():
    rec = convert_one(item(1, "When was it?", "March 1969"))
    for d in distractors(rec):
        month = dt.datetime.strptime(d, "%B %Y")
        assert abs((month.year * 12 + month.month) - (1969 * 12 + 3)) <= 6


@pytest.mark.parametrize("seed", range(10))
def test_names_come_from_the_pool_of_the_same_type(seed):
    items = people_items() + phrase_items()
    records, failed = convert_open_ended(items, seed=seed)
    assert not failed and len(records) == len(items)
    for rec in records[:len(PEOPLE)]:
        assert set(distractors(rec)) <= set(PEOPLE), rec["choices"]
    for rec in records[len(PEOPLE):]:
        assert set(distractors(rec)) <= set(PHRASES), rec["choices"]


def test_small_person_pool_is_topped_up_from_the_documented_list():
    items = [item(i, "Who wrote it?", n) for i, n in enumerate(["Jane Austen", "George Orwell"])]
    records, failed = convert_open_ended(items, seed=1)
    assert not failed
    for rec in records:
        assert set(distractors(rec)) <= set(convert.PEOPLE) | {"Jane Austen", "George Orwell"}


@pytest.mark.parametrize("seed", range(30))
def test_never_the_answer_or_an_alias_after_normalisation_and_all_distinct(seed):
    # the pool holds the alias forms as answers of other questions: they must still never appear
    target = item(0, "Who wrote Nineteen Eighty-Four?", "George Orwell",
                  aliases=["Eric Arthur Blair", "ORWELL", "Marie Curie"])
    others = [item(i + 1, "Who is it?", n) for i, n in enumerate(
        ["george orwell.", "Eric Arthur Blair", "Orwell", "Marie Curie", "Alan Turing", "Ada Lovelace",
         "Isaac Newton", "Oscar Wilde", "Nikola Tesla", "Emily Bronte", "Charles Darwin", "Neil Armstrong"])]
    rec = convert_one(target, others, seed=seed)
    banned = {normalize_text(x) for x in ["George Orwell", "Eric Arthur Blair", "ORWELL", "Marie Curie"]}
    keys = [normalize_text(d) for d in distractors(rec)]
    assert not set(keys) & banned and not any("orwell" in k for k in keys), rec["choices"]
    assert len({normalize_text(c) for c in rec["choices"]}) == 4


def test_numeric_alias_is_never_a_distractor():
    for seed in range(40):
        rec = convert_one(item(1, "How many?", "12", aliases=["13", "11", "twelve"]), seed=seed)
        assert not {"11", "13"} & set(rec["choices"])


def test_deterministic_per_seed_and_independent_of_order():
    items = people_items() + phrase_items() + [item(200 + i, "In what year?", str(1900 + 7 * i)) for i in range(10)]
    a, _ = convert_open_ended(items, seed=3)
    b, _ = convert_open_ended(items, seed=3)
    shuffled = items[:]
    random.Random(0).shuffle(shuffled)
    c, _ = convert_open_ended(shuffled, seed=3)
    assert a == b
    assert {r["id"]: r for r in a} == {r["id"]: r for r in c}
    d, _ = convert_open_ended(items, seed=4)
    assert sum(x["choices"] != y["choices"] for x, y in zip(a, d)) > len(a) // 2


def test_a_question_does_not_depend_on_other_questions_outside_the_pool():
    target = item(1, "In what year did the war end?", "1945")
    alone = convert_one(target)
    with_others = convert_one(target, [item(i + 10, "How many?", str(i)) for i in range(50)] + phrase_items())
    assert alone == with_others


def test_unconvertible_items_are_counted_by_reason():
    items = [
        item(1, "What is it?", ""),                  # empty answer
        item(2, "   ", "honey"),                      # empty question
        item(3, "Recite it.", "word " * 60),          # 300 characters: a passage, not a choice
        item(4, "What is the rarest thing?", "unobtainium"),  # the phrase pool has 2 answers, 3 needed
        item(5, "What is the other rare thing?", "mithril"),
        item(6, "How many?", "7"),                    # converts fine
    ]
    records, failed = convert_open_ended(items, seed=1)
    assert failed == Counter(empty_answer=1, empty_question=1, answer_too_long=1, pool_too_small=2)
    assert [r["id"] for r in records] == ["q6"]
    assert sum(failed.values()) + len(records) == len(items)


def test_answer_positions_are_balanced():
    items = [item(i, "How many?", str(10 + i)) for i in range(2000)]
    records, _ = convert_open_ended(items, seed=5)
    counts = Counter(r["answer"] for r in records)
    assert set(counts) == {0, 1, 2, 3} and all(400 <= n <= 600 for n in counts.values()), counts


def synthetic_open_ended(n: int, seed: int = 0) -> list[dict]:
    """A TriviaQA-like mix: 15% numbers, 10% years, 5% dates, 20% people, 15% places, 35% phrases."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = rng.random()
        if r < 0.15:
            q, a = "How many miles long is it?", str(rng.randint(1, 5000))
        elif r < 0.25:
            q, a = "In what year did it happen?", str(rng.randint(1500, 2020))
        elif r < 0.30:
            month = rng.choice(["March", "July"])
            q, a = "On what date did it happen?", f"{month} {rng.randint(1, 28)}, {rng.randint(1800, 2000)}"
        elif r < 0.50:
            q, a = "Who wrote the book?", f"{rng.choice(PEOPLE).split()[0]} Smith{i % 500}"
        elif r < 0.65:
            q, a = "In which city is it?", f"Port Town{i % 700}"
        else:
            q, a = "What is it called?", f"thing {i % 3000} of kind {i % 7}"
        out.append(item(i, q, a, aliases=[a.lower()]))
    return out


def test_18500_open_ended_convert_fast():
    items = synthetic_open_ended(18_500)
    t0 = time.process_time()  # CPU time: a CI box running other test processes beside this one stretches wall time
    records, failed = convert_open_ended(items, seed=1)
    seconds = time.process_time() - t0
    assert len(records) + sum(failed.values()) == 18_500 and len(records) > 18_000
    # budget: well under 1 s of the 5 s build (measured ~0.3 s on 2 cores); 2.5 s of CPU leaves room for slower
    # CPUs (wall time reached 2.56 s with four test processes on 2 cores), while an O(n^2) pool scan takes minutes
    assert seconds < 2.5, f"{seconds:.2f} s of CPU"


def test_non_text_fields_are_counted_not_crashed_on():
    items = [item(1, "How many?", "7"), {"id": "q2", "question": "How many?", "answer_text": 12, "aliases": []}]
    records, failed = convert_open_ended(items, seed=1)
    assert [r["id"] for r in records] == ["q1"] and failed == Counter(non_text_field=1)
    with pytest.raises(ValueError):
        convert_open_ended(items, seed=1, n_choices=1)
