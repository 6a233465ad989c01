"""The directions adapter: runs the grid world, turns its logs into facts, offers domain checks.

Facts are what the application recorded, in the form checks need. Nothing here decides
whether the scenario succeeded; the eval (`scenario.py`) does that, checkpoint by checkpoint.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from examples.directions._world import DESTINATION_PLACE, RIVERSIDE, Logs, Switches, run_scenario
from niceeval_cli import AdapterContext, Fact, Material, define_adapter
from niceeval_cli.expect import (
    BooleanMatch,
    Capture,
    and_,
    define_context_match,
    define_material_match,
    equals,
    filter_where,
    is_true,
    map_each,
    map_value,
    some,
)

# --- facts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Utterance:
    id: str
    tick: int
    actor_id: str
    recipient_id: str | None
    formal: bool  # spoken ("say"), as opposed to an emote
    act: str  # speech act tagged by the dialogue system: greeting, ask-route, give-route, ...
    text: str
    delivered: bool
    model_origin: Literal["verified", "unknown"]


@dataclass(frozen=True)
class Action:
    id: str
    tick: int
    actor_id: str
    kind: Literal["move"]
    decided_by: Literal["model", "player", "script"]
    executed: bool
    from_pos: tuple[int, int]
    to_pos: tuple[int, int]
    note: str


@dataclass(frozen=True)
class Outcome:
    id: str
    tick: int
    kind: Literal["arrived", "met"]
    actors: tuple[str, ...]
    place: str | None
    caused_by: str


@dataclass(frozen=True)
class DirectionsFacts:
    """One Attempt's evidence. `correlated` says whether the three logs belong together."""

    correlated: Fact[bool]
    conversation: Material[Utterance]
    actions: Material[Action]
    outcomes: Material[Outcome]
    official_map: dict[str, Any]
    destination: str


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    b_hears_question: bool = True
    a_moved_by: Literal["model", "player"] = "model"
    correlated_records: bool = True
    deadline_ticks: int = 20


def _switches(options: Any) -> Switches:
    try:
        return Switches(**_Options.model_validate(dict(options)).model_dump())
    except ValidationError as error:
        raise ValueError(f"invalid directions options: {error}") from None


def _correlation(logs: Logs) -> Fact[bool]:
    """Available only when every record carries this run's trace id and every cause exists."""
    trace_ids = {r.trace_id for r in logs.conversation} | {r.trace_id for r in logs.actions} \
        | {r.trace_id for r in logs.outcomes}
    foreign = trace_ids - {logs.trace_id}
    action_ids = {a.id for a in logs.actions}
    dangling = [o.id for o in logs.outcomes if o.caused_by not in action_ids]
    if foreign or dangling:
        return Fact.unavailable("records-uncorrelated")
    return Fact.available(True)


def facts_from_logs(logs: Logs) -> DirectionsFacts:
    correlated = _correlation(logs)
    conversation = Material.complete(
        Utterance(line.id, line.tick, line.actor_id, line.recipient_id, line.channel == "say", line.act,
                  line.text, line.heard, "verified" if line.origin == "model" else "unknown")
        for line in logs.conversation
    )
    actions = Material.complete(
        Action(m.id, m.tick, m.actor_id, "move", m.decided_by, m.executed, m.from_pos, m.to_pos, m.note)
        for m in logs.actions
    )
    outcomes = Material.complete(
        Outcome(e.id, e.tick, e.kind, e.actors, e.place, e.caused_by) for e in logs.outcomes
    )
    return DirectionsFacts(correlated, conversation, actions, outcomes, RIVERSIDE.as_json(), DESTINATION_PLACE)


async def observe(ctx: AdapterContext) -> DirectionsFacts:
    """Run the application for this Attempt until the task ends or the observation deadline."""
    logs = run_scenario(_switches(ctx.experiment.options), trace_id=f"{ctx.eval_id}#{ctx.attempt}")
    ctx.record_usage(input_tokens=logs.model_tokens[0], output_tokens=logs.model_tokens[1])
    ctx.logger.info("directions run ended by %s after %d actions", logs.ended_by, len(logs.actions))
    return facts_from_logs(logs)


# --- domain matches (pure; they select items, they record nothing) ----------------------------


def actor(actor_id: str) -> BooleanMatch:
    return map_value("actor", lambda item: item.actor_id, equals(actor_id))


def recipient(actor_id: str) -> BooleanMatch:
    return map_value("recipient", lambda u: u.recipient_id, equals(actor_id))


def delivered() -> BooleanMatch:
    return map_value("delivered", lambda u: u.delivered, is_true())


def speech_act(act: str) -> BooleanMatch:
    return map_value("speech act", lambda u: u.act, equals(act))


def formal() -> BooleanMatch:
    return map_value("formal speech", lambda u: u.formal, is_true())


def move() -> BooleanMatch:
    return map_value("move", lambda a: a.kind, equals("move"))


def decided_by(who: str) -> BooleanMatch:
    return map_value("decided by", lambda a: a.decided_by, equals(who))


def executed() -> BooleanMatch:
    return map_value("executed", lambda a: a.executed, is_true())


def outcome(kind: str) -> BooleanMatch:
    return map_value("outcome", lambda o: o.kind, equals(kind))


def involves(*actor_ids: str) -> BooleanMatch:
    def one(actor_id: str) -> BooleanMatch:
        return map_value(f"involves {actor_id}", lambda o: actor_id in o.actors, is_true())

    return and_(*(one(a) for a in actor_ids))


def at_place(place: str) -> BooleanMatch:
    return map_value("place", lambda o: o.place, equals(place))


CAPTURE = Capture(max_items=1024, max_bytes=512 * 1024, max_nodes=65536, max_depth=32)


def speech(match: BooleanMatch) -> Any:
    """The utterances `match` selects, as material (assertion subject or judge material)."""
    return define_material_match(name="speech", read=lambda f: f.conversation, match=match, capture=CAPTURE)


def route_information(facts: DirectionsFacts) -> Fact[dict[str, Any]]:
    """The information judge's material: what was actually heard, plus the official map and goal.

    Built from the complete conversation only: a partial log cannot show that enough was said."""
    conversation = facts.conversation
    if conversation.state != "complete":
        return Fact.unavailable(conversation.reason or "conversation-incomplete")
    heard = [{"speaker": u.actor_id, "to": u.recipient_id, "text": u.text}
             for u in conversation.items if u.delivered]
    return Fact.available({
        "official_map": facts.official_map,
        "destination": facts.destination,
        "delivered_conversation": heard,
    })


def _origin_known(u: Utterance) -> bool | Fact[bool]:
    # "verified" proves the model said it; "unknown" proves nothing either way.
    return True if u.model_origin == "verified" else Fact.unavailable("model-origin-unverified")


def _meeting_causes(facts: DirectionsFacts) -> Material[Action] | Fact[Any]:
    """The actions that caused a meeting of A and B at the destination (joined by id)."""
    if facts.outcomes.state != "complete" or facts.actions.state != "complete":
        return Fact.unavailable("records-incomplete")
    by_id = {a.id: a for a in facts.actions.items}
    causes = []
    for o in facts.outcomes.items:
        if o.kind == "met" and {"A", "B"} <= set(o.actors) and o.place == facts.destination:
            if o.caused_by not in by_id:
                return Fact.unavailable("records-uncorrelated")
            causes.append(by_id[o.caused_by])
    return Material.complete(causes)


def _assertions(check: Any) -> dict[str, Any]:
    return {
        # Prerequisite: the three logs are complete and belong to this Attempt.
        "records_ready": lambda: check(define_context_match(
            name="records-complete-and-correlated", read=lambda f: f.correlated, match=is_true())),
        # Some utterance satisfies `match` (all its conditions on the same utterance).
        "said": lambda match: check(speech(match)),
        # Some action / outcome record satisfies `match`.
        "actions": lambda match: check(define_material_match(
            name="actions", read=lambda f: f.actions, match=match, capture=CAPTURE)),
        "outcomes": lambda match: check(define_material_match(
            name="outcomes", read=lambda f: f.outcomes, match=match, capture=CAPTURE)),
        # Is the model origin of the selected utterances verified? (aggregate over True/unknown)
        "model_origin": lambda selector, aggregate: check(define_context_match(
            name="model-origin", read=lambda f: f.conversation,
            match=filter_where(selector, map_each(_origin_known, aggregate)))),
        # A meeting of A and B at the destination was caused by an action satisfying `match`.
        "meeting_caused_by": lambda match: check(define_context_match(
            name="meeting-caused-by", read=_meeting_causes, match=some(match))),
    }


def _source_version(*names: str) -> str:
    """Editing the simulated application changes the adapter version, hence the fingerprint."""
    digest = hashlib.sha256()
    for name in names:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:12]


directions = define_adapter(
    name="directions-world",
    create=observe,
    assertions=_assertions,
    version=_source_version("_world.py", "_review.py"),
)
