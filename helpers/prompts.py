"""The one multiple-choice prompt: training, letter scoring (validation) and the answer agent all use it.

A question becomes a chat: a system turn that asks for the letter only, and a user turn
`Question: ...\\nChoices:\\nA) ...\\nB) ...`. The model's turn is the letter, closed by the template's
end-of-turn token. Rendering goes through the tokenizer's own chat template, so the same text the
adapter was trained on is what validation scores and what the agent sends.
"""

from __future__ import annotations

from typing import Any, Sequence

from helpers.edition import TEMPLATE_SWITCHES
from helpers.records import LETTERS, letter

SYSTEM_PROMPT = ("You answer multiple-choice questions. Reply with the letter of the correct choice only "
                 "(one capital letter), nothing else.")
MIN_CHOICES, MAX_CHOICES = 2, len(LETTERS)  # 2..10 choices, letters A..J


def _question_and_choices(item: dict | Sequence) -> tuple[str, list[str]]:
    if isinstance(item, dict):
        question, choices = item.get("question"), item.get("choices")
    else:
        question, choices = item
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question: expected non-empty text")
    if not isinstance(choices, (list, tuple)) or not all(isinstance(c, str) for c in choices):
        raise ValueError("choices: expected a list of strings")
    if not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        raise ValueError(f"choices: {len(choices)} given, the prompt supports {MIN_CHOICES}..{MAX_CHOICES}")
    return question.strip(), [c.strip() for c in choices]


def user_text(item: dict | Sequence) -> str:
    """The user turn: 'Question: ...' then 'Choices:' and one 'A) ...' line per choice."""
    question, choices = _question_and_choices(item)
    lines = [f"Question: {question}", "Choices:"]
    lines += [f"{letter(i)}) {c}" for i, c in enumerate(choices)]
    return "\n".join(lines)


def mcq_messages(item: dict | Sequence, system_prompt: str = SYSTEM_PROMPT) -> list[dict]:
    """Chat messages for a record or a (question, choices) pair: system (letter only) + user."""
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_text(item)}]


def target_text(record: dict) -> str:
    """The assistant's answer: the letter only (the template adds the end-of-turn token)."""
    answer = record.get("answer")
    n = len(record.get("choices") or [])
    if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < n:
        raise ValueError(f"answer: expected a choice index in 0..{n - 1}, got {answer!r}")
    return letter(answer)


def _has_template(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def _plain(messages: list[dict], add_generation_prompt: bool) -> str:
    # Only for tokenizers without a chat template (raw base models): a fixed, documented plain layout.
    text = "".join(f"{m['role'].capitalize()}: {m['content']}\n\n" for m in messages if m["role"] != "assistant")
    answer = next((m["content"] for m in messages if m["role"] == "assistant"), None)
    return text + "Assistant:" + ("" if add_generation_prompt or answer is None else f" {answer}")


def render_messages(tokenizer: Any, messages: list[dict], *, add_generation_prompt: bool) -> str:
    """Messages through the tokenizer's chat template (thinking off where the template knows the switch)."""
    if not _has_template(tokenizer):
        return _plain(messages, add_generation_prompt)
    # enable_thinking is a template variable (Qwen3 reads it; other templates ignore unknown variables); the switches
    # are the ones an edition may ask for (helpers.edition.TEMPLATE_SWITCHES).
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt,
                                         **TEMPLATE_SWITCHES)


def render_prompt(tokenizer: Any, item: dict | Sequence, system_prompt: str = SYSTEM_PROMPT) -> str:
    """The prompt text up to where the model writes its letter (generation prompt included)."""
    return render_messages(tokenizer, mcq_messages(item, system_prompt), add_generation_prompt=True)


def render_example(tokenizer: Any, record: dict, system_prompt: str = SYSTEM_PROMPT) -> tuple[str, str]:
    """(prompt, completion) for training: completion = the letter plus the template's end-of-turn text.

    The completion is what the full chat (with the assistant turn) adds after the generation prompt,
    trailing whitespace dropped, so the trained tokens are exactly what generation produces after the
    prompt. A template whose full render does not extend its prompt render falls back to letter + EOS.
    """
    answer = target_text(record)
    return render_chat_example(tokenizer, mcq_messages(record, system_prompt) + [{"role": "assistant",
                                                                                   "content": answer}])


def render_chat_example(tokenizer: Any, messages: list[dict]) -> tuple[str, str]:
    """(prompt, completion) for a chat whose last turn is the assistant's (a letter, a question writer's JSON): the
    prompt ends with the generation prompt, the completion is what the full chat adds after it (the reply plus the
    template's end-of-turn text); without a template, " reply" + EOS."""
    if not messages or messages[-1].get("role") != "assistant":
        raise ValueError("a chat example ends with the assistant's turn")
    reply = messages[-1]["content"]
    prompt = render_messages(tokenizer, messages[:-1], add_generation_prompt=True)
    if not _has_template(tokenizer):
        return prompt, f" {reply}" + (getattr(tokenizer, "eos_token", None) or "")
    full = render_messages(tokenizer, messages, add_generation_prompt=False)
    if full.startswith(prompt) and full[len(prompt):].lstrip().startswith(reply[:20]):
        return prompt, full[len(prompt):].rstrip()
    return prompt, reply + (getattr(tokenizer, "eos_token", None) or "")
