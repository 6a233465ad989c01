"""Judge agreement figures (judge-trust.md §4), checked against values computed by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from niceeval_cli.stats import Confusion, agreement_of, cohen_kappa


@pytest.mark.parametrize(("tp", "fp", "fn", "tn", "kappa"), [
    # p_o = 35/50 = 0.70; p_e = (25·30 + 25·20) / 50² = 0.50 → (0.70 − 0.50) / 0.50
    (20, 5, 10, 15, 0.4000),
    # p_o = 0.60; p_e = (60·70 + 40·30) / 100² = 0.54 → 0.06 / 0.46
    (45, 15, 25, 15, 0.1304),
    # p_o = 0.60; p_e = (60·30 + 40·70) / 100² = 0.46 → 0.14 / 0.54
    (25, 35, 5, 35, 0.2593),
    # p_o = 15/20; p_e = (11·12 + 9·8) / 20² = 0.51 → 0.24 / 0.49
    (9, 2, 3, 6, 0.4898),
    (10, 0, 0, 10, 1.0000),  # perfect agreement with both decisions present
    (0, 5, 5, 0, -1.0000),  # perfect disagreement: p_o = 0, p_e = 0.5
    (0, 1, 0, 0, 0.0000),  # one pair, judge passes what the human fails: p_o = p_e = 0
    (0, 0, 1, 1, 0.0000),  # p_o = 0.5, p_e = (0·1 + 2·1) / 4 = 0.5
])
def test_cohens_kappa_matches_the_hand_computed_value_to_four_decimals(tp, fp, fn, tn, kappa):
    assert round(cohen_kappa(Confusion(tp, fp, fn, tn)), 4) == kappa


@pytest.mark.parametrize("confusion", [Confusion(7, 0, 0, 0), Confusion(0, 0, 0, 3), Confusion()])
def test_kappa_is_undefined_when_both_sides_always_gave_the_same_single_decision(confusion):
    assert cohen_kappa(confusion) is None


def test_every_figure_of_a_confusion_table():
    figures = agreement_of(Confusion(tp=9, fp=2, fn=3, tn=6))
    assert figures.n == 20
    assert figures.accuracy == 0.75
    assert (round(figures.interval.low, 4), round(figures.interval.high, 4)) == (0.5313, 0.8881)  # Wilson 15/20
    assert round(figures.kappa, 4) == 0.4898
    assert (figures.tpr, figures.tnr) == (0.75, 0.75)  # 9 of 12 human passes, 6 of 8 human fails
    assert figures.exact is None and figures.exact_n == 0


def test_rates_without_a_denominator_are_undefined_and_exact_agreement_is_over_its_own_pairs():
    figures = agreement_of(Confusion(tp=0, fp=0, fn=0, tn=4), exact_equal=3, exact_n=4)
    assert figures.tpr is None  # the human never passed one
    assert figures.tnr == 1.0 and figures.accuracy == 1.0 and figures.kappa is None
    assert figures.exact == 0.75
    empty = agreement_of(Confusion())
    assert (empty.accuracy, empty.interval, empty.kappa, empty.tpr, empty.tnr) == (None,) * 5


def test_adding_pairs_fills_the_cells_by_reference_then_judge():
    c = Confusion()
    for reference, judge in [(True, True), (False, True), (True, False), (False, False), (True, True)]:
        c = c.add(reference, judge)
    assert (c.tp, c.fp, c.fn, c.tn) == (2, 1, 1, 1)


@given(st.integers(0, 200), st.integers(0, 200), st.integers(0, 200), st.integers(0, 200))
def test_kappa_equals_its_closed_form_and_is_symmetric_in_the_two_raters(tp, fp, fn, tn):
    kappa = cohen_kappa(Confusion(tp, fp, fn, tn))
    denominator = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)
    if denominator == 0:
        assert kappa is None
        return
    assert kappa == pytest.approx(2 * (tp * tn - fn * fp) / denominator, abs=1e-12)
    assert cohen_kappa(Confusion(tp, fn, fp, tn)) == pytest.approx(kappa, abs=1e-12)  # raters swapped
    assert -1.0 <= kappa <= 1.0 + 1e-12


def test_kappa_is_the_exact_ratio_rounded_once_so_a_floor_it_meets_is_met():
    """Kappa of 0.8 exactly (6/0/2/16, 24 labels) read as 0.7999999999999999 held a judge at
    `min_human_kappa = 0.8` back; every table up to 24 pairs gives the float nearest the exact value."""
    from fractions import Fraction

    assert cohen_kappa(Confusion(6, 0, 2, 16)) == 0.8
    assert cohen_kappa(Confusion(1, 0, 1, 1)) == 0.4
    for n in range(1, 25):
        for tp in range(n + 1):
            for fp in range(n + 1 - tp):
                for fn in range(n + 1 - tp - fp):
                    tn = n - tp - fp - fn
                    chance = Fraction((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), n * n)
                    found = cohen_kappa(Confusion(tp, fp, fn, tn))
                    if chance == 1:
                        assert found is None
                    else:
                        assert found == float((Fraction(tp + tn, n) - chance) / (1 - chance)), (tp, fp, fn, tn)
