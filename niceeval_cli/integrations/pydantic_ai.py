"""A pydantic-ai `AgentRunResult` as a turn: its message history read part by part.

A tool that raised `ModelRetry` is a `failed` ToolCall with the retry text (a `retry-prompt` part,
or a tool return whose `outcome` is `retried`/`failed` in newer versions), and its next try is a
ToolCall of its own: a retried call is kept once per try. A call pydantic-ai never ran (beside an
output tool that already gave the final result) or cut short (`outcome="interrupted"`) is `pending`,
with pydantic-ai's text as its error: the model called it, it produced nothing.
"""

from __future__ import annotations

import json
from typing import Any

from ..authoring import Turn
from ._common import AnyEvent, Message, Pending, ToolCall, make_turn, parsed, plain, summed, usage_of

__all__ = ["turn_from"]

_FAILED_OUTCOMES = frozenset({"retried", "failed", "error", "denied"})
#: pydantic-ai's stub for a call it never ran: a function tool the model called beside an output
#: tool that already gave the final result (`end_strategy="early"`). Its outcome reads `success`.
_NOT_EXECUTED = "Tool not executed - a final result was already processed."


def _text(content: object) -> str:
    return content if isinstance(content, str) else str(plain(content))


def turn_from(result: Any, input: str | None = None) -> Turn:
    """The turn of one `agent.run(...)` result (`AgentRunResult`)."""
    # this run's messages (an earlier `message_history` the run continued is not this turn's)
    messages = result.new_messages() if hasattr(result, "new_messages") else result.all_messages()
    events: list[AnyEvent] = []
    pending = Pending()  # tool_call_id -> index in events
    usages = []
    model = None
    first_user = None
    final = ""
    for message in messages:
        kind = getattr(message, "kind", None)
        if kind == "response":
            model = getattr(message, "model_name", None) or model
            usage = getattr(message, "usage", None)
            if usage is not None:
                found = usage_of(getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None))
                if found is not None:
                    usages.append(found)
        for part in getattr(message, "parts", ()):
            part_kind = getattr(part, "part_kind", None)
            if part_kind == "user-prompt" and first_user is None:
                first_user = _text(part.content)
            elif part_kind == "text" and kind == "response":
                final = part.content
                events.append(Message("assistant", part.content))
            elif part_kind == "tool-call":
                call_id = getattr(part, "tool_call_id", None)
                events.append(ToolCall(name=part.tool_name, input=parsed(part.args), status="pending", id=call_id))
                if call_id:
                    pending.add(call_id, len(events) - 1)
            elif part_kind in ("tool-return", "retry-prompt") and getattr(part, "tool_name", None):
                outcome = getattr(part, "outcome", None)
                failed = part_kind == "retry-prompt" or outcome in _FAILED_OUTCOMES
                content = plain(part.content)
                call_id = getattr(part, "tool_call_id", None)
                index = pending.take(call_id) if call_id else None
                if index is None:
                    continue  # a return for a call this history does not hold
                call = events[index]
                assert isinstance(call, ToolCall)
                if not failed and (outcome == "interrupted" or part.content == _NOT_EXECUTED):
                    # called, but it never ran (or never finished): no result, and not a completed call
                    events[index] = ToolCall(name=call.name, input=call.input, status="pending",
                                             id=call_id, error=_text(part.content))
                    continue
                events[index] = ToolCall(
                    name=call.name, input=call.input, output=None if failed else content,
                    status="failed" if failed else "completed", id=call_id,
                    error=_text(part.content) if failed else None,
                )
    output = getattr(result, "output", None)
    if not final and output is not None:  # a structured output (an output tool's value) is the reply, as JSON
        final = output if isinstance(output, str) else json.dumps(plain(output), ensure_ascii=False)
    return make_turn(input, first_user, events, final if isinstance(final, str) else _text(final),
                     summed(usages), model)
