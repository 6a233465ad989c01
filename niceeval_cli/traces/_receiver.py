"""The OTLP/HTTP receiver of `traces = "otlp"`: `POST /v1/traces` on 127.0.0.1, one per process.

Why the standard library's `ThreadingHTTPServer` on its own thread: the receiver must answer
while the run's event loop is busy (or blocked in a plain-`def` test), live as long as the process
that runs attempts (one per Ray worker too), and the fixed dependencies reserve starlette + uvicorn
for `niceeval review`. OTLP exporters send few, large requests (a batch is hundreds of spans), so
a thread per connection is plenty (benchmarks/otlp.py measures it).

Spans are handed to the turn that registered their trace id; spans of an unknown trace (a turn
already finished, or not ours) are counted and dropped.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import zlib
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._otlp_decode import BadRequest, RawSpan, decode_json, decode_protobuf
from ._propagation import TurnTrace
from ._spans import SpanData

_EXPORTER_ENV = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                 "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
Received = RawSpan | SpanData  # a protobuf span is read whole only when its turn finishes
MAX_BODY = 64 * 1024 * 1024  # one export request; larger ones are refused (413)
IN_FLIGHT = 2 * MAX_BODY  # request bytes read or decoded at once (≥ a compressed request's 2 * MAX_BODY)
ROOM_WAIT_SECONDS = 5  # how long a request waits for room among IN_FLIGHT before a 503
STALL_SECONDS = 30  # a connection silent this long (mid-body, or idle between requests) is closed


class Receiver:
    """Routes arriving spans by trace id to the sink each turn registered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sinks: dict[str, Callable[[list[Received]], None]] = {}
        self.unattributed = 0
        self.received = 0
        #: trace export requests refused or cut off: whose spans they held cannot be known, so a
        #: turn open meanwhile cannot call its trace complete (`OtlpCapture.finish`)
        self.refused = 0
        self._in_flight = 0
        self._room = threading.Condition(self._lock)
        receiver = self

        class Handler(_Handler):
            owner = receiver

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="niceeval-otlp-receiver", daemon=True)
        self._thread.start()

    def register(self, trace_id: str, sink: Callable[[list[Received]], None]) -> None:
        with self._lock:
            self._sinks[trace_id] = sink

    def unregister(self, trace_id: str) -> None:
        with self._lock:
            self._sinks.pop(trace_id, None)

    def reserve(self, size: int) -> bool:
        """Room for one request's body, waiting a little for it (False: none came). A thread per
        connection reads and decodes each body whole, so without this many large uploads at once
        held the sum of their sizes in memory, and a decoded body is 15 to 30 times its size."""
        with self._room:
            if not self._room.wait_for(lambda: self._in_flight + size <= IN_FLIGHT, ROOM_WAIT_SECONDS):
                return False
            self._in_flight += size
            return True

    def release(self, size: int) -> None:
        with self._room:
            self._in_flight -= size
            self._room.notify_all()

    def note_refused(self) -> None:
        with self._lock:
            self.refused += 1

    def deliver(self, spans: Sequence[Received]) -> None:
        by_trace: dict[str, list[Received]] = {}
        for span in spans:
            by_trace.setdefault(span.trace_id, []).append(span)
        with self._lock:
            self.received += len(spans)
            routed = [(self._sinks.get(trace_id), group) for trace_id, group in by_trace.items()]
        for sink, group in routed:
            if sink is None:
                with self._lock:
                    self.unattributed += len(group)
            else:
                sink(group)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """An exporter that hangs up mid-request (killed by the attempt's timeout, or hostile) is
        its own business: the standard server printed a traceback over the run's output."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


#: zlib's window bits for the encodings an exporter may send: gzip, and deflate as zlib data.
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def _inflated(body: bytes, wbits: int) -> bytes | None:
    """`body` decompressed, or None past MAX_BODY: a small compressed request can stand for
    gigabytes (a decompression bomb), so the output is bounded, not only the input."""
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(body, MAX_BODY + 1)
    if len(out) > MAX_BODY or inflater.unconsumed_tail:
        return None
    if not inflater.eof:
        raise EOFError("the compressed body ends before its end-of-stream marker")
    return out


class _Handler(BaseHTTPRequestHandler):
    owner: Receiver
    protocol_version = "HTTP/1.1"  # keep-alive: an exporter reuses its connection
    timeout = STALL_SECONDS  # a stalled upload would hold its thread and its reserved bytes forever

    def log_message(self, format: str, *args: Any) -> None:
        return None  # a receiver that prints would scribble over the run's progress

    def _reply(self, code: int, body: bytes, content_type: str, retry_after: str | None = None) -> None:
        if code != 200 and self.path.split("?", 1)[0] == "/v1/traces":
            self.owner.note_refused()
        self.send_response(code)
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        if self.headers.get("Transfer-Encoding"):  # chunked: answering 200 would drop the body unread
            self.close_connection = True
            self._reply(411, b"send the export with a Content-Length: chunked bodies are not read", "text/plain")
            return
        declared = (self.headers.get("Content-Length") or "0").strip()
        if not declared.isdigit():  # negative or not a number: `read(-1)` would read to the end of the stream
            self.close_connection = True
            self._reply(400, b"Content-Length is not a whole number of bytes", "text/plain")
            return
        length = int(declared)
        if length > MAX_BODY:
            self.close_connection = True
            self._reply(413, b"request too large", "text/plain")
            return
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity" and encoding not in _WBITS:  # read as protobuf it was "Wire format was corrupt"
            self.close_connection = True
            self._reply(415, f"Content-Encoding {encoding[:40]!r} is not read: send gzip, deflate or none".encode(),
                        "text/plain")
            return
        compressed = encoding in _WBITS
        room = length + MAX_BODY if compressed else length  # a compressed body may inflate to MAX_BODY
        if not self.owner.reserve(room):  # OTLP exporters retry a 503 after its Retry-After
            self.close_connection = True
            self._reply(503, b"too many large requests at once", "text/plain", retry_after="1")
            return
        try:
            self._serve(path, length, encoding)
        except OSError:  # cut off mid-request (a reset, a stall): its spans are lost
            if path == "/v1/traces":
                self.owner.note_refused()
            raise
        finally:
            self.owner.release(room)

    def _serve(self, path: str, length: int, encoding: str) -> None:
        body = self.rfile.read(length) if length else b""
        if path != "/v1/traces":
            self._reply(404, b"only /v1/traces is served", "text/plain")
            return
        is_json = "json" in (self.headers.get("Content-Type") or "").lower()
        try:
            if encoding in _WBITS:
                inflated = _inflated(body, _WBITS[encoding])
                if inflated is None:
                    self._reply(413, b"request too large once decompressed", "text/plain")
                    return
                body = inflated
            spans: Sequence[Received] = decode_json(body) if is_json else decode_protobuf(body)
        except (BadRequest, OSError, zlib.error, EOFError) as exc:
            self._reply(400, str(exc).encode("utf-8", "replace"), "text/plain")
            return
        self.owner.deliver(spans)
        if is_json:
            self._reply(200, b"{}", "application/json")
        else:  # an empty ExportTraceServiceResponse
            self._reply(200, b"", "application/x-protobuf")


_RECEIVER: Receiver | None = None
_START_LOCK = threading.Lock()


def receiver() -> Receiver:
    """This process's receiver, started on first use and stopped when the process exits.

    Its address also goes into this process's environment (`OTEL_EXPORTER_OTLP_*`, restored when
    it stops), so an exporter a python adapter's callable makes, or a process it starts, reaches
    it; the per-turn `TRACEPARENT` cannot be process-wide and is handed over per send instead."""
    global _RECEIVER
    with _START_LOCK:
        if _RECEIVER is None:
            started = Receiver()
            saved = {name: os.environ.get(name) for name in _EXPORTER_ENV}
            for name, value in TurnTrace("0" * 32, "0" * 16, started.endpoint).environment().items():
                if name in _EXPORTER_ENV:
                    os.environ[name] = value

            def stop() -> None:
                started.close()
                for name, value in saved.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value

            atexit.register(stop)
            _RECEIVER = started
        return _RECEIVER


__all__ = ["Received", "Receiver", "receiver"]
