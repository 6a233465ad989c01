"""Traces become turns (docs/integrations.md, "OpenTelemetry").

`[experiments.<id>] traces = "otel"` collects the spans each turn starts in this process;
`traces = "otlp"` receives them over OTLP/HTTP on 127.0.0.1, each turn owning a trace id. The
spans of a turn become its tool calls and usage, observed only when the trace arrived whole.

This package imports OpenTelemetry; nothing imports it unless an experiment sets `traces`
(`tracer_for` is the one door, called by the runner), so a run without traces never loads it;
`current_turn_trace` (no OpenTelemetry import) is what adapters read to hand the trace on.
"""

from __future__ import annotations

import threading
from typing import Any

from ._merge import TRACE_INCOMPLETE
from ._propagation import TurnTrace, current_turn_trace, with_traceparent

_TRACERS: dict[tuple[str, int], Any] = {}
_LOCK = threading.Lock()


def tracer_for(mode: str | None, flush_ms: int) -> Any:
    """The process's tracer for `traces = mode` (None without one): `.begin()` one capture per turn."""
    if mode is None:
        return None
    key = (mode, flush_ms)
    with _LOCK:
        tracer = _TRACERS.get(key)
        if tracer is None:
            if mode == "otel":
                from ._inprocess import InProcessTracer

                tracer = InProcessTracer(flush_ms)
            elif mode == "otlp":
                from ._otlp import OtlpTracer

                tracer = OtlpTracer(flush_ms)
            else:  # the configuration refuses any other mode
                raise ValueError(f"unknown traces mode {mode!r}")
            _TRACERS[key] = tracer
    return tracer


__all__ = ["TRACE_INCOMPLETE", "TurnTrace", "current_turn_trace", "tracer_for", "with_traceparent"]
