"""Tables, indexes, triggers and the schema version of the results store (cli.md, "Store").

Column names are the contract: `query` prints them and scripts rely on them. The attempt and
assertion columns are exactly the fields of `_records.AttemptRecord` / `AssertionResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlite_utils import Database

SCHEMA_VERSION = 2

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
}

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
}


def insert_sql(table: str, columns: Mapping[str, type]) -> str:
    """A prepared INSERT for the seal hot path (sqlite3 caches the compiled statement)."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


INSERT_ATTEMPT = insert_sql("attempts", ATTEMPT_COLUMNS)
INSERT_ASSERTION = insert_sql("assertion_results", ASSERTION_COLUMNS)
INSERT_SLOT = insert_sql("run_slots", SLOT_COLUMNS)

SEALED_TABLES = ("attempts", "assertion_results")
TABLES = ("runs", "attempts", "assertion_results", "run_slots")

_INDEXES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("attempts", ("run_id",), "attempts_by_run"),
    ("attempts", ("experiment_id", "eval_id", "ordinal", "ended_at"), "attempts_by_slot"),
    ("attempts", ("state",), "attempts_by_state"),
    ("assertion_results", ("attempt_id", "ordinal"), "assertion_results_by_attempt"),
    # `query --state failed|errored|unavailable`: the few problem rows first, not every result of a run.
    ("assertion_results", ("state", "attempt_id"), "assertion_results_by_state"),
    ("run_slots", ("run_id",), "run_slots_by_run"),
    ("run_slots", ("attempt_id",), "run_slots_by_attempt"),
)


def create_schema(db: Database) -> None:
    """Create every table, index and trigger of SCHEMA_VERSION (inside the caller's transaction)."""
    db.table("runs").create(
        dict(RUN_COLUMNS), pk="id", not_null={"id", "started_at", "status", "argv"}, if_not_exists=True
    )
    db.table("attempts").create(
        dict(ATTEMPT_COLUMNS),
        pk="id",
        not_null={
            "id", "run_id", "experiment_id", "eval_id", "ordinal", "kind", "state",
            "fingerprint", "fingerprint_parts", "started_at", "ended_at", "duration_ms", "judge_tokens",
        },
        foreign_keys=[("run_id", "runs", "id")],
        if_not_exists=True,
    )
    db.table("assertion_results").create(
        dict(ASSERTION_COLUMNS),
        pk="id",
        not_null={"id", "attempt_id", "ordinal", "key", "role", "state", "match_name", "match_config",
                  "or_stop", "match_kind"},
        foreign_keys=[("attempt_id", "attempts", "id")],
        if_not_exists=True,
    )
    db.table("run_slots").create(
        dict(SLOT_COLUMNS),
        pk=SLOT_KEY,
        not_null={"run_id", "experiment_id", "eval_id", "ordinal", "relation", "plan_reason"},
        foreign_keys=[("run_id", "runs", "id"), ("attempt_id", "attempts", "id")],
        if_not_exists=True,
    )
    for table, columns, name in _INDEXES:
        db.table(table).create_index(columns, index_name=name, if_not_exists=True)
    for table in SEALED_TABLES:
        for action in ("UPDATE", "DELETE"):
            # Raw SQL: sqlite-utils has no API for RAISE() triggers.
            db.execute(
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_{action.lower()} BEFORE {action} ON {table} "
                "BEGIN SELECT RAISE(ABORT, 'sealed rows are insert-only'); END"
            )


def _to_2(db: Database) -> None:
    """Schema 2: run_slots.pass_rule (so `view` folds as the run did) and the assertion-state index."""
    if "pass_rule" not in db.table("run_slots").columns_dict:
        db.table("run_slots").add_column("pass_rule", str)
    db.table("assertion_results").create_index(
        ("state", "attempt_id"), index_name="assertion_results_by_state", if_not_exists=True
    )


# version → the step that upgrades a store of that version to version + 1.
MIGRATIONS: Mapping[int, Callable[[Database], None]] = {1: _to_2}


def migrate(db: Database, from_version: int) -> None:
    """Upgrade an older store step by step (inside the caller's transaction)."""
    for version in range(from_version, SCHEMA_VERSION):
        MIGRATIONS[version](db)
