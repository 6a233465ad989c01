"""What one turn may record (docs/adapters.md, "How much one turn records"), through the real CLI:
a flood of events from the `python`, `command` and `http` adapters, or of bytes from a custom
adapter, keeps the first events and one `events-dropped` event counting the rest, an assertion
that needed the rest is `unavailable`, and the run goes on; a chat-completion reply asking for too
many tool calls fails its turn."""

from __future__ import annotations

import json
import sys

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project

#: The documented bounds (docs/adapters.md), spelled here so the test reads what a user is told.
MAX_EVENTS_PER_TURN = 10_000
MAX_TOOL_CALLS_PER_REPLY = 1000
MAX_EVENT_BYTES_PER_TURN = 16 * 1024 * 1024
#: Past the bound: more `lookup` calls, then an `rm` call and a closing message, all dropped.
EXTRA = 5_000
EVENTS = ([{"type": "tool_call", "name": "lookup", "input": {"i": i}} for i in range(MAX_EVENTS_PER_TURN + EXTRA - 1)]
          + [{"type": "tool_call", "name": "rm", "input": {"path": "/"}},
             {"type": "message", "role": "assistant", "text": "bye"}])

AGENT = f"""
import json, sys

EVENTS = json.loads({json.dumps(json.dumps(EVENTS))})

def reply(message):
    return {{"message": "done", "events": EVENTS}}

if __name__ == "__main__":  # the command adapter's program: ndjson on stdout
    sys.stdin.read()
    for event in EVENTS:
        print(json.dumps(event))
    print(json.dumps({{"type": "final", "message": "done"}}))
"""

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def flood(t):
    await t.send("go")
    t.called_tool("lookup").label("a kept call")
    t.not_called_tool("rm").label("no rm")
    t.max_tool_calls(5).label("at most 5")


@define_eval()
async def calm(t):
    t.check(1, equals(1)).label("one")
"""


def test_a_flood_of_events_keeps_the_bound_and_counts_the_rest_for_every_adapter(
        project: Project, judge_server: JudgeServer) -> None:
    judge_server.default = Reply.raw({"message": "done", "events": EVENTS})
    argv = json.dumps([sys.executable, "agent.py"])
    project.write("niceeval.toml", f"""
[experiments.py]
adapter = "python"
[experiments.py.options]
callable = "agent:reply"

[experiments.cmd]
adapter = "command"
[experiments.cmd.options]
argv = {argv}
output = "ndjson"

[experiments.web]
adapter = "http"
[experiments.web.options]
url = "{judge_server.base_url}/chat/completions"
events_path = "events"
""")
    project.write("agent.py", AGENT)
    project.write("evals/e.py", EVAL)
    run = project.run()
    assert run.returncode == 1, (run.stdout, run.stderr)  # at most 5: a definite failure, nothing else
    attempts = project.attempts()
    assert sorted((a["experiment_id"], a["eval_id"], a["state"]) for a in attempts) == [
        ("cmd", "e/calm", "passed"), ("cmd", "e/flood", "failed"), ("py", "e/calm", "passed"),
        ("py", "e/flood", "failed"), ("web", "e/calm", "passed"), ("web", "e/flood", "failed")], \
        [(a["state"], a["error"]) for a in attempts]
    results = project.assertions()
    for attempt in (a for a in attempts if "flood" in a["eval_id"]):
        where = attempt["experiment_id"]
        got = {r["label"]: (r["state"], r["reason"]) for r in results if r["attempt_id"] == attempt["id"]}
        assert got == {"a kept call": ("matched", None), "no rm": ("unavailable", "capture-limit-exceeded"),
                       "at most 5": ("mismatched", None)}, (where, got)
        events = project.sql("SELECT seq, kind, name, input FROM events WHERE attempt_id = ? ORDER BY seq",
                             [attempt["id"]])
        assert len(events) == MAX_EVENTS_PER_TURN + 1, where
        assert {e["name"] for e in events[:-1]} == {"lookup"}, where
        last = events[-1]
        assert (last["seq"], last["kind"]) == (MAX_EVENTS_PER_TURN, "events-dropped"), where
        note = json.loads(last["input"])
        assert 0 < note.pop("kept_bytes") < MAX_EVENT_BYTES_PER_TURN, (where, note)  # the count bound, not the bytes
        assert note == {"dropped": EXTRA + 1, "kept": MAX_EVENTS_PER_TURN, "tool_calls": EXTRA, "messages": 1}, where
        [turn] = project.sql("SELECT observed FROM turns WHERE attempt_id = ?", [attempt["id"]])
        assert json.loads(turn["observed"]) == [], where
    shown = project.cli("view", f"@{attempt['id']}")  # the last flood attempt's transcript
    assert shown.returncode == 0, shown.stderr
    assert f'· events-dropped {{"dropped": {EXTRA + 1}, "kept": {MAX_EVENTS_PER_TURN}' in shown.stdout
    assert "◆ rm" not in shown.stdout and "◆ lookup" in shown.stdout


def test_an_http_openai_reply_asking_for_too_many_tool_calls_fails_its_turn_and_proves_no_call_absent(
        project: Project, judge_server: JudgeServer) -> None:
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "rm" if i == 500 else "lookup",
                                                                 "arguments": "{}"}}
             for i in range(MAX_TOOL_CALLS_PER_REPLY + 1)]
    judge_server.default = Reply.completion({"content": None, "tool_calls": calls}, finish_reason="tool_calls")
    project.write("niceeval.toml", f'[experiments.web]\nadapter = "http"\n[experiments.web.options]\n'
                                   f'url = "{judge_server.base_url}/chat/completions"\nformat = "openai"\n')
    project.write("evals/e.py", """
from niceeval_cli import define_eval


@define_eval()
async def asks(t):
    await t.send("go")
    t.not_called_tool("rm").label("no rm")
    t.succeeded().label("succeeded")
""")
    run = project.run()
    assert run.returncode == 1, (run.stdout, run.stderr)
    [attempt] = project.attempts()
    got = {r["label"]: (r["state"], r["reason"]) for r in project.assertions()}
    assert got == {"no rm": ("unavailable", "capture-limit-exceeded"), "succeeded": ("mismatched", None)}, got
    [turn] = project.sql("SELECT status, observed FROM turns WHERE attempt_id = ?", [attempt["id"]])
    assert (turn["status"], json.loads(turn["observed"])) == ("failed", ["messages"])
    events = project.sql("SELECT kind, name, text FROM events WHERE attempt_id = ?", [attempt["id"]])
    assert events == [{"kind": "error", "name": "too-many-tool-calls",
                       "text": f"the model asked for {MAX_TOOL_CALLS_PER_REPLY + 1} tool calls in one reply; "
                               f"NiceEval records at most {MAX_TOOL_CALLS_PER_REPLY} a reply, so none of them "
                               "was recorded"}]


def test_an_openai_chat_max_steps_past_the_bound_is_a_configuration_error_before_any_request(
        project: Project, judge_server: JudgeServer, monkeypatch) -> None:
    """`max_steps = 100000000` over a model that keeps calling a tool never ended (each step resends
    the growing conversation); the attempt's deadline here only keeps the old code from hanging."""
    monkeypatch.setenv("NICEEVAL_BOUNDS_TEST_KEY", "sk-bounds-test-key-0123456789abcdef")
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    judge_server.default = Reply.completion({"content": None, "tool_calls": [call]}, finish_reason="tool_calls")
    judge_server.listed = ["m"]
    project.write("tools.py", "HANDLERS = {'lookup': lambda arguments: 'again'}\n")
    project.write("niceeval.toml", f"""
[project]
timeout_ms = 5000

[experiments.chat]
adapter = "openai-chat"
model = "m"
[experiments.chat.options]
base_url = "{judge_server.base_url}"
api_key_env = "NICEEVAL_BOUNDS_TEST_KEY"
tool_handlers = "tools:HANDLERS"
max_steps = 100000000
""")
    project.write("evals/e.py", """
from niceeval_cli import define_eval


@define_eval()
async def loops(t):
    turn = await t.send("go")
    t.check(turn.status == "completed", True).label("done")
""")
    run = project.run()
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "max_steps" in run.stderr and "1000" in run.stderr, run.stderr
    assert not [r for r in judge_server.requests if "messages" in (r.json or {})]
    assert not project.store.exists() or project.sql("SELECT count(*) AS n FROM attempts") == [{"n": 0}]


BIG_ADAPTER = """
from niceeval_cli import ToolCall, Turn, define_adapter


async def send(ctx, message, **options):
    count, size = (400, 70_000) if message == "flood" else (250, 60_000)
    calls = [ToolCall("lookup", input={"i": i}, output="x" * size) for i in range(count - 1)]
    calls.append(ToolCall("rm", input={"path": "/"}, output="ok"))
    return Turn(input=message, message="done", events=calls)

adapter = define_adapter(name="big", send=send, observes=("messages", "tool_calls"))


def make(message):
    async def test(t):
        await t.send(message)
        t.called_tool("lookup").label("a kept call")
        t.not_called_tool("rm").label("no rm")
    return test


flood = adapter.define_eval(test=make("flood"), name="flood")
fits = adapter.define_eval(test=make("fits"), name="fits")
"""


def test_a_turn_past_its_byte_bound_keeps_the_first_events_that_fit_and_counts_the_rest(project: Project) -> None:
    """400 tool calls of a 70 KB output (each stored as 64 KB: 25 MB) keep the first that fit in
    16 MiB; 250 of a 60 KB output (15 MB) are kept whole, the rm call at their end decided."""
    project.write("evals/e.py", BIG_ADAPTER)
    run = project.run()
    assert run.returncode == 1, (run.stdout, run.stderr)  # the rm call in `fits` is seen: a definite failure
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert {e: a["state"] for e, a in attempts.items()} == {"e/flood": "errored", "e/fits": "failed"}
    results = project.assertions()
    got = {(a["eval_id"], r["label"]): (r["state"], r["reason"])
           for a in attempts.values() for r in results if r["attempt_id"] == a["id"]}
    assert got == {("e/flood", "a kept call"): ("matched", None),
                   ("e/flood", "no rm"): ("unavailable", "capture-limit-exceeded"),
                   ("e/fits", "a kept call"): ("matched", None), ("e/fits", "no rm"): ("mismatched", None)}, got

    flood = attempts["e/flood"]["id"]
    events = project.sql("SELECT seq, kind, name, length(output) AS size, input FROM events WHERE attempt_id = ? "
                         "ORDER BY seq", [flood])
    *calls, last = events
    assert {e["name"] for e in calls} == {"lookup"} and 200 < len(calls) < 400
    assert sum(e["size"] for e in calls) <= MAX_EVENT_BYTES_PER_TURN
    assert (last["seq"], last["kind"]) == (len(calls), "events-dropped")
    note = json.loads(last["input"])
    assert note == {"dropped": 400 - len(calls), "kept": len(calls), "kept_bytes": note["kept_bytes"],
                    "tool_calls": 400 - len(calls), "messages": 0}
    assert sum(e["size"] for e in calls) < note["kept_bytes"] <= MAX_EVENT_BYTES_PER_TURN
    [turn] = project.sql("SELECT observed FROM turns WHERE attempt_id = ?", [flood])
    assert json.loads(turn["observed"]) == ["messages"]
    fits = project.sql("SELECT count(*) AS n, max(name) AS last FROM events WHERE attempt_id = ?",
                       [attempts["e/fits"]["id"]])
    assert fits == [{"n": 250, "last": "rm"}]

    shown = project.cli("view", f"@{flood}")
    assert shown.returncode == 0, shown.stderr
    assert f'· events-dropped {{"dropped": {400 - len(calls)}, "kept": {len(calls)}, "kept_bytes": ' in shown.stdout


def test_a_long_turn_holding_a_value_that_cannot_be_made_json_is_measured_without_failing_the_send(
        project: Project) -> None:
    """Measuring a long turn's events must not raise where storing them is allowed to fail: the
    attempt is decided as before, and its turn is stored as one that could not be."""
    project.write("evals/e.py", """
from niceeval_cli import ToolCall, Turn, define_adapter


class NoRepr:
    def __repr__(self):
        raise RuntimeError("no repr")


async def send(ctx, message, **options):
    calls = [ToolCall("lookup", input={"i": i}, output="ok") for i in range(99)]
    calls.append(ToolCall("odd", input={"i": 99}, output=NoRepr()))
    return Turn(input=message, message="done", events=calls)

adapter = define_adapter(name="odd", send=send, observes=("messages", "tool_calls"))


async def odd(t):
    await t.send("go")
    t.called_tool("lookup").label("a call")

odd_eval = adapter.define_eval(test=odd, name="odd")
""")
    run = project.run()
    assert run.returncode == 0, (run.stdout, run.stderr)
    [attempt] = project.attempts()
    assert (attempt["state"], attempt["error"]) == ("passed", None)
    [turn] = project.sql("SELECT message FROM turns WHERE attempt_id = ?", [attempt["id"]])
    assert turn["message"] == "[this turn could not be stored: RuntimeError: no repr]"
