"""The transcript view-model as terminal lines (`view @ATTEMPT`)."""

from __future__ import annotations

from ..viewmodels.transcript import EventView, Transcript
from .lines import STYLES, Line, Part, blank, line, text_block

_TURN, _EVENT, _BODY = 2, 4, 8
_TURN_STATUS = {"failed": "bold red", "waiting": "yellow", "completed": "green"}
_CALL_STATUS = {"failed": "bold red", "rejected": "bold red", "pending": "yellow"}


def _event_lines(event: EventView) -> list[Line]:
    if event.kind == "tool_call":
        style = _CALL_STATUS.get(event.status, "")
        head: list[Part] = [("◆ ", "cyan"), (event.name, "bold"), "  ", (event.status, style)]
        for mark in event.marks:
            mark_style = STYLES.get(mark.state, "")
            head += ["  ◀ ", (mark.mark, mark_style), " ", (mark.name, mark_style)]
        out = [line(*head, indent=_EVENT), *text_block(event.input or "—", indent=_BODY, first="input  ")]
        if event.output:
            out += text_block(event.output, indent=_BODY, first="output ")
        if event.text:
            out.append(line(("error  ", "dim"), (event.text, "bold red"), indent=_BODY))
        return out
    if event.kind == "message":  # a model's text, whose lines must not pass for the view's own
        return text_block(event.text, indent=_EVENT, first=f"{event.role or 'message'}: ")
    if event.kind == "error":
        kind = f" ({event.name})" if event.name else ""
        return [line((f"! agent error{kind}: ", "bold magenta"), event.text, indent=_EVENT)]
    return [line((f"· {event.kind} ", "dim"), event.input, indent=_EVENT)]


def transcript_lines(view: Transcript | None) -> list[Line]:
    if view is None:
        return []
    out = [line((view.title, "bold"))]
    for session in view.sessions:
        out += [blank(), line(("session ", "dim"), (session.session, "bold"))]
        for turn in session.turns:
            head: list[Part] = [f"turn {turn.ordinal}  ", (turn.status, _TURN_STATUS.get(turn.status, ""))]
            for fact in turn.facts:
                head += ["  ·  ", (fact, "dim")]
            out.append(line(*head, indent=_TURN))
            out += text_block(turn.sent, indent=_EVENT, first="→ sent  ")
            for event in turn.events:
                out += _event_lines(event)
            out += text_block(turn.reply, indent=_EVENT, first="← reply ")
    return out


__all__ = ["transcript_lines"]
