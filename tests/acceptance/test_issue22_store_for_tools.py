"""Issue 22, item 6 (the store and `query` as outside tools see them).

- `query events --format json|ndjson` gives an event's `input` / `output` as JSON values, like
  every other nested value (not JSON inside a string);
- `query --experiment X` where the run has no experiment X says so on stderr, naming the runs
  that have it (exit 2), instead of an empty success;
- a store opened with plain SQLite (the `sqlite3` module, no NiceEval function) answers "what did
  the latest run decide" in one SELECT over the view `run_results`, and a dead run's effective
  status over the view `run_status`.
"""

from __future__ import annotations

import json
import signal
import sqlite3

import pytest

from tests.support.project import Project, sealed_count, stop, wait_for


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


SHOP = '''
from niceeval_cli import ToolCall, Turn, define_adapter
from niceeval_cli.expect import includes


async def send(ctx, message):
    return Turn(input=message, message="Refunded.",
                events=[ToolCall("lookup_order", input={"order": "A1"}, output={"paid": 30}),
                        ToolCall("refund", input={"order": "A1", "amount": 30}, output="done")])


shop = define_adapter(name="shop", send=send, observes=("messages", "tool_calls"))


@shop.define_eval()
async def refund(t):
    turn = await t.send("Refund order A1")
    t.check(turn.message, includes("Refunded")).label("says so")
'''

TWO = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval()
def good(t):
    t.check("yes", includes("y")).label("has y")


@define_eval()
def bad(t):
    t.check("no", includes("y")).label("has y")
'''

SLOW = '''
import asyncio

from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=40)
async def slow(t):
    await asyncio.sleep(0.25)
    t.check("yes", includes("y")).label("has y")
'''

CONFIG = '''
[project]

[experiments.fast]
[experiments.careful]
evals = ["shop"]
'''


def _plain(proj: Project, statement: str) -> list[dict]:
    """A SELECT through the plain `sqlite3` module: no NiceEval code, no NiceEval SQL function."""
    con = sqlite3.connect(f"file:{proj.store}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(statement)]
    finally:
        con.close()


@pytest.mark.slow
def test_event_input_and_output_are_json_values(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/shop.py", SHOP)
    assert proj.run().returncode == 0
    events = proj.query_json("events")
    assert [(e["name"], e["input"], e["output"]) for e in events] == [
        ("lookup_order", {"order": "A1"}, {"paid": 30}),
        ("refund", {"order": "A1", "amount": 30}, "done"),
    ], events
    res = proj.cli("query", "events", "--format", "ndjson")
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert lines[0]["input"] == {"order": "A1"} and lines[1]["output"] == "done"
    # CSV keeps the stored text.
    csv_out = proj.cli("query", "events", "--format", "csv").stdout
    assert '"{""order"": ""A1""}"' in csv_out or '"{""order"":""A1""}"' in csv_out, csv_out


@pytest.mark.slow
def test_an_experiment_the_run_does_not_have_is_an_error_naming_where_it_is(proj: Project) -> None:
    proj.write("niceeval.toml", CONFIG)
    proj.write("evals/shop.py", SHOP)
    assert proj.run().returncode == 0  # both experiments
    both = proj.sql("SELECT id FROM runs")[0]["id"]
    assert proj.run("--experiment", "fast").returncode == 0  # the latest run has only `fast`
    latest = proj.sql("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1")[0]["id"]

    res = proj.cli("query", "attempts", "--experiment", "careful", "--format", "json")
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stdout == ""
    assert "careful" in res.stderr and latest in res.stderr and both in res.stderr, res.stderr
    assert "Traceback" not in res.stderr

    nowhere = proj.cli("query", "--experiment", "typo", "--format", "json")
    assert nowhere.returncode == 2 and "typo" in nowhere.stderr and "no run" in nowhere.stderr, nowhere.stderr
    # Where it exists, it answers as before.
    assert len(proj.query_json("attempts", "--experiment", "careful", "--run", both)) == 1
    assert len(proj.query_json("attempts", "--experiment", "careful", "--run", "all")) == 1
    assert proj.query_json("attempts", "--experiment", "fast") != []


@pytest.mark.slow
def test_plain_sqlite_reads_what_the_latest_run_decided_in_one_select(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/two.py", TWO)
    assert proj.run().returncode == 1
    assert proj.run().returncode == 1  # everything reused
    latest = proj.sql("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1")[0]["id"]

    rows = _plain(proj, "SELECT eval_id, relation, plan_reason, state, gate, score FROM run_results "
                        "WHERE run_id = (SELECT id FROM runs ORDER BY started_at DESC LIMIT 1) ORDER BY eval_id")
    assert rows == [
        {"eval_id": "two/bad", "relation": "reference", "plan_reason": "reused", "state": "failed",
         "gate": None, "score": None},
        {"eval_id": "two/good", "relation": "reference", "plan_reason": "reused", "state": "passed",
         "gate": None, "score": None},
    ]
    status = _plain(proj, f"SELECT id, status, stored_status FROM run_status WHERE id = '{latest}'")
    assert status == [{"id": latest, "status": "finished", "stored_status": "finished"}]


@pytest.mark.slow
def test_plain_sqlite_reads_a_dead_run_as_abandoned(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 2\n")
    proj.write("evals/slow.py", SLOW)
    proc = proj.popen("run")
    try:
        wait_for(lambda: sealed_count(proj) >= 2)
    finally:
        stop(proc, signal.SIGKILL)
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    beat = _plain(proj, "SELECT last_beat_at, status FROM run_status")[0]
    assert beat["last_beat_at"] is not None and beat["status"] == "running"  # it beat a moment ago

    # Age its last beat past the limit, as if it died long ago (the file allows: beats are not sealed).
    with sqlite3.connect(proj.store) as con:
        con.execute("UPDATE run_heartbeats SET beat_at = '2020-01-01T00:00:00.000Z'")
    assert _plain(proj, "SELECT status, stored_status FROM run_status") == [
        {"status": "abandoned", "stored_status": "running"}]
    runs = proj.query_json("runs")
    assert [r["status"] for r in runs] == ["abandoned"]  # as the CLI shows it

    # The next run records it `interrupted`: the view reads the stored status.
    proj.write("evals/slow.py", SLOW.replace("attempts=40", "attempts=1"))
    assert proj.run().returncode == 0
    assert _plain(proj, f"SELECT status FROM run_status WHERE id = '{run_id}'") == [{"status": "interrupted"}]
