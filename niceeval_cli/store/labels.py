"""Human labels (judge-trust.md, "Human labels"): checking, inserting and reading them back.

A label names an attempt, optionally one of its assertions by key, and a value on that
assertion's scale: a judge's fixed choices (stored in its `match_config`), else 0 / 1 (1 =
correct / pass). The table is insert-only (schema.py's triggers); a later label by the same
author for the same (attempt, key) supersedes the earlier one when computing, and all stay.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from .._ids import new_id, utc_now_iso
from .connect import write_transaction
from .db import Db
from .errors import StoreError, translated
from .schema import INSERT_LABELS, LABEL_COLUMNS

#: The scale of a non-judge assertion or a whole attempt: 0 = wrong / fail, 1 = correct / pass.
PASS_FAIL_SCALE: tuple[float, ...] = (0.0, 1.0)
_SHOWN_KEYS = 8
#: How far ahead of this machine's clock an imported label's time may be (another machine's clock).
_CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class LabelInput:
    """One label as a person gives it (the store adds its id, and its time unless it has one:
    a label carried over from another store by `label export` / `label import` keeps the time it
    was made, so it supersedes, and is superseded by, what it was when it was made)."""

    attempt_id: str
    assertion_key: str | None
    value: float
    author: str
    comment: str | None = None
    created_at: str | None = None  # as `label_time` gives it; None: dated when it is stored

    def __post_init__(self) -> None:
        unicode_text("the author", self.author)
        if self.comment is not None:
            unicode_text("the comment", self.comment)


@dataclass(frozen=True)
class LabelTarget:
    """What a label may name: an attempt, one of its assertion keys (None: the whole attempt),
    and the values on that assertion's scale."""

    attempt_id: str
    assertion_key: str | None
    scale: tuple[float, ...]


def unicode_text(what: str, text: str) -> None:
    """A StoreError for text the store cannot hold as UTF-8: a lone surrogate, as bytes that are not
    UTF-8 on a command line or a `\\ud800` escape in JSON become (SQLite would fail mid-write)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise StoreError(f"{what} is not valid Unicode: it holds a lone surrogate (\\u{ord(text[error.start]):04x} at "
                         f"character {error.start + 1}), which cannot be stored as UTF-8.") from None


def scale_of(match_name: str | None, match_config: str | None) -> tuple[float, ...]:
    """A judge assertion's measurement values (its stored choices), else pass / fail."""
    if match_config:
        try:
            config = json.loads(match_config)
        except ValueError:
            config = None
        choices = config.get("choices") if isinstance(config, dict) else None
        if isinstance(choices, dict) and "scale_version" in config and choices:
            values = {float(v) for v in choices.values() if isinstance(v, (int, float))}
            if values:
                return tuple(sorted(values))
    return PASS_FAIL_SCALE


def shown_value(value: float) -> str:
    """A scale value as people write it (1, 0, 0.4)."""
    return f"{value:g}"


def on_scale(value: float, scale: Sequence[float]) -> float | None:
    """The scale's own value equal to `value` (so 0.40 is stored as 0.4), else None."""
    if not math.isfinite(value):
        return None
    for allowed in scale:
        if abs(allowed - value) < 1e-9:
            return allowed
    return None


def find_target(db: Db, attempt_id: str, key: str | None) -> LabelTarget:
    """The attempt and key as stored, or a StoreError naming what is unknown (and the keys there are)."""
    conn, path = db.conn, db.path
    unicode_text("the attempt id", attempt_id)
    if key is not None:
        unicode_text("the assertion key", key)
    with translated(path, "Reading an attempt to label"):
        if conn.execute("SELECT 1 FROM attempts WHERE id = ?", [attempt_id]).fetchone() is None:
            raise StoreError(f"No attempt with id {attempt_id!r} in {path}; `niceeval query attempts --run all` "
                             "lists them.")
        if key is None:
            return LabelTarget(attempt_id, None, PASS_FAIL_SCALE)
        row = conn.execute("SELECT match_name, match_config FROM assertion_results WHERE attempt_id = ? AND key = ? "
                           "ORDER BY ordinal LIMIT 1", [attempt_id, key]).fetchone()
        if row is None:
            keys = [r[0] for r in conn.execute(
                "SELECT key FROM assertion_results WHERE attempt_id = ? ORDER BY ordinal", [attempt_id])]
            shown = ", ".join(repr(k) for k in keys[:_SHOWN_KEYS]) + (", ..." if len(keys) > _SHOWN_KEYS else "")
            known = f"its keys are {shown}" if keys else "it has no assertion results"
            raise StoreError(f"Attempt {attempt_id} has no assertion with key {key!r}: {known} "
                             "(leave KEY out to label the whole attempt).")
    return LabelTarget(attempt_id, key, scale_of(row[0], row[1]))


def checked_value(target: LabelTarget, value: float) -> float:
    """`value` as stored on the target's scale, or a StoreError naming the scale."""
    stored = on_scale(value, target.scale)
    if stored is None:
        what = f"assertion {target.assertion_key!r}" if target.assertion_key is not None else "a whole attempt"
        scale = ", ".join(shown_value(v) for v in target.scale)
        raise StoreError(f"The value {value!r} is not on the scale of {what} of attempt {target.attempt_id}: "
                         f"give one of {scale}.")
    return stored


# A label the store holds already, time included (`label import` of an export made here, or twice).
_STORED = ("SELECT 1 FROM labels WHERE attempt_id = ? AND assertion_key IS ? AND value = ? AND author = ? "
           "AND comment IS ? AND created_at = ? LIMIT 1")


def insert_labels(db: Db, labels: Sequence[LabelInput]) -> list[str]:
    """Insert checked labels in one transaction (all or nothing); the new ids, in order. A label
    that carries its time and is stored already (every field equal) is not stored again: importing
    an export twice, or into the store it came from, adds nothing."""
    now = utc_now_iso()
    conn = db.conn
    with write_transaction(conn, db.path, "Recording labels in"):
        rows = []
        seen: set[tuple[Any, ...]] = set()
        for label in labels:
            fields = (label.attempt_id, label.assertion_key, label.value, label.author, label.comment)
            if label.created_at is not None:
                dated = (*fields, label.created_at)
                if dated in seen or conn.execute(_STORED, dated).fetchone() is not None:
                    continue
                seen.add(dated)
            rows.append((new_id(), *fields, label.created_at or now))
        for start in range(0, len(rows), INSERT_LABELS.rows):
            batch = rows[start:start + INSERT_LABELS.rows]
            conn.execute(INSERT_LABELS.sql(len(batch)), [value for row in batch for value in row])
    return [row[0] for row in rows]


def label_time(text: str, now: datetime | None = None) -> str:
    """A label's `created_at` from a file, as the store writes times (UTC, milliseconds, `Z`), or
    a ValueError saying what is wrong: a time without its zone could be any of 24 hours, and a
    time still to come would supersede every label its author gives until then."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"created_at must be an ISO 8601 time such as 2026-01-31T09:30:00.000Z, "
                         f"got {text!r}") from None
    if when.tzinfo is None:
        raise ValueError(f"created_at {text!r} has no time zone (write it in UTC with a Z, as label export does)")
    when = when.astimezone(timezone.utc)
    if when > (now or datetime.now(timezone.utc)) + _CLOCK_SKEW:
        raise ValueError(f"created_at {text!r} is in the future")
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read_labels(db: Db, run_ids: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every stored label in the order it was made (superseded ones too); with `run_ids`, only
    labels of attempts those runs hold (reused ones included)."""
    columns = ", ".join(f"l.{c}" for c in LABEL_COLUMNS)
    if run_ids is None:
        sql, params = f"SELECT {columns} FROM labels l ORDER BY l.created_at, l.id", []
    else:
        marks = ", ".join("?" * len(run_ids))
        sql = (f"SELECT {columns} FROM labels l WHERE l.attempt_id IN (SELECT attempt_id FROM run_slots "
               f"WHERE run_id IN ({marks}) AND attempt_id IS NOT NULL) ORDER BY l.created_at, l.id")
        params = list(run_ids)
    with translated(db.path, "Reading labels"):
        cursor = db.conn.execute(sql, params)
        names = [c[0] for c in cursor.description]
        for row in cursor:
            yield dict(zip(names, row, strict=True))


__all__ = [
    "PASS_FAIL_SCALE",
    "LabelInput",
    "LabelTarget",
    "checked_value",
    "find_target",
    "insert_labels",
    "label_time",
    "on_scale",
    "read_labels",
    "scale_of",
    "shown_value",
    "unicode_text",
]
