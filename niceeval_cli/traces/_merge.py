"""A turn and the spans of its trace become one turn (the rule docs/integrations.md states).

- Tool calls: what the adapter reported first, then each span's tool call in span start order,
  except a span whose call id the adapter already reported (the same call, told twice).
- `observed`: the trace decides `tool_calls` — observed when the trace is complete, and not
  observed (reason `trace-incomplete`) otherwise, whatever the adapter declared: an incomplete
  trace may hide a call, so "not called" cannot be proved. `messages` stays the adapter's.
- Usage: the adapter's when it reported any; else the spans' summed usage when complete (an
  incomplete trace's sum would undercount; unknown stays unknown).
- Message: the adapter's; the spans' final assistant text only when the adapter's is empty.
- The spans are kept as events of kind `span` after the turn's own events, and a `trace` event
  says whether the trace was complete and why not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from .._bounds import MAX_EVENTS_PER_TURN
from ..authoring import Event, ToolCall, Turn
from ._spans import SpanData, convert

TRACE_INCOMPLETE = "trace-incomplete"
#: Spans kept per turn (either mode); beyond it spans are dropped and the trace is incomplete. The
#: turn's event bound: a trace of more spans could not be recorded whole anyway.
MAX_SPANS = MAX_EVENTS_PER_TURN


def merge_trace(turn: Turn, declared: Iterable[str], spans: list[SpanData], problem: str | None,
                trace_id: str | None = None) -> Turn:
    """`turn` with its trace: `problem` is None for a complete trace, else why it is incomplete."""
    converted = convert(spans)
    complete = problem is None
    reported_ids = {e.id for e in turn.events if isinstance(e, ToolCall) and e.id is not None}
    added = tuple(c for c in converted.tool_calls if c.id not in reported_ids)
    summary = Event("trace", {
        "trace_id": trace_id, "complete": complete, "spans": len(spans),
        **({"problem": problem} if problem else {}),
        **({"model": converted.model} if converted.model else {}),
    })
    observed = set(turn.observed if turn.observed is not None else declared)
    observed.discard("tool_calls")
    if complete:
        observed.add("tool_calls")
    usage = turn.usage
    if usage is None and complete:
        usage = converted.usage
    message = turn.message or (converted.text or "")
    merged = dataclasses.replace(
        turn, message=message, events=(*turn.events, *added, summary, *converted.events),
        usage=usage, observed=frozenset(observed),
    )
    if not complete:
        object.__setattr__(merged, "_tool_calls_reason", TRACE_INCOMPLETE)
    return merged


__all__ = ["MAX_SPANS", "TRACE_INCOMPLETE", "merge_trace"]
