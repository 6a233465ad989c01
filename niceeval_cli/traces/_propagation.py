"""The turn's trace as the system under test sees it: a W3C `traceparent` and the receiver's address.

While a turn's `send` runs under `traces = "otlp"`, `current_turn_trace()` says which trace id the
turn owns and where to export: the command adapter puts `environment()` into its process's
environment, the http and openai-chat adapters send `traceparent` as a header. Outside such a send
it is None. This module imports no OpenTelemetry: adapters read it on every send.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

PROTOCOL = "http/protobuf"  # what NiceEval asks exporters to speak (the receiver also takes JSON)


@dataclass(frozen=True, slots=True)
class TurnTrace:
    """One turn's trace: its id, the (never sent) parent span id the system's spans hang from, the receiver."""

    trace_id: str  # 32 hex digits
    parent_span_id: str  # 16 hex digits
    endpoint: str  # http://127.0.0.1:<port> (exporters append /v1/traces)

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.parent_span_id}-01"

    def environment(self) -> dict[str, str]:
        """What a process of the system under test gets: the OTLP exporter's settings and TRACEPARENT.

        The per-signal variables are set too, so a `..._TRACES_ENDPOINT` inherited from the
        shell cannot send the turn's spans elsewhere."""
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": PROTOCOL,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{self.endpoint}/v1/traces",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": PROTOCOL,
            "TRACEPARENT": self.traceparent,
        }

    def headers(self) -> dict[str, str]:
        """The W3C trace context header an HTTP system under test receives."""
        return {"traceparent": self.traceparent}


_CURRENT: ContextVar[TurnTrace | None] = ContextVar("niceeval_turn_trace", default=None)


def current_turn_trace() -> TurnTrace | None:
    """The trace of the turn whose `send` is running here (`traces = "otlp"`), else None."""
    return _CURRENT.get()


def with_traceparent(headers: dict[str, str]) -> dict[str, str]:
    """`headers` plus the running turn's `traceparent` (`traces = "otlp"`); `headers` itself otherwise."""
    trace = _CURRENT.get()
    if trace is None:
        return headers
    kept = {name: value for name, value in headers.items() if name.lower() != "traceparent"}
    return {**kept, **trace.headers()}


__all__ = ["PROTOCOL", "TurnTrace", "current_turn_trace", "with_traceparent"]
