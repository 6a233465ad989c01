"""`Store`: every read and write of the results database; the CLI calls nothing else.

Writes: the runner records a run, its reused (reference) slots, and seals each attempt with all
its assertion results and its slot in one transaction. Reads: typed rows for `view`, the run
summary and JUnit; column-named dicts for `query`; a read-only door for `query --sql`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .._ids import utc_now_iso
from .._records import AssertionResult, AttemptRecord, EventRecord, TurnRecord
from .._selectors import selects_any_experiment
from .._states import Relation, RunStatus
from ..outcomes import assertion_severity_sql
from . import groups, references, summary
from .connect import BUSY_TIMEOUT_MS, open_database, write_transaction
from .db import Db
from .errors import StoreError, translated
from .experiments import check_experiments_present
from .groups import (
    GROUP_KIND,
    GROUP_STATUS_FILTERS,
    GroupOutcome,
    RunRead,
)
from .heartbeat import BEAT_SQL, Heartbeats
from .history import EvalRef, LatestAttempt, latest_attempts
from .merge import MergeResult, merge_stores
from .merge_sources import readable_sources
from .owner import current_owner
from .queries import (
    RUN_SELECT,
    RUN_STATUS_FILTERS,
    RUN_STATUS_SQL,
    Names,
    as_tuple,
    assertions_select,
    attempts_select,
    costs_select,
    runs_select,
    transcript_select,
)
from .readonly_sql import run_readonly
from .rows import (
    AssertionRow,
    AttemptRow,
    PlanSlot,
    RunRow,
    SlotRecord,
    SlotRow,
    assertion_row,
    assertion_values,
    attempt_row,
    attempt_values,
    event_row,
    event_values,
    run_row,
    slot_row,
    slot_values,
    turn_row,
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
    INSERT_PLANS,
    INSERT_RUN,
    INSERT_SLOTS,
    INSERT_TURNS,
    RUN_COLUMNS,
    SLOT_COLUMNS,
    TURN_COLUMNS,
    MultiRowInsert,
)
from .summary import (
    OutcomeGroup,
    RunOutcomeRows,
)

QueryTarget = Literal["runs", "attempts", "assertions", "turns", "events"]
QUERY_TARGETS: tuple[str, ...] = ("runs", "attempts", "assertions", "turns", "events")
ALL_RUNS = "all"

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
    return _Seal(attempt, results, turns, events, slot)


class Store:
    """One open results store. Use from one thread at a time; open one per process.

    The one door to the results: writers (the runner) and readers (view, summary, JUnit, query,
    report, compare, merge) call its public methods only.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, *, readonly: bool) -> None:
        self.path = path
        self.readonly = readonly
        self._conn = conn
        self._db = Db(conn, path)
        self._beats = Heartbeats(self._beat)  # the runs this process began and has not finished

    # ── opening ──────────────────────────────────────────────────────────────────────────

    @classmethod
    def open(cls, path: Path, *, readonly: bool = False, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
             cache_kib: int | None = None) -> Store:
        """Open the store; a writable open creates parent directories and the schema.

        `busy_timeout_ms`: how long a write waits for another writer's lock before
        `StoreUnavailable` (exit 6). `cache_kib`: SQLite's page cache (None: a writer's small
        one, a reader's SQLite default; connect.py).
        """
        path = Path(path)
        return cls(path, open_database(path, readonly=readonly, busy_timeout_ms=busy_timeout_ms,
                                       cache_kib=cache_kib), readonly=readonly)

    def close(self) -> None:
        self._beats.stop_all()
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _writable(self, doing: str) -> None:
        if self.readonly:
            raise StoreError(f"{doing} needs a writable store, but {self.path} was opened read-only.")

    # ── writes (each one transaction that takes the write lock first) ────────────────────

    def begin_run(
        self,
        run_id: str,
        *,
        started_at: str,
        argv: Sequence[str],
        version: str,
        config_file: str | None,
        experiments: Sequence[str],
        planned_total: int | None = None,
        shard_index: int | None = None,
        shard_count: int | None = None,
        group_id: str | None = None,
        plan_digest: str | None = None,
        executor: str | None = None,
        budget_usd: float | None = None,
        reference_slots: Iterable[SlotRecord] = (),
        plan: Iterable[PlanSlot | tuple[Any, ...]] | None = None,
    ) -> None:
        """Record a new run as `running`, owned by this process (its status is set by `finish_run`).

        `reference_slots` and `plan` (see `add_reference_slots`, `record_plan`) may be written in
        the same transaction, so no reader ever sees the run without them. The plan need not
        repeat the reference slots: `run_plan` reads them as planned (schema 4). Both are read as they
        are written (a 20 000-slot plan is never held as rows) and read once more only if SQLite
        refuses a value, so they must be re-iterable (a list, or an object whose `__iter__`
        starts over), not a one-shot generator.
        """
        self._writable("Starting a run")
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
        }
        values = clean_values([record[c] for c in RUN_COLUMNS], RUN_COLUMNS, "runs", [])
        # Rows as given first, cleaned only if SQLite refuses them (as seal_attempt does): a
        # re-run reusing 20 000 results must not clean 40 000 rows value by value.
        slots = _checked_reference_slots(reference_slots)  # SlotRecords are rows in column order
        planned = _plan_rows(run_id, plan) if plan is not None else None
        try:
            self._write_begin(run_id, values, slots, planned)
        except (UnicodeEncodeError, OverflowError):
            self._write_begin(run_id, values, _clean_slots(reference_slots),
                              _plan_values(run_id, plan) if plan is not None else None)

    def _write_begin(self, run_id: str, values: Sequence[Any], slots: Iterable[Sequence[Any]],
                     planned: Iterable[Sequence[Any]] | None) -> None:
        conn = self._conn
        with write_transaction(conn, self.path, f"Recording run {run_id}"):
            conn.execute(INSERT_RUN, values)
            conn.execute(BEAT_SQL, [run_id, utc_now_iso()])
            _insert_rows(conn, INSERT_SLOTS, slots)
            if planned is not None:
                _insert_rows(conn, INSERT_PLANS, planned)
        self._beats.start(run_id)

    def _beat(self, run_id: str) -> None:
        """One heartbeat (heartbeat.py), waiting at most 0.2 s for another writer's lock."""
        conn = self._conn
        waited = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        conn.execute("PRAGMA busy_timeout = 200")
        try:
            with write_transaction(conn, self.path, "Recording a heartbeat"):
                conn.execute(BEAT_SQL, [run_id, utc_now_iso()])
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(waited)}")

    def record_plan(self, run_id: str, slots: Iterable[PlanSlot | tuple[Any, ...]]) -> None:
        """Store a run's full planned slot list (ids only: experiment, eval, ordinal, case), so
        readers can name the slots that never ran (`not_run`). Written once per run."""
        self._writable("Recording a run's plan")
        conn = self._conn
        with write_transaction(conn, self.path, f"Recording the plan of run {run_id}"):
            _insert_rows(conn, INSERT_PLANS, _plan_values(run_id, slots))

    def merge(self, sources: Sequence[Path]) -> MergeResult:
        """Copy the sealed rows of other stores into this one in one transaction (merge.py):
        identical rows skipped, a conflicting id refuses the whole merge (`MergeConflict`)."""
        self._writable("Merging stores")
        paths = [Path(s) for s in sources]
        with readable_sources(paths) as read_from:  # an older source is read from an upgraded copy
            settle = functools.partial(groups.store_verdicts, self._db)
            return merge_stores(self._conn, self.path, paths, settle=settle, read_from=read_from)

    def finish_run(self, run_id: str, *, status: RunStatus, ended_at: str, exit_code: int | None) -> None:
        """Set a running run's final status (a finished run is immutable: the file refuses)."""
        self._writable("Finishing a run")
        self._beats.stop(run_id)
        conn = self._conn
        with write_transaction(conn, self.path, f"Finishing run {run_id}"):
            row = conn.execute("SELECT status, group_id, shard_count FROM runs WHERE id = ?", [run_id]).fetchone()
            if row is None:
                raise StoreError(f"Run {run_id} is not in the results store {self.path}.")
            if row[0] != RunStatus.RUNNING:
                raise StoreError(
                    f"Run {run_id} in {self.path} is already {row[0]}; a finished run is never changed."
                )
            conn.execute(
                "UPDATE runs SET status = ?, ended_at = ?, exit_code = ? WHERE id = ?",
                [RunStatus(status).value, ended_at, exit_code, run_id],
            )
            if row[2] is not None and row[1] is not None:  # a shard: the last one to finish stores the verdict
                groups.store_verdicts(self._db, [row[1]], complete_only=True)

    def record_abandoned(self, *, ended_at: str | None = None) -> list[str]:
        """Close the `running` runs whose owner process is gone; return their ids.

        Readers only *show* such a run as `abandoned`; a writer (the next `run`) calls this to
        store the fact: status `interrupted`, `exit_code` NULL (the process never exited with
        one; an interrupt it saw itself stores 130), `ended_at` the time it was noticed.
        """
        self._writable("Recording abandoned runs")
        conn = self._conn
        ended_at = ended_at or utc_now_iso()
        with write_transaction(conn, self.path, "Recording abandoned runs"):
            ids = [row[0] for row in conn.execute(
                f"SELECT id FROM runs WHERE status = '{RunStatus.RUNNING}' AND {RUN_STATUS_SQL} = "
                f"'{RunStatus.ABANDONED}' ORDER BY id"
            )]
            conn.executemany(
                "UPDATE runs SET status = ?, ended_at = ? WHERE id = ? AND status = ?",
                [(RunStatus.INTERRUPTED.value, ended_at, run_id, RunStatus.RUNNING.value) for run_id in ids],
            )
        return ids

    def add_reference_slots(self, slots: Sequence[SlotRecord]) -> None:
        """Record, at plan time, the slots a run fills by reusing earlier sealed attempts."""
        self._writable("Recording reused attempts")
        _check_reference_slots(slots)
        if not slots:
            return
        conn = self._conn
        with write_transaction(conn, self.path, "Recording reused attempts"):
            _insert_rows(conn, INSERT_SLOTS, _clean_slots(slots))

    def seal_attempt(
        self, attempt: AttemptRecord, results: Sequence[AssertionResult], slot: SlotRecord
    ) -> None:
        """Write the attempt, all its results, turns, events and its origin slot in one
        transaction: all or nothing.

        Text SQLite cannot encode and integers outside int64 never abort the seal: the values are
        stored replaced (U+FFFD) or as NULL, and `attempts.notes` says so (sanitize.py).
        """
        self._writable("Sealing an attempt")
        rows = _checked_seal(attempt, results, slot)
        try:
            self._write_seals(attempt.id, [rows])
        except (UnicodeEncodeError, OverflowError):
            # Only now pay for cleaning: the first try costs nothing on the normal path.
            self._write_seals(attempt.id, [_cleaned_seal(rows)])

    def seal_attempts(
        self, sealed: Sequence[tuple[AttemptRecord, Sequence[AssertionResult], SlotRecord]]
    ) -> None:
        """Seal several attempts in one transaction (the runner's group commit: attempts that
        finish together share one COMMIT). All or nothing: when any of them cannot be written as
        given, nothing is, and the caller seals them one by one (`seal_attempt`), which is where
        values are cleaned or an attempt is sealed errored."""
        self._writable("Sealing attempts")
        if not sealed:
            return
        rows = [_checked_seal(attempt, results, slot) for attempt, results, slot in sealed]
        self._write_seals(sealed[0][0].id if len(sealed) == 1 else f"{sealed[0][0].id} and {len(sealed) - 1} more",
                          rows)

    def _write_seals(self, which: str, seals: Sequence[_Seal]) -> None:
        # Prepared statements, not insert_all: sealing is the runner's hot path, and sqlite-utils'
        # per-value conversion and per-call savepoints halve throughput (benchmarks/store_seal.py).
        # Table by table, many rows a statement (schema.MultiRowInsert): a batch of attempts with
        # ten tool calls each is a few statements, not one per row. Attempts go first, so every
        # row that refers to one finds it.
        conn = self._conn
        with write_transaction(conn, self.path, f"Sealing attempt {which}"):
            _insert_rows(conn, INSERT_ATTEMPTS, [rows.attempt for rows in seals])
            _insert_rows(conn, INSERT_ASSERTIONS, [r for rows in seals for r in rows.results])
            _insert_rows(conn, INSERT_TURNS, [t for rows in seals for t in rows.turns])
            _insert_rows(conn, INSERT_EVENTS, [e for rows in seals for e in rows.events])
            _insert_rows(conn, INSERT_SLOTS, [rows.slot for rows in seals])

    # ── typed reads ──────────────────────────────────────────────────────────────────────

    def latest_attempts(
        self, experiment_id: str, evals: Sequence[EvalRef | str] | None = None
    ) -> dict[tuple[str, int], LatestAttempt]:
        """The latest sealed attempt of every (eval, ordinal) slot of an experiment, in one query per
        batch (planning thousands of slots must not make thousands of lookups), with only the
        columns reuse decides on. `evals`: only those evals' slots, found by identity (`history`);
        planning asks in batches, so a 20 000-slot re-run never holds every previous attempt."""
        with translated(self.path, "Looking up previous attempts"):
            return latest_attempts(self._conn, experiment_id, evals)

    def fingerprint_parts_of(self, attempt_id: str) -> str | None:
        """The canonical JSON an attempt's fingerprint hashed (planning names the changed parts
        from it; a 20 000-slot plan must not read 20 000 of them to find none changed)."""
        with translated(self.path, "Reading an attempt's fingerprint"):
            row = self._conn.execute("SELECT fingerprint_parts FROM attempts WHERE id = ?", [attempt_id]).fetchone()
        return row[0] if row is not None else None

    def latest_run_id(self) -> str | None:
        """The most recent run, or its group when it is a shard (a group counts as one run)."""
        return references.latest_run_id(self._db)

    def resolve_run(self, ref: str | None) -> RunRow:
        """`None` → the latest run (or group); otherwise an exact run id, an exact shard group id,
        or a unique prefix of either. A group reads as one run (`RunRow.kind == "group"`)."""
        return self.read_run(ref).run

    def read_run(
        self, ref: str | None, *, outcome: Callable[[], GroupOutcome | None] | None = None
    ) -> RunRead:
        """`resolve_run`, plus what deciding a group's verdict read on the way (its outcome groups
        and not-run slots), for a reader that needs them next (`view`): read once, not twice.

        `outcome`: gives the group's `group_outcome`, when the caller has it read on another
        connection while this one reads the rest; called once the members and the not-run slots
        are read. Ignored for a run (its verdict is stored).
        """
        kind, ident = self.resolve_ref(ref)
        if kind == GROUP_KIND:
            return groups.read_group(self._db, ident, outcome)
        rows = self._db.rows("Reading a run", f"SELECT {RUN_SELECT} FROM runs WHERE id = ?", [ident])
        return RunRead(run_row(rows[0]), None, None)

    def resolve_ref(self, ref: str | None) -> tuple[str, str]:
        """What `ref` names — ("run", run id) or ("group", group id); None: the latest run or
        group — without reading a group's verdict. The errors are `resolve_run`'s."""
        return references.resolve_ref(self._db, ref)

    def _resolve_id(self, ref: str | None) -> str:
        """The exact run or group id `ref` names (None: the latest), without reading the group's verdict."""
        return references.resolve_ref(self._db, ref)[1]

    def run_scope(self, ref_id: str) -> list[str]:
        """The run ids an exact run or group id stands for: the run itself, or the group's
        member shard runs (newest first)."""
        return references.run_scope(self._db, ref_id)

    def group_outcome(self, group_id: str) -> GroupOutcome | None:
        """A group's members, outcome groups and the verdict decided from them (None when one is
        stored for these members: the reader uses that): the part of reading a group that needs
        no other read, for a reader to run on a connection of its own while it reads the rest
        (`view`), then hand to `read_run(outcome=)`. None: no such group."""
        return groups.group_outcome(self._db, group_id)

    def group_plans(self, group_id: str) -> set[tuple[str | None, int]]:
        """(plan digest, shard count) of a group's shard runs: one pair when they are consistent."""
        return groups.group_plans(self._db, group_id)

    def resolve_attempt(self, prefix: str) -> AttemptRow:
        """An attempt by exact id or unique prefix, written with or without a leading `@`."""
        attempt_id = references.resolve_prefix(self._db, "attempts", "attempt", prefix.removeprefix("@"))
        rows = self._db.rows("Reading an attempt", "SELECT * FROM attempts WHERE id = ?", [attempt_id])
        return attempt_row(rows[0])

    def run_slots(self, run_id: str) -> list[SlotRow]:
        """A run's (or a group's) slots, by experiment, eval and ordinal."""
        ids = self.run_scope(run_id)
        rows = self._db.rows(
            "Reading a run's slots",
            f"SELECT * FROM run_slots WHERE run_id IN ({', '.join('?' * len(ids))}) "
            "ORDER BY experiment_id, eval_id, ordinal",
            ids,
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
            self.run_scope(run_id), experiment=experiment, eval_prefix=eval_prefix, states=states, limit=limit,
            slot_columns=("relation", "plan_reason"),
        )
        return [attempt_row(row) for row in self._db.rows("Reading a run's attempts", sql, params)]

    def costs(self, run_id: str, *, experiment: Names = None, eval_prefix: Names = None) -> list[dict[str, Any]]:
        """Per experiment of a run: attempts, reported cost (sum, count) and estimated cost (sum, count)."""
        sql, params = costs_select(self.run_scope(run_id), experiment=experiment, eval_prefix=eval_prefix)
        return self._db.rows("Reading a run's cost", sql, params)

    def turns(self, attempt_id: str) -> list[TurnRecord]:
        """An attempt's transcript: its turns in ordinal order, each with its events in seq order."""
        by_turn: dict[int, list[EventRecord]] = {}
        for event in self.events(attempt_id):
            by_turn.setdefault(event.turn_ordinal, []).append(event)
        rows = self._db.rows(
            "Reading an attempt's turns", "SELECT * FROM turns WHERE attempt_id = ? ORDER BY ordinal",
            [attempt_id],
        )
        return [turn_row(row, tuple(by_turn.get(row["ordinal"], ()))) for row in rows]

    def events(self, attempt_id: str) -> list[EventRecord]:
        """An attempt's events, by turn ordinal then seq."""
        rows = self._db.rows(
            "Reading an attempt's events",
            "SELECT * FROM events WHERE attempt_id = ? ORDER BY turn_ordinal, seq", [attempt_id],
        )
        return [event_row(row) for row in rows]

    def run_plan(self, run_id: str) -> list[PlanSlot]:
        """The run's (or group's) full planned slot list: its `run_plan` rows and, since schema 4
        does not repeat them there, the slots it adopted when it began (empty if neither)."""
        rows = self._db.rows(
            "Reading a run's plan",
            "SELECT experiment_id, eval_id, ordinal, case_id FROM run_plan WHERE run_id = :run "
            "UNION SELECT s.experiment_id, s.eval_id, s.ordinal, a.case_id FROM run_slots s "
            "JOIN attempts a ON a.id = s.attempt_id WHERE s.run_id = :run AND s.relation = 'reference' "
            "AND (SELECT planned_total FROM runs WHERE id = :run) IS NOT NULL "  # it recorded a plan
            "ORDER BY 1, 2, 3", {"run": self.run_scope(run_id)[0]},
        )
        return [PlanSlot(r["experiment_id"], r["eval_id"], r["ordinal"], r["case_id"]) for r in rows]

    def not_run(self, run_id: str) -> list[PlanSlot]:
        """Planned slots of the run that no attempt filled (never started, or the run stopped);
        of a shard run, only its own shard's; of a group, every slot its members did not fill
        (a missing shard's slots included)."""
        ids = self.run_scope(run_id)
        shard = None
        if ids == [run_id]:
            row = self._db.rows("Reading a run", "SELECT shard_index, shard_count FROM runs WHERE id = ?", [run_id])
            if row and row[0]["shard_count"] is not None:
                shard = (row[0]["shard_index"], row[0]["shard_count"])
        return groups.not_run_slots(self._db, ids, ids[0], shard)

    def outcome_rows(
        self, run_ids: str | Sequence[str], *, experiment: Names = None, eval_prefix: Names = None
    ) -> list[OutcomeGroup]:
        """The attempts filling the slots of one or several runs (reused ones included), grouped
        by outcome: what the run decision, `view`'s header and the summary count."""
        ids = [i for ref in ([run_ids] if isinstance(run_ids, str) else run_ids) for i in self.run_scope(ref)]
        return summary.outcome_groups(self._db, ids, experiment=experiment, eval_prefix=eval_prefix)

    def run_outcome_rows(self, run_id: str) -> RunOutcomeRows:
        """One run's outcome for its verdict and summary: the evals whose every attempt passed,
        counted (`PassedEvals`), the outcome groups of every other eval, and the cost per
        experiment (`costs`). Read in one pass over the run's slots (20 000 passing evals: no
        group built for any of them)."""
        return summary.run_outcome(self._db, run_id)

    def assertions_for_attempt(self, attempt_id: str) -> list[AssertionRow]:
        """One attempt's results: errored, mismatched/below, unavailable, the rest; then ordinal."""
        rows = self._db.rows(
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
            return self._query_runs(run, experiment=experiment, states=states, limit=limit)
        if target not in QUERY_TARGETS:
            raise StoreError(f"Unknown query target {target!r}; choose {', '.join(QUERY_TARGETS)}.")
        ref = None if run == ALL_RUNS else self._resolve_id(run)
        run_id = None if ref is None else self.run_scope(ref)
        with translated(self.path, "Reading the runs' experiments"):
            check_experiments_present(self._conn, run_id, as_tuple(experiment),
                                      "the store" if ref is None else f"run {ref}")
        if target in ("attempts", "assertions"):
            select = attempts_select if target == "attempts" else assertions_select
            sql, params = select(
                run_id, experiment=experiment, eval_prefix=eval_prefix, states=states, limit=limit
            )
        else:
            sql, params = transcript_select(
                target, run_id, experiment=experiment, eval_prefix=eval_prefix, states=states, limit=limit
            )
        with translated(self.path, f"Querying {target}"):
            cursor = self._conn.execute(sql, params)
            columns = [d[0] for d in cursor.description]
            return columns, [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def _query_runs(
        self, run: str | None, *, experiment: Names, states: Names, limit: int | None
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """Runs newest first, each shard group as a row of its own (kind `group`) just before its
        newest member; `--run GROUP` gives the group row and its member runs."""
        wanted = as_tuple(states)
        unknown = [s for s in wanted if s not in RUN_STATUS_FILTERS and s not in GROUP_STATUS_FILTERS]
        if unknown:
            raise StoreError(
                f"Unknown run state {', '.join(repr(s) for s in unknown)}; "
                f"choose from {', '.join((*RUN_STATUS_FILTERS, *GROUP_STATUS_FILTERS))}."
            )
        run_states = [s for s in wanted if s in RUN_STATUS_FILTERS]
        group_states = [s for s in wanted if s in GROUP_STATUS_FILTERS]
        scope: list[str] | None = None
        group_rows: list[dict[str, Any]] = []
        if run in (None, ALL_RUNS):
            if not (run_states and not group_states):
                ids = [row["group_id"] for row in self._db.rows(
                    "Listing groups", "SELECT DISTINCT group_id FROM runs WHERE shard_count IS NOT NULL "
                    "AND group_id IS NOT NULL",
                )]
                group_rows = [read[0] for read in (groups.group_row_read(self._db, i) for i in ids) if read is not None]
        else:
            kind, ident = references.resolve_run_or_group(self._db, run)
            scope = [ident]
            if kind == GROUP_KIND:  # the group row (decided once) and its member runs
                read = groups.group_row_read(self._db, ident)
                if read is None:
                    raise StoreError(f"No group with id {ident!r} in {self.path}; `niceeval query runs` lists them.")
                scope = list(read[0]["member_run_ids"])
                group_rows = [] if run_states and not group_states else [read[0]]
        sql, params = runs_select(scope, experiment=experiment, states=run_states or None, limit=None)
        with translated(self.path, "Querying runs"):
            cursor = self._conn.execute(sql, params)
            columns = [d[0] for d in cursor.description]
            runs = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        if group_states and not run_states:
            runs = []
        rows = _with_groups(runs, group_rows, experiment, group_states)
        return columns, rows[:limit] if limit is not None else rows

    def sql(self, statement: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run a user's read-only SELECT/WITH statement on a separate read-only connection."""
        return run_readonly(self.path, statement)


def _with_groups(
    runs: list[dict[str, Any]], groups: list[dict[str, Any]], experiment: Names, states: Sequence[str]
) -> list[dict[str, Any]]:
    """Each group row placed just before its newest member run (or by its start time when the
    run rows were filtered away), the group-only keys dropped."""
    wanted = as_tuple(experiment)
    placed: dict[str, dict[str, Any]] = {}
    loose: list[dict[str, Any]] = []
    for group in groups:
        members = group.pop("member_run_ids")
        group.pop("run_status")
        if states and group["status"] not in states:
            continue
        if wanted and not any(selects_any_experiment(wanted, e) for e in json.loads(group["experiments"])):
            continue
        if members[0] in {r["id"] for r in runs}:
            placed[members[0]] = group
        else:
            loose.append(group)
    rows: list[dict[str, Any]] = []
    for row in runs:
        if row["id"] in placed:
            rows.append(placed[row["id"]])
        rows.append(row)
    for group in loose:
        at = next((i for i, r in enumerate(rows) if (r["started_at"], r["id"]) < (group["started_at"], group["id"])),
                  len(rows))
        rows.insert(at, group)
    return rows
def _check_reference_slots(slots: Iterable[SlotRecord]) -> None:
    for _slot in _checked_reference_slots(slots):
        pass


def _insert_rows(conn: sqlite3.Connection, insert: MultiRowInsert, rows: Iterable[Sequence[Any]]) -> None:
    """`rows` as `insert.rows`-row statements (schema.MultiRowInsert), inside the caller's
    transaction: a refused row rolls back the whole write."""
    full = insert.sql(insert.rows)
    it = iter(rows)
    while chunk := list(itertools.islice(it, insert.rows)):
        conn.execute(full if len(chunk) == insert.rows else insert.sql(len(chunk)),
                     [value for row in chunk for value in row])


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
