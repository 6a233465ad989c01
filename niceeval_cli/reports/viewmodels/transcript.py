"""`view @ATTEMPT`'s transcript as data: each session's turns, their events, and the assertions
whose extras point at a tool call (`{"calls": [[turn, seq], ...]}`). Every text is made visible."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..._records import AssertionResult, EventRecord, TurnRecord
from ..._states import AssertionState
from .._safe import visible
from .attempt import MARKS, result_name
from .text import duration


@dataclass(frozen=True)
class Mark:
    """An assertion that pointed at an event."""

    mark: str
    state: str
    name: str


@dataclass(frozen=True)
class EventView:
    kind: str  # tool_call | message | error | a custom kind (visible)
    name: str = ""
    status: str = ""
    role: str = ""
    text: str = ""
    input: str = ""
    output: str = ""
    marks: tuple[Mark, ...] = ()


@dataclass(frozen=True)
class TurnView:
    ordinal: int
    status: str
    facts: tuple[str, ...]  # time, tokens, cost, what it observed
    sent: str
    reply: str
    events: tuple[EventView, ...]


@dataclass(frozen=True)
class SessionView:
    session: str
    turns: tuple[TurnView, ...]


@dataclass(frozen=True)
class Transcript:
    title: str
    sessions: tuple[SessionView, ...]


def pointed_calls(results: Sequence[AssertionResult]) -> dict[tuple[int, int], list[AssertionResult]]:
    """(turn ordinal, seq) → the results whose extras point at that event, in result order."""
    marks: dict[tuple[int, int], list[AssertionResult]] = {}
    for result in results:
        if not result.extras:
            continue
        try:
            extras = json.loads(result.extras) if isinstance(result.extras, str) else result.extras
            calls = extras.get("calls") or []
        except (ValueError, AttributeError):
            continue
        for pair in calls:
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, int) for x in pair):
                marks.setdefault((pair[0], pair[1]), []).append(result)
    return marks


def _json_text(text: str | None) -> str:
    """A stored JSON value as the transcript shows it: objects and lists as JSON, text as text —
    but text that would read as another JSON value (a tool that returned the JSON *string*
    `'{"status": "shipped"}'`, or `"42"`) keeps its quotes, so it never looks like an object."""
    if text is None:
        return ""
    try:
        value = json.loads(text)
    except ValueError:
        return visible(text, None)
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return visible(value, None)
        return visible(json.dumps(value, ensure_ascii=False), None)
    return visible(json.dumps(value, ensure_ascii=False), None)


def _facts(turn: TurnRecord) -> tuple[str, ...]:
    facts = []
    if turn.elapsed_ms is not None:
        facts.append(duration(turn.elapsed_ms))
    if turn.input_tokens is not None or turn.output_tokens is not None:
        shown = [f"{n:,}" if n is not None else "?" for n in (turn.input_tokens, turn.output_tokens)]
        facts.append(f"{shown[0]} in / {shown[1]} out tokens")
    if turn.cost_usd is not None:
        facts.append(f"${turn.cost_usd:.4f} reported")
    try:
        kinds = json.loads(turn.observed) if isinstance(turn.observed, str) else list(turn.observed or [])
    except ValueError:
        kinds = []
    facts.append("observed " + (", ".join(kinds) if kinds else "nothing (tool calls unobserved)"))
    return tuple(facts)


def _mark(result: AssertionResult) -> Mark:
    state = AssertionState(result.state)
    return Mark(MARKS.get(state, "·"), state.value, result_name(result))


def _event(event: EventRecord, marks: list[AssertionResult]) -> EventView:
    return EventView(
        kind=visible(event.kind, None, single_line=True),
        name=visible(event.name, None, single_line=True) if event.name else "",
        status=event.status or ("completed" if event.kind == "tool_call" else ""),
        role=visible(event.role, None) if event.role else "",
        text=visible(event.text, None) if event.text else "",
        input=_json_text(event.input),
        output=_json_text(event.output),
        marks=tuple(_mark(r) for r in marks),
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def transcript(turns: Sequence[TurnRecord], results: Sequence[AssertionResult] = ()) -> Transcript | None:
    """The attempt's transcript (None when it has no turn)."""
    if not turns:
        return None
    marks = pointed_calls(results)
    sessions: dict[str, list[TurnView]] = {}
    n_calls = 0
    for turn in sorted(turns, key=lambda t: t.ordinal):
        events = sorted(turn.events, key=lambda e: e.seq)
        n_calls += sum(e.kind == "tool_call" for e in events)
        sessions.setdefault(turn.session, []).append(TurnView(
            turn.ordinal, turn.status, _facts(turn), visible(turn.input, None), visible(turn.message, None),
            tuple(_event(e, marks.get((turn.ordinal, e.seq), [])) for e in events),
        ))
    title = (f"Transcript ({_plural(len(turns), 'turn')}, {_plural(n_calls, 'tool call')}, "
             f"{_plural(len(sessions), 'session')})")
    return Transcript(title, tuple(SessionView(visible(s, None, single_line=True), tuple(t))
                                   for s, t in sessions.items()))


__all__ = ["EventView", "Mark", "SessionView", "Transcript", "TurnView", "pointed_calls", "transcript"]
