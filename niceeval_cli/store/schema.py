"""Tables, indexes, triggers and the schema version of the results store (cli.md, "Store");
upgrading an older store is migrations.py's.

Column names are the contract: `query` prints them and scripts rely on them. The attempt and
assertion columns are exactly the fields of `_records.AttemptRecord` / `AssertionResult` (less
`turns`, which are rows of their own table), and `turns` / `events` those of `TurnRecord` /
`EventRecord` (less `events`).

Protections live in the file, so they hold for any program that writes to it (issue 9.5): sealed
tables refuse UPDATE, DELETE and an INSERT whose key exists (a BEFORE INSERT trigger, because
`INSERT OR REPLACE` deletes the old row without firing DELETE triggers); a run row is never
deleted, a `running` one may only be finished (or its plan grow: `run --until-decided`) and a
finished one never changes.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field

from .views import view_statements

SCHEMA_VERSION = 11

RUN_COLUMNS: Mapping[str, type] = {
    "id": str,
    "started_at": str,
    "ended_at": str,
    "status": str,
    "argv": str,  # JSON list
    "niceeval_version": str,
    "exit_code": int,
    "config_file": str,
    "experiments": str,  # JSON list of the experiment ids selected
    # Schema 3. Who runs a `running` run, so readers can tell one whose process is gone.
    "owner_pid": int,
    "owner_host": str,
    "owner_started_at": str,  # the owner process's start time (ISO UTC), so pid reuse is detected
    # Schema 3: plans, shards, executors and budgets (scale.md).
    # Slots of the whole plan (all shards); schema 11: a `--until-decided` run's grows with each
    # round it adds, as its plan rows do (never a shard's: `--shard` refuses `--until-decided`).
    "planned_total": int,
    "shard_index": int,  # K of --shard K/N, 1-based
    "shard_count": int,
    "group_id": str,
    "plan_digest": str,
    "executor": str,
    "budget_usd": float,
    # Schema 9 (judge-trust.md, "Regrading"): `run`, or `regrade` for a run made by `niceeval regrade`
    # (NULL on runs recorded before: ordinary runs), and the run a regrade re-judged.
    "kind": str,
    "regrade_of": str,
}
# What finishing a run may change; every other column of a run row is fixed at begin_run, but
# RUN_GROWING_COLUMNS, which only grow while it runs (schema 11).
RUN_FINISH_COLUMNS = ("status", "ended_at", "exit_code")
RUN_GROWING_COLUMNS = ("planned_total",)

SLOT_COLUMNS: Mapping[str, type] = {
    "run_id": str,
    "experiment_id": str,
    "eval_id": str,
    "ordinal": int,
    "attempt_id": str,
    "relation": str,
    "plan_reason": str,
    "pass_rule": str,  # the eval's pass rule in this run ("any", "all" or a rate), so readers fold alike
}
SLOT_KEY = ("run_id", "experiment_id", "eval_id", "ordinal")

# A run's plan is its `run_plan` rows plus the reference slots it recorded when it began (schema 4:
# a slot the run adopts is not written twice, which halved what a fully reused re-run writes).
PLAN_COLUMNS: Mapping[str, type] = {
    "run_id": str,
    "experiment_id": str,
    "eval_id": str,
    "ordinal": int,
    "case_id": str,
}
PLAN_KEY = SLOT_KEY

ATTEMPT_COLUMNS: Mapping[str, type] = {
    "id": str,
    "run_id": str,
    "experiment_id": str,
    "eval_id": str,
    "ordinal": int,
    "kind": str,
    "state": str,
    "reason": str,
    "score": float,
    "max_score": float,
    "unavailable_weight": float,
    "partial_score": float,
    "gate": str,
    "stop_cause": str,
    "error": str,
    "fingerprint": str,
    "fingerprint_parts": str,  # JSON
    "started_at": str,
    "ended_at": str,
    "duration_ms": float,
    "input_tokens": int,
    "output_tokens": int,
    "judge_tokens": int,
    # Schema 3
    "case_id": str,
    "case_value": str,  # JSON
    "case_metadata": str,  # JSON
    "cost_usd": float,
    "estimated_cost_usd": float,
    "sandbox": str,  # JSON
    "traceback": str,
    "notes": str,  # JSON list
    # Schema 5: the eval's identity (authoring.md), which outlives its displayed id: a module's
    # only eval shows as `<module id>` and as `<module id>/<name>` once the module has two.
    # NULL on attempts sealed before schema 5 (their eval id alone cannot tell which it was).
    "eval_module": str,  # the module id: the module's path below its eval root, without `.py`
    "eval_name": str,  # the definition's name
    # Schema 8 (judge-trust.md, "Cost"): the judge's cost, never added to `cost_usd` (the system
    # under test's): reported by the judge endpoint, and judge tokens priced by [prices."MODEL"].
    "judge_cost_usd": float,
    "judge_estimated_cost_usd": float,
    # Schema 9: the attempt a regrade re-judged (NULL for an attempt its own run executed).
    "regraded_from": str,
}

ASSERTION_COLUMNS: Mapping[str, type] = {
    "id": str,
    "attempt_id": str,
    "ordinal": int,
    "key": str,
    "label": str,
    "group_name": str,
    "role": str,
    "weight": float,
    "contribution": float,
    "state": str,
    "measurement": float,
    "threshold": float,
    "reason": str,
    "explanation": str,
    "match_name": str,
    "match_config": str,  # JSON
    "evidence": str,  # JSON
    "source_file": str,
    "source_line": int,
    "or_stop": int,  # 0/1
    "match_kind": str,
    "judge_audit": str,  # JSON
    "judge_tokens": int,
    "extras": str,  # JSON object (schema 3)
    # Schema 6 (judge-trust.md): a sampled judge's agreement and its measured samples; NULL otherwise.
    "agreement": float,
    "judge_samples": int,
    # Schema 9: the sha256 of the judge's full input (table `judge_inputs`); NULL for non-judge
    # assertions and for judge assertions sealed before schema 9 (they cannot be regraded).
    "judge_input": str,
}

TURN_COLUMNS: Mapping[str, type] = {
    "attempt_id": str,
    "session": str,
    "ordinal": int,
    "input": str,
    "message": str,
    "status": str,
    "observed": str,  # JSON list
    "input_tokens": int,
    "output_tokens": int,
    "cost_usd": float,
    "elapsed_ms": float,
    "data": str,  # JSON
}
TURN_KEY = ("attempt_id", "ordinal")

EVENT_COLUMNS: Mapping[str, type] = {
    "attempt_id": str,
    "turn_ordinal": int,
    "seq": int,
    "kind": str,
    "name": str,
    "role": str,
    "input": str,  # JSON
    "output": str,  # JSON
    "status": str,
    "text": str,
}
EVENT_KEY = ("attempt_id", "turn_ordinal", "seq")

# A shard group's verdict, stored once its members are settled (store/groups.py): derived data, so
# `merge` does not copy it (each store decides its own groups). A reader uses a row only while the
# group's current members are exactly `members` and it was decided by the NiceEval reading it.
GROUP_VERDICT_COLUMNS: Mapping[str, type] = {
    "group_id": str,
    "members": str,  # JSON: the member runs as sorted [run id, status] pairs
    "decided_by": str,  # the niceeval version that decided it
    "exit_code": int,
    "not_run": int,  # planned slots no member filled
    "decided_at": str,
}
GROUP_VERDICT_KEY = ("group_id", "members", "decided_by")

# Schema 5: the owner of a `running` run writes the time here every few seconds (heartbeat.py),
# so a program without NiceEval (view `run_status`) can tell a run whose process is gone. Not
# sealed (a beat is rewritten), not copied by `merge` (a source's beats are of its own processes).
HEARTBEAT_COLUMNS: Mapping[str, type] = {"run_id": str, "beat_at": str}

# Schema 7 (judge-trust.md, "Human labels"): what a person says an assertion (or, with a NULL
# `assertion_key`, a whole attempt) should have been. Insert-only like the sealed tables: a
# correction is a later row by the same author, which supersedes the earlier one when computing.
LABEL_COLUMNS: Mapping[str, type] = {
    "id": str,
    "attempt_id": str,
    "assertion_key": str,  # NULL: the whole attempt
    "value": float,  # on the assertion's scale; 1 = correct / pass, 0 = wrong / fail otherwise
    "author": str,
    "comment": str,
    "created_at": str,
}


# Schema 9 (judge-trust.md, "Regrading"): the full input of a judge assertion — the subject after
# redaction, the factory, its criterion text and scale — once per distinct content, keyed by the
# sha256 of `content` (canonical JSON). Insert-only; an insert of a stored key is skipped, not
# refused: the same key is the same content (judge_inputs.py).
JUDGE_INPUT_COLUMNS: Mapping[str, type] = {
    "sha256": str,
    "content": str,  # JSON
}

# Schema 10 (statistics.md, "Stored unit folds"): a finished run's units folded once, when it is
# finalised, by the fold's own statements (store/unit_folds.py, which names each column): one row
# per (experiment, eval id), exactly what folding on read hands Python. Derived, insert-only, not
# copied by `merge` (it folds the runs it finishes). `unit_fold_runs` marks a run's rows complete,
# for the fold `format` that wrote them; a reader uses them only then.
UNIT_FOLD_COLUMNS: Mapping[str, type] = {
    "run_id": str, "experiment_id": str, "eval_id": str,
    "attempts": int, "told": int, "first_ordinal": int, "first_seen": int, "case_id": str, "eval_module": str,
    "eval_name": str, "kind": str, "pass_rule": str, "states": int, "unrankable": int, "gates": int,
    "gated": int, "scored_gate_passed": int, "max_score": float, "score_lo": float, "score_hi": float,
    "score_n": int, "evidence_n": int, "top_lo": float,
    "results": int, "result_slots": int, "key_pairs": str, "exceptions": str,
}
UNIT_FOLD_KEY = ("run_id", "experiment_id", "eval_id")
UNIT_FOLD_RUN_COLUMNS: Mapping[str, type] = {"run_id": str, "format": int, "units": int}
UNIT_FOLD_RUN_KEY = ("run_id", "format")


def insert_sql(table: str, columns: Mapping[str, type]) -> str:
    """A one-row prepared INSERT (sqlite3 caches the compiled statement); many rows go in as
    `MultiRowInsert`s."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


@dataclass(frozen=True)
class MultiRowInsert:
    """Many rows into a table with insert triggers, up to `rows` rows a statement.

    SQLite opens a statement journal for every statement a trigger might abort: 20 000
    single-row INSERTs paid it 20 000 times (a third of recording a re-run's reused slots);
    100 rows a statement pay it 200 times. The triggers still check every row.
    A statement binds at most 999 values (SQLite's oldest limit) and 100 rows."""

    table: str
    columns: tuple[str, ...]

    @property
    def rows(self) -> int:
        return max(1, min(100, 999 // len(self.columns)))

    @functools.cache  # noqa: B019 - a few module-level instances, kept for good
    def sql(self, rows: int) -> str:
        """The statement for `rows` rows (made once: seals ask for it at every batch)."""
        one = f"({', '.join('?' * len(self.columns))})"
        return f"INSERT INTO {self.table} ({', '.join(self.columns)}) VALUES {', '.join([one] * rows)}"


INSERT_RUN = insert_sql("runs", RUN_COLUMNS)
INSERT_ATTEMPT = insert_sql("attempts", ATTEMPT_COLUMNS)
INSERT_ASSERTION = insert_sql("assertion_results", ASSERTION_COLUMNS)
INSERT_SLOT = insert_sql("run_slots", SLOT_COLUMNS)
INSERT_GROUP_VERDICT = insert_sql("group_verdicts", GROUP_VERDICT_COLUMNS)
INSERT_SLOTS = MultiRowInsert("run_slots", tuple(SLOT_COLUMNS))
INSERT_PLANS = MultiRowInsert("run_plan", tuple(PLAN_COLUMNS))
INSERT_ATTEMPTS = MultiRowInsert("attempts", tuple(ATTEMPT_COLUMNS))
INSERT_ASSERTIONS = MultiRowInsert("assertion_results", tuple(ASSERTION_COLUMNS))
INSERT_TURNS = MultiRowInsert("turns", tuple(TURN_COLUMNS))
INSERT_EVENTS = MultiRowInsert("events", tuple(EVENT_COLUMNS))
INSERT_LABELS = MultiRowInsert("labels", tuple(LABEL_COLUMNS))
INSERT_JUDGE_INPUTS = MultiRowInsert("judge_inputs", tuple(JUDGE_INPUT_COLUMNS))

# Insert-only tables and their keys (an INSERT whose key exists is refused, even OR REPLACE).
SEALED_KEYS: Mapping[str, tuple[str, ...]] = {
    "attempts": ("id",),
    "assertion_results": ("id",),
    "turns": TURN_KEY,
    "events": EVENT_KEY,
    "run_slots": SLOT_KEY,
    "run_plan": PLAN_KEY,
    "group_verdicts": GROUP_VERDICT_KEY,
    "labels": ("id",),
    "unit_folds": UNIT_FOLD_KEY,
    "unit_fold_runs": UNIT_FOLD_RUN_KEY,
}
SEALED_TABLES = tuple(SEALED_KEYS)
TABLES = ("runs", "attempts", "assertion_results", "run_slots", "run_plan", "turns", "events", "group_verdicts",
          "run_heartbeats", "labels", "judge_inputs", "unit_folds", "unit_fold_runs")

_INDEXES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("attempts", ("run_id",), "attempts_by_run"),
    ("attempts", ("experiment_id", "eval_id", "ordinal", "ended_at"), "attempts_by_slot"),
    ("attempts", ("state",), "attempts_by_state"),
    # Planning's lookup of an eval's history by identity (schema 5).
    ("attempts", ("experiment_id", "eval_module", "eval_name", "case_id", "ordinal", "ended_at"),
     "attempts_by_identity"),
    ("assertion_results", ("attempt_id", "ordinal"), "assertion_results_by_attempt"),
    # `query --state failed|errored|unavailable`: the few problem rows first, not every result of a run.
    ("assertion_results", ("state", "attempt_id"), "assertion_results_by_state"),
    ("run_slots", ("run_id",), "run_slots_by_run"),
    ("run_slots", ("attempt_id",), "run_slots_by_attempt"),
    ("runs", ("group_id",), "runs_by_group"),
    ("labels", ("attempt_id", "assertion_key", "author"), "labels_by_assertion"),
    # `regrade` and `judge agreement --between`: the attempts a regrade made of an original.
    ("attempts", ("regraded_from",), "attempts_by_regraded_from"),
)


def _raise_trigger(name: str, when: str, message: str) -> str:
    # Raw SQL: sqlite-utils has no API for RAISE() triggers.
    return f"CREATE TRIGGER IF NOT EXISTS {name} {when} BEGIN SELECT RAISE(ABORT, '{message}'); END"


def _triggers() -> list[str]:
    statements = []
    for table, key in SEALED_KEYS.items():
        for action in ("UPDATE", "DELETE"):
            statements.append(_raise_trigger(
                f"{table}_no_{action.lower()}", f"BEFORE {action} ON {table}", "sealed rows are insert-only"
            ))
        same_key = " AND ".join(f"{column} IS NEW.{column}" for column in key)
        statements.append(_raise_trigger(
            f"{table}_no_replace",
            f"BEFORE INSERT ON {table} WHEN EXISTS (SELECT 1 FROM {table} WHERE {same_key})",
            "sealed rows are insert-only: this key is already sealed",
        ))
    statements += [
        *(_raise_trigger(f"judge_inputs_no_{action.lower()}", f"BEFORE {action} ON judge_inputs",
                         "sealed rows are insert-only") for action in ("UPDATE", "DELETE")),
        # Content-addressed: a stored key holds this very content, so a second insert is skipped.
        "CREATE TRIGGER IF NOT EXISTS judge_inputs_once BEFORE INSERT ON judge_inputs WHEN EXISTS "
        "(SELECT 1 FROM judge_inputs WHERE sha256 IS NEW.sha256) BEGIN SELECT RAISE(IGNORE); END",
    ]
    fixed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in RUN_COLUMNS
                        if c not in RUN_FINISH_COLUMNS and c not in RUN_GROWING_COLUMNS)
    statements += [
        _raise_trigger(
            "runs_no_replace", "BEFORE INSERT ON runs WHEN EXISTS (SELECT 1 FROM runs WHERE id IS NEW.id)",
            "a run row is written once: this run id exists",
        ),
        _raise_trigger("runs_no_delete", "BEFORE DELETE ON runs", "run rows are never deleted"),
        # A finished run's slots and plan are as immutable as its row: nothing is added to them.
        *(_raise_trigger(
            f"{table}_only_while_running",
            f"BEFORE INSERT ON {table} WHEN (SELECT status FROM runs WHERE id IS NEW.run_id) IS NOT 'running'",
            "a finished run is immutable: its slots and plan are not added to",
        ) for table in ("run_slots", "run_plan")),
        # Stored folds summarise a run whose slots can no longer change (schema 10), and its
        # attempts' results: an attempt they summarise never gains one.
        *(_raise_trigger(
            f"{table}_only_when_final",
            f"BEFORE INSERT ON {table} WHEN (SELECT status FROM runs WHERE id IS NEW.run_id) IS 'running'",
            "the units of a running run are folded on read: its folds are stored once it is finished",
        ) for table in ("unit_folds", "unit_fold_runs")),
        _raise_trigger(
            "assertion_results_not_under_folds",
            "BEFORE INSERT ON assertion_results WHEN EXISTS (SELECT 1 FROM run_slots s JOIN unit_fold_runs f "
            "ON f.run_id = s.run_id WHERE s.attempt_id = NEW.attempt_id)",
            "a sealed attempt never gains results: the stored folds of a finished run summarise them",
        ),
        _raise_trigger(
            "runs_finished_are_immutable", "BEFORE UPDATE ON runs WHEN OLD.status IS NOT 'running'",
            "a finished run is immutable",
        ),
        _raise_trigger(
            "runs_running_may_only_finish", f"BEFORE UPDATE ON runs WHEN {fixed}",
            "a running run may only be finished (status, ended_at, exit_code) or its plan grow (planned_total)",
        ),
        # Schema 11: `run --until-decided` adds slots to its plan a round at a time, and its
        # planned total with them; a plan never shrinks, and a shard's (the whole group's) is fixed.
        _raise_trigger(
            "runs_plan_only_grows",
            "BEFORE UPDATE ON runs WHEN NEW.planned_total IS NOT OLD.planned_total AND (OLD.planned_total IS NULL "
            "OR NEW.planned_total IS NULL OR NEW.planned_total < OLD.planned_total OR OLD.shard_count IS NOT NULL)",
            "planned_total only grows, with the plan of a running run, and never for a shard",
        ),
    ]
    return statements


@dataclass(frozen=True)
class _Table:
    """One table as sqlite-utils' `table.create(...)` takes it: columns, key, NOT NULL columns and
    single-column foreign keys (column → the referenced table's `id`)."""

    name: str
    columns: Mapping[str, type]
    pk: str | tuple[str, ...]
    not_null: frozenset[str]
    references: Mapping[str, str] = field(default_factory=dict)


_SCHEMA_TABLES: tuple[_Table, ...] = (
    _Table("runs", RUN_COLUMNS, "id", frozenset({"id", "started_at", "status", "argv"})),
    _Table(
        "attempts", ATTEMPT_COLUMNS, "id",
        frozenset({
            "id", "run_id", "experiment_id", "eval_id", "ordinal", "kind", "state",
            "fingerprint", "fingerprint_parts", "started_at", "ended_at", "duration_ms", "judge_tokens",
        }),
        {"run_id": "runs"},
    ),
    _Table(
        "assertion_results", ASSERTION_COLUMNS, "id",
        frozenset({"id", "attempt_id", "ordinal", "key", "role", "state", "match_name", "match_config",
                   "or_stop", "match_kind"}),
        {"attempt_id": "attempts"},
    ),
    _Table(
        "run_slots", SLOT_COLUMNS, SLOT_KEY,
        frozenset({"run_id", "experiment_id", "eval_id", "ordinal", "relation", "plan_reason"}),
        {"run_id": "runs", "attempt_id": "attempts"},
    ),
    _Table(
        "run_plan", PLAN_COLUMNS, PLAN_KEY, frozenset({"run_id", "experiment_id", "eval_id", "ordinal"}),
        {"run_id": "runs"},
    ),
    _Table(
        "turns", TURN_COLUMNS, TURN_KEY, frozenset({"attempt_id", "session", "ordinal", "status", "observed"}),
        {"attempt_id": "attempts"},
    ),
    _Table(
        "events", EVENT_COLUMNS, EVENT_KEY, frozenset({"attempt_id", "turn_ordinal", "seq", "kind"}),
        {"attempt_id": "attempts"},
    ),
    _Table(
        "group_verdicts", GROUP_VERDICT_COLUMNS, GROUP_VERDICT_KEY,
        frozenset({"group_id", "members", "decided_by", "exit_code", "not_run", "decided_at"}),
    ),
    _Table("run_heartbeats", HEARTBEAT_COLUMNS, "run_id", frozenset({"run_id", "beat_at"}), {"run_id": "runs"}),
    _Table("labels", LABEL_COLUMNS, "id", frozenset({"id", "attempt_id", "value", "author", "created_at"}),
           {"attempt_id": "attempts"}),
    _Table("judge_inputs", JUDGE_INPUT_COLUMNS, "sha256", frozenset({"sha256", "content"})),
    _Table("unit_folds", UNIT_FOLD_COLUMNS, UNIT_FOLD_KEY, frozenset({*UNIT_FOLD_KEY, "attempts"}),
           {"run_id": "runs"}),
    _Table("unit_fold_runs", UNIT_FOLD_RUN_COLUMNS, UNIT_FOLD_RUN_KEY, frozenset(UNIT_FOLD_RUN_COLUMNS),
           {"run_id": "runs"}),
)

_SQL_TYPES: Mapping[type, str] = {str: "TEXT", int: "INTEGER", float: "REAL"}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_table_sql(table: _Table) -> str:
    """The CREATE TABLE that sqlite-utils writes for `table` (tests/store pin the two as equal),
    built here so that a new store takes one statement per table, not sqlite-utils' ~20 queries
    of sqlite_master and table_info per table."""
    lines = []
    for column, kind in table.columns.items():
        extras = ["PRIMARY KEY"] if column == table.pk else []
        if column in table.not_null:
            extras.append("NOT NULL")
        if column in table.references:
            extras.append(f"REFERENCES {_quote(table.references[column])}({_quote('id')})")
        lines.append(f"   {_quote(column)} {_SQL_TYPES[kind]}" + "".join(f" {e}" for e in extras))
    if not isinstance(table.pk, str):
        lines.append(f"   PRIMARY KEY ({', '.join(map(_quote, table.pk))})")
    body = ",\n".join(lines)
    return f"CREATE TABLE IF NOT EXISTS {_quote(table.name)} (\n{body}\n)"


def create_index_sql(table: str, columns: tuple[str, ...], name: str) -> str:
    """The CREATE INDEX that sqlite-utils' `create_index(..., if_not_exists=True)` writes."""
    return f"CREATE INDEX IF NOT EXISTS {_quote(name)}\n    ON {_quote(table)} ({', '.join(map(_quote, columns))})"


def schema_statements() -> list[str]:
    """Every table, index, view and trigger of SCHEMA_VERSION, each "if not exists"."""
    return [
        *(create_table_sql(table) for table in _SCHEMA_TABLES),
        *(create_index_sql(table, columns, name) for table, columns, name in _INDEXES),
        *view_statements(),
        *_triggers(),
    ]


def create_schema(conn: sqlite3.Connection) -> None:
    """Create every table, index and trigger of SCHEMA_VERSION (inside the caller's transaction).

    Every step is "if not exists", so migrations call it to add what a version introduced.
    Statement by statement, not `executescript`, which would commit the caller's transaction.
    The statements are sqlite-utils' own (tests/store/test_schema.py pins them equal), run on the
    connection: a new store needs no sqlite-utils import, only a migration does.
    """
    for statement in schema_statements():
        conn.execute(statement)
