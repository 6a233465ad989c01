"""The seed's directions scenario ("A asks B for directions"), checkpoints 1 and 3, over a tiny
simulated grid world: checkpoint 1 is a gate on one utterance satisfying actor, recipient and
delivery; checkpoint 3 records model choice, execution and arrival separately, and independent
completion is a gate that earns 5 points. Earned points survive a failed gate; unavailable
evidence never becomes a zero."""

from __future__ import annotations

import pytest

WORLD = '''
"""A 4×2 grid: A starts at (0, 0) and does not know the route; B waits at (3, 1) and does."""

from dataclasses import dataclass

from niceeval_cli import Fact, Material, define_adapter
from niceeval_cli.expect import define_material_match, equals, is_true, map_value


@dataclass(frozen=True)
class Speech:
    actor: str
    recipient: str
    text: str
    delivered: bool


@dataclass(frozen=True)
class Action:
    id: int
    actor: str
    kind: str
    origin: str  # "model": A's model chose it · "player": a human moved A
    executed: bool
    position: tuple
    met: bool  # the application linked the meeting with B to this action


@dataclass(frozen=True)
class World:
    speeches: Material
    actions: Material
    records_correlated: Fact


def simulate(variant):
    """Run the application until the task ends; return what was observed."""
    b_position = (3, 1)
    a_position = (0, 0)
    speeches = []
    if variant == "wrong-recipient":  # the request reached C; the one meant for B was never heard
        speeches.append(Speech("A", "C", "Which way to the well?", True))
        speeches.append(Speech("A", "B", "Which way to the well?", False))
    else:
        speeches.append(Speech("A", "B", "Which way to the well?", True))
    speeches.append(Speech("B", "A", "Three steps east, then one north.", True))
    origin = "player" if variant == "player-moved" else "model"
    actions = []
    for step, (dx, dy) in enumerate([(1, 0), (1, 0), (1, 0), (0, 1)]):
        a_position = (a_position[0] + dx, a_position[1] + dy)
        actions.append(Action(step, "A", "move", origin, True, a_position, a_position == b_position))
    action_log = Material.complete(actions)
    if variant == "action-log-truncated":
        action_log = Material.partial(actions[:2], "action-log-truncated")
    correlated = Fact.available(True)
    if variant == "records-uncorrelated":
        correlated = Fact.unavailable("records-uncorrelated")
    return World(Material.complete(speeches), action_log, correlated)


def field(name, inner):
    return map_value(name, lambda item: getattr(item, name), inner)


adapter = define_adapter(
    name="directions",
    create=lambda ctx: simulate(ctx.experiment.options["variant"]),
    assertions=lambda check: {
        "said": lambda match: check(define_material_match(
            name="speeches", read=lambda world: world.speeches, match=match)),
        "acted": lambda match: check(define_material_match(
            name="actions", read=lambda world: world.actions, match=match)),
    },
)
'''

EVAL_MODULE = """
from niceeval_cli.expect import and_, equals, is_true
from world import adapter, field


@adapter.define_score_eval(description="A asks B for directions, then reaches B independently")
async def ask_for_directions(t):
    # Checkpoint 1: the same utterance satisfies actor, recipient and delivery.
    t.said(and_(field("actor", equals("A")), field("recipient", equals("B")), field("delivered", is_true()))) \\
        .gate().label("A delivered a request for directions to B")

    # Prerequisite: records complete and correlated, else stop the checks that depend on them.
    await t.check(t.facts.records_correlated, is_true()).label("Records correlate").or_stop()

    # Checkpoint 3: three facts recorded separately, then independent completion (gate + 5 points).
    a_moves = and_(field("actor", equals("A")), field("kind", equals("move")))
    t.acted(and_(a_moves, field("origin", equals("model")))).label("A's model chose movement")
    t.acted(and_(a_moves, field("executed", is_true()))).label("The application executed it")
    t.acted(and_(field("actor", equals("A")), field("met", is_true()))).label("A arrived and met B")
    t.acted(and_(a_moves, field("origin", equals("model")), field("executed", is_true()), field("met", is_true()))) \\
        .gate().score(5).label("Independent completion")
"""

VARIANTS = ["independent", "player-moved", "wrong-recipient", "action-log-truncated", "records-uncorrelated"]

CHECKPOINT_1 = "A delivered a request for directions to B"
COMPLETION = "Independent completion"


@pytest.fixture(scope="module")
def directions(tmp_path_factory, forget_project):
    from tests.support.project import Project

    project = Project(tmp_path_factory.mktemp("directions") / "proj", in_process=True)
    project.write("niceeval.toml", "".join(
        f'[experiments."{v}".options]\nvariant = "{v}"\n' for v in VARIANTS
    ))
    project.write("world.py", WORLD)
    project.write("evals/directions.py", EVAL_MODULE)
    run = project.run()
    attempts = {a["experiment_id"]: a for a in project.attempts()}
    results: dict[str, dict[str, dict]] = {}
    for row in project.assertions():
        results.setdefault(row["experiment_id"], {})[row["label"]] = row
    forget_project(project)
    return run, attempts, results


def test_independent_completion_scores_five_of_five_with_every_gate_passed(directions):
    _, attempts, results = directions
    attempt, rows = attempts["independent"], results["independent"]
    assert (attempt["state"], attempt["gate"], attempt["score"], attempt["max_score"]) == ("scored", "passed", 5, 5)
    assert all(r["state"] == "matched" for r in rows.values()), rows
    assert rows[CHECKPOINT_1]["role"] == "gate"
    assert rows[COMPLETION]["role"] == "gate+score"
    assert rows[COMPLETION]["contribution"] == 5
    for label in ("A's model chose movement", "The application executed it", "A arrived and met B"):
        assert rows[label]["role"] == "record"


def test_player_movement_does_not_count_as_independent_completion(directions):
    _, attempts, results = directions
    attempt, rows = attempts["player-moved"], results["player-moved"]
    assert rows["A's model chose movement"]["state"] == "mismatched"
    assert rows["The application executed it"]["state"] == "matched"
    assert rows["A arrived and met B"]["state"] == "matched"
    assert rows[COMPLETION]["state"] == "mismatched"
    assert rows[COMPLETION]["contribution"] == 0
    assert (attempt["state"], attempt["gate"], attempt["score"], attempt["max_score"]) == ("scored", "failed", 0, 5)


def test_checkpoint_one_needs_one_utterance_satisfying_all_conditions(directions):
    _, attempts, results = directions
    attempt, rows = attempts["wrong-recipient"], results["wrong-recipient"]
    # A spoke, something was delivered and B was addressed — but never in the same utterance.
    assert rows[CHECKPOINT_1]["state"] == "mismatched"
    assert rows[COMPLETION]["state"] == "matched"
    assert (attempt["state"], attempt["gate"]) == ("scored", "failed")
    assert attempt["score"] == 5  # earned points are kept when a gate fails


def test_a_truncated_action_log_leaves_completion_unavailable_not_zero(directions):
    _, attempts, results = directions
    attempt, rows = attempts["action-log-truncated"], results["action-log-truncated"]
    completion = rows[COMPLETION]
    assert (completion["state"], completion["reason"]) == ("unavailable", "action-log-truncated")
    assert completion["contribution"] is None
    assert rows["A's model chose movement"]["state"] == "matched"  # seen in what was observed
    assert attempt["state"] == "unrankable"
    assert attempt["gate"] == "unavailable"
    assert (attempt["max_score"], attempt["unavailable_weight"]) == (5, 5)


def test_uncorrelated_records_stop_the_dependent_checks(directions):
    _, attempts, results = directions
    attempt, rows = attempts["records-uncorrelated"], results["records-uncorrelated"]
    assert set(rows) == {CHECKPOINT_1, "Records correlate"}
    assert rows[CHECKPOINT_1]["state"] == "matched"
    assert (rows["Records correlate"]["state"], rows["Records correlate"]["reason"]) == (
        "unavailable", "records-uncorrelated",
    )
    assert rows["Records correlate"]["or_stop"] in (1, True)
    assert attempt["state"] == "unrankable"
    assert "records-uncorrelated" in attempt["reason"]
    assert attempt["stop_cause"]


def test_the_run_exits_1_because_gates_failed(directions):
    run, attempts, _ = directions
    assert set(attempts) == set(VARIANTS)
    assert {a["eval_id"] for a in attempts.values()} == {"directions"}
    assert run.exit_code == 1
