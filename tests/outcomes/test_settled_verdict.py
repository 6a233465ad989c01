"""An eval some of whose planned attempts were never sealed (a shard still missing, a run stopped
early): its fold is definite only when no outcome of the missing attempts could change it
(`settled_verdict`), and `decide_run` reads it so — a missing shard never makes a "definite
failure" the shard's own attempts would have undone. Exhaustive over small counts, without I/O."""

from __future__ import annotations

import itertools

import pytest

from niceeval_cli._errors import ExitCode
from niceeval_cli._states import AttemptState, EvalKind
from niceeval_cli.outcomes import IntervalRule, decide_run, pass_verdict, settled_verdict

PASSED, FAILED, ERRORED = AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED
RULES = ["any", "all", 0.0, 0.5, 0.6, 0.8, 1.0, IntervalRule(0.6, 0.95)]


def _every_completion(passed: int, failed: int, errored: int, missing: int, rule) -> set[AttemptState]:
    """The fold's result for each way the missing attempts could have come out."""
    seen = set()
    for outcome in itertools.product((PASSED, FAILED, ERRORED), repeat=missing):
        seen.add(pass_verdict(passed + outcome.count(PASSED), failed + outcome.count(FAILED),
                              errored + outcome.count(ERRORED), rule)[0])
    return seen


@pytest.mark.parametrize("rule", RULES, ids=str)
def test_a_verdict_is_definite_only_when_every_completion_agrees(rule) -> None:
    for passed, failed, errored, missing in itertools.product(range(4), range(4), range(3), range(4)):
        if passed + failed + errored == 0:
            continue
        possible = _every_completion(passed, failed, errored, missing, rule)
        expected = possible.pop() if len(possible) == 1 else ERRORED
        assert settled_verdict(passed, failed, errored, missing, rule) is expected, (passed, failed, errored, missing)


def test_nothing_missing_is_the_plain_fold() -> None:
    for rule, counts in itertools.product(RULES, itertools.product(range(4), range(4), range(3))):
        if sum(counts):
            assert settled_verdict(*counts, 0, rule) is pass_verdict(*counts, rule)[0]


def test_worked_cases() -> None:
    assert settled_verdict(0, 1, 0, 3, "any") is ERRORED  # one failure, three attempts that may pass
    assert settled_verdict(1, 0, 0, 3, "any") is PASSED  # a pass is a pass under "any"
    assert settled_verdict(0, 1, 0, 3, "all") is FAILED  # a failure is a failure under "all"
    assert settled_verdict(2, 0, 0, 2, "all") is ERRORED
    assert settled_verdict(4, 0, 0, 1, 0.8) is PASSED  # 4/5 ≥ 0.8 even if the last one fails
    assert settled_verdict(0, 2, 0, 2, 0.6) is FAILED  # 2/4 < 0.6 even if both missing pass


class _Row:
    def __init__(self, eval_id: str, state: AttemptState, rule: str) -> None:
        self.experiment_id, self.eval_id, self.case_id = "x", eval_id, None
        self.kind, self.state, self.pass_rule, self.gate = EvalKind.PASS, state, rule, None
        self.score = self.max_score = self.unavailable_weight = None


def test_decide_run_reads_the_missing_attempts_of_each_eval() -> None:
    """One attempt of four sealed, failed, under "any": a failure until the other three are known."""
    rows = [_Row("g", FAILED, "any")]
    plain = decide_run(rows, planned=4, setup_error=False, interrupted=False)
    assert plain.exit_code is ExitCode.FAILED  # told nothing of missing attempts: the sealed ones decide
    partial = decide_run(rows, planned=4, setup_error=False, interrupted=False, missing={("x", "g", None): 3})
    assert partial.exit_code is ExitCode.UNDECIDED and partial.evals_failed == 0
    under_all = decide_run([_Row("g", FAILED, "all")], planned=4, setup_error=False, interrupted=False,
                           missing={("x", "g", None): 3})
    assert under_all.exit_code is ExitCode.FAILED  # definite whatever the rest do
