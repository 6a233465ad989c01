"""Random sealed runs for tests that hold two ways of reading a run together (its outcome groups
grouped in Python or by SQL, counted or listed, the view's header either way)."""

from __future__ import annotations

import random

from niceeval_cli._states import AttemptState, GateState, PlanReason, Relation
from niceeval_cli.store import SlotRecord
from tests.support.records import SealedStore

_PASS = ("passed", "failed", "errored")
_SCORE = ("scored", "unrankable", "errored")


def seal_random_run(project: SealedStore, rng: random.Random, earlier: list, passing: float = 0.0) -> str:
    """A run of three experiments with evals out of id order, pass- and score-style attempts in
    every state, gates, cases, pass rules (NULL too), costs, and slots reusing `earlier` attempts
    (which it extends); `passing`: the share of evals whose every attempt passes."""
    run_id = project.begin_run(("exp/a", "exp/b", "exp/c"))
    references = []
    for experiment in ("exp/b", "exp/c", "exp/a"):
        # ids out of order, some absent; exp/b's last eval is exp/c's only one, so they meet in order
        for n in [99] if experiment == "exp/c" else [*rng.sample(range(40), 25), 99]:
            eval_id = f"evals/{n:02d}"
            all_pass = rng.random() < passing
            score_style = n % 3 == 0 and not all_pass
            case = None if all_pass and rng.random() < 0.8 else rng.choice([None, None, "c1", "c2"])
            rule = rng.choice(["any", "all", "0.5", "0.5 until decided at 0.95", None])
            for ordinal in range(rng.choice([1, 1, 2, 3, 5])):
                # a reused attempt fills the same slot it filled before (same experiment, eval, ordinal)
                slot = (experiment, eval_id, ordinal)
                before = [a for a in earlier
                          if (a.experiment_id, a.eval_id, a.ordinal) == slot and (a.kind == "score") == score_style]
                if before and rng.random() < 0.5:
                    # now and then under another pass rule than the eval's other slots (the store allows it)
                    references.append(SlotRecord(run_id, experiment, eval_id, ordinal, rng.choice(before).id,
                                                 Relation.REFERENCE, PlanReason.REUSED,
                                                 rule if rng.random() < 0.8 else "all"))
                    continue
                state = "passed" if all_pass else rng.choice(_SCORE if score_style else _PASS)
                changes = {}
                if score_style:
                    changes = {"score": rng.choice([None, 1.0, 2.5]) if state != "scored" else rng.choice([1.0, 2.5]),
                               "max_score": rng.choice([None, 3.0]) if state != "scored" else 3.0,
                               "gate": rng.choice([GateState.NONE, GateState.PASSED, GateState.FAILED, None]),
                               "unavailable_weight": rng.choice([None, 0.5]),
                               "partial_score": rng.choice([None, 0.25]), "kind": "score"}
                costs = {"cost_usd": rng.choice([None, None, 0.25, 0.125]),
                         "estimated_cost_usd": rng.choice([None, 0.5, 0.0625])}
                attempt = project.attempt(run_id, experiment, eval_id, ordinal=ordinal, state=AttemptState(state),
                                          case_id=case, **changes, **costs)
                project.store.seal_attempt(attempt, [], project.slot(attempt)._replace(pass_rule=rule))
                earlier.append(attempt)
    if references:
        project.store.add_reference_slots(references)
    return run_id
