"""statistics.md, "Per experiment" and "Comparisons": worked values, scipy cross-checks, properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sp

from niceeval_cli.stats import (
    Significance,
    UnitEvidence,
    bh_q_values,
    clustered_mean,
    experiment_differences,
    experiment_estimates,
    fisher_p,
    paired_difference,
    significance_of,
    welch_p,
)


def test_experiment_mean_worked_example():
    summary = clustered_mean([1, 0.5, 0, 1])
    assert summary is not None and summary.interval is not None
    assert summary.estimate == 0.625
    assert round(summary.se, 4) == 0.2394
    assert (round(summary.interval.low, 4), round(summary.interval.high, 4)) == (0.1559, 1.0)
    assert not summary.clustered


def test_two_cases_of_one_eval_form_a_cluster():
    summary = clustered_mean([1, 0.5, 0, 1], clusters=["ds", "a", "b", "ds"])
    assert summary is not None and summary.se is not None
    assert round(summary.se, 4) == 0.2736
    assert summary.se**2 - 0.2394**2 == pytest.approx(0.017578, abs=2e-4)
    assert summary.clustered


def test_one_unit_has_no_interval():
    summary = clustered_mean([0.5])
    assert summary is not None and summary.se is None and summary.interval is None
    assert clustered_mean([]) is None


def test_without_clusters_the_se_is_the_standard_error_of_the_mean():
    values = [0.1, 0.7, 0.4, 0.9, 0.3]
    summary = clustered_mean(values)
    assert summary is not None and summary.se == pytest.approx(sp.sem(values))


def test_paired_difference_worked_example():
    paired = paired_difference([1, 1, 0, 1], [1, 0.5, 0, 0])
    assert paired is not None and paired.interval is not None and paired.p_value is not None and paired.se
    assert paired.difference == -0.375
    assert round(paired.se, 4) == 0.2394
    assert (round(paired.interval.low, 4), round(paired.interval.high, 4)) == (-0.8441, 0.0941)
    assert round(paired.p_value, 4) == 0.1172
    assert paired.p_value == pytest.approx(2 * sp.norm.sf(0.375 / paired.se))
    assert not paired.wholly_below_zero


def test_paired_difference_with_no_spread():
    same = paired_difference([1, 1, 1], [1, 1, 1])
    worse = paired_difference([1, 1, 1], [0, 0, 0])
    assert same is not None and same.p_value == 1.0
    assert worse is not None and worse.p_value == 0.0 and worse.wholly_below_zero
    one = paired_difference([1], [0])
    assert one is not None and one.p_value is None and one.interval is None


def test_fisher_worked_example_and_scipy():
    assert round(fisher_p(5, 5, 1, 5), 4) == 0.0476
    assert fisher_p(3, 7, 6, 9) == pytest.approx(sp.fisher_exact([[3, 4], [6, 3]]).pvalue)


def test_welch_matches_scipy_and_handles_zero_variance():
    base, new = [0.2, 0.4, 0.6], [0.7, 0.9, 0.8, 1.0]
    assert welch_p(base, new) == pytest.approx(sp.ttest_ind(base, new, equal_var=False).pvalue)
    assert welch_p([0.5, 0.5], [0.5, 0.5]) == 1.0
    assert welch_p([0.5, 0.5], [0.7, 0.7]) == 0.0
    assert welch_p([0.5], [0.7, 0.8]) is None


@given(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=50))
def test_q_values_are_at_least_p_values(ps):
    qs = bh_q_values(ps)
    assert len(qs) == len(ps)
    assert all(q >= p - 1e-12 and q <= 1.0 for p, q in zip(ps, qs, strict=True))


def test_q_values_match_scipy():
    ps = [0.01, 0.04, 0.03, 0.2, 0.5]
    assert bh_q_values(ps) == pytest.approx(list(sp.false_discovery_control(ps, method="bh")))


def test_significance_words():
    assert significance_of(0.01) is Significance.SIGNIFICANT
    assert significance_of(0.05) is Significance.WITHIN_NOISE
    assert significance_of(None) is Significance.UNTESTABLE
    assert significance_of(0.08, alpha=0.1) is Significance.SIGNIFICANT


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=40))
def test_paired_interval_contains_the_difference(pairs):
    paired = paired_difference([b for b, _ in pairs], [n for _, n in pairs])
    assert paired is not None and paired.interval is not None
    assert paired.interval.low - 1e-9 <= paired.difference <= paired.interval.high + 1e-9
    assert -1.0 <= paired.interval.low and paired.interval.high <= 1.0
    assert paired.p_value is not None and 0.0 <= paired.p_value <= 1.0 and not math.isnan(paired.p_value)


_EVIDENCE = st.one_of(
    st.builds(lambda p, f: UnitEvidence("pass", p, f), st.integers(0, 4), st.integers(0, 4)),
    st.builds(lambda s: UnitEvidence("score", scores=tuple(s)), st.lists(st.floats(0, 1), max_size=3)),
)


@given(listed=st.lists(st.tuples(st.sampled_from(("e1", "e2")), st.sampled_from("abcdef"), _EVIDENCE), max_size=30),
       alone=st.lists(st.tuples(st.sampled_from(("e1", "e2", "e3")), _EVIDENCE, st.integers(0, 300)), max_size=3,
                      unique_by=lambda a: (a[0], a[1].style)))
def test_units_alone_give_the_figures_of_the_same_units_listed_each_its_own_cluster(listed, alone):
    """The summary's evals counted as passed are a count (`alone`), not one unit each: the very
    floats and order of the estimates those units listed one by one would give."""
    one_by_one = [*listed, *((e, ("alone", e, i), evidence) for e, evidence, n in alone for i in range(n))]
    assert experiment_estimates(listed, alone=alone) == experiment_estimates(one_by_one)


@given(value=st.floats(0, 1), m=st.integers(2, 20), n=st.integers(2, 20))
def test_the_same_constant_scores_in_other_counts_are_no_difference(value, m, n):
    """[0.1] * 3 and [0.1] * 7 have means that differ in the last bit (0.10000000000000002 and
    0.1): the same scores must still read as equal — Welch's p 1, a paired difference of 0 with p 1 —
    never as a certain change (p 0, an interval wholly below 0)."""
    assert welch_p([value] * m, [value] * n) == 1.0
    units = [("local", eval_id, UnitEvidence("score", scores=(value,) * m), UnitEvidence("score", scores=(value,) * n))
             for eval_id in ("s/a", "s/b")]
    (found,) = experiment_differences(units)
    assert found.difference.difference == 0.0 and found.difference.p_value == 1.0
    assert not found.difference.wholly_below_zero


def test_constant_scores_in_other_counts_worked_example():
    assert welch_p([0.1] * 3, [0.1] * 7) == 1.0
    assert welch_p([0.7] * 3, [0.7] * 7) == 1.0
    assert welch_p([0.1] * 3, [0.2] * 7) == 0.0
