"""statistics.md, "Per unit": every worked value, checked against scipy where scipy has the formula."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sp

from niceeval_cli.stats import UnitEvidence, pass_at_k, pass_hat_k, t_interval, unit_stats, wilson, z_of


def test_z_for_95_percent_is_the_normal_quantile():
    assert z_of(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_of(0.9) == pytest.approx(sp.norm.ppf(0.95))


@pytest.mark.parametrize(("passed", "n", "low", "high"), [
    (7, 10, 0.3968, 0.8922), (0, 3, 0.0, 0.5615), (3, 3, 0.4385, 1.0), (1, 1, 0.2065, 1.0), (45, 50, 0.7864, 0.9565),
])
def test_wilson_worked_values(passed, n, low, high):
    interval = wilson(passed, n)
    assert interval is not None
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)
    ref = sp.binomtest(passed, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert interval.low == pytest.approx(ref.low, abs=1e-9) and interval.high == pytest.approx(ref.high, abs=1e-9)


def test_no_evidence_has_no_interval():
    assert wilson(0, 0) is None
    stats = unit_stats(UnitEvidence("pass", not_counted=3), k=1)
    assert stats.rate is None and stats.interval is None and stats.decided == 0


@given(n=st.integers(1, 400), data=st.data(), confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_contains_the_estimate_and_matches_scipy(n, data, confidence):
    s = data.draw(st.integers(0, n))
    interval = wilson(s, n, confidence)
    assert interval is not None
    assert 0.0 <= interval.low <= s / n + 1e-12 and s / n - 1e-12 <= interval.high <= 1.0
    ref = sp.binomtest(s, n).proportion_ci(confidence_level=confidence, method="wilson")
    assert interval.low == pytest.approx(ref.low, abs=1e-9) and interval.high == pytest.approx(ref.high, abs=1e-9)


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_wilson_ends_are_exact_at_all_passed_and_none_passed(confidence):
    """The formula's high end at s = n is 1 and its low end at s = 0 is 0, exactly (scipy's too);
    in floats they land an ulp off for some n (13 of 13 at 0.95), and `low < r ≤ high` reads that."""
    for n in range(1, 1001):
        every, none = wilson(n, n, confidence), wilson(0, n, confidence)
        assert every is not None and none is not None
        assert every.high == 1.0 and none.low == 0.0, n


@given(p=st.floats(0.05, 0.95), n=st.integers(2, 200))
def test_wilson_shrinks_as_evidence_grows(p, n):
    small = wilson(round(p * n), n)
    large = wilson(round(p * n * 4), n * 4)
    assert small is not None and large is not None
    assert large.high - large.low < small.high - small.low


def test_pass_at_k_worked_example():
    assert pass_at_k(5, 3, 2) == pytest.approx(0.9)
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)


def test_k_above_the_evidence_has_no_value():
    assert pass_at_k(2, 1, 3) is None and pass_hat_k(2, 1, 3) is None
    assert unit_stats(UnitEvidence("pass", passed=1, failed=1), k=3).pass_at_k is None


@given(n=st.integers(1, 9), data=st.data())
def test_pass_at_k_is_the_share_of_k_subsets_with_a_pass(n, data):
    s = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    outcomes = [True] * s + [False] * (n - s)
    subsets = list(itertools.combinations(range(n), k))
    any_pass = sum(any(outcomes[i] for i in subset) for subset in subsets) / len(subsets)
    all_pass = sum(all(outcomes[i] for i in subset) for subset in subsets) / len(subsets)
    assert pass_at_k(n, s, k) == pytest.approx(any_pass)
    assert pass_hat_k(n, s, k) == pytest.approx(all_pass)


def test_flaky_means_both_a_pass_and_a_fail():
    assert unit_stats(UnitEvidence("pass", passed=3, failed=2), k=5).flaky
    assert not unit_stats(UnitEvidence("pass", passed=3, failed=0, not_counted=2), k=5).flaky
    assert not unit_stats(UnitEvidence("pass", passed=0, failed=2), k=5).flaky


def test_errored_attempts_are_not_evidence():
    stats = unit_stats(UnitEvidence("pass", passed=3, failed=1, not_counted=6), k=1)
    assert stats.decided == 4 and stats.rate == 0.75


def test_score_unit_t_interval_matches_scipy():
    values = [0.2, 0.5, 0.9, 0.4]
    interval = t_interval(values)
    ref = sp.t.interval(0.95, len(values) - 1, loc=sum(values) / 4, scale=sp.sem(values))
    assert interval is not None
    assert interval.low == pytest.approx(max(0.0, ref[0])) and interval.high == pytest.approx(min(1.0, ref[1]))


def test_a_score_unit_of_one_attempt_has_no_interval():
    stats = unit_stats(UnitEvidence("score", scores=(0.5,)), k=1)
    assert stats.rate == 0.5 and stats.interval is None


@given(st.lists(st.floats(0, 1), min_size=2, max_size=30))
def test_t_interval_contains_the_mean_within_zero_and_one(values):
    interval = t_interval(values)
    assert interval is not None
    centre = math.fsum(values) / len(values)
    assert 0.0 <= interval.low <= centre + 1e-9 and centre - 1e-9 <= interval.high <= 1.0
