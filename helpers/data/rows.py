"""Rows -> shared records: the collector every reader uses, and the row mappings of upstream files and hub rows.

The mappings are pure functions of a row dict, so every hub schema is tested offline with hand-made rows.

Schemas as the dataset cards list them (features in each card's `dataset_info`):
cais/mmlu {question, subject, choices[str], answer: ClassLabel int 0-3};
allenai/ai2_arc {id, question, choices{text[], label[]}, answerKey} (labels A-E or 1-4);
tau/commonsense_qa {id, question, question_concept, choices{label[], text[]}, answerKey ("" in test)};
allenai/openbookqa {id, question_stem, choices{text[], label[]}, answerKey; config "additional" adds fact1,
humanScore, clarity, turkIdAnonymized}; allenai/sciq {question, distractor3, distractor1, distractor2,
correct_answer, support}; mandarjoshi/trivia_qa {question, question_id, question_source, answer{aliases[],
normalized_aliases[], value, normalized_value, ...}}; Rowan/hellaswag {ind, activity_label, ctx_a, ctx_b, ctx,
endings[], source_id, split, split_type, label: str ("" in test)}; allenai/winogrande {sentence, option1,
option2, answer: str ("" in test)}. SciQ, HellaSwag and WinoGrande rows have the upstream files' field names,
so the file readers use the same mappings (sciq_row, hellaswag_row, winogrande_row).
"""

from __future__ import annotations

import collections
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from helpers.records import RecordError, make_record, normalize_text, undecodable, validate

Row = Any  # a dict (JSON formats), a list of fields (CSV/TSV), or a RecordError for an unparsable row
Convert = Callable[[Row], "dict | None"]


@dataclass
class ReadResult:
    """One file (or hub split) read: records, open-ended questions, and counts that add up."""

    path: str
    fmt: str
    source: str
    records: list[dict] = field(default_factory=list)
    open_ended: list[dict] = field(default_factory=list)
    read: int = 0
    unlabeled: int = 0
    dropped: collections.Counter = field(default_factory=collections.Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def check(self) -> None:
        """Assert read == kept + open-ended + unlabeled + dropped (nothing lost silently)."""
        total = len(self.records) + len(self.open_ended) + self.unlabeled + sum(self.dropped.values())
        assert self.read == total, f"{self.path}: read {self.read} != accounted {total}"


# ---------------------------------------------------------------- the collector (file and hub readers)

def collect(res: ReadResult, rows: Iterable[tuple[str, Row]], convert: Convert, *, tolerant: bool) -> None:
    """Convert each (where, row) into res; strict raises the first located error, tolerant counts it.

    `convert` may use `res.read` as the 1-based number of the row it is given (ids for id-less formats).
    """
    for where, row in rows:
        res.read += 1
        try:
            if isinstance(row, RecordError):
                raise row
            out = convert(row)
            if out is None:
                res.unlabeled += 1
            elif "answer_text" in out and "choices" not in out:  # built by open_question()
                res.open_ended.append(out)
            else:
                res.records.append(validate(out, res.path, where))
        except RecordError as exc:
            exc = RecordError(exc.reason, exc.problem, exc.path or res.path, exc.where or where, exc.field)
            if not tolerant:
                raise exc from None
            res.dropped[exc.reason] += 1
            res.examples.setdefault(exc.reason, str(exc))


Mapper = Callable[[dict, "str | None", str], "dict | None"]  # (row, config, fallback id) -> record/open/None


# ---------------------------------------------------------------- row pieces shared by file and hub rows

def text_field(value: Any, name: str, *, allow_empty: bool = False) -> str:
    """A stripped text field, or RecordError (missing_field / non_text_field / bad_encoding / empty_text)."""
    if value is None:
        raise RecordError("missing_field", "is missing", field=name)
    if not isinstance(value, str):
        raise RecordError("non_text_field", f"expected text, got {type(value).__name__}", field=name)
    if undecodable(value):  # U+FFFD or a lone surrogate
        raise RecordError("bad_encoding", "contains undecodable characters (U+FFFD or surrogates)", field=name)
    value = value.replace("\r\n", "\n").strip()
    if not value and not allow_empty:
        raise RecordError("empty_text", "is empty", field=name)
    return value


def choice_index(labels: list[Any], key: Any, name: str = "answerKey") -> int:
    """Position of the choice whose label equals the answer key ('C' or '3' alike)."""
    labels = [str(x).strip() for x in labels]
    if len(set(labels)) != len(labels):
        raise RecordError("bad_label", f"duplicate choice labels {labels}", field=name)
    key = str(key).strip()
    if key not in labels:
        raise RecordError("bad_label", f"{key!r} is not one of the choice labels {labels}", field=name)
    return labels.index(key)


def open_question(*, id: str, source: str, question: Any, answer_text: Any, aliases: Iterable[Any] = (),
                  topic: str = "", explanation: str = "") -> dict:
    """An open-ended question for convert.py; aliases deduplicated and without the answer itself."""
    answer = text_field(answer_text, "answer_text")
    seen, kept = {normalize_text(answer)}, []
    for i, alias in enumerate(aliases):
        alias = text_field(alias, f"aliases[{i}]", allow_empty=True)
        key = normalize_text(alias)
        if alias and key not in seen:
            seen.add(key)
            kept.append(alias)
    return {"id": id, "source": source, "question": text_field(question, "question"), "answer_text": answer,
            "aliases": kept, "topic": topic, "explanation": explanation}


# ---------------------------------------------------------------- upstream rows (files; SciQ, HellaSwag and
# WinoGrande hub rows carry the same field names, so one mapping serves both)

def arc_row(row: dict, source: str, fallback: str) -> dict | None:
    """ARC / OpenBookQA / CommonsenseQA files: {id, question{stem, choices[{text,label}], question_concept?},
    answerKey, fact1?}; labels A-E or 1-4; fact1 (OpenBookQA Additional) becomes the explanation."""
    q = row.get("question")
    if not isinstance(q, dict):
        raise RecordError("missing_field", "expected an object with stem and choices", field="question")
    choices = q.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise RecordError("missing_field", "expected a list of {text, label}", field="question.choices")
    key = row.get("answerKey")
    if key is None or not str(key).strip():
        return None  # CommonsenseQA's test split has no answerKey
    answer = choice_index([c.get("label") for c in choices], key)
    return make_record(id=f"{source}/{row.get('id') or fallback}", source=source,
                       question=text_field(q.get("stem"), "question.stem"),
                       choices=[c.get("text") for c in choices], answer=answer,
                       explanation=text_field(row.get("fact1") or "", "fact1", allow_empty=True),
                       topic=text_field(q.get("question_concept") or "", "question_concept", allow_empty=True))


def triviaqa_row(row: dict, source: str) -> dict | None:
    """TriviaQA file entry {Question, QuestionId, Answer{Value, Aliases, NormalizedAliases}} -> open-ended."""
    answer = row.get("Answer")
    if answer is None:
        return None  # the *-test-without-answers files
    if not isinstance(answer, dict):
        raise RecordError("missing_field", "expected an object with Value and Aliases", field="Answer")
    aliases = list(answer.get("Aliases") or []) + list(answer.get("NormalizedAliases") or [])
    return open_question(id=f"{source}/{row.get('QuestionId')}", source=source, question=row.get("Question"),
                         answer_text=answer.get("Value"), aliases=aliases)


def sciq_row(row: dict, source: str, fallback: str) -> dict:
    """SciQ: the correct answer goes among the 3 distractors at a position fixed by a hash of the question."""
    question = text_field(row.get("question"), "question")
    correct = text_field(row.get("correct_answer"), "correct_answer")
    choices = [text_field(row.get(f"distractor{i}"), f"distractor{i}") for i in (1, 2, 3)]
    # sha256 of the question, not Python's salted hash(): same letter on every run and machine, ~uniform over A-D
    pos = int.from_bytes(hashlib.sha256(question.encode("utf-8", "surrogatepass")).digest()[:8], "big") % 4
    choices.insert(pos, correct)
    return make_record(id=f"{source}/{fallback}", source=source, question=question, choices=choices, answer=pos,
                       explanation=text_field(row.get("support") or "", "support", allow_empty=True))


def hellaswag_row(row: dict, source: str, fallback: str) -> dict | None:
    """HellaSwag: ctx is the question, the 4 endings the choices; no label (test split) means unlabeled."""
    ctx = row.get("ctx")
    if ctx is None and row.get("ctx_a") is not None:
        ctx = f"{row['ctx_a']} {row.get('ctx_b') or ''}"
    endings = row.get("endings")
    if not isinstance(endings, list):
        raise RecordError("missing_field", "expected a list of endings", field="endings")
    label = row.get("label")
    if label is None or (isinstance(label, str) and not label.strip()):
        return None
    if isinstance(label, bool) or not (isinstance(label, int) or (isinstance(label, str) and label.strip().isdigit())):
        raise RecordError("bad_label", f"{label!r} is not an ending index", field="label")
    rid = row.get("ind")
    return make_record(id=f"{source}/{rid if rid is not None else fallback}", source=source,
                       question=text_field(ctx, "ctx"), choices=endings, answer=int(label),
                       topic=text_field(row.get("activity_label") or "", "activity_label", allow_empty=True))


def winogrande_row(row: dict, source: str, fallback: str, listed: str | None = None) -> dict | None:
    """WinoGrande: the cloze sentence plus an ask, options 1/2; the answer from the row or the labels file."""
    sentence = text_field(row.get("sentence"), "sentence")
    if "_" not in sentence:
        raise RecordError("no_blank", "has no '_' blank to fill", field="sentence")
    answer = "" if row.get("answer") is None else str(row["answer"]).strip()
    if listed is not None:
        if listed not in ("1", "2"):
            raise RecordError("bad_label", f"the labels file gives {listed!r}, not '1' or '2'", field="labels")
        if answer and answer != listed:
            raise RecordError("bad_label", f"{answer!r} disagrees with the labels file ({listed!r})", field="answer")
        answer = listed
    if not answer:
        return None
    if answer not in ("1", "2"):
        raise RecordError("bad_label", f"{answer!r} is not '1' or '2'", field="answer")
    return make_record(id=f"{source}/{row.get('qID') or fallback}", source=source,
                       question=f'{sentence} Which option correctly fills the blank "_"?',
                       choices=[row.get("option1"), row.get("option2")], answer=int(answer) - 1)


# ---------------------------------------------------------------- hub rows

def _labelled(row: dict, source: str, stem_field: str, fallback: str, explanation: str = "",
              topic: str = "") -> dict | None:
    choices = row.get("choices")
    if not isinstance(choices, Mapping) or not isinstance(choices.get("text"), list):
        raise RecordError("missing_field", "expected {text: [...], label: [...]}", field="choices")
    key = row.get("answerKey")
    if key is None or not str(key).strip():
        return None  # CommonsenseQA's test split: answerKey ""
    answer = choice_index(list(choices.get("label") or []), key)
    return make_record(id=f"{source}/{row.get('id') or fallback}", source=source,
                       question=text_field(row.get(stem_field), stem_field), choices=list(choices["text"]),
                       answer=answer, explanation=explanation, topic=topic)


def map_mmlu(row: dict, config: str | None, fallback: str) -> dict | None:
    """cais/mmlu: answer is a ClassLabel index (-1 would mean no label)."""
    subject = row.get("subject") or (config if config not in (None, "all") else "")
    source = f"mmlu/{subject}" if subject else "mmlu"
    answer = row.get("answer")
    if answer is None or answer == -1 or answer == "":
        return None
    if isinstance(answer, str) and answer.strip().upper() in ("A", "B", "C", "D"):
        answer = "ABCD".index(answer.strip().upper())
    if isinstance(answer, bool) or not isinstance(answer, int):
        raise RecordError("bad_label", f"{answer!r} is not a choice index", field="answer")
    choices = row.get("choices")
    if not isinstance(choices, (list, tuple)):
        raise RecordError("missing_field", "expected a list of 4 choices", field="choices")
    return make_record(id=f"{source}/{fallback}", source=source, question=row.get("question"), choices=list(choices),
                       answer=answer, topic=str(subject).replace("_", " "))


def map_arc(row: dict, config: str | None, fallback: str) -> dict | None:
    """allenai/ai2_arc: config ARC-Challenge / ARC-Easy names the source."""
    source = {"arc-challenge": "arc/challenge", "arc-easy": "arc/easy"}.get(str(config).lower(), "arc")
    return _labelled(row, source, "question", fallback)


def map_commonsenseqa(row: dict, config: str | None, fallback: str) -> dict | None:
    """tau/commonsense_qa: question_concept is the topic; test rows have answerKey ""."""
    topic = text_field(row.get("question_concept") or "", "question_concept", allow_empty=True)
    return _labelled(row, "commonsenseqa", "question", fallback, topic=topic)


def map_openbookqa(row: dict, config: str | None, fallback: str) -> dict | None:
    """allenai/openbookqa: question_stem; the "additional" config's fact1 becomes the explanation."""
    fact = text_field(row.get("fact1") or "", "fact1", allow_empty=True)
    return _labelled(row, "openbookqa", "question_stem", fallback, explanation=fact)


def map_sciq(row: dict, config: str | None, fallback: str) -> dict | None:
    """allenai/sciq: same fields as the upstream JSON."""
    return sciq_row(row, "sciq", fallback)


def map_triviaqa(row: dict, config: str | None, fallback: str) -> dict | None:
    """mandarjoshi/trivia_qa: open-ended; the test split's answer value is empty or "<unk>"."""
    answer = row.get("answer")
    if not isinstance(answer, Mapping) or str(answer.get("value") or "").strip() in ("", "<unk>"):
        return None
    aliases = list(answer.get("aliases") or []) + list(answer.get("normalized_aliases") or [])
    return open_question(id=f"triviaqa/{row.get('question_id') or fallback}", source="triviaqa",
                         question=row.get("question"), answer_text=answer.get("value"), aliases=aliases)


def map_hellaswag(row: dict, config: str | None, fallback: str) -> dict | None:
    """Rowan/hellaswag: label is a string ("" in test)."""
    return hellaswag_row(row, "hellaswag", fallback)  # no `ind` on a row -> the fallback "<split>-<n>"


def map_winogrande(row: dict, config: str | None, fallback: str) -> dict | None:
    """allenai/winogrande: answer "1"/"2" ("" in test); rows have no qID."""
    return winogrande_row(row, "winogrande", fallback)
