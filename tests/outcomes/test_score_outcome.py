"""Score-style (`define_score_eval`) score, state and gate (outcomes.md, "Score-style")."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from niceeval_cli._records import AssertionResult
from niceeval_cli._states import AssertionState, AttemptReason, AttemptState, EvalKind, GateState, Role
from niceeval_cli.outcomes import EXECUTION_REASONS, AttemptOutcome, Execution, decide_attempt

S = AssertionState
SCORED, UNRANKABLE, ERRORED = AttemptState.SCORED, AttemptState.UNRANKABLE, AttemptState.ERRORED
OK = Execution()
Make = Callable[..., AssertionResult]  # the `entry` fixture (conftest.py)

# One entry with weight 4 and measurement 0.5: what a scoring entry earns in each state.
EARNED: dict[AssertionState, float | None] = {
    S.MATCHED: 4.0,
    S.MISMATCHED: 0.0,
    S.MEASURED: 2.0,
    S.MET: 2.0,
    S.BELOW: 2.0,
    S.UNAVAILABLE: None,
    S.ERRORED: None,
}
# What a gate-role entry in each state makes of the attempt's gate.
GATE: dict[AssertionState, GateState] = {
    S.MATCHED: GateState.PASSED,
    S.MISMATCHED: GateState.FAILED,
    S.MEASURED: GateState.PASSED,
    S.MET: GateState.PASSED,
    S.BELOW: GateState.FAILED,
    S.UNAVAILABLE: GateState.UNAVAILABLE,
    S.ERRORED: GateState.UNAVAILABLE,  # an evaluator that failed did not let the gate pass
}
SCORING_ROLES = {Role.SCORE, Role.GATE_SCORE}
GATE_ROLES = {Role.GATE, Role.GATE_SCORE}


def test_tables_cover_every_state() -> None:
    assert set(EARNED) == set(AssertionState) == set(GATE)


def _expected(role: Role, state: AssertionState, or_stop: bool) -> AttemptOutcome:
    scoring = role in SCORING_ROLES
    max_score = 4.0 if scoring else 0.0
    gate = GATE[state] if role in GATE_ROLES else GateState.NONE
    if state is S.ERRORED:
        return AttemptOutcome(ERRORED, "assertion-errored", None, max_score, 0.0, 0.0, gate, None)
    if state is S.UNAVAILABLE and (scoring or or_stop):
        return AttemptOutcome(UNRANKABLE, "judge-timeout", 0.0, max_score, max_score, None, gate, None)
    earned = EARNED[state] if scoring else None
    return AttemptOutcome(SCORED, None, earned or 0.0, max_score, 0.0, None, gate, None)


@pytest.mark.parametrize(
    ("role", "match_kind", "or_stop"), list(itertools.product(Role, ["boolean", "score"], [False, True]))
)
@pytest.mark.parametrize("state", list(AssertionState))
def test_every_state_role_and_kind_combination(
    entry: Make, state: AssertionState, role: Role, match_kind: str, or_stop: bool
) -> None:
    e = entry(
        state,
        role,
        weight=4.0,
        measurement=0.5,
        or_stop=or_stop,
        match_kind=match_kind,
        reason="judge-timeout",
    )
    assert decide_attempt(EvalKind.SCORE, [e], OK) == _expected(role, state, or_stop)


def test_no_scoring_entries_is_a_valid_zero() -> None:
    outcome = decide_attempt(EvalKind.SCORE, [], OK)
    assert (outcome.state, outcome.score, outcome.max_score) == (SCORED, 0.0, 0.0)
    assert outcome.unavailable_weight == 0.0
    assert outcome.gate is GateState.NONE


def test_zero_earned_is_scored_not_unrankable(entry: Make) -> None:
    outcome = decide_attempt(EvalKind.SCORE, [entry(S.MISMATCHED, Role.SCORE, weight=10.0)], OK)
    assert (outcome.state, outcome.score, outcome.max_score) == (SCORED, 0.0, 10.0)


def test_seed_scenario_with_one_judge_unavailable_is_unrankable(entry: Make) -> None:
    # "A asks B for directions": expression 2 + information 3 + independent completion 5 → 0..10.
    entries = [
        entry(S.MATCHED, Role.GATE, label="Checkpoint 1: request delivered"),
        entry(S.UNAVAILABLE, Role.SCORE, weight=2.0, reason="judge-key-unresolved", label="Expression"),
        entry(S.MEASURED, Role.SCORE, weight=3.0, measurement=1.0, label="Information"),
        entry(S.MATCHED, Role.GATE_SCORE, weight=5.0, label="Independent completion"),
    ]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert outcome.state is UNRANKABLE
    assert outcome.reason == "judge-key-unresolved"
    assert (outcome.score, outcome.max_score, outcome.unavailable_weight) == (8.0, 10.0, 2.0)
    assert outcome.gate is GateState.PASSED
    assert outcome.partial_score is None


def test_45_of_100_with_50_unavailable_is_never_a_complete_zero_or_45_of_100(entry: Make) -> None:
    entries = [
        entry(S.MATCHED, Role.SCORE, weight=5.0, label="Participation"),
        entry(S.MATCHED, Role.GATE, label="At least one delivery"),
        entry(S.MEASURED, Role.SCORE, weight=45.0, measurement=8 / 9, label="Expression quality"),
        entry(S.UNAVAILABLE, Role.SCORE, weight=50.0, reason="usage-unreported", label="Completion duration"),
        entry(S.MATCHED, Role.GATE, label="Usage limit"),
        entry(S.MATCHED, Role.GATE, label="Runtime limit"),
    ]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert (outcome.score, outcome.max_score, outcome.unavailable_weight) == (45.0, 100.0, 50.0)
    assert outcome.state is UNRANKABLE
    assert outcome.reason == "usage-unreported"


def test_earned_points_are_kept_when_a_gate_fails(entry: Make) -> None:
    entries = [
        entry(S.MATCHED, Role.SCORE, weight=5.0),
        entry(S.MISMATCHED, Role.GATE, label="At least one delivery"),
        entry(S.MEASURED, Role.SCORE, weight=45.0, measurement=0.6),
    ]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert (outcome.state, outcome.score, outcome.max_score) == (SCORED, 32.0, 50.0)
    assert outcome.gate is GateState.FAILED


def test_a_failing_gate_that_also_scores_earns_zero_and_fails_the_gate(entry: Make) -> None:
    entries = [entry(S.MISMATCHED, Role.GATE_SCORE, weight=5.0), entry(S.MATCHED, Role.SCORE, weight=5.0)]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert (outcome.score, outcome.max_score, outcome.gate) == (5.0, 10.0, GateState.FAILED)


def test_gate_failed_outranks_gate_unavailable(entry: Make) -> None:
    entries = [
        entry(S.UNAVAILABLE, Role.GATE, reason="usage-unreported"),
        entry(S.BELOW, Role.GATE, measurement=0.2),
    ]
    assert decide_attempt(EvalKind.SCORE, entries, OK).gate is GateState.FAILED


def test_gate_unavailable_alone_keeps_the_attempt_rankable(entry: Make) -> None:
    entries = [
        entry(S.UNAVAILABLE, Role.GATE, reason="usage-unreported"),
        entry(S.MATCHED, Role.SCORE, weight=2.0),
    ]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert (outcome.state, outcome.score, outcome.gate) == (SCORED, 2.0, GateState.UNAVAILABLE)


def test_every_gate_must_pass_for_the_gate_to_pass(entry: Make) -> None:
    entries = [entry(S.MATCHED, Role.GATE), entry(S.MET, Role.GATE_SCORE, weight=1.0, measurement=0.9)]
    assert decide_attempt(EvalKind.SCORE, entries, OK).gate is GateState.PASSED


def test_ungated_unavailable_record_does_not_block_ranking(entry: Make) -> None:
    entries = [entry(S.UNAVAILABLE, reason="judge-timeout"), entry(S.MATCHED, Role.SCORE, weight=3.0)]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert (outcome.state, outcome.score, outcome.gate) == (SCORED, 3.0, GateState.NONE)


def test_unrankable_lists_each_distinct_reason_once_in_registration_order(entry: Make) -> None:
    entries = [
        entry(S.UNAVAILABLE, Role.SCORE, weight=1.0, reason="judge-key-unresolved"),
        entry(S.UNAVAILABLE, Role.SCORE, weight=1.0, reason="capture-limit-exceeded"),
        entry(S.UNAVAILABLE, Role.SCORE, weight=1.0, reason="judge-key-unresolved"),
        entry(S.UNAVAILABLE, Role.RECORD, or_stop=True, reason="cancelled"),
        entry(S.UNAVAILABLE, Role.GATE, reason="usage-unreported"),  # gate only: not a ranking reason
    ]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert outcome.reason == "judge-key-unresolved, capture-limit-exceeded, cancelled"
    assert outcome.unavailable_weight == 3.0


def test_unrankable_without_stated_reason_says_evidence_unavailable(entry: Make) -> None:
    outcome = decide_attempt(EvalKind.SCORE, [entry(S.UNAVAILABLE, Role.SCORE, weight=1.0)], OK)
    assert (outcome.state, outcome.reason) == (UNRANKABLE, "evidence-unavailable")


def test_or_stop_keeps_the_earned_score_and_records_the_stop_cause(entry: Make) -> None:
    entries = [
        entry(S.MATCHED, Role.SCORE, weight=5.0),
        entry(S.MISMATCHED, Role.RECORD, or_stop=True, label="Prerequisite"),
    ]
    outcome = decide_attempt(EvalKind.SCORE, entries, Execution(stop_cause="Prerequisite: mismatched"))
    assert (outcome.state, outcome.score, outcome.max_score) == (SCORED, 5.0, 5.0)
    assert outcome.stop_cause == "Prerequisite: mismatched"


def test_errored_attempt_has_no_score_but_keeps_the_partial_score(entry: Make) -> None:
    entries = [
        entry(S.MATCHED, Role.SCORE, weight=5.0),
        entry(S.UNAVAILABLE, Role.SCORE, weight=3.0, reason="judge-timeout"),
        entry(S.MISMATCHED, Role.GATE),
    ]
    execution = Execution(reason=AttemptReason.EXCEPTION, error="KeyError: 'speech'")
    outcome = decide_attempt(EvalKind.SCORE, entries, execution)
    assert outcome == AttemptOutcome(
        state=ERRORED,
        reason="exception",
        score=None,
        max_score=8.0,
        unavailable_weight=3.0,
        partial_score=5.0,
        gate=GateState.FAILED,  # the gate is decided for errored attempts too
        stop_cause=None,
        error="KeyError: 'speech'",
    )


def test_errored_scoring_entry_errors_the_attempt_with_assertion_errored(entry: Make) -> None:
    entries = [
        entry(S.MATCHED, Role.SCORE, weight=2.0),
        entry(S.ERRORED, Role.SCORE, weight=3.0, reason="judge-invalid-response"),
        entry(S.UNAVAILABLE, Role.SCORE, weight=4.0, reason="judge-timeout"),
    ]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert (outcome.state, outcome.reason, outcome.error) == (ERRORED, "assertion-errored", None)
    assert (outcome.score, outcome.partial_score, outcome.max_score) == (None, 2.0, 9.0)


@pytest.mark.parametrize("reason", sorted(EXECUTION_REASONS))
def test_abnormal_execution_errors_with_its_own_reason(entry: Make, reason: AttemptReason) -> None:
    entries = [entry(S.MATCHED, Role.SCORE, weight=2.0), entry(S.ERRORED, reason="match-error")]
    outcome = decide_attempt(EvalKind.SCORE, entries, Execution(reason=reason))
    assert (outcome.state, outcome.reason, outcome.partial_score) == (ERRORED, str(reason), 2.0)


def test_sums_are_rounded_to_avoid_float_noise(entry: Make) -> None:
    entries = [
        entry(S.MEASURED, Role.SCORE, weight=1.0, measurement=0.1),
        entry(S.MEASURED, Role.SCORE, weight=1.0, measurement=0.2),
        entry(S.UNAVAILABLE, Role.SCORE, weight=0.1, reason="judge-timeout"),
        entry(S.UNAVAILABLE, Role.SCORE, weight=0.2, reason="judge-timeout"),
    ]
    outcome = decide_attempt(EvalKind.SCORE, entries, OK)
    assert (outcome.score, outcome.max_score, outcome.unavailable_weight) == (0.3, 2.3, 0.3)


def test_scoring_entry_without_weight_is_a_programming_error(entry: Make) -> None:
    with pytest.raises(ValueError, match="weight"):
        decide_attempt(EvalKind.SCORE, [entry(S.UNAVAILABLE, Role.SCORE, reason="judge-timeout")], OK)


def test_kind_may_be_the_stored_string(entry: Make) -> None:
    assert decide_attempt("score", [entry(S.MATCHED, Role.SCORE, weight=2.0)], OK).score == 2.0


@pytest.mark.parametrize("reason", [AttemptReason.ASSERTION_ERRORED, AttemptReason.EVIDENCE_UNAVAILABLE])
def test_reasons_decided_from_entries_are_not_execution_reasons(reason: AttemptReason) -> None:
    with pytest.raises(ValueError, match="decided from the assertion results"):
        Execution(reason=reason)


def test_execution_error_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="needs a reason"):
        Execution(error="ValueError: boom")


def test_execution_reason_may_be_the_stored_string() -> None:
    assert Execution(reason="timeout").reason is AttemptReason.TIMEOUT  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("completion", "expression", "expected"),
    [
        (S.MATCHED, S.MEASURED, (SCORED, 9.0, 10.0, 0.0, GateState.PASSED)),
        (S.MISMATCHED, S.MEASURED, (SCORED, 4.0, 10.0, 0.0, GateState.FAILED)),
        (S.MATCHED, S.UNAVAILABLE, (UNRANKABLE, 8.0, 10.0, 2.0, GateState.PASSED)),
    ],
)
def test_directions_examples_in_the_user_docs(
    entry: Make,
    completion: AssertionState,
    expression: AssertionState,
    expected: tuple[AttemptState, float, float, float, GateState],
) -> None:
    entries = [
        entry(S.MATCHED, Role.GATE, label="Request delivered"),
        entry(expression, Role.SCORE, weight=2.0, measurement=0.5, reason="judge-key-unresolved"),
        entry(S.MEASURED, Role.SCORE, weight=3.0, measurement=1.0, label="Information"),
        entry(completion, Role.GATE_SCORE, weight=5.0, label="Independent completion"),
    ]
    o = decide_attempt(EvalKind.SCORE, entries, OK)
    assert (o.state, o.score, o.max_score, o.unavailable_weight, o.gate) == expected
