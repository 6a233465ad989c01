"""Hostile or broken OTLP exporters during a real `niceeval run`: the run goes on, the exporter
is told why its request was refused, and a turn whose trace could not be read is `unavailable`.

The agent is a real `command`-adapter subprocess posting its export to the run's receiver with
the turn's `TRACEPARENT`; the answer it got is written to a file the test reads."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.project import Project

pytest.importorskip("opentelemetry.proto")

AGENT = """
import json, os, sys, urllib.error, urllib.request

message = sys.stdin.read()
_, trace_id, parent_id, _ = os.environ["TRACEPARENT"].split("-")
root = {"traceId": trace_id, "spanId": "1" * 16, "parentSpanId": parent_id, "name": "invoke_agent",
        "startTimeUnixNano": "1000000000", "endTimeUnixNano": "2000000000"}
tool = {"traceId": trace_id, "spanId": "2" * 16, "parentSpanId": "1" * 16, "name": "execute_tool lookup",
        "startTimeUnixNano": os.environ["TOOL_START"], "endTimeUnixNano": "1200000000",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                       {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}}]}
body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [root, tool]}]}]}).encode()
request = urllib.request.Request(os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces", data=body,
                                 headers={"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(request, timeout=10) as answer:
        said = [answer.status, answer.read().decode()]
except urllib.error.HTTPError as error:
    said = [error.code, error.read().decode()]
with open(os.environ["ANSWER"], "w") as out:
    json.dump(said, out)
print("done " + message)
"""

EVAL = """
from niceeval_cli import define_eval


@define_eval(cases=["a"])
async def lookup(t, case):
    turn = await t.send(case)
    turn.called_tool("lookup").label("looked up")
    turn.not_called_tool("delete").label("never deleted")
"""


def _run(project: Project, tmp_path: Path, tool_start: str) -> tuple[list, list[dict]]:
    project.write("agent.py", AGENT)
    project.write("evals/lookup.py", EVAL)
    project.write("niceeval.toml", '[project]\n[experiments.x]\nadapter = "command"\ntraces = "otlp"\n'
                  f'trace_flush_ms = 300\n[experiments.x.options]\nargv = {json.dumps([sys.executable, "agent.py"])}\n')
    answer = tmp_path / "answer.json"
    result = project.run(env={"ANSWER": str(answer), "TOOL_START": tool_start})
    assert result.returncode in (0, 1, 5), result.stdout + result.stderr
    rows = project.sql("SELECT label, state, reason FROM assertion_results ORDER BY label")
    return json.loads(answer.read_text()), rows


def test_a_span_time_past_64_bits_is_refused_and_the_turn_reads_unavailable(project: Project, tmp_path: Path) -> None:
    """Before, the span was accepted and reading it when the turn ended overflowed: the attempt
    errored as `adapter-error` ("OverflowError: int too large to convert to float")."""
    said, rows = _run(project, tmp_path, "1" + "0" * 400)
    assert said[0] == 400 and "not a 64-bit unsigned number" in said[1]
    assert [(r["label"], r["state"], r["reason"]) for r in rows] == [
        ("looked up", "unavailable", "trace-incomplete"), ("never deleted", "unavailable", "trace-incomplete")]


def test_an_honest_export_still_decides_the_tool_assertions(project: Project, tmp_path: Path) -> None:
    said, rows = _run(project, tmp_path, "1100000000")
    assert said == [200, "{}"]
    assert [(r["label"], r["state"]) for r in rows] == [("looked up", "matched"), ("never deleted", "matched")]


CUT_THEN_EXPORT = """
import os, socket, struct, subprocess, sys

host, port = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].removeprefix("http://").split(":")
for _ in range(3):  # hang up (a reset) in the middle of the body, as an exporter killed mid-export does
    cut = socket.create_connection((host, int(port)))
    cut.sendall(b"POST /v1/traces HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 1000\\r\\n\\r\\nabc")
    cut.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends a reset
    cut.close()
sys.exit(subprocess.run([sys.executable, "agent.py"], stdin=sys.stdin).returncode)
"""


def test_an_exporter_hanging_up_mid_request_prints_no_traceback(project: Project, tmp_path: Path) -> None:
    """Before, each reset printed "Exception occurred during processing of request" and a
    ConnectionResetError traceback over the run's output."""
    project.write("agent.py", AGENT)
    project.write("cut.py", CUT_THEN_EXPORT)
    project.write("evals/lookup.py", EVAL)
    argv = json.dumps([sys.executable, "cut.py"])
    project.write("niceeval.toml", '[project]\n[experiments.x]\nadapter = "command"\ntraces = "otlp"\n'
                  f'trace_flush_ms = 300\n[experiments.x.options]\nargv = {argv}\n')
    answer = tmp_path / "answer.json"
    result = project.run(env={"ANSWER": str(answer), "TOOL_START": "1100000000"})
    assert "Traceback" not in result.stderr + result.stdout and "Exception occurred" not in result.stderr
    assert json.loads(answer.read_text()) == [200, "{}"]
    # the requests cut off may have held the turn's spans: its trace cannot read complete
    assert result.returncode == 5, result.stdout + result.stderr
    said = project.sql("SELECT input FROM events WHERE kind = 'trace'")[0]["input"]
    assert "the receiver refused 3 trace export request(s) while the turn ran" in said


SPLIT = """
import json, os, subprocess, sys, urllib.error, urllib.request

message = sys.stdin.read()
_, trace_id, parent_id, _ = os.environ["TRACEPARENT"].split("-")


def export(span):  # one request per span, as the SDK's SimpleSpanProcessor sends them
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
    request = urllib.request.Request(os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        return urllib.request.urlopen(request, timeout=10).status
    except urllib.error.HTTPError as error:
        return error.code


tool = {"traceId": trace_id, "spanId": "2" * 16, "parentSpanId": "1" * 16, "name": "execute_tool lookup",
        "startTimeUnixNano": "-1", "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}}]}
root = {"traceId": trace_id, "spanId": "1" * 16, "parentSpanId": parent_id, "name": "invoke_agent",
        "startTimeUnixNano": "1000000000", "endTimeUnixNano": "2000000000"}
with open(os.environ["ANSWER"], "w") as out:
    json.dump([export(tool), export(root)], out)
print("done " + message)
"""


def test_a_refused_export_leaves_the_turns_trace_incomplete(project: Project, tmp_path: Path) -> None:
    """The tool span's request is refused (400), the root span's accepted: every span that
    arrived has its parent, so before the trace read complete — `called_tool("lookup")` failed
    and `not_called_tool("delete")` matched, though the tool span that would decide them was lost."""
    project.write("split.py", SPLIT)
    project.write("evals/lookup.py", EVAL)
    argv = json.dumps([sys.executable, "split.py"])
    project.write("niceeval.toml", '[project]\n[experiments.x]\nadapter = "command"\ntraces = "otlp"\n'
                  f'trace_flush_ms = 300\n[experiments.x.options]\nargv = {argv}\n')
    answer = tmp_path / "answer.json"
    result = project.run(env={"ANSWER": str(answer)})
    assert json.loads(answer.read_text()) == [400, 200]
    assert result.returncode == 5, result.stdout + result.stderr
    rows = project.sql("SELECT label, state, reason FROM assertion_results ORDER BY label")
    assert [(r["label"], r["state"], r["reason"]) for r in rows] == [
        ("looked up", "unavailable", "trace-incomplete"), ("never deleted", "unavailable", "trace-incomplete")]
    said = project.sql("SELECT input FROM events WHERE kind = 'trace'")[0]["input"]
    assert "the receiver refused 1 trace export request(s) while the turn ran" in said


RETRIED = """
import json, os, sys, urllib.request

message = sys.stdin.read()
_, trace_id, parent_id, _ = os.environ["TRACEPARENT"].split("-")
root = {"traceId": trace_id, "spanId": "1" * 16, "parentSpanId": parent_id, "name": "invoke_agent",
        "startTimeUnixNano": "1000000000", "endTimeUnixNano": "2000000000"}
tool = {"traceId": trace_id, "spanId": "2" * 16, "parentSpanId": "1" * 16, "name": "execute_tool lookup",
        "startTimeUnixNano": "1100000000", "endTimeUnixNano": "1200000000", "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}}]}
body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [root, tool]}]}]}).encode()
for _ in range(2):  # an exporter retrying a request whose answer it did not see in time
    request = urllib.request.Request(os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces", data=body,
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()
print("done " + message)
"""


def test_a_span_exported_twice_is_one_tool_call(project: Project) -> None:
    """A span id names one span of its trace: before, a retried export made every tool call in
    it count twice, and `max_tool_calls(1)` failed for an agent that called one tool once."""
    project.write("retried.py", RETRIED)
    project.write("evals/once.py", """
from niceeval_cli import define_eval


@define_eval(cases=["a"])
async def once(t, case):
    turn = await t.send(case)
    turn.max_tool_calls(1).label("one call")
""")
    argv = json.dumps([sys.executable, "retried.py"])
    project.write("niceeval.toml", '[project]\n[experiments.x]\nadapter = "command"\ntraces = "otlp"\n'
                  f'trace_flush_ms = 300\n[experiments.x.options]\nargv = {argv}\n')
    result = project.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert project.sql("SELECT count(*) AS n FROM events WHERE kind = 'tool_call'")[0]["n"] == 1
    assert project.sql("SELECT count(*) AS n FROM events WHERE kind = 'span'")[0]["n"] == 2
