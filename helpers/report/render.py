"""The run report's tiny document model (headings, paragraphs, notes, lists, tables, images) as Markdown and HTML.

Blocks are built by helpers.report.build; nothing here parses Markdown, so text from the artifacts is escaped, never
interpreted. The HTML is one self-contained file: images as base64 data URIs, inline CSS, no scripts.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any
from urllib.parse import quote

MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml"}
CSS = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
       "table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:3px 8px;"
       "text-align:left;vertical-align:top}th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee}"
       "blockquote{margin:.5em 0;padding:.3em 1em;border-left:4px solid #d80;background:#fff8ee}"
       "code{background:#f3f3f3;padding:0 3px}")

# An inline is a str, or a list of str / ("code", text) / ("b", text) / ("link", text, href).
# A block is ("h", level, inline) | ("p", inline) | ("note", inline) | ("ul", [inline]) |
# ("table", [header], [[inline]]) | ("img", alt, path relative to the run folder).
Block = tuple


def _md_text(s: str) -> str:
    """Plain text made safe inside Markdown (tables included)."""
    s = str(s).replace("\\", "\\\\").replace("\n", " ")
    for ch in "`*[]|<>":
        s = s.replace(ch, "\\" + ch)
    return s


def _md_inline(x: Any) -> str:
    """One inline as Markdown."""
    if isinstance(x, tuple):
        if x[0] == "code":
            return f"`` {x[1]} ``" if "`" in x[1] else f"`{x[1]}`"
        if x[0] == "b":
            return f"**{_md_text(x[1])}**"
        return f"[{_md_text(x[1])}]({quote(x[2])})"
    return "".join(_md_inline(p) for p in x) if isinstance(x, list) else _md_text(x)


def _html_inline(x: Any) -> str:
    """One inline as HTML."""
    if isinstance(x, tuple):
        tag = {"code": "code", "b": "strong"}.get(x[0])
        return (f"<{tag}>{html.escape(str(x[1]))}</{tag}>" if tag
                else f'<a href="{html.escape(quote(x[2]), quote=True)}">{html.escape(str(x[1]))}</a>')
    return "".join(_html_inline(p) for p in x) if isinstance(x, list) else html.escape(str(x))


def to_markdown(blocks: list[Block]) -> str:
    """The report as Markdown with relative image and notebook links."""
    lines = []
    for b in blocks:
        if b[0] == "h":
            lines.append("#" * b[1] + " " + _md_inline(b[2]))
        elif b[0] == "p":
            lines.append(_md_inline(b[1]))
        elif b[0] == "note":
            lines.append("> " + _md_inline(b[1]))
        elif b[0] == "ul":
            lines.append("\n".join("- " + _md_inline(i) for i in b[1]))
        elif b[0] == "table":
            rows = [b[1], ["---"] * len(b[1])] + b[2]
            lines.append("\n".join("| " + " | ".join(_md_inline(c) for c in r) + " |" for r in rows))
        elif b[0] == "img":
            lines.append(f"![{_md_text(b[1])}]({quote(b[2])})")
    return "\n\n".join(lines) + "\n"


def to_html(blocks: list[Block], run_dir: Path, title: str) -> str:
    """The report as one HTML file: images inlined as base64 data URIs, nothing loaded from elsewhere."""
    body = []
    for b in blocks:
        if b[0] == "h":
            body.append(f"<h{b[1]}>{_html_inline(b[2])}</h{b[1]}>")
        elif b[0] == "p":
            body.append(f"<p>{_html_inline(b[1])}</p>")
        elif b[0] == "note":
            body.append(f"<blockquote>{_html_inline(b[1])}</blockquote>")
        elif b[0] == "ul":
            body.append("<ul>" + "".join(f"<li>{_html_inline(i)}</li>" for i in b[1]) + "</ul>")
        elif b[0] == "table":
            head = "".join(f"<th>{html.escape(h)}</th>" for h in b[1])
            rows = "".join("<tr>" + "".join(f"<td>{_html_inline(c)}</td>" for c in r) + "</tr>" for r in b[2])
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif b[0] == "img":
            path = Path(run_dir) / b[2]
            if not path.is_file():  # removed since the blocks were built
                body.append(f"<blockquote>plot missing: {html.escape(b[2])}</blockquote>")
                continue
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            body.append(f'<p><img alt="{html.escape(b[1], quote=True)}" '
                        f'src="data:{MIME.get(path.suffix.lower(), "image/png")};base64,{data}"></p>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
