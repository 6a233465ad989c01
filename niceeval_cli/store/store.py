"""`Store`: every read and write of the results database; the CLI calls nothing else.

The one entry point, kept thin: it opens and closes the file, keeps the heartbeats of the runs
it began, refuses writes on a read-only open, and hands each call to the module whose job it
is, over a `Db` (db.py: the connection and the path):

- sealing.py — every write: a run begun with its reused slots and plan, attempts sealed (one
  or a group commit), a run finished or recorded abandoned; the seal rows built and cleaned;
- references.py — what a run, group or attempt id (or prefix) names, `None` the latest run;
- groups.py — a shard group read as one run, its verdict decided or read, stored when settled;
- summary.py — a run's attempts grouped by outcome, and its counted `PassedEvals`;
- targets.py — the rows of `query`; reads.py — a run's and an attempt's typed rows;
- history.py — the latest attempts per slot, for planning; merge.py — other stores merged in;
- labels.py — human labels checked against what they name, inserted, read back;
- agreement.py — judge decisions paired with labels (or another run's judge), counted.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from .._records import AssertionResult, AttemptRecord, EventRecord, TurnRecord
from .._states import RunStatus
from .._unit_folds import UnitFold
from . import groups, reads, references, regrades, sealing, summary, targets, unit_folds
from .agreement import PairCounts, between_pairs, label_pairs
from .connect import BUSY_TIMEOUT_MS, open_database
from .db import Db
from .errors import StoreError, translated
from .experiments import check_experiments_present
from .groups import GroupOutcome, RunRead
from .heartbeat import Heartbeats
from .history import EvalRef, LatestAttempt, latest_attempts
from .labels import LabelInput, LabelTarget, find_target, insert_labels, read_labels, unicode_text
from .merge import MergeResult, merge_stores
from .merge_sources import readable_sources
from .queries import Names
from .readonly_sql import run_readonly
from .regrades import RegradeSource
from .rows import AssertionRow, AttemptRow, PlanSlot, RunRow, SlotRecord, SlotRow
from .summary import OutcomeGroup, RunOutcomeRows
from .targets import QueryTarget


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
        regrade_of: str | None = None,
    ) -> None:
        """Record a new run as `running`, owned by this process (its status is set by `finish_run`).

        `reference_slots` and `plan` (see `add_reference_slots`, `record_plan`) may be written in
        the same transaction, so no reader ever sees the run without them. The plan need not
        repeat the reference slots: `run_plan` reads them as planned (schema 4). Both are read as they
        are written (a 20 000-slot plan is never held as rows) and read once more only if SQLite
        refuses a value, so they must be re-iterable (a list, or an object whose `__iter__`
        starts over), not a one-shot generator. `regrade_of`: the run a `regrade` run re-judges
        (its kind is then `regrade`, else `run`).
        """
        self._writable("Starting a run")
        sealing.begin_run(
            self._db, run_id, started_at=started_at, argv=argv, version=version, config_file=config_file,
            experiments=experiments, planned_total=planned_total, shard_index=shard_index,
            shard_count=shard_count, group_id=group_id, plan_digest=plan_digest, executor=executor,
            budget_usd=budget_usd, reference_slots=reference_slots, plan=plan, regrade_of=regrade_of,
        )
        self._beats.start(run_id)

    def _beat(self, run_id: str) -> None:
        """One heartbeat (heartbeat.py), waiting at most 0.2 s for another writer's lock."""
        sealing.beat(self._db, run_id)

    def record_plan(self, run_id: str, slots: Iterable[PlanSlot | tuple[Any, ...]]) -> None:
        """Store a running run's planned slot list (ids only: experiment, eval, ordinal, case), so
        readers can name the slots that never ran (`not_run`); its `planned_total` is left as it is.
        For tools and tests that build a store: `run` writes its plan with `begin_run(plan=...)`
        and grows it with `extend_plan`, which keeps the total with the plan."""
        self._writable("Recording a run's plan")
        sealing.record_plan(self._db, run_id, slots)

    def extend_plan(self, run_id: str, plan: Sequence[PlanSlot], reference_slots: Sequence[SlotRecord]) -> None:
        """Add slots to a running run's plan (`run --until-decided`: a round's): the slots it
        executes (`plan`), those it fills with earlier attempts (`reference_slots`) and its
        `planned_total` with them, in one transaction, so a reader never sees a plan that
        disagrees with its total."""
        self._writable("Recording a run's plan")
        sealing.extend_plan(self._db, run_id, plan, reference_slots)

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
        sealing.finish_run(self._db, run_id, status=status, ended_at=ended_at, exit_code=exit_code)

    def record_abandoned(self, *, ended_at: str | None = None) -> list[str]:
        """Close the `running` runs whose owner process is gone; return their ids.

        Readers only *show* such a run as `abandoned`; a writer (the next `run`) calls this to
        store the fact: status `interrupted`, `exit_code` NULL (the process never exited with
        one; an interrupt it saw itself stores 130), `ended_at` the time it was noticed.
        """
        self._writable("Recording abandoned runs")
        return sealing.record_abandoned(self._db, ended_at=ended_at)

    def add_reference_slots(self, slots: Sequence[SlotRecord]) -> None:
        """Record, at plan time, the slots a run fills by reusing earlier sealed attempts."""
        self._writable("Recording reused attempts")
        sealing.add_reference_slots(self._db, slots)

    def seal_attempt(
        self, attempt: AttemptRecord, results: Sequence[AssertionResult], slot: SlotRecord
    ) -> None:
        """Write the attempt, all its results, turns, events and its origin slot in one
        transaction: all or nothing.

        Text SQLite cannot encode and integers outside int64 never abort the seal: the values are
        stored replaced (U+FFFD) or as NULL, and `attempts.notes` says so (sanitize.py).
        """
        self._writable("Sealing an attempt")
        sealing.seal_attempt(self._db, attempt, results, slot)

    def seal_attempts(
        self, sealed: Sequence[tuple[AttemptRecord, Sequence[AssertionResult], SlotRecord]]
    ) -> None:
        """Seal several attempts in one transaction (the runner's group commit: attempts that
        finish together share one COMMIT). All or nothing: when any of them cannot be written as
        given, nothing is, and the caller seals them one by one (`seal_attempt`), which is where
        values are cleaned or an attempt is sealed errored."""
        self._writable("Sealing attempts")
        sealing.seal_attempts(self._db, sealed)

    # ── typed reads ──────────────────────────────────────────────────────────────────────

    def latest_attempts(
        self, experiment_id: str, evals: Sequence[EvalRef | str] | None = None, ordinal: int | None = None,
    ) -> dict[tuple[str, int], LatestAttempt]:
        """The latest sealed attempt of every (eval, ordinal) slot of an experiment, in one query per
        batch (planning thousands of slots must not make thousands of lookups), with only the
        columns reuse decides on. `evals`: only those evals' slots, found by identity (`history`);
        planning asks in batches, so a 20 000-slot re-run never holds every previous attempt.
        `ordinal`: only that ordinal's slots (`history.latest_attempts`)."""
        with translated(self.path, "Looking up previous attempts"):
            return latest_attempts(self._conn, experiment_id, evals, ordinal)

    def fingerprint_parts_of(self, attempt_id: str) -> str | None:
        """The canonical JSON an attempt's fingerprint hashed (planning names the changed parts
        from it; a 20 000-slot plan must not read 20 000 of them to find none changed)."""
        return reads.fingerprint_parts_of(self._db, attempt_id)

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
        return references.read_run(self._db, ref, outcome)

    def resolve_ref(self, ref: str | None) -> tuple[str, str]:
        """What `ref` names — ("run", run id) or ("group", group id); None: the latest run or
        group — without reading a group's verdict. The errors are `resolve_run`'s."""
        return references.resolve_ref(self._db, ref)

    def run_scope(self, ref_id: str) -> list[str]:
        """The run ids an exact run or group id stands for: the run itself, or the group's
        member shard runs (newest first)."""
        return references.run_scope(self._db, ref_id)

    def check_experiments(self, ref_id: str, selectors: Sequence[str]) -> None:
        """StoreError (exit 2) for a reader's `--experiment` selector that selects no experiment of the
        run or group `ref_id`: an empty page would read as "it ran and sealed nothing" (`query`'s rule)."""
        with translated(self.path, "Reading the runs' experiments"):
            check_experiments_present(self._db.conn, self.run_scope(ref_id), selectors, f"run {ref_id}")

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
        return reads.resolve_attempt(self._db, prefix)

    def attempt_columns(self, run_id: str, columns: Sequence[str]) -> list[dict[str, Any]]:
        """A run's attempts with only these columns (those the store has), worst first."""
        return reads.attempt_columns(self._db, run_id, columns)

    def unit_folds(self, run_id: str) -> list[UnitFold] | None:
        """A run's units with their attempts folded in SQL (what `compare` reads); None when some
        unit's attempts cannot be told by counts (the caller reads the attempts)."""
        return unit_folds.unit_folds(self._db, run_id)

    def run_slots(self, run_id: str) -> list[SlotRow]:
        """A run's (or a group's) slots, by experiment, eval and ordinal."""
        return reads.run_slots(self._db, run_id)

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
        return reads.attempts_for_run(self._db, run_id, experiment=experiment, eval_prefix=eval_prefix,
                                      states=states, limit=limit)

    def costs(self, run_id: str, *, experiment: Names = None, eval_prefix: Names = None) -> list[dict[str, Any]]:
        """Per experiment of a run: attempts, reported cost (sum, count) and estimated cost (sum, count)."""
        return reads.costs(self._db, run_id, experiment=experiment, eval_prefix=eval_prefix)

    def unavailable_records(self, run_id: str) -> list[tuple[str, int]]:
        """(reason, count) of the results recorded without deciding that could not be measured, in
        the attempts the run (a group: its members) executed, by reason: its summary's note."""
        return reads.unavailable_records(self._db, run_id)

    def turns(self, attempt_id: str) -> list[TurnRecord]:
        """An attempt's transcript: its turns in ordinal order, each with its events in seq order."""
        return reads.turns(self._db, attempt_id)

    def events(self, attempt_id: str) -> list[EventRecord]:
        """An attempt's events, by turn ordinal then seq."""
        return reads.events(self._db, attempt_id)

    def run_plan(self, run_id: str) -> list[PlanSlot]:
        """The run's (or group's) full planned slot list: its `run_plan` rows and, since schema 4
        does not repeat them there, the slots it adopted when it began (empty if neither)."""
        return reads.run_plan(self._db, run_id)

    def not_run(self, run_id: str) -> list[PlanSlot]:
        """Planned slots of the run that no attempt filled (never started, or the run stopped);
        of a shard run, only its own shard's; of a group, every slot its members did not fill
        (a missing shard's slots included)."""
        return reads.not_run(self._db, run_id)

    def outcome_rows(
        self, run_ids: str | Sequence[str], *, experiment: Names = None, eval_prefix: Names = None,
        in_sql: bool = False,
    ) -> list[OutcomeGroup]:
        """The attempts filling the slots of one or several runs (reused ones included), grouped
        by outcome: what the run decision, `view`'s header and the summary count. `in_sql`: the
        same groups, grouped by SQL for a reader in a thread (`summary.outcome_groups`)."""
        ids = [i for ref in ([run_ids] if isinstance(run_ids, str) else run_ids) for i in self.run_scope(ref)]
        return summary.outcome_groups(self._db, ids, experiment=experiment, eval_prefix=eval_prefix, in_sql=in_sql)

    def run_outcome_rows(self, run_id: str, unsettled: Collection[tuple[str, str]] = ()) -> RunOutcomeRows:
        """One run's outcome for its verdict and summary: the evals whose every attempt passed,
        counted (`PassedEvals`), the outcome groups of every other eval, and the cost per
        experiment (`costs`). Read in one pass over the run's slots (20 000 passing evals: no
        group built for any of them). `unsettled`: (experiment, eval) never counted, always listed
        (some planned attempts never ran: passing so far is not passed)."""
        return summary.run_outcome(self._db, run_id, unsettled)

    def slot_outcome_rows(self, run_id: str, slots: Iterable[tuple[str, str, int]]) -> list[OutcomeGroup]:
        """The outcome groups of the attempts filling these (experiment, eval, ordinal) slots of
        one run (`summary.slot_outcome_groups`): what a `--until-decided` round added."""
        return summary.slot_outcome_groups(self._db, run_id, slots)

    def assertions_for_attempt(self, attempt_id: str) -> list[AssertionRow]:
        """One attempt's results: errored, mismatched/below, unavailable, the rest; then ordinal."""
        return reads.assertions_for_attempt(self._db, attempt_id)

    # ── rows for output formats ──────────────────────────────────────────────────────────

    def query(self, target: QueryTarget, **filters: Any) -> tuple[list[str], list[dict[str, Any]]]:
        """`query_stream`'s column names and rows, the rows read whole (its filters)."""
        names, rows = self.query_stream(target, **filters)
        return names, list(rows)

    def query_stream(
        self,
        target: QueryTarget,
        *,
        run: str | None = None,
        experiment: Names = None,
        eval_prefix: Names = None,
        states: Names = None,
        limit: int | None = None,
        columns: Sequence[str] | None = None,
    ) -> tuple[list[str], Iterator[dict[str, Any]]]:
        """Column names and rows for `niceeval query`, in the documented order (targets.py), the
        rows read as they are consumed while this store is open.

        `run`: None → the latest run (for `runs`: every run), "all" → every run, else an id or prefix.
        `columns`: for `attempts`, only these of its columns (those the store has).
        """
        return targets.query_stream(self._db, target, run=run, experiment=experiment, eval_prefix=eval_prefix,
                                    states=states, limit=limit, columns=columns)

    def sql(self, statement: str, limit: int | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run a user's read-only SELECT/WITH statement on a separate read-only connection (its
        first `limit` rows)."""
        return run_readonly(self.path, statement, limit)

    # ── regrade (regrades.py) ────────────────────────────────────────────────────────────

    def regrade_slots(self, run_id: str) -> list[SlotRow]:
        """The slots of a run (or group, by exact id) that an attempt fills, by experiment, eval, ordinal."""
        return regrades.regrade_slots(self._db, run_id)

    def regrade_sources(self, slots: Sequence[SlotRow], *, transcripts: bool = True) -> Iterator[RegradeSource]:
        """The slots' attempts with their results, stored judge inputs and (`transcripts`) turns,
        read a batch at a time in the slots' order."""
        return regrades.regrade_sources(self._db, slots, transcripts=transcripts)

    # ── human labels (labels.py) ─────────────────────────────────────────────────────────

    def label_target(self, attempt_ref: str, key: str | None) -> LabelTarget:
        """The attempt (exact id or unique prefix, with or without `@`) and key a label names."""
        unicode_text("the attempt id", attempt_ref)
        attempt_id = references.resolve_prefix(self._db, "attempts", "attempt", attempt_ref.removeprefix("@"))
        return find_target(self._db, attempt_id, key)

    def exact_label_target(self, attempt_id: str, key: str | None) -> LabelTarget:
        """As `label_target`, for a file's rows: the attempt id exactly as stored."""
        return find_target(self._db, attempt_id, key)

    def add_labels(self, labels: Sequence[LabelInput]) -> list[str]:
        """Insert labels (their values checked against `label_target`) in one transaction."""
        self._writable("Recording labels")
        return insert_labels(self._db, labels)

    def labels(self, run_ids: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
        """Stored labels, oldest first, superseded ones too; with `run_ids`, of those runs' attempts."""
        return read_labels(self._db, run_ids)

    def label_agreement(self, run_ids: Sequence[str] | None = None) -> list[PairCounts]:
        """Judge against effective human labels, counted per judge identity (agreement.py)."""
        return label_pairs(self._db, run_ids)

    def judge_agreement_between(self, reference_runs: Sequence[str], judge_runs: Sequence[str]) -> list[PairCounts]:
        """One run's judge against another's, paired by original attempt and key (agreement.py)."""
        return between_pairs(self._db, reference_runs, judge_runs)
