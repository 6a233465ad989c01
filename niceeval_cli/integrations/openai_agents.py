"""An OpenAI Agents SDK `RunResult` as a turn: its `new_items` in order, usage from its responses.

The SDK replaces a failed tool's exception by a generic message before the model sees it, and
keeps only that: a tool output equal to the SDK's default error text is a `failed` ToolCall
carrying it (a custom `failure_error_function`'s text cannot be told from an output). Its texts for
a tool that timed out (`failed`) and for a call that was not approved (`rejected`) are read alike.
"""

from __future__ import annotations

from typing import Any, Literal

from ..authoring import Turn
from ._common import AnyEvent, Message, Pending, ToolCall, make_turn, parsed, plain, summed, usage_of

__all__ = ["turn_from"]

DEFAULT_TOOL_ERROR = "An error occurred while running the tool."
#: The SDK's answer to a call a human (or a policy) did not approve (`needs_approval`, `state.reject`).
NOT_APPROVED = "Tool execution was not approved."


def _status(name: str, output: object) -> Literal["completed", "failed", "rejected"]:
    """What the SDK's own texts say of a call: a failure, a timeout (`timeout=` on a function
    tool, answered "Tool 'x' timed out after N seconds."), a rejection — else it completed."""
    if not isinstance(output, str):
        return "completed"
    if output == NOT_APPROVED:
        return "rejected"
    timed_out = output.startswith(f"Tool '{name}' timed out after ") and output.endswith(" seconds.")
    return "failed" if output.startswith(DEFAULT_TOOL_ERROR) or timed_out else "completed"


def _field(raw: object, name: str) -> Any:
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


def _message_text(raw: object) -> str:
    parts = []
    for content in _field(raw, "content") or ():
        text = _field(content, "text")
        if isinstance(text, str):
            parts.append(text)
    return "".join(parts)


def turn_from(result: Any, input: str | None = None) -> Turn:
    """The turn of one `Runner.run(...)` result."""
    events: list[AnyEvent] = []
    calls = Pending()
    for item in getattr(result, "new_items", ()):
        kind = getattr(item, "type", None)
        raw = getattr(item, "raw_item", None)
        if kind == "message_output_item":
            text = _message_text(raw)
            if text:
                events.append(Message("assistant", text))
        elif kind == "tool_call_item":
            name = _field(raw, "name") or _field(raw, "type") or "tool"
            call_id = _field(raw, "call_id") or _field(raw, "id")
            events.append(ToolCall(name=str(name), input=parsed(_field(raw, "arguments")), status="pending",
                                   id=call_id if isinstance(call_id, str) else None))
            if isinstance(call_id, str):
                calls.add(call_id, len(events) - 1)
        elif kind == "tool_call_output_item":
            call_id = _field(raw, "call_id")
            index = calls.take(call_id) if isinstance(call_id, str) else None
            if index is None:
                continue
            call = events[index]
            assert isinstance(call, ToolCall)
            output = plain(getattr(item, "output", None))
            status = _status(call.name, output)
            failed = status != "completed"
            events[index] = ToolCall(name=call.name, input=call.input, output=None if failed else output,
                                     status=status, id=call.id, error=output if failed else None)
    usages = [found for response in getattr(result, "raw_responses", ()) or ()
              if (found := usage_of(_field(response.usage, "input_tokens"), _field(response.usage, "output_tokens")))
              is not None]
    final = getattr(result, "final_output", None)
    text = final if isinstance(final, str) else ("" if final is None else str(plain(final)))
    agent_model = getattr(getattr(result, "last_agent", None), "model", None)
    original = getattr(result, "input", None)
    return make_turn(input, original if isinstance(original, str) else None, events, text, summed(usages),
                     agent_model if isinstance(agent_model, str) else None,
                     waiting=bool(getattr(result, "interruptions", None)))  # stopped for an approval
