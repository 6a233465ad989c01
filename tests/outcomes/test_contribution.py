"""What one scoring entry earns (outcomes.md, "Score-style"; authoring.md, `.score(n)`)."""

from __future__ import annotations

import pytest

from niceeval_cli._states import AssertionState, Role
from niceeval_cli.outcomes import contribution

S = AssertionState

# Expected contribution of a settled entry with weight 5 and measurement 0.6.
SCORING_EXPECTED: dict[AssertionState, float | None] = {
    S.MATCHED: 5.0,
    S.MISMATCHED: 0.0,
    S.MEASURED: 3.0,
    S.MET: 3.0,
    S.BELOW: 3.0,
    S.UNAVAILABLE: None,
    S.ERRORED: None,
}


def test_expected_table_covers_every_assertion_state() -> None:
    assert set(SCORING_EXPECTED) == set(AssertionState)


@pytest.mark.parametrize("role", [Role.SCORE, Role.GATE_SCORE])
@pytest.mark.parametrize("state", list(AssertionState))
def test_scoring_roles_earn_by_state(role: Role, state: AssertionState) -> None:
    assert contribution(role, state, 5.0, 0.6) == SCORING_EXPECTED[state]


@pytest.mark.parametrize("role", [Role.GATE, Role.RECORD])
@pytest.mark.parametrize("state", list(AssertionState))
def test_non_scoring_roles_contribute_nothing(role: Role, state: AssertionState) -> None:
    assert contribution(role, state, None, 0.6) is None


@pytest.mark.parametrize("state", [S.UNAVAILABLE, S.ERRORED])
def test_unknown_is_never_counted_as_zero(state: AssertionState) -> None:
    value = contribution(Role.SCORE, state, 50.0, None)
    assert value is None
    assert value != 0


def test_below_threshold_still_earns_its_measurement() -> None:
    # `.at_least(n)` forms a threshold; it does not change the contribution.
    assert contribution(Role.GATE_SCORE, S.BELOW, 20.0, 0.4) == 8.0


def test_plain_score_value_is_value_times_weight() -> None:
    # `t.score(v, weight=w)` is stored as role score, state measured, measurement v.
    assert contribution(Role.SCORE, S.MEASURED, 50.0, 0.9) == 45.0
    # `t.score(v)` without weight is stored as `t.score(1.0, weight=v)` and earns v.
    assert contribution(Role.SCORE, S.MEASURED, 7.5, 1.0) == 7.5


def test_mismatched_earns_zero_even_with_a_measurement() -> None:
    assert contribution(Role.SCORE, S.MISMATCHED, 5.0, 0.9) == 0.0


def test_products_are_rounded_to_avoid_float_noise() -> None:
    assert 0.1 * 3 == 0.30000000000000004  # the noise this guards against
    assert contribution(Role.SCORE, S.MEASURED, 3.0, 0.1) == 0.3


def test_accepts_stored_strings() -> None:
    assert contribution("gate+score", "matched", 5.0, None) == 5.0


def test_scoring_entry_without_weight_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="weight"):
        contribution(Role.SCORE, S.MATCHED, None, None)


@pytest.mark.parametrize("state", [S.MEASURED, S.MET, S.BELOW])
def test_settled_measurement_without_value_is_a_programming_error(state: AssertionState) -> None:
    with pytest.raises(ValueError, match="measurement"):
        contribution(Role.SCORE, state, 5.0, None)


def test_unknown_state_string_is_rejected() -> None:
    with pytest.raises(ValueError):
        contribution(Role.SCORE, "passed", 5.0, None)
