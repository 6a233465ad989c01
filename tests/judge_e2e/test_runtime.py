"""The judge inside a running attempt: its token usage, its time counted against the attempt's
timeout, and one bounded client shared by every attempt of the run (judge.md: Retries, Transport)."""

from __future__ import annotations

import pytest

from tests.support.judge_e2e import wait_for_requests
from tests.support.loopback import Reply


def _usage(total: int) -> dict[str, int]:
    return {"prompt_tokens": total - 5, "completion_tokens": 5, "total_tokens": total}


def test_judge_tokens_are_stored_per_assertion_and_summed_per_attempt(judged):
    judged.setup("""
        from niceeval_cli.expect import equals

        @define_score_eval(judge={"max_retries": 0})
        def graded(t):
            t.check(QA, closed_qa("a marker-15")).score(1).label("fifteen")
            t.check(QA, closed_qa("b marker-40")).score(1).label("forty")
            t.check(QA, closed_qa("c marker-none")).score(1).label("unreported")
            t.check(QA, closed_qa("d marker-down")).label("failed call")

        @define_eval()
        def no_judge(t):
            t.check("x", equals("x")).label("plain")
    """)
    judged.server.when("marker-15", Reply.tool("Y", usage=_usage(15)))
    judged.server.when("marker-40", Reply.tool("N", usage=_usage(40)))
    judged.server.when("marker-none", Reply.tool("Y", usage=None))
    judged.server.when("marker-down", Reply.error(500))

    judged.run()

    tokens = {label: judged.result(label)["judge_tokens"]
              for label in ("fifteen", "forty", "unreported", "failed call")}
    assert tokens == {"fifteen": 15, "forty": 40, "unreported": 0, "failed call": 0}
    by_eval = {a["eval_id"]: a["judge_tokens"] for a in judged.attempts()}
    assert by_eval == {"e/graded": 55, "e/no_judge": 0}
    assert judged.result("plain")["judge_tokens"] in (None, 0)


def test_judge_time_counts_against_the_attempt_timeout(judged):
    judged.setup("""
        from niceeval_cli.expect import equals

        @define_eval(judge=True, timeout_ms=250)
        def slow_judge(t):
            t.check("x", equals("x")).label("before")
            t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
    """)
    judged.server.enqueue(Reply.tool("Y"), Reply.tool("Y", "too slow", delay_s=0.6))

    run = judged.run()

    assert run.exit_code == 5
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["reason"]) == ("errored", "timeout")
    assert 250 <= attempt["duration_ms"] < 550
    capital = judged.result("capital")
    assert (capital["state"], capital["reason"], capital["measurement"]) == ("unavailable", "cancelled", None)
    assert judged.result("before")["state"] == "matched"
    wait_for_requests(judged.server, 2)  # let the abandoned request finish before the server stops


BOUNDS = {
    # where max_concurrency is set → ([judge] max_concurrency, experiment judge tables, the bound)
    "project-judge-table": (3, "", 3),
    "default": (None, "", 8),
    "experiment-judge-tables": (None, "[experiments.a.judge]\nmax_concurrency = 2\n"
                                      "[experiments.b.judge]\nmax_concurrency = 2\n", 2),
}


@pytest.mark.parametrize("where", BOUNDS)
def test_all_attempts_share_one_client_bounded_by_judge_max_concurrency(judged, where):
    project_bound, experiment_tables, bound = BOUNDS[where]
    judged.server.latency_s = 0.05
    toml = ("[project]\nmax_concurrency = 16\n" + judged.judge_table(max_concurrency=project_bound)
            + "[experiments.a]\n[experiments.b]\n" + experiment_tables)
    judged.setup("""
        @define_eval(judge=True)
        def many(t):
            t.check(QA, closed_qa("first").at_least(1)).gate().label("first")
            t.check(QA, closed_qa("second").at_least(1)).gate().label("second")
    """, toml=toml)

    run = judged.run("--attempts", "6")  # × 2 experiments × 2 judge calls

    assert run.exit_code == 0
    assert len(judged.grading) == 24
    assert judged.server.max_in_flight == bound  # bounded across experiments, and the bound is reached
    assert judged.server.connections <= bound  # one bounded client for the run, not one per attempt
