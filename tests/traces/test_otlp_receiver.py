"""The OTLP/HTTP receiver: both encodings decode to the same spans, routed by trace id."""

from __future__ import annotations

import base64
import gzip
import json
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("opentelemetry.proto")

from niceeval_cli.traces._otlp_decode import BadRequest, decode_json, decode_protobuf, span_data
from niceeval_cli.traces._receiver import Receiver

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def _json_body(ids_in_base64: bool = False) -> dict:
    def ident(value: str) -> str:
        return base64.b64encode(bytes.fromhex(value)).decode() if ids_in_base64 else value

    return {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": ident(TRACE), "spanId": ident(SPAN), "name": "execute_tool lookup",
        "startTimeUnixNano": "1000000", "endTimeUnixNano": 3000000,
        "status": {"code": 2, "message": "boom"},
        "attributes": [
            {"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
            {"key": "n", "value": {"intValue": "7"}},
            {"key": "list", "value": {"arrayValue": {"values": [{"boolValue": True}, {"doubleValue": 0.5}]}}},
        ]}]}]}]}


def _protobuf_body() -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

    span = Span(trace_id=bytes.fromhex(TRACE), span_id=bytes.fromhex(SPAN), name="execute_tool lookup",
                start_time_unix_nano=1_000_000, end_time_unix_nano=3_000_000,
                status=Status(code=Status.STATUS_CODE_ERROR, message="boom"),
                attributes=[KeyValue(key="gen_ai.tool.name", value=AnyValue(string_value="lookup")),
                            KeyValue(key="n", value=AnyValue(int_value=7)),
                            KeyValue(key="list", value=AnyValue(array_value=ArrayValue(values=[
                                AnyValue(bool_value=True), AnyValue(double_value=0.5)])))])
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])])
    return request.SerializeToString()


def test_json_and_protobuf_bodies_decode_to_the_same_span() -> None:
    from_proto = [span_data(s) for s in decode_protobuf(_protobuf_body())]
    assert from_proto == decode_json(json.dumps(_json_body()).encode())
    assert from_proto == decode_json(json.dumps(_json_body(ids_in_base64=True)).encode())
    span = from_proto[0]
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TRACE, SPAN, None)
    assert (span.error, span.status_message, span.start_ns, span.end_ns) == (True, "boom", 1_000_000, 3_000_000)
    assert span.attributes == {"gen_ai.tool.name": "lookup", "n": 7, "list": [True, 0.5]}


def test_a_body_that_is_not_otlp_is_refused_with_the_reason() -> None:
    with pytest.raises(BadRequest, match="not an OTLP JSON"):
        decode_json(b"[1, 2]")
    with pytest.raises(BadRequest, match="not a 8-byte id"):
        decode_json(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": TRACE,
                                                                                "spanId": "xyz"}]}]}]}).encode())


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers), timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_the_receiver_hands_spans_to_the_turn_owning_their_trace_id() -> None:
    live = Receiver()  # not the process's own: that one also sets the exporter variables of this process
    got: list = []
    live.register(TRACE, got.extend)
    try:
        url = f"{live.endpoint}/v1/traces"
        assert _post(url, _protobuf_body(), {"Content-Type": "application/x-protobuf"}) == (200, b"")
        gz = gzip.compress(json.dumps(_json_body()).encode())
        assert _post(url, gz, {"Content-Type": "application/json", "Content-Encoding": "gzip"}) == (200, b"{}")
        assert _post(url, b"\xff\xfe", {"Content-Type": "application/x-protobuf"})[0] == 400
        assert _post(f"{live.endpoint}/v1/metrics", b"", {"Content-Type": "application/x-protobuf"})[0] == 404
    finally:
        live.unregister(TRACE)
    assert [span_data(s).name for s in got] == ["execute_tool lookup"] * 2
    try:
        _post(f"{live.endpoint}/v1/traces", _protobuf_body(), {"Content-Type": "application/x-protobuf"})
        assert live.unattributed == 1 and len(got) == 2  # no turn owns it any more
    finally:
        live.close()


def test_hostile_export_requests_are_refused_and_the_receiver_keeps_serving() -> None:
    """A decompression bomb (8 KB of gzip standing for 80 MB, past the 64 MiB bound) is refused
    without inflating it whole, and so is a Content-Length that is negative (read to the end of
    the stream, it let a client that never stops fill the memory) or not a number (a traceback
    over the run's output); the next honest export is still received."""
    import socket
    import zlib

    live = Receiver()
    try:
        url = f"{live.endpoint}/v1/traces"
        bomb = gzip.compress(b"\0" * (80 * 1024 * 1024))
        assert len(bomb) < 100 * 1024
        status, said = _post(url, bomb, {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})
        assert (status, said) == (413, b"request too large once decompressed")
        deflated = zlib.compress(b"\0" * (80 * 1024 * 1024))
        status, _ = _post(url, deflated, {"Content-Type": "application/x-protobuf", "Content-Encoding": "deflate"})
        assert status == 413

        host, port = live.endpoint.removeprefix("http://").split(":")
        for length in ("-1", "lots"):
            with socket.create_connection((host, int(port)), timeout=10) as raw:
                raw.sendall(f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode())
                answer = b""
                while chunk := raw.recv(4096):  # the receiver closes the connection after its answer
                    answer += chunk
            assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400"), answer
            assert b"Content-Length is not a whole number of bytes" in answer

        got: list = []
        live.register(TRACE, got.extend)
        status, _ = _post(url, gzip.compress(_protobuf_body()),
                          {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})
        assert status == 200
        assert [span_data(s).name for s in got] == ["execute_tool lookup"]
    finally:
        live.close()


def test_a_json_export_nested_past_the_parser_is_refused_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`[[[[…` 200 000 deep (or an attribute's arrayValue 100 000 deep): json's RecursionError is no
    ValueError — it escaped the handler, the standard library's server printed its traceback over
    the run's output and hung up without an answer."""
    live = Receiver()
    try:
        url = f"{live.endpoint}/v1/traces"
        span = ('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"%s","spanId":"%s","attributes":'
                '[{"key":"k","value":%s}]}]}]}]}')
        # Deep enough whatever the process's recursion limit (a test runner may have raised it)
        deep_value = '{"arrayValue":{"values":[' * 100_000 + '{"intValue":"1"}' + "]}}" * 100_000
        for body in (b"[" * 200_000 + b"]" * 200_000, (span % (TRACE, SPAN, deep_value)).encode()):
            status, said = _post(url, body, {"Content-Type": "application/json"})
            assert status == 400 and b"not an OTLP JSON trace request: RecursionError" in said, (status, said[:200])
    finally:
        live.close()
    assert "Traceback" not in capsys.readouterr().err


def test_text_nested_past_the_parser_stays_text_where_json_is_only_tried() -> None:
    """Tool arguments, span attributes and agent-CLI lines are parsed when they are JSON: text
    nested past the parser's depth is kept as text (or skipped, for a CLI's stream line), as any
    other text that is not JSON — never a RecursionError out of the turn."""
    from niceeval_cli.adapters._agent_cli import parse_lines
    from niceeval_cli.integrations._common import parsed
    from niceeval_cli.traces._spans import _json_or_text

    deep = "[" * 200_000 + "]" * 200_000
    assert parsed(deep) == deep
    assert _json_or_text(deep) == deep
    assert parse_lines([deep, '{"type": "result"}']) == [{"type": "result"}]


async def test_a_turn_cancelled_while_waiting_for_its_spans_lets_go_of_its_trace() -> None:
    """A turn whose wait for its spans was cancelled (the attempt's timeout, Ctrl-C) stayed
    registered: the receiver kept handing that trace's spans to a turn long gone, holding them for
    the rest of the run, and never counted them unattributed."""
    import asyncio

    from niceeval_cli import Turn
    from niceeval_cli.traces._otlp import OtlpCapture

    live = Receiver()
    try:
        capture = OtlpCapture(live, flush_ms=60_000)
        with capture:
            pass
        waiting = asyncio.ensure_future(capture.finish(Turn(input="hi", message="ok"), ()))
        await asyncio.sleep(0.05)  # waiting for a root span that never comes
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        trace_id = capture.trace.trace_id
        body = json.loads(json.dumps(_json_body()).replace(TRACE, trace_id))
        status, _ = await asyncio.to_thread(_post, f"{live.endpoint}/v1/traces", json.dumps(body).encode(),
                                            {"Content-Type": "application/json"})
        assert status == 200
        assert live.unattributed == 1  # no turn owns it any more
    finally:
        live.close()


def test_large_uploads_at_once_wait_for_room_and_stalled_ones_are_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bodies being read at once are bounded in bytes, whatever the number of connections:
    one that finds no room within the wait is told to retry (503, Retry-After); a connection that
    stalls mid-body is closed and gives its room back. Before, each connection read its body
    whole with no bound (16 uploads of 60 MB took a run to 900 MB) and a stalled one was kept
    forever."""
    import socket

    from niceeval_cli.traces import _receiver

    monkeypatch.setattr(_receiver, "IN_FLIGHT", 1_000_000, raising=False)
    monkeypatch.setattr(_receiver, "ROOM_WAIT_SECONDS", 0.2, raising=False)
    monkeypatch.setattr(_receiver._Handler, "timeout", 1.0)
    live = Receiver()
    host, port = live.endpoint.removeprefix("http://").split(":")

    def start_upload() -> socket.socket:
        raw = socket.create_connection((host, int(port)), timeout=10)
        raw.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Length: 600000\r\n\r\n" + b"\n" * 1000)
        return raw

    try:
        holding = start_upload()  # holds 600 KB of the 1 MB room, then stalls
        time.sleep(0.1)
        second = start_upload()
        answer = second.recv(4096)
        second.close()
        assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in answer, answer
        assert holding.recv(4096) == b""  # the stalled upload is cut after the stall time
        holding.close()
        got: list = []
        live.register(TRACE, got.extend)
        assert _post(f"{live.endpoint}/v1/traces", _protobuf_body(), {"Content-Type": "application/x-protobuf"}) \
            == (200, b"")
        assert [span_data(s).name for s in got] == ["execute_tool lookup"]
    finally:
        live.close()


def _raw(endpoint: str, request: bytes) -> bytes:
    """One request written by hand; the receiver's whole answer (it closes the connection)."""
    import socket

    host, port = endpoint.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(request)
        answer = b""
        while chunk := raw.recv(4096):
            answer += chunk
    return answer


def test_a_chunked_export_is_refused_not_acknowledged_unread() -> None:
    """Before, a chunked body (no Content-Length) was answered 200 without reading it: the
    exporter believed its spans delivered, and its chunks were then read as a bad request."""
    live = Receiver()
    got: list = []
    live.register(TRACE, got.extend)
    try:
        body = _protobuf_body()
        answer = _raw(live.endpoint, b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 411"), answer
        assert answer.endswith(b"send the export with a Content-Length: chunked bodies are not read")
        assert got == []
    finally:
        live.close()


def test_an_export_in_an_encoding_the_receiver_cannot_read_is_told_so() -> None:
    """Before, a zstd or brotli body was parsed as it came and refused as "Wire format was
    corrupt", pointing the user at their spans rather than at the exporter's compression."""
    live = Receiver()
    try:
        status, said = _post(f"{live.endpoint}/v1/traces", b"(\xb5/\xfd compressed",
                             {"Content-Type": "application/x-protobuf", "Content-Encoding": "zstd"})
        assert (status, said) == (415, b"Content-Encoding 'zstd' is not read: send gzip, deflate or none")
        status, _ = _post(f"{live.endpoint}/v1/traces", _protobuf_body(),
                          {"Content-Type": "application/x-protobuf", "Content-Encoding": "identity"})
        assert status == 200
    finally:
        live.close()


def test_spans_without_an_id_are_never_taken_for_one_another() -> None:
    """Spans are kept once per span id (a retried export sends them again); spans with no id at
    all must not collapse into one, or a second tool call would vanish."""
    from niceeval_cli.traces._otlp import _Spans
    from niceeval_cli.traces._spans import SpanData

    collected = _Spans()
    no_id = [SpanData(name=f"execute_tool t{i}", trace_id=TRACE, span_id="", parent_span_id=None,
                      start_ns=1, end_ns=2) for i in range(2)]
    with_id = SpanData(name="execute_tool lookup", trace_id=TRACE, span_id=SPAN, parent_span_id=None,
                       start_ns=1, end_ns=2)
    collected.add([*no_id, with_id])
    collected.add([with_id])
    assert [s.name for s in collected.spans] == ["execute_tool t0", "execute_tool t1", "execute_tool lookup"]
