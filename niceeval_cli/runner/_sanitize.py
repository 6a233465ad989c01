"""Make a sealed attempt storable whatever the eval, the adapter or the judge put in it (pure).

SQLite stores UTF-8 text and 64-bit integers. A lone surrogate ("\\ud800", which JSON decoding
happily produces) cannot be encoded, and token usage of 10**30 does not fit: either would make
sealing raise. Surrogates are replaced with U+FFFD; out-of-range usage is treated as unreported
(None). What was changed is said in `AttemptRecord.notes` (a JSON list of strings).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .._records import AssertionResult, AttemptRecord

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
_USAGE_FIELDS = ("input_tokens", "output_tokens")

R = TypeVar("R", AttemptRecord, AssertionResult)


def fits_int64(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX


def replace_surrogates(text: str) -> tuple[str, int]:
    """`text` with every surrogate code point replaced by U+FFFD, and how many were."""
    cleaned, n = _SURROGATE.subn("\ufffd", text)
    return cleaned, n


_TEXT_FIELDS: dict[type, tuple[str, ...]] = {}


def _text_fields(cls: type) -> tuple[str, ...]:
    """The fields of a record class that may hold text (annotated `str` or `str | None`)."""
    names = _TEXT_FIELDS.get(cls)
    if names is None:
        names = _TEXT_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls) if "str" in str(f.type))
    return names


def usage_note(field: str, value: int) -> str:
    digits = len(str(abs(value)))
    return f"{field} of {digits} digits is outside the storable range: treated as unreported"


@dataclass(frozen=True)
class Cleaned:
    attempt: AttemptRecord
    results: tuple[AssertionResult, ...]
    replaced_code_points: int
    usage_unreported: int  # usage values dropped as out of range (here or during the attempt)


def clean_sealed(
    attempt: AttemptRecord, results: Sequence[AssertionResult], notes: Sequence[str] = (),
    usage_unreported: int = 0,
) -> Cleaned:
    """`attempt` and `results` made storable; `notes` (and what was changed here) end in `notes`."""
    said = list(notes)
    replaced = 0
    dropped = usage_unreported

    def text_fields(record: R, where: str) -> R:
        nonlocal replaced
        names = _text_fields(type(record))
        values = [v for v in map(record.__getattribute__, names) if isinstance(v, str)]
        joined = "".join(values)
        if joined.isascii() or _SURROGATE.search(joined) is None:  # the usual case: one C call
            return record
        changes: dict[str, Any] = {}
        for name in names:
            value = getattr(record, name)
            if isinstance(value, str):
                cleaned, n = replace_surrogates(value)
                if n:
                    changes[name] = cleaned
                    replaced += n
                    said.append(f"{where}{name}: {n} code point(s) that cannot be stored as UTF-8 "
                                "replaced with U+FFFD")
        return dataclasses.replace(record, **changes) if changes else record

    cleaned_results = []
    for result in results:
        result = text_fields(result, f"result {result.key}: ")
        if result.judge_tokens is not None and not fits_int64(result.judge_tokens):
            said.append(usage_note(f"result {result.key}: judge_tokens", result.judge_tokens))
            dropped += 1
            result = dataclasses.replace(result, judge_tokens=None)
        cleaned_results.append(result)
    attempt = text_fields(attempt, "")
    changes: dict[str, Any] = {}
    for name in _USAGE_FIELDS:
        value = getattr(attempt, name)
        if value is not None and not fits_int64(value):
            said.append(usage_note(name, value))
            dropped += 1
            changes[name] = None
    judge_tokens = sum(r.judge_tokens or 0 for r in cleaned_results)
    if judge_tokens != attempt.judge_tokens:
        changes["judge_tokens"] = judge_tokens if fits_int64(judge_tokens) else 0
    if said:
        earlier = json.loads(attempt.notes) if attempt.notes else []
        notes_text = json.dumps([*earlier, *said], ensure_ascii=False)
        changes["notes"] = replace_surrogates(notes_text)[0]
    if changes:
        attempt = dataclasses.replace(attempt, **changes)
    return Cleaned(attempt, tuple(cleaned_results), replaced, dropped)


def clean_value(value: Any, depth: int = 0) -> tuple[Any, int]:
    """A JSON-like value with surrogates replaced in every string (keys too), and how many were.
    Used only when encoding the value failed, so the common path pays nothing."""
    if isinstance(value, str):
        return replace_surrogates(value)
    if depth > 200:
        return value, 0
    if isinstance(value, dict):
        total = 0
        out: dict[Any, Any] = {}
        for k, v in value.items():
            k2, n1 = clean_value(k, depth + 1)
            v2, n2 = clean_value(v, depth + 1)
            out[k2] = v2
            total += n1 + n2
        return out, total
    if isinstance(value, (list, tuple)):
        items = [clean_value(v, depth + 1) for v in value]
        return type(value)(v for v, _ in items), sum(n for _, n in items)
    return value, 0
