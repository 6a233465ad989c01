"""The `openai-chat` tool loop: the model's tool calls are run by the project's handlers and
their results sent back, until a final message or `max_steps` model requests.

Handlers (`tool_handlers = "module:attr"`) are a dict name → callable taking the call's parsed
input, or one callable taking `(name, input)`; sync or async. A handler's exception makes that
call `failed` (its error is sent back to the model, which may recover). Without handlers the
calls are recorded `pending` and the turn ends `waiting`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..authoring import AgentError, AnyEvent, Message, ToolCall, Turn, Usage
from ..expect._json import to_jsonable  # JSON helpers are the engine's, not the pinned user API of expect
from ._events import OBSERVES_EVENTS, call_input, parse_chat_reply, sum_usage, tool_call_event

DEFAULT_MAX_STEPS = 8
NOT_RUN = "not executed: no tool handler is configured"

Handlers = Mapping[str, Callable[..., Any]] | Callable[..., Any]
Post = Callable[[list[dict[str, Any]]], Awaitable[Any]]


@dataclass(frozen=True)
class Posted:
    """A reply with the cost its response headers reported (a gateway's `x-litellm-response-cost`):
    `post` may return one instead of the bare reply."""

    reply: Any
    cost_usd: float | None = None


@dataclass
class LoopOutcome:
    """What one turn's loop produced; `history` is what the conversation continues from."""

    turn: Turn
    history: list[dict[str, Any]] = field(default_factory=list)


def _handler_for(handlers: Handlers, name: str) -> Callable[..., Any] | None:
    if isinstance(handlers, Mapping):
        fn = handlers.get(name)
        return None if fn is None else (lambda arguments: fn(arguments))
    return lambda arguments: handlers(name, arguments)


async def _run(fn: Callable[[Any], Any], arguments: Any) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(arguments)
    result = await asyncio.to_thread(fn, arguments)
    if inspect.isawaitable(result):
        result = await result
    return result


def _content(output: Any) -> str:
    """What goes back to the model as the tool message: text as is, anything else as JSON."""
    if isinstance(output, str):
        return output
    return json.dumps(to_jsonable(output), ensure_ascii=False)


async def _execute(call: Mapping[str, Any], handlers: Handlers, started: float) -> tuple[ToolCall, str]:
    name = call["function"]["name"]
    arguments = call_input(call)
    fn = _handler_for(handlers, name)
    t0 = (time.monotonic() - started) * 1000
    if fn is None:
        known = ", ".join(sorted(handlers)) if isinstance(handlers, Mapping) else ""
        error = f"no handler for tool {name!r} (tool_handlers has: {known or 'none'})"
        event = tool_call_event(call, status="failed", error=error, started_ms=t0, ended_ms=t0)
        return event, json.dumps({"error": error})
    try:
        output = await _run(fn, arguments)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        t1 = (time.monotonic() - started) * 1000
        event = tool_call_event(call, status="failed", error=error, started_ms=t0, ended_ms=t1)
        return event, json.dumps({"error": error}, ensure_ascii=False)
    t1 = (time.monotonic() - started) * 1000
    event = tool_call_event(call, output=to_jsonable(output), status="completed", started_ms=t0, ended_ms=t1)
    return event, _content(output)


async def run_tool_loop(
    message: str,
    history: list[dict[str, Any]],
    post: Post,
    handlers: Handlers | None,
    max_steps: int = DEFAULT_MAX_STEPS,
    where: str = "the chat completion",
) -> LoopOutcome:
    """One `t.send`: `history` (system prompt and earlier turns) plus the user message, then the loop."""
    started = time.monotonic()
    messages = [*history, {"role": "user", "content": message}]
    events: list[AnyEvent] = []
    usages: list[Usage | None] = []
    replies: list[Any] = []
    for _ in range(max_steps):
        answer = await post(messages)
        reply, header_cost = (answer.reply, answer.cost_usd) if isinstance(answer, Posted) else (answer, None)
        replies.append(reply)
        parsed = parse_chat_reply(reply, where)
        usage = parsed.usage
        if header_cost is not None and (usage is None or usage.cost_usd is None):  # the body's cost wins
            usage = dataclasses.replace(usage or Usage(), cost_usd=header_cost)
        usages.append(usage)
        messages.append(parsed.assistant)
        if parsed.content:
            events.append(Message("assistant", parsed.content))
        if not parsed.tool_calls:
            return LoopOutcome(_turn(message, parsed.content or "", events, "completed", replies, usages), messages)
        if handlers is None:
            for call in parsed.tool_calls:
                events.append(tool_call_event(call, status="pending"))
                # Keep the history valid for a next t.send: every call gets an answer.
                not_run = json.dumps({"error": NOT_RUN})
                messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": not_run})
            return LoopOutcome(_turn(message, parsed.content or "", events, "waiting", replies, usages), messages)
        for call in parsed.tool_calls:
            event, content = await _execute(call, handlers, started)
            events.append(event)
            messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": content})
    events.append(AgentError(f"max_steps={max_steps} model requests reached without a final message",
                             kind="max-steps"))
    return LoopOutcome(_turn(message, "", events, "failed", replies, usages), messages)


def _turn(message: str, text: str, events: list[AnyEvent], status: str, replies: list[Any],
          usages: list[Usage | None]) -> Turn:
    data = replies[-1] if len(replies) == 1 else {"responses": replies}
    return Turn(input=message, message=text, events=tuple(events), status=status,  # type: ignore[arg-type]
                data=data, usage=sum_usage(usages), observed=frozenset(OBSERVES_EVENTS))


__all__ = ["DEFAULT_MAX_STEPS", "NOT_RUN", "Handlers", "LoopOutcome", "Posted", "run_tool_loop"]
