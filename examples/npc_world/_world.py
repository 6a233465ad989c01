"""A simulated NPC game world standing in for the real application (it knows nothing of NiceEval).

Mission "Bandit raid at the ford": the guards defeat the three bandits at the ford, and the
porter carries the supply crate across the river to the camp. The world writes what a real game
server would: the final state of every NPC (hp; unknown when the NPC is out of sight), the
system record of every NPC action (the NPC's model call, the rule engine's decision on the
proposal, the operation executed), and the state of every object (durability, position).

Switches (the experiment's `[experiments.<id>.options]`):
- `bandits_left_standing`: how many bandits survive (default 0);
- `fog`: true hides bandit-3 at the end (its hp is unknown, not 0);
- `porter_decision`: "adopted" (default) or "rejected" — the rule engine rejects the porter's
  own carry plan and a scripted fallback moves the crate instead;
- `crate_durability`: the crate's durability at the end (default 35; 0 = smashed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Switches(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    bandits_left_standing: int = Field(default=0, ge=0, le=3)
    fog: bool = False
    porter_decision: Literal["adopted", "rejected"] = "adopted"
    crate_durability: int = Field(default=35, ge=0)


@dataclass(frozen=True)
class Place:
    map: str
    x: int
    y: int


@dataclass(frozen=True)
class MapInfo:
    name: str


@dataclass(frozen=True)
class Carry:
    object_id: str
    operation_ids: tuple[str, ...]


@dataclass(frozen=True)
class Scenario:
    """What the mission designer wrote down: who is involved and where things must end up."""

    map: MapInfo
    bandit_ids: tuple[str, ...]
    porter_id: str
    carry: Carry
    destination: dict[str, int]  # {"x": ..., "y": ...} on `map`


SCENARIO = Scenario(
    map=MapInfo("riverlands"),
    bandit_ids=("bandit-1", "bandit-2", "bandit-3"),
    porter_id="porter-1",
    carry=Carry(object_id="crate-7", operation_ids=("carry", "deliver")),
    destination={"x": 12, "y": 4},
)


@dataclass(frozen=True)
class NpcState:
    npc_id: str
    hp: int | None  # None: out of sight at the end of the mission
    position: Place


@dataclass(frozen=True)
class SystemRecord:
    """One NPC action as the game server logs it."""

    id: str
    npc_id: str
    model_outcome: Literal["succeeded", "failed", "timeout"]  # the NPC's model call
    decision: Literal["adopted", "rejected"]  # the rule engine on the model's proposal
    operation_id: str  # what the server executed (or would have)


@dataclass(frozen=True)
class ObjectState:
    object_id: str
    kind: str
    durability: int
    position: Place


@dataclass(frozen=True)
class WorldState:
    npcs: list[NpcState]
    records: list[SystemRecord]
    objects: list[ObjectState]


def play(switches: Switches) -> WorldState:
    ford = Place(SCENARIO.map.name, 6, 5)
    camp = Place(SCENARIO.map.name, SCENARIO.destination["x"], SCENARIO.destination["y"])
    npcs = [NpcState("guard-1", 64, ford), NpcState("guard-2", 41, ford)]
    for i, bandit in enumerate(SCENARIO.bandit_ids):
        alive = i >= len(SCENARIO.bandit_ids) - switches.bandits_left_standing
        hidden = switches.fog and bandit == "bandit-3"
        npcs.append(NpcState(bandit, None if hidden else (17 if alive else 0), ford))
    npcs.append(NpcState(SCENARIO.porter_id, 80, camp))
    records = [
        SystemRecord("act-1", "guard-1", "succeeded", "adopted", "attack"),
        SystemRecord("act-2", "guard-2", "succeeded", "adopted", "attack"),
        SystemRecord("act-3", "bandit-2", "timeout", "rejected", "flee"),
        SystemRecord("act-4", "porter-1", "succeeded", "adopted", "move"),
        SystemRecord("act-5", "porter-1", "succeeded", switches.porter_decision, "carry"),
    ]
    if switches.porter_decision == "rejected":
        records.append(SystemRecord("act-6", "script-fallback", "succeeded", "adopted", "carry"))
    objects = [
        ObjectState(SCENARIO.carry.object_id, "crate", switches.crate_durability, camp),
        ObjectState("barrel-2", "barrel", 0, ford),
    ]
    return WorldState(npcs, records, objects)
