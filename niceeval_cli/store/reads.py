"""Typed reads of one run (or group) and of one attempt: its slots, attempts, cost, plan and
not-run slots; an attempt's results, turns and events, and its fingerprint's parts.

Each is one statement from queries.py or written here, turned into the row types of rows.py. A
run id here is exact (references.py resolved it); a group id reads its member runs together.
`Store` calls these over its `Db`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._records import EventRecord, TurnRecord
from .._states import AssertionState, EvalKind, Role
from ..outcomes import BOOLEAN_MATCH, assertion_severity_sql
from .db import Db
from .errors import translated
from .groups import not_run_slots
from .queries import Names, attempts_select, costs_select
from .references import resolve_prefix, run_scope
from .rows import (
    AssertionRow,
    AttemptRow,
    PlanSlot,
    SlotRow,
    assertion_row,
    attempt_row,
    event_row,
    slot_row,
    turn_row,
)


def resolve_attempt(db: Db, prefix: str) -> AttemptRow:
    """An attempt by exact id or unique prefix, written with or without a leading `@`."""
    attempt_id = resolve_prefix(db, "attempts", "attempt", prefix.removeprefix("@"))
    rows = db.rows("Reading an attempt", "SELECT * FROM attempts WHERE id = ?", [attempt_id])
    return attempt_row(rows[0])


def fingerprint_parts_of(db: Db, attempt_id: str) -> str | None:
    """The canonical JSON an attempt's fingerprint hashed, or None."""
    with translated(db.path, "Reading an attempt's fingerprint"):
        row = db.conn.execute("SELECT fingerprint_parts FROM attempts WHERE id = ?", [attempt_id]).fetchone()
    return row[0] if row is not None else None


def run_slots(db: Db, run_id: str) -> list[SlotRow]:
    """A run's (or a group's) slots, by experiment, eval and ordinal."""
    ids = run_scope(db, run_id)
    rows = db.rows(
        "Reading a run's slots",
        f"SELECT * FROM run_slots WHERE run_id IN ({', '.join('?' * len(ids))}) "
        "ORDER BY experiment_id, eval_id, ordinal",
        ids,
    )
    return [slot_row(row) for row in rows]


def attempts_for_run(
    db: Db, run_id: str, *, experiment: Names, eval_prefix: Names, states: Names, limit: int | None
) -> list[AttemptRow]:
    """A run's attempts, reused ones included (relation `reference`), worst first."""
    sql, params = attempts_select(
        run_scope(db, run_id), experiment=experiment, eval_prefix=eval_prefix, states=states, limit=limit,
        slot_columns=("relation", "plan_reason"),
    )
    return [attempt_row(row) for row in db.rows("Reading a run's attempts", sql, params)]


def costs(db: Db, run_id: str, *, experiment: Names, eval_prefix: Names) -> list[dict[str, Any]]:
    """Per experiment of a run: attempts, reported cost (sum, count) and estimated cost (sum, count)."""
    sql, params = costs_select(run_scope(db, run_id), experiment=experiment, eval_prefix=eval_prefix)
    return db.rows("Reading a run's cost", sql, params)


def turns(db: Db, attempt_id: str) -> list[TurnRecord]:
    """An attempt's transcript: its turns in ordinal order, each with its events in seq order."""
    by_turn: dict[int, list[EventRecord]] = {}
    for event in events(db, attempt_id):
        by_turn.setdefault(event.turn_ordinal, []).append(event)
    rows = db.rows(
        "Reading an attempt's turns", "SELECT * FROM turns WHERE attempt_id = ? ORDER BY ordinal",
        [attempt_id],
    )
    return [turn_row(row, tuple(by_turn.get(row["ordinal"], ()))) for row in rows]


def events(db: Db, attempt_id: str) -> list[EventRecord]:
    """An attempt's events, by turn ordinal then seq."""
    rows = db.rows(
        "Reading an attempt's events",
        "SELECT * FROM events WHERE attempt_id = ? ORDER BY turn_ordinal, seq", [attempt_id],
    )
    return [event_row(row) for row in rows]


def run_plan(db: Db, run_id: str) -> list[PlanSlot]:
    """The run's (or group's) full planned slot list: its `run_plan` rows and, since schema 4
    does not repeat them there, the slots it adopted when it began (empty if neither)."""
    rows = db.rows(
        "Reading a run's plan",
        "SELECT experiment_id, eval_id, ordinal, case_id FROM run_plan WHERE run_id = :run "
        "UNION SELECT s.experiment_id, s.eval_id, s.ordinal, a.case_id FROM run_slots s "
        "JOIN attempts a ON a.id = s.attempt_id WHERE s.run_id = :run AND s.relation = 'reference' "
        "AND (SELECT planned_total FROM runs WHERE id = :run) IS NOT NULL "  # it recorded a plan
        "ORDER BY 1, 2, 3", {"run": run_scope(db, run_id)[0]},
    )
    return [PlanSlot(r["experiment_id"], r["eval_id"], r["ordinal"], r["case_id"]) for r in rows]


def not_run(db: Db, run_id: str) -> list[PlanSlot]:
    """Planned slots of the run that no attempt filled; of a shard run, only its own shard's;
    of a group, every slot its members did not fill (a missing shard's slots included)."""
    ids = run_scope(db, run_id)
    shard = None
    if ids == [run_id]:
        row = db.rows("Reading a run", "SELECT shard_index, shard_count FROM runs WHERE id = ?", [run_id])
        if row and row[0]["shard_count"] is not None:
            shard = (row[0]["shard_index"], row[0]["shard_count"])
    return not_run_slots(db, ids, ids[0], shard)


def unavailable_records(db: Db, run_id: str) -> list[tuple[str, int]]:
    """Results recorded without deciding (`outcomes.recorded_only`) that could not be measured, per reason
    (an empty one read as `unavailable`), in the attempts the run executed (a group: its members):
    what its run summary counted; a reused attempt's were counted by the run that made them.

    One pass from the run's attempts, each looked up in `assertion_results_by_state` (the CROSS
    JOIN keeps that order): left to itself SQLite starts from every unavailable result of the
    store, a cost that grows with the store's history rather than with the run."""
    ids = run_scope(db, run_id)
    rows = db.rows(
        "Reading a run's unmeasured records",
        "SELECT COALESCE(NULLIF(r.reason, ''), ?) AS reason, count(*) AS n "
        "FROM attempts a CROSS JOIN assertion_results r ON r.state = ? AND r.attempt_id = a.id "
        f"WHERE a.run_id IN ({', '.join('?' * len(ids))}) AND r.role = ? AND COALESCE(r.or_stop, 0) = 0 "
        "AND NOT (a.kind = ? AND COALESCE(r.match_kind, '') = ?) GROUP BY 1 ORDER BY 1",  # outcomes.recorded_only
        [AssertionState.UNAVAILABLE.value, AssertionState.UNAVAILABLE.value, *ids, Role.RECORD.value,
         EvalKind.PASS.value, BOOLEAN_MATCH],
    )
    return [(row["reason"], row["n"]) for row in rows]


def assertions_for_attempt(db: Db, attempt_id: str) -> list[AssertionRow]:
    """One attempt's results: errored, mismatched/below, unavailable, the rest; then ordinal."""
    rows = db.rows(
        "Reading an attempt's results",
        f"SELECT * FROM assertion_results r WHERE attempt_id = ? "
        f"ORDER BY {assertion_severity_sql('r.state')}, r.ordinal",
        [attempt_id],
    )
    return [assertion_row(row) for row in rows]


def attempt_columns(db: Db, run: str, columns: Sequence[str]) -> list[dict[str, Any]]:
    """A run's (or group's) attempts, worst first as `query attempts` lists them, with only those
    of `columns` its store has, and the pass rule of the slot each fills (`pass_rule`): what
    comparing two runs reads of 100 000 attempts, without their fingerprints, errors and tracebacks."""
    present = db.columns("attempts")
    sql, params = attempts_select(run_scope(db, run), experiment=None, eval_prefix=None, states=None, limit=None,
                                  slot_columns=("pass_rule",), columns=[c for c in columns if c in present])
    with translated(db.path, "Reading the attempts to compare"):
        cursor = db.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
