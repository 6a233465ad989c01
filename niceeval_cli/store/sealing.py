"""Sealing: every write of the store, each one transaction that takes the write lock first.

A run is recorded (`begin_run`: its row, heartbeat, reused slots and plan together), its reused
(reference) slots added, each attempt sealed with all its results, turns, events and its origin
slot (`seal_attempt`; `seal_attempts`: the runner's group commit, many attempts one COMMIT),
the run finished (a shard's last one stores its group's verdict, groups.py) or, when its owner is
gone, recorded as interrupted. Rows are inserted as given, many a statement
(`schema.MultiRowInsert`), and cleaned (sanitize.py) only when SQLite refuses one: the normal
path pays nothing for values it never needs to change. `Store` checks it is writable and calls
these over its `Db`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .._ids import utc_now_iso
from .._records import AssertionResult, AttemptRecord
from .._states import Relation, RunKind, RunStatus
from . import groups
from .connect import write_transaction
from .db import Db
from .errors import StoreError
from .heartbeat import BEAT_SQL
from .owner import current_owner
from .queries import RUN_STATUS_SQL
from .rows import (
    PlanSlot,
    SlotRecord,
    assertion_values,
    attempt_values,
    event_values,
    slot_values,
    turn_values,
)
from .sanitize import clean_text, clean_values, with_notes
from .schema import (
    ASSERTION_COLUMNS,
    ATTEMPT_COLUMNS,
    EVENT_COLUMNS,
    INSERT_ASSERTIONS,
    INSERT_ATTEMPTS,
    INSERT_EVENTS,
    INSERT_JUDGE_INPUTS,
    INSERT_PLANS,
    INSERT_RUN,
    INSERT_SLOTS,
    INSERT_TURNS,
    RUN_COLUMNS,
    SLOT_COLUMNS,
    TURN_COLUMNS,
    MultiRowInsert,
)
from .unit_folds import store_unit_folds

_ATTEMPT_NOT_NULL = frozenset({"ordinal", "judge_tokens"})
_ASSERTION_NOT_NULL = frozenset({"ordinal", "or_stop"})
_TURN_NOT_NULL = frozenset({"ordinal"})
_EVENT_NOT_NULL = frozenset({"turn_ordinal", "seq"})
_SLOT_NOT_NULL = frozenset({"ordinal"})


@dataclasses.dataclass(frozen=True)
class _Seal:
    """The rows of one attempt's seal transaction, as value tuples in column order."""

    attempt: tuple[Any, ...]
    results: list[tuple[Any, ...]]
    turns: list[tuple[Any, ...]]
    events: list[tuple[Any, ...]]
    slot: tuple[Any, ...]
    judge_inputs: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (sha256, content)


def _checked_seal(attempt: AttemptRecord, results: Sequence[AssertionResult], slot: SlotRecord) -> _Seal:
    """An attempt's rows, once its results, turns and events are known to belong to it."""
    slot = _origin_slot(attempt, slot)
    for result in results:
        if result.attempt_id != attempt.id:
            raise ValueError(f"result {result.id} belongs to {result.attempt_id}, not {attempt.id}")
    for turn in attempt.turns:
        if turn.attempt_id != attempt.id or any(e.attempt_id != attempt.id for e in turn.events):
            raise ValueError(f"turn {turn.ordinal} does not belong to attempt {attempt.id}")
        if any(e.turn_ordinal != turn.ordinal for e in turn.events):
            raise ValueError(f"an event of turn {turn.ordinal} names another turn")
    return _seal_rows(attempt, results, slot)


def _seal_rows(attempt: AttemptRecord, results: Sequence[AssertionResult], slot: SlotRecord) -> _Seal:
    return _Seal(
        attempt_values(attempt),
        [assertion_values(r) for r in results],
        [turn_values(t) for t in attempt.turns],
        [event_values(e) for t in attempt.turns for e in t.events],
        slot_values(slot),
        [(r.judge_input, r.judge_input_content) for r in results
         if r.judge_input is not None and r.judge_input_content is not None],
    )


def _cleaned_seal(rows: _Seal) -> _Seal:
    """The same rows made storable (sanitize.py), the changes appended to the attempt's notes."""
    notes: list[str] = []
    attempt = clean_values(rows.attempt, ATTEMPT_COLUMNS, "attempts", notes, _ATTEMPT_NOT_NULL)
    results = [
        clean_values(r, ASSERTION_COLUMNS, f"assertion_results[{i}]", notes, _ASSERTION_NOT_NULL)
        for i, r in enumerate(rows.results)
    ]
    turns = [clean_values(t, TURN_COLUMNS, f"turns[{i}]", notes, _TURN_NOT_NULL) for i, t in enumerate(rows.turns)]
    events = [
        clean_values(e, EVENT_COLUMNS, f"events[{i}]", notes, _EVENT_NOT_NULL) for i, e in enumerate(rows.events)
    ]
    slot = clean_values(rows.slot, SLOT_COLUMNS, "run_slots", [], _SLOT_NOT_NULL)  # same changes as the attempt
    notes_at = list(ATTEMPT_COLUMNS).index("notes")
    merged = with_notes(attempt[notes_at], notes)
    attempt = (*attempt[:notes_at], None if merged is None else clean_text(merged)[0], *attempt[notes_at + 1:])
    return _Seal(attempt, results, turns, events, slot, rows.judge_inputs)  # judge inputs: JSON made storable


# ── writes ──────────────────────────────────────────────────────────────────────────────────


def begin_run(
    db: Db,
    run_id: str,
    *,
    started_at: str,
    argv: Sequence[str],
    version: str,
    config_file: str | None,
    experiments: Sequence[str],
    planned_total: int | None,
    shard_index: int | None,
    shard_count: int | None,
    group_id: str | None,
    plan_digest: str | None,
    executor: str | None,
    budget_usd: float | None,
    reference_slots: Iterable[SlotRecord],
    plan: Iterable[PlanSlot | tuple[Any, ...]] | None,
    regrade_of: str | None = None,
) -> None:
    """Record a new run as `running`, owned by this process, with its first heartbeat, its
    reference slots and its plan, in one transaction (`Store.begin_run`)."""
    owner = current_owner()
    record = {
        "id": run_id,
        "started_at": started_at,
        "ended_at": None,
        "status": RunStatus.RUNNING.value,
        "argv": json.dumps(list(argv), ensure_ascii=False),
        "niceeval_version": version,
        "exit_code": None,
        "config_file": config_file,
        "experiments": json.dumps(list(experiments), ensure_ascii=False),
        "owner_pid": owner.pid,
        "owner_host": owner.host,
        "owner_started_at": owner.started_at,
        "planned_total": planned_total,
        "shard_index": shard_index,
        "shard_count": shard_count,
        "group_id": group_id,
        "plan_digest": plan_digest,
        "executor": executor,
        "budget_usd": budget_usd,
        "kind": RunKind.REGRADE.value if regrade_of is not None else RunKind.RUN.value,
        "regrade_of": regrade_of,
    }
    values = clean_values([record[c] for c in RUN_COLUMNS], RUN_COLUMNS, "runs", [])
    # Rows as given first, cleaned only if SQLite refuses them (as seal_attempt does): a
    # re-run reusing 20 000 results must not clean 40 000 rows value by value.
    slots = _checked_reference_slots(reference_slots)  # SlotRecords are rows in column order
    planned = _plan_rows(run_id, plan) if plan is not None else None
    try:
        _write_begin(db, run_id, values, slots, planned)
    except (UnicodeEncodeError, OverflowError):
        _write_begin(db, run_id, values, _clean_slots(reference_slots),
                     _plan_values(run_id, plan) if plan is not None else None)


def _write_begin(db: Db, run_id: str, values: Sequence[Any], slots: Iterable[Sequence[Any]],
                 planned: Iterable[Sequence[Any]] | None) -> None:
    conn = db.conn
    with write_transaction(conn, db.path, f"Recording run {run_id}"):
        conn.execute(INSERT_RUN, values)
        conn.execute(BEAT_SQL, [run_id, utc_now_iso()])
        _insert_rows(conn, INSERT_SLOTS, slots)
        if planned is not None:
            _insert_rows(conn, INSERT_PLANS, planned)


def beat(db: Db, run_id: str) -> None:
    """One heartbeat (heartbeat.py), waiting at most 0.2 s for another writer's lock."""
    conn = db.conn
    waited = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 200")
    try:
        with write_transaction(conn, db.path, "Recording a heartbeat"):
            conn.execute(BEAT_SQL, [run_id, utc_now_iso()])
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(waited)}")


def record_plan(db: Db, run_id: str, slots: Iterable[PlanSlot | tuple[Any, ...]]) -> None:
    """Plan rows of a run, its planned total left as it is (`Store.record_plan`)."""
    with write_transaction(db.conn, db.path, f"Recording the plan of run {run_id}"):
        _insert_rows(db.conn, INSERT_PLANS, _plan_values(run_id, slots))


def finish_run(db: Db, run_id: str, *, status: RunStatus, ended_at: str, exit_code: int | None) -> None:
    """Set a running run's final status and store its unit folds (unit_folds.py) in the same
    transaction; a shard's last one to finish stores its group's verdict."""
    conn = db.conn
    with write_transaction(conn, db.path, f"Finishing run {run_id}"):
        row = conn.execute("SELECT status, group_id, shard_count FROM runs WHERE id = ?", [run_id]).fetchone()
        if row is None:
            raise StoreError(f"Run {run_id} is not in the results store {db.path}.")
        if row[0] != RunStatus.RUNNING:
            raise StoreError(
                f"Run {run_id} in {db.path} is already {row[0]}; a finished run is never changed."
            )
        conn.execute(
            "UPDATE runs SET status = ?, ended_at = ?, exit_code = ? WHERE id = ?",
            [RunStatus(status).value, ended_at, exit_code, run_id],
        )
        store_unit_folds(conn, run_id)
        if row[2] is not None and row[1] is not None:  # a shard: the last one to finish stores the verdict
            groups.store_verdicts(db, [row[1]], complete_only=True)


def record_abandoned(db: Db, *, ended_at: str | None) -> list[str]:
    """Close the `running` runs whose owner process is gone (`Store.record_abandoned`), each with
    its unit folds stored, as a run that finishes itself."""
    conn = db.conn
    ended_at = ended_at or utc_now_iso()
    with write_transaction(conn, db.path, "Recording abandoned runs"):
        ids = [row[0] for row in conn.execute(
            f"SELECT id FROM runs WHERE status = '{RunStatus.RUNNING}' AND {RUN_STATUS_SQL} = "
            f"'{RunStatus.ABANDONED}' ORDER BY id"
        )]
        conn.executemany(
            "UPDATE runs SET status = ?, ended_at = ? WHERE id = ? AND status = ?",
            [(RunStatus.INTERRUPTED.value, ended_at, run_id, RunStatus.RUNNING.value) for run_id in ids],
        )
        for run_id in ids:
            store_unit_folds(conn, run_id)
    return ids


def add_reference_slots(db: Db, slots: Sequence[SlotRecord]) -> None:
    """The slots a run fills by reusing earlier sealed attempts, recorded at plan time."""
    _check_reference_slots(slots)
    if not slots:
        return
    with write_transaction(db.conn, db.path, "Recording reused attempts"):
        _insert_rows(db.conn, INSERT_SLOTS, _clean_slots(slots))


def extend_plan(db: Db, run_id: str, plan: Sequence[PlanSlot], reference_slots: Sequence[SlotRecord]) -> None:
    """More slots for a running run's plan (`Store.extend_plan`): its plan rows, its reused
    slots and its planned total, grown by as many, in one transaction."""
    _check_reference_slots(reference_slots)
    added = len(plan) + len(reference_slots)
    if not added:
        return
    conn = db.conn
    with write_transaction(conn, db.path, f"Recording more of the plan of run {run_id}"):
        _insert_rows(conn, INSERT_PLANS, _plan_values(run_id, plan))
        _insert_rows(conn, INSERT_SLOTS, _clean_slots(reference_slots))
        grown = conn.execute("UPDATE runs SET planned_total = planned_total + ? WHERE id = ? AND status = ? "
                             "AND planned_total IS NOT NULL",
                             [added, run_id, RunStatus.RUNNING.value]).rowcount
        if not grown:
            raise StoreError(f"Run {run_id} in {db.path} is not running (or recorded no plan): its plan cannot grow.")


def seal_attempt(db: Db, attempt: AttemptRecord, results: Sequence[AssertionResult], slot: SlotRecord) -> None:
    """One attempt, all its results, turns, events and its origin slot: all or nothing; values
    SQLite refuses are stored cleaned, and the attempt's notes say so (`Store.seal_attempt`)."""
    rows = _checked_seal(attempt, results, slot)
    try:
        _write_seals(db, attempt.id, [rows])
    except (UnicodeEncodeError, OverflowError):
        # Only now pay for cleaning: the first try costs nothing on the normal path.
        _write_seals(db, attempt.id, [_cleaned_seal(rows)])


def seal_attempts(db: Db, sealed: Sequence[tuple[AttemptRecord, Sequence[AssertionResult], SlotRecord]]) -> None:
    """Several attempts in one transaction, all or nothing (`Store.seal_attempts`)."""
    if not sealed:
        return
    rows = [_checked_seal(attempt, results, slot) for attempt, results, slot in sealed]
    _write_seals(db, sealed[0][0].id if len(sealed) == 1 else f"{sealed[0][0].id} and {len(sealed) - 1} more", rows)


def _write_seals(db: Db, which: str, seals: Sequence[_Seal]) -> None:
    # Prepared statements, not insert_all: sealing is the runner's hot path, and sqlite-utils'
    # per-value conversion and per-call savepoints halve throughput (benchmarks/store_seal.py).
    # Table by table, many rows a statement (schema.MultiRowInsert): a batch of attempts with
    # ten tool calls each is a few statements, not one per row. Attempts go first, so every
    # row that refers to one finds it.
    conn = db.conn
    with write_transaction(conn, db.path, f"Sealing attempt {which}"):
        _insert_rows(conn, INSERT_ATTEMPTS, [rows.attempt for rows in seals])
        # Content-addressed: one row per distinct input (a stored one is skipped by its trigger).
        _insert_rows(conn, INSERT_JUDGE_INPUTS, dict(i for rows in seals for i in rows.judge_inputs).items())
        _insert_rows(conn, INSERT_ASSERTIONS, [r for rows in seals for r in rows.results])
        _insert_rows(conn, INSERT_TURNS, [t for rows in seals for t in rows.turns])
        _insert_rows(conn, INSERT_EVENTS, [e for rows in seals for e in rows.events])
        _insert_rows(conn, INSERT_SLOTS, [rows.slot for rows in seals])


# ── rows ────────────────────────────────────────────────────────────────────────────────────

def _check_reference_slots(slots: Iterable[SlotRecord]) -> None:
    for _slot in _checked_reference_slots(slots):
        pass


def _insert_rows(conn: sqlite3.Connection, insert: MultiRowInsert, rows: Iterable[Sequence[Any]]) -> None:
    """`rows` as `insert.rows`-row statements (schema.MultiRowInsert), the rest (fewer than that)
    one prepared single-row statement run for each, inside the caller's transaction: a refused
    row rolls back the whole write.

    A statement for the rest's own count would be compiled anew at nearly every seal (group
    commits come in every size, and the connection keeps few statements): compiling a many-row
    INSERT with its triggers cost more than running it (benchmarks/README.md, session 8)."""
    full = insert.sql(insert.rows)
    it = iter(rows)
    while chunk := list(itertools.islice(it, insert.rows)):
        if len(chunk) == insert.rows:
            conn.execute(full, [value for row in chunk for value in row])
        else:
            conn.executemany(insert.sql(1), chunk)


def _checked_reference_slots(slots: Iterable[SlotRecord]) -> Iterator[SlotRecord]:
    for slot in slots:
        if slot.relation is not Relation.REFERENCE or slot.attempt_id is None:
            raise ValueError(f"not a reference slot with an attempt: {slot!r}")
        yield slot


def _clean_slots(slots: Iterable[SlotRecord]) -> Iterator[tuple[Any, ...]]:
    return (clean_values(slot_values(s), SLOT_COLUMNS, "run_slots", [], _SLOT_NOT_NULL)
            for s in _checked_reference_slots(slots))


def _plan_rows(run_id: str, slots: Iterable[PlanSlot | tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """Plan rows as given (experiment, eval, ordinal, case; case may be left out)."""
    for slot in slots:
        experiment_id, eval_id, ordinal, *rest = slot
        yield (run_id, experiment_id, eval_id, ordinal, rest[0] if rest else None)


def _plan_values(run_id: str, slots: Iterable[PlanSlot | tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    for slot in slots:
        experiment_id, eval_id, ordinal, *rest = slot
        case_id = rest[0] if rest else None
        yield clean_text(run_id)[0:1] + tuple(
            clean_text(v)[0] if isinstance(v, str) else v for v in (experiment_id, eval_id, ordinal, case_id)
        )


def _origin_slot(attempt: AttemptRecord, slot: SlotRecord) -> SlotRecord:
    """The slot row sealed with an attempt: it must describe that attempt in that run."""
    if slot.attempt_id is None:
        slot = slot._replace(attempt_id=attempt.id)
    same = (slot.attempt_id, slot.run_id, slot.experiment_id, slot.eval_id, slot.ordinal) == (
        attempt.id, attempt.run_id, attempt.experiment_id, attempt.eval_id, attempt.ordinal,
    )
    if not same or slot.relation is not Relation.ORIGIN:
        raise ValueError(f"slot {slot!r} is not the origin slot of attempt {attempt.id}")
    return slot
