"""Readers for upstream Q/A files: each file becomes shared records, open-ended questions and counted drops.

Every row a reader sees ends up in exactly one bucket (record, open-ended, unlabeled, dropped by reason),
so `ReadResult.check()` proves nothing was lost. This module splits files into located rows (CSV records,
JSONL lines, JSON array elements); helpers.data.rows maps rows to records, for upstream files and hub datasets alike.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterator

from helpers.data.hub import read_hub
from helpers.data.rows import (ReadResult, Row, arc_row, choice_index, collect, hellaswag_row, open_question, sciq_row,
                               text_field, triviaqa_row, winogrande_row)
from helpers import config
from helpers.io import InputError
from helpers.records import LETTERS, RecordError, make_record

FORMATS: tuple[str, ...] = ("mmlu_csv", "arc_jsonl", "obqa_tsv", "commonsenseqa", "sciq", "triviaqa",
                            "hellaswag", "winogrande", "kit_jsonl")
DATA_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl")
# Held out of every dataset: the elimination round's seeding set (helpers.agents.home.seeding) scores the A-agent on
# questions it never trained or validated on; a source that is it, or a folder holding it, is refused.
HELD_OUT = (config.project_root() / "data" / "seeding.jsonl").resolve()
SNIFF_BYTES = 65536  # enough for the first record of every upstream format (largest: a TriviaQA entry, ~3 KB)
OBQA_TSV_COLUMNS = ("Question Stem", "Choices", "Answer Key")  # + optional "ID", "Complete Question"

# ---------------------------------------------------------------- raw rows: JSONL lines, JSON arrays, CSV records

def _text(path: Path) -> str:
    # surrogateescape: a bad byte becomes a surrogate that validate() reports as bad_encoding on its own record
    return path.read_bytes().decode("utf-8", "surrogateescape").removeprefix("\ufeff")


def _obj(where: str, obj: Any) -> tuple[str, Row]:
    if isinstance(obj, dict):
        return where, obj
    return where, RecordError("not_an_object", f"expected a JSON object, got {type(obj).__name__}")


def _jsonl_rows(path: Path) -> Iterator[tuple[str, Row]]:
    n = 0
    for lineno, line in enumerate(_text(path).split("\n"), 1):
        if not line.strip():
            continue
        n += 1
        where = f"{n} (line {lineno})"
        try:
            yield _obj(where, json.loads(line))
        except json.JSONDecodeError as exc:
            yield where, RecordError("bad_json", f"not valid JSON ({exc.msg}, col {exc.colno})")


def _json_array_rows(path: Path, text: str) -> Iterator[tuple[str, Row]]:
    """Elements of a top-level JSON array, each located by its line (raw_decode walks element by element)."""
    dec, ws = json.JSONDecoder(), re.compile(r"\s*")
    i = ws.match(text, 0).end()
    if text[i:i + 1] != "[":
        raise InputError(path, None, None, "expected a JSON array (or one object per line)")
    i, line, n = ws.match(text, i + 1).end(), 1, 0
    mark = 0
    while text[i:i + 1] != "]":
        line += text.count("\n", mark, i)
        mark = i
        try:
            obj, end = dec.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"line {exc.lineno} col {exc.colno}", None, f"not valid JSON ({exc.msg})") from None
        n += 1
        yield _obj(f"{n} (line {line})", obj)
        i = ws.match(text, end).end()
        if text[i:i + 1] == ",":
            i = ws.match(text, i + 1).end()
        elif text[i:i + 1] != "]":
            lineno = text.count("\n", 0, i) + 1
            raise InputError(path, f"line {lineno}", None, "not valid JSON (expected ',' or ']' after an element)")


def _csv_rows(path: Path, delimiter: str) -> Iterator[tuple[int, list[str] | RecordError]]:
    """(first line, fields) per CSV record; quoted newlines, CRLF and a missing final newline all handled."""
    # strict: a stray quote is an error for its own record (the reader resumes on the next line) instead of
    # silently gluing fields; QUOTE_NONE for TSV because OBQA's text holds bare quotes
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader = csv.reader(io.StringIO(_text(path), newline=""), delimiter=delimiter, quoting=quoting, strict=True)
    last = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if "end of data" in str(exc):  # a quote opened at line last+1 never closes: no later record is knowable
                raise InputError(path, f"line {last + 1}", None, f"a quoted field never closes (runs to line "
                                 f"{reader.line_num}, the end of the file); fix the quote") from None
            yield last + 1, RecordError("bad_csv_row", f"CSV syntax error ({exc})")
            last = reader.line_num
            continue
        first, last = last + 1, reader.line_num
        joined = "".join(row)
        if joined.strip():  # some cell is not blank
            # a quoted newline in a CRLF file keeps its \r: drop it
            yield first, [cell.replace("\r\n", "\n") for cell in row] if "\r" in joined else row


# ---------------------------------------------------------------- the format readers

def _read_mmlu(path: Path, res: ReadResult, tolerant: bool) -> None:
    m = re.fullmatch(r"(.+)_(dev|val|test|train)", path.stem)
    subject, split = (m.group(1), m.group(2)) if m else (path.stem, path.stem)
    topic = subject.replace("_", " ")

    def convert(row: list[str]) -> dict:
        if len(row) != 6:
            raise RecordError("bad_csv_row", f"has {len(row)} fields, expected 6 (question,A,B,C,D,answer)")
        key = row[5].strip().upper()
        if key not in ("A", "B", "C", "D"):
            raise RecordError("bad_label", f"{row[5]!r} is not one of A-D", field="answer")
        return make_record(id=f"{res.source}/{split}-{res.read}", source=res.source, question=row[0],
                           choices=row[1:5], answer="ABCD".index(key), topic=topic)

    def rows() -> Iterator[tuple[str, Row]]:
        n = 0
        for first, row in _csv_rows(path, ","):
            # a header row (third-party copies add "question,A,B,C,D,answer") is not data: skipped, not counted
            if n == 0 and isinstance(row, list) and len(row) == 6 and row[5].strip().lower() == "answer":
                continue
            n += 1
            yield f"{n} (line {first})", row

    res.source = res.source or f"mmlu/{subject}"
    collect(res, rows(), convert, tolerant=tolerant)


def _source_from_path(path: Path) -> str | None:
    hint = "/".join(path.parts[-3:]).lower()
    for needle, source in (("openbookqa", "openbookqa"), ("obqa", "openbookqa"), ("challenge", "arc/challenge"),
                           ("easy", "arc/easy"), ("arc", "arc")):
        if needle in hint:
            return source
    return None


def _read_arc(path: Path, res: ReadResult, tolerant: bool) -> None:
    rows = list(_jsonl_rows(path))
    if not res.source:
        first = next((r for _, r in rows if isinstance(r, dict)), {})
        # no hint in the path: OpenBookQA has fact1 (Additional) or numeric ids like "8-343"; ARC ids have letters
        obqa = "fact1" in first or re.fullmatch(r"\d+(-\d+)?", str(first.get("id", ""))) is not None
        res.source = _source_from_path(path) or ("openbookqa" if obqa else "arc")

    stem = path.stem  # a Path property: computed once, not per row
    collect(res, rows, lambda row: arc_row(row, res.source, f"{stem}-{res.read}"), tolerant=tolerant)


def _split_packed(packed: str) -> list[str]:
    """'(A) x (B) y (C) z' -> ['x', 'y', 'z']; markers must appear in letter order."""
    parts, pos = [], 0
    for i, lab in enumerate(LETTERS):
        j = packed.find(f"({lab})", pos)
        if j < 0:
            break
        if i == 0 and packed[:j].strip():
            raise RecordError("bad_choices", "text before '(A)'", field="Choices")
        if i:
            parts.append(packed[pos:j].strip())
        pos = j + 3
    if pos == 0:
        raise RecordError("bad_choices", "no '(A) ... (B) ...' options found", field="Choices")
    return parts + [packed[pos:].strip()]


def _read_obqa_tsv(path: Path, res: ReadResult, tolerant: bool) -> None:
    records = _csv_rows(path, "\t")
    first = next(records, None)
    header = [c.strip() for c in first[1]] if first and isinstance(first[1], list) else []
    missing = [c for c in OBQA_TSV_COLUMNS if c not in header]
    if missing:
        raise InputError(path, "line 1", None, f"header lacks column(s) {missing}; expected ID, Question Stem, "
                                                 "Choices, Complete Question, Answer Key")
    col = {name: header.index(name) for name in header}
    res.source = res.source or "openbookqa"

    def convert(row: list[str]) -> dict | None:
        if len(row) != len(header):
            raise RecordError("bad_csv_row", f"has {len(row)} tab-separated fields, header has {len(header)}")
        key = row[col["Answer Key"]].strip()
        if not key:
            return None
        choices = _split_packed(row[col["Choices"]])
        answer = choice_index(LETTERS[:len(choices)], key, "Answer Key")
        rid = row[col["ID"]].strip() if "ID" in col else ""
        return make_record(id=f"{res.source}/{rid or res.read}", source=res.source,
                           question=row[col["Question Stem"]], choices=choices, answer=answer)

    rows = ((f"{n} (line {line})", row) for n, (line, row) in enumerate(records, 1))
    collect(res, rows, convert, tolerant=tolerant)


def _read_sciq(path: Path, res: ReadResult, tolerant: bool) -> None:
    text = _text(path)
    rows = _json_array_rows(path, text) if text.lstrip().startswith("[") else _jsonl_rows(path)
    res.source = res.source or "sciq"
    stem = path.stem
    collect(res, rows, lambda row: sciq_row(row, res.source, f"{stem}-{res.read}"), tolerant=tolerant)


def _read_triviaqa(path: Path, res: ReadResult, tolerant: bool) -> None:
    try:
        top = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno} col {exc.colno}", None, f"not valid JSON ({exc.msg})") from None
    if not isinstance(top, dict) or not isinstance(top.get("Data"), list):
        raise InputError(path, None, "Data", 'expected one object {"Data": [questions...]} (TriviaQA layout)')
    res.source = res.source or "triviaqa"

    rows = (_obj(f"{n} (QuestionId {q.get('QuestionId') if isinstance(q, dict) else '?'})", q)
            for n, q in enumerate(top["Data"], 1))
    collect(res, rows, lambda row: triviaqa_row(row, res.source), tolerant=tolerant)


def _read_hellaswag(path: Path, res: ReadResult, tolerant: bool) -> None:
    res.source = res.source or "hellaswag"
    stem = path.stem
    collect(res, _jsonl_rows(path), lambda row: hellaswag_row(row, res.source, f"{stem}-{res.read}"),
            tolerant=tolerant)


def labels_file(path: Path) -> Path:
    """The WinoGrande labels list that goes with a .jsonl (dev.jsonl -> dev-labels.lst)."""
    return path.with_name(f"{path.stem}-labels.lst")


def _read_winogrande(path: Path, res: ReadResult, tolerant: bool) -> None:
    rows = list(_jsonl_rows(path))
    lst, listed = labels_file(path), None
    if lst.is_file():
        listed = [line.strip() for line in _text(lst).split("\n") if line.strip()]
        if len(listed) != len(rows):
            raise InputError(lst, None, None, f"has {len(listed)} labels but {path.name} has {len(rows)} rows "
                                              "(line N labels row N, so the counts must match)")
    res.source = res.source or "winogrande"
    # label line N belongs to row N, also when row N itself is unreadable: pair by position via res.read
    stem = path.stem
    collect(res, rows, lambda row: winogrande_row(row, res.source, f"{stem}-{res.read}",
                                                   None if listed is None else listed[res.read - 1]),
            tolerant=tolerant)


def _read_kit(path: Path, res: ReadResult, tolerant: bool) -> None:
    forced = res.source

    def convert(row: dict) -> dict | None:
        rec = dict(row)
        rec["source"] = forced or rec.get("source") or path.stem
        rec["id"] = rec.get("id") or f"{rec['source']}/{path.stem}-{res.read}"
        if rec.get("choices") is None and "answer_text" in rec:
            aliases = rec.get("aliases") or []
            if not isinstance(aliases, list):
                raise RecordError("non_text_field", f"expected a list, got {type(aliases).__name__}", field="aliases")
            return open_question(id=str(rec["id"]), source=str(rec["source"]), question=rec.get("question"),
                                 answer_text=rec["answer_text"], aliases=aliases,
                                 topic=text_field(rec.get("topic") or "", "topic", allow_empty=True),
                                 explanation=text_field(rec.get("explanation") or "", "explanation", allow_empty=True))
        if isinstance(rec.get("choices"), list) and rec.get("answer") is None:
            return None  # questions without a key (e.g. an exported test set): reported, never guessed
        return rec

    collect(res, _jsonl_rows(path), convert, tolerant=tolerant)
    sources = sorted({r["source"] for r in res.records + res.open_ended})
    res.source = forced or ",".join(sources) or path.stem


_READERS: dict[str, Callable[[Path, ReadResult, bool], None]] = {
    "mmlu_csv": _read_mmlu, "arc_jsonl": _read_arc, "obqa_tsv": _read_obqa_tsv, "commonsenseqa": _read_arc,
    "sciq": _read_sciq, "triviaqa": _read_triviaqa, "hellaswag": _read_hellaswag, "winogrande": _read_winogrande,
    "kit_jsonl": _read_kit,
}
_DEFAULT_SOURCE = {"commonsenseqa": "commonsenseqa"}  # arc_jsonl decides from path/content; others in the reader


# ---------------------------------------------------------------- detection and entry points

def _sniff_object(obj: dict) -> str | None:
    q = obj.get("question")
    if isinstance(q, dict) and "choices" in q:
        return "commonsenseqa" if "question_concept" in q else "arc_jsonl"
    if "endings" in obj and ("ctx" in obj or "ctx_a" in obj):
        return "hellaswag"
    if "sentence" in obj and "option1" in obj and "option2" in obj:
        return "winogrande"
    if "correct_answer" in obj and "distractor1" in obj:
        return "sciq"
    if isinstance(q, str) and (isinstance(obj.get("choices"), list) or "answer_text" in obj):
        return "kit_jsonl"
    return None


def _sniff(head: str, suffix: str) -> str | None:
    s = head.lstrip()
    if s.startswith("["):
        return "sciq" if re.search(r'"(correct_answer|distractor1)"\s*:', s) else None
    if s.startswith("{"):
        try:
            obj = json.loads(s.split("\n", 1)[0])
        except json.JSONDecodeError:  # not one object per line: a pretty-printed single JSON object
            return "triviaqa" if re.search(r'"Data"\s*:\s*\[', s) else None
        return _sniff_object(obj) if isinstance(obj, dict) else None
    first_line = s.split("\n", 1)[0]
    if suffix == ".tsv" or (suffix != ".csv" and "\t" in first_line):
        cols = {c.strip() for c in first_line.split("\t")}
        return "obqa_tsv" if set(OBQA_TSV_COLUMNS) <= cols else None
    try:
        row = next(csv.reader(io.StringIO(s, newline="")))
    except (csv.Error, StopIteration):
        return None
    return "mmlu_csv" if len(row) == 6 and row[5].strip().upper() in ("A", "B", "C", "D", "ANSWER") else None


def detect_format(path: str | Path) -> str:
    """The format of a file from its name and first bytes; InputError naming the file if unknown."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, None, "no such file")
    if path.suffix.lower() == ".lst":
        raise InputError(path, None, None, "a WinoGrande labels list is read with its .jsonl "
                                           "(X.jsonl + X-labels.lst): pass the .jsonl or the folder")
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES).decode("utf-8", "replace").removeprefix("\ufeff")
    if not head.strip():
        raise InputError(path, None, None, "is empty")
    fmt = _sniff(head, path.suffix.lower())
    if fmt is None:
        raise InputError(path, None, None, f"unrecognised format; pass fmt= one of {', '.join(FORMATS)}")
    return fmt


def read_file(path: str | Path, fmt: str | None = None, *, tolerant: bool = True,
              source: str | None = None) -> ReadResult:
    """Read one file in an upstream format (detected unless fmt is given) into a checked ReadResult."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, None, "no such file")
    if path.suffix.lower() == ".lst":
        detect_format(path)  # raises: a labels list is only read with its .jsonl
    fmt = fmt or detect_format(path)
    if fmt not in _READERS:
        raise InputError(path, None, None, f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    res = ReadResult(path=str(path), fmt=fmt, source=source or _DEFAULT_SOURCE.get(fmt, ""))
    _READERS[fmt](path, res, tolerant)
    res.check()
    return res


def read_source(spec: str, fmt: str | None = None, *, tolerant: bool = True) -> list[ReadResult]:
    """A file, a folder (every data file under it, sorted) or "hub:<dataset>[:<config>][@<split>]"."""
    spec = str(spec)
    if spec.startswith("hub:"):  # `datasets` is imported only here, inside hub.load_rows
        return read_hub(spec, tolerant=tolerant)
    path = Path(spec)
    if path.exists() and (path.resolve() == HELD_OUT or HELD_OUT.is_relative_to(path.resolve())):
        raise InputError(path, None, None, f"holds {HELD_OUT.name}, the elimination round's seeding set: it is held "
                                           "out of every training and validation set (name the files you want)")
    if path.is_file():
        return [read_file(path, fmt, tolerant=tolerant)]
    if not path.is_dir():
        raise InputError(path, None, None, 'no such file or folder (hub datasets are "hub:<dataset>")')
    files = sorted(p for p in path.rglob("*")
                   if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))
    for lst in (p for p in files if p.suffix.lower() == ".lst"):
        stem = lst.name.removesuffix(lst.suffix).removesuffix("-labels")
        if lst.name != f"{stem}-labels.lst" or lst.with_name(f"{stem}.jsonl") not in files:
            raise InputError(lst, None, None, "a labels list without its X.jsonl beside it (expected X-labels.lst)")
    data = [p for p in files if p.suffix.lower() in DATA_SUFFIXES]
    if not data:
        raise InputError(path, None, None, f"no data files ({' '.join(DATA_SUFFIXES)}) under this folder")
    return [read_file(p, fmt, tolerant=tolerant) for p in data]
