"""The report's reads of one run: short rows for everything, long texts streamed and cut in SQL.

`niceeval report` used to read every attempt, result, turn and event whole, then build the page
in memory, several times the store's size at its peak. Here the rows every part of the report needs
(attempt outcomes, assertion states by key) leave out the long texts, and the texts an
attempt's details show are read one attempt at a time, each text cut by SQLite to `limit`
characters and marked `… [+N chars]` before Python sees it. The caller keeps only what it embeds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..outcomes import assertion_severity_sql
from .connect import connect
from .errors import translated
from .queries import ATTEMPT_ORDER, Where, attempts_source
from .schema import ASSERTION_COLUMNS, ATTEMPT_COLUMNS, EVENT_COLUMNS, TURN_COLUMNS

__all__ = ["LONG_ATTEMPT_COLUMNS", "AttemptTexts", "ReportRow", "attempt_rows", "attempt_texts", "result_states"]

#: Attempt columns that may hold long text (JSON or prose): read only, cut, by `attempt_texts`.
LONG_ATTEMPT_COLUMNS = ("error", "traceback", "case_value", "case_metadata", "sandbox", "notes")
_LONG_RESULT_COLUMNS = frozenset({"explanation", "evidence", "judge_audit", "extras", "match_config"})
_LONG_TURN_COLUMNS = frozenset({"input", "message", "data"})
_LONG_EVENT_COLUMNS = frozenset({"input", "output", "text"})


@dataclass
class AttemptTexts:
    """One attempt's long texts, results and transcript, as read for its details (texts cut)."""

    attempt_id: str
    fields: dict[str, Any]  # LONG_ATTEMPT_COLUMNS
    result_columns: list[str]
    results: list[tuple[Any, ...]] = field(default_factory=list)  # worst first
    turns: list[dict[str, Any]] = field(default_factory=list)  # in order, each with its "events"


def _scope(run_ids: Sequence[str]) -> tuple[str, Where]:
    where = Where()
    return attempts_source(where, run_ids), where


def _open(path: Path) -> sqlite3.Connection:
    return connect(Path(path), readonly=True)


class ReportRow(Mapping[str, Any]):
    """One attempt's short columns as SQLite gave them (a tuple), read by column name.

    The report holds one per attempt of the run: a dict each would cost several times the tuple
    and one slot this costs, and the repeated texts (eval, experiment, state, ...) are shared.
    """

    __slots__ = ("_values",)
    _index: ClassVar[dict[str, int]] = {}

    def __init__(self, values: tuple[Any, ...]) -> None:
        self._values = values

    def __getitem__(self, key: str) -> Any:
        return self._values[self._index[key]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return f"ReportRow({dict(self)!r})"


#: Short columns whose values repeat from attempt to attempt: one text object shared by every row.
_REPEATED = frozenset({"run_id", "experiment_id", "eval_id", "kind", "state", "gate", "reason", "fingerprint_parts",
                       "eval_module", "eval_name", "case_id", "stop_cause", "relation"})


def attempt_rows(path: Path, run_ids: Sequence[str]) -> list[ReportRow]:
    """The run's attempts worst first (the store's order), without their long texts (nor the
    fingerprint hash, which no part of the report shows)."""
    short = [c for c in ATTEMPT_COLUMNS if c not in LONG_ATTEMPT_COLUMNS and c != "fingerprint"]
    source, where = _scope(run_ids)
    sql = (f"SELECT {', '.join('a.' + c for c in short)}, COALESCE(s.relation, 'origin') AS relation "
           f"FROM {source}{where.sql()} ORDER BY {ATTEMPT_ORDER}")
    conn = _open(path)
    try:
        with translated(Path(path), "Reading the run's attempts"):
            cursor = conn.execute(sql, where.params)
            columns = [d[0] for d in cursor.description]
            row_type = type("ReportRow", (ReportRow,), {"__slots__": (), "_index": {c: i for i, c in
                                                                                     enumerate(columns)}})
            repeated = [i for i, c in enumerate(columns) if c in _REPEATED]
            shared: dict[Any, Any] = {}
            rows: list[ReportRow] = []
            for row in cursor:
                values = list(row)
                for i in repeated:
                    values[i] = shared.setdefault(values[i], values[i])
                rows.append(row_type(tuple(values)))
            return rows
    finally:
        conn.close()


def result_states(path: Path, run_ids: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    """Every assertion result's (attempt_id, key, state), grouped by attempt in registration order,
    streamed: the caller keeps what it folds them into, never the rows (there are many an attempt)."""
    source, where = _scope(run_ids)
    sql = (f"SELECT r.attempt_id, r.key, r.state FROM {source} JOIN assertion_results r ON r.attempt_id = a.id"
           f"{where.sql()} ORDER BY r.attempt_id, r.ordinal")
    conn = _open(path)
    try:
        with translated(Path(path), "Reading the run's assertion states"):
            yield from conn.execute(sql, where.params)
    finally:
        conn.close()


def _cut(column: str, alias: str, limit_param: str) -> str:
    """The column's first characters, and when more were there, `… [+N chars]` as the terminal
    marks a cut (reports/_safe.py): done by SQLite, so a long text never reaches Python whole."""
    c, n = f"{alias}.{column}", limit_param
    return f"CASE WHEN length({c}) > {n} THEN substr({c}, 1, {n}) || '… [+' || (length({c}) - {n}) || ' chars]' " \
           f"ELSE {c} END AS {column}"


def _select(columns: Sequence[str], long: frozenset[str] | Sequence[str], alias: str, limit: str) -> str:
    return ", ".join(_cut(c, alias, limit) if c in long else f"{alias}.{c} AS {c}" for c in columns)


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
        found = conn.execute(fields, params).fetchone()
        texts = AttemptTexts(attempt_id, dict(zip(LONG_ATTEMPT_COLUMNS, found, strict=True)) if found else {},
                             result_columns, conn.execute(results, params).fetchall())
        events_of: dict[Any, list[dict[str, Any]]] = {}
        for values in conn.execute(events, params):
            event = dict(zip(event_columns, values, strict=True))
            events_of.setdefault(event.pop("turn_ordinal"), []).append(event)
        for values in conn.execute(turns, params):
            turn = dict(zip(turn_columns, values, strict=True))
            turn["events"] = events_of.get(turn["ordinal"], [])
            texts.turns.append(turn)
        return texts

    try:
        with translated(Path(path), "Reading an attempt's details"):
            yield read
    finally:
        conn.close()
