"""An attempt's turns as sealed transcript records (tables `turns` and `events`), and what one turn
keeps of the events it reported (`keep_bounded_events`), counted as they will be stored.

What is stored is redacted first, then trimmed: a text longer than `TEXT_LIMIT` characters keeps
its first `TEXT_LIMIT` characters and ends with `… [+N chars]`, N being the number of characters
left out; a JSON value (a tool call's input / output, a turn's data) is kept within `JSON_LIMIT`
UTF-8 bytes as valid JSON (long strings inside it end with `… [+N bytes trimmed]`).
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._bounds import MAX_EVENT_BYTES_PER_TURN, MAX_EVENTS_PER_TURN
from .._records import EventRecord, TurnRecord
from .._redact import is_clean, redact, safe_json
from .._states import UnavailableReason
from ..expect._json import to_jsonable  # the engine's JSON form, not in expect's pinned user API
from ._turns import EVENTS_DROPPED, AgentError, AnyEvent, Event, Message, ToolCall, Turn

TEXT_LIMIT = 20_000  # characters of one stored text (a turn's input or message, an event's text)
JSON_LIMIT = 64 * 1024  # UTF-8 bytes of one stored JSON value


def _not_json(value: object) -> None:
    raise TypeError(f"{type(value).__name__} is not plain JSON")


def _compact_encoder() -> Callable[[Any], str]:
    """Compact JSON as `json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
    allow_nan=False).encode` writes it, through json's C encoder made once: the encoder class
    makes one per call, for each of a turn's tool-call inputs and outputs. (No circular
    check: a cycle ends in RecursionError, which callers take as "not plain JSON" too.)"""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # a Python without json's C accelerator
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    one_shot = make(None, _not_json, json.encoder.encode_basestring, None, ":", ",", False, False, False)
    return lambda value: "".join(one_shot(value, 0))


_ENCODE = _compact_encoder()


def json_text(value: Any) -> str | None:
    """The compact JSON text `stored_json` starts from: `value`'s own, else its `to_jsonable`
    form's; None when neither can be made (an object whose `repr` raises, say: its turn is then
    stored as one that could not be, and measuring it must not fail the send)."""
    try:
        return _ENCODE(value)
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return _ENCODE(to_jsonable(value))
    except Exception:
        return None


def stored_text(text: str | None, secrets: Sequence[str] = (), limit: int = TEXT_LIMIT) -> str | None:
    """Redacted, storable (lone surrogates replaced) text, trimmed with a `… [+N chars]` marker."""
    if text is None:
        return None
    text = redact(text, secrets)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [+{len(text) - limit} chars]"


def stored_json(value: Any, secrets: Sequence[str] = ()) -> str | None:
    """Redacted JSON text of `value` within `JSON_LIMIT` bytes (None stays NULL)."""
    if value is None:
        return None
    try:  # plain JSON (the usual case) needs no walk through `to_jsonable`
        _ENCODE(value)
    except (TypeError, ValueError, RecursionError):
        try:
            value = to_jsonable(value)
        except RecursionError:  # hostile nesting: say so instead of losing the attempt
            return _ENCODE({"trimmed": "… [a value nested too deeply to store]"})
    return safe_json(value, secrets=secrets, max_bytes=JSON_LIMIT)


#: The most one event can store: a tool call's name and error (`TEXT_LIMIT` characters of up to
#: 4 UTF-8 bytes each), its input and output (`JSON_LIMIT` bytes each); every other kind less.
MAX_EVENT_BYTES = 2 * 4 * TEXT_LIMIT + 2 * JSON_LIMIT


def keep_bounded_events(recorded: Turn) -> None:
    """Keep the first events of `recorded` (the context's fresh copy of a turn, its `observed`
    filled in) within `MAX_EVENTS_PER_TURN` and `MAX_EVENT_BYTES_PER_TURN`, and one
    `events-dropped` event counting the rest (docs/adapters.md, "How much one turn records").

    Every way a turn gets events (an adapter's reply, a command's stream, a trace's spans) passes
    here, where the context records the turn, so one hostile or stuck agent cannot make one
    attempt hold and store without end, and eval code, the assertions and the store all see the
    same events. The kinds of which an event was dropped are no longer observed: the calls kept
    still count, but "no other call" cannot be proved, so an assertion that needs the rest is
    `unavailable` (`capture-limit-exceeded`, or the reason the turn already had), never a pass or
    a fail."""
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
        return _text_bytes(event.name) + _text_bytes(event.error) + _json_bytes(event.input) + _json_bytes(event.output)
    if isinstance(event, Message):
        return _text_bytes(event.text)
    if isinstance(event, AgentError):
        return _text_bytes(event.text) + _text_bytes(event.kind)
    return _text_bytes(event.kind) + _json_bytes(event.data)


def _text_bytes(text: str | None) -> int:
    if not text:
        return 0
    kept = text[:TEXT_LIMIT]
    return len(kept) if kept.isascii() else len(kept.encode("utf-8", "surrogatepass"))


def _json_bytes(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str) and len(value) >= JSON_LIMIT:
        return JSON_LIMIT  # a long text output: no need to encode it to know it is cut
    text = json_text(value)
    if text is None or len(text) >= JSON_LIMIT:
        return JSON_LIMIT
    return len(text) if text.isascii() else min(JSON_LIMIT, len(text.encode("utf-8", "surrogatepass")))


class _Fields:
    """How one turn's values are stored. The usual turn holds nothing to redact and nothing too
    long: one check over all its text at once (`is_clean`) then stores each value as it is;
    otherwise every value goes the careful way (`stored_text` / `stored_json`).

    One pass over the events gathers what the check reads (each JSON value encoded once, kept by
    identity for `json`); a traced turn has two events per span, so the pass and `event` are
    written for the common case and send anything unusual to the general code. A value longer
    than both limits goes the careful way whatever the check says, so a long turn leaves it out
    of the check (lower-casing the join of 2 000 tool outputs of 100 KB held 200 MB more)."""

    def __init__(self, turn: Turn, secrets: Sequence[str]) -> None:
        self.secrets = secrets
        raw: dict[int, str | None] = {}
        self.raw = raw
        parts: list[str] = [turn.input, turn.message]
        texts: list[str] = []
        if turn.data is not None:
            _encoded(turn.data, raw, parts)
        for event in turn.events:
            if isinstance(event, ToolCall):
                if event.input is not None:
                    _encoded(event.input, raw, parts)
                if event.output is not None:
                    _encoded(event.output, raw, parts)
            elif isinstance(event, Event) and event.data is not None:
                _encoded(event.data, raw, parts)
            texts.extend(t for t in _texts(event) if t)
        parts += texts
        joined = "\n".join(parts)
        if len(joined) > JSON_LIMIT:  # a part longer than both limits is stored the careful way anyway
            joined = "\n".join(part for part in parts if len(part) <= JSON_LIMIT)
        self.clean = is_clean(joined, secrets)

    def text(self, text: str | None) -> str | None:
        if text is None:
            return None
        if self.clean and len(text) <= TEXT_LIMIT:
            return text
        return stored_text(text, self.secrets)

    def json(self, value: Any) -> str | None:
        if value is None:
            return None
        raw = self.raw.get(id(value))
        if self.clean and raw is not None and (len(raw) * 4 <= JSON_LIMIT or len(raw.encode()) <= JSON_LIMIT):
            return raw
        return stored_json(value, self.secrets)


def _encoded(value: Any, raw: dict[int, str | None], parts: list[str]) -> None:
    """`value`'s compact JSON into `raw` (by identity) and `parts` (None when not plain JSON)."""
    try:
        text: str | None = _ENCODE(value)
    except (TypeError, ValueError, RecursionError):
        text = None
    raw[id(value)] = text
    if text is not None:
        parts.append(text)


def _texts(event: AnyEvent) -> tuple[str | None, ...]:
    if isinstance(event, ToolCall):
        return (event.name, event.error)
    if isinstance(event, Message):
        return (event.text,)
    if isinstance(event, AgentError):
        return (event.text, event.kind)
    return (event.kind,)


def event_record(attempt_id: str, turn_ordinal: int, seq: int, event: AnyEvent,
                 secrets: Sequence[str] = (), fields: _Fields | None = None) -> EventRecord:
    f = fields if fields is not None else _Fields(Turn("", "", events=(event,)), secrets)
    if isinstance(event, ToolCall):
        return EventRecord(
            attempt_id, turn_ordinal, seq, "tool_call", f.text(event.name), None,
            f.json(event.input), f.json(event.output), event.status, f.text(event.error),
        )
    if isinstance(event, Event):
        kind = event.kind
        return EventRecord(attempt_id, turn_ordinal, seq, f.text(kind) or kind, None, None, f.json(event.data))
    if isinstance(event, Message):
        return EventRecord(attempt_id, turn_ordinal, seq, "message", None, event.role, None, None, None,
                           f.text(event.text))
    assert isinstance(event, AgentError)
    return EventRecord(attempt_id, turn_ordinal, seq, "error", f.text(event.kind), None, None, None, None,
                       f.text(event.text))


def turn_record(attempt_id: str, ordinal: int, turn: Turn, secrets: Sequence[str] = ()) -> TurnRecord:
    session = turn.session
    usage = turn.usage
    f = _Fields(turn, secrets)
    return TurnRecord(
        attempt_id=attempt_id,
        session=str(getattr(session, "id", session) or "default"),
        ordinal=ordinal,
        input=f.text(turn.input),
        message=f.text(turn.message),
        status=turn.status,
        observed=_OBSERVED.get(turn.observed or frozenset()) or json.dumps(sorted(turn.observed or ())),
        input_tokens=usage.input_tokens if usage is not None else None,
        output_tokens=usage.output_tokens if usage is not None else None,
        cost_usd=usage.cost_usd if usage is not None else None,
        elapsed_ms=round(turn.elapsed_ms, 3) if turn.elapsed_ms is not None else None,
        data=f.json(turn.data),
        events=tuple(
            event_record(attempt_id, ordinal, seq, event, secrets, f) for seq, event in enumerate(turn.events)
        ),
    )


_OBSERVED = {
    frozenset(): "[]",
    frozenset({"messages"}): '["messages"]',
    frozenset({"tool_calls"}): '["tool_calls"]',
    frozenset({"messages", "tool_calls"}): '["messages", "tool_calls"]',
}


def transcript_records(attempt_id: str, turns: Iterable[Turn], secrets: Sequence[str] = ()) -> tuple[TurnRecord, ...]:
    """The attempt's turns (in recording order) as records, with their events, redacted and trimmed."""
    records = []
    for position, turn in enumerate(turns):
        ordinal = turn.ordinal if turn.ordinal is not None else position
        try:
            records.append(turn_record(attempt_id, ordinal, turn, secrets))
        except Exception as exc:  # a turn that cannot be stored costs its events, never the attempt
            session = getattr(turn.session, "id", None) or "default"
            records.append(TurnRecord(
                attempt_id, str(session), ordinal, None,
                f"[this turn could not be stored: {type(exc).__name__}: {redact(str(exc), secrets)}]",
                turn.status, "[]",
            ))
    return tuple(records)


__all__ = ["JSON_LIMIT", "MAX_EVENT_BYTES", "TEXT_LIMIT", "event_record", "json_text", "keep_bounded_events",
           "stored_bytes", "stored_json", "stored_text", "transcript_records", "turn_record"]
