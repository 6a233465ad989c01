"""The file protects what is sealed against any program writing to it (issue 9.5), not only ours.

`INSERT OR REPLACE` / `REPLACE INTO` delete the old row without firing DELETE triggers, so every
sealed table also refuses an INSERT whose key exists; run rows are never deleted, a running run may
only be finished, and a finished run never changes.
"""

from __future__ import annotations

import sqlite3

import pytest

from niceeval_cli._records import EventRecord, TurnRecord
from niceeval_cli._states import RunStatus
from niceeval_cli.store import StoreError


@pytest.fixture
def sealed(project):
    """A finished run with one attempt (with a result, a turn and an event) and a plan; a running run."""
    run_id = project.begin_run()
    attempt = project.attempt(run_id, state="failed")
    turn = TurnRecord(attempt.id, "s1", 0, "hi", "hello", "completed", '["messages"]',
                      events=(EventRecord(attempt.id, 0, 0, "message", role="assistant", text="hello"),))
    project.seal(project.attempt(run_id, state="failed", id=attempt.id, turns=(turn,)), ["mismatched"])
    project.store.record_plan(run_id, [("exp", "evals/a", 0)])
    project.finish(run_id, exit_code=1)
    running = project.begin_run()
    return project, run_id, attempt.id, running


def _dump(path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return [
            (table, *row)
            for table in ("runs", "attempts", "assertion_results", "run_slots", "run_plan", "turns", "events")
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3")
        ]


@pytest.mark.parametrize("verb", ["INSERT OR REPLACE INTO", "REPLACE INTO", "INSERT OR IGNORE INTO", "INSERT INTO"])
@pytest.mark.parametrize("table", ["attempts", "assertion_results", "run_slots", "run_plan", "turns", "events", "runs"])
def test_a_row_that_exists_cannot_be_replaced(sealed, verb, table):
    project, *_ = sealed
    before = _dump(project.path)
    with sqlite3.connect(project.path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(f"{verb} {table} SELECT * FROM {table}")
    assert _dump(project.path) == before


@pytest.mark.parametrize("statement", [
    "UPDATE run_plan SET case_id = 'x'",
    "DELETE FROM run_plan",
    "UPDATE turns SET message = 'rewritten'",
    "DELETE FROM turns",
    "UPDATE events SET text = 'rewritten'",
    "DELETE FROM events",
    "UPDATE OR REPLACE attempts SET state = 'passed'",
])
def test_sealed_tables_refuse_update_and_delete(sealed, statement):
    project, *_ = sealed
    before = _dump(project.path)
    with sqlite3.connect(project.path) as conn, pytest.raises(sqlite3.IntegrityError, match="insert-only"):
        conn.execute(statement)
    assert _dump(project.path) == before


@pytest.mark.parametrize("statement", [
    "UPDATE runs SET exit_code = 0 WHERE id = :finished",
    "UPDATE runs SET status = 'running' WHERE id = :finished",
    "DELETE FROM runs WHERE id = :finished",
    "DELETE FROM runs WHERE id = :running",
    "UPDATE runs SET argv = '[]' WHERE id = :running",
    "UPDATE runs SET owner_pid = 1 WHERE id = :running",
    "UPDATE runs SET id = 'X' WHERE id = :running",
])
def test_a_finished_run_is_immutable_and_a_running_one_may_only_be_finished(sealed, statement):
    project, finished, _, running = sealed
    before = _dump(project.path)
    with sqlite3.connect(project.path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(statement, {"finished": finished, "running": running})
    assert _dump(project.path) == before


def test_a_running_run_can_be_finished_once(sealed):
    project, finished, _, running = sealed
    project.finish(running, exit_code=0)
    assert project.store.resolve_run(running).status is RunStatus.FINISHED
    with pytest.raises(StoreError, match="already finished; a finished run is never changed"):
        project.finish(running, exit_code=1)
    with pytest.raises(StoreError, match="already finished"):
        project.finish(finished)


def test_sealing_an_attempt_twice_is_refused_and_keeps_the_first(sealed):
    project, _, attempt_id, running = sealed
    again = project.attempt(running, id=attempt_id, state="passed")
    with pytest.raises(StoreError, match=r"insert-only|UNIQUE"):
        project.seal(again, ["matched"])
    assert project.store.resolve_attempt(attempt_id).state == "failed"
    assert project.store.run_slots(running) == []
