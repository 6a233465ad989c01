"""One run's outcome groups are grouped eval by eval as its slots are read (no SQL sort): they must
be exactly the groups, in exactly the order, that SQL's GROUP BY gives for several runs."""

from __future__ import annotations

import random

import pytest

from niceeval_cli._states import AttemptState, GateState, PlanReason, Relation
from niceeval_cli.store import SlotRecord

_PASS = ("passed", "failed", "errored")
_SCORE = ("scored", "unrankable", "errored")


def _seal_random_run(project, rng: random.Random, earlier: list) -> str:
    run_id = project.begin_run(("exp/a", "exp/b", "exp/c"))
    references = []
    for experiment in ("exp/b", "exp/c", "exp/a"):
        # ids out of order, some absent; exp/b's last eval is exp/c's only one, so they meet in order
        for n in [99] if experiment == "exp/c" else [*rng.sample(range(40), 25), 99]:
            eval_id = f"evals/{n:02d}"
            score_style = n % 3 == 0
            case = rng.choice([None, None, "c1", "c2"])
            for ordinal in range(rng.choice([1, 1, 2, 3, 5])):
                if earlier and rng.random() < 0.2:
                    references.append(SlotRecord(run_id, experiment, eval_id, ordinal, rng.choice(earlier).id,
                                                 Relation.REFERENCE, PlanReason.REUSED, rng.choice(["any", "all"])))
                    continue
                state = rng.choice(_SCORE if score_style else _PASS)
                changes = {}
                if score_style:
                    changes = {"score": rng.choice([None, 1.0, 2.5]), "max_score": rng.choice([None, 3.0]),
                               "gate": rng.choice([GateState.NONE, GateState.PASSED, GateState.FAILED, None]),
                               "unavailable_weight": rng.choice([None, 0.5]),
                               "partial_score": rng.choice([None, 0.25]), "kind": "score"}
                attempt = project.attempt(run_id, experiment, eval_id, ordinal=ordinal, state=AttemptState(state),
                                          case_id=case, **changes)
                project.seal(attempt)
                earlier.append(attempt)
    if references:
        project.store.add_reference_slots(references)
    return run_id


@pytest.mark.parametrize("seed", range(6))
def test_one_runs_groups_are_sql_group_by_s_groups_in_its_order(project, seed):
    rng = random.Random(seed)
    earlier: list = []
    runs = [_seal_random_run(project, rng, earlier) for _ in range(2)]
    for run_id in runs:
        streamed = project.store.outcome_rows(run_id)
        by_sql = project.store.outcome_rows([run_id, run_id])  # several ids: SQL groups them
        assert streamed == by_sql
        assert sum(g.total for g in streamed) == len(project.store.run_slots(run_id))
        assert len({g[:-2] + (g.case_id,) for g in streamed}) == len(streamed)  # no group split in two
        for kwargs in ({"experiment": ["exp/a"]}, {"eval_prefix": ["evals/1"]}):
            assert project.store.outcome_rows(run_id, **kwargs) == project.store.outcome_rows([run_id, run_id],
                                                                                             **kwargs)
