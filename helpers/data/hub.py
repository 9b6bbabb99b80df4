"""Hugging Face hub datasets: "hub:<dataset>[:<config>][@<split>]" specs and the one load_dataset call.

Rows are mapped by helpers.data.rows (one mapper per dataset, tested offline); only load_rows touches the hub.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from helpers.data.rows import (Mapper, ReadResult, collect, map_arc, map_commonsenseqa, map_hellaswag, map_mmlu,
                               map_openbookqa, map_sciq, map_triviaqa, map_winogrande)
from helpers.io import InputError
from helpers.records import RecordError

# name -> (mapper, default config or None, short aliases)
HUB_DATASETS: dict[str, tuple[Mapper, str | None, tuple[str, ...]]] = {
    "cais/mmlu": (map_mmlu, "all", ("mmlu",)),
    "allenai/ai2_arc": (map_arc, "ARC-Challenge", ("ai2_arc", "arc")),
    "tau/commonsense_qa": (map_commonsenseqa, None, ("commonsense_qa", "commonsenseqa")),
    "allenai/openbookqa": (map_openbookqa, "main", ("openbookqa",)),
    "allenai/sciq": (map_sciq, None, ("sciq",)),
    "mandarjoshi/trivia_qa": (map_triviaqa, "rc.nocontext", ("trivia_qa", "triviaqa")),
    "Rowan/hellaswag": (map_hellaswag, None, ("hellaswag",)),
    "allenai/winogrande": (map_winogrande, "winogrande_xl", ("winogrande",)),
}
# Rowan/hellaswag still ships a loading script, which datasets>=4 refuses to run (and the kit never sets
# trust_remote_code): the hub's own parquet export of the same rows loads without code.
HUB_REVISIONS = {"Rowan/hellaswag": "refs/convert/parquet"}


def parse_spec(spec: str) -> tuple[str, str | None, str | None]:
    """'hub:<dataset>[:<config>][@<split>]' -> (canonical dataset, config, split)."""
    body = spec.removeprefix("hub:")
    body, _, split = body.partition("@")
    name, _, config = body.partition(":")
    lookup = {k.lower(): k for k in HUB_DATASETS}
    lookup.update({alias: k for k, (_, _, aliases) in HUB_DATASETS.items() for alias in aliases})
    canonical = lookup.get(name.strip().lower())
    if canonical is None:
        raise InputError(spec, None, None, f"unsupported hub dataset {name!r}; one of {', '.join(HUB_DATASETS)}")
    return canonical, (config.strip() or HUB_DATASETS[canonical][1]), (split.strip() or None)


def load_rows(name: str, config: str | None, split: str | None) -> Mapping[str, Iterable[dict]] | list[dict]:
    """Rows per split from datasets.load_dataset; offline or unreachable -> a clear InputError."""
    try:
        import datasets  # lazy: a heavy import only hub specs need

        ds = datasets.load_dataset(name, config, split=split, revision=HUB_REVISIONS.get(name))
    except Exception as exc:  # ConnectionError offline, DatasetNotFoundError, ...: all mean "no rows from the hub"
        where = f"{name}" + (f":{config}" if config else "") + (f"@{split}" if split else "")
        raise InputError(f"hub:{where}", None, None,
                         f"could not load from the Hugging Face hub ({type(exc).__name__}: {exc}). The hub may be "
                         "unreachable (offline machine, HF_HUB_OFFLINE=1) or the name/config/split wrong. Without "
                         "the hub, download the upstream files and pass a local file or folder instead "
                         "(e.g. .../ARC-Challenge/ARC-Challenge-Dev.jsonl or the folder holding it).") from None
    return {split: ds} if split else dict(ds)


def read_hub(spec: str, *, tolerant: bool = True) -> list[ReadResult]:
    """One checked ReadResult per split of a hub dataset, rows mapped by the dataset's mapper."""
    name, config, split = parse_spec(spec)
    mapper = HUB_DATASETS[name][0]
    loaded = load_rows(name, config, split)
    splits = {split or "all": loaded} if isinstance(loaded, list) else dict(loaded)
    out = []
    for split_name, rows in splits.items():
        label = f"{name}/{config}/{split_name}" if config else f"{name}/{split_name}"
        res = ReadResult(path=f"hub:{label}", fmt=f"hub:{name}", source="")
        located = ((str(i), row if isinstance(row, Mapping) else
                    RecordError("not_an_object", f"expected a row mapping, got {type(row).__name__}"))
                   for i, row in enumerate(rows, 1))
        collect(res, located, lambda row: mapper(dict(row), config, f"{split_name}-{res.read}"), tolerant=tolerant)
        sources = sorted({r["source"] for r in res.records + res.open_ended})
        tops = sorted({s.split("/")[0] for s in sources})  # cais/mmlu "all": 57 "mmlu/<subject>" -> "mmlu"
        res.source = sources[0] if len(sources) == 1 else ",".join(tops) or HUB_DATASETS[name][2][0]
        res.check()
        out.append(res)
    return out
