"""`view @ATTEMPT`: the attempt's transcript, session by session, with the tool calls that
assertions pointed at marked (AssertionResult.extras `{"calls": [[turn, seq], ...]}`).

Pure: sealed records in, `Line`s out; every stored text passes through `visible()`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .._records import AssertionResult, EventRecord, TurnRecord
from .._states import AssertionState
from ._render import MARKS, STYLES, Line, blank, duration, line, result_name
from ._safe import visible

_TURN_INDENT = 2
_EVENT_INDENT = 4
_BODY_INDENT = 8


def pointed_calls(results: Sequence[AssertionResult]) -> dict[tuple[int, int], list[AssertionResult]]:
    """(turn ordinal, seq) → the results whose extras point at that event, in result order."""
    marks: dict[tuple[int, int], list[AssertionResult]] = {}
    for result in results:
        if not result.extras:
            continue
        try:
            calls = json.loads(result.extras).get("calls") or []
        except (ValueError, AttributeError):
            continue
        for pair in calls:
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, int) for x in pair):
                marks.setdefault((pair[0], pair[1]), []).append(result)
    return marks


def _mark(result: AssertionResult) -> list[str | tuple[str, str]]:
    state = AssertionState(result.state)
    style = STYLES.get(state.value, "")
    return [(MARKS.get(state, "·"), style), " ", (result_name(result), style)]


def _json_text(text: str | None) -> str:
    if text is None:
        return "—"
    try:
        value = json.loads(text)
    except ValueError:
        return visible(text, None)
    if isinstance(value, str):
        return visible(value, None)
    return visible(json.dumps(value, ensure_ascii=False), None)


def _usage(turn: TurnRecord) -> str:
    parts = []
    if turn.input_tokens is not None or turn.output_tokens is not None:
        shown = [f"{n:,}" if n is not None else "?" for n in (turn.input_tokens, turn.output_tokens)]
        parts.append(f"{shown[0]} in / {shown[1]} out tokens")
    if turn.cost_usd is not None:
        parts.append(f"${turn.cost_usd:.4f} reported")
    return " · ".join(parts)


def _observed(turn: TurnRecord) -> str:
    try:
        kinds = json.loads(turn.observed)
    except ValueError:
        kinds = []
    return "observed " + (", ".join(kinds) if kinds else "nothing (tool calls unobserved)")


def _event_lines(event: EventRecord, marks: list[AssertionResult]) -> list[Line]:
    if event.kind == "tool_call":
        status = event.status or "completed"
        style = "bold red" if status in ("failed", "rejected") else ("yellow" if status == "pending" else "")
        head: list[str | tuple[str, str]] = [("◆ ", "cyan"), (visible(event.name, None, single_line=True), "bold"),
                                             "  ", (status, style)]
        for result in marks:
            head += ["  ◀ ", *_mark(result)]
        out = [line(*head, indent=_EVENT_INDENT)]
        out.append(line(("input  ", "dim"), _json_text(event.input), indent=_BODY_INDENT))
        if event.output is not None:
            out.append(line(("output ", "dim"), _json_text(event.output), indent=_BODY_INDENT))
        if event.text:
            out.append(line(("error  ", "dim"), (visible(event.text, None), "bold red"), indent=_BODY_INDENT))
        return out
    if event.kind == "message":
        return [line((f"{visible(event.role or 'message', None)}: ", "dim"), visible(event.text, None),
                     indent=_EVENT_INDENT)]
    if event.kind == "error":
        kind = f" ({visible(event.name, None, single_line=True)})" if event.name else ""
        return [line((f"! agent error{kind}: ", "bold magenta"), visible(event.text, None), indent=_EVENT_INDENT)]
    data = _json_text(event.input) if event.input is not None else ""
    return [line((f"· {visible(event.kind, None, single_line=True)} ", "dim"), data, indent=_EVENT_INDENT)]


def transcript_lines(turns: Sequence[TurnRecord], results: Sequence[AssertionResult] = ()) -> list[Line]:
    """Each session's turns in order: the message sent, the events, the reply; full text."""
    if not turns:
        return []
    marks = pointed_calls(results)
    sessions: dict[str, list[TurnRecord]] = {}
    for turn in sorted(turns, key=lambda t: t.ordinal):
        sessions.setdefault(turn.session, []).append(turn)
    n_calls = sum(e.kind == "tool_call" for t in turns for e in t.events)
    title = f"Transcript ({len(turns)} turn{'s' if len(turns) != 1 else ''}, {n_calls} tool call" \
            f"{'s' if n_calls != 1 else ''}, {len(sessions)} session{'s' if len(sessions) != 1 else ''})"
    out = [line((title, "bold"))]
    for session, session_turns in sessions.items():
        out.append(blank())
        out.append(line(("session ", "dim"), (visible(session, None, single_line=True), "bold")))
        for turn in session_turns:
            status_style = {"failed": "bold red", "waiting": "yellow"}.get(turn.status, "green")
            head: list[str | tuple[str, str]] = [f"turn {turn.ordinal}  ", (turn.status, status_style)]
            for extra in (duration(turn.elapsed_ms) if turn.elapsed_ms is not None else "", _usage(turn),
                          _observed(turn)):
                if extra:
                    head += ["  ·  ", (extra, "dim")]
            out.append(line(*head, indent=_TURN_INDENT))
            out.append(line(("→ sent  ", "dim"), visible(turn.input, None), indent=_EVENT_INDENT))
            for event in sorted(turn.events, key=lambda e: e.seq):
                out += _event_lines(event, marks.get((turn.ordinal, event.seq), []))
            out.append(line(("← reply ", "dim"), visible(turn.message, None), indent=_EVENT_INDENT))
    return out


__all__ = ["pointed_calls", "transcript_lines"]
