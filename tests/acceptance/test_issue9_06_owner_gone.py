"""Issue 9, item 6: a run whose process died (SIGKILL) is shown as `abandoned` by `view` and
`query runs` (readers never write), and the next `run` records it `interrupted`; SIGINT/SIGTERM at
any moment of start-up or reuse bookkeeping gives exit 130 and an `interrupted` run, never a run
left `running` (or rc 143 with a row written)."""

from __future__ import annotations

import signal
import time

import pytest

from tests.support.project import Project, sealed_count, stop, wait_for

SLOW = '''
import asyncio

from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=40)
async def slow(t):
    await asyncio.sleep(0.25)
    t.check("yes", includes("y")).label("has y")
'''

QUICK = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval()
async def quick(t):
    t.check("yes", includes("y")).label("has y")
'''


@pytest.mark.slow
def test_a_killed_run_reads_as_abandoned_and_the_next_run_records_it_interrupted(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 2\n")
    proj.write("evals/slow.py", SLOW)
    proj.write("evals/quick.py", QUICK)
    proc = proj.popen("run", "slow")
    try:
        wait_for(lambda: sealed_count(proj) >= 2)
    finally:
        stop(proc, signal.SIGKILL)
    assert proj.sql("SELECT status FROM runs") == [{"status": "running"}]
    killed = proj.sql("SELECT id FROM runs")[0]["id"]

    proj = Project(proj.root, in_process=True)  # the killed run was a real process; its readers need not be
    runs = proj.query_json("runs")
    assert [r["status"] for r in runs] == ["abandoned"], runs
    view = proj.cli("view", env={"NO_COLOR": "1"})
    assert view.returncode == 0, view.stderr
    assert "abandoned" in view.stdout and "still running" not in view.stdout, view.stdout[:800]
    assert proj.cli("query", "runs", "--state", "abandoned", "--format", "json").stdout.count(killed) == 1
    assert proj.sql("SELECT status FROM runs") == [{"status": "running"}]

    nxt = proj.run("quick")
    assert nxt.returncode == 0, nxt.stdout + nxt.stderr
    rows = {r["id"]: r for r in proj.sql("SELECT id, status, exit_code, ended_at FROM runs")}
    assert rows[killed]["status"] == "interrupted" and rows[killed]["exit_code"] is None
    assert rows[killed]["ended_at"]
    assert [r["status"] for r in rows.values() if r["id"] != killed] == ["finished"]


SLEEPY = '''
import asyncio

from niceeval_cli import define_eval


@define_eval()
async def sleepy(t):
    await asyncio.sleep(3)
'''

MANY = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=600)
async def many(t):
    t.check("yes", includes("y")).label("has y")
'''


@pytest.mark.slow
def test_sigint_or_sigterm_at_any_moment_of_start_up_or_reuse_gives_130_and_interrupted(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 32\n")
    proj.write("evals/many.py", MANY)
    seed = Project(proj.root, in_process=True).run()  # the runs interrupted below are real processes
    assert seed.returncode == 0, seed.stderr
    proj.write("evals/quick.py", SLEEPY)  # the next runs reuse 600 slots and execute one that takes 3 s
    seeded = {r["id"] for r in proj.sql("SELECT id FROM runs")}
    moments = [(signal.SIGTERM, 0.5), (signal.SIGTERM, "row"), (signal.SIGINT, "row")]
    for sig, when in moments:
        known = len(seeded)
        proc = proj.popen("run")
        try:
            if when == "row":  # the run row (and its 600 reused slots) is being written
                wait_for(lambda known=known: len(proj.sql("SELECT id FROM runs")) > known, every=0.005)
            else:
                time.sleep(float(when))
        finally:
            stop(proc, sig)
        new = [r for r in proj.sql("SELECT id, status, exit_code FROM runs") if r["id"] not in seeded]
        assert all(r["status"] != "running" for r in new), (sig, when, new)
        if new:
            assert proc.returncode == 130, (sig, when, proc.returncode, new)
            assert [(r["status"], r["exit_code"]) for r in new] == [("interrupted", 130)]
        seeded |= {r["id"] for r in new}
