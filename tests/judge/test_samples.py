"""judge-trust.md §1: how n samples of one judge assertion fold into one grade (`judge.fold`)."""

from __future__ import annotations

import json

import pytest

from niceeval_cli._states import AssertionState
from niceeval_cli.judge import JudgeGrade, fold

MEASURED, UNAVAILABLE, ERRORED = AssertionState.MEASURED, AssertionState.UNAVAILABLE, AssertionState.ERRORED


def _measured(value: float, why: str = "") -> JudgeGrade:
    audit = json.dumps({"request": {"model": "m", "messages": []}, "response": {"said": value}})
    return JudgeGrade(MEASURED, value, None, why or f"said {value}", audit, 10, '"material"', cost_usd=0.5)


def _failed(reason: str) -> JudgeGrade:
    return JudgeGrade(UNAVAILABLE, None, reason, f"failed: {reason}", None, 0, '"material"')


@pytest.mark.parametrize(("values", "median", "agreement"), [
    ([1, 1, 0, 0, 0], 0, 0.6),
    ([1, 1, 1, 0], 1, 0.75),
    ([0, 1], 0, 0.5),  # even count: the lower middle value
    ([0.4, 0.6, 1, 1], 0.6, 0.25),  # factuality: the lower of the two middle values
    ([0.6, 0.6, 0.6], 0.6, 1.0),
])
def test_the_measurement_is_the_low_median_and_the_agreement_its_share(values, median, agreement) -> None:
    grade = fold([_measured(v) for v in values], min_agreement=None, max_audit_bytes=1 << 20)
    assert (grade.state, grade.measurement, grade.agreement, grade.samples) == (MEASURED, median, agreement,
                                                                                 len(values))
    assert grade.explanation == f"said {median}"
    assert (grade.tokens, grade.cost_usd) == (10 * len(values), 0.5 * len(values))


def test_the_audit_keeps_every_sample_and_the_shown_samples_exchange() -> None:
    grade = fold([_measured(1, "yes"), _measured(0, "no"), _failed("judge-timeout")], min_agreement=None,
                 max_audit_bytes=1 << 20)
    audit = json.loads(str(grade.audit))
    assert audit["response"] == {"said": 0} and audit["cost_usd"] == 1.0
    assert audit["samples"] == [
        {"measurement": 1, "explanation": "yes"},
        {"measurement": 0, "explanation": "no"},
        {"measurement": None, "explanation": "failed: judge-timeout", "state": "unavailable",
         "reason": "judge-timeout"},
    ]
    assert (grade.measurement, grade.agreement, grade.samples) == (0, 0.5, 2)


def test_the_audit_stays_within_max_audit_bytes() -> None:
    grade = fold([_measured(1, "x" * 5000) for _ in range(5)], min_agreement=None, max_audit_bytes=4096)
    assert len(str(grade.audit).encode()) <= 4096 and json.loads(str(grade.audit))


def test_below_min_agreement_is_judge_inconsistent() -> None:
    grade = fold([_measured(v) for v in (1, 1, 0)], min_agreement=0.7, max_audit_bytes=1 << 20)
    assert (grade.state, grade.reason, grade.measurement) == (UNAVAILABLE, "judge-inconsistent", None)
    assert grade.agreement == pytest.approx(2 / 3) and grade.samples == 3
    assert "2 of 3 agree on 1" in grade.explanation and "(agreement 0.6667 < min_agreement 0.7)" in grade.explanation


def test_a_shortfall_says_figures_that_differ() -> None:
    """2 of 3 agree (0.6667) under min_agreement 0.67: it read `agreement 0.67 < min_agreement 0.67`."""
    grade = fold([_measured(v) for v in (1, 1, 0)], min_agreement=0.67, max_audit_bytes=1 << 20)
    assert grade.reason == "judge-inconsistent"
    assert "(agreement 0.6667 < min_agreement 0.67)" in grade.explanation, grade.explanation


def test_fewer_than_half_measured_is_unavailable_with_the_most_frequent_reason() -> None:
    grades = [_failed("judge-timeout"), _failed("judge-rate-limited"), _failed("judge-rate-limited"),
              _measured(1), _measured(1)]
    grade = fold(grades, min_agreement=None, max_audit_bytes=1 << 20)
    assert (grade.state, grade.reason, grade.measurement, grade.agreement) == (
        UNAVAILABLE, "judge-rate-limited", None, None)
    assert "only 2 of 5" in grade.explanation


def test_half_measured_of_an_even_count_is_enough() -> None:
    grade = fold([_failed("judge-timeout"), _failed("judge-timeout"), _measured(1), _measured(0)],
                 min_agreement=None, max_audit_bytes=1 << 20)
    assert (grade.state, grade.measurement, grade.agreement, grade.samples) == (MEASURED, 0, 0.5, 2)


def test_an_errored_sample_errs_the_whole_assertion() -> None:
    invalid = JudgeGrade(ERRORED, None, "judge-invalid-response", "invalid judge response: no grade", "{}", 5, None)
    grade = fold([_measured(1), invalid, _measured(1)], min_agreement=None, max_audit_bytes=1 << 20)
    assert (grade.state, grade.reason, grade.measurement, grade.agreement) == (
        ERRORED, "judge-invalid-response", None, None)
    assert grade.explanation.startswith("judge sample 2 of 3: invalid judge response")


def test_one_sample_and_no_floor_leave_the_fingerprint_as_before() -> None:
    from niceeval_cli.config import JudgeSettings

    assert not {"samples", "min_agreement"} & set(JudgeSettings(model="m").fingerprint_view())
    view = JudgeSettings(model="m", samples=3, min_agreement=0.8).fingerprint_view()
    assert (view["samples"], view["min_agreement"]) == (3, 0.8)
