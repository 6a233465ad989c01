"""Two processes writing one store wait for each other instead of failing (issue 9.4).

Every write transaction takes the write lock first (`BEGIN IMMEDIATE`) and waits on the busy
timeout; a deferred BEGIN that reads first would get SQLITE_BUSY_SNAPSHOT ("database is locked")
at once, and a run that records reused slots would be left `running` and empty.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from niceeval_cli.store import Store
from tests.support.project import base_env

ROUNDS = 80

_WRITER = textwrap.dedent("""
    import json, sys, time
    from tests.support.records import make_attempt, make_result, origin_slot
    from niceeval_cli._ids import new_id
    from niceeval_cli._states import PlanReason, Relation, RunStatus
    from niceeval_cli.store import SlotRecord, Store

    path, role, rounds, reused = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    store = Store.open(path)
    done = []
    for n in range(rounds):
        run_id = new_id()
        store.begin_run(run_id, started_at=f"2030-01-01T00:00:{n % 60:02d}.000Z", argv=[role],
                        version="0.1", config_file=None, experiments=["exp"])
        if role == "sealer":  # one run sealing attempt after attempt
            for k in range(5):
                attempt = make_attempt(run_id, eval_id=f"evals/{role}{n}-{k}")
                store.seal_attempt(attempt, [make_result(attempt, 0)], origin_slot(attempt))
        else:  # runs that only reuse: read what exists, then record reference slots
            store.latest_attempts("exp")
            store.add_reference_slots([
                SlotRecord(run_id, "exp", f"evals/reused{k}", 0, reused, Relation.REFERENCE, PlanReason.REUSED)
                for k in range(20)
            ])
            store.record_plan(run_id, [("exp", f"evals/reused{k}", 0) for k in range(20)])
        store.resolve_run(run_id)
        store.finish_run(run_id, status=RunStatus.FINISHED, ended_at="2030-01-02T00:00:00.000Z", exit_code=0)
        done.append(run_id)
    print(json.dumps(done))
""")


@pytest.mark.slow
def test_a_sealing_run_and_a_reusing_run_on_one_store_both_finish(project):
    run_id = project.begin_run()
    reused = project.seal(project.attempt(run_id))
    project.finish(run_id)
    project.store.close()
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(project.path), role, str(rounds), reused.id],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=base_env())
        for role, rounds in (("sealer", ROUNDS), ("reuser", ROUNDS), ("sealer", ROUNDS))
    ]
    outputs = [w.communicate(timeout=300) for w in writers]
    for writer, (_, err) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, err
        assert "locked" not in err
    finished = [run for out, _ in outputs for run in json.loads(out)]
    assert len(finished) == 3 * ROUNDS
    with Store.open(project.path, readonly=True) as store:
        _, runs = store.query("runs")
        assert {r["status"] for r in runs} == {"finished"}  # no empty `running` run left behind
        assert len(runs) == 1 + 3 * ROUNDS
        _, attempts = store.query("attempts", run="all")
        assert len(attempts) == 1 + 2 * ROUNDS * 5
        for run in finished:
            slots = store.run_slots(run)
            assert len(slots) in (5, 20)


_READER = textwrap.dedent("""
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM attempts").fetchall()  # a read transaction held open
    print("reading", flush=True)
    time.sleep(60)
""")


@pytest.mark.slow
def test_a_store_copied_out_of_wal_mode_is_written_while_a_reader_reads(tmp_path):
    """`VACUUM INTO` (a documented way to copy a database) leaves the copy in rollback-journal
    mode, where a reader blocks the writer: a run waited the 10 s busy timeout behind a long
    `query --sql` and exited 6. The first run on the copy puts it back in WAL mode."""
    from tests.support.project import Project

    project = Project(tmp_path / "proj")
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", "from niceeval_cli import define_eval\n\n@define_eval()\ndef ok(t):\n    pass\n")
    original, copy = tmp_path / "results.db", tmp_path / "copy.db"
    assert project.cli("run", "--store", str(original)).returncode == 0
    with sqlite3.connect(original) as conn:
        conn.execute("VACUUM INTO ?", [str(copy)])
    assert _journal_mode(copy) == "delete"
    assert project.cli("run", "--store", str(copy)).returncode == 0
    reader = subprocess.Popen([sys.executable, "-c", _READER, str(copy)], stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
        started = time.monotonic()
        done = project.cli("run", "--rerun-all", "--store", str(copy), timeout=60)
        assert (done.returncode, done.stderr) == (0, "")
        assert time.monotonic() - started < 8  # never the busy timeout's 10 s
    finally:
        reader.kill()
        reader.wait()
    assert _journal_mode(copy) == "wal"
    statuses = [r[0] for r in sqlite3.connect(copy).execute("SELECT status FROM runs")]
    assert statuses == ["finished"] * 3


def _journal_mode(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()
