"""Issue 9, item 7: `--store` at another program's SQLite file (with or without a table named
`runs`) or at a store of a newer NiceEval is refused with exit 2 and left byte-for-byte unchanged
(no switch to WAL, no -wal/-shm file); a full disk (file size limit) or a store locked beyond the
busy timeout is exit 6 with a message saying what to do, and what was sealed before is kept.

The CLI runs in process (these checks read exit codes, messages, files and rows); the full-disk run
is the real `niceeval`, since its file size limit is a limit of its process."""

from __future__ import annotations

import hashlib
import resource
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.support.project import NICEEVAL, Project, base_env

EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=3)
async def fine(t):
    t.check("yes", includes("y")).label("has y")
'''


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _foreign(path: Path, *tables: str) -> Path:
    con = sqlite3.connect(path)
    for table in tables:
        con.execute(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, status TEXT)")
        con.execute(f"INSERT INTO {table} VALUES ('x', 'mine')")
    con.commit()
    con.close()
    return path


@pytest.fixture
def app(project: Project) -> Project:
    project.write("evals/fine.py", EVALS)
    return project


def _assert_refused_unchanged(proj: Project, store: Path, what: str, *commands: list[str]) -> None:
    before = _digest(store)
    for command in (["run"], *commands):
        res = proj.cli(*command, "--store", str(store))
        assert res.returncode == 2, (command, res.returncode, res.stdout, res.stderr)
        assert str(store.name) in res.stderr and what in res.stderr.lower(), res.stderr
        assert "Traceback" not in res.stderr
        assert _digest(store) == before, command
        assert not Path(f"{store}-wal").exists() and not Path(f"{store}-shm").exists()


def test_a_foreign_sqlite_file_is_refused_with_exit_2_and_left_byte_for_byte_unchanged(app: Project) -> None:
    store = _foreign(app.root / "other-app.db", "customers")
    _assert_refused_unchanged(app, store, "not a niceeval results store", ["query", "runs"])


def test_a_foreign_file_with_a_table_named_runs_is_refused_not_an_internal_error(app: Project) -> None:
    store = _foreign(app.root / "other-app.db", "runs", "attempts")
    _assert_refused_unchanged(app, store, "not a niceeval results store", ["view"])


def test_a_store_of_a_newer_niceeval_is_refused_and_left_unchanged(app: Project) -> None:
    assert app.run().returncode == 0
    store = app.root / "newer.db"
    subprocess.run(["sqlite3", str(app.store), f"VACUUM INTO '{store}'"], check=True)
    subprocess.run(["sqlite3", str(store), "PRAGMA journal_mode = delete; PRAGMA user_version = 99"],
                   check=True, capture_output=True)
    _assert_refused_unchanged(app, store, "newer", ["run", "--dry"])


def _limit_file_size(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


BIG = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=400)
async def big(t):
    t.check("y" * 20000, includes("y")).label("has y")
'''


@pytest.mark.slow
def test_a_full_disk_is_exit_6_with_what_to_do_and_earlier_results_are_kept(app: Project) -> None:
    assert app.run().returncode == 0
    sealed = app.sql("SELECT id FROM attempts ORDER BY id")
    app.write("evals/big.py", BIG)
    limit = app.store.stat().st_size + 256 * 1024
    proc = subprocess.run([*NICEEVAL, "run", "big"], cwd=app.root,
                          env=base_env({"NO_COLOR": "1"}), capture_output=True, text=True,
                          preexec_fn=lambda: _limit_file_size(limit), timeout=120)
    assert proc.returncode == 6, (proc.returncode, proc.stdout[-1500:], proc.stderr[-1500:])
    message = proc.stderr.lower()
    assert "usage error" not in message and "traceback" not in message
    assert "disk" in message or "space" in message or "size limit" in message, proc.stderr
    kept = app.sql("SELECT id FROM attempts WHERE eval_id = 'fine' ORDER BY id")
    assert kept == sealed
    # the failed run cannot record its end on a full disk; once its process is gone it reads as abandoned
    assert "running" not in [r["status"] for r in app.query_json("runs")]


@pytest.mark.slow
def test_a_store_locked_beyond_the_busy_timeout_is_exit_6_not_a_usage_error(app: Project) -> None:
    assert app.run().returncode == 0
    holder = sqlite3.connect(app.store, isolation_level=None, timeout=1)
    holder.execute("BEGIN IMMEDIATE")  # another program holds the write lock and never lets go
    try:
        res = app.run("--rerun-all", env={"NO_COLOR": "1"}, timeout=120)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert res.returncode == 6, (res.returncode, res.stdout[-1000:], res.stderr[-1000:])
    assert "usage" not in res.stderr.lower() and "Traceback" not in res.stderr
    assert "lock" in res.stderr.lower(), res.stderr
    assert app.sql("SELECT count(*) AS n FROM attempts") == [{"n": 3}]
