"""Answers that hold no usable grade (judge.md, fifth row of the failure table): `errored`,
reason `judge-invalid-response`, measurement empty — never guessed, never clipped into range."""

from __future__ import annotations

import pytest

from tests.support.loopback import Reply

INVALID = {
    "not-json": Reply.raw("<html>upstream says hi</html>"),
    "no-choices": Reply.raw({"id": "x", "choices": []}),
    "no-tool-call-no-json": Reply.text("I would say it meets the criterion."),
    "arguments-not-json": Reply.tool("Y", arguments="{reasoning: fine, choice: Y"),
    "unknown-letter": Reply.tool("Z", "Z is my favourite"),
    "another-judges-letter": Reply.tool("C", "factuality's letter, not closed_qa's"),
    "out-of-range-number": Reply.tool("Y", arguments='{"reasoning": "very good", "choice": 1.5}'),
    "non-finite-number": Reply.tool("Y", arguments='{"reasoning": "infinitely good", "choice": Infinity}'),
    "nan": Reply.tool("Y", arguments='{"reasoning": "?", "choice": NaN}'),
    "no-choice": Reply.tool("Y", arguments='{"reasoning": "forgot the letter"}'),
}


@pytest.mark.parametrize("case", INVALID)
def test_an_unusable_answer_is_errored_invalid_response_with_no_measurement(judged, case):
    judged.setup("""
        @define_eval(judge=True)
        def gated(t):
            t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
    """)
    judged.server.enqueue(Reply.tool("Y"))  # the preflight
    judged.server.default = INVALID[case]

    run = judged.run()

    assert run.exit_code == 5
    row = judged.result("capital")
    assert (row["state"], row["reason"], row["measurement"], row["contribution"], row["threshold"]) == (
        "errored", "judge-invalid-response", None, None, 1.0)
    assert row["judge_audit"] is not None and "response" in row["judge_audit"]
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["reason"]) == ("errored", "assertion-errored")
    assert len(judged.grading) == 1, "an invalid answer is not retried"


def test_an_invalid_answer_in_a_score_eval_errors_it_and_keeps_the_partial_score(judged):
    judged.setup("""
        @define_score_eval(judge=True)
        def scored(t):
            t.check(QA, factuality("fact marker-good")).score(10).label("good")
            t.check(QA, factuality("fact marker-bad")).score(10).label("bad")
    """)
    judged.server.when("marker-good", Reply.tool("B", "superset"))
    judged.server.when("marker-bad", Reply.tool("F", "a letter beyond the scale"))

    run = judged.run()

    assert run.exit_code == 5
    bad = judged.result("bad")
    assert (bad["state"], bad["measurement"], bad["contribution"]) == ("errored", None, None)
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["score"], attempt["partial_score"]) == ("errored", None, 6.0)


def test_an_exception_inside_the_judge_evaluator_is_errored_judge_evaluator_error(judged, monkeypatch):
    import niceeval_cli.judge._grade as grade_module

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("prompt renderer exploded")

    monkeypatch.setattr(grade_module, "request_body", broken)  # the CLI runs in this process
    judged.setup("""
        @define_eval(judge=True)
        def gated(t):
            t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
    """)

    run = judged.run()

    assert run.exit_code == 5
    row = judged.result("capital")
    assert (row["state"], row["reason"], row["measurement"]) == ("errored", "judge-evaluator-error", None)
    assert "prompt renderer exploded" in row["explanation"]
    assert judged.one_attempt()["reason"] == "assertion-errored"
    assert judged.grading == []
