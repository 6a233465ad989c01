"""What the framework converters share: JSON-ish arguments, usage sums, the turn's shape."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from typing import Any, Literal

from ..authoring import Message, ToolCall, Turn, Usage

AnyEvent = Message | ToolCall

#: A converter sees the whole run: it observed every message and tool call the framework kept.
OBSERVED = frozenset({"messages", "tool_calls"})


def parsed(arguments: object) -> Any:
    """Arguments that are JSON text are parsed; anything else is kept as it is."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser reads
            return arguments
    return plain(arguments)


def plain(value: object) -> Any:
    """A framework value as JSON-like data (a pydantic model or dataclass by its fields)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return plain(dump(mode="json"))
        except Exception:
            return str(value)
    return str(value)


class Pending:
    """Calls awaiting their result, by call id, answered in the order they were made: a model
    may give two calls one id (both ran; keyed by id alone, the second took the first's result and
    the first stayed `pending`)."""

    def __init__(self) -> None:
        self._by_id: dict[str, deque[int]] = {}

    def add(self, call_id: str, index: int) -> None:
        self._by_id.setdefault(call_id, deque()).append(index)

    def take(self, call_id: str) -> int | None:
        """The index (in the turn's events) of the oldest call with this id still unanswered."""
        waiting = self._by_id.get(call_id)
        return waiting.popleft() if waiting else None


def count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def usage_of(input_tokens: object, output_tokens: object) -> Usage | None:
    i, o = count(input_tokens), count(output_tokens)
    return None if i is None and o is None else Usage(input_tokens=i, output_tokens=o)


def summed(usages: Sequence[Usage]) -> Usage | None:
    """Usage over several model calls: a field is known when every call reported it."""
    if not usages:
        return None

    def total(name: str) -> int | None:
        values = [getattr(u, name) for u in usages]
        return None if any(v is None for v in values) else sum(values)

    return Usage(input_tokens=total("input_tokens"), output_tokens=total("output_tokens"))


def make_turn(input: str | None, first_user: str | None, events: Sequence[AnyEvent], final: str,
              usage: Usage | None, model: str | None, failed: bool = False, waiting: bool = False) -> Turn:
    """`waiting`: the run stopped for input (a LangGraph `interrupt()`, an Agents SDK approval)
    instead of finishing: `succeeded()` must not read it as done."""
    status: Literal["completed", "failed", "waiting"] = "failed" if failed else "waiting" if waiting else "completed"
    return Turn(input=input if input is not None else (first_user or ""), message=final, events=tuple(events),
                status=status, usage=usage,
                data={"model": model} if model else None, observed=OBSERVED)


__all__ = [
    "OBSERVED", "AnyEvent", "Message", "Pending", "ToolCall", "count", "make_turn", "parsed", "plain", "summed",
    "usage_of",
]
