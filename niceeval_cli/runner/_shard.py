"""Shards of a run (scale.md): which planned slots this shard executes, and what its run row
records about the whole plan. The stable hash itself lives in the low module `_shards`, so the
store can use it in SQL too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._shards import ShardSpec, ShardSyntaxError, parse_shard, plan_digest, shard_of, slot_hash
from ._plan import PlannedSlot

__all__ = [
    "ShardLayout",
    "ShardSpec",
    "ShardSyntaxError",
    "layout_of",
    "parse_shard",
    "plan_digest",
    "shard_of",
    "slot_hash",
]


@dataclass(frozen=True)
class ShardLayout:
    """The whole plan and this run's part of it."""

    slots: Sequence[PlannedSlot]  # what this run executes or reuses (without --shard: the plan itself)
    planned_total: int  # slots in the full plan (every shard's); the plan itself is not kept
    digest: str | None  # shard runs only: shards of one group must share it (a plain run has none)
    shard: ShardSpec | None
    group_id: str | None


def layout_of(slots: Sequence[PlannedSlot], shard: ShardSpec | None, group_id: str | None) -> ShardLayout:
    """Partition the full plan; without `--shard` the run is the whole plan, has no group and
    no digest (scale.md records it on shard runs, where it tells plans apart; a plain run would
    hash every slot's ids for nobody to compare)."""
    if shard is None:
        return ShardLayout(slots, len(slots), None, None, None)  # not copied: the plan is the run
    plan = [(s.experiment.id, s.eval.id, s.ordinal) for s in slots]  # the ids only, while partitioning
    digest = plan_digest(plan)
    mine = tuple(s for s, key in zip(slots, plan, strict=True) if shard_of(*key, shard.count) == shard.index)
    return ShardLayout(mine, len(plan), digest, shard, group_id or digest)
