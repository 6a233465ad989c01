"""The store file: contract tables and columns, version, WAL, insert-only sealed rows."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest

from niceeval_cli._records import AssertionResult, AttemptRecord, EventRecord, TurnRecord
from niceeval_cli.store import SCHEMA_VERSION, Store, StoreError

CONTRACT = {
    "runs": [
        "id", "started_at", "ended_at", "status", "argv", "niceeval_version", "exit_code",
        "shard_index", "shard_count", "group_id", "planned_total", "plan_digest",  # scale.md
    ],
    "run_slots": ["run_id", "experiment_id", "eval_id", "ordinal", "attempt_id", "relation", "plan_reason"],
    "run_plan": ["run_id", "experiment_id", "eval_id", "ordinal", "case_id"],
    "attempts": [
        "id", "run_id", "experiment_id", "eval_id", "ordinal", "kind", "state", "reason", "score",
        "max_score", "unavailable_weight", "partial_score", "gate", "stop_cause", "error", "fingerprint",
        "started_at", "ended_at", "duration_ms", "input_tokens", "output_tokens", "judge_tokens",
        "case_id", "case_value", "cost_usd", "estimated_cost_usd", "sandbox",  # datasets, agents, sandbox
    ],
    "turns": [
        "attempt_id", "session", "ordinal", "input", "message", "status", "observed", "input_tokens",
        "output_tokens", "cost_usd", "elapsed_ms", "data",
    ],
    "events": ["attempt_id", "turn_ordinal", "seq", "kind", "name", "role", "input", "output", "status", "text"],
    "assertion_results": [
        "id", "attempt_id", "ordinal", "key", "label", "group_name", "role", "weight", "contribution",
        "state", "measurement", "threshold", "reason", "explanation", "match_name", "match_config",
        "evidence", "source_file", "source_line", "or_stop", "judge_audit", "judge_tokens",
    ],
}


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def test_new_store_has_every_contract_column(project):
    with sqlite3.connect(project.path) as conn:
        for table, wanted in CONTRACT.items():
            assert set(wanted) <= set(columns(conn, table)), table


def _fields(record: type, *not_columns: str) -> list[str]:
    return [f.name for f in dataclasses.fields(record) if f.name not in not_columns]


def test_sealed_columns_are_exactly_the_record_fields(project):
    with sqlite3.connect(project.path) as conn:
        assert columns(conn, "attempts") == _fields(AttemptRecord, "turns")  # turns: a table of its own
        # judge_input_content: a row of table judge_inputs
        assert columns(conn, "assertion_results") == _fields(AssertionResult, "judge_input_content")
        assert columns(conn, "turns") == _fields(TurnRecord, "events")  # events: a table of its own
        assert columns(conn, "events") == _fields(EventRecord)


def test_schema_version_and_wal_are_recorded_in_the_file(project):
    with sqlite3.connect(project.path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_indexes_cover_the_reads_view_and_query_make(project):
    with sqlite3.connect(project.path) as conn:
        indexed = {
            (table, tuple(r[2] for r in conn.execute(f"PRAGMA index_info({name})")))
            for table in CONTRACT
            for _, name, *_ in conn.execute(f"PRAGMA index_list({table})")
        }
    assert ("attempts", ("run_id",)) in indexed
    assert ("attempts", ("experiment_id", "eval_id", "ordinal", "ended_at")) in indexed
    assert ("attempts", ("state",)) in indexed
    assert ("assertion_results", ("attempt_id", "ordinal")) in indexed
    assert ("run_slots", ("run_id",)) in indexed


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE attempts SET state = 'passed'",
        "DELETE FROM attempts",
        "UPDATE assertion_results SET state = 'matched'",
        "DELETE FROM assertion_results",
        "UPDATE run_slots SET plan_reason = 'rerun'",
        "DELETE FROM run_slots",
    ],
)
def test_sealed_rows_reject_update_and_delete(project, statement):
    run_id = project.begin_run()
    project.seal(project.attempt(run_id, state="failed"), ["mismatched"])
    with sqlite3.connect(project.path) as conn, pytest.raises(sqlite3.DatabaseError, match="insert-only"):
        conn.execute(statement)
    (attempt,) = project.store.attempts_for_run(run_id)
    assert attempt.state == "failed"
    assert [r.state for r in project.store.assertions_for_attempt(attempt.id)] == ["mismatched"]


def test_runs_rows_can_be_finished(project):
    run_id = project.begin_run()
    project.finish(run_id, exit_code=1)
    run = project.store.resolve_run(run_id)
    assert (run.status, run.exit_code, run.ended_at is not None) == ("finished", 1, True)


def test_reopening_keeps_what_was_sealed(project):
    run_id = project.begin_run()
    attempt = project.seal(project.attempt(run_id), ["matched"])
    project.store.close()
    project.store = Store.open(project.path)
    assert project.store.resolve_attempt(attempt.id).id == attempt.id


def test_finishing_an_unknown_run_is_an_error_naming_it(project):
    with pytest.raises(StoreError, match="Run NOPE is not in the results store"):
        project.finish("NOPE")


@pytest.mark.parametrize("readonly", [False, True])
def test_a_schema_1_store_is_migrated_when_opened(tmp_path, readonly) -> None:
    path = tmp_path / "results.db"
    Store.open(path).close()
    with sqlite3.connect(path) as conn:  # make it look like a store written by schema 1
        conn.execute("DROP INDEX assertion_results_by_state")
        conn.execute("DROP VIEW run_results")  # schema 5's, which reads the column dropped next
        conn.execute("ALTER TABLE run_slots DROP COLUMN pass_rule")
        conn.execute("PRAGMA user_version = 1")
    Store.open(path, readonly=readonly).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert "pass_rule" in columns(conn, "run_slots")
        indexes = {row[1] for row in conn.execute("PRAGMA index_list(assertion_results)")}
        assert "assertion_results_by_state" in indexes


def _master(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()


def _shape(conn: sqlite3.Connection) -> dict[str, object]:
    """What a schema is, whatever the spelling of its CREATE text: every object, each table's
    columns (type, NOT NULL, key position), foreign keys and indexes (with their columns)."""
    objects = conn.execute("SELECT type, name, tbl_name FROM sqlite_master ORDER BY type, name").fetchall()
    tables = [name for kind, name, _ in objects if kind == "table"]

    def indexes(table: str) -> list[object]:
        return [(row[1:], conn.execute(f"PRAGMA index_info({row[1]})").fetchall())
                for row in conn.execute(f"PRAGMA index_list({table})")]

    return {
        "objects": objects,
        "tables": {t: (conn.execute(f"PRAGMA table_info({t})").fetchall(),
                       conn.execute(f"PRAGMA foreign_key_list({t})").fetchall(),
                       sorted(indexes(t), key=str)) for t in tables},
        "triggers": conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name").fetchall(),
    }


def test_the_schema_is_what_sqlite_utils_would_create_from_the_same_tables():
    """create_schema writes its own CREATE statements (one per object, no sqlite_master round
    trips); they must be the very objects sqlite-utils' table.create / create_index make."""
    from sqlite_utils import Database

    from niceeval_cli.store import schema
    from niceeval_cli.store import views as schema_views

    ours = Database(sqlite3.connect(":memory:"), execute_plugins=False)
    schema.create_schema(ours.conn)
    reference = Database(sqlite3.connect(":memory:"), execute_plugins=False)
    for table in schema._SCHEMA_TABLES:
        reference.table(table.name).create(
            dict(table.columns), pk=table.pk, not_null=set(table.not_null),
            foreign_keys=[(column, other, "id") for column, other in table.references.items()],
        )
    for table_name, index_columns, name in schema._INDEXES:
        reference.table(table_name).create_index(index_columns, index_name=name, if_not_exists=True)
    for name, body in schema_views.VIEWS.items():
        reference.create_view(name, body)
    for statement in schema._triggers():
        reference.execute(statement)
    assert _shape(ours.conn) == _shape(reference.conn)
    assert {row[1] for row in _master(ours.conn) if row[0] == "table"} == set(schema.TABLES)


def test_creating_the_schema_again_changes_nothing():
    """Migrations run create_schema over an existing store: every statement is "if not exists"."""
    from sqlite_utils import Database

    from niceeval_cli.store import schema

    db = Database(sqlite3.connect(":memory:"), execute_plugins=False)
    schema.create_schema(db.conn)
    before = _master(db.conn)
    schema.create_schema(db.conn)
    assert _master(db.conn) == before
