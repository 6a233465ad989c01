"""`traces = "otlp"`: each turn owns a fresh trace id; its spans arrive at the receiver over OTLP/HTTP.

While the send runs, the turn's `TurnTrace` is current (`_propagation.py`): the command adapter
hands its process `OTEL_EXPORTER_OTLP_*` and `TRACEPARENT`, the http adapters a `traceparent`
header, and code running in this process (a python adapter's callable) finds the turn's trace as
the current OpenTelemetry context (a remote parent), so the spans it starts join the trace.

Complete (tool calls observed) when, within `trace_flush_ms` after the send returned, a root span
of the trace arrived (its parent is the traceparent's span, or none), every arrived span's parent
arrived too (a missing parent is a lost span), none was dropped (over `MAX_SPANS`), and the
receiver refused no trace export request meanwhile (it cannot tell whose spans a refused one held:
a lost tool span under a root that arrived would otherwise pass `not_called_tool`).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterable
from contextvars import Token

from opentelemetry import context as otel_context
from opentelemetry import trace

from ..authoring import Turn
from ._merge import MAX_SPANS, merge_trace
from ._otlp_decode import span_data
from ._propagation import _CURRENT, TurnTrace
from ._receiver import Received, Receiver, receiver
from ._spans import SpanData


class _Spans:
    """What arrived for one trace (filled from the receiver's threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: list[Received] = []
        self.dropped = 0
        self._ids: set[str] = set()

    def add(self, spans: list[Received]) -> None:
        with self.lock:
            new: list[Received] = []
            for span in spans:  # a span id names one span of the trace: a retried export sends it again
                if not span.span_id:  # no id to tell it by (not valid OTLP): kept, never merged with another
                    new.append(span)
                elif span.span_id not in self._ids:
                    self._ids.add(span.span_id)
                    new.append(span)
            spans = new
            room = MAX_SPANS - len(self.spans)
            self.spans.extend(spans[:max(room, 0)])
            self.dropped += max(len(spans) - max(room, 0), 0)


def _problem(spans: list[Received], dropped: int, parent_id: str) -> str | None:
    """Why the trace is not complete yet (None: it is)."""
    if dropped:
        return f"{dropped} span(s) dropped (more than {MAX_SPANS} in one turn)"
    if not spans:
        return "no span of the turn's trace arrived"
    known = {s.span_id for s in spans} | {parent_id}
    if not any(s.parent_span_id in (None, parent_id) for s in spans):
        return "the trace's root span did not arrive"
    lost = {s.parent_span_id for s in spans if s.parent_span_id is not None and s.parent_span_id not in known}
    if lost:
        return f"{len(lost)} parent span(s) of arrived spans never arrived"
    return None


def _read_all(spans: list[Received]) -> list[SpanData]:
    return [span_data(s) for s in spans]


class OtlpCapture:
    """One turn's trace: registered with the receiver around the send, then merged into the turn."""

    def __init__(self, receiver: Receiver, flush_ms: int) -> None:
        self._receiver = receiver
        self._flush_ms = flush_ms
        self.trace = TurnTrace(os.urandom(16).hex(), os.urandom(8).hex(), receiver.endpoint)
        self._spans = _Spans()
        self._token: Token[TurnTrace | None] | None = None
        self._otel_token: object | None = None
        self._refused_before = receiver.refused
        receiver.register(self.trace.trace_id, self._spans.add)

    def __enter__(self) -> OtlpCapture:
        self._token = _CURRENT.set(self.trace)
        parent = trace.NonRecordingSpan(trace.SpanContext(
            trace_id=int(self.trace.trace_id, 16), span_id=int(self.trace.parent_span_id, 16), is_remote=True,
            trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED)))
        self._otel_token = otel_context.attach(trace.set_span_in_context(parent))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._otel_token is not None:
            otel_context.detach(self._otel_token)  # type: ignore[arg-type]
            self._otel_token = None
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None
        if exc[0] is not None:
            self._receiver.unregister(self.trace.trace_id)

    async def finish(self, turn: Turn, declared: Iterable[str]) -> Turn:
        """Wait (up to the flush time) until the trace is complete, then merge what arrived."""
        trace_id, parent_id = self.trace.trace_id, self.trace.parent_span_id
        deadline = time.monotonic() + self._flush_ms / 1000
        try:
            while True:
                with self._spans.lock:
                    spans, dropped = list(self._spans.spans), self._spans.dropped
                problem = _problem(spans, dropped, parent_id)
                if problem is None or dropped or time.monotonic() >= deadline:
                    break
                await asyncio.sleep(0.005)
        finally:  # cancelled while waiting (a timeout, Ctrl-C): the receiver lets go of the trace all the same
            self._receiver.unregister(trace_id)
        if problem is not None and not dropped:
            problem = f"{problem} within trace_flush_ms={self._flush_ms} after the turn"
        refused = self._receiver.refused - self._refused_before
        if problem is None and refused:
            problem = (f"the receiver refused {refused} trace export request(s) while the turn ran "
                       "(their spans may be the turn's)")
        if len(spans) > 200:  # reading thousands of spans' attributes takes a while: off the event loop
            read = await asyncio.to_thread(_read_all, spans)
        else:
            read = _read_all(spans)
        return merge_trace(turn, declared, read, problem, trace_id)


class OtlpTracer:
    """`traces = "otlp"` of one experiment: a capture (and a fresh trace id) per turn."""

    def __init__(self, flush_ms: int) -> None:
        self._receiver = receiver()
        self._flush_ms = flush_ms

    def begin(self) -> OtlpCapture:
        return OtlpCapture(self._receiver, self._flush_ms)


__all__ = ["OtlpCapture", "OtlpTracer"]
