"""Reading events from what built-in adapters receive: the ndjson protocol of `command`, an
event list inside an HTTP reply, and OpenAI chat-completion messages (docs/adapters.md,
"The event protocol").

Every reader raises `EventProtocolError` with a sentence naming what was wrong and where (the
line number of the output, the field path); the adapter turns it into an `adapter-error`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._bounds import MAX_TOOL_CALLS_PER_REPLY
from .._gateway import usd
from .._states import UnavailableReason
from ..authoring import (
    AgentError,
    AnyEvent,
    Message,
    ToolCall,
    Turn,
    Usage,
    event_from_dict,
    turn_from_reply,
    usage_from_dict,
)

OBSERVES_EVENTS = ("messages", "tool_calls")
_SHOWN = 200


class EventProtocolError(ValueError):
    """What an adapter received does not follow the event protocol."""


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"… [+{len(text) - _SHOWN} chars]"


def stream_lines(stdout: str) -> list[str]:
    """A JSON-lines stream's lines, cut at "\\n" only (a "\\r" before it is JSON whitespace).

    Not `splitlines()`: it also cuts at U+2028, U+2029, U+0085 and \\x1c–\\x1e, and JSON leaves the
    first three unescaped inside strings (Python's `ensure_ascii=False`, Node's `JSON.stringify`), so
    an agent quoting such text would have its event cut in two."""
    return stdout.split("\n")


def turn_from_ndjson(message: str, stdout: str, who: str) -> Turn:
    """`output = "ndjson"`: one event object per line, then `{"type": "final", ...}` last.

    Blank lines are ignored. The final line carries `message`, `status`, `usage`, `data`.
    """
    events: list[AnyEvent] = []
    final: Mapping[str, Any] | None = None
    final_line = 0
    for number, line in enumerate(stream_lines(stdout), 1):
        if not line.strip():
            continue
        if final is not None:
            raise EventProtocolError(
                f"{who}: line {number} of stdout comes after the final line (line {final_line}); "
                "the final line must be the last"
            )
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EventProtocolError(
                f"{who}: line {number} of stdout is not JSON ({exc.msg}): {_shown(line)!r}"
            ) from None
        except RecursionError:
            raise EventProtocolError(
                f"{who}: line {number} of stdout is JSON nested too deeply to read: {_shown(line)!r}"
            ) from None
        if isinstance(obj, Mapping) and obj.get("type") == "final":
            final, final_line = obj, number
            continue
        try:
            events.append(event_from_dict(obj))
        except ValueError as exc:
            raise EventProtocolError(f"{who}: line {number} of stdout: {exc}: {_shown(line)!r}") from None
    if final is None:
        raise EventProtocolError(
            f'{who}: stdout ended without the final line {{"type": "final", "message": ...}} '
            f"({len(events)} event line(s) read)"
        )
    reply = {k: v for k, v in final.items() if k != "type"}
    reply["events"] = events
    try:
        return turn_from_reply(message, reply, OBSERVES_EVENTS)
    except ValueError as exc:
        raise EventProtocolError(f"{who}: the final line (line {final_line}): {exc}") from None


def events_from_list(value: object, where: str) -> tuple[AnyEvent, ...]:
    """A JSON list of event objects (an HTTP reply's `events_path`)."""
    if not isinstance(value, (list, tuple)):
        raise EventProtocolError(f"{where} must be a list of event objects, got {type(value).__name__}")
    events = []
    for i, item in enumerate(value):
        try:
            events.append(event_from_dict(item))
        except ValueError as exc:
            raise EventProtocolError(f"{where}[{i}]: {exc}") from None
    return tuple(events)


# -- OpenAI chat completions ------------------------------------------------------------------
@dataclass(frozen=True)
class ChatReply:
    """One chat-completion choice: its text (None when absent), tool calls, usage."""

    content: str | None
    tool_calls: tuple[Mapping[str, Any], ...]
    finish_reason: str | None
    usage: Usage | None
    assistant: dict[str, Any]  # the assistant message as it goes back into the history


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def openai_usage(usage: object) -> Usage | None:
    """`prompt_tokens`, `completion_tokens`, cached tokens and a reported `cost` (OpenRouter-style)."""
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, Mapping) else None
    # JSON's 1e999 reads as inf, 1 followed by 400 zeros as an int no float holds: unreported, like
    # a negative cost, never the turn's end
    return Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), cached,
                 usd(usage.get("cost")))


def parse_chat_reply(reply: object, where: str) -> ChatReply:
    """The first choice of a chat completion; a tool-call reply with `content: null` is fine."""
    try:
        choice = reply["choices"][0]  # type: ignore[index]
        msg = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise EventProtocolError(f"{where} is not a chat completion (no choices[0].message)") from None
    if not isinstance(msg, Mapping):
        raise EventProtocolError(f"{where}: choices[0].message is not an object")
    content = msg.get("content")
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)  # e.g. a list of content parts
    raw_calls = msg.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise EventProtocolError(f"{where}: choices[0].message.tool_calls is not a list")
    calls = []
    for i, call in enumerate(raw_calls):
        fn = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn.get("name"):
            raise EventProtocolError(f"{where}: choices[0].message.tool_calls[{i}] has no function name")
        calls.append(call)
    assistant: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        assistant["tool_calls"] = [dict(c) for c in calls]
    usage = openai_usage(reply.get("usage")) if isinstance(reply, Mapping) else None
    return ChatReply(content, tuple(calls), choice.get("finish_reason"), usage, assistant)


def call_input(call: Mapping[str, Any]) -> Any:
    """The parsed JSON of the model's `arguments`, or the raw text when it is not JSON."""
    arguments = call.get("function", {}).get("arguments")
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser reads: the model's text
        return arguments


def tool_call_event(call: Mapping[str, Any], **fields: Any) -> ToolCall:
    return ToolCall(name=call["function"]["name"], input=call_input(call),
                    id=call.get("id") if isinstance(call.get("id"), str) else None, **fields)


def too_many_calls(asked: int, done: str = "run") -> AgentError:
    """The turn's failure when one reply asks for more than `MAX_TOOL_CALLS_PER_REPLY` tool calls
    (`done`: what NiceEval does with a reply's calls, "run" or "recorded")."""
    verb = "runs" if done == "run" else "records"
    return AgentError(f"the model asked for {asked} tool calls in one reply; NiceEval {verb} at most "
                      f"{MAX_TOOL_CALLS_PER_REPLY} a reply, so none of them was {done}", kind="too-many-tool-calls")


def sum_usage(usages: Iterable[Usage | None]) -> Usage | None:
    """Usage over several requests: a field is known when every request reported it."""
    items = list(usages)
    if not items or all(u is None for u in items):
        return None

    def total(name: str) -> Any:
        values = [getattr(u, name) if u is not None else None for u in items]
        return None if any(v is None for v in values) else sum(values)

    return Usage(total("input_tokens"), total("output_tokens"), total("cache_read_tokens"), total("cost_usd"))


def turn_from_chat_reply(message: str, reply: object, where: str) -> Turn:
    """`http` with `format = "openai"`: one chat completion as a turn (tool calls pending).

    A reply asking for more calls than `openai-chat` would run fails the turn as there, and none
    is recorded; as they were asked for (not refused before running), the turn does not observe
    tool calls: an assertion about them is `unavailable`, never a pass over calls left out."""
    parsed = parse_chat_reply(reply, where)
    if len(parsed.tool_calls) > MAX_TOOL_CALLS_PER_REPLY:
        turn = Turn(input=message, message=parsed.content or "",
                    events=(too_many_calls(len(parsed.tool_calls), "recorded"),), status="failed", data=reply,
                    usage=parsed.usage, observed=frozenset({"messages"}))
        object.__setattr__(turn, "_tool_calls_reason", UnavailableReason.CAPTURE_LIMIT_EXCEEDED.value)
        return turn
    events: list[AnyEvent] = []
    if parsed.content:
        events.append(Message("assistant", parsed.content))
    events.extend(tool_call_event(c, status="pending") for c in parsed.tool_calls)
    return Turn(input=message, message=parsed.content or "", events=tuple(events),
                status="waiting" if parsed.tool_calls else "completed", data=reply, usage=parsed.usage,
                observed=frozenset(OBSERVES_EVENTS))


def usage_at(value: object, where: str) -> Usage:
    try:
        return usage_from_dict(value)
    except ValueError as exc:
        raise EventProtocolError(f"{where}: {exc}") from None


__all__ = [
    "OBSERVES_EVENTS",
    "ChatReply",
    "EventProtocolError",
    "call_input",
    "events_from_list",
    "openai_usage",
    "parse_chat_reply",
    "stream_lines",
    "sum_usage",
    "too_many_calls",
    "tool_call_event",
    "turn_from_chat_reply",
    "turn_from_ndjson",
    "usage_at",
]
