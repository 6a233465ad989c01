"""Older stores are upgraded in place when opened, keeping every row (schema 2 → 3 → 4 → 5 → 6 → 7)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from niceeval_cli._states import RunStatus
from niceeval_cli.store import SCHEMA_VERSION, Store

# Written by the code of commit a6b4268 (schema 2) through its own Store API, dumped as SQL
# (a text file, not a .db): two runs (one finished, one left running), three attempts, a reused slot.
SCHEMA_2_DUMP = Path(__file__).parent / "data" / "schema2.sql"
FINISHED_RUN, RUNNING_RUN = "01M8SYJ2QN0HN76GN16Q3B5XSY", "01M8SYJ2QPX1M2D7PB51TRMTA5"
FAILED_ATTEMPT = "01M8SYJ2QN0HNJR4K9YQ725XKR"


def _schema_2_store(tmp_path: Path) -> Path:
    path = tmp_path / "results.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_2_DUMP.read_text(encoding="utf-8"))
        conn.execute("PRAGMA journal_mode = WAL")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    return path


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _all_rows(path: Path, table: str, columns: list[str]) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY 1, 2").fetchall()


@pytest.mark.parametrize("readonly", [False, True])
def test_a_schema_2_store_is_upgraded_to_the_current_schema_keeping_every_row(tmp_path, readonly):
    path = _schema_2_store(tmp_path)
    before = {}
    with sqlite3.connect(path) as conn:
        old_columns = {t: _columns(conn, t) for t in ("runs", "attempts", "assertion_results", "run_slots")}
    for table, columns in old_columns.items():
        before[table] = _all_rows(path, table, columns)
    Store.open(path, readonly=readonly).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        for table in ("run_plan", "turns", "events"):
            assert _columns(conn, table), table
        identity = {"eval_module", "eval_name"}
        assert {"case_id", "cost_usd", "notes", "traceback", *identity} <= set(_columns(conn, "attempts"))
        # Sealed before identities were stored: nothing is guessed from the eval id.
        assert conn.execute("SELECT count(*) FROM attempts WHERE eval_module IS NOT NULL").fetchone()[0] == 0
        assert "extras" in _columns(conn, "assertion_results")
        assert {"owner_pid", "planned_total", "group_id", "budget_usd"} <= set(_columns(conn, "runs"))
    for table, columns in old_columns.items():
        assert _all_rows(path, table, columns) == before[table], table


def test_a_migrated_store_reads_as_before_and_old_running_runs_stay_running(tmp_path):
    path = _schema_2_store(tmp_path)
    with Store.open(path, readonly=True) as store:
        finished = store.resolve_run(FINISHED_RUN)
        assert (finished.status, finished.exit_code, finished.owner_pid) == (RunStatus.FINISHED, 1, None)
        # Written before owners were recorded: nothing says its process is gone.
        assert store.resolve_run(None).id == RUNNING_RUN
        assert store.resolve_run(RUNNING_RUN).status is RunStatus.RUNNING
        worst = store.attempts_for_run(FINISHED_RUN)[0]
        assert (worst.id, worst.state, worst.case_id, worst.notes) == (FAILED_ATTEMPT, "failed", None, None)
        assert [r.state for r in store.assertions_for_attempt(FAILED_ATTEMPT)] == ["mismatched", "matched"]
        assert [r.extras for r in store.assertions_for_attempt(FAILED_ATTEMPT)] == [None, None]
        assert sorted(s.relation for s in store.run_slots(RUNNING_RUN)) == ["origin", "reference"]
        assert store.turns(FAILED_ATTEMPT) == [] and store.run_plan(FINISHED_RUN) == []


def test_a_migrated_store_gets_the_new_protections(tmp_path):
    path = _schema_2_store(tmp_path)
    Store.open(path).close()
    with sqlite3.connect(path) as conn, pytest.raises(sqlite3.IntegrityError, match="insert-only"):
        conn.execute(f"INSERT OR REPLACE INTO assertion_results SELECT * FROM assertion_results "
                     f"WHERE attempt_id = '{FAILED_ATTEMPT}'")
    with sqlite3.connect(path) as conn, pytest.raises(sqlite3.IntegrityError, match="immutable"):
        conn.execute(f"UPDATE runs SET exit_code = 0 WHERE id = '{FINISHED_RUN}'")


def test_a_migrated_store_takes_new_runs_with_owners_and_plans(tmp_path):
    path = _schema_2_store(tmp_path)
    with Store.open(path) as store:
        store.begin_run("01NEWRUN", started_at="2030-01-01T00:00:00.000Z", argv=["niceeval", "run"],
                        version="0.2", config_file=None, experiments=["exp"], planned_total=2,
                        plan=[("exp", "evals/a", 0), ("exp", "evals/b", 0, "case-1")])
        run = store.resolve_run(None)
        assert (run.id, run.status, run.planned_total, run.owner_pid) == ("01NEWRUN", "running", 2, os.getpid())
        assert [s.case_id for s in store.not_run("01NEWRUN")] == [None, "case-1"]



# Written by `niceeval run` at commit 55cf739 (schema 4): module `grow` with one eval `first` (shown
# `grow`), module `ds` with eval `answers` over cases c1, c2.
SCHEMA_4_DUMP = Path(__file__).parent / "data" / "schema4.sql"


def test_a_schema_4_store_keeps_every_row_and_guesses_no_identity(tmp_path):
    path = tmp_path / "results.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_4_DUMP.read_text(encoding="utf-8"))
        old_columns = {t: _columns(conn, t) for t in ("runs", "attempts", "assertion_results", "run_slots")}
    before = {table: _all_rows(path, table, columns) for table, columns in old_columns.items()}
    Store.open(path).close()
    for table, columns in old_columns.items():
        assert _all_rows(path, table, columns) == before[table], table
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        rows = conn.execute("SELECT eval_id, eval_module, eval_name FROM attempts ORDER BY eval_id").fetchall()
        # `grow` may be module `grow`'s only eval or eval `grow` of a module at the root: not guessed.
        assert rows == [("ds[c1]", None, None), ("ds[c2]", None, None), ("grow", None, None)]
        assert [r[0] for r in conn.execute("SELECT state FROM run_results ORDER BY eval_id")] == ["passed"] * 3
        assert conn.execute("SELECT status, last_beat_at FROM run_status").fetchall() == [("finished", None)]
