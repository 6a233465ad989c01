"""Issue 27, item 1: `traces = "otlp"` — spans of another process arrive over OTLP/HTTP and become turns.

A command-adapter agent (a real subprocess) and a python-adapter callable start real
OpenTelemetry SDK spans under the turn's `TRACEPARENT` and export them with the SDK over HTTP —
protobuf (the SDK's OTLP/HTTP exporter) and JSON (the SDK's own OTLP encoder, posted as OTLP
JSON) — to NiceEval's receiver. Their tools write their own log; the stored tool calls equal it,
four attempts in flight at once never mix, and an agent that dies before its root span ended
leaves the tool assertions `unavailable (trace-incomplete)`."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.project import Project

EXPORTERS = """
import base64, json, os, urllib.request

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class JsonExporter(SpanExporter):
    \"\"\"OTLP/HTTP with the JSON encoding: the SDK's own OTLP encoder, ids in hex as OTLP JSON says.\"\"\"

    def export(self, spans):
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        body = MessageToDict(encode_spans(spans))
        for resource in body.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if span.get(key):
                            span[key] = base64.b64decode(span[key]).hex()
        request = urllib.request.Request(os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces",
                                         data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).read()
        return SpanExportResult.SUCCESS

    def shutdown(self):
        return None


def exporter(kind):
    if kind == "json":
        return JsonExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # endpoint and protocol from the environment NiceEval set


def log(entry):
    with open(os.environ["TOOL_LOG"], "a") as out:
        out.write(json.dumps(entry) + "\\n")


def work(tracer, message, who):
    with tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}):
        with tracer.start_as_current_span("chat", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "m-1",
                "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 3}):
            pass
        args, result = {"message": message, "order": 7, "who": who}, {"found": True}
        with tracer.start_as_current_span("execute_tool lookup", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": json.dumps(args),
                "gen_ai.tool.call.result": json.dumps(result)}):
            log({"message": message, "name": "lookup", "input": args, "output": result})
        with tracer.start_as_current_span("refund", attributes={
                "openinference.span.kind": "TOOL", "tool.name": "refund", "input.value": json.dumps(args),
                "output.value": json.dumps("ok")}):
            log({"message": message, "name": "refund", "input": args, "output": "ok"})
        if os.environ.get("DIE_EARLY"):
            os._exit(0)  # the root span never ends: its trace cannot be complete
"""

AGENT = """
import os, sys

from opentelemetry import propagate
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

from exporters import exporter, work

kind = sys.argv[1]
provider = TracerProvider()
processor = SimpleSpanProcessor if os.environ.get("DIE_EARLY") else BatchSpanProcessor
provider.add_span_processor(processor(exporter(kind)))
message = sys.stdin.read()
parent = propagate.extract({"traceparent": os.environ["TRACEPARENT"]})  # the turn's trace
from opentelemetry import context
token = context.attach(parent)
work(provider.get_tracer("agent"), message, "agent-" + kind)
context.detach(token)
provider.shutdown()  # flushes the batch before the process exits
print("refunded " + message)
"""

APP = """
import threading

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from exporters import exporter, work

_LOCK = threading.Lock()
_PROVIDERS = {}


def _tracer(kind):
    with _LOCK:  # made on first use: the receiver's address is in the environment by then
        if kind not in _PROVIDERS:
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(exporter(kind)))
            _PROVIDERS[kind] = provider
        return _PROVIDERS[kind].get_tracer("app")


def protobuf(message):
    work(_tracer("protobuf"), message, "app-protobuf")  # the turn's trace is the current context
    return "refunded " + message


def json_agent(message):
    work(_tracer("json"), message, "app-json")
    return "refunded " + message
"""

EVAL = """
from niceeval_cli import define_eval


@define_eval(cases=["a", "b", "c", "d"])
async def refund(t, case):
    turn = await t.send(case)
    turn.called_tool("lookup").label("looked up")
    turn.not_called_tool("delete").label("never deleted")
"""


def _command(name: str, kind: str, extra: str = "") -> str:
    argv = json.dumps([sys.executable, "agent.py", kind])
    return (f'\n[experiments.{name}]\nadapter = "command"\ntraces = "otlp"\nmax_concurrency = 4\n{extra}'
            f'[experiments.{name}.options]\nargv = {argv}\n')


def _python(name: str, callable_: str) -> str:
    return (f'\n[experiments.{name}]\nadapter = "python"\ntraces = "otlp"\nmax_concurrency = 4\n'
            f'[experiments.{name}.options]\ncallable = "app:{callable_}"\n')


def _project(proj: Project, experiments: str) -> None:
    proj.write("exporters.py", EXPORTERS)
    proj.write("agent.py", AGENT)
    proj.write("app.py", APP)
    proj.write("evals/refund.py", EVAL)
    proj.write("niceeval.toml", "[project]\n" + experiments)


@pytest.mark.slow
def test_spans_exported_over_otlp_are_the_turns_tool_calls(proj: Project, tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    experiments = {"cmdproto": "agent-protobuf", "cmdjson": "agent-json", "pyproto": "app-protobuf",
                   "pyjson": "app-json"}
    _project(proj, _command("cmdproto", "protobuf") + _command("cmdjson", "json")
             + _python("pyproto", "protobuf") + _python("pyjson", "json_agent"))
    log_file = tmp_path / "tools.ndjson"

    result = proj.run(env={"TOOL_LOG": str(log_file), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/x"})

    assert result.returncode == 0, result.stdout + result.stderr
    logged = [json.loads(line) for line in log_file.read_text().splitlines()]
    rows = proj.sql(
        "SELECT a.experiment_id, a.case_value, e.name, e.input, e.output, e.status FROM events e "
        "JOIN attempts a ON a.id = e.attempt_id WHERE e.kind = 'tool_call' ORDER BY a.id, e.seq")
    assert len(rows) == len(logged) == 4 * 4 * 2
    for experiment, who in experiments.items():
        for case in "abcd":
            # each attempt holds exactly the calls its own process logged, in span start order
            stored = [[r["name"], json.loads(r["input"]), json.loads(r["output"]), r["status"]] for r in rows
                      if r["experiment_id"] == experiment and json.loads(r["case_value"]) == case]
            expected = [[e["name"], e["input"], e["output"], "completed"] for e in logged
                        if e["message"] == case and e["input"]["who"] == who]
            assert len(expected) == 2 and stored == expected, (experiment, case, stored)
    turns = proj.sql("SELECT observed, input_tokens, output_tokens FROM turns")
    assert len(turns) == 16 and {(t["input_tokens"], t["output_tokens"]) for t in turns} == {(10, 3)}
    assert all("tool_calls" in t["observed"] for t in turns)
    assert proj.sql("SELECT count(*) AS n FROM events WHERE kind = 'span'")[0]["n"] == 16 * 4
    traces = proj.sql("SELECT input FROM events WHERE kind = 'trace'")
    trace_ids = [json.loads(t["input"])["trace_id"] for t in traces]
    assert len(set(trace_ids)) == 16  # one trace id per turn
    assert {s["state"] for s in proj.sql("SELECT DISTINCT state FROM assertion_results")} == {"matched"}


@pytest.mark.slow
def test_an_agent_dying_before_its_root_span_ended_leaves_the_trace_incomplete(proj: Project, tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    _project(proj, _command("dies", "protobuf", "trace_flush_ms = 300\n"))

    result = proj.run(env={"TOOL_LOG": str(tmp_path / "tools.ndjson"), "DIE_EARLY": "1"})

    assert result.returncode == 5, result.stdout + result.stderr
    rows = proj.sql("SELECT DISTINCT label, state, reason FROM assertion_results ORDER BY label")
    # a call that arrived decides `called_tool`; "never called" cannot be proved from a partial trace
    assert [(r["label"], r["state"], r["reason"]) for r in rows] == [
        ("looked up", "matched", None), ("never deleted", "unavailable", "trace-incomplete")]
    # what did arrive is kept: the two tool spans, stored as spans and as (unproven-complete) tool calls
    assert proj.sql("SELECT count(*) AS n FROM events WHERE kind = 'tool_call'")[0]["n"] == 8
    traces = proj.sql("SELECT input FROM events WHERE kind = 'trace'")
    problems = {json.loads(r["input"]).get("problem") for r in traces}
    assert problems == {"the trace's root span did not arrive within trace_flush_ms=300 after the turn"}


class _EchoTraceparent(BaseHTTPRequestHandler):
    """An HTTP system under test that answers with the `traceparent` header it received."""

    def log_message(self, *args: object) -> None:
        return None

    def do_OPTIONS(self) -> None:
        self.send_response(204)
        self.end_headers()

    def do_GET(self) -> None:  # the openai-chat preflight lists the models
        self._json({"object": "list", "data": [{"id": "m-1", "object": "model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        said = self.headers.get("traceparent") or ""
        if self.path.endswith("/chat/completions"):
            self._json({"id": "c1", "object": "chat.completion", "model": "m-1", "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": said}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
        else:
            self._json({"output": said})

    def _json(self, value: object) -> None:
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ["http", "openai-chat"])
def test_the_http_adapters_send_each_turn_its_traceparent(project: Project, adapter: str) -> None:
    pytest.importorskip("opentelemetry.proto")
    proj = project  # the CLI in process: the system under test is this loopback server, not a process
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoTraceparent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        proj.write("evals/echo.py", "from niceeval_cli import define_eval\n\n@define_eval(attempts=3)\n"
                                    "async def echo(t):\n    await t.send('hi')\n")
        base = f"http://127.0.0.1:{server.server_port}"
        options = (f'url = "{base}/chat"\nresponse_path = "output"\n' if adapter == "http"
                   else f'base_url = "{base}/v1"\napi_key_env = "SUT_KEY"\n')
        proj.write("niceeval.toml", f'[experiments.web]\nadapter = "{adapter}"\nmodel = "m-1"\ntraces = "otlp"\n'
                                    f'trace_flush_ms = 50\n[experiments.web.options]\n{options}')
        result = proj.run(env={"SUT_KEY": "offline"})
    finally:
        server.shutdown()
        server.server_close()

    assert result.returncode == 0, result.stdout + result.stderr
    turns = proj.sql("SELECT t.message, e.input FROM turns t JOIN events e ON e.attempt_id = t.attempt_id "
                     "AND e.turn_ordinal = t.ordinal AND e.kind = 'trace'")
    assert len(turns) == 3
    for turn in turns:  # the header carries the very trace id the turn's spans are attributed by
        version, trace_id, parent, flags = turn["message"].split("-")
        assert (version, len(parent), flags) == ("00", 16, "01")
        assert trace_id == json.loads(turn["input"])["trace_id"]
    assert len({t["message"] for t in turns}) == 3
