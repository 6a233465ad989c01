"""The transcript in the store (agents.md, "Store and reading surfaces"): tables turns/events
sealed with the attempt, trimmed and redacted; attempts.cost_usd / estimated_cost_usd; extras;
`niceeval query turns|events`; an existing schema-2 store migrated."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from niceeval_cli.authoring._transcript import TEXT_LIMIT
from tests.support.agents import as_json

AGENT = '''
from niceeval_cli import AgentError, Event, Message, ToolCall, Turn, Usage, define_adapter

async def send(ctx, message, cost=None, long=False):
    text = "x" * (TEXT_LIMIT + 7) if long else f"re: {message}"
    events = [Message("assistant", "thinking"),
              ToolCall("lookup", input={"order": "A1", "token": "sk-abcdefghijklmnopqrstuvwx"},
                       output={"paid": 30}),
              ToolCall("refund", input={"order": "A1"}, status="failed", error="limit exceeded"),
              AgentError("tool failed", kind="tool"),
              Event("skill", {"name": "refunds"})]
    return Turn(input=message, message=text, events=events,
                usage=Usage(input_tokens=1000, output_tokens=100, cost_usd=cost))

adapter = define_adapter(name="agent", send=send, observes=("messages", "tool_calls"))
'''.replace("TEXT_LIMIT", str(TEXT_LIMIT))

EVAL = """
from niceeval_cli import define_eval
from agent import adapter

@define_eval()
async def transcript(t):
    await t.send("first", cost=0.25)
    s = t.new_session("second")
    await s.send("other", cost=COST, long=True)
    t.not_called_tool("refund").label("no refund")
"""

PRICES = ('[experiments.m]\nmodel = "m-1"\nadapter = "agent:adapter"\n'
          '[prices."m-1"]\ninput_per_mtok = 2\noutput_per_mtok = 10\n')


def _run(project, cost: str = "0.5"):
    project.write("niceeval.toml", PRICES)
    project.write("agent.py", AGENT)
    project.write("evals/e.py", EVAL.replace("COST", cost))
    run = project.run()
    assert run.exit_code == 1, (run.stdout, run.stderr)
    return run


def test_turns_and_events_are_sealed_and_queryable(project):
    _run(project)
    [attempt] = project.attempts()
    turns = project.query("turns")
    assert [(t["session"], t["ordinal"], t["status"], t["input"]) for t in turns] == [
        ("default", 0, "completed", "first"), ("second", 1, "completed", "other")]
    assert as_json(turns[0]["observed"]) == ["messages", "tool_calls"]
    assert (turns[0]["input_tokens"], turns[0]["output_tokens"], turns[0]["cost_usd"]) == (1000, 100, 0.25)
    assert {t["attempt_id"] for t in turns} == {attempt["id"]}
    events = project.query("events")
    first = [(e["seq"], e["kind"], e["name"], e["status"]) for e in events if e["turn_ordinal"] == 0]
    assert first == [(0, "message", None, None), (1, "tool_call", "lookup", "completed"),
                     (2, "tool_call", "refund", "failed"), (3, "error", "tool", None), (4, "skill", None, None)]
    refund = next(e for e in events if e["name"] == "refund")
    assert (as_json(refund["input"]), refund["text"]) == ({"order": "A1"}, "limit exceeded")
    assert as_json(next(e for e in events if e["kind"] == "skill")["input"]) == {"name": "refunds"}
    assert len(events) == 10


def test_secrets_are_redacted_and_long_texts_trimmed_in_the_store(project):
    _run(project)
    lookup = next(e for e in project.query("events") if e["name"] == "lookup")
    stored = json.dumps(lookup["input"])  # a JSON value in machine formats
    assert "sk-abc" not in stored and "[redacted]" in stored
    long = project.query("turns")[1]["message"]
    assert long == "x" * TEXT_LIMIT + "… [+7 chars]"


def test_reported_and_estimated_cost_are_sealed_apart(project):
    _run(project)
    [attempt] = project.attempts()
    assert attempt["cost_usd"] == pytest.approx(0.75)
    assert attempt["estimated_cost_usd"] == pytest.approx((2000 * 2 + 200 * 10) / 1_000_000)


def test_a_turn_without_reported_cost_makes_the_attempt_cost_unknown_never_zero(project):
    _run(project, cost="None")
    [attempt] = project.attempts()
    assert attempt["cost_usd"] is None
    assert attempt["estimated_cost_usd"] == pytest.approx(0.006)


def test_the_pointed_calls_are_the_assertion_extras(project):
    _run(project)
    [row] = [r for r in project.assertions() if r["label"] == "no refund"]
    assert row["state"] == "mismatched"
    assert as_json(row["extras"]) == {"calls": [[0, 2], [1, 2]]}
    assert row["explanation"] == "expected no call of tool_match('refund'), counted 2: #2, #4"


def test_query_turns_filters_like_attempts(project):
    _run(project)
    assert project.query("turns", "--eval", "nothing/") == []
    assert len(project.query("events", "--state", "failed")) == 10


SCHEMA_2_DUMP = Path(__file__).resolve().parents[1] / "store" / "data" / "schema2.sql"


def test_an_existing_schema_2_store_is_migrated_and_then_takes_transcripts(project):
    store = project.root / ".niceeval" / "results.db"
    store.parent.mkdir(parents=True)
    with sqlite3.connect(store) as conn:
        conn.executescript(SCHEMA_2_DUMP.read_text(encoding="utf-8"))
    with sqlite3.connect(store) as conn:
        old_attempts = conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
    _run(project)
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] >= 3
        assert conn.execute("SELECT count(*) FROM attempts").fetchone()[0] == old_attempts + 1
        assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 10
        with pytest.raises(sqlite3.DatabaseError, match="insert-only"):
            conn.execute("UPDATE events SET text = 'x'")
    assert len(project.query("turns", "--run", "all")) == 2
