"""Traces become turns (docs/integrations.md, "OpenTelemetry").

`[experiments.<id>] traces = "otel"` collects the spans each turn starts in this process;
`traces = "otlp"` (not built yet: refused by the configuration) will receive them over OTLP/HTTP. The spans
of a turn become its tool calls and usage, observed only when the trace arrived whole.

This package imports OpenTelemetry; nothing imports it unless an experiment sets `traces`
(`tracer_for` is the one door, called by the runner), so a run without traces never loads it.
"""

from __future__ import annotations

import threading
from typing import Any

from ._merge import TRACE_INCOMPLETE

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
            if mode != "otel":  # the configuration refuses any other mode
                raise ValueError(f"unknown traces mode {mode!r}")
            from ._inprocess import InProcessTracer

            tracer = InProcessTracer(flush_ms)
            _TRACERS[key] = tracer
    return tracer


__all__ = ["TRACE_INCOMPLETE", "tracer_for"]
