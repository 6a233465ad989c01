"""Issue 27 item 4 (judge side): extra headers with `env:` values (sent, never stored),
temperature / seed in the request, the gateway's cost header kept as the judge's own cost, and
the model checked against `/models` and a LiteLLM-style `400 Invalid model name` before dispatch."""

from __future__ import annotations

import json

import pytest

from niceeval_cli._states import AssertionState
from niceeval_cli.expect import closed_qa
from tests.support.loopback import Reply

QA = {"input": "q", "output": "a"}
SECRET = "hdr-secret-Qm27xLp0"


async def test_headers_sampling_and_cost(judge_server, service, make_settings, monkeypatch) -> None:
    monkeypatch.setenv("JUDGE_TAGS", SECRET)
    reply = Reply.tool("Y", f"echo {SECRET}")
    judge_server.default = Reply(reply.status, reply.body, (("x-litellm-response-cost", "0.0042"),))
    settings = make_settings(headers={"x-litellm-tags": "env:JUDGE_TAGS", "X-Team": "evals"},
                             temperature=0, seed=7)
    grade = await service.grade(closed_qa("q"), QA, settings)
    assert grade.state == AssertionState.MEASURED
    request = judge_server.grading_requests[-1]
    assert request.headers["x-litellm-tags"] == SECRET and request.headers["x-team"] == "evals"
    assert request.json["temperature"] == 0 and request.json["seed"] == 7
    assert grade.cost_usd == pytest.approx(0.0042)
    audit = json.loads(grade.audit)
    assert audit["cost_usd"] == pytest.approx(0.0042)
    assert SECRET not in (grade.audit or "") + grade.explanation
    view = json.dumps(settings.fingerprint_view())
    assert "env:JUDGE_TAGS" in view and SECRET not in view


async def test_unset_header_variable_fails_the_preflight(judge_server, service, make_settings, monkeypatch) -> None:
    monkeypatch.delenv("JUDGE_TAGS", raising=False)
    failure = await service.preflight(make_settings(headers={"x-litellm-tags": "env:JUDGE_TAGS"}))
    assert failure is not None and "JUDGE_TAGS" in failure.cause


async def test_a_model_missing_from_models_is_a_setup_failure(judge_server, service, make_settings) -> None:
    judge_server.listed = ["other-model"]
    failure = await service.preflight(make_settings())
    assert failure is not None and "judge-test" in failure.cause and "other-model" in failure.cause
    assert judge_server.grading_requests == []


async def test_an_empty_models_list_is_no_error(judge_server, service, make_settings) -> None:
    judge_server.listed = []
    judge_server.default = Reply.tool("Y")
    assert await service.preflight(make_settings()) is None


async def test_litellm_invalid_model_name_is_a_setup_failure(judge_server, service, make_settings) -> None:
    judge_server.default = Reply.error(400, "/chat/completions: Invalid model name passed in model=judge-test. "
                                            "Call `/v1/models` to view available models for your key.")
    failure = await service.preflight(make_settings())
    assert failure is not None and "judge-test" in failure.cause and "400" in failure.cause
