"""A numeric pass rule decided by the unit's Wilson interval (statistics.md, `run --until-decided`)."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from hypothesis import given
from hypothesis import strategies as st

from niceeval_cli._states import AttemptState
from niceeval_cli.outcomes import (
    EvalFold,
    IntervalRule,
    fold_pass_eval,
    is_undecided,
    stored_pass_rule,
    undecided_text,
)

P, F, E = AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED


def wilson(s: int, n: int, c: float) -> tuple[float, float]:
    """statistics.md's formula, written out here independently of niceeval_cli.stats."""
    z = NormalDist().inv_cdf(1 - (1 - c) / 2)
    p = s / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_the_spec_s_worked_example_is_insufficient_evidence() -> None:
    rule = IntervalRule(0.8, 0.95)
    fold = fold_pass_eval([P] * 11 + [F] * 3, rule)
    assert fold == EvalFold(result=E, passed=11, failed=3, errored=0, pass_rate=11 / 14, undecided=True)
    assert undecided_text(11, 3, rule) == "insufficient evidence (11/14, [0.52, 0.92] contains 0.8)"


@pytest.mark.parametrize(
    ("passed", "failed", "result"),
    [
        (16, 0, P),  # 16/16: low 0.806 ≥ 0.8
        (15, 0, E),  # 15/15: low 0.796 < 0.8 < high
        (5, 5, F),  # high 0.763 < 0.8
        (0, 0, E),  # nothing decided: errored, not undecided
    ],
)
def test_decided_by_the_interval_s_ends(passed: int, failed: int, result: AttemptState) -> None:
    fold = fold_pass_eval([P] * passed + [F] * failed, IntervalRule(0.8, 0.95))
    assert fold.result is result
    assert fold.undecided is (result is E and passed + failed > 0)


def test_errored_attempts_are_not_evidence_and_all_errored_stays_errored() -> None:
    rule = IntervalRule(0.8, 0.95)
    assert fold_pass_eval([P] * 16 + [E] * 9, rule).result is P
    all_errored = fold_pass_eval([E, E, E], rule)
    assert all_errored.result is E and not all_errored.undecided


@pytest.mark.parametrize("text", ["0.8 until decided at 0.95", "1 until decided at 0.9", "0.35 until decided at 0.99"])
def test_the_stored_text_round_trips(text: str) -> None:
    rule = stored_pass_rule(text)
    assert isinstance(rule, IntervalRule)
    assert str(rule) == text


def test_plain_rules_are_never_undecided() -> None:
    for rule in ("any", "all", 0.8):
        assert not is_undecided(3, 2, rule)  # type: ignore[arg-type]


@given(st.integers(1, 60), st.data(), st.sampled_from([0.5, 0.7, 0.8, 0.9, 0.95, 1.0]),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_the_verdict_is_where_the_rate_lies_against_the_interval(n: int, data: st.DataObject, r: float,
                                                                  c: float) -> None:
    s = data.draw(st.integers(0, n))
    low, high = wilson(s, n, c)
    result = fold_pass_eval([P] * s + [F] * (n - s), IntervalRule(r, c)).result
    if low >= r + 1e-12:
        assert result is P
    elif high < r - 1e-12:
        assert result is F
    elif low < r - 1e-12 and high >= r + 1e-12:
        assert result is E and is_undecided(s, n - s, IntervalRule(r, c))


@pytest.mark.parametrize("n", [1, 5, 13, 15, 17, 19, 33, 100, 1000])
def test_pass_rule_1_never_fails_a_unit_whose_every_attempt_passed(n: int) -> None:
    """s = n puts the interval's high end at exactly 1, which contains a rule of 1 (low < 1 ≤ high):
    undecided, never `failed` (13 of 13 at 0.95 once read as high 0.9999999999999999 < 1: exit 1)."""
    fold = fold_pass_eval([P] * n, IntervalRule(1.0, 0.95))
    assert fold.result is E and fold.undecided
    assert undecided_text(n, 0, IntervalRule(1.0, 0.95)).endswith(", 1.00] contains 1)")
