"""The report's reads of one run: short rows for everything, long texts streamed and cut in SQL.

`niceeval report` used to read every attempt, result, turn and event whole, then build the page
in memory: a store of 178 MB peaked at 1.27 GB. Here the rows every part of the report needs
(attempt outcomes, assertion states by key) leave out the long texts, and the texts an
attempt's details show are read one attempt at a time, each text cut by SQLite to `limit`
characters before Python sees it (`substr`, with `length` telling how much was left out). The
caller keeps only what it embeds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..outcomes import assertion_severity_sql
from .connect import connect
from .errors import translated
from .queries import ATTEMPT_ORDER, Where, attempts_source
from .schema import ASSERTION_COLUMNS, ATTEMPT_COLUMNS, EVENT_COLUMNS, TURN_COLUMNS

__all__ = ["LONG_ATTEMPT_COLUMNS", "AttemptTexts", "Trimmed", "attempt_rows", "attempt_texts", "result_states"]

#: Attempt columns that may hold long text (JSON or prose): read only, cut, by `attempt_texts`.
LONG_ATTEMPT_COLUMNS = ("error", "traceback", "case_value", "case_metadata", "sandbox", "notes")
_LONG_RESULT_COLUMNS = frozenset({"explanation", "evidence", "judge_audit", "extras", "match_config"})
_LONG_TURN_COLUMNS = frozenset({"input", "message", "data"})
_LONG_EVENT_COLUMNS = frozenset({"input", "output", "text"})


@dataclass(frozen=True)
class Trimmed:
    """A text cut to the report's limit: its first characters and how many were left out."""

    text: str
    omitted: int


@dataclass
class AttemptTexts:
    """One attempt's long texts, results and transcript, as read for its details (texts cut)."""

    attempt_id: str
    fields: dict[str, Any]  # LONG_ATTEMPT_COLUMNS (value, or Trimmed)
    result_columns: list[str]
    results: list[list[Any]] = field(default_factory=list)  # worst first; long values may be Trimmed
    turns: list[dict[str, Any]] = field(default_factory=list)  # in order, each with its "events"


def _scope(run_ids: Sequence[str]) -> tuple[str, Where]:
    where = Where()
    return attempts_source(where, run_ids), where


def _open(path: Path) -> sqlite3.Connection:
    return connect(Path(path), readonly=True)


def attempt_rows(path: Path, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The run's attempts worst first (the store's order), without their long texts."""
    short = [c for c in ATTEMPT_COLUMNS if c not in LONG_ATTEMPT_COLUMNS]
    source, where = _scope(run_ids)
    sql = (f"SELECT {', '.join('a.' + c for c in short)}, COALESCE(s.relation, 'origin') AS relation "
           f"FROM {source}{where.sql()} ORDER BY {ATTEMPT_ORDER}")
    conn = _open(path)
    try:
        with translated(Path(path), "Reading the run's attempts"):
            cursor = conn.execute(sql, where.params)
            columns = [d[0] for d in cursor.description]
            return [dict(zip(columns, row, strict=True)) for row in cursor]
    finally:
        conn.close()


def result_states(path: Path, run_ids: Sequence[str]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Every assertion result's (attempt_id, key, state): what comparing and the totals read."""
    source, where = _scope(run_ids)
    sql = (f"SELECT r.attempt_id, r.key, r.state FROM {source} JOIN assertion_results r ON r.attempt_id = a.id"
           f"{where.sql()} ORDER BY r.attempt_id, r.ordinal")
    conn = _open(path)
    try:
        with translated(Path(path), "Reading the run's assertion states"):
            return ["attempt_id", "key", "state"], conn.execute(sql, where.params).fetchall()
    finally:
        conn.close()


def _cut(column: str, alias: str, limit_param: str) -> str:
    return (f"substr({alias}.{column}, 1, {limit_param}) AS {column}, "
            f"max(length({alias}.{column}) - {limit_param}, 0) AS {column}__omitted")


def _select(columns: Sequence[str], long: frozenset[str] | Sequence[str], alias: str, limit: str) -> str:
    return ", ".join(_cut(c, alias, limit) if c in long else f"{alias}.{c} AS {c}" for c in columns)


def _read(cursor: sqlite3.Cursor, long: frozenset[str] | Sequence[str]) -> Iterator[tuple[list[str], list[Any]]]:
    """Rows with each cut column folded back into one value (a `Trimmed` when something was cut)."""
    names = [d[0] for d in cursor.description]
    cut = {i for i, n in enumerate(names) if n in long}
    keep = [i for i, n in enumerate(names) if not n.endswith("__omitted")]
    columns = [names[i] for i in keep]
    for row in cursor:
        values = []
        for i in keep:
            value = row[i]
            if i in cut and value is not None and row[i + 1]:
                value = Trimmed(value, row[i + 1])
            values.append(value)
        yield columns, values


@contextmanager
def attempt_texts(path: Path, limit: int) -> Iterator[Callable[[str], AttemptTexts]]:
    """A reader of one attempt's details at a time (texts cut to `limit` characters in SQL), on its
    own read-only connection: four small indexed queries an attempt, nothing sorted or held but
    the attempt asked for — and nothing read for the attempts a page leaves out."""
    conn = _open(path)
    cut = {"n": int(limit)}
    fields = f"SELECT {_select(LONG_ATTEMPT_COLUMNS, LONG_ATTEMPT_COLUMNS, 'a', ':n')} FROM attempts a WHERE a.id = :id"
    result_columns = [c for c in ASSERTION_COLUMNS if c not in ("id", "attempt_id")]
    results = (f"SELECT {_select(result_columns, _LONG_RESULT_COLUMNS, 'r', ':n')} FROM assertion_results r "
               f"WHERE r.attempt_id = :id ORDER BY {assertion_severity_sql('r.state')}, r.ordinal")
    turn_columns = [c for c in TURN_COLUMNS if c != "attempt_id"]
    turns = (f"SELECT {_select(turn_columns, _LONG_TURN_COLUMNS, 't', ':n')} FROM turns t "
             "WHERE t.attempt_id = :id ORDER BY t.ordinal")
    event_columns = [c for c in EVENT_COLUMNS if c != "attempt_id"]
    events = (f"SELECT {_select(event_columns, _LONG_EVENT_COLUMNS, 'e', ':n')} FROM events e "
              "WHERE e.attempt_id = :id ORDER BY e.turn_ordinal, e.seq")

    def read(attempt_id: str) -> AttemptTexts:
        params = {**cut, "id": attempt_id}
        found = list(_read(conn.execute(fields, params), LONG_ATTEMPT_COLUMNS))
        texts = AttemptTexts(attempt_id, dict(zip(*found[0], strict=True)) if found else {}, result_columns)
        texts.results = [values for _, values in _read(conn.execute(results, params), _LONG_RESULT_COLUMNS)]
        events_of: dict[Any, list[dict[str, Any]]] = {}
        for names, values in _read(conn.execute(events, params), _LONG_EVENT_COLUMNS):
            event = dict(zip(names, values, strict=True))
            events_of.setdefault(event.pop("turn_ordinal"), []).append(event)
        for names, values in _read(conn.execute(turns, params), _LONG_TURN_COLUMNS):
            turn = dict(zip(names, values, strict=True))
            turn["events"] = events_of.get(turn["ordinal"], [])
            texts.turns.append(turn)
        return texts

    try:
        with translated(Path(path), "Reading an attempt's details"):
            yield read
    finally:
        conn.close()
