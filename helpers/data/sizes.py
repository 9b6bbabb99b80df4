"""How many rows each data source holds, known before the build: local files are read, hub datasets looked up.

The hub's row counts come from each dataset card's `dataset_info` (the `num_examples` of every split, which the
card on https://huggingface.co/datasets/<name> shows as its viewer's row counts), so a plan needs no download. A
split the table does not hold, or a local path that cannot be read, is a size `None` with the reason: the plan
says which source it could not count and why, and never guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from helpers.data.hub import parse_spec
from helpers.io import InputError

CARD = "the dataset card's dataset_info (num_examples), https://huggingface.co/datasets/{name}"
# (dataset, config) -> {split: rows}; config None where the dataset has one
HUB_ROWS: dict[tuple[str, str | None], dict[str, int]] = {
    ("cais/mmlu", "all"): {"auxiliary_train": 99_842, "test": 14_042, "validation": 1_531, "dev": 285},
    ("allenai/ai2_arc", "ARC-Challenge"): {"train": 1_119, "validation": 299, "test": 1_172},
    ("allenai/ai2_arc", "ARC-Easy"): {"train": 2_251, "validation": 570, "test": 2_376},
    ("tau/commonsense_qa", None): {"train": 9_741, "validation": 1_221, "test": 1_140},
    ("allenai/openbookqa", "main"): {"train": 4_957, "validation": 500, "test": 500},
    ("allenai/sciq", None): {"train": 11_679, "validation": 1_000, "test": 1_000},
    ("mandarjoshi/trivia_qa", "rc.nocontext"): {"train": 138_384, "validation": 17_944, "test": 17_210},
    ("Rowan/hellaswag", None): {"train": 39_905, "validation": 10_042, "test": 10_003},
    ("allenai/winogrande", "winogrande_xl"): {"train": 40_398, "validation": 1_267, "test": 1_767},
}
# datasets' split slicing, as load_dataset reads it: train[:13500], train[1000:5000], train[:10%]
SLICE = re.compile(r"^(?P<split>[\w.-]+)\[(?P<start>-?\d+%?)?:(?P<stop>-?\d+%?)?\]$")


@dataclass(frozen=True)
class SourceSize:
    """One source's rows before the build (None: unknown) and where the number came from (or why it is missing)."""
    source: str
    rows: int | None
    how: str


def _bound(text: str | None, total: int, default: int) -> int:
    """One end of a slice as a row index: a count, a percentage of `total`, negative from the end."""
    if text is None:
        return default
    value = round(total * int(text[:-1]) / 100) if text.endswith("%") else int(text)
    return max(0, min(total, value + total if value < 0 else value))


def sliced_rows(split: str, table: dict[str, int]) -> tuple[int, str] | None:
    """(rows, split name) of a split or a slice of one ('train[:13500]'), or None when the table lacks the split."""
    match = SLICE.match(split)
    name = match["split"] if match else split
    if name not in table:
        return None
    total = table[name]
    if not match:
        return total, name
    start, stop = _bound(match["start"], total, 0), _bound(match["stop"], total, total)
    return max(0, stop - start), name


def hub_size(spec: str) -> SourceSize:
    """Rows of a 'hub:<dataset>[:<config>][@<split>]' spec from HUB_ROWS (every split summed when none is named)."""
    try:
        name, config, split = parse_spec(spec)
    except InputError as exc:
        return SourceSize(spec, None, f"unknown: {exc}")
    table = HUB_ROWS.get((name, config))
    if table is None:
        return SourceSize(spec, None, f"unknown: no row counts for {name} config {config!r} in helpers/data/sizes.py")
    if split is None:
        return SourceSize(spec, sum(table.values()), CARD.format(name=name) + ", every split")
    found = sliced_rows(split, table)
    if found is None:
        where = f"{name} config {config}" if config else name
        return SourceSize(spec, None, f"unknown: {where} has no split {split!r} in helpers/data/sizes.py "
                                      f"(known: {', '.join(table)})")
    return SourceSize(spec, found[0], CARD.format(name=name))


def local_size(spec: str) -> SourceSize:
    """Rows of a local file or folder, read by the build's own readers (records and open-ended questions)."""
    from helpers.data import readers  # lazy: the readers pull in the converters

    try:
        results = readers.read_source(spec, None, tolerant=True)
    except (InputError, OSError, ValueError) as exc:
        return SourceSize(spec, None, f"unknown: {str(exc).splitlines()[0]}")
    rows = sum(len(r.records) + len(r.open_ended) for r in results)
    return SourceSize(spec, rows, f"counted: {len(results)} file(s) read")


def source_size(spec: str) -> SourceSize:
    """A source's rows before the build, from the hub table or by reading it."""
    return hub_size(spec) if str(spec).startswith("hub:") else local_size(spec)
