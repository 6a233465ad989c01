"""`t.score(value, weight=None)` (authoring.md; outcomes.md, score-style): a direct contribution.
An unavailable value keeps its weight and is never a zero; an out-of-range value is `errored`,
never clipped."""

from __future__ import annotations

import pytest


def test_score_with_weight_stores_value_as_measurement_and_value_times_weight(run_one):
    sealed = run_one("""
        from niceeval_cli import define_score_eval

        @define_score_eval()
        def ratio(t):
            t.score(0.8, weight=50).label("Completion duration")
    """)
    row = sealed.by_label("Completion duration")
    assert row["state"] == "measured"
    assert row["measurement"] == 0.8
    assert row["weight"] == 50
    assert row["contribution"] == 40
    assert row["role"] == "score"
    assert (sealed.attempt["state"], sealed.attempt["score"], sealed.attempt["max_score"]) == ("scored", 40, 50)
    assert sealed.attempt["unavailable_weight"] == 0


def test_score_without_weight_earns_the_value_as_points(run_one):
    sealed = run_one("""
        from niceeval_cli import define_score_eval

        @define_score_eval()
        def points(t):
            t.score(7).label("seven")
            t.score(0).label("zero")
    """)
    seven, zero = sealed.by_label("seven"), sealed.by_label("zero")
    assert (seven["measurement"], seven["weight"], seven["contribution"]) == (1.0, 7, 7)
    assert (zero["weight"], zero["contribution"]) == (0, 0)
    assert (sealed.attempt["score"], sealed.attempt["max_score"]) == (7, 7)


def test_zero_is_a_rankable_score(run_one):
    sealed = run_one("""
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def nothing_earned(t):
            t.score(0.0, weight=10).label("ratio")
            t.check(1, equals(2)).score(5).label("missed")
    """)
    assert sealed.attempt["state"] == "scored"
    assert (sealed.attempt["score"], sealed.attempt["max_score"]) == (0, 15)
    assert sealed.by_label("missed")["contribution"] == 0
    assert sealed.run.exit_code == 0


def test_score_eval_without_scoring_entries_scores_zero_of_zero(run_one):
    sealed = run_one("""
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def only_records(t):
            t.check(1, equals(1)).label("record")
    """)
    assert (sealed.attempt["state"], sealed.attempt["score"], sealed.attempt["max_score"]) == ("scored", 0, 0)
    assert sealed.attempt["gate"] == "none"


def test_unavailable_numeric_material_keeps_its_weight_and_is_never_zero(run_one):
    sealed = run_one("""
        from niceeval_cli import NumericMaterial, define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def unknown_ratio(t):
            t.check("agent", equals("agent")).score(5).label("Participation")
            t.score(NumericMaterial.unavailable("summary-capacity-exceeded"), weight=50).label("Completion")
    """)
    completion = sealed.by_label("Completion")
    assert completion["state"] == "unavailable"
    assert completion["reason"] == "summary-capacity-exceeded"
    assert completion["contribution"] is None
    assert completion["weight"] == 50
    attempt = sealed.attempt
    assert attempt["state"] == "unrankable"
    assert attempt["score"] == 5
    assert attempt["max_score"] == 55
    assert attempt["unavailable_weight"] == 50
    assert "summary-capacity-exceeded" in attempt["reason"]
    assert sealed.run.exit_code == 5


@pytest.mark.parametrize("value", ["1.5", "-0.25", "float('nan')", "float('inf')"])
def test_out_of_range_or_non_finite_value_with_weight_is_errored_never_clipped(run_one, value):
    sealed = run_one(f"""
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def out_of_range(t):
            t.check(1, equals(1)).score(3).label("earned")
            t.score({value}, weight=10).label("ratio")
            t.check(1, equals(1)).score(2).label("later")
    """)
    ratio = sealed.by_label("ratio")
    assert ratio["state"] == "errored"
    assert ratio["contribution"] is None
    assert ratio["measurement"] not in (0.0, 1.0)
    attempt = sealed.attempt
    assert attempt["state"] == "errored"
    assert attempt["reason"] == "assertion-errored"
    assert attempt["score"] is None
    assert attempt["partial_score"] == 5  # a failure does not stop later registrations
    assert sealed.run.exit_code == 5


@pytest.mark.parametrize("value", ["-3", "float('inf')"])
def test_points_without_weight_must_be_finite_and_not_negative(run_one, value):
    sealed = run_one(f"""
        from niceeval_cli import define_score_eval

        @define_score_eval()
        def bad_points(t):
            t.score({value})
    """)
    assert sealed.attempt["state"] == "errored"
    assert sealed.attempt["score"] is None
    assert all(r["contribution"] is None for r in sealed.results)


def test_score_in_a_pass_style_eval_is_an_authoring_error(run_one, line_of):
    src = """
        from niceeval_cli import define_eval

        @define_eval()
        def pass_style(t):
            t.score(1.0, weight=5)  # offending
    """
    sealed = run_one(src)
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("errored", "authoring-error")
    assert f"e.py:{line_of(src, '# offending')}" in sealed.attempt["error"]


def test_thresholded_measurement_with_score_contributes_measurement_times_weight(run_one):
    sealed = run_one("""
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import similarity

        @define_score_eval()
        def measured(t):
            t.check("abcd", similarity("abcx")).score(10).label("similar")
            t.check("abcd", similarity("abcx").at_least(0.9)).score(4).label("thresholded")
    """)
    similar, thresholded = sealed.by_label("similar"), sealed.by_label("thresholded")
    assert similar["state"] == "measured"
    assert similar["contribution"] == pytest.approx(similar["measurement"] * 10)
    assert thresholded["state"] == "below"
    assert thresholded["threshold"] == 0.9
    assert thresholded["contribution"] == pytest.approx(thresholded["measurement"] * 4)
