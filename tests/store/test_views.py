"""The plain-SQL views (views.py) read through a connection without NiceEval's functions, and the
heartbeat that lets `run_status` tell a run whose process is gone."""

from __future__ import annotations

import asyncio
import sqlite3
import time

from niceeval_cli._states import PlanReason, Relation
from niceeval_cli.store import SlotRecord
from niceeval_cli.store.heartbeat import Heartbeats


def _plain(path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)  # no niceeval_* function registered
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_run_results_has_every_slot_of_a_run_reused_ones_included(project):
    first = project.begin_run()
    kept = project.seal(project.attempt(first, eval_module="evals", eval_name="a"))
    project.finish(first)
    second = project.begin_run()
    project.store.add_reference_slots([SlotRecord(second, "exp", "evals/a", 0, kept.id, Relation.REFERENCE,
                                                  PlanReason.REUSED)])
    project.seal(project.attempt(second, eval_id="evals/b", state="failed"))
    rows = _plain(project.path, "SELECT run_id, eval_id, relation, state, attempt_run_id, eval_name FROM run_results "
                                f"WHERE run_id = '{second}' ORDER BY eval_id")
    assert rows == [(second, "evals/a", "reference", "passed", first, "a"),
                    (second, "evals/b", "origin", "failed", second, None)]


def test_run_status_reads_a_running_run_without_a_recent_beat_as_abandoned(project):
    running = project.begin_run()
    assert _plain(project.path, "SELECT status, stored_status FROM run_status") == [("running", "running")]
    with sqlite3.connect(project.path) as conn:  # beats are not sealed: age this one
        conn.execute("UPDATE run_heartbeats SET beat_at = '2020-01-01T00:00:00.000Z'")
    assert _plain(project.path, "SELECT id, status, stored_status FROM run_status") == [
        (running, "abandoned", "running")]
    project.finish(running)
    assert _plain(project.path, "SELECT status FROM run_status") == [("finished",)]


def test_a_running_run_beats_on_its_event_loop_until_it_finishes(project):
    def beat_at() -> str:
        return _plain(project.path, "SELECT beat_at FROM run_heartbeats")[0][0]

    async def run() -> tuple[str, str, str]:
        project.store._beats = Heartbeats(project.store._beat, interval_s=0.05)
        run_id = project.begin_run()  # on this loop: it beats every 0.05 s
        first = beat_at()
        deadline = time.monotonic() + 10
        while beat_at() == first:
            assert time.monotonic() < deadline, "no beat"
            await asyncio.sleep(0.05)
        project.finish(run_id)
        stopped = beat_at()
        await asyncio.sleep(0.2)
        return first, stopped, beat_at()

    first, stopped, later = asyncio.run(run())
    assert stopped > first and later == stopped  # beats until finished, then never again
