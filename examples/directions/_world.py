"""A tiny grid world standing in for the real application of the directions scenario.

Scenario (seed 000): A does not know the route to the old well; B does. Both start within
speaking range. A asks B, then walks there on its own and meets B.

This module is "the application": it knows nothing about NiceEval. It runs the scenario tick by
tick until the task ends (A meets B at the well) or the observation deadline arrives, and
writes three logs, each record tagged with the trace id of the session that wrote it:

- the conversation log (who said what to whom, on which channel, whether it was heard, and
  whether the dialogue system can prove the line came from the character's model),
- the action log (who moved where, who decided it: the model, the player or a script, and
  whether the application executed it),
- the outcome log (arrivals and meetings, each naming the action that caused it).

Switches (the experiment's `[experiments.<id>.options]`) make it misbehave on purpose:
`b_hears_question = false`, `a_moved_by = "player"`, `correlated_records = false`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Pos = tuple[int, int]  # (x, y); y grows southwards, the top row is y = 0

SPEAKING_RANGE = 2  # Manhattan distance within which a spoken line can be heard
STEP: dict[str, Pos] = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}


@dataclass(frozen=True)
class OfficialMap:
    """The scenario's official map: what a judge may rely on to say whether directions suffice."""

    name: str
    width: int
    height: int
    landmarks: dict[str, Pos]
    paths: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "size": {"width": self.width, "height": self.height},
            "coordinates": "x grows eastwards, y grows southwards; (0, 0) is the north-west corner",
            "landmarks": {name: {"x": x, "y": y} for name, (x, y) in self.landmarks.items()},
            "paths": list(self.paths),
        }


RIVERSIDE = OfficialMap(
    name="riverside",
    width=5,
    height=5,
    landmarks={"market gate": (0, 4), "bakery": (3, 4), "fountain": (3, 2), "old well": (3, 0),
               "orchard": (0, 0)},
    paths=(
        "The lane runs east from the market gate (0,4) to the bakery (3,4).",
        "A path runs north from the bakery past the fountain (3,2) to the old well (3,0).",
        "The orchard track runs north from the market gate to the orchard (0,0) and then east to "
        "the old well.",
    ),
)
DESTINATION_PLACE = "old well"
A_START: Pos = (0, 4)
B_START: Pos = (1, 4)
B_ROUTE = ("north", "north", "north", "north", "east", "east")  # B takes the orchard track
TOLD_ROUTE = ("east", "east", "east", "north", "north", "north", "north")  # what B tells A
WANDER = ("north", "north", "north", "north")  # A without directions: up the orchard track, then waits


@dataclass(frozen=True)
class Switches:
    """What the experiment can change about this run of the application."""

    b_hears_question: bool = True
    a_moved_by: Literal["model", "player"] = "model"
    correlated_records: bool = True
    deadline_ticks: int = 20


@dataclass(frozen=True)
class Line:
    id: str
    trace_id: str
    tick: int
    actor_id: str
    recipient_id: str | None
    channel: Literal["say", "emote"]  # "say" is formal speech; an emote is not
    text: str
    heard: bool
    origin: Literal["model", "dialogue-fallback"]  # the fallback's lines cannot be traced to a model call
    act: str = "remark"  # speech act tagged by the dialogue system: greeting, ask-route, give-route, ...


@dataclass(frozen=True)
class Move:
    id: str
    trace_id: str
    tick: int
    actor_id: str
    decided_by: Literal["model", "player", "script"]
    direction: str
    from_pos: Pos
    to_pos: Pos
    executed: bool
    note: str = ""


@dataclass(frozen=True)
class Event:
    id: str
    trace_id: str
    tick: int
    kind: Literal["arrived", "met"]
    actors: tuple[str, ...]
    position: Pos
    place: str | None
    caused_by: str  # the id of the action that caused it


@dataclass
class Logs:
    """What the application wrote during one run."""

    trace_id: str
    conversation: list[Line] = field(default_factory=list)
    actions: list[Move] = field(default_factory=list)
    outcomes: list[Event] = field(default_factory=list)
    model_tokens: tuple[int, int] = (0, 0)  # (input, output) tokens of A's model
    ended_by: Literal["task-ended", "deadline"] = "deadline"


def _step(pos: Pos, direction: str) -> Pos:
    dx, dy = STEP[direction]
    return (pos[0] + dx, pos[1] + dy)


def _distance(a: Pos, b: Pos) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _place(pos: Pos) -> str | None:
    return next((name for name, at in RIVERSIDE.landmarks.items() if at == pos), None)


class _Run:
    def __init__(self, switches: Switches, trace_id: str) -> None:
        self.switches = switches
        self.logs = Logs(trace_id)
        self.pos = {"A": A_START, "B": B_START}
        self.tick = 0
        self.tokens_in = self.tokens_out = 0
        # The outcome service of a broken deployment writes under a stale session id.
        self.outcome_trace = trace_id if switches.correlated_records else "session-7f3a-restarted"

    def say(self, actor: str, recipient: str | None, text: str, *, channel: Literal["say", "emote"] = "say",
            origin: Literal["model", "dialogue-fallback"] = "model", act: str = "remark") -> None:
        heard = (
            channel == "say" and recipient is not None
            and _distance(self.pos[actor], self.pos[recipient]) <= SPEAKING_RANGE
            and (recipient != "B" or self.switches.b_hears_question)
        )
        if actor == "A" and origin == "model":
            self.tokens_in, self.tokens_out = self.tokens_in + 220, self.tokens_out + 25
        line = Line(f"u{len(self.logs.conversation) + 1}", self.logs.trace_id, self.tick, actor, recipient,
                    channel, text, heard, origin, act)
        self.logs.conversation.append(line)

    def move(self, actor: str, direction: str, decided_by: Literal["model", "player", "script"],
             *, executed: bool = True, note: str = "") -> Move:
        start = self.pos[actor]
        target = _step(start, direction)
        if decided_by == "model":
            self.tokens_in, self.tokens_out = self.tokens_in + 180, self.tokens_out + 6
        move = Move(f"m{len(self.logs.actions) + 1}", self.logs.trace_id, self.tick, actor, decided_by, direction,
                    start, target if executed else start, executed, note)
        self.logs.actions.append(move)
        if executed:
            self.pos[actor] = target
        return move

    def after_move(self, move: Move) -> bool:
        """Record what the move achieved; True when the task has ended."""
        if not move.executed:
            return False
        here = self.pos[move.actor_id]
        place = _place(here)
        destination = RIVERSIDE.landmarks[DESTINATION_PLACE]
        if move.actor_id == "A" and here == destination:
            self.event("arrived", ("A",), here, place, move.id)
        others = [who for who, at in self.pos.items() if who != move.actor_id and at == here]
        if others and here == destination:
            self.event("met", tuple(sorted((move.actor_id, *others))), here, place, move.id)
            return True
        return False

    def event(self, kind: Literal["arrived", "met"], actors: tuple[str, ...], pos: Pos, place: str | None,
              cause: str) -> None:
        event_id = f"o{len(self.logs.outcomes) + 1}"
        self.logs.outcomes.append(Event(event_id, self.outcome_trace, self.tick, kind, actors, pos, place, cause))

    def play(self) -> Logs:
        self.say("A", "B", "Hello there.", origin="dialogue-fallback", act="greeting")
        self.tick += 1
        self.say("A", "B", "Excuse me, I'm trying to find the old well. Could you tell me how to get there?",
                 act="ask-route")
        b_knows_a_needs_help = self.switches.b_hears_question
        if b_knows_a_needs_help:
            self.say("B", "A", "Of course! Walk east along the lane until you reach the bakery, then turn north "
                               "and follow the path past the fountain. The old well is at the end of that path. "
                               "I'll meet you there.", act="give-route")
            self.say("A", "B", "East to the bakery, then north past the fountain. Thank you, see you at the well!",
                     act="acknowledge")
            plan, b_plan = list(TOLD_ROUTE), list(B_ROUTE)
        else:
            self.say("A", None, "*looks around, unsure which way to go*", channel="emote", act="emote")
            plan, b_plan = list(WANDER), []
        called_out = False
        while self.tick < self.switches.deadline_ticks:
            self.tick += 1
            if b_plan and self.after_move(self.move("B", b_plan.pop(0), "script")):
                self.logs.ended_by = "task-ended"
                break
            if not plan:
                continue  # A's model chooses to wait where it is
            direction = plan.pop(0)
            if self.switches.a_moved_by == "player":
                self.move("A", direction, "model", executed=False, note="overridden: the player took control")
                move = self.move("A", direction, "player")
            else:
                move = self.move("A", direction, "model")
            if self.after_move(move):
                self.logs.ended_by = "task-ended"
                break
            if not called_out and b_knows_a_needs_help and _distance(self.pos["A"], self.pos["B"]) > SPEAKING_RANGE:
                # Too far away by now: nobody hears it.
                self.say("A", "B", "B, wait for me at the well!", act="call-out")
                called_out = True
            elif not b_knows_a_needs_help and not plan and not called_out:
                self.say("A", "B", "Hello? Is anyone there? Which way is the old well?",
                         act="ask-route")
                called_out = True
        self.logs.model_tokens = (self.tokens_in, self.tokens_out)
        return self.logs


def run_scenario(switches: Switches, trace_id: str) -> Logs:
    """Run the application once until the task ends or the observation deadline arrives."""
    return _Run(switches, trace_id).play()
