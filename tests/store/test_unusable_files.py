"""Files the store must not use are left byte-for-byte unchanged; a store that cannot be written
now is `StoreUnavailable` (exit 6), not a usage error (issue 9.7)."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from niceeval_cli._errors import ExitCode
from niceeval_cli.store import SCHEMA_VERSION, Store, StoreError, StoreUnavailable
from tests.support.project import Project as CliProject
from tests.support.project import base_env


def _snapshot(path: Path) -> dict[str, bytes]:
    """Every file of the database: the file itself and any -wal / -shm / -journal beside it."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.glob(path.name + "*"))}


def _other_app(path: Path, *statements: str) -> Path:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


FOREIGN = {
    "notes": ("CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('mine')"),
    "a table named runs": ("CREATE TABLE runs (id INTEGER PRIMARY KEY, distance_km REAL)",
                           "INSERT INTO runs (distance_km) VALUES (5.2)"),
    "our tables without our version": tuple(
        f"CREATE TABLE {t} (id TEXT)" for t in ("runs", "attempts", "assertion_results", "run_slots")
    ),
}


@pytest.mark.parametrize("kind", list(FOREIGN))
@pytest.mark.parametrize("readonly", [False, True])
def test_a_foreign_sqlite_file_is_refused_and_left_byte_for_byte_unchanged(tmp_path, kind, readonly):
    path = _other_app(tmp_path / "other-app.db", *FOREIGN[kind])
    before = _snapshot(path)
    with pytest.raises(StoreError) as caught:
        Store.open(path, readonly=readonly)
    message = str(caught.value)
    assert str(path) in message and "not a NiceEval results store" in message and "left unchanged" in message
    assert caught.value.exit_code == ExitCode.USAGE and not isinstance(caught.value, StoreUnavailable)
    assert _snapshot(path) == before  # no WAL conversion, no -wal / -shm files, no new tables


@pytest.mark.parametrize("readonly", [False, True])
def test_a_newer_store_is_refused_and_left_byte_for_byte_unchanged(tmp_path, readonly):
    path = tmp_path / "results.db"
    Store.open(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")  # as a future NiceEval might leave it
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = _snapshot(path)
    with pytest.raises(StoreError, match="newer NiceEval") as caught:
        Store.open(path, readonly=readonly)
    assert caught.value.exit_code == ExitCode.USAGE
    assert _snapshot(path) == before


def test_run_on_another_apps_database_exits_2_naming_it_and_changes_nothing(tmp_path):
    project = CliProject(tmp_path / "project", in_process=True)
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def ok(t):
            t.check(1, equals(1))
    """)
    path = _other_app(project.root / "other-app.db", *FOREIGN["a table named runs"])
    before = _snapshot(path)
    result = project.run("--store", "other-app.db")
    assert result.exit_code == 2, result.stderr
    assert "other-app.db" in result.stderr and "not a NiceEval results store" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert _snapshot(path) == before


# ── a store that cannot be written now ──────────────────────────────────────────────────

_FILL = textwrap.dedent("""
    import json, sys
    from tests.support.records import make_attempt, make_result, origin_slot
    from niceeval_cli.store import Store, StoreError
    sealed = []
    try:
        store = Store.open(sys.argv[1])
        store.begin_run("FULL", started_at="2030-01-01T00:00:00.000Z", argv=[], version="0.1",
                        config_file=None, experiments=["exp"])
        for n in range(10_000):
            attempt = make_attempt("FULL", eval_id=f"evals/e{n}")
            store.seal_attempt(attempt, [make_result(attempt, 0, evidence="x" * 20_000)], origin_slot(attempt))
            sealed.append(attempt.id)
    except StoreError as error:
        print(json.dumps({"class": type(error).__name__, "exit_code": int(error.exit_code),
                          "message": str(error), "sealed": sealed}))
""")


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing


def test_a_full_disk_is_store_unavailable_exit_6_and_keeps_what_was_sealed(tmp_path):
    path = tmp_path / "results.db"
    done = subprocess.run(
        [sys.executable, "-c", _FILL, str(path)],
        capture_output=True, text=True, preexec_fn=_limit_file_size, timeout=120, env=base_env(),
    )
    assert done.returncode == 0 and done.stdout, done.stderr
    report = json.loads(done.stdout)
    assert (report["class"], report["exit_code"]) == ("StoreUnavailable", 6)
    assert str(path) in report["message"] and "free some space" in report["message"]
    assert len(report["sealed"]) > 3
    with Store.open(path, readonly=True) as store:  # the store is intact; the failed seal left nothing
        assert sorted(a.id for a in store.attempts_for_run("FULL")) == sorted(report["sealed"])
        assert len(store.run_slots("FULL")) == len(report["sealed"])


def test_sqlite_full_is_store_unavailable_too(tmp_path):
    """SQLITE_FULL (what a full disk, ENOSPC, gives) from a real database capped at a few pages."""
    from niceeval_cli.store.errors import translated

    path = tmp_path / "capped.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.execute("PRAGMA max_page_count = 3")
    with pytest.raises(StoreUnavailable, match="the disk is full") as caught, translated(path, "Writing"):
        conn.execute("INSERT INTO t VALUES (?)", ["x" * 100_000])
    conn.close()
    assert caught.value.exit_code == 6


def test_a_store_locked_beyond_the_busy_timeout_is_store_unavailable(project):
    run_id = project.begin_run()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sqlite3, sys, time
            conn = sqlite3.connect(sys.argv[1], isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            time.sleep(60)
        """), str(project.path)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        impatient = Store.open(project.path, busy_timeout_ms=300)
        try:
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as caught:
                impatient.seal_attempt(attempt := project.attempt(run_id), [], project.slot(attempt))
            assert time.monotonic() - started >= 0.25  # it waited for the lock first
        finally:
            impatient.close()
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    assert caught.value.exit_code == ExitCode.STORE_UNAVAILABLE == 6
    assert "write lock" in str(caught.value) and str(project.path) in str(caught.value)
    assert project.store.attempts_for_run(run_id) == []
