"""What `merge` checks of the staged source rows before it writes any (scale.md, issue 23).

A shard store is a file anyone can edit, so nothing in it is trusted: each staged row must be one
this NiceEval could have written (types, NOT NULL columns, stored words, readable JSON) and must
not attach itself to what the target has already sealed — a new assertion result, turn or event
only under an attempt the same merge brings, a new attempt, slot or plan row only under a run the
merge brings or the target still shows `running`. A failed check refuses the whole merge with
exit 2 naming the row and its store; the target is not touched. Checking before writing is what
keeps a bad row from reaching `view`, `report` or `compare`, which trust the store's own rows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum

from .._states import (
    AssertionState,
    AttemptState,
    EvalKind,
    GateState,
    PlanReason,
    Relation,
    Role,
    RunKind,
    RunStatus,
)
from .errors import StoreError


class MergeRefused(StoreError):
    """A source row that this NiceEval would never have written, or that attaches itself to rows
    the target sealed: nothing was merged (exit 2)."""


def _words(enum: Iterable[Enum], *, leave_out: Sequence[Enum] = ()) -> tuple[str, ...]:
    return tuple(str(member.value) for member in enum if member not in leave_out)


#: The stored words of each column that holds one (a reader maps each to its enum).
STORED_WORDS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "runs": {"status": _words(RunStatus, leave_out=(RunStatus.ABANDONED,)), "kind": _words(RunKind)},
    "attempts": {"kind": _words(EvalKind), "state": _words(AttemptState), "gate": _words(GateState)},
    "assertion_results": {"role": _words(Role), "state": _words(AssertionState),
                          "match_kind": ("boolean", "score")},
    "run_slots": {"relation": _words(Relation), "plan_reason": _words(PlanReason)},
    "turns": {"status": ("completed", "failed", "waiting")},
}

#: The columns that hold JSON text (readers json.loads them).
JSON_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "runs": ("argv", "experiments"),
    "attempts": ("fingerprint_parts", "case_value", "case_metadata", "sandbox", "notes"),
    "assertion_results": ("match_config", "evidence", "judge_audit", "extras"),
    "turns": ("observed", "data"),
    "events": ("input", "output"),
    "judge_inputs": ("content",),
}

#: Rows whose columns disagree with each other, which the readers' folds refuse (an internal error
#: at `view` / `report` time): (column shown, SQL condition of a bad row, what is wrong).
_PASS_STATES = _words((AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED))
_SCORE_STATES = _words((AttemptState.SCORED, AttemptState.UNRANKABLE, AttemptState.ERRORED))
_ROW_RULES: Mapping[str, tuple[tuple[str, str, str], ...]] = {
    "attempts": (
        ("state", f"kind = 'pass' AND state NOT IN ({', '.join(map(repr, _PASS_STATES))})",
         f"is not a pass-style eval's state ({', '.join(_PASS_STATES)})"),
        ("state", f"kind = 'score' AND state NOT IN ({', '.join(map(repr, _SCORE_STATES))})",
         f"is not a score-style eval's state ({', '.join(_SCORE_STATES)})"),
        ("score", "state = 'scored' AND score IS NULL", "is empty for a scored attempt (state 'scored')"),
    ),
}

_SQL_TYPES = {int: ("integer",), float: ("integer", "real"), str: ("text",)}
_JSON_OK = "niceeval_merge_json_ok"
_SHOWN = 3


def _json_ok(text: object) -> int:
    if text is None:
        return 1
    if not isinstance(text, str):
        return 0
    try:
        json.loads(text)
    except ValueError:
        return 0
    return 1


def _quote(word: str) -> str:
    return "'" + word.replace("'", "''") + "'"


def check_staged_rows(conn: sqlite3.Connection, table: str, stage: str, columns: Mapping[str, type],
                      key: Sequence[str]) -> None:
    """Refuse the merge if a staged row of `table` is not one this NiceEval writes."""
    conn.create_function(_JSON_OK, 1, _json_ok, deterministic=True)
    not_null = {row[1] for row in conn.execute(f"PRAGMA main.table_info({table})") if row[3]}
    words = STORED_WORDS.get(table, {})
    json_columns = JSON_COLUMNS.get(table, ())
    problems: list[tuple[str, str, str]] = []  # (column, SQL condition of a bad row, what is wrong)
    for column, kind in columns.items():
        if column in not_null:
            problems.append((column, f"{column} IS NULL", "is empty (the column is required)"))
        types = ", ".join(_quote(t) for t in _SQL_TYPES.get(kind, ()))
        if types:
            problems.append((column, f"{column} IS NOT NULL AND typeof({column}) NOT IN ({types})",
                             f"is not {'a number' if kind in (int, float) else 'text'}"))
        if column in words:
            allowed = words[column]
            problems.append((column, f"{column} IS NOT NULL AND {column} NOT IN ({', '.join(map(_quote, allowed))})",
                             f"is not one of {', '.join(allowed)}"))
        if column in json_columns:
            problems.append((column, f"NOT {_JSON_OK}({column})", "is not valid JSON"))
    problems += [rule for rule in _ROW_RULES.get(table, ()) if rule[0] in columns]
    if not problems:
        return
    # One scan of the staged rows finds whether any is bad; only then is each condition asked.
    if conn.execute(f"SELECT 1 FROM {stage} WHERE {' OR '.join(f'({c})' for _, c, _ in problems)} LIMIT 1"
                    ).fetchone() is None:
        return
    for column, condition, what in problems:
        rows = conn.execute(
            f"SELECT {', '.join(key)}, {column}, _source FROM {stage} WHERE {condition} LIMIT {_SHOWN}"
        ).fetchall()
        if rows:
            raise _bad_rows(table, key, column, what, rows)


def _bad_rows(table: str, key: Sequence[str], column: str, what: str, rows: list[tuple[object, ...]]) -> MergeRefused:
    n = len(key)
    named = "; ".join(
        f"{_row_name(table, key, row[:n])}: {column} = {_shown(row[n])}" for row in rows
    )
    return MergeRefused(
        f"merge refused: {rows[0][n + 1]} holds a malformed row in table {table} — {named} {what}. "
        "NiceEval never writes such a row, so the store was edited or damaged; nothing was merged. "
        "Merge the shard's original results.db (or run that shard again)."
    )


def _row_name(table: str, key: Sequence[str], values: Sequence[object]) -> str:
    if tuple(key) == ("id",):
        return f"{table.rstrip('s')} {values[0]}"
    return f"{table} row (" + ", ".join(f"{k}={v!r}" for k, v in zip(key, values, strict=True)) + ")"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…'"


#: Rows that hang under an attempt (every one sealed with it), and rows that hang under a run.
_UNDER_ATTEMPT = ("assertion_results", "turns", "events")
_UNDER_RUN = ("attempts", "run_slots", "run_plan")


def check_attachments(conn: sqlite3.Connection, stages: Mapping[str, str], keys: Mapping[str, Sequence[str]]) -> None:
    """Refuse rows new to the target that hang under a sealed attempt of the target, or under a
    run the target finished (a hostile shard grafting a failed check onto a passed attempt)."""
    running = RunStatus.RUNNING.value
    for table in _UNDER_ATTEMPT:
        stage, key = stages[table], keys[table]
        row = conn.execute(
            f"SELECT {', '.join('i.' + k for k in key)}, i.attempt_id, i._source FROM {stage} i "
            f"WHERE NOT EXISTS (SELECT 1 FROM main.{table} p WHERE {_on(key)}) "
            "AND EXISTS (SELECT 1 FROM main.attempts a WHERE a.id = i.attempt_id) LIMIT 1"
        ).fetchone()
        if row is not None:
            n = len(key)
            raise MergeRefused(
                f"merge refused: {row[n + 1]} adds {_row_name(table, key, row[:n])} to attempt {row[n]}, which "
                "the target store already sealed without it; a sealed attempt never gains rows. Nothing was "
                "merged: was the store edited, or copied from another run?"
            )
    for table in _UNDER_RUN:
        stage, key = stages[table], keys[table]
        row = conn.execute(
            f"SELECT {', '.join('i.' + k for k in key)}, i.run_id, r.status, i._source FROM {stage} i "
            f"JOIN main.runs r ON r.id = i.run_id WHERE r.status != '{running}' "
            f"AND NOT EXISTS (SELECT 1 FROM main.{table} p WHERE {_on(key)}) LIMIT 1"
        ).fetchone()
        if row is not None:
            n = len(key)
            raise MergeRefused(
                f"merge refused: {row[n + 2]} adds {_row_name(table, key, row[:n])} to run {row[n]}, which the "
                f"target store already holds {row[n + 1]}; a finished run never gains rows. Nothing was merged: "
                "was the store edited, or copied from another run?"
            )


def _on(key: Sequence[str]) -> str:
    return " AND ".join(f"p.{k} = i.{k}" for k in key)


__all__ = ["JSON_COLUMNS", "STORED_WORDS", "MergeRefused", "check_attachments", "check_staged_rows"]
