"""The reasoning A-agent: a short deduction, then the letter, inside the answer budget.

The model (the trained reasoner adapter, config.REASONER) gets the kit's question prompt with REASON_SYSTEM and
writes greedily; every question of one harness batch is generated together. Writing stops at the end of its turn,
at `max_new_tokens` (the organisers' 512 cap) or at the deadline, whichever comes first. Then, finished or cut, the
letter is scored from the logits after "<the reasoning so far>\\nAnswer:": the same place a trained reasoner writes
its letter, so the answer is always one of the question's letters and always on time. The reasoning returned is
the model's own text before "Answer:", cut to the rules' 100 words; never a template.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from helpers.prompts import MAX_CHOICES, mcq_messages, render_prompt
from helpers.records import LETTERS

REASON_SYSTEM = ("You answer multiple-choice questions. Work it out in a few short steps, then end with "
                 "'Answer: ' and the letter of the correct choice.")
ANSWER_MARK = "Answer:"
MAX_REASON_WORDS = 100  # the rules' limit for "reasoning" (tournament-rules.md, A-agent output)
# Why writing stopped: its own end (the model wrote "Answer:" or ended its turn), the token cap, the deadline, or no
# time left to start; a measurement reports the share of each.
STOPS = ("finished", "token_cap", "deadline", "no_time")
MIN_WRITE_S = 0.05  # under this, writing is skipped and the letter is scored straight after the prompt
FIRST_RESERVE_SHARE = 0.25  # the letter pass's reserve before one was measured: a quarter of the batch's seconds


def reason_reply(explanation: str, letter_: str) -> str:
    """What a reasoner is trained to write: the deduction, then "Answer: <letter>" on its own line."""
    return f"{' '.join(explanation.split())}\n{ANSWER_MARK} {letter_}"


def reason_messages(item: dict) -> list[dict]:
    """The reasoning prompt: the kit's question turn (Question / Choices lines) under REASON_SYSTEM."""
    return mcq_messages(item, REASON_SYSTEM)


def mark_letter_ids(tokenizer: Any) -> list[int]:
    """Token id of each letter A..J as written after "Answer:" (" B" is one token in the BPE vocabularies the kit
    uses); a tokenizer that splits it cannot be scored here, and says so."""
    head = tokenizer(f"\n{ANSWER_MARK}", add_special_tokens=False)["input_ids"]
    ids = []
    for letter_ in LETTERS[:MAX_CHOICES]:
        full = tokenizer(f"\n{ANSWER_MARK} {letter_}", add_special_tokens=False)["input_ids"]
        if list(full[:len(head)]) != list(head) or len(full) != len(head) + 1:
            raise ValueError(f"tokenizer: ' {letter_}' after {ANSWER_MARK!r} is not one token of its own; the "
                             "reasoning A-agent scores one token per letter")
        ids.append(int(full[-1]))
    if len(set(ids)) != len(ids):
        raise ValueError(f"tokenizer: answer letters after {ANSWER_MARK!r} share token ids {ids}")
    return ids


def reasoning_of(text: str) -> tuple[str, bool]:
    """(the model's reasoning before "Answer:", cut to MAX_REASON_WORDS words; whether it reached "Answer:")."""
    head, mark, _ = text.partition(ANSWER_MARK)
    words = head.split()
    return " ".join(words[:MAX_REASON_WORDS]), bool(mark)


class Reasoner:
    """Writes a deduction per question with one member of a loaded model, then scores the letter after it.

    `answer(items, seconds)` keeps the whole batch inside `seconds` (wall clock): generation gets what is left after
    a reserve for the letter pass, which is measured on every call (the first call reserves a quarter)."""

    def __init__(self, model: Any, tokenizer: Any, *, member: str, max_new_tokens: int = 512):
        from helpers.scoring import end_of_turn_ids
        self.model, self.tokenizer, self.member = model, tokenizer, member
        self.max_new_tokens = int(max_new_tokens)
        self.letter_ids = mark_letter_ids(tokenizer)
        self.stop_ids = end_of_turn_ids(tokenizer, REASON_SYSTEM)
        self.pass_s_per_item: float | None = None  # the last letter pass, per question

    def describe(self) -> str:
        """A short name for reports."""
        return f"{self.member} (reasoning)"

    def answer(self, items: Sequence[dict], seconds: float) -> list[dict]:
        """Per item {"probs" over its own letters, "reasoning", "stop" (one of STOPS), "tokens" written}."""
        from helpers import scoring
        t0 = time.perf_counter()
        items = list(items)
        prompts = [render_prompt(self.tokenizer, item, REASON_SYSTEM) for item in items]
        with scoring.use_member(self.model, self.member), scoring.inference(self.model, self.tokenizer):
            write_s = seconds - self._reserve(len(items), seconds) - (time.perf_counter() - t0)
            written = self._write(prompts, write_s) if write_s >= MIN_WRITE_S else [("", 0, "no_time")] * len(items)
            t1 = time.perf_counter()
            reasons = [reasoning_of(text) for text, _, _ in written]
            probs = self._letters(prompts, [r for r, _ in reasons], [len(it["choices"]) for it in items])
            self.pass_s_per_item = (time.perf_counter() - t1) / len(items)
        out = []
        for (text, tokens, stop), (reasoning, marked), p in zip(written, reasons, probs):
            stop = "finished" if marked and stop != "no_time" else stop
            out.append({"probs": p, "reasoning": reasoning, "stop": stop, "tokens": tokens})
        return out

    def _reserve(self, n: int, seconds: float) -> float:
        if self.pass_s_per_item is None:
            return FIRST_RESERVE_SHARE * seconds
        return min(0.5 * seconds, 1.5 * self.pass_s_per_item * n + 0.05)  # 1.5x: a longer reasoning costs more

    def _write(self, prompts: list[str], seconds: float) -> list[tuple[str, int, str]]:
        """(text, tokens written, stop) per prompt: greedy, every prompt in one batch, stopped by the turn's end,
        the token cap or `seconds` (transformers' max_time, checked after every token)."""
        device = next(self.model.parameters()).device
        enc = self.tokenizer(prompts, add_special_tokens=False, padding=True, return_tensors="pt")
        enc = {k: v.to(device) for k, v in enc.items()}
        out = self.model.generate(**enc, do_sample=False, max_new_tokens=self.max_new_tokens, max_time=seconds,
                                  eos_token_id=self.stop_ids, pad_token_id=self.tokenizer.pad_token_id)
        rows = []
        for new in out[:, enc["input_ids"].shape[1]:].tolist():
            ended = next((k for k, t in enumerate(new) if t in self.stop_ids), None)
            kept = new if ended is None else new[:ended]
            stop = "finished" if ended is not None else "token_cap" if len(new) >= self.max_new_tokens else "deadline"
            rows.append((self.tokenizer.decode(kept, skip_special_tokens=True), len(kept), stop))
        return rows

    def _letters(self, prompts: list[str], reasonings: list[str], sizes: list[int]) -> list[list[float]]:
        """Softmax over each item's letters at the position after "<reasoning>\\nAnswer:" (one batched pass)."""
        import torch
        texts = [p + (f"{r}\n{ANSWER_MARK}" if r else ANSWER_MARK) for p, r in zip(prompts, reasonings)]
        device = next(self.model.parameters()).device
        enc = self.tokenizer(texts, add_special_tokens=False, padding=True, return_tensors="pt")
        mask = enc["attention_mask"]
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        logits = self.model(input_ids=enc["input_ids"].to(device), attention_mask=mask.to(device),
                            position_ids=positions.to(device), use_cache=False).logits[:, -1, :]
        letters = logits.index_select(-1, torch.tensor(self.letter_ids, device=logits.device)).float().cpu()
        return [torch.softmax(letters[row, :min(n, MAX_CHOICES)], dim=-1).tolist() for row, n in enumerate(sizes)]
