"""Migrations of the results store: each older schema upgraded in place, one version at a time,
inside the opener's transaction (connect.py), every sealed row kept."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .schema import ASSERTION_COLUMNS, ATTEMPT_COLUMNS, RUN_COLUMNS, SCHEMA_VERSION, create_schema

if TYPE_CHECKING:
    from sqlite_utils import Database


def _add_missing_columns(db: Database, table: str, columns: Mapping[str, type]) -> None:
    present = db.table(table).columns_dict
    for name, kind in columns.items():
        if name not in present:
            db.table(table).add_column(name, kind)


def _to_2(db: Database) -> None:
    """Schema 2: run_slots.pass_rule (so `view` folds as the run did) and the assertion-state index."""
    if "pass_rule" not in db.table("run_slots").columns_dict:
        db.table("run_slots").add_column("pass_rule", str)
    db.table("assertion_results").create_index(
        ("state", "attempt_id"), index_name="assertion_results_by_state", if_not_exists=True
    )


def _to_newest(db: Database) -> None:
    """Every column, table, index, view and trigger of SCHEMA_VERSION that the store lacks.

    `create_schema` makes the newest schema's indexes and views, which may name columns a later
    version added, so the columns come first (a schema-3 store migrating to 5 passes here twice)."""
    _add_missing_columns(db, "attempts", ATTEMPT_COLUMNS)
    _add_missing_columns(db, "assertion_results", ASSERTION_COLUMNS)
    _add_missing_columns(db, "runs", RUN_COLUMNS)
    create_schema(db.conn)


def _to_3(db: Database) -> None:
    """Schema 3: the new record columns, run owners and plans, tables turns / events / run_plan,
    and the triggers that make every sealed table (and finished runs) immutable."""
    _to_newest(db)


def _to_4(db: Database) -> None:
    """Schema 4: `run_plan` stops repeating a run's reference slots (they read as planned), which
    halves what a fully reused re-run writes. Nothing to convert: older plans read as before."""
    # It also adds table `group_verdicts` (empty: groups are decided on read until one is stored).
    _to_newest(db)


def _to_5(db: Database) -> None:
    """Schema 5: the eval's identity on attempts (`eval_module`, `eval_name`) and its index; the
    views `run_results` and `run_status`; table `run_heartbeats`.

    Every row is kept as it is: an attempt sealed before has NULL identity, because its eval id
    cannot tell (`a/b` is module `a/b`'s only eval or eval `b` of module `a`); readers pair such
    attempts by their eval id, as before (docs/cli.md, "The store")."""
    _to_newest(db)


def _to_6(db: Database) -> None:
    """Schema 6: `assertion_results.agreement` and `judge_samples` (judge.samples, judge-trust.md).
    Every earlier row is kept; its results read NULL there, as one sample's do."""
    _to_newest(db)


def _to_7(db: Database) -> None:
    """Schema 7: table `labels` (human labels, judge-trust.md), its index and its insert-only
    triggers. Nothing else changes: every earlier row is kept as it is."""
    _to_newest(db)


def _to_8(db: Database) -> None:
    """Schema 8: `attempts.judge_cost_usd` and `judge_estimated_cost_usd` (the judge's cost apart
    from the system under test's). Earlier attempts read NULL there: their judge cost is unknown."""
    _to_newest(db)


def _to_9(db: Database) -> None:
    """Schema 9 (regrade): table `judge_inputs`, `assertion_results.judge_input`, `runs.kind` /
    `regrade_of`, `attempts.regraded_from`. Every earlier row is kept as it is: judge results
    sealed before have no input, so `regrade` names their attempts as ones it cannot regrade."""
    _to_newest(db)


def _to_10(db: Database) -> None:
    """Schema 10: tables `unit_folds` / `unit_fold_runs` (a finished run's units folded once) and
    their triggers. Every earlier row is kept as it is; runs finished before have no stored folds
    and `compare` folds them on read, as before."""
    _to_newest(db)


#: The slots a run recorded as planned: its plan rows and the reference slots it began with
#: (`reads.run_plan`: schema 3 repeated those in `run_plan`, so the two are a set union).
_RECORDED_PLAN_SQL = (
    "(SELECT count(*) FROM (SELECT experiment_id, eval_id, ordinal FROM run_plan p WHERE p.run_id = runs.id "
    "UNION SELECT experiment_id, eval_id, ordinal FROM run_slots s WHERE s.run_id = runs.id "
    "AND s.relation = 'reference'))"
)


def _to_11(db: Database) -> None:
    """Schema 11: a running run's `planned_total` grows with its plan (`run --until-decided`
    records each round's slots), under trigger `runs_plan_only_grows`.

    A run recorded before whose plan grew kept the planned total of its first round, below the
    plan it recorded (`view` said 16 planned, `query runs` 10): its planned_total becomes the
    slots it recorded as planned. Only that number changes, the one place a finished run's row
    is written again (its triggers are lifted for the statement and made anew); every other
    row is kept as it is. A shard's planned_total (the whole group's plan) is left alone."""
    conn = db.conn
    for name in ("runs_running_may_only_finish", "runs_finished_are_immutable"):
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute(
        f"UPDATE runs SET planned_total = {_RECORDED_PLAN_SQL} WHERE shard_count IS NULL "
        f"AND planned_total IS NOT NULL AND {_RECORDED_PLAN_SQL} > planned_total"
    )
    _to_newest(db)


# version → the step that upgrades a store of that version to version + 1.
MIGRATIONS: Mapping[int, Callable[[Database], None]] = {
    1: _to_2, 2: _to_3, 3: _to_4, 4: _to_5, 5: _to_6, 6: _to_7, 7: _to_8, 8: _to_9, 9: _to_10, 10: _to_11,
}


def migrate(db: Database, from_version: int) -> None:
    """Upgrade an older store step by step (inside the caller's transaction)."""
    for version in range(from_version, SCHEMA_VERSION):
        MIGRATIONS[version](db)
