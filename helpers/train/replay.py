"""Replay: a reservoir sample of the chunks trained so far, mixed into each new chunk to curb forgetting."""

from __future__ import annotations

import copy
import random
from typing import Any, Iterable

from helpers.io import InputError


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
                # Replacing a random slot on every add once full would keep mostly the last chunk;
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
