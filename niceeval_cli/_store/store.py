"""`Store`: every read and write of the results database; the CLI calls nothing else.

Writes: the runner records a run, its reused (reference) slots, and seals each attempt with all
its assertion results and its slot in one transaction. Reads: typed rows for `view`, the run
summary and JUnit; column-named dicts for `query`; a read-only door for `query --sql`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from sqlite_utils import Database
from sqlite_utils.db import NotFoundError

from .._records import AssertionResult, AttemptRecord
from .._states import Relation, RunStatus
from ..outcomes import assertion_severity_sql
from .connect import open_database
from .errors import StoreError, translated
from .queries import Names, assertions_select, attempts_select, runs_select
from .readonly_sql import run_readonly
from .rows import (
    AssertionRow,
    AttemptRow,
    RunRow,
    SlotRecord,
    SlotRow,
    assertion_row,
    assertion_values,
    attempt_row,
    attempt_values,
    run_row,
    slot_row,
    slot_values,
)
from .schema import INSERT_ASSERTION, INSERT_ATTEMPT, INSERT_SLOT, SLOT_COLUMNS

QueryTarget = Literal["runs", "attempts", "assertions"]
ALL_RUNS = "all"

_SLOT_HEADER = list(SLOT_COLUMNS)
_AMBIGUOUS_SHOWN = 5


class Store:
    """One open results store. Use from one thread at a time; open one per process."""

    def __init__(self, path: Path, db: Database, *, readonly: bool) -> None:
        self.path = path
        self.readonly = readonly
        self._db = db

    # ── opening ──────────────────────────────────────────────────────────────────────────

    @classmethod
    def open(cls, path: Path, *, readonly: bool = False) -> Store:
        """Open the store; a writable open creates parent directories and the schema."""
        path = Path(path)
        return cls(path, open_database(path, readonly=readonly), readonly=readonly)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _writable(self, doing: str) -> None:
        if self.readonly:
            raise StoreError(f"{doing} needs a writable store, but {self.path} was opened read-only.")

    # ── writes ───────────────────────────────────────────────────────────────────────────

    def begin_run(
        self,
        run_id: str,
        *,
        started_at: str,
        argv: Sequence[str],
        version: str,
        config_file: str | None,
        experiments: Sequence[str],
    ) -> None:
        """Record a new run as `running` (its status is set by `finish_run`)."""
        self._writable("Starting a run")
        record = {
            "id": run_id,
            "started_at": started_at,
            "ended_at": None,
            "status": RunStatus.RUNNING.value,
            "argv": list(argv),  # sqlite-utils stores lists as JSON text
            "niceeval_version": version,
            "exit_code": None,
            "config_file": config_file,
            "experiments": list(experiments),
        }
        with translated(self.path, f"Recording run {run_id}"):
            self._db.table("runs").insert(record)

    def finish_run(self, run_id: str, *, status: RunStatus, ended_at: str, exit_code: int | None) -> None:
        """Set a run's final status (runs rows, unlike sealed rows, may be updated)."""
        self._writable("Finishing a run")
        updates = {"status": RunStatus(status).value, "ended_at": ended_at, "exit_code": exit_code}
        with translated(self.path, f"Finishing run {run_id}"):
            try:
                self._db.table("runs").update(run_id, updates)
            except NotFoundError as error:
                raise StoreError(f"Run {run_id} is not in the results store {self.path}.") from error

    def add_reference_slots(self, slots: Sequence[SlotRecord]) -> None:
        """Record, at plan time, the slots a run fills by reusing earlier sealed attempts."""
        self._writable("Recording reused attempts")
        for slot in slots:
            if slot.relation is not Relation.REFERENCE or slot.attempt_id is None:
                raise ValueError(f"not a reference slot with an attempt: {slot!r}")
        if not slots:
            return
        with translated(self.path, "Recording reused attempts"), self._db.atomic():
            self._db.table("run_slots").insert_all([_SLOT_HEADER, *map(slot_values, slots)])

    def seal_attempt(
        self, attempt: AttemptRecord, results: Sequence[AssertionResult], slot: SlotRecord
    ) -> None:
        """Write the attempt, all its results and its origin slot in one transaction: all or nothing."""
        self._writable("Sealing an attempt")
        slot = _origin_slot(attempt, slot)
        for result in results:
            if result.attempt_id != attempt.id:
                raise ValueError(f"result {result.id} belongs to {result.attempt_id}, not {attempt.id}")
        # Prepared statements, not insert_all: sealing is the runner's hot path, and sqlite-utils'
        # per-value conversion and per-call savepoints halve throughput (benchmarks/store_seal.py).
        conn = self._db.conn
        with translated(self.path, f"Sealing attempt {attempt.id}"), self._db.atomic():
            conn.execute(INSERT_ATTEMPT, attempt_values(attempt))
            conn.executemany(INSERT_ASSERTION, map(assertion_values, results))
            conn.execute(INSERT_SLOT, slot_values(slot))

    # ── typed reads ──────────────────────────────────────────────────────────────────────

    def _rows(
        self, doing: str, sql: str, params: Sequence[Any] | dict[str, Any] = ()
    ) -> list[dict[str, Any]]:
        with translated(self.path, doing):
            return list(self._db.query(sql, params))

    def latest_attempts(self, experiment_id: str) -> dict[tuple[str, int], AttemptRow]:
        """The latest sealed attempt of every (eval, ordinal) slot of an experiment, in one query
        (planning a run of thousands of slots must not make thousands of lookups)."""
        rows = self._rows(
            "Looking up previous attempts",
            "SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY eval_id, ordinal "
            "ORDER BY ended_at DESC, id DESC) AS newest FROM attempts WHERE experiment_id = ?) WHERE newest = 1",
            [experiment_id],
        )
        return {(row["eval_id"], row["ordinal"]): attempt_row(row) for row in rows}

    def latest_run_id(self) -> str | None:
        rows = self._rows(
            "Finding the latest run", "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1"
        )
        return rows[0]["id"] if rows else None

    def resolve_run(self, ref: str | None) -> RunRow:
        """`None` → the latest run; otherwise an exact run id or a unique prefix of one."""
        if ref is None:
            ref = self.latest_run_id()
            if ref is None:
                raise StoreError(f"No runs yet in {self.path}; run `niceeval run` first.")
        run_id = self._resolve_prefix("runs", "run", ref)
        rows = self._rows("Reading a run", "SELECT * FROM runs WHERE id = ?", [run_id])
        return run_row(rows[0])

    def resolve_attempt(self, prefix: str) -> AttemptRow:
        """An attempt by exact id or unique prefix, written with or without a leading `@`."""
        attempt_id = self._resolve_prefix("attempts", "attempt", prefix.removeprefix("@"))
        rows = self._rows("Reading an attempt", "SELECT * FROM attempts WHERE id = ?", [attempt_id])
        return attempt_row(rows[0])

    def _resolve_prefix(self, table: str, what: str, ref: str) -> str:
        ref = ref.strip()
        if not ref:
            raise StoreError(f"Give the {what} id (or the start of one).")
        if self._rows(f"Finding {what} {ref}", f"SELECT id FROM {table} WHERE id = ?", [ref]):
            return ref
        # Ids are upper-case Crockford base32; people type them in any case.
        matches = [
            row["id"]
            for row in self._rows(
                f"Finding {what} {ref}",
                f"SELECT id FROM {table} WHERE upper(substr(id, 1, length(:ref))) = upper(:ref) "
                f"ORDER BY id LIMIT {_AMBIGUOUS_SHOWN + 1}",
                {"ref": ref},
            )
        ]
        if not matches:
            listing = "niceeval query runs" if table == "runs" else "niceeval query attempts --run all"
            raise StoreError(f"No {what} with id {ref!r} in {self.path}; `{listing}` lists them.")
        if len(matches) > 1:
            more = ", ..." if len(matches) > _AMBIGUOUS_SHOWN else ""
            shown = ", ".join(matches[:_AMBIGUOUS_SHOWN]) + more
            raise StoreError(
                f"The {what} id prefix {ref!r} is ambiguous in {self.path}: it matches {shown}; "
                "give more characters."
            )
        return str(matches[0])

    def run_slots(self, run_id: str) -> list[SlotRow]:
        rows = self._rows(
            "Reading a run's slots",
            "SELECT * FROM run_slots WHERE run_id = ? ORDER BY experiment_id, eval_id, ordinal",
            [run_id],
        )
        return [slot_row(row) for row in rows]

    def attempts_for_run(
        self,
        run_id: str,
        *,
        experiment: Names = None,
        eval_prefix: Names = None,
        states: Names = None,
        limit: int | None = None,
    ) -> list[AttemptRow]:
        """A run's attempts, reused ones included (relation `reference`), worst first."""
        sql, params = attempts_select(
            run_id, experiment=experiment, eval_prefix=eval_prefix, states=states, limit=limit,
            slot_columns=("relation", "plan_reason"),
        )
        return [attempt_row(row) for row in self._rows("Reading a run's attempts", sql, params)]

    def assertions_for_attempt(self, attempt_id: str) -> list[AssertionRow]:
        """One attempt's results: errored, mismatched/below, unavailable, the rest; then ordinal."""
        rows = self._rows(
            "Reading an attempt's results",
            f"SELECT * FROM assertion_results r WHERE attempt_id = ? "
            f"ORDER BY {assertion_severity_sql('r.state')}, r.ordinal",
            [attempt_id],
        )
        return [assertion_row(row) for row in rows]

    # ── rows for output formats ──────────────────────────────────────────────────────────

    def query(
        self,
        target: QueryTarget,
        *,
        run: str | None = None,
        experiment: Names = None,
        eval_prefix: Names = None,
        states: Names = None,
        limit: int | None = None,
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """Column names and rows for `niceeval query`, in the documented order.

        `run`: None → the latest run (for `runs`: every run), "all" → every run, else an id or prefix.
        """
        if target == "runs":
            if eval_prefix:
                raise StoreError("--eval does not apply to `query runs`.")
            run_id = None if run in (None, ALL_RUNS) else self.resolve_run(run).id
            sql, params = runs_select(run_id, experiment=experiment, states=states, limit=limit)
        elif target in ("attempts", "assertions"):
            run_id = None if run == ALL_RUNS else self.resolve_run(run).id
            select = attempts_select if target == "attempts" else assertions_select
            sql, params = select(
                run_id, experiment=experiment, eval_prefix=eval_prefix, states=states, limit=limit
            )
        else:
            raise StoreError(f"Unknown query target {target!r}; choose runs, attempts or assertions.")
        with translated(self.path, f"Querying {target}"):
            cursor = self._db.execute(sql, params)
            columns = [d[0] for d in cursor.description]
            return columns, [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def sql(self, statement: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run a user's read-only SELECT/WITH statement on a separate read-only connection."""
        return run_readonly(self.path, statement)


def _origin_slot(attempt: AttemptRecord, slot: SlotRecord) -> SlotRecord:
    """The slot row sealed with an attempt: it must describe that attempt in that run."""
    if slot.attempt_id is None:
        slot = dataclasses.replace(slot, attempt_id=attempt.id)
    same = (slot.attempt_id, slot.run_id, slot.experiment_id, slot.eval_id, slot.ordinal) == (
        attempt.id, attempt.run_id, attempt.experiment_id, attempt.eval_id, attempt.ordinal,
    )
    if not same or slot.relation is not Relation.ORIGIN:
        raise ValueError(f"slot {slot!r} is not the origin slot of attempt {attempt.id}")
    return slot
