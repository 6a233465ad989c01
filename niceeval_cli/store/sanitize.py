"""Making a record storable whatever text or numbers it carries (issue 9.1, 9.2).

SQLite stores UTF-8 text and 64-bit integers. A lone surrogate (`"\\ud800"`, which JSON decoders
and some adapters produce) cannot be encoded, and token usage of 10**30 does not fit; either
would abort the seal. Sealing tries the record as it is first (no cost on the normal path); only
when SQLite's binding refuses a value is the record cleaned: offending code points become U+FFFD,
integers out of range become NULL (unreported; 0 for the few NOT NULL counters), and each change
is appended to the attempt's `notes` (a JSON list of sentences).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
REPLACEMENT = "\ufffd"


def _unencodable(text: str) -> int:
    """How many code points of `text` UTF-8 cannot encode (lone surrogates)."""
    return sum(1 for ch in text if "\ud800" <= ch <= "\udfff")


def clean_text(text: str) -> tuple[str, int]:
    """`text` with every code point UTF-8 cannot encode replaced by U+FFFD, and how many were."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        count = _unencodable(text)
        return "".join(REPLACEMENT if "\ud800" <= ch <= "\udfff" else ch for ch in text), count
    return text, 0


def clean_values(
    values: Sequence[Any],
    columns: Mapping[str, type],
    where: str,
    notes: list[str],
    not_null: frozenset[str] = frozenset(),
) -> tuple[Any, ...]:
    """`values` (in `columns` order) made storable; every change described in `notes`."""
    cleaned = []
    for name, value in zip(columns, values, strict=True):
        if isinstance(value, str):
            value, count = clean_text(value)
            if count:
                notes.append(
                    f"{where}.{name}: {count} code point(s) that UTF-8 cannot encode (lone surrogates) "
                    "replaced by U+FFFD"
                )
        elif isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
            stored = 0 if name in not_null else None
            notes.append(
                f"{where}.{name}: {value} is outside SQLite's 64-bit integer range; stored as "
                f"{'0' if stored == 0 else 'NULL'} (unreported)"
            )
            value = stored
        cleaned.append(value)
    return tuple(cleaned)


def with_notes(existing: str | None, added: Sequence[str]) -> str | None:
    """The attempt's `notes` JSON list with `added` appended (an unparsable value is kept as an item)."""
    if not added:
        return existing
    items: list[Any] = []
    if existing:
        try:
            parsed = json.loads(existing)
        except ValueError:
            parsed = [existing]
        items = parsed if isinstance(parsed, list) else [parsed]
    return json.dumps([*items, *added], ensure_ascii=False)
