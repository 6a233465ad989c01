"""Domain matches for the NPC world (seed 000, first part). Pure: each selects or compares items.

Combine them with `and_` to say "the same item satisfies all of these": applied to one action,
`and_(npc_match(id=...), model_match(outcome=...), ...)` holds only when that one action
satisfies every condition — not when each condition is met by a different action.
"""

from __future__ import annotations

from niceeval_cli.expect import BooleanMatch, and_, equals, map_value, or_


def _one_of(values: tuple[str, ...] | list[str]) -> BooleanMatch:
    return or_(*(equals(v) for v in values))


def npc_match(*, id: str | None = None, ids: tuple[str, ...] | list[str] | None = None) -> BooleanMatch:
    """An NPC (or an NPC's action) by id, or by one of several ids."""
    if (id is None) == (ids is None):
        raise ValueError("npc_match: give exactly one of id= or ids=")
    return map_value("npc", lambda item: item.npc_id, equals(id) if id is not None else _one_of(ids or ()))


def model_match(*, outcome: str) -> BooleanMatch:
    """The outcome of the NPC's model call behind an action: succeeded / failed / timeout."""
    return map_value("model outcome", lambda record: record.model_outcome, equals(outcome))


def decision_match(*, outcome: str) -> BooleanMatch:
    """What the rule engine did with the model's proposal: adopted / rejected."""
    return map_value("decision", lambda record: record.decision, equals(outcome))


def operation_match(*, ids: tuple[str, ...] | list[str]) -> BooleanMatch:
    """The operation the server executed for the action."""
    return map_value("operation", lambda record: record.operation_id, _one_of(ids))


def object_match(*, id: str) -> BooleanMatch:
    return map_value("object", lambda obj: obj.object_id, equals(id))


def durability_match(inner: BooleanMatch) -> BooleanMatch:
    """`inner` applied to the object's remaining durability, e.g. durability_match(greater_than(0))."""
    return map_value("durability", lambda obj: obj.durability, inner)


def position_match(*, map: str, x: int, y: int) -> BooleanMatch:
    """The object is on `map` at (x, y)."""
    return map_value("position", lambda obj: obj.position, and_(
        map_value("map", lambda p: p.map, equals(map)),
        map_value("x", lambda p: p.x, equals(x)),
        map_value("y", lambda p: p.y, equals(y)),
    ))
