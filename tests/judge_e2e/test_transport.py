"""Transport failures after a grading request started, and retries (judge.md, fourth row of
the failure table and "Retries"): unavailable with the reason and the HTTP status, never a
fabricated grade."""

from __future__ import annotations

import pytest

from tests.support.judge_e2e import wait_for_requests
from tests.support.loopback import Reply

OK = Reply.tool("Y", "meets it")


def _gated(judge: str) -> str:
    return f"""
        @define_eval(judge={judge})
        def gated(t):
            t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
    """


def _unavailable(judged, reason: str) -> dict:
    row = judged.result("capital")
    assert (row["state"], row["reason"], row["measurement"], row["contribution"]) == (
        "unavailable", reason, None, None), row
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["reason"]) == ("errored", "evidence-unavailable")
    return row


def test_a_judge_slower_than_timeout_ms_is_judge_timeout(judged):
    judged.setup(_gated('{"timeout_ms": 200, "max_retries": 0}'))
    judged.server.enqueue(OK, Reply.tool("Y", "too late", delay_s=0.5))  # the preflight, then the grade

    run = judged.run()

    assert run.exit_code == 5
    row = _unavailable(judged, "judge-timeout")
    assert "timeout_ms=200" in row["explanation"]
    assert len(wait_for_requests(judged.server, 2)) == 2  # the slow one is logged when it answers


def test_timeout_ms_covers_the_retries_too(judged):
    judged.setup(_gated('{"timeout_ms": 400, "max_retries": 20}'))
    judged.server.default = Reply.error(500, "still broken", delay_s=0.1)

    judged.run()

    _unavailable(judged, "judge-timeout")
    assert 2 <= len(judged.grading) < 21


def test_a_retry_after_longer_than_the_time_left_is_judge_timeout(judged):
    judged.setup(_gated('{"timeout_ms": 1000, "max_retries": 3}'))
    judged.server.enqueue(OK, Reply.error(429, "come back later", retry_after=30))

    judged.run()

    row = _unavailable(judged, "judge-timeout")
    assert "429" in row["explanation"]
    assert len(judged.grading) == 1


def test_still_429_after_the_retries_is_judge_rate_limited(judged):
    judged.setup(_gated('{"max_retries": 2}'))
    judged.server.default = Reply.error(429, "rate limit reached", retry_after=0)

    run = judged.run()

    assert run.exit_code == 5
    row = _unavailable(judged, "judge-rate-limited")
    assert "429" in row["explanation"] and "rate limit reached" in row["explanation"]
    assert len(judged.grading) == 3  # the first request and max_retries = 2 retries


def test_still_5xx_after_the_retries_is_judge_transport_error(judged):
    judged.setup(_gated('{"max_retries": 1}'))
    judged.server.default = Reply.error(500, "internal failure")

    judged.run()

    row = _unavailable(judged, "judge-transport-error")
    assert "500" in row["explanation"] and "internal failure" in row["explanation"]
    assert len(judged.grading) == 2


def test_a_reset_connection_is_judge_transport_error(judged):
    judged.setup(_gated('{"max_retries": 1}'))
    judged.server.enqueue(OK)  # the preflight
    judged.server.default = Reply.reset_connection()

    judged.run()

    _unavailable(judged, "judge-transport-error")
    assert len(judged.grading) == 2


@pytest.mark.parametrize(("failure", "reason"), [
    (Reply.error(503, "unavailable"), "judge-transport-error"),
    (Reply.error(429, "slow down", retry_after=0), "judge-rate-limited"),
], ids=["503", "429"])
def test_max_retries_zero_sends_exactly_one_grading_request(judged, failure, reason):
    judged.setup(_gated('{"max_retries": 0}'))
    judged.server.enqueue(OK, failure, OK)  # a retry would have succeeded

    judged.run()

    _unavailable(judged, reason)
    assert len(judged.grading) == 1


def test_a_429_then_success_is_retried_after_retry_after(judged):
    judged.setup(_gated('{"max_retries": 3}'))
    judged.server.enqueue(OK, Reply.error(429, "wait a bit", retry_after=0.4), Reply.tool("Y", "second try"))

    run = judged.run()

    assert run.exit_code == 0
    row = judged.result("capital")
    assert (row["state"], row["measurement"]) == ("met", 1.0)
    assert row["explanation"].endswith("Y: second try")
    first, second = judged.grading
    assert second.started - first.ended >= 0.38  # the default backoff alone would wait ≤ 0.2 s
    assert row["judge_tokens"] == 120  # only the answer that graded reports usage


def test_a_5xx_then_success_is_retried(judged):
    judged.setup(_gated('{"max_retries": 1}'))
    judged.server.enqueue(OK, Reply.error(502, "bad gateway"), Reply.tool("Y", "recovered"))

    assert judged.run().exit_code == 0
    assert judged.result("capital")["state"] == "met"
    assert len(judged.grading) == 2


def test_a_request_the_server_rejects_is_judge_transport_error_without_retries(judged):
    judged.setup(_gated('{"max_retries": 3}'))
    judged.server.enqueue(OK, Reply.error(400, "context length exceeded"), OK)

    judged.run()

    row = _unavailable(judged, "judge-transport-error")
    assert "400" in row["explanation"] and "context length exceeded" in row["explanation"]
    assert len(judged.grading) == 1


def test_a_body_that_is_not_what_its_content_encoding_says_is_a_transport_error(judged):
    """`Content-Encoding: gzip` on a body that is no gzip: httpx's DecodingError is no transport
    error, and the judge's preflight and grading call caught only those — `niceeval run` stopped
    with an internal error (exit 4). Now the preflight leaves it to the grading call, which is
    `judge-transport-error` naming the encoding."""
    judged.setup(_gated('{"max_retries": 1}'))
    judged.server.default = Reply(200, "no gzip at all", (("Content-Encoding", "gzip"),))

    run = judged.run()

    assert run.exit_code == 5, run.stdout + run.stderr
    row = _unavailable(judged, "judge-transport-error")
    assert "not valid gzip" in row["explanation"], row


def test_a_proxy_from_the_environment_carries_the_judge_s_requests(judged):
    """`HTTP_PROXY` is honoured by the judge as by the adapters: the judge sent straight to its
    `base_url` (the lean path never asked the environment), so behind a proxy its preflight could
    not connect — exit 3 while the adapters' requests went through. The judge host here does not
    resolve; only the proxy (the loopback judge, answering for it) can reach it."""
    host = "http://judge.invalid"
    judged.setup(_gated("True"), toml="[project]\n" + judged.judge_table(base_url=f"{host}/v1"))
    judged.server.default = OK
    proxy = judged.server.base_url.removesuffix("/v1")
    unset = dict.fromkeys(("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"))

    run = judged.run(env={"HTTP_PROXY": proxy, "http_proxy": proxy, **unset})

    assert run.exit_code == 0, run.stdout + run.stderr
    assert judged.result("capital")["state"] == "met"
    assert judged.grading and all(r.path.startswith(f"{host}/v1/") for r in judged.server.requests)
    assert [path for path, _ in judged.server.gets] == [f"{host}/v1/models"]  # the preflight's, proxied too


def test_an_impossible_reported_judge_cost_is_unreported_never_an_evaluator_error(judged):
    """A judge reporting `usage.cost` = 1e308 for two grading calls: their sum overflowed
    (`math.fsum` raises) and the attempt `errored` ("the executor failed: OverflowError") with
    both grades met; an integer cost of 400 digits made the assertion `judge-evaluator-error`.
    Past 2**53 USD a reported cost is unreported; the grades stand."""
    judged.setup("""
        @define_eval(judge=True)
        def gated(t):
            t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("one")
            t.check(QA, closed_qa("Is it short?").at_least(1)).gate().label("two")
            t.check(QA, closed_qa("Is it polite?").at_least(1)).gate().label("three")
    """)
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    judged.server.enqueue(OK, Reply.tool("Y", usage={**usage, "cost": 10**400}))  # the preflight, a grade
    judged.server.default = Reply.tool("Y", usage={**usage, "cost": 1e308})  # type: ignore[dict-item]

    run = judged.run()

    assert run.exit_code == 0, run.stdout + run.stderr
    assert [judged.result(label)["state"] for label in ("one", "two", "three")] == ["met"] * 3
    assert judged.one_attempt()["judge_cost_usd"] is None
