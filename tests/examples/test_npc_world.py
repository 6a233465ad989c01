"""examples/npc_world: the seed's domain matches and its three assertions (no judge involved)."""

from __future__ import annotations

from typing import Any

HP = "Three bandits at 0 hp"
SYSTEM_ONE = "The porter's own carry action"
CRATE = "Crate delivered intact"


def _outcome(project: Any, experiment: str) -> tuple[Any, ...]:
    a = project.attempt(experiment)
    return a["state"], a["gate"], a["score"], a["max_score"]


def test_the_mission_as_designed_passes_both_gates_and_scores_50(examples: Any) -> None:
    run = examples.run("-e", "npc_world", "-e", "npc_world/")
    assert run.exit_code == 5, run.output  # npc_world/fog (the group npc_world/) leaves a gate undecided
    assert _outcome(examples, "npc_world") == ("scored", "passed", 50, 50)
    rows = examples.assertions("npc_world")
    assert {k: (r["role"], r["state"]) for k, r in rows.items()} == {
        HP: ("gate", "matched"), SYSTEM_ONE: ("gate", "matched"), CRATE: ("score", "matched")}


def test_an_npc_out_of_sight_makes_the_count_unknown_not_wrong(examples: Any) -> None:
    examples.run("-e", "npc_world/fog")
    assert _outcome(examples, "npc_world/fog") == ("scored", "unavailable", 50, 50)
    hp = examples.assertions("npc_world/fog")[HP]
    assert (hp["state"], hp["reason"]) == ("unavailable", "count-uncertain")
    assert "[2, 3]" in hp["explanation"] and "npc-out-of-sight" in hp["explanation"]


def test_a_surviving_bandit_fails_the_count_gate(examples: Any) -> None:
    examples.add_experiment("npc_world/survivor", "npc_world/", bandits_left_standing=1)
    run = examples.run("-e", "npc_world/survivor")
    assert run.exit_code == 1, run.output
    assert _outcome(examples, "npc_world/survivor") == ("scored", "failed", 50, 50)
    assert examples.assertions("npc_world/survivor")[HP]["state"] == "mismatched"


def test_conditions_met_by_different_actions_do_not_satisfy_system_one(examples: Any) -> None:
    # The porter's model succeeded on "carry" (rejected) and was adopted on "move": no single
    # action holds all four conditions, although each holds on some action.
    examples.add_experiment("npc_world/rejected", "npc_world/", porter_decision="rejected")
    examples.run("-e", "npc_world/rejected")
    assert _outcome(examples, "npc_world/rejected") == ("scored", "failed", 50, 50)  # points kept
    assert examples.assertions("npc_world/rejected")[SYSTEM_ONE]["state"] == "mismatched"


def test_a_smashed_crate_earns_nothing_but_fails_no_gate(examples: Any) -> None:
    examples.add_experiment("npc_world/smashed", "npc_world/", crate_durability=0)
    run = examples.run("-e", "npc_world/smashed")
    assert run.exit_code == 0, run.output
    assert _outcome(examples, "npc_world/smashed") == ("scored", "passed", 0, 50)
    crate = examples.assertions("npc_world/smashed")[CRATE]
    assert (crate["state"], crate["contribution"], crate["weight"]) == ("mismatched", 0, 50)
