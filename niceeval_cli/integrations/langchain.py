"""A LangGraph / LangChain result as a turn: its list of messages (or `{"messages": [...]}`).

`AIMessage.tool_calls` are the calls, each completed by the `ToolMessage` with its id; a
`ToolMessage` with `status="error"` is a `failed` ToolCall carrying its text. Usage is summed over
the AI messages' `usage_metadata`; the model is the last `response_metadata["model_name"]`. A graph
that stopped at an `interrupt()` (its state holds `__interrupt__`) is a `waiting` turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..authoring import Turn
from ._common import AnyEvent, Message, Pending, ToolCall, make_turn, parsed, plain, summed, usage_of

__all__ = ["turn_from"]


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(block.get("text", "") if isinstance(block, Mapping) else str(block) for block in content)
    return str(plain(content))


def turn_from(result: Any, input: str | None = None) -> Turn:
    """The turn of one `graph.invoke(...)` result, or of a list of messages."""
    messages = result.get("messages", ()) if isinstance(result, Mapping) else result
    events: list[AnyEvent] = []
    calls = Pending()
    usages = []
    model = None
    first_user = None
    final = ""
    for message in messages:
        kind = getattr(message, "type", None)
        if kind == "human" and first_user is None:
            first_user = _text(message.content)
        elif kind == "ai":
            text = _text(message.content)
            if text:
                final = text
                events.append(Message("assistant", text))
            for call in getattr(message, "tool_calls", None) or ():
                call_id = call.get("id")
                events.append(ToolCall(name=str(call.get("name")), input=parsed(call.get("args")), status="pending",
                                       id=call_id if isinstance(call_id, str) else None))
                if isinstance(call_id, str):
                    calls.add(call_id, len(events) - 1)
            meta = getattr(message, "usage_metadata", None) or {}
            found = usage_of(meta.get("input_tokens"), meta.get("output_tokens"))
            if found is not None:
                usages.append(found)
            model = (getattr(message, "response_metadata", None) or {}).get("model_name") or model
        elif kind == "tool":
            index = calls.take(str(getattr(message, "tool_call_id", "")))
            if index is None:
                continue
            call = events[index]
            assert isinstance(call, ToolCall)
            failed = getattr(message, "status", "success") == "error"
            content = message.content
            output = parsed(content) if isinstance(content, str) else plain(content)
            events[index] = ToolCall(name=call.name, input=call.input, output=None if failed else output,
                                     status="failed" if failed else "completed", id=call.id,
                                     error=_text(content) if failed else None)
    interrupted = isinstance(result, Mapping) and bool(result.get("__interrupt__"))  # stopped at `interrupt()`
    return make_turn(input, first_user, events, final, summed(usages), model if isinstance(model, str) else None,
                     waiting=interrupted)
