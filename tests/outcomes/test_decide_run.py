"""`decide_run`: a run's (or a shard group's) exit code and counts from its sealed rows alone."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from niceeval_cli._errors import ExitCode
from niceeval_cli._states import AttemptState, Derived, EvalKind, GateState
from niceeval_cli.outcomes import OutcomeRow, decide_run


@dataclass(frozen=True)
class Row:
    eval_id: str
    state: str
    kind: str = "pass"
    gate: str | None = None
    pass_rule: str | None = "all"
    experiment_id: str = "default"
    case_id: str | None = None
    score: float | None = None
    max_score: float | None = None
    unavailable_weight: float | None = None
    partial_score: float | None = None


def scored(eval_id: str, gate: str = "none", state: str = "scored") -> Row:
    return Row(eval_id, state, "score", gate, None, score=None if state == "errored" else 1.0, max_score=2.0)


def decide(rows: list[Row], *, planned: int | None = None, setup: bool = False, interrupted: bool = False,
           budget: bool = False):  # type: ignore[no-untyped-def]
    typed: list[OutcomeRow] = list(rows)
    return decide_run(typed, planned=planned, setup_error=setup, interrupted=interrupted, budget_exhausted=budget)


def test_pass_rule_any_with_one_of_three_passing_is_one_passed_eval_and_exit_0() -> None:
    rows = [Row("e", s, pass_rule="any") for s in ("failed", "passed", "failed")]
    decision = decide(rows, planned=3)
    assert decision.exit_code is ExitCode.OK
    assert (decision.evals_passed, decision.evals_failed, decision.failed_evals) == (1, 0, 0)
    [e] = decision.evals
    assert (e.result, e.attempts, e.passed, e.failed) == (AttemptState.PASSED, 3, 1, 2)
    assert decision.counts == {"failed": 2, "passed": 1}
    assert decision.not_run == 0


def test_a_rate_pass_rule_is_read_from_its_stored_text() -> None:
    rows = [Row("e", s, pass_rule="0.5") for s in ("failed", "passed")]
    assert decide(rows).exit_code is ExitCode.OK
    rows = [Row("e", s, pass_rule="0.75") for s in ("failed", "passed")]
    assert decide(rows).exit_code is ExitCode.FAILED


def test_definite_failures_are_counted_by_kind() -> None:
    rows = [Row("p", "failed"), scored("s1", "failed"), scored("s2", "failed", "unrankable"), scored("s3")]
    decision = decide(rows)
    assert decision.exit_code is ExitCode.FAILED
    assert (decision.failed_evals, decision.gate_failed, decision.definite_failures) == (1, 2, 3)
    assert decision.counts[str(Derived.GATE_FAILED)] == 1  # only the scored one is "gate-failed"
    assert decision.evals_scored == 1


def test_undecided_is_exit_5_and_says_what_could_not_be_decided() -> None:
    rows = [Row("p", "errored"), scored("s1", "unavailable"), scored("s2", state="unrankable"),
            scored("s3", state="errored")]
    decision = decide(rows)
    assert decision.exit_code is ExitCode.UNDECIDED
    assert decision.undecided == {"errored-evals": 1, "errored": 1, "unrankable": 1, "gate-unavailable": 1}


def test_planned_slots_not_run_are_never_passed() -> None:
    decision = decide([Row("a", "passed")], planned=3)
    assert decision.not_run == 2
    assert decision.exit_code is ExitCode.UNDECIDED
    assert decide([Row("a", "failed")], planned=3).exit_code is ExitCode.FAILED
    assert decide([Row("a", "passed")]).not_run is None  # planned unknown


@pytest.mark.parametrize(
    ("flags", "code"),
    [({"interrupted": True, "setup": True}, ExitCode.INTERRUPTED), ({"setup": True}, ExitCode.SETUP),
     ({"budget": True}, ExitCode.UNDECIDED)],
)
def test_interrupt_beats_setup_beats_the_rest(flags: dict[str, bool], code: ExitCode) -> None:
    assert decide([Row("a", "passed")], **flags).exit_code is code


def test_a_budget_exhausted_run_with_a_definite_failure_exits_1() -> None:
    assert decide([Row("a", "failed")], budget=True).exit_code is ExitCode.FAILED


def test_several_merged_runs_fold_the_same_eval_across_shards() -> None:
    shard_1 = [Row("e", "failed", pass_rule="any")]
    shard_2 = [Row("e", "passed", pass_rule="any")]
    decision = decide(shard_1 + shard_2, planned=2)
    assert decision.exit_code is ExitCode.OK
    assert [(e.eval_id, e.result, e.attempts) for e in decision.evals] == [("e", AttemptState.PASSED, 2)]


def test_cases_of_one_eval_are_decided_apart_and_experiments_too() -> None:
    rows = [Row("e", "passed", case_id="c1"), Row("e", "failed", case_id="c2"),
            Row("e", "passed", experiment_id="other")]
    decision = decide(rows)
    assert {(e.experiment_id, e.case_id, e.result) for e in decision.evals} == {
        ("default", "c1", AttemptState.PASSED), ("default", "c2", AttemptState.FAILED),
        ("other", None, AttemptState.PASSED),
    }
    assert all(e.kind is EvalKind.PASS for e in decision.evals)
    assert GateState.NONE == "none"  # the stored words, not re-spelled


def test_the_derived_words_have_one_spelling() -> None:
    assert [str(d) for d in Derived] == ["gate-failed", "unrankable-gate-failed", "errored-gate-failed",
                                         "gate-unavailable", "not-run", "not-dispatched"]
    assert Derived.GATE_FAILED.label == "gate failed"
    assert Derived.UNRANKABLE_GATE_FAILED.label == "unrankable (gate failed)"
