"""The NPC-world adapter: plays the mission, exposes its end state as facts, offers `t.hp`,
`t.system_one` and `t.objects`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from examples.npc_world._world import ObjectState, Switches, SystemRecord, play
from niceeval_cli import AdapterContext, Fact, Material, define_adapter
from niceeval_cli.expect import (
    BooleanMatch,
    and_,
    define_context_match,
    define_material_match,
    every,
    filter_where,
    map_each,
    some,
)


@dataclass(frozen=True)
class Npc:
    npc_id: str
    hp: Fact[int]  # unavailable when the NPC was out of sight: unknown, never 0


@dataclass(frozen=True)
class NpcFacts:
    npcs: Material[Npc]
    system: Material[SystemRecord]
    objects: Material[ObjectState]


async def observe(ctx: AdapterContext) -> NpcFacts:
    state = play(Switches.model_validate(dict(ctx.experiment.options)))
    npcs = [
        Npc(n.npc_id, Fact.available(n.hp) if n.hp is not None else Fact.unavailable("npc-out-of-sight"))
        for n in state.npcs
    ]
    return NpcFacts(Material.complete(npcs), Material.complete(state.records), Material.complete(state.objects))


def _assertions(check: Any) -> dict[str, Any]:
    def hp(selector: BooleanMatch, aggregate: BooleanMatch) -> Any:
        """`aggregate` over the hp of the NPCs `selector` picks (e.g. count_where(equals(0), equals(3)))."""
        return check(define_context_match(
            name="hp", read=lambda f: f.npcs, match=filter_where(selector, map_each(lambda n: n.hp, aggregate))))

    def system_one(match: BooleanMatch) -> Any:
        """One system record (one action) satisfies every condition of `match` at once."""
        return check(define_material_match(name="system-one", read=lambda f: f.system, match=match))

    def objects(selector: BooleanMatch, match: BooleanMatch) -> Any:
        """The objects `selector` picks exist, and every one of them satisfies `match`."""
        return check(define_context_match(
            name="objects", read=lambda f: f.objects, match=filter_where(selector, and_(some(match), every(match)))))

    return {"hp": hp, "system_one": system_one, "objects": objects}


def _source_version() -> str:
    """Editing the simulated world changes the adapter version, hence the fingerprint."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for name in ("_world.py", "_matches.py", "_adapter.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:12]


npc_world = define_adapter(name="npc-world", create=observe, assertions=_assertions, version=_source_version())
