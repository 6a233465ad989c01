"""One run's outcome groups are grouped eval by eval as its slots are read (no SQL sort): they must
be exactly the groups, in exactly the order, that SQL's GROUP BY gives for several runs (and for
one run when asked, `in_sql`: what `view`'s header reads)."""

from __future__ import annotations

import random

import pytest

from niceeval_cli._states import AttemptState
from niceeval_cli.store import count_passed_evals
from tests.support.random_runs import seal_random_run


@pytest.mark.parametrize("seed", range(6))
def test_one_runs_groups_are_sql_group_by_s_groups_in_its_order(project, seed):
    rng = random.Random(seed)
    earlier: list = []
    runs = [seal_random_run(project, rng, earlier) for _ in range(2)]
    for run_id in runs:
        streamed = project.store.outcome_rows(run_id)
        by_sql = project.store.outcome_rows([run_id, run_id])  # several ids: SQL groups them
        assert streamed == by_sql
        assert project.store.outcome_rows(run_id, in_sql=True) == by_sql  # what `view`'s header reads
        assert sum(g.total for g in streamed) == len(project.store.run_slots(run_id))
        assert len({(*g[:-2], g.case_id) for g in streamed}) == len(streamed)  # no group split in two
        for kwargs in ({"experiment": ["exp/a"]}, {"eval_prefix": ["evals/1"]}):
            assert project.store.outcome_rows(run_id, **kwargs) == project.store.outcome_rows([run_id, run_id],
                                                                                             **kwargs)
            assert project.store.outcome_rows(run_id, **kwargs) == project.store.outcome_rows(run_id, in_sql=True,
                                                                                             **kwargs)


def _all_passed(groups) -> bool:
    """Every attempt passed under one pass rule, not one decided by its interval (such an eval
    may still be undecided: it is listed)."""
    return all(g.kind == "pass" and g.state is AttemptState.PASSED and g.gate is None and g.case_id is None
               and g.pass_rule == groups[0].pass_rule and " until decided at " not in (g.pass_rule or "")
               for g in groups)


@pytest.mark.parametrize("seed", range(8))
def test_a_runs_passing_evals_are_counted_and_decide_and_summarise_as_their_groups_do(project, seed):
    """`run_outcome_rows` counts the evals whose every attempt passed instead of grouping them:
    the verdict, the counts and every line of the summary read the same as from all the groups."""
    from niceeval_cli import outcomes
    from niceeval_cli.reports._tally import tally
    from niceeval_cli.reports.viewmodels.run import count_line, experiment_summary, multi_attempt

    rng = random.Random(seed)
    earlier: list = []
    for passing in (0.0, 0.7, 1.0):
        run_id = seal_random_run(project, rng, earlier, passing)
        groups = project.store.outcome_rows(run_id)
        others, passed, costs = project.store.run_outcome_rows(run_id)
        assert count_passed_evals(groups) == (others, passed)  # the groups split as the rows are (view)
        assert costs == project.store.costs(run_id)  # binary fractions: sums exact in any order
        by_eval: dict = {}
        for g in groups:
            by_eval.setdefault((g.experiment_id, g.eval_id), []).append(g)
        counted = {k for k, gs in by_eval.items() if _all_passed(gs)}
        assert others == [g for g in groups if (g.experiment_id, g.eval_id) not in counted]
        assert sum(p.evals for p in passed) == len(counted)
        assert sum(p.attempts for p in passed) == sum(g.total for k in counted for g in by_eval[k])
        assert bool(passed) == bool(counted) and (passing == 0.0 or passed)
        for planned in (None, sum(g.total for g in groups), sum(g.total for g in groups) + 3):
            full = outcomes.decide_run(groups, counts=[g.total for g in groups], planned=planned,
                                       setup_error=False, interrupted=False, per_eval=False)
            split = outcomes.decide_run(others, counts=[g.total for g in others], planned=planned,
                                        setup_error=False, interrupted=False, per_eval=False, passed_evals=passed)
            assert split == full
        experiments = ["exp/a", "exp/b", "exp/c"]
        whole, part = tally(groups, experiments), tally(others, experiments, passed)
        assert (part.attempts, part.reused, part.words, part.rules_known) == (
            whole.attempts, whole.reused, whole.words, whole.rules_known)
        for code in (0, 1, 5):
            assert count_line(part, code) == count_line(whole, code)
        assert [experiment_summary(e) for e in part.experiments] == [experiment_summary(e) for e in whole.experiments]
        assert multi_attempt(part) == multi_attempt(whole)
    with pytest.raises(ValueError, match="per_eval"):
        outcomes.decide_run([], planned=None, setup_error=False, interrupted=False, passed_evals=passed)
