"""statistics.md: which attempts are evidence, per-pair tests with BH q values, and experiment rows."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from scipy import stats as sp

from niceeval_cli.stats import (
    Significance,
    UnitEvidence,
    evidence_of,
    experiment_differences,
    experiment_estimates,
    pair_tests,
)


@dataclass(frozen=True)
class A:
    kind: str
    state: str
    gate: str | None = None
    score: float | None = None
    max_score: float | None = None


def test_errored_attempts_are_counted_beside_never_as_failures():
    evidence = evidence_of([A("pass", "passed"), A("pass", "failed"), A("pass", "errored"), A("pass", "errored")])
    assert (evidence.passed, evidence.failed, evidence.not_counted, evidence.decided) == (1, 1, 2, 2)


def test_score_evidence_is_score_over_max_of_scored_attempts():
    evidence = evidence_of([
        A("score", "scored", "passed", 3, 4), A("score", "scored", "failed", 1, 4),
        A("score", "unrankable", "passed", 2, 4), A("score", "scored", "unavailable", 4, 4),
        A("score", "scored", None, 0, 0), A("score", "errored"),
    ])
    assert evidence.scores == (0.75, 0.25)
    assert evidence.not_counted == 4 and evidence.style == "score"


def test_fisher_per_pair_and_bh_over_the_tested_family():
    five_five, one_five = UnitEvidence("pass", 5, 0), UnitEvidence("pass", 1, 4)
    same = UnitEvidence("pass", 3, 2)
    tests = pair_tests([(five_five, one_five), (same, same), (five_five, None), (UnitEvidence("pass"), same)])
    assert round(tests[0].p_value, 4) == 0.0476
    assert tests[1].p_value == pytest.approx(1.0)
    q = list(sp.false_discovery_control([tests[0].p_value, 1.0], method="bh"))
    assert tests[0].q_value == pytest.approx(q[0]) and tests[1].q_value == pytest.approx(q[1])
    assert [t.significance for t in tests[2:]] == [Significance.UNTESTABLE, Significance.UNTESTABLE]
    # two tested pairs: q = 0.0476 · 2 = 0.0952 ≥ α, so the flip alone is within noise
    assert round(tests[0].q_value, 4) == 0.0952 and tests[0].significance is Significance.WITHIN_NOISE


def test_a_single_regression_among_many_unchanged_pairs_is_within_noise():
    base, new = UnitEvidence("pass", 5, 0), UnitEvidence("pass", 1, 4)
    same = UnitEvidence("pass", 3, 2)
    tests = pair_tests([(base, new), *([(same, same)] * 9)])
    assert tests[0].p_value == pytest.approx(0.0476, abs=1e-4)
    assert tests[0].q_value == pytest.approx(min(1.0, 0.047619 * 10), abs=1e-4)
    assert tests[0].significance is Significance.WITHIN_NOISE


def test_score_pairs_use_welch_and_need_two_attempts_a_side():
    base = UnitEvidence("score", scores=(0.2, 0.3, 0.25))
    new = UnitEvidence("score", scores=(0.8, 0.9, 0.85))
    one = UnitEvidence("score", scores=(0.5,))
    tests = pair_tests([(base, new), (base, one)])
    assert tests[0].p_value == pytest.approx(sp.ttest_ind([0.2, 0.3, 0.25], [0.8, 0.9, 0.85], equal_var=False).pvalue)
    assert tests[1].significance is Significance.UNTESTABLE


def test_experiment_rows_match_the_worked_examples():
    units = [("e", "u1", UnitEvidence("pass", 1, 0)), ("e", "u2", UnitEvidence("pass", 1, 1)),
             ("e", "u3", UnitEvidence("pass", 0, 1)), ("e", "u4", UnitEvidence("pass", 2, 0)),
             ("e", "u5", UnitEvidence("pass", not_counted=2))]
    (row,) = experiment_estimates(units)
    assert row.summary is not None and row.summary.se is not None and row.summary.interval is not None
    assert row.summary.estimate == 0.625 and round(row.summary.se, 4) == 0.2394
    assert row.undecided_units == 1 and row.summary.n_units == 4
    paired = experiment_differences([
        ("e", "u1", UnitEvidence("pass", 1, 0), UnitEvidence("pass", 1, 0)),
        ("e", "u2", UnitEvidence("pass", 1, 0), UnitEvidence("pass", 1, 1)),
        ("e", "u3", UnitEvidence("pass", 0, 1), UnitEvidence("pass", 0, 1)),
        ("e", "u4", UnitEvidence("pass", 1, 0), UnitEvidence("pass", 0, 1)),
        ("e", "u5", UnitEvidence("pass", 1, 0), None),
    ])
    (difference,) = paired
    d = difference.difference
    assert d.difference == -0.375 and round(d.p_value, 4) == 0.1172 and d.n_units == 4
