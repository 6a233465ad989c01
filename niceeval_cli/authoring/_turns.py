"""What an agent did in one turn: messages, tool calls, errors and custom events.

These are plain frozen records (agents.md, "Events and turns"). A `Turn` says which event kinds
its adapter observed *completely* (`observed`), so an assertion can tell "no tool was called"
from "nobody looked".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._gateway import usd
from ..expect import Material

#: What `Turn.observed` may contain.
OBSERVABLE = frozenset({"messages", "tool_calls"})
MESSAGE_ROLES = ("assistant", "user", "system", "tool")
TOOL_STATUSES = ("completed", "failed", "rejected", "pending")
TURN_STATUSES = ("completed", "failed", "waiting")
TOOL_CALLS_UNOBSERVED = "tool-calls-unobserved"
MESSAGES_UNOBSERVED = "messages-unobserved"
COST_UNREPORTED = "cost-unreported"
#: The kind of the one event that stands for the events a turn reported past its bounds
#: (`_turn_bounds.py`).
EVENTS_DROPPED = "events-dropped"

ToolStatus = Literal["completed", "failed", "rejected", "pending"]
TurnStatus = Literal["completed", "failed", "waiting"]


def _choice(owner: str, what: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{owner}: {what} must be one of {', '.join(allowed)}, got {value!r}")


@dataclass(frozen=True)
class Message:
    """A message of the conversation the adapter saw (`role`: assistant, user, system, tool)."""

    role: str
    text: str

    def __post_init__(self) -> None:
        _choice("Message", "role", self.role, MESSAGE_ROLES)
        if not isinstance(self.text, str):
            raise TypeError(f"Message: text must be text, got {type(self.text).__name__}")


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the agent; `input`/`output` are JSON-like values (or raw text)."""

    name: str
    input: Any = None
    output: Any = None
    status: ToolStatus = "completed"
    id: str | None = None
    error: str | None = None
    started_ms: float | None = None
    ended_ms: float | None = None

    def __post_init__(self) -> None:
        # The usual call passes every check: nothing is formatted unless one fails (a traced
        # turn makes a ToolCall per span).
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"ToolCall: name must be non-empty text, got {self.name!r}")
        if self.status not in TOOL_STATUSES:
            _choice(f"ToolCall({self.name!r})", "status", self.status, TOOL_STATUSES)
        for label, value in (("started_ms", self.started_ms), ("ended_ms", self.ended_ms)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise TypeError(f"ToolCall({self.name!r}): {label} must be a number of milliseconds")

    @property
    def duration_ms(self) -> float | None:
        if self.started_ms is None or self.ended_ms is None:
            return None
        return float(self.ended_ms) - float(self.started_ms)


@dataclass(frozen=True)
class AgentError:
    """The agent itself (not the adapter) reported an error; `kind` is its own classification."""

    text: str
    kind: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"AgentError: text must be text, got {type(self.text).__name__}")


@dataclass(frozen=True)
class Event:
    """Any other event kind an adapter wants kept (a skill, a subagent, ...)."""

    kind: str
    data: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind:
            raise ValueError(f"Event: kind must be non-empty text, got {self.kind!r}")
        if self.kind in ("message", "tool_call", "error", "final"):
            raise ValueError(
                f"Event: kind {self.kind!r} is reserved; use Message, ToolCall or AgentError instead"
            )


AnyEvent = Message | ToolCall | AgentError | Event
EVENT_TYPES = (Message, ToolCall, AgentError, Event)


def event_kind(event: AnyEvent) -> str:
    """The stored kind of an event: message, tool_call, error, or the custom event's kind."""
    if isinstance(event, Message):
        return "message"
    if isinstance(event, ToolCall):
        return "tool_call"
    if isinstance(event, AgentError):
        return "error"
    return event.kind


@dataclass(frozen=True)
class Usage:
    """Tokens and cost one turn reported; unknown stays unknown (None, never 0).

    `cost_usd` is what the provider *reported*; estimates from prices live elsewhere.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cost_usd: float | None = None

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "cache_read_tokens"):
            n = getattr(self, name)
            if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
                raise ValueError(f"Usage: {name} must be a whole number ≥ 0 or None, got {n!r}")
        c = self.cost_usd
        if c is not None and usd(c) is None:  # past 2**53 USD two costs overflow the run's sum
            raise ValueError(f"Usage: cost_usd must be a number from 0 to 2**53 (USD) or None, got {c!r}")

    @property
    def total_tokens(self) -> int | None:
        """Known only when both parts are (like `t.usage.total_tokens`): never a guess."""
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Turn:
    """One exchange with the system under test, and what the agent did in it.

    `observed=None` means "what the adapter declared" (filled in when the turn is recorded).
    A turn returned by `t.send` also knows its place in the attempt (`ordinal`, `session`) and
    offers the scoped agent assertions (`turn.called_tool(...)`, ...).
    """

    input: str
    message: str
    events: tuple[AnyEvent, ...] = ()
    status: TurnStatus = "completed"
    data: Any = None
    usage: Usage | None = None
    elapsed_ms: float | None = None
    observed: frozenset[str] | None = None
    # `_ordinal`, `_session` and `_scope` are set (object.__setattr__) when the context records
    # the turn; they are not fields, so evidence, equality and `replace` never see them.

    def __post_init__(self) -> None:
        if not isinstance(self.input, str):
            raise TypeError(f"Turn: input must be text, got {type(self.input).__name__}")
        if not isinstance(self.message, str):
            raise TypeError(f"Turn: message must be text, got {type(self.message).__name__}")
        _choice("Turn", "status", self.status, TURN_STATUSES)
        events = tuple(self.events) if isinstance(self.events, (list, tuple)) else None
        if events is None:
            raise TypeError(
                f"Turn: events (the third argument) must be a list or tuple of events, got "
                f"{type(self.events).__name__}; pass data, usage and elapsed_ms by keyword"
            )
        for i, event in enumerate(events):
            if not isinstance(event, EVENT_TYPES):
                raise TypeError(
                    f"Turn: events[{i}] is {type(event).__name__}; expected Message, ToolCall, "
                    "AgentError or Event (dict events are converted by the built-in adapters)"
                )
        object.__setattr__(self, "events", events)
        if self.usage is not None and not isinstance(self.usage, Usage):
            raise TypeError(f"Turn: usage must be a Usage, got {type(self.usage).__name__}")
        if self.observed is not None:
            object.__setattr__(self, "observed", check_observed(self.observed, "Turn: observed"))

    # -- what the agent did -----------------------------------------------------------------
    @property
    def tool_calls(self) -> Material[ToolCall]:
        """Complete when the adapter observed tool calls; otherwise unavailable (or partial
        when it still reported some)."""
        calls = tuple(e for e in self.events if isinstance(e, ToolCall))
        if self.observes("tool_calls"):
            return Material.complete(calls)
        reason = self.unobserved_tool_calls_reason
        if calls:
            return Material.partial(calls, reason)
        return Material.unavailable(reason)

    @property
    def unobserved_tool_calls_reason(self) -> str:
        """Why tool calls are not observed: `tool-calls-unobserved`, or `trace-incomplete` when the
        turn's trace (docs/integrations.md) did not arrive whole."""
        reason = self.__dict__.get("_tool_calls_reason")
        return reason if isinstance(reason, str) else TOOL_CALLS_UNOBSERVED

    @property
    def messages(self) -> Material[Message]:
        messages = tuple(e for e in self.events if isinstance(e, Message))
        if self.observes("messages"):
            return Material.complete(messages)
        if messages:
            return Material.partial(messages, MESSAGES_UNOBSERVED)
        return Material.unavailable(MESSAGES_UNOBSERVED)

    @property
    def errors(self) -> tuple[AgentError, ...]:
        return tuple(e for e in self.events if isinstance(e, AgentError))

    def observes(self, kind: str) -> bool:
        return self.observed is not None and kind in self.observed

    # -- its place in the attempt -------------------------------------------------------------
    @property
    def ordinal(self) -> int | None:
        """0-based position in the attempt across sessions (None for a turn built by hand)."""
        return self.__dict__.get("_ordinal")

    @property
    def session(self) -> Any:
        """The session the turn was sent in (None for a turn built by hand)."""
        ref = self.__dict__.get("_session")  # a weak reference: the session holds its turns
        return ref() if ref is not None else None

    # -- scoped agent assertions (the scope: this turn) ----------------------------------------
    def _checks(self) -> Any:
        scope = self.__dict__.get("_scope")
        if scope is None:
            from ._errors import AuthoringError

            raise AuthoringError(
                "agent assertions on a Turn need a turn returned by t.send / session.send; this one "
                "was built by hand (use t.check(turn.tool_calls, ...) instead)"
            )
        return scope

    def succeeded(self) -> Any:
        return self._checks().succeeded()

    def called_tool(self, match: Any, count: Any = None) -> Any:
        return self._checks().called_tool(match, count)

    def not_called_tool(self, match: Any) -> Any:
        return self._checks().not_called_tool(match)

    def tool_order(self, matches: Any) -> Any:
        return self._checks().tool_order(matches)

    def max_tool_calls(self, n: int) -> Any:
        return self._checks().max_tool_calls(n)

    def no_failed_actions(self) -> Any:
        return self._checks().no_failed_actions()


def check_observed(value: Iterable[str] | None, where: str) -> frozenset[str]:
    """A validated set of observed kinds (`messages`, `tool_calls`)."""
    if value is None:
        return frozenset()
    if isinstance(value, str):
        raise TypeError(f"{where} must be a collection of kinds such as ('messages', 'tool_calls'), "
                        f"not the text {value!r}")
    kinds = frozenset(value)
    unknown = sorted(str(k) for k in kinds - OBSERVABLE)
    if unknown:
        raise ValueError(f"{where}: unknown kind(s) {', '.join(unknown)}; allowed: messages, tool_calls")
    return kinds


# -- the dict event protocol (python / command ndjson / http events_path) ----------------------
_EVENT_KEYS: dict[str, frozenset[str]] = {
    "tool_call": frozenset({"type", "name", "input", "output", "status", "id", "error",
                            "started_ms", "ended_ms"}),
    "message": frozenset({"type", "role", "text"}),
    "error": frozenset({"type", "text", "kind"}),
}


def event_from_dict(obj: object) -> AnyEvent:
    """One event dict of the protocol (docs/adapters.md) → an event; ValueError says what is wrong."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"an event must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if not isinstance(kind, str) or not kind:
        raise ValueError('an event needs a "type" (tool_call, message, error or a custom kind)')
    allowed = _EVENT_KEYS.get(kind)
    if allowed is None:
        if kind == "final":
            raise ValueError('"final" is not an event; it ends the turn')
        unknown = sorted(str(k) for k in obj if k not in ("type", "data"))
        if unknown:
            raise ValueError(f"a custom event ({kind!r}) carries only \"data\"; unknown key(s) {', '.join(unknown)}")
        return Event(kind, obj.get("data"))
    unknown = sorted(str(k) for k in obj if k not in allowed)
    if unknown:
        raise ValueError(f"a {kind} event has unknown key(s) {', '.join(unknown)}; allowed: "
                         f"{', '.join(sorted(allowed))}")
    try:
        if kind == "tool_call":
            return ToolCall(
                name=obj.get("name"),  # type: ignore[arg-type]
                input=obj.get("input"),
                output=obj.get("output"),
                status=obj.get("status", "completed"),  # type: ignore[arg-type]
                id=_text_or_none(obj.get("id"), "id"),
                error=_text_or_none(obj.get("error"), "error"),
                started_ms=obj.get("started_ms"),
                ended_ms=obj.get("ended_ms"),
            )
        if kind == "message":
            return Message(role=obj.get("role", "assistant"), text=obj.get("text"))  # type: ignore[arg-type]
        return AgentError(text=obj.get("text"), kind=_text_or_none(obj.get("kind"), "kind"))  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None


def _text_or_none(value: object, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f'"{key}" must be text, got {type(value).__name__}')


def usage_from_dict(value: object) -> Usage:
    """`{"input_tokens", "output_tokens", "cache_read_tokens", "cost_usd"}` → Usage."""
    if not isinstance(value, Mapping):
        raise ValueError(f'"usage" must be an object with input_tokens / output_tokens, got {value!r}')
    allowed = ("input_tokens", "output_tokens", "cache_read_tokens", "cost_usd")
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise ValueError(f'"usage" has unknown key(s) {", ".join(unknown)}; allowed: {", ".join(allowed)}')
    return Usage(**{k: value.get(k) for k in allowed})


#: Keys of a reply dict (python adapter) and of the ndjson `final` line.
REPLY_KEYS = frozenset({"message", "events", "status", "usage", "data"})


def turn_from_reply(message: str, reply: Mapping[str, Any], observed: Iterable[str]) -> Turn:
    """A reply dict `{"message", "events"?, "status"?, "usage"?, "data"?}` → a Turn.

    `observed` applies when the reply carries `events`: reporting them claims completeness; a
    reply without `events` observes nothing.
    """
    unknown = sorted(str(k) for k in reply if k not in REPLY_KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(REPLY_KEYS))}")
    text = reply.get("message", "")
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise ValueError(f'"message" must be text, got {type(text).__name__}')
    raw_events = reply.get("events")
    events: list[AnyEvent] = []
    if raw_events is not None:
        if not isinstance(raw_events, (list, tuple)):
            raise ValueError(f'"events" must be a list of event objects, got {type(raw_events).__name__}')
        for i, item in enumerate(raw_events):
            if isinstance(item, EVENT_TYPES):
                events.append(item)
                continue
            try:
                events.append(event_from_dict(item))
            except ValueError as exc:
                raise ValueError(f"events[{i}]: {exc}") from None
    status = reply.get("status", "completed")
    _choice("the reply", '"status"', status, TURN_STATUSES)
    usage = reply.get("usage")
    return Turn(
        input=message,
        message=text,
        events=tuple(events),
        status=status,
        data=reply.get("data"),
        usage=usage if isinstance(usage, Usage) or usage is None else usage_from_dict(usage),
        observed=check_observed(observed, "observed") if raw_events is not None else frozenset(),
    )


__all__ = [
    "COST_UNREPORTED",
    "EVENTS_DROPPED",
    "EVENT_TYPES",
    "MESSAGES_UNOBSERVED",
    "OBSERVABLE",
    "TOOL_CALLS_UNOBSERVED",
    "AgentError",
    "AnyEvent",
    "Event",
    "Message",
    "ToolCall",
    "Turn",
    "Usage",
    "check_observed",
    "event_from_dict",
    "event_kind",
    "turn_from_reply",
    "usage_from_dict",
]
