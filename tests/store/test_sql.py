"""`query --sql`: any read the user likes, no write whatever they try."""

from __future__ import annotations

import sqlite3

import pytest

from niceeval_cli.store import SCHEMA_VERSION, StoreError


@pytest.fixture
def sealed(project):
    run_id = project.begin_run()
    project.seal(project.attempt(run_id, state="failed"), ["mismatched", "matched"])
    return run_id


def _table_counts(path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: conn.execute(f"SELECT count(*) FROM {n}").fetchone()[0] for n in names}


def test_a_select_returns_column_names_and_rows(project, sealed):
    columns, rows = project.store.sql(
        "-- worst first\nSELECT state, count(*) AS n FROM assertion_results GROUP BY state ORDER BY state"
    )
    assert columns == ["state", "n"]
    assert rows == [("matched", 1), ("mismatched", 1)]


def test_a_with_query_is_a_read(project, sealed):
    columns, rows = project.store.sql("WITH r AS (SELECT id FROM runs) SELECT id FROM r")
    assert (columns, rows) == (["id"], [(sealed,)])


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO runs (id, started_at, status, argv) VALUES ('x', 't', 'running', '[]')",
        "DROP TABLE runs",
        "ATTACH DATABASE 'other.db' AS other",
        "PRAGMA user_version = 9",
        "PRAGMA journal_mode = DELETE",
        "/* sneaky */ DELETE FROM runs",
        "WITH doomed AS (SELECT id FROM runs) DELETE FROM runs WHERE id IN (SELECT id FROM doomed)",
        "SELECT 1; DROP TABLE runs",
        "",
    ],
)
def test_anything_that_could_write_is_refused_and_changes_nothing(project, sealed, statement):
    before = _table_counts(project.path)
    with pytest.raises(StoreError) as caught:
        project.store.sql(statement)
    assert str(project.path) in str(caught.value)
    assert _table_counts(project.path) == before
    with sqlite3.connect(project.path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_invalid_sql_reports_sqlites_message(project, sealed):
    with pytest.raises(StoreError, match=r"no such table: nope\.$"):
        project.store.sql("SELECT * FROM nope")
    with pytest.raises(StoreError, match="syntax error"):
        project.store.sql("SELECT FROM WHERE")


def test_sql_works_from_a_read_only_store_too(project, sealed):
    assert project.reader().sql("SELECT count(*) FROM attempts")[1] == [(1,)]
