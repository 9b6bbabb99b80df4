"""Recover one JSON object from model text: direct parse, then extraction, then repair. Never eval.

Models wrap JSON in prose or code fences, use Python literals and single quotes, leave trailing commas,
or stop mid-object at the token limit. Each stage only ever hands text to `json.loads`; the repair
stage rewrites the text token by token (quotes, literals, commas, unquoted keys, missing closers).
"""

from __future__ import annotations

import json
import re
from typing import Any

# A model that loops can emit megabytes; 64k characters is ~16k tokens, far past any 1024-token answer.
MAX_TEXT = 65536
# Candidate objects tried per text: each json.loads is cheap, but a text full of braces should not stall.
MAX_CANDIDATES = 24
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})
_LITERALS = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}
_ESCAPES = set('"\\/bfnrtu')
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def _loads(text: str, want: type) -> Any:
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, want) else None


def balanced_spans(text: str, open_ch: str = "{", limit: int = MAX_CANDIDATES) -> list[str]:
    """Substrings from an opening brace to its matching close (strings respected), in order of appearance."""
    close_ch = "}" if open_ch == "{" else "]"
    out: list[str] = []
    start = text.find(open_ch)
    while start != -1 and len(out) < limit:
        depth, in_str, esc, end = 0, None, False, -1
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                if esc:
                    esc = False
                elif ch == "\\":
                    esc = True
                elif ch == in_str:
                    in_str = None
            elif ch in "\"":
                in_str = ch
            elif ch == open_ch:
                depth += 1
            elif ch == close_ch:
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if end == -1:
            out.append(text[start:])  # unclosed: the repair stage may close it
            break
        out.append(text[start:end + 1])
        start = text.find(open_ch, start + 1)
    return out


def _read_string(text: str, i: int, quote: str) -> tuple[str, int]:
    """The string starting at text[i] (a quote) re-encoded as a JSON string, and the index after it."""
    buf, j = [], i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\" and j + 1 < len(text):
            nxt = text[j + 1]
            # \' is not a JSON escape (the quote needs none); an unknown escape becomes a literal backslash
            buf.append("'" if nxt == "'" else ("\\" + nxt if nxt in _ESCAPES else "\\\\" + nxt))
            j += 2
            continue
        if ch == quote:
            return _encode(buf), j + 1
        if ch == '"' and quote == "'":
            buf.append('\\"')
        elif ch == "\n":
            buf.append("\\n")
        elif ch == "\t":
            buf.append("\\t")
        elif ch == "\r":
            pass
        else:
            buf.append(ch)
        j += 1
    return _encode(buf), j  # unterminated (cut off): closed here


def _encode(buf: list[str]) -> str:
    return '"' + "".join(buf) + '"'


def repair(text: str) -> str:
    """Rewrite near-JSON into JSON: quotes, Python literals, trailing commas, bare keys, missing closers."""
    text = text.translate(_SMART)
    out: list[str] = []
    stack: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            token, i = _read_string(text, i, ch)
            out.append(token)
            continue
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
            out.append(ch)
        elif ch in "}]":
            while out and out[-1].strip() in (",", ""):  # trailing comma (and the blanks before it)
                out.pop()
            if stack:
                out.append(stack.pop())
            if not stack:
                break  # the first complete value ends here; prose after it is not JSON
        elif ch.isalpha() or ch == "_":
            match = _BARE.match(text, i)
            word = match.group(0)
            i = match.end()
            if word in _LITERALS:
                out.append(_LITERALS[word])
            else:
                out.append(json.dumps(word))  # a bare key (`answer: "B"`) or a bare word value
            continue
        elif ch == "#" or (ch == "/" and text.startswith("//", i)):
            nl = text.find("\n", i)
            i = n if nl == -1 else nl
            continue
        else:
            out.append(ch)
        i += 1
    while out and out[-1].strip() in (",", ":", ""):
        out.pop()
    out.extend(reversed(stack))
    return "".join(out)


def extract_json(text: Any, want: type = dict) -> tuple[Any, str]:
    """(object, how) with how in direct | fenced | span | repaired; (None, reason) when nothing parses."""
    if isinstance(text, want):
        return text, "direct"
    if not isinstance(text, str):
        return None, "not_text"
    text = text[:MAX_TEXT].strip()
    if not text:
        return None, "empty"
    obj = _loads(text, want)
    if obj is not None:
        return obj, "direct"
    open_ch = "{" if want is dict else "["
    blocks = [b.strip() for b in _FENCE.findall(text)]
    for block in blocks:
        obj = _loads(block, want)
        if obj is not None:
            return obj, "fenced"
    spans = balanced_spans(text, open_ch)
    for span in spans:
        obj = _loads(span, want)
        if obj is not None:
            return obj, "span"
    for candidate in blocks + spans:
        obj = _loads(repair(candidate), want)
        if obj is not None:
            return obj, "repaired"
    return None, "no_json"
