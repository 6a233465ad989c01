"""What one turn keeps of the events it reported: at most `MAX_EVENTS_PER_TURN` of them, storing
at most `MAX_EVENT_BYTES_PER_TURN` bytes (docs/adapters.md, "How much one turn records").

Every way a turn gets events (an adapter's reply, a command's stream, a trace's spans) passes
here, where the context records the turn, so one hostile or stuck agent cannot make one attempt
hold and store without end, and eval code, the assertions and the store all see the same events.
"""

from __future__ import annotations

from typing import Any

from .._bounds import MAX_EVENT_BYTES_PER_TURN, MAX_EVENTS_PER_TURN
from .._states import UnavailableReason
from ._transcript import JSON_LIMIT, TEXT_LIMIT, json_text
from ._turns import EVENTS_DROPPED, AgentError, AnyEvent, Event, Message, ToolCall, Turn

#: The most one event can store: a tool call's name and error (`TEXT_LIMIT` characters of up to
#: 4 UTF-8 bytes each), its input and output (`JSON_LIMIT` bytes each); every other kind less.
MAX_EVENT_BYTES = 2 * 4 * TEXT_LIMIT + 2 * JSON_LIMIT


def keep_bounded_events(recorded: Turn) -> None:
    """Keep the first events of `recorded` (the context's fresh copy of a turn, its `observed`
    filled in) within both bounds, and one `events-dropped` event counting the rest.

    The kinds of which an event was dropped are no longer observed: the calls kept still count,
    but "no other call" cannot be proved, so an assertion that needs the rest is `unavailable`
    (`capture-limit-exceeded`, or the reason the turn already had), never a pass or a fail."""
    events = recorded.events
    if len(events) * MAX_EVENT_BYTES <= MAX_EVENT_BYTES_PER_TURN:
        return  # the usual turn: too few events to reach either bound, nothing to measure
    kept, size = 0, 0
    for event in events[:MAX_EVENTS_PER_TURN]:
        stored = stored_bytes(event)
        if size + stored > MAX_EVENT_BYTES_PER_TURN:
            break
        kept, size = kept + 1, size + stored
    if kept == len(events):
        return
    dropped = events[kept:]
    calls = sum(isinstance(e, ToolCall) for e in dropped)
    messages = sum(isinstance(e, Message) for e in dropped)
    note = Event(EVENTS_DROPPED, {"dropped": len(dropped), "kept": kept, "kept_bytes": size, "tool_calls": calls,
                                  "messages": messages})
    object.__setattr__(recorded, "events", (*events[:kept], note))
    observed = set(recorded.observed or ())
    if calls and "tool_calls" in observed:
        observed.discard("tool_calls")
        object.__setattr__(recorded, "_tool_calls_reason", UnavailableReason.CAPTURE_LIMIT_EXCEEDED.value)
    if messages:
        observed.discard("messages")
    object.__setattr__(recorded, "observed", frozenset(observed))


def stored_bytes(event: AnyEvent) -> int:
    """About the bytes `event` stores: each text and JSON value within its own limit, as the
    transcript trims it (before redaction, which shortens; without the trim markers)."""
    if isinstance(event, ToolCall):
        return _text(event.name) + _text(event.error) + _json(event.input) + _json(event.output)
    if isinstance(event, Message):
        return _text(event.text)
    if isinstance(event, AgentError):
        return _text(event.text) + _text(event.kind)
    return _text(event.kind) + _json(event.data)


def _text(text: str | None) -> int:
    if not text:
        return 0
    kept = text[:TEXT_LIMIT]
    return len(kept) if kept.isascii() else len(kept.encode("utf-8", "surrogatepass"))


def _json(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str) and len(value) >= JSON_LIMIT:
        return JSON_LIMIT  # a long text output: no need to encode it to know it is cut
    text = json_text(value)
    if text is None or len(text) >= JSON_LIMIT:
        return JSON_LIMIT
    return len(text) if text.isascii() else min(JSON_LIMIT, len(text.encode("utf-8", "surrogatepass")))


__all__ = ["MAX_EVENT_BYTES", "keep_bounded_events", "stored_bytes"]
