"""Retries, backoff, Retry-After and the one time budget that covers them all."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest

from niceeval_cli._states import AssertionState, UnavailableReason
from niceeval_cli.expect import closed_qa
from niceeval_cli.judge import Backoff, JudgeService
from niceeval_cli.judge._client import retry_after_s
from tests.support.loopback import Reply

QA = {"input": "q", "output": "a"}


@pytest.mark.parametrize("reply", [Reply.error(429), Reply.error(500), Reply.reset_connection()])
async def test_max_retries_zero_sends_exactly_one_request(judge_server, service, make_settings, reply):
    judge_server.default = reply
    grade = await service.grade(closed_qa("q"), QA, make_settings(max_retries=0))
    assert grade.state == AssertionState.UNAVAILABLE
    assert len(judge_server.requests) == 1


@pytest.mark.parametrize("retries", [1, 3])
async def test_retries_stop_after_max_retries(judge_server, service, make_settings, retries):
    judge_server.default = Reply.error(502)
    await service.grade(closed_qa("q"), QA, make_settings(max_retries=retries))
    assert len(judge_server.requests) == retries + 1


async def test_a_retry_that_succeeds_gives_the_measurement(judge_server, service, make_settings):
    judge_server.enqueue(Reply.error(429), Reply.reset_connection(), Reply.error(500))
    judge_server.default = Reply.tool("Y", "finally")
    grade = await service.grade(closed_qa("q"), QA, make_settings(max_retries=3))
    assert (grade.state, grade.measurement, grade.explanation) == (AssertionState.MEASURED, 1.0, "Y: finally")
    assert len(judge_server.requests) == 4 and grade.tokens == 120


async def test_retry_after_is_honoured(judge_server, service, make_settings):
    judge_server.enqueue(Reply.error(429, retry_after=0.3))
    grade = await service.grade(closed_qa("q"), QA, make_settings())
    assert grade.state == AssertionState.MEASURED
    first, second = judge_server.requests
    assert second.started - first.ended >= 0.28  # the backoff alone would be ~0.01s


async def test_retry_after_beyond_the_budget_ends_the_call_at_once_as_a_timeout(
    judge_server, service, make_settings,
):
    judge_server.default = Reply.error(429, "busy", retry_after=30)
    started = time.monotonic()
    grade = await service.grade(closed_qa("q"), QA, make_settings(timeout_ms=2000))
    assert time.monotonic() - started < 1.0  # it did not sleep out the remaining budget
    assert (grade.state, grade.reason) == (AssertionState.UNAVAILABLE, UnavailableReason.JUDGE_TIMEOUT)
    assert "429" in grade.explanation and "timeout_ms=2000" in grade.explanation
    assert len(judge_server.requests) == 1


async def test_the_timeout_covers_all_retries(judge_server, service, make_settings):
    judge_server.default = Reply.error(500, delay_s=0.15)
    started = time.monotonic()
    grade = await service.grade(closed_qa("q"), QA, make_settings(timeout_ms=500, max_retries=50))
    elapsed = time.monotonic() - started
    assert (grade.state, grade.reason) == (AssertionState.UNAVAILABLE, UnavailableReason.JUDGE_TIMEOUT)
    assert 0.4 <= elapsed < 1.2
    assert 2 <= len(judge_server.requests) <= 4


async def test_backoff_grows_exponentially_between_retries(judge_server, make_settings):
    service = JudgeService(backoff=Backoff(base_s=0.1, cap_s=1.0, rng=lambda: 1.0))
    try:
        judge_server.default = Reply.error(503)
        await service.grade(closed_qa("q"), QA, make_settings(max_retries=2))
    finally:
        await service.aclose()
    r1, r2, r3 = judge_server.requests
    assert 0.09 <= r2.started - r1.ended < 0.3
    assert 0.19 <= r3.started - r2.ended < 0.5


def test_backoff_jitter_stays_between_half_and_full_delay() -> None:
    assert Backoff(base_s=0.2, rng=lambda: 0.0).delay(2) == pytest.approx(0.4)
    assert Backoff(base_s=0.2, rng=lambda: 1.0).delay(2) == pytest.approx(0.8)
    assert Backoff(base_s=0.2, cap_s=1.0, rng=lambda: 1.0).delay(10) == pytest.approx(1.0)


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_s(httpx.Response(429, headers={"Retry-After": "2"})) == 2.0
    when = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= (retry_after_s(httpx.Response(429, headers={"Retry-After": when})) or 0) <= 61
    assert retry_after_s(httpx.Response(429, headers={"Retry-After": "soon"})) is None
    assert retry_after_s(httpx.Response(429)) is None
