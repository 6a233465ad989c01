"""`traces = "otel"`: a span processor on the global tracer provider, spans attributed by context.

The processor is attached once per process (to the global SDK `TracerProvider`, made and set when
none is). A turn's capture sets a context variable while the adapter's `send` runs; the span
processor's `on_start` runs in the context of the code starting the span, so a span started in
that send — in its task, its awaits, or a worker thread started with `asyncio.to_thread` (which
copies the context) — belongs to that turn, and two attempts in flight never mix. Spans started
elsewhere are not looked at.

Complete (tool calls observed) when at least one span was started in the turn, every one of them
ended by the flush deadline, and none was dropped (more than `MAX_SPANS` in one turn).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable
from contextvars import ContextVar, Token
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.trace import StatusCode

from .._errors import NiceEvalError
from ..authoring import Turn
from ._merge import MAX_SPANS, merge_trace
from ._spans import SpanData

_CURRENT: ContextVar[_Collector | None] = ContextVar("niceeval_otel_turn", default=None)


def plain(value: Any) -> Any:
    """An attribute value as JSON data (the SDK keeps sequences as tuples)."""
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def span_data(span: ReadableSpan) -> SpanData:
    context = span.context
    parent = span.parent
    status = span.status
    return SpanData(
        name=span.name,
        trace_id=format(context.trace_id, "032x") if context is not None else "",
        span_id=format(context.span_id, "016x") if context is not None else "",
        parent_span_id=format(parent.span_id, "016x") if parent is not None else None,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or span.start_time or 0,
        error=status.status_code is StatusCode.ERROR,
        status_message=status.description or None,
        attributes={k: plain(v) for k, v in (span.attributes or {}).items()},
    )


def _key(span: ReadableSpan) -> tuple[int, int]:
    """A span's identity (`on_end` gets a fresh ReadableSpan, not the object `on_start` saw)."""
    context = span.context
    return (context.trace_id, context.span_id) if context is not None else (0, 0)


class _Collector:
    """The spans of one turn: started, ended, dropped (touched from any thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: set[tuple[int, int]] = set()
        self.ended: list[SpanData] = []
        self.dropped = 0
        self.started = 0
        self.closed = False


class _TurnProcessor(SpanProcessor):
    """Hands each span started in a turn's context to that turn's collector."""

    def __init__(self) -> None:
        self._owners: dict[tuple[int, int], _Collector] = {}
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        collector = _CURRENT.get()
        if collector is None or span.context is None:
            return
        key = (span.context.trace_id, span.context.span_id)
        with collector.lock:
            if collector.closed:
                return
            collector.started += 1
            if collector.started > MAX_SPANS:
                collector.dropped += 1
                return
            collector.open.add(key)
        with self._lock:
            self._owners[key] = collector

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            collector = self._owners.pop(_key(span), None)
        if collector is None:
            return
        data = span_data(span)
        with collector.lock:
            if collector.closed:
                return
            collector.open.discard(_key(span))
            collector.ended.append(data)

    def forget(self, collector: _Collector) -> None:
        with self._lock:
            for key in [k for k, c in self._owners.items() if c is collector]:
                del self._owners[key]

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class InProcessCapture:
    """One turn's capture: a context manager around the send, then `finish` merges the spans."""

    def __init__(self, processor: _TurnProcessor, flush_ms: int) -> None:
        self._processor = processor
        self._flush_ms = flush_ms
        self._collector = _Collector()
        self._token: Token[_Collector | None] | None = None

    def __enter__(self) -> InProcessCapture:
        self._token = _CURRENT.set(self._collector)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None
        if exc[0] is not None:
            self._close()

    def _close(self) -> None:
        with self._collector.lock:
            self._collector.closed = True
        self._processor.forget(self._collector)

    async def finish(self, turn: Turn, declared: Iterable[str]) -> Turn:
        """Wait (up to the flush time) for spans still open, then merge what arrived."""
        collector = self._collector
        deadline = time.monotonic() + self._flush_ms / 1000
        while collector.open and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        with collector.lock:
            collector.closed = True
            spans = list(collector.ended)
            still_open, dropped, started = len(collector.open), collector.dropped, collector.started
        self._processor.forget(collector)
        problem = None
        if started == 0:
            problem = "no span was started during the turn"
        elif still_open:
            problem = f"{still_open} span(s) had not ended {self._flush_ms} ms after the turn"
        elif dropped:
            problem = f"{dropped} span(s) dropped (more than {MAX_SPANS} in one turn)"
        trace_id = spans[0].trace_id if spans else None
        return merge_trace(turn, declared, spans, problem, trace_id)


class InProcessTracer:
    """`traces = "otel"` of one experiment: a capture per turn."""

    def __init__(self, flush_ms: int) -> None:
        self._processor = _processor()
        self._flush_ms = flush_ms

    def begin(self) -> InProcessCapture:
        return InProcessCapture(self._processor, self._flush_ms)


_PROCESSOR: _TurnProcessor | None = None
_ATTACH_LOCK = threading.Lock()


def _processor() -> _TurnProcessor:
    """The process's one turn processor, attached to the global SDK tracer provider."""
    global _PROCESSOR
    with _ATTACH_LOCK:
        if _PROCESSOR is not None:
            return _PROCESSOR
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            if type(provider).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider"):
                raise NiceEvalError(
                    f'traces = "otel" needs the OpenTelemetry SDK\'s TracerProvider as the global tracer '
                    f"provider, but {type(provider).__module__}.{type(provider).__name__} is set; set an "
                    "opentelemetry.sdk.trace.TracerProvider (or none, and NiceEval makes one)",
                )
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
            current = trace.get_tracer_provider()
            if not isinstance(current, TracerProvider):  # another provider was set first: attach to it
                raise NiceEvalError("the global tracer provider could not be set")
            provider = current
        processor = _TurnProcessor()
        provider.add_span_processor(processor)
        _PROCESSOR = processor
        return processor


__all__ = ["InProcessTracer", "span_data"]
