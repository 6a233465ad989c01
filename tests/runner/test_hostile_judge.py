"""Issue 9.1 / 9.2 through a real judge: a lone surrogate in the judge's reasoning and usage of
10**30 in its reply cost nothing but the text (replaced) and the count (unreported)."""

from __future__ import annotations

from tests.support.judge_e2e import Judged
from tests.support.loopback import Reply


def test_judge_reasoning_with_a_lone_surrogate_and_huge_usage_seal_and_the_run_goes_on(project, judge_server):
    judged = Judged(project, judge_server)
    judged.setup("""
        from niceeval_cli.expect import equals

        @define_score_eval(judge={"max_retries": 0})
        def graded(t):
            t.check(QA, closed_qa("a marker-surrogate")).score(1).label("surrogate")
            t.check(QA, closed_qa("b marker-huge")).score(1).label("huge usage")

        @define_eval()
        def plain(t):
            t.check("x", equals("x")).label("plain")
    """)
    judge_server.when("marker-surrogate", Reply.tool("Y", "lone \ud800 reasoning"))
    huge = {"prompt_tokens": 10**30, "completion_tokens": 5, "total_tokens": 10**30 + 5}
    judge_server.when("marker-huge", Reply.tool("Y", usage=huge))

    result = judged.run()

    assert result.exit_code == 0, result.stdout + result.stderr
    assert {a["eval_id"]: a["state"] for a in judged.attempts()} == {"e/graded": "scored", "e/plain": "passed"}
    assert judged.result("surrogate")["state"] == "measured"
    assert "\ud800" not in (judged.result("surrogate")["explanation"] or "")
    assert judged.result("huge usage")["judge_tokens"] == 0  # unusable usage counts as none reported (judge.md)
    assert judged.result("huge usage")["state"] == "measured"
    assert project.query("runs")[0]["status"] == "finished"
