"""Pass-style (`define_eval`) verdicts (outcomes.md, "Pass-style → verdict")."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from niceeval_cli._records import AssertionResult
from niceeval_cli._states import AssertionState, AttemptReason, AttemptState, EvalKind, Role
from niceeval_cli.outcomes import EXECUTION_REASONS, Execution, decide_attempt, recorded_only

S = AssertionState
PASSED, FAILED, ERRORED = AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED
OK = Execution()
Make = Callable[..., AssertionResult]  # the `entry` fixture (conftest.py)

# (verdict, reason) of an attempt whose single entry decides.
DECIDING: dict[AssertionState, tuple[AttemptState, str | None]] = {
    S.MATCHED: (PASSED, None),
    S.MISMATCHED: (FAILED, None),
    S.MEASURED: (PASSED, None),
    S.MET: (PASSED, None),
    S.BELOW: (FAILED, None),
    S.UNAVAILABLE: (ERRORED, "evidence-unavailable"),
    S.ERRORED: (ERRORED, "assertion-errored"),
}
# ... and whose single entry is recorded only: only an errored evaluator matters.
RECORDED: dict[AssertionState, tuple[AttemptState, str | None]] = {
    state: (PASSED, None) for state in AssertionState if state is not S.ERRORED
} | {S.ERRORED: (ERRORED, "assertion-errored")}

# Every (role, match kind, or_stop) combination that does NOT decide a pass-style attempt:
# un-gated measurements without or_stop are recorded only.
NOT_DECIDING = {(Role.RECORD, "score", False), (Role.SCORE, "score", False)}
SHAPES = list(itertools.product(Role, ["boolean", "score"], [False, True]))


def test_tables_cover_every_state() -> None:
    assert set(DECIDING) == set(AssertionState) == set(RECORDED)


@pytest.mark.parametrize(("role", "match_kind", "or_stop"), SHAPES)
@pytest.mark.parametrize("state", list(AssertionState))
def test_every_state_role_and_kind_combination(
    entry: Make, state: AssertionState, role: Role, match_kind: str, or_stop: bool
) -> None:
    e = entry(state, role, weight=2.0, measurement=0.5, or_stop=or_stop, match_kind=match_kind)
    outcome = decide_attempt(EvalKind.PASS, [e], OK)
    table = RECORDED if (role, match_kind, or_stop) in NOT_DECIDING else DECIDING
    assert (outcome.state, outcome.reason) == table[state]
    # Pass-style attempts carry no score fields and no gate.
    assert outcome.score is None
    assert outcome.max_score is None
    assert outcome.unavailable_weight is None
    assert outcome.partial_score is None
    assert outcome.gate is None
    assert outcome.error is None



@pytest.mark.parametrize(("role", "match_kind", "or_stop"), SHAPES)
@pytest.mark.parametrize("kind", list(EvalKind))
def test_recorded_only_is_a_record_entry_that_the_verdict_does_not_rest_on(
    entry: Make, kind: EvalKind, role: Role, match_kind: str, or_stop: bool
) -> None:
    """What the run summary's note "recorded without deciding" counts: an unavailable one of
    them leaves the attempt as it was without it (an ungated Boolean check in a pass-style eval
    is not one: it errs the attempt)."""
    e = entry(S.UNAVAILABLE, role, weight=2.0, or_stop=or_stop, match_kind=match_kind, reason="r")
    if recorded_only(kind, role, match_kind, or_stop):
        assert role is Role.RECORD
        assert decide_attempt(kind, [e], OK).state == decide_attempt(kind, [], OK).state
    elif role is Role.RECORD:
        assert decide_attempt(kind, [e], OK).state != decide_attempt(kind, [], OK).state

def test_no_assertions_passes(entry: Make) -> None:
    assert decide_attempt(EvalKind.PASS, [], OK).state is PASSED


def test_every_boolean_assertion_decides_even_without_gate(entry: Make) -> None:
    outcome = decide_attempt(EvalKind.PASS, [entry(S.MATCHED), entry(S.MISMATCHED)], OK)
    assert outcome.state is FAILED


def test_ungated_measurement_below_nothing_is_recorded_only(entry: Make) -> None:
    low = entry(S.MEASURED, measurement=0.1)
    unknown = entry(S.UNAVAILABLE, match_kind="score", reason="judge-timeout")
    assert decide_attempt(EvalKind.PASS, [entry(S.MATCHED), low, unknown], OK).state is PASSED


def test_gated_judge_below_threshold_fails(entry: Make) -> None:
    judge = entry(S.BELOW, Role.GATE, measurement=0.62)
    assert decide_attempt(EvalKind.PASS, [judge], OK).state is FAILED


def test_failure_outranks_unavailable_evidence(entry: Make) -> None:
    entries = [entry(S.UNAVAILABLE, Role.GATE, reason="usage-unreported"), entry(S.MISMATCHED)]
    outcome = decide_attempt(EvalKind.PASS, entries, OK)
    assert (outcome.state, outcome.reason) == (FAILED, None)


def test_errored_assertion_outranks_failure(entry: Make) -> None:
    entries = [entry(S.MISMATCHED), entry(S.ERRORED, reason="match-error")]
    outcome = decide_attempt(EvalKind.PASS, entries, OK)
    assert (outcome.state, outcome.reason) == (ERRORED, "assertion-errored")


def test_errored_recorded_measurement_still_errors_the_attempt(entry: Make) -> None:
    bad = entry(S.ERRORED, Role.RECORD, match_kind="score", reason="judge-invalid-response")
    assert decide_attempt(EvalKind.PASS, [entry(S.MATCHED), bad], OK).state is ERRORED


def test_unavailable_or_stop_entry_errors_with_evidence_unavailable(entry: Make) -> None:
    stopped = entry(S.UNAVAILABLE, match_kind="score", or_stop=True, reason="judge-key-unresolved")
    outcome = decide_attempt(EvalKind.PASS, [stopped], Execution(stop_cause="judge-key-unresolved"))
    assert (outcome.state, outcome.reason) == (ERRORED, "evidence-unavailable")
    assert outcome.stop_cause == "judge-key-unresolved"


def test_or_stop_on_a_failed_check_fails_and_keeps_the_stop_cause(entry: Make) -> None:
    outcome = decide_attempt(
        EvalKind.PASS,
        [entry(S.MISMATCHED, Role.GATE, or_stop=True, label="Prerequisite")],
        Execution(stop_cause="Prerequisite: mismatched"),
    )
    assert outcome.state is FAILED
    assert outcome.stop_cause == "Prerequisite: mismatched"


@pytest.mark.parametrize("reason", sorted(EXECUTION_REASONS))
def test_abnormal_execution_errors_with_its_own_reason(entry: Make, reason: AttemptReason) -> None:
    # Even when the entries already failed: the attempt did not complete normally.
    outcome = decide_attempt(EvalKind.PASS, [entry(S.MISMATCHED)], Execution(reason=reason))
    assert (outcome.state, outcome.reason) == (ERRORED, str(reason))


def test_exception_keeps_type_and_message(entry: Make) -> None:
    execution = Execution(reason=AttemptReason.EXCEPTION, error="ValueError: boom")
    outcome = decide_attempt(EvalKind.PASS, [entry(S.ERRORED)], execution)
    assert (outcome.state, outcome.reason, outcome.error) == (ERRORED, "exception", "ValueError: boom")


def test_kind_may_be_the_stored_string(entry: Make) -> None:
    assert decide_attempt("pass", [entry(S.MISMATCHED)], OK).state is FAILED


def test_unknown_match_kind_is_rejected(entry: Make) -> None:
    with pytest.raises(ValueError, match="match_kind"):
        decide_attempt(EvalKind.PASS, [entry(S.MATCHED, match_kind="fuzzy")], OK)
