"""Seed, first part: business facts checked with domain matches and plain arithmetic.

Mission "Bandit raid at the ford" (see `_world.py`). Two gates decide pass/fail; the crate
delivery earns up to 50 points.
"""

from examples.npc_world._adapter import npc_world
from examples.npc_world._matches import (
    decision_match,
    durability_match,
    model_match,
    npc_match,
    object_match,
    operation_match,
    position_match,
)
from examples.npc_world._world import SCENARIO
from niceeval_cli.expect import and_, count_where, equals, greater_than

scenario = SCENARIO
ids = scenario.bandit_ids
id = scenario.porter_id
operation_ids = scenario.carry.operation_ids


@npc_world.define_score_eval(description="The bandits are down and the porter delivered the crate intact")
def bandit_raid(t):
    # Exactly three of the selected characters have zero health.
    t.hp(npc_match(ids=ids), count_where(equals(0), equals(3))).gate().label("Three bandits at 0 hp")

    # Identity, model outcome, adopted decision, and operation type must match on the same action.
    t.system_one(and_(
        npc_match(id=id),
        model_match(outcome="succeeded"),
        decision_match(outcome="adopted"),
        operation_match(ids=operation_ids),
    )).gate().label("The porter's own carry action")

    # Select the crate and require remaining durability and the destination position.
    t.objects(
        object_match(id=scenario.carry.object_id),
        and_(
            durability_match(greater_than(0)),
            position_match(map=scenario.map.name, **scenario.destination),
        ),
    ).score(50).label("Crate delivered intact")
