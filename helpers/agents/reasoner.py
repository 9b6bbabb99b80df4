"""The reasoning A-agent: a short deduction, then the letter, inside the answer budget.

The model (the trained reasoner adapter, config.REASONER) gets the kit's question prompt with REASONER_SYSTEM and
writes greedily; every question of one harness batch is generated together. Writing stops at the end of its turn,
at `max_new_tokens` (the organisers' 512 cap) or at the deadline, whichever comes first; the reasoning is what it
wrote before "Answer:". Then, finished or cut, the letter is scored from the logits after "<the reasoning so
far>\\nAnswer:" (fed on the generation's own cache): the same place a trained reasoner writes its letter, so the
answer is always one of the question's letters and always on time. The reasoning returned is the model's own text,
cut to the rules' 100 words; never a template.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from helpers.agents import timing
from helpers.models.unsloth_api import refuse_overlength
from helpers.prompts import MAX_CHOICES, mcq_messages, render_prompt
from helpers.records import LETTERS

REASONER_SYSTEM = ("You answer multiple-choice questions. Work it out in a few short steps, then end with "
                 "'Answer: ' and the letter of the correct choice.")
ANSWER_MARK = "Answer:"
MAX_REASON_WORDS = 100  # the rules' limit for "reasoning" (tournament-rules.md, A-agent output)
MAX_REASON_TOKENS = 400  # and at most this many of the model's tokens: answer + reasoning must stay under 512
# Why writing stopped: its own end (the model wrote "Answer:" or ended its turn), the token cap, the deadline, or no
# time left to start; a measurement reports the share of each.
STOPS = ("finished", "token_cap", "deadline", "no_time")
MIN_WRITE_S = 0.05  # under this, writing is skipped and the letter is scored straight after the prompt
FIRST_RESERVE_SHARE = 0.1  # the letter step's reserve before one was measured: a tenth of the batch's seconds


def token_budget(agents: Any) -> int:
    """The tokens a deduction can take and still finish inside the answer budget on the profile's target machine:
    the budget (agents.time_margin x the 6 s limit) less the letter step's first reserve (FIRST_RESERVE_SHARE), at
    agents.decode_ms_per_token a token, at most agents.reason_max_tokens."""
    seconds = timing.budget(agents.answer_time_limit_s, agents.time_margin) * (1 - FIRST_RESERVE_SHARE)
    return max(1, min(int(agents.reason_max_tokens), int(seconds * 1000 / agents.decode_ms_per_token)))


def reasoner_reply(explanation: str, letter_: str) -> str:
    """What a reasoner is trained to write: the deduction, then "Answer: <letter>" on its own line."""
    return f"{' '.join(explanation.split())}\n{ANSWER_MARK} {letter_}"


def reasoner_messages(item: dict) -> list[dict]:
    """The reasoning prompt: the kit's question turn (Question / Choices lines) under REASONER_SYSTEM."""
    return mcq_messages(item, REASONER_SYSTEM)


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


def _find(seq: list[int], sub: list[int]) -> int | None:
    """Where `sub` first starts in `seq`, else None."""
    for k in range(len(seq) - len(sub) + 1):
        if seq[k:k + len(sub)] == sub:
            return k
    return None


class Reasoner:
    """Writes a deduction per question with one member of a loaded model, then scores the letter after it.

    `answer(items, seconds)` keeps the whole batch inside `seconds` (wall clock). One batched generate reads the
    prompts (the prefill, which no deadline can interrupt) and writes until the turn ends, the cap, or `seconds`
    less a reserve for the letter step; the letter step then feeds "\nAnswer:" to the generation's own KV cache
    (a few tokens, not a second pass over the prompts), with each row's tokens after its reasoning masked out."""

    def __init__(self, model: Any, tokenizer: Any, *, member: str, max_new_tokens: int = 512):
        from helpers.scoring import end_of_turn_ids
        self.model, self.tokenizer, self.member = model, tokenizer, member
        self.cap = self.max_new_tokens = int(max_new_tokens)  # the configured cap; a harness call may only lower it
        self.letter_ids = mark_letter_ids(tokenizer)
        self.stop_ids = end_of_turn_ids(tokenizer, REASONER_SYSTEM)
        self.mark_ids = list(tokenizer(f"\n{ANSWER_MARK}", add_special_tokens=False)["input_ids"])
        newline = list(tokenizer("\n", add_special_tokens=False)["input_ids"])
        # the mark as a model writes it after a newline: "Answer", ":" (the newline is its own token before it)
        self.mark_tail = self.mark_ids[len(newline):] if self.mark_ids[:len(newline)] == newline else self.mark_ids
        self.letter_s_per_row: float | None = None  # the last letter step's seconds per question (the reserve)
        self.step_s = 0.0  # the last generate's seconds per token written: max_time is checked after each one

    def describe(self) -> str:
        """A short name for reports."""
        return f"{self.member} (reasoning)"

    def limit_tokens(self, max_new_tokens: Any = None) -> None:
        """This call's token cap: the configured cap, lowered (never raised) by a harness's max_new_tokens."""
        try:
            self.max_new_tokens = min(self.cap, max(1, int(max_new_tokens))) if max_new_tokens else self.cap
        except (TypeError, ValueError):  # a harness value that is not a number leaves the configured cap
            self.max_new_tokens = self.cap

    def answer(self, items: Sequence[dict], seconds: float) -> list[dict]:
        """Per item {"probs" over its own letters, "reasoning", "stop" (one of STOPS), "tokens" written}."""
        from helpers import scoring
        t0 = time.perf_counter()
        items = list(items)
        prompts = [render_prompt(self.tokenizer, item, REASONER_SYSTEM) for item in items]
        with scoring.use_member(self.model, self.member), scoring.inference(self.model, self.tokenizer):
            device = next(self.model.parameters()).device
            enc = self.tokenizer(prompts, add_special_tokens=False, padding=True, return_tensors="pt")
            enc = {k: v.to(device) for k, v in enc.items()}
            write_s = seconds - self._reserve(seconds, len(items)) - (time.perf_counter() - t0)
            t1 = time.perf_counter()
            gen = self._generate(enc, write_s)
            new = gen.sequences[:, enc["input_ids"].shape[1]:]
            if new.shape[1] >= 8:  # seconds a token, the prefill included (errs long); too few tokens say nothing
                self.step_s = (time.perf_counter() - t1) / new.shape[1]
            rows = [self._row(ids, write_s) for ids in new.tolist()]
            t2 = time.perf_counter()
            probs = self._letters(enc, gen, [keep for keep, _, _ in rows], [len(it["choices"]) for it in items])
            self.letter_s_per_row = (time.perf_counter() - t2) / len(items)
        out = []
        for (keep, text, stop), p in zip(rows, probs):
            reasoning, marked = reasoning_of(text)
            stop = "finished" if marked and stop != "no_time" else stop
            out.append({"probs": p, "reasoning": reasoning, "stop": stop, "tokens": keep})
        return out

    def _reserve(self, seconds: float, n: int) -> float:
        """Seconds kept back from writing: the letter step (1.5 x the last one per question, times n) and the one
        token generate writes after max_time has passed; before any call, a tenth of the batch's seconds."""
        if self.letter_s_per_row is None:
            return FIRST_RESERVE_SHARE * seconds
        return min(0.5 * seconds, 1.5 * self.letter_s_per_row * n + self.step_s + 0.05)

    def _generate(self, enc: dict, seconds: float) -> Any:
        """Greedy, every prompt in one batch, stopped by the turn's end, the token cap or `seconds` (transformers'
        max_time, checked after every token); with no time to write, one token (the prefill the letter needs)."""
        writing = seconds >= MIN_WRITE_S
        # the reasoning, then "\nAnswer:" and the letter: all of it must fit what Unsloth loaded the model for
        refuse_overlength(self.model, enc["input_ids"].shape[1] + self.max_new_tokens + len(self.mark_ids) + 1,
                          "the reasoner's longest prompt, its reasoning and its letter")
        return self.model.generate(**enc, do_sample=False, max_new_tokens=self.max_new_tokens if writing else 1,
                                   max_time=max(seconds, MIN_WRITE_S), eos_token_id=self.stop_ids,
                                   pad_token_id=self.tokenizer.pad_token_id, return_dict_in_generate=True)

    def _row(self, new: list[int], write_s: float) -> tuple[int, str, str]:
        """(tokens of reasoning kept, their text, why writing stopped): the reasoning ends at the turn's end or where
        the model starts "Answer:" (its newline dropped: the letter step writes "\nAnswer:" itself)."""
        if write_s < MIN_WRITE_S:
            return 0, "", "no_time"
        ended = next((k for k, t in enumerate(new) if t in self.stop_ids), None)
        m = _find(new, self.mark_ids)  # "\nAnswer:" as the kit writes it, else "Answer:" after a merged newline
        m = _find(new, self.mark_tail) if m is None else m
        cuts = [k for k in (ended, m) if k is not None]
        keep = min(cuts) if cuts else len(new)
        stop = "finished" if cuts else "token_cap" if len(new) >= self.max_new_tokens else "deadline"
        return keep, self.tokenizer.decode(new[:min(keep, MAX_REASON_TOKENS)], skip_special_tokens=True), stop

    def _letters(self, enc: dict, gen: Any, keeps: list[int], sizes: list[int]) -> list[list[float]]:
        """Softmax over each item's letters after "<its kept reasoning>\nAnswer:": the tokens the cache has not seen
        (the last one generated) and the mark are fed on the generation's cache, everything a row wrote after its
        reasoning masked out, positions counted over each row's real tokens. A generation that hands back no cache
        object (Unsloth's generate returns a tuple of tensors per layer) gets one forward over the prompt too, with
        no cache: the same letters, one prefill dearer."""
        import torch
        ids, prompt_mask = enc["input_ids"], enc["attention_mask"]
        n, width = ids.shape
        device = ids.device
        new = gen.sequences[:, width:]
        cache = gen.past_key_values if hasattr(gen.past_key_values, "get_seq_length") else None
        seen = cache.get_seq_length() - width if cache is not None else 0  # generated tokens the cache holds
        keep = torch.tensor(keeps, device=device)[:, None]
        written = torch.arange(new.shape[1], device=device)[None, :] < keep  # (n, generated): inside the reasoning
        mark = torch.tensor(self.mark_ids, device=device).repeat(n, 1)
        feed = torch.cat([new[:, seen:], mark], dim=1)
        mask = torch.cat([prompt_mask, written, torch.ones_like(mark)], dim=1).long()
        base = prompt_mask.sum(dim=1, keepdim=True)  # each row's prompt tokens
        unseen = base + torch.arange(seen, new.shape[1], device=device)[None, :]
        positions = torch.cat([unseen, base + keep + torch.arange(len(self.mark_ids), device=device)[None, :]], dim=1)
        if cache is None:  # the prompt is fed again, left-padded, its positions counted over its real tokens
            feed = torch.cat([ids, feed], dim=1)
            positions = torch.cat([(prompt_mask.cumsum(-1) - 1).clamp(min=0), positions], dim=1)
        logits = self.model(input_ids=feed, attention_mask=mask, position_ids=positions, past_key_values=cache,
                            use_cache=cache is not None).logits[:, -1, :]
        letters = logits.index_select(-1, torch.tensor(self.letter_ids, device=logits.device)).float().cpu()
        return [torch.softmax(letters[row, :min(k, MAX_CHOICES)], dim=-1).tolist() for row, k in enumerate(sizes)]
