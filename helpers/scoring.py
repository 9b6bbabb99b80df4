"""Letter scoring: one batched forward per batch reads the answer-letter logits at the last prompt position.

The prompt is the training prompt (helpers.prompts.render_prompt) and the letter token is the first token of the
training completion (helpers.prompts.render_example), tokenised the way training tokenised it (prompt and
completion separately, no special tokens added), so a ChatML tokenizer scores "A" and a template-less one " A".
Prompts are left-padded so every question's last prompt token sits in the last column: one forward per batch,
and only that column's logits are computed (`logits_to_keep=1`; `num_logits_to_keep=1` on transformers 4.51.3).

The original team's method (generate up to 64 tokens, then find the letter with a regex) stays as `generate_letters`,
a baseline whose unparseable share is reported.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import weakref
from typing import Any, Iterator, Sequence

from helpers.io import InputError
from helpers.prompts import MAX_CHOICES, SYSTEM_PROMPT, render_example, render_prompt
from helpers.models.members import BASE, use_member  # noqa: F401  (scoring.BASE: the member name callers use)
from helpers.models.unsloth_api import refuse_overlength
from helpers.records import LETTERS, letter

# The original team's parser looked for the answer letter anywhere in the generated text: a capital A-J standing alone
# ("B", "B)", "Answer: B."), never inside a word ("A" in "Apple" does not count).
LETTER_RE = re.compile(r"(?<![A-Za-z])([A-J])(?![A-Za-z])")


# ---------------------------------------------------------------- tokens and prompts
def _choices_of(item: Any, where: int) -> list:
    choices = item.get("choices") if isinstance(item, dict) else None
    if not isinstance(choices, (list, tuple)) or not 2 <= len(choices) <= MAX_CHOICES:
        n = len(choices) if isinstance(choices, (list, tuple)) else type(choices).__name__
        raise InputError(None, where, "choices", f"expected a list of 2..{MAX_CHOICES} choices, got {n}")
    return list(choices)


# Per tokenizer, per (system prompt, chat template): the A-agent scores every few questions, and working the
# ids out renders the template ten times (~1 ms, an eighth of scoring one question on the tiny model).
_LETTER_IDS: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def letter_token_ids(tokenizer: Any, system_prompt: str | None = None) -> list[int]:
    """Token id of each answer letter A..J as the first token the model writes after the prompt in training."""
    key = (system_prompt or SYSTEM_PROMPT, getattr(tokenizer, "chat_template", None))
    try:
        cached = _LETTER_IDS.setdefault(tokenizer, {})
    except TypeError:  # a tokenizer that cannot be weakly referenced: no cache
        cached = {}
    if key not in cached:
        cached[key] = _letter_token_ids(tokenizer, key[0])
    return list(cached[key])


def _letter_token_ids(tokenizer: Any, system_prompt: str) -> list[int]:
    probe = {"question": "Which one?", "choices": [f"option {i + 1}" for i in range(MAX_CHOICES)]}
    ids = []
    for i, letter_ in enumerate(LETTERS[:MAX_CHOICES]):
        _, completion = render_example(tokenizer, {**probe, "answer": i}, system_prompt)
        first = tokenizer(completion, add_special_tokens=False)["input_ids"][0]
        text = tokenizer.decode([first])
        if text.strip() != letter_:
            raise ValueError(f"tokenizer: the answer {letter_!r} does not start with a token of its own (first token "
                             f"{text!r}); letter scoring needs one token per letter")
        ids.append(int(first))
    if len(set(ids)) != len(ids):
        raise ValueError(f"tokenizer: answer letters share token ids {ids}")
    return ids


def end_of_turn_ids(tokenizer: Any, system_prompt: str | None = None) -> list[int]:
    """Token ids that end the model's turn (the template's closing token after the letter, and EOS)."""
    _, completion = render_example(tokenizer, {"question": "q", "choices": ["a", "b"], "answer": 0},
                                   system_prompt or SYSTEM_PROMPT)
    after = tokenizer(completion, add_special_tokens=False)["input_ids"][1:2]
    eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    return sorted(set(int(t) for t in after + eos))


def _keep_last_kwarg(model: Any) -> str | None:
    """'logits_to_keep' (transformers >= 4.50 / 5.x), 'num_logits_to_keep' (4.45-4.49), or None (all positions)."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    params = inspect.signature(inner.forward).parameters
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            return name
    return None


@contextlib.contextmanager
def inference(model: Any, tokenizer: Any) -> Iterator[None]:
    """Eval mode, no grad and left padding for the duration; the caller's mode and padding side come back."""
    import torch
    was_training, side = model.training, tokenizer.padding_side
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    model.eval()
    tokenizer.padding_side = "left"
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)
        tokenizer.padding_side = side


def _batches(order: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(order), max(1, int(size))):
        yield order[start:start + max(1, int(size))]


def _pad_left(seqs: list[list[int]], pad_id: int) -> tuple[Any, Any]:
    """(input_ids, attention_mask) tensors, left-padded so every sequence ends in the last column."""
    import torch
    width = max(len(s) for s in seqs)
    ids = torch.tensor([[pad_id] * (width - len(s)) + list(s) for s in seqs])
    mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs])
    return ids, mask


def _encode(tokenizer: Any, prompts: list[str], device: Any) -> dict:
    enc = tokenizer(prompts, add_special_tokens=False, padding=True, return_tensors="pt")
    return {"input_ids": enc["input_ids"].to(device), "attention_mask": enc["attention_mask"].to(device)}


def _length_order(seqs: list[list[int]]) -> list[int]:
    # Longest first: batches of similar length waste little on padding, and an out-of-memory shows at once.
    return sorted(range(len(seqs)), key=lambda i: (-len(seqs[i]), i))


def common_prefix_length(seqs: list[list[int]]) -> int:
    """Tokens every sequence starts with, leaving at least one token of each to run through the model."""
    first, limit = seqs[0], min(len(s) for s in seqs) - 1
    n = 0
    while n < limit and all(s[n] == first[n] for s in seqs):
        n += 1
    return n


def _prefix_cache(model: Any, prefix: list[int], keep: str | None, device: Any) -> Any:
    """The KV cache of the shared prompt head (system turn, 'Question:'), or None where the cache cannot be reused."""
    import torch
    kwargs = {keep: 1} if keep else {}
    out = model(input_ids=torch.tensor([prefix], device=device), use_cache=True, **kwargs)
    cache = getattr(out, "past_key_values", None)
    return cache if hasattr(cache, "batch_repeat_interleave") else None


# ---------------------------------------------------------------- scoring
def score_letters(model: Any, tokenizer: Any, items: Sequence[dict], *, batch_size: int = 16,
                  system_prompt: str | None = None, reuse_prefix: bool = True) -> list[list[float]]:
    """Per item, the softmax over its own n letters' logits at the last prompt position (sums to 1).

    With reuse_prefix, the prompt head every question shares (the system turn and the user turn's opening,
    ~45 of ~80 tokens on the kit's prompt) runs through the model once per call; each batch then runs only
    its questions' own tokens, attending to that cached head (same positions, same result).
    """
    import copy
    import torch
    items = list(items)
    if not items:
        return []
    sizes = [len(_choices_of(item, i)) for i, item in enumerate(items)]
    letter_ids = torch.tensor(letter_token_ids(tokenizer, system_prompt))
    prompts = [render_prompt(tokenizer, item, system_prompt or SYSTEM_PROMPT) for item in items]
    seqs = [list(s) for s in tokenizer(prompts, add_special_tokens=False)["input_ids"]]
    refuse_overlength(model, max(map(len, seqs)), "letter scoring's longest prompt")
    keep = _keep_last_kwarg(model)
    device = next(model.parameters()).device
    out: list[list[float] | None] = [None] * len(items)
    with inference(model, tokenizer):
        # A head of < 8 tokens (or one question) is not worth a cache copy per batch.
        head = common_prefix_length(seqs) if reuse_prefix and len(items) > 1 else 0
        cache = _prefix_cache(model, seqs[0][:head], keep, device) if head >= 8 else None
        head = head if cache is not None else 0
        for idx in _batches(_length_order(seqs), batch_size):
            ids, mask = _pad_left([seqs[i][head:] for i in idx], tokenizer.pad_token_id)
            # Positions count real tokens only, so a left-padded prompt gets the positions it has alone.
            positions = head + (mask.cumsum(-1) - 1).clamp(min=0)
            kwargs = {"input_ids": ids.to(device), "position_ids": positions.to(device)}
            if cache is not None:
                batch_cache = copy.deepcopy(cache)
                batch_cache.batch_repeat_interleave(len(idx))
                mask = torch.cat([torch.ones(len(idx), head, dtype=mask.dtype), mask], dim=1)
                kwargs.update(past_key_values=batch_cache, use_cache=True)
            else:
                kwargs["use_cache"] = False
            kwargs["attention_mask"] = mask.to(device)
            if keep:
                kwargs[keep] = 1
            logits = model(**kwargs).logits[:, -1, :]
            letters = logits.index_select(-1, letter_ids.to(logits.device)).float().cpu()
            for row, i in enumerate(idx):
                out[i] = torch.softmax(letters[row, :sizes[i]], dim=-1).tolist()
    return out  # type: ignore[return-value]


def parse_letter(text: str, n_choices: int) -> str | None:
    """The first standalone capital letter among the item's own letters in generated text, else None."""
    allowed = LETTERS[:n_choices]
    for match in LETTER_RE.finditer(text or ""):
        if match.group(1) in allowed:
            return match.group(1)
    return None


def generate_letters(model: Any, tokenizer: Any, items: Sequence[dict], *, max_new_tokens: int = 64,
                     batch_size: int = 8) -> list[dict]:
    """The original team's baseline: greedy generate up to max_new_tokens, then parse; {"letter": "A".."J" or None, "text"}."""
    items = list(items)
    if not items:
        return []
    sizes = [len(_choices_of(item, i)) for i, item in enumerate(items)]
    prompts = [render_prompt(tokenizer, item) for item in items]
    seqs = tokenizer(prompts, add_special_tokens=False)["input_ids"]
    refuse_overlength(model, max(map(len, seqs)) + int(max_new_tokens), "generation's longest prompt and its tokens")
    stop = end_of_turn_ids(tokenizer)
    device = next(model.parameters()).device
    out: list[dict | None] = [None] * len(items)
    with inference(model, tokenizer):
        for idx in _batches(_length_order(seqs), batch_size):
            kwargs = _encode(tokenizer, [prompts[i] for i in idx], device)  # generate derives positions from the mask
            # Greedy: the seeds sampled at temperature 0.1, which is greedy in all but ties and not reproducible.
            gen = model.generate(**kwargs, max_new_tokens=int(max_new_tokens), do_sample=False, eos_token_id=stop,
                                 pad_token_id=tokenizer.pad_token_id)
            new = gen[:, kwargs["input_ids"].shape[1]:]
            for row, i in enumerate(idx):
                text = tokenizer.decode(new[row], skip_special_tokens=True)
                out[i] = {"letter": parse_letter(text, sizes[i]), "text": text}
    return out  # type: ignore[return-value]


def generation_form(gens: Sequence[dict]) -> dict:
    """How generations read: the share the regex parses, and the share that is one letter and nothing else (the
    form training teaches; a base model often writes the letter and goes on, "B) September ...")."""
    n = len(gens)
    alone = sum(bool(re.fullmatch(r"\s*\(?[A-J]\)?\.?\s*", g["text"])) for g in gens)
    return {"parse_rate": sum(g["letter"] is not None for g in gens) / n if n else float("nan"),
            "letter_only_rate": alone / n if n else float("nan")}


def score_members(model: Any, tokenizer: Any, names: list[str], items: Sequence[dict],
                  batch_size: int = 16, system_prompt: str | None = None) -> dict[str, list[list[float]]]:
    """score_letters for each member, switching adapters on the one loaded model."""
    out = {}
    for name in names:
        with use_member(model, name):
            out[name] = score_letters(model, tokenizer, items, batch_size=batch_size, system_prompt=system_prompt)
    return out


# ---------------------------------------------------------------- a quick look after training
def letter_check(model: Any, tokenizer: Any, records: list[dict]) -> list[dict]:
    """A quick sanity check: P(letter) at the answer position for a few records, with and without the adapter."""
    import torch
    all_ids = letter_token_ids(tokenizer)
    rows = []
    was_training = model.training
    model.eval()
    for rec in records:
        ids = tokenizer(render_prompt(tokenizer, rec), add_special_tokens=False, return_tensors="pt")["input_ids"]
        refuse_overlength(model, ids.shape[1], "a spot-check prompt")
        ids = ids.to(next(model.parameters()).device)
        letters = [letter(i) for i in range(len(rec["choices"]))]
        letter_ids = all_ids[:len(letters)]
        row = {"question": rec["question"][:70], "answer": letter(rec["answer"])}
        variants = [("adapter", None)]
        if hasattr(model, "disable_adapter"):
            variants.append(("base", model.disable_adapter))
        for label, ctx in variants:
            with torch.no_grad(), (ctx() if ctx else contextlib.nullcontext()):
                probs = torch.softmax(model(input_ids=ids).logits[0, -1, letter_ids].float(), dim=-1)
            row[f"{label}_pick"] = letters[int(probs.argmax())]
            row[f"{label}_p_answer"] = round(float(probs[rec["answer"]]), 3)
        rows.append(row)
    model.train(was_training)
    return rows


# ---------------------------------------------------------------- the two methods side by side
def compare_methods(model: Any, tokenizer: Any, items: Sequence[dict], *, batch_size: int = 16,
                    gen_batch_size: int = 8, max_new_tokens: int = 64, warmup: int = 2, repeats: int = 3) -> dict:
    """Questions/s of letter scoring vs the original team's generate-and-parse on the same model and questions, and how
    often their picks agree where the generation parsed (the letters' argmax is the pick).

    Each method runs `repeats` times interleaved and keeps its fastest time: on a shared machine the minimum is
    the run least disturbed by other processes.
    """
    import time
    items = list(items)
    if warmup:  # first calls pay one-off costs (template compilation, allocator growth): keep them off the clock
        score_letters(model, tokenizer, items[:warmup], batch_size=batch_size)
        generate_letters(model, tokenizer, items[:warmup], max_new_tokens=2, batch_size=gen_batch_size)
    runs = {"letters": lambda: score_letters(model, tokenizer, items, batch_size=batch_size),
            "letters_no_prefix": lambda: score_letters(model, tokenizer, items, batch_size=batch_size,
                                                       reuse_prefix=False),
            "generate": lambda: generate_letters(model, tokenizer, items, max_new_tokens=max_new_tokens,
                                                 batch_size=gen_batch_size)}
    seconds = {k: float("inf") for k in runs}
    results: dict[str, Any] = {}
    for _ in range(max(1, repeats)):
        for key, fn in runs.items():
            t0 = time.perf_counter()
            results[key] = fn()
            seconds[key] = min(seconds[key], time.perf_counter() - t0)
    probs, plain, gens = results["letters"], results["letters_no_prefix"], results["generate"]
    picks = [LETTERS[max(range(len(p)), key=lambda j: (p[j], -j))] for p in probs]
    parsed = [i for i, g in enumerate(gens) if g["letter"] is not None]
    agree = sum(picks[i] == gens[i]["letter"] for i in parsed)
    n = len(items)
    drift = max(abs(a - b) for p, q in zip(probs, plain) for a, b in zip(p, q))
    form = generation_form(gens)
    return {"questions": n, "repeats": max(1, repeats), "seconds": seconds,
            "questions_per_s": {k: n / v for k, v in seconds.items()},
            "ratio": seconds["generate"] / seconds["letters"],
            "ratio_no_prefix": seconds["generate"] / seconds["letters_no_prefix"], "prefix_max_abs_diff": drift,
            "baseline_parse_rate": form["parse_rate"], "letter_only_rate": form["letter_only_rate"],
            "agreement": agree / len(parsed) if parsed else float("nan"), "agreeing": agree, "parsed": len(parsed),
            "disagreements": [{"index": i, "letters": picks[i], "generate": gens[i]["letter"],
                               "text": gens[i]["text"][:80]} for i in parsed if picks[i] != gens[i]["letter"]][:10]}
