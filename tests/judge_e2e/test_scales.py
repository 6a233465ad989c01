"""The judge's letters become fixed measurements, and measurements become verdicts and scores
exactly like any ScoreMatch's (judge.md: Factories; outcomes.md) — seen through `niceeval run`."""

from __future__ import annotations

import pytest

from tests.support.loopback import Reply

FACTUALITY = {"A": 0.4, "B": 0.6, "C": 1.0, "D": 0.0, "E": 1.0}


def test_factuality_letters_are_the_fixed_categories_and_score_m_times_n(judged):
    judged.setup("""
        @define_score_eval(judge=True)
        def facts(t):
            for letter in "ABCDE":
                t.check(QA, factuality(f"Paris is the capital. marker-{letter}")).score(10).label(letter)
    """)
    for letter in FACTUALITY:
        judged.server.when(f"marker-{letter}", Reply.tool(letter, f"picked {letter}"))

    run = judged.run()

    assert run.exit_code == 0, run.stdout + run.stderr
    for letter, value in FACTUALITY.items():
        row = judged.result(letter)
        assert (row["state"], row["measurement"], row["contribution"]) == ("measured", value, value * 10)
        assert row["explanation"] == f"{letter}: picked {letter}"
        assert row["match_config"]["choices"] == FACTUALITY
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["score"], attempt["max_score"], attempt["gate"]) == ("scored", 30.0, 50.0, "none")
    assert len(judged.grading) == 5


@pytest.mark.parametrize("factory", ["closed_qa", "summarizes"])
def test_yes_no_judges_measure_one_or_zero(judged, factory):
    judged.setup(f"""
        @define_score_eval(judge=True)
        def yes_no(t):
            t.check(QA, {factory}("criterion marker-yes")).score(4).label("yes")
            t.check(QA, {factory}("criterion marker-no")).score(6).label("no")
    """)
    judged.server.when("marker-yes", Reply.tool("Y", "it does"))
    judged.server.when("marker-no", Reply.tool("N", "it does not"))

    run = judged.run()

    assert run.exit_code == 0
    assert [(r["measurement"], r["contribution"]) for r in (judged.result("yes"), judged.result("no"))] == [
        (1.0, 4.0), (0.0, 0.0)]
    assert judged.result("yes")["match_config"]["choices"] == {"Y": 1.0, "N": 0.0}
    assert judged.one_attempt()["score"] == 4.0


@pytest.mark.parametrize("reply", [Reply.content("Y", "in content"), Reply.content("Y", "fenced", fenced=True)],
                         ids=["json-content", "fenced-json-content"])
def test_a_json_object_in_the_message_content_is_accepted(judged, reply):
    judged.setup("""
        @define_eval(judge=True)
        def content(t):
            t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
    """)
    judged.server.default = reply

    assert judged.run().exit_code == 0
    assert judged.result("capital")["state"] == "met"


def test_a_judge_gate_below_its_threshold_fails_a_pass_eval(judged):
    judged.setup("""
        @define_eval(judge=True)
        def gated(t):
            t.check(QA, factuality("fact marker-partial").at_least(0.5)).gate().label("complete enough")
            t.check(QA, factuality("fact marker-more").at_least(0.5)).gate().label("superset")
    """)
    judged.server.when("marker-partial", Reply.tool("A", "only a subset"))
    judged.server.when("marker-more", Reply.tool("B", "adds facts"))

    run = judged.run()

    assert run.exit_code == 1
    below, met = judged.result("complete enough"), judged.result("superset")
    assert (below["state"], below["measurement"], below["threshold"]) == ("below", 0.4, 0.5)
    assert (met["state"], met["measurement"], met["threshold"]) == ("met", 0.6, 0.5)
    assert judged.one_attempt()["state"] == "failed"
    assert "0.4" in run.stdout and "0.5" in run.stdout  # the summary shows measurement vs threshold


def test_a_met_judge_gate_passes(judged):
    judged.setup("""
        @define_eval(judge=True)
        def gated(t):
            t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
    """)
    assert judged.run().exit_code == 0
    assert (judged.result("capital")["state"], judged.one_attempt()["state"]) == ("met", "passed")


def test_a_failed_judge_gate_in_a_score_eval_keeps_the_earned_points(judged):
    judged.setup("""
        @define_score_eval(judge=True)
        def scored(t):
            t.check(QA, closed_qa("gate marker-gate").at_least(1)).gate().label("gate")
            t.check(QA, factuality("fact marker-fact")).score(20).label("facts")
    """)
    judged.server.when("marker-gate", Reply.tool("N", "no"))
    judged.server.when("marker-fact", Reply.tool("A", "subset"))

    run = judged.run()

    assert run.exit_code == 1
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["gate"], attempt["score"], attempt["max_score"]) == (
        "scored", "failed", 8.0, 20.0)


def test_an_unavailable_scoring_judge_makes_the_attempt_unrankable_not_zero(judged):
    judged.setup("""
        @define_score_eval(judge={"max_retries": 0})
        def scored(t):
            t.check(QA, closed_qa("works marker-up")).score(5).label("up")
            t.check(QA, closed_qa("breaks marker-down")).score(5).label("down")
    """)
    judged.server.when("marker-down", Reply.error(503, "overloaded"))

    run = judged.run()

    assert run.exit_code == 5
    down = judged.result("down")
    assert (down["state"], down["reason"], down["measurement"], down["contribution"]) == (
        "unavailable", "judge-transport-error", None, None)
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["score"], attempt["unavailable_weight"], attempt["max_score"]) == (
        "unrankable", 5.0, 5.0, 10.0)  # 5 of 10, 5 unknown: never a fabricated 5/10 or 0
    assert "not rankable" in run.stdout


def test_an_unavailable_gate_only_judge_in_a_score_eval_leaves_the_gate_unavailable(judged):
    # outcomes.md: a gate-only entry decides `gate`, not the state (judge.md's "scores or gates
    # makes a score eval unrankable" reads otherwise for gates; reported to the lead).
    judged.setup("""
        @define_score_eval(judge={"max_retries": 0})
        def gated_score(t):
            t.check(QA, closed_qa("gate marker-down").at_least(1)).gate().label("gate")
            t.check(QA, closed_qa("points marker-up")).score(5).label("points")
    """)
    judged.server.when("marker-down", Reply.error(500, "down"))

    run = judged.run()

    assert run.exit_code == 5
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["gate"], attempt["score"], attempt["unavailable_weight"]) == (
        "scored", "unavailable", 5.0, 0.0)


def test_an_unavailable_gating_judge_makes_a_pass_eval_errored_evidence_unavailable(judged):
    judged.setup("""
        @define_eval(judge={"max_retries": 0})
        def gated(t):
            t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
    """)
    judged.server.default = Reply.error(502, "bad gateway")

    run = judged.run()

    assert run.exit_code == 5
    assert judged.result("capital")["state"] == "unavailable"
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["reason"]) == ("errored", "evidence-unavailable")


def test_an_unavailable_judge_that_only_records_does_not_decide(judged):
    judged.setup("""
        from niceeval_cli.expect import equals

        @define_eval(judge={"max_retries": 0})
        def recorded(t):
            t.check(QA, closed_qa("Names the capital?")).label("recorded only")
            t.check("Paris.", equals("Paris.")).label("deterministic")
    """)
    judged.server.default = Reply.error(500)

    assert judged.run().exit_code == 0
    assert (judged.result("recorded only")["role"], judged.result("recorded only")["state"]) == (
        "record", "unavailable")
    assert judged.one_attempt()["state"] == "passed"
