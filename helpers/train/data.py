"""Training examples: curriculum records -> token ids with the loss on the answer tokens only, and their padding.

Prompt and completion are tokenised separately and concatenated, exactly as generation sees them (the
prompt, then the tokens the model writes), so the split never depends on how BPE merges across the
boundary. Prompt tokens get label -100 (ignored by the loss); the answer letter and the end-of-turn
token carry the loss.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from helpers import io
from helpers.io import InputError
from helpers.prompts import render_chat_example, render_example
from helpers.records import validate

IGNORE_INDEX = -100  # the label value torch's cross-entropy skips


def tokenize_example(tokenizer: Any, record: dict) -> dict:
    """{'input_ids', 'attention_mask', 'labels'} for one record; labels are -100 on every prompt token. A record
    with "chat" (system, user, assistant turns: e.g. a question writer's) trains on the assistant's turn."""
    chat = record.get("chat")
    prompt, completion = render_chat_example(tokenizer, chat) if chat else render_example(tokenizer, record)
    p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    c_ids = tokenizer(completion, add_special_tokens=False)["input_ids"]
    ids = list(p_ids) + list(c_ids)
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": [IGNORE_INDEX] * len(p_ids) + list(c_ids)}


def build_examples(tokenizer: Any, records: list[dict], max_seq_len: int) -> tuple[list[dict], Counter]:
    """Tokenised examples; those longer than max_seq_len are dropped and counted (never truncated: that
    would cut the answer off), so nothing is lost silently."""
    out, dropped = [], Counter()
    for rec in records:
        ex = tokenize_example(tokenizer, rec)
        if len(ex["input_ids"]) > max_seq_len:
            dropped["too_long"] += 1
            continue
        out.append(ex)
    return out, dropped


def load_curriculum(path: str | Path) -> dict[int, list[dict]]:
    """curriculum/train.jsonl grouped by chunk (0..n-1, each non-empty); bad lines name file, line, field."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, None, "not found: run notebooks/02_curriculum.ipynb first (same PROFILE and RUN)")
    chunks: dict[int, list[dict]] = defaultdict(list)
    for lineno, obj in io.iter_jsonl(path):
        rec = validate(obj, path, f"line {lineno}")  # a RecordError names file, line and field
        chunk = rec.get("chunk")
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 0:
            raise InputError(path, f"line {lineno}", "chunk", f"expected a chunk index >= 0, got {chunk!r}")
        chunks[chunk].append(rec)
    if not chunks:
        raise InputError(path, None, None, "has no records: notebook 02 wrote an empty curriculum")
    n = max(chunks) + 1
    empty = [i for i in range(n) if not chunks.get(i)]
    if empty:
        raise InputError(path, None, "chunk", f"chunks {empty} have no records (chunks must be 0..{n - 1})")
    return {i: chunks[i] for i in range(n)}


def make_dataset(examples: list[dict]) -> Any:
    """A torch Dataset over tokenised examples (Trainer's length-grouped sampler reads 'input_ids')."""
    from torch.utils.data import Dataset

    class ExampleDataset(Dataset):
        def __init__(self, items: list[dict]):
            self.items = items

        def __len__(self) -> int:
            return len(self.items)

        def __getitem__(self, i: int) -> dict:
            return self.items[i]

    return ExampleDataset(examples)


def make_collator(tokenizer: Any, pad_to_multiple_of: int | None = None) -> Any:
    """Dynamic padding to the longest example in each batch; labels padded with -100, right side."""
    from transformers import DataCollatorForSeq2Seq

    return DataCollatorForSeq2Seq(tokenizer, padding="longest", label_pad_token_id=IGNORE_INDEX,
                                  pad_to_multiple_of=pad_to_multiple_of, return_tensors="pt")
