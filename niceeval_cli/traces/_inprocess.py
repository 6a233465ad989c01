"""`traces = "otel"`: a span processor on the global tracer provider, spans attributed by context.

The processor is attached once per process (to the global SDK `TracerProvider`, made and set when
none is). A turn's capture sets a context variable while the adapter's `send` runs; the span
processor's `on_start` runs in the context of the code starting the span, so a span started in
that send — in its task, its awaits, or a worker thread started with `asyncio.to_thread` (which
copies the context) — belongs to that turn, and two attempts in flight never mix. A span started
elsewhere belongs to a turn still open whose spans share its trace id (a thread pool that carries
OpenTelemetry's context only); any other is not looked at.

The processor only keeps a reference to each span the turn starts (the SDK's own `Span`, which
holds its end time, status and attributes once ended); `on_end` does nothing. When the turn
finishes, the spans that ended are read once, in one pass, through the SDK's `ReadableSpan`
properties. Per span that is one list append while the agent runs, instead of two locks, a dict
of owners and a conversion on the agent's own path (benchmarks/README.md, issue 27 item 8).

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
_ERROR = StatusCode.ERROR


def plain(value: Any) -> Any:
    """An attribute value as JSON data (the SDK keeps sequences as tuples)."""
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    """The span's attributes as plain data: one copy of the SDK's mapping (`mappingproxy.copy`,
    which copies the dict under it in one go; reading it item by item goes through Python
    methods), then sequences made lists where there are any."""
    attributes = span.attributes
    if attributes is None:
        return {}
    copy = getattr(attributes, "copy", None)
    copied = copy() if copy is not None else None
    out: dict[str, Any] = copied if type(copied) is dict else dict(attributes)
    for key, value in out.items():
        if isinstance(value, (tuple, list)):
            out[key] = plain(value)
    return out


class _Hex:
    """Ids written as hex once per turn: its spans share a trace id, and a parent is another span."""

    __slots__ = ("spans", "traces")

    def __init__(self) -> None:
        self.traces: dict[int, str] = {}
        self.spans: dict[int, str] = {}

    def trace(self, trace_id: int) -> str:
        text = self.traces.get(trace_id)
        if text is None:
            text = self.traces[trace_id] = format(trace_id, "032x")
        return text

    def span(self, span_id: int) -> str:
        text = self.spans.get(span_id)
        if text is None:
            text = self.spans[span_id] = format(span_id, "016x")
        return text


def span_data(span: ReadableSpan, hexes: _Hex | None = None) -> SpanData:
    """An ended SDK span in the plain form both trace sources share."""
    hexed = hexes if hexes is not None else _Hex()
    context = span.context
    parent = span.parent
    status = span.status
    start = span.start_time or 0
    return SpanData(
        span.name,
        hexed.trace(context.trace_id) if context is not None else "",
        hexed.span(context.span_id) if context is not None else "",
        hexed.span(parent.span_id) if parent is not None else None,
        start,
        span.end_time or start,
        status.status_code is _ERROR,
        status.description or None,
        _attributes(span),
    )


class _Collector:
    """The spans one turn started, in start order (appended from any thread; read at the end)."""

    __slots__ = ("closed", "dropped", "lock", "spans", "traces")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: list[ReadableSpan] = []
        self.dropped = 0
        self.closed = False
        self.traces: set[int] = set()  # the trace ids of its spans, registered in _BY_TRACE

    def take(self, span: ReadableSpan) -> None:
        with self.lock:
            if self.closed:
                return
            if len(self.spans) >= MAX_SPANS:
                self.dropped += 1
                return
            self.spans.append(span)
            context = span.context
            if context is not None and context.trace_id not in self.traces:  # a new trace: once per trace
                self.traces.add(context.trace_id)
                _BY_TRACE[context.trace_id] = self

    def close(self) -> tuple[list[ReadableSpan], int]:
        """No more spans join: the ones taken (in start order) and how many were dropped. The
        collector lets go of them (a thread that copied the turn's context may outlive it)."""
        with self.lock:
            self.closed = True
            for trace_id in self.traces:
                if _BY_TRACE.get(trace_id) is self:
                    del _BY_TRACE[trace_id]
            spans, self.spans = self.spans, []
            return spans, self.dropped


#: Trace id → the open turn whose spans carry it. A thread that carries only OpenTelemetry's
#: context (a pool whose tasks attach it, as `opentelemetry-instrumentation-threading` does) starts
#: its spans inside the turn's trace without the turn's context variable: they were left out while
#: the trace read complete, and `not_called_tool` passed over a tool that ran there.
_BY_TRACE: dict[int, _Collector] = {}


def _open(spans: list[ReadableSpan]) -> bool:
    return any(span.end_time is None for span in spans)


class _TurnProcessor(SpanProcessor):
    """Hands each span started in a turn's context to that turn's collector."""

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        collector = _CURRENT.get()
        if collector is None:
            if not _BY_TRACE:
                return
            context = span.context  # started outside any turn's context: in an open turn's trace?
            collector = _BY_TRACE.get(context.trace_id) if context is not None else None
            if collector is None:
                return
        collector.take(span)

    def on_end(self, span: ReadableSpan) -> None:
        return None  # the turn holds the span since it started; it reads it when it finishes

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
        self._collector.close()

    async def finish(self, turn: Turn, declared: Iterable[str]) -> Turn:
        """Wait (up to the flush time) for spans still open, then read the ended ones and merge them."""
        collector = self._collector
        deadline = time.monotonic() + self._flush_ms / 1000
        try:
            while _open(collector.spans) and time.monotonic() < deadline:
                await asyncio.sleep(0.005)
        finally:  # cancelled while waiting (a timeout, Ctrl-C): its trace ids leave _BY_TRACE all the same
            started, dropped = collector.close()
        ended = [span for span in started if span.end_time is not None]
        still_open = len(started) - len(ended)
        ended.sort(key=_end_time)  # the order they ended in (the trace id is the first one's)
        hexes = _Hex()
        spans = [span_data(span, hexes) for span in ended]
        problem = None
        if not started and not dropped:
            problem = "no span was started during the turn"
        elif still_open:
            problem = f"{still_open} span(s) had not ended {self._flush_ms} ms after the turn"
        elif dropped:
            problem = f"{dropped} span(s) dropped (more than {MAX_SPANS} in one turn)"
        trace_id = spans[0].trace_id if spans else None
        return merge_trace(turn, declared, spans, problem, trace_id)


def _end_time(span: ReadableSpan) -> int:
    return span.end_time or 0


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
