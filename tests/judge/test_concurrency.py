"""Judge calls of a whole run share one bounded client per endpoint."""

from __future__ import annotations

import asyncio

import httpx

from niceeval_cli._states import AssertionState
from niceeval_cli.expect import closed_qa
from tests.support.loopback import Reply

QA = {"input": "q", "output": "a"}


async def test_in_flight_calls_and_connections_never_exceed_max_concurrency(
    judge_server, service, make_settings,
):
    judge_server.default = Reply.tool("Y", delay_s=0.05)
    a = make_settings(max_concurrency=4)
    b = make_settings(max_concurrency=4, model="other-judge", timeout_ms=9000)  # another eval, same endpoint
    grades = await asyncio.gather(*[service.grade(closed_qa(f"q{i}"), QA, a if i % 2 else b)
                                    for i in range(12)])
    assert all(g.state == AssertionState.MEASURED for g in grades)
    assert len(judge_server.grading_requests) == 12
    assert judge_server.max_in_flight == 4  # bounded, and not serialised either
    assert judge_server.connections <= 4


async def test_max_concurrency_one_serialises_calls(judge_server, service, make_settings):
    judge_server.default = Reply.tool("Y", delay_s=0.03)
    settings = make_settings(max_concurrency=1)
    await asyncio.gather(*[service.grade(closed_qa("q"), QA, settings) for _ in range(4)])
    assert judge_server.max_in_flight == 1 and judge_server.connections == 1


async def test_waiting_for_a_slot_does_not_count_against_the_judge_timeout(
    judge_server, service, make_settings,
):
    judge_server.default = Reply.tool("Y", delay_s=0.1)
    settings = make_settings(max_concurrency=1, timeout_ms=250)  # the third waits ~0.2s for its slot
    grades = await asyncio.gather(*[service.grade(closed_qa("q"), QA, settings) for _ in range(3)])
    assert [g.state for g in grades] == [AssertionState.MEASURED] * 3


async def test_the_test_server_overlaps_64_slow_requests(judge_server):
    judge_server.latency_s = 1.0  # long enough for 64 connections to open on a loaded machine
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(limits=limits, timeout=10) as client:
        url = judge_server.base_url + "/chat/completions"
        responses = await asyncio.gather(*[client.post(url, json={"model": "m"}) for _ in range(64)])
    assert all(r.status_code == 200 for r in responses)
    # all 64 were inside the server at once (serialised, it would count 1): overlap shown by the
    # server's own count, not by a wall time a loaded machine stretches
    assert judge_server.max_in_flight == 64 and judge_server.connections == 64
