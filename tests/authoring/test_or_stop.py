"""`await handle.or_stop()` (authoring.md; outcomes.md): stops the continuation when the entry is
mismatched, below, unavailable or errored. Code not executed registers nothing."""

from __future__ import annotations

import pytest

STOPPING_CHECKS = {
    "mismatched": 't.check(1, equals(2))',
    "below": 't.check("abcd", similarity("wxyz").at_least(0.9))',
    "unavailable": 't.check(Fact.unavailable("log-missing"), equals(1))',
    "errored": 't.check(1, satisfies("boom", lambda v: 1 / 0))',
}

PASS_VERDICT = {
    "mismatched": ("failed", None),
    "below": ("failed", None),
    "unavailable": ("errored", "evidence-unavailable"),
    "errored": ("errored", "assertion-errored"),
}


@pytest.mark.parametrize("cause", sorted(STOPPING_CHECKS))
def test_or_stop_in_a_pass_eval_stops_and_decides_the_verdict(run_one, cause):
    sealed = run_one(f"""
        from niceeval_cli import Fact, define_eval
        from niceeval_cli.expect import equals, satisfies, similarity

        @define_eval()
        async def stops(t):
            t.check(1, equals(1)).label("before")
            await {STOPPING_CHECKS[cause]}.label("prerequisite").or_stop()
            t.check(1, equals(1)).label("after")
    """)
    assert sealed.labels == ["before", "prerequisite"]
    prerequisite = sealed.by_label("prerequisite")
    assert prerequisite["state"] == cause
    assert prerequisite["or_stop"] in (1, True)
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == PASS_VERDICT[cause]


def test_or_stop_on_an_unthresholded_measurement_would_have_nothing_to_stop_on(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import similarity

        @define_eval()
        async def measured(t):
            await t.check("abcd", similarity("wxyz")).or_stop()
    """)
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("errored", "authoring-error")


def test_or_stop_that_holds_continues(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals, similarity

        @define_eval()
        async def continues(t):
            await t.check(1, equals(1)).label("matched").or_stop()
            await t.check("abcd", similarity("abcd").at_least(0.5)).label("met").or_stop()
            t.check(1, equals(1)).label("after")
    """)
    assert sealed.labels == ["matched", "met", "after"]
    assert sealed.attempt["state"] == "passed"
    assert sealed.attempt["stop_cause"] is None


def test_an_or_stop_entry_decides_a_pass_eval_even_when_it_is_a_measurement(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import similarity

        @define_eval()
        async def measured_stop(t):
            await t.check("abcd", similarity("wxyz").at_least(0.9)).label("stop on me").or_stop()
    """)
    assert sealed.attempt["state"] == "failed"


def test_or_stop_in_a_score_eval_keeps_the_earned_score_and_records_the_stop_cause(run_one):
    sealed = run_one("""
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        async def partial(t):
            t.check(1, equals(1)).score(5).label("Participation")
            await t.check("log", equals("complete")).gate().label("Records complete").or_stop()
            t.check(1, equals(1)).score(50).label("never registered")
    """)
    assert sealed.labels == ["Participation", "Records complete"]
    attempt = sealed.attempt
    assert attempt["state"] == "scored"
    assert attempt["score"] == 5
    assert attempt["max_score"] == 5
    assert attempt["gate"] == "failed"
    assert attempt["stop_cause"]
    assert "Records complete" in attempt["stop_cause"]
    assert sealed.run.exit_code == 1


def test_unavailable_or_stop_in_a_score_eval_makes_it_unrankable(run_one):
    sealed = run_one("""
        from niceeval_cli import Fact, define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        async def prerequisite(t):
            t.check(1, equals(1)).score(5).label("Participation")
            await t.check(Fact.unavailable("records-uncorrelated"), equals(True)).label("Prerequisite").or_stop()
            t.check(1, equals(1)).score(5).label("never registered")
    """)
    attempt = sealed.attempt
    assert attempt["state"] == "unrankable"
    assert "records-uncorrelated" in attempt["reason"]
    assert attempt["score"] == 5
    assert attempt["stop_cause"]
    assert sealed.labels == ["Participation", "Prerequisite"]
    assert sealed.run.exit_code == 5


def test_or_stop_cannot_be_swallowed_by_a_broad_except(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def swallow(t):
            try:
                await t.check(1, equals(2)).label("stop").or_stop()
            except Exception:
                pass
            t.check(1, equals(1)).label("after")
    """)
    assert sealed.labels == ["stop"]
    assert sealed.attempt["state"] == "failed"


def test_a_failure_without_or_stop_does_not_stop_later_registrations(run_one):
    sealed = run_one("""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def keeps_going(t):
            t.check(1, equals(2)).gate().label("failed gate")
            t.check(1, equals(1)).label("still registered")
    """)
    assert sealed.labels == ["failed gate", "still registered"]
    assert sealed.attempt["state"] == "failed"
    assert sealed.attempt["stop_cause"] is None
