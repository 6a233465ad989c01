"""An attempt's turns as sealed transcript records (tables `turns` and `events`).

What is stored is redacted first, then trimmed: a text longer than `TEXT_LIMIT` characters keeps
its first `TEXT_LIMIT` characters and ends with `… [+N chars]`, N being the number of characters
left out; a JSON value (a tool call's input / output, a turn's data) is kept within `JSON_LIMIT`
UTF-8 bytes as valid JSON (long strings inside it end with `… [+N bytes trimmed]`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from .._records import EventRecord, TurnRecord
from .._redact import redact, safe_json
from ..expect._json import to_jsonable
from ._turns import AgentError, AnyEvent, Event, Message, ToolCall, Turn, event_kind

TEXT_LIMIT = 20_000  # characters of one stored text (a turn's input or message, an event's text)
JSON_LIMIT = 64 * 1024  # UTF-8 bytes of one stored JSON value
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


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
        value = to_jsonable(value)
    return safe_json(value, secrets=secrets, max_bytes=JSON_LIMIT)


def event_record(attempt_id: str, turn_ordinal: int, seq: int, event: AnyEvent,
                 secrets: Sequence[str] = ()) -> EventRecord:
    kind = event_kind(event)
    if isinstance(event, ToolCall):
        return EventRecord(
            attempt_id, turn_ordinal, seq, kind, name=stored_text(event.name, secrets),
            input=stored_json(event.input, secrets), output=stored_json(event.output, secrets),
            status=event.status, text=stored_text(event.error, secrets),
        )
    if isinstance(event, Message):
        return EventRecord(attempt_id, turn_ordinal, seq, kind, role=event.role,
                           text=stored_text(event.text, secrets))
    if isinstance(event, AgentError):
        return EventRecord(attempt_id, turn_ordinal, seq, kind, name=stored_text(event.kind, secrets),
                           text=stored_text(event.text, secrets))
    assert isinstance(event, Event)
    return EventRecord(attempt_id, turn_ordinal, seq, stored_text(kind, secrets) or kind,
                       input=stored_json(event.data, secrets))


def turn_record(attempt_id: str, ordinal: int, turn: Turn, secrets: Sequence[str] = ()) -> TurnRecord:
    session = turn.session
    usage = turn.usage
    return TurnRecord(
        attempt_id=attempt_id,
        session=str(getattr(session, "id", session) or "default"),
        ordinal=ordinal,
        input=stored_text(turn.input, secrets),
        message=stored_text(turn.message, secrets),
        status=turn.status,
        observed=json.dumps(sorted(turn.observed or ())),
        input_tokens=usage.input_tokens if usage is not None else None,
        output_tokens=usage.output_tokens if usage is not None else None,
        cost_usd=usage.cost_usd if usage is not None else None,
        elapsed_ms=round(turn.elapsed_ms, 3) if turn.elapsed_ms is not None else None,
        data=stored_json(turn.data, secrets),
        events=tuple(
            event_record(attempt_id, ordinal, seq, event, secrets) for seq, event in enumerate(turn.events)
        ),
    )


def transcript_records(attempt_id: str, turns: Iterable[Turn], secrets: Sequence[str] = ()) -> tuple[TurnRecord, ...]:
    """The attempt's turns (in recording order) as records, with their events, redacted and trimmed."""
    records = []
    for position, turn in enumerate(turns):
        ordinal = turn.ordinal if turn.ordinal is not None else position
        records.append(turn_record(attempt_id, ordinal, turn, secrets))
    return tuple(records)


__all__ = ["JSON_LIMIT", "TEXT_LIMIT", "event_record", "stored_json", "stored_text", "transcript_records",
           "turn_record"]
