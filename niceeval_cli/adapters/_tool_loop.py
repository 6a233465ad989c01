"""The `openai-chat` tool loop: the model's tool calls are run by the project's handlers and
their results sent back, until a final message or `max_steps` model requests.

Handlers (`tool_handlers = "module:attr"`) are a dict name → callable taking the call's parsed
input, or one callable taking `(name, input)`; sync or async. The calls of one reply run in
order; plain functions in a worker thread (one hop for each run of them), `async def` ones on
the loop. A handler's exception makes that
call `failed` (its error is sent back to the model, which may recover). Without handlers the
calls are recorded `pending` and the turn ends `waiting`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._bounds import MAX_TOOL_CALLS_PER_REPLY
from ..authoring import AgentError, AnyEvent, Message, ToolCall, Turn, Usage, exception_text
from ..expect._json import to_jsonable  # JSON helpers are the engine's, not the pinned user API of expect
from ._events import OBSERVES_EVENTS, call_input, parse_chat_reply, sum_usage, too_many_calls, tool_call_event

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


def _handler_for(handlers: Handlers, name: str) -> tuple[Callable[[Any], Any] | None, bool]:
    """The call of tool `name` (None: no handler), and whether it is an `async def` — awaited on
    the loop; any other handler runs in a worker thread (it may block)."""
    if isinstance(handlers, Mapping):
        fn = handlers.get(name)
        if fn is None:
            return None, False
        return (lambda arguments: fn(arguments)), inspect.iscoroutinefunction(fn)
    return (lambda arguments: handlers(name, arguments)), inspect.iscoroutinefunction(handlers)


def _content(output: Any) -> str:
    """What goes back to the model as the tool message: text as is, anything else as JSON."""
    if isinstance(output, str):
        return output
    return json.dumps(to_jsonable(output), ensure_ascii=False)


@dataclass
class _Ran:
    """One handler call as it ran: its start and end (ms into the turn), and what it returned or raised."""

    t0: float
    t1: float = 0.0
    output: Any = None
    error: BaseException | None = None


def _run_plain(fns: list[Callable[[Any], Any]], inputs: list[Any], started: float,
               abandoned: threading.Event) -> list[_Ran]:
    """In a worker thread: the handlers in order, until one returns an awaitable (the loop
    awaits it before the next one runs, as it would have alone) — or the attempt stopped
    waiting (a timeout, Ctrl-C): no later handler starts then, as none would have alone."""
    ran = []
    for fn, arguments in zip(fns, inputs, strict=True):
        if abandoned.is_set():
            break
        item = _Ran((time.monotonic() - started) * 1000)
        try:
            item.output = fn(arguments)
        except Exception as exc:
            item.error = exc
        item.t1 = (time.monotonic() - started) * 1000
        ran.append(item)
        if item.error is None and inspect.isawaitable(item.output):
            break
    return ran


async def _settle(item: _Ran, started: float) -> _Ran:
    """An awaitable a handler returned, awaited (on the loop)."""
    if item.error is None and inspect.isawaitable(item.output):
        try:
            item.output = await item.output
        except Exception as exc:
            item.error = exc
        item.t1 = (time.monotonic() - started) * 1000
    return item


def _outcome(call: Mapping[str, Any], item: _Ran) -> tuple[ToolCall, str]:
    """The call as recorded and what goes back to the model. A value that cannot be made JSON (an
    object whose repr raises) fails the call, as a handler's exception does — not the attempt."""
    error = item.error
    if error is None:
        try:
            output, content = to_jsonable(item.output), _content(item.output)
        except Exception as exc:
            error = TypeError(f"the handler returned a value that cannot be sent back ({exception_text(exc)})")
        else:
            event = tool_call_event(call, output=output, status="completed", started_ms=item.t0, ended_ms=item.t1)
            return event, content
    text = exception_text(error)
    event = tool_call_event(call, status="failed", error=text, started_ms=item.t0, ended_ms=item.t1)
    return event, json.dumps({"error": text}, ensure_ascii=False)


async def _execute(
    calls: Sequence[Mapping[str, Any]], handlers: Handlers, started: float,
) -> list[tuple[ToolCall, str]]:
    """Run the calls of one reply in order. A run of plain-function handlers shares one worker
    thread hop (a hop costs more than a quick handler); `async def` handlers run on the loop."""
    done: list[tuple[ToolCall, str]] = []
    at = 0
    while at < len(calls):
        call = calls[at]
        fn, is_async = _handler_for(handlers, call["function"]["name"])
        if fn is None:
            t0 = (time.monotonic() - started) * 1000
            known = ", ".join(sorted(handlers)) if isinstance(handlers, Mapping) else ""
            error = f"no handler for tool {call['function']['name']!r} (tool_handlers has: {known or 'none'})"
            done.append((tool_call_event(call, status="failed", error=error, started_ms=t0, ended_ms=t0),
                         json.dumps({"error": error})))
            at += 1
            continue
        if is_async:
            item = _Ran((time.monotonic() - started) * 1000)
            try:
                item.output = await fn(call_input(call))
            except Exception as exc:
                item.error = exc
            item.t1 = (time.monotonic() - started) * 1000
            done.append(_outcome(call, item))
            at += 1
            continue
        batch, fns = [], []
        for later in calls[at:]:
            later_fn, later_async = _handler_for(handlers, later["function"]["name"])
            if later_fn is None or later_async:
                break
            batch.append(later)
            fns.append(later_fn)
        abandoned = threading.Event()
        try:
            ran = await asyncio.to_thread(_run_plain, fns, [call_input(c) for c in batch], started, abandoned)
        except asyncio.CancelledError:
            abandoned.set()
            raise
        for one, item in zip(batch, ran, strict=False):
            done.append(_outcome(one, await _settle(item, started)))
        at += len(ran)
    return done


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
        if len(parsed.tool_calls) > MAX_TOOL_CALLS_PER_REPLY:
            # The agent's behaviour, as max_steps is: the turn fails. Its reply stays out of the
            # history (its calls have no answers), so a next t.send is still a valid conversation.
            events.append(too_many_calls(len(parsed.tool_calls)))
            return LoopOutcome(_turn(message, parsed.content or "", events, "failed", replies, usages), messages)
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
        for call, (event, content) in zip(parsed.tool_calls, await _execute(parsed.tool_calls, handlers, started),
                                          strict=True):
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


__all__ = ["DEFAULT_MAX_STEPS", "MAX_TOOL_CALLS_PER_REPLY", "NOT_RUN", "Handlers", "LoopOutcome", "Posted",
           "run_tool_loop"]
