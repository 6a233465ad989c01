"""The trace context of the turn being sent, for adapters that hand it to the system under test.

With `traces = "otlp"` (docs/integrations.md) each turn gets its own W3C trace id. The built-in
adapters read it here: the command adapter puts `TRACEPARENT` and the OTLP exporter variables in
the process environment, the http and openai-chat adapters send a `traceparent` header. A low
module (a context variable and plain text), so adapters need not know the tracing package.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnTraceContext:
    """What the system under test needs to put its spans into the turn's trace."""

    traceparent: str  # W3C: "00-<32 hex trace id>-<16 hex parent span id>-01"
    endpoint: str  # the OTLP/HTTP receiver's base URL ("http://127.0.0.1:PORT")
    protocol: str = "http/protobuf"

    def environment(self) -> dict[str, str]:
        """The variables a child process's OpenTelemetry SDK reads."""
        return {
            "TRACEPARENT": self.traceparent,
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": self.endpoint + "/v1/traces",
            "OTEL_EXPORTER_OTLP_PROTOCOL": self.protocol,
        }

    def headers(self) -> dict[str, str]:
        """The header an HTTP system under test continues the trace from."""
        return {"traceparent": self.traceparent}


_CURRENT: ContextVar[TurnTraceContext | None] = ContextVar("niceeval_turn_trace", default=None)


def current_turn_trace() -> TurnTraceContext | None:
    """The trace context of the turn this task is sending, or None (no `traces = "otlp"`)."""
    return _CURRENT.get()


def trace_environment() -> dict[str, str]:
    """The environment additions of the current turn (empty without one)."""
    trace = _CURRENT.get()
    return trace.environment() if trace is not None else {}


def trace_headers() -> dict[str, str]:
    """The request headers of the current turn (empty without one)."""
    trace = _CURRENT.get()
    return trace.headers() if trace is not None else {}


def set_turn_trace(trace: TurnTraceContext | None) -> object:
    """Make `trace` current for this task (and the threads it starts); returns the reset token."""
    return _CURRENT.set(trace)


def reset_turn_trace(token: object) -> None:
    _CURRENT.reset(token)  # type: ignore[arg-type]


__all__ = [
    "TurnTraceContext",
    "current_turn_trace",
    "reset_turn_trace",
    "set_turn_trace",
    "trace_environment",
    "trace_headers",
]
