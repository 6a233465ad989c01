"""A `running` run whose process is gone reads as `abandoned`; the next writer records it (issue 9.6)."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from niceeval_cli._states import RunStatus
from niceeval_cli.store import Store

_OWNER = textwrap.dedent("""
    import sys, time
    from niceeval_cli.store import Store
    store = Store.open(sys.argv[1])
    store.begin_run(sys.argv[2], started_at="2030-01-01T00:00:00.000Z", argv=["niceeval", "run"],
                    version="0.1", config_file=None, experiments=["exp"])
    print("begun", flush=True)
    time.sleep(600)
""")


@pytest.fixture
def owner(project) -> Iterator[subprocess.Popen[str]]:
    """A real process that began run OWNED and is still running."""
    process = subprocess.Popen([sys.executable, "-c", _OWNER, str(project.path), "OWNED"],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "begun"
        yield process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait()


def _digest(path: Path) -> str:
    """The database and its WAL (the -shm index holds readers' marks, not data)."""
    files = [path, path.with_name(path.name + "-wal")]
    return hashlib.sha256(b"".join(p.read_bytes() for p in files if p.exists())).hexdigest()


def test_a_run_whose_owner_is_alive_reads_as_running(project, owner):
    run = project.reader().resolve_run("OWNED")
    assert (run.status, run.owner_pid, run.owner_host) == (RunStatus.RUNNING, owner.pid, socket.gethostname())
    assert run.owner_started_at is not None and run.owner_started_at.endswith("Z")


def test_a_run_whose_owner_was_killed_reads_as_abandoned_everywhere_and_reading_writes_nothing(project, owner):
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    project.store.close()
    before = _digest(project.path)
    with Store.open(project.path, readonly=True) as reader:
        assert reader.resolve_run("OWNED").status is RunStatus.ABANDONED
        assert reader.resolve_run(None).status == "abandoned"  # the latest run
        _, rows = reader.query("runs")
        assert [(r["id"], r["status"]) for r in rows] == [("OWNED", "abandoned")]
        assert reader.query("runs", states="abandoned")[1] == rows
        assert reader.query("runs", states="running")[1] == []
    assert _digest(project.path) == before  # a reader never writes
    with sqlite3.connect(project.path) as conn:
        assert conn.execute("SELECT status FROM runs").fetchone()[0] == "running"


def test_a_live_pid_that_started_at_another_time_is_not_the_owner(project):
    """The pid was reused by another process: this one (alive), but with another start time."""
    with sqlite3.connect(project.path) as conn:
        conn.execute(
            "INSERT INTO runs (id, started_at, status, argv, owner_pid, owner_host, owner_started_at) "
            "VALUES ('REUSED', '2030-01-01T00:00:00.000Z', 'running', '[]', ?, ?, '2001-01-01T00:00:00.000Z')",
            [os.getpid(), socket.gethostname()],
        )
        conn.execute(
            "INSERT INTO runs (id, started_at, status, argv, owner_pid, owner_host, owner_started_at) "
            "VALUES ('ELSEWHERE', '2030-01-01T00:00:01.000Z', 'running', '[]', 999999999, 'another-host', NULL)"
        )
    assert project.store.resolve_run("REUSED").status is RunStatus.ABANDONED
    # Another host's process cannot be checked from here: the run reads as stored.
    assert project.store.resolve_run("ELSEWHERE").status is RunStatus.RUNNING


def test_a_run_begun_by_this_process_is_running(project):
    run_id = project.begin_run()
    assert project.reader().resolve_run(run_id).status is RunStatus.RUNNING
    assert project.store.record_abandoned() == []


def test_the_next_writer_records_abandoned_runs_as_interrupted_without_an_exit_code(project, owner):
    mine = project.begin_run()
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    assert project.store.record_abandoned(ended_at="2030-01-02T00:00:00.000Z") == ["OWNED"]
    run = project.reader().resolve_run("OWNED")
    assert (run.status, run.exit_code, run.ended_at) == (RunStatus.INTERRUPTED, None, "2030-01-02T00:00:00.000Z")
    assert project.store.resolve_run(mine).status is RunStatus.RUNNING  # its owner is alive
    assert project.store.record_abandoned() == []  # recorded once
