"""Preflight: one minimal request per distinct (model, base_url, api_key_env) before dispatch."""

from __future__ import annotations

import asyncio

import httpx

from niceeval_cli.judge import JudgeService, PreflightFailure
from tests.support.components import need_command
from tests.support.loopback import NGINX_PLAIN_ANSWER, Reply, TlsPort


async def test_a_working_endpoint_passes_with_one_minimal_request(judge_server, service, make_settings):
    assert await service.preflight(make_settings()) is None
    (request,) = judge_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.json["model"] == "judge-test" and request.json["max_tokens"] == 1
    assert "tools" not in request.json


async def test_preflight_runs_once_per_distinct_setting(judge_server, service, make_settings):
    judge_server.default = Reply.tool("Y", delay_s=0.05)
    same = [make_settings(), make_settings(timeout_ms=9999), make_settings(max_retries=0)]
    results = await asyncio.gather(*[service.preflight(s) for s in same * 3])
    assert results == [None] * 9 and len(judge_server.requests) == 1
    await service.preflight(make_settings(model="judge-two"))
    await service.preflight(make_settings(api_key_env="OTHER_JUDGE_KEY_FOR_TEST"))  # unset → no call
    assert len(judge_server.requests) == 2


async def test_wrong_key_is_a_setup_failure_naming_endpoint_and_cause(judge_server, service, make_settings):
    judge_server.api_key = "the-right-key"
    settings = make_settings()
    failure = await service.preflight(settings)
    assert isinstance(failure, PreflightFailure)
    assert failure.settings is settings
    assert failure.endpoint == judge_server.base_url + "/chat/completions"
    assert failure.cause == "401 Unauthorized: Incorrect API key provided"


async def test_forbidden_is_a_setup_failure(judge_server, service, make_settings):
    judge_server.default = Reply.error(403, "project has no access")
    failure = await service.preflight(make_settings())
    assert failure is not None and failure.cause == "403 Forbidden: project has no access"


async def test_unknown_model_is_a_setup_failure(judge_server, service, make_settings):
    judge_server.models = {"gpt-real"}
    failure = await service.preflight(make_settings(model="gpt-typo"))
    assert failure is not None and failure.cause.startswith("404 Not Found")
    assert "gpt-typo" in failure.cause


async def test_unknown_model_reported_as_400_is_a_setup_failure(judge_server, service, make_settings):
    judge_server.default = Reply.error(400, "model 'x' not found, try pulling it first")
    failure = await service.preflight(make_settings())
    assert failure is not None and failure.cause.startswith("400 Bad Request")


async def test_connection_refused_is_a_setup_failure(judge_server, service, make_settings):
    port = judge_server.port
    judge_server.stop()
    failure = await service.preflight(make_settings(base_url=f"http://127.0.0.1:{port}/v1"))
    assert failure is not None and failure.cause.startswith("cannot connect to http://127.0.0.1:")


async def test_an_http_base_url_at_a_tls_port_is_one_setup_failure_saying_use_https(service, make_settings,
                                                                                     tmp_path):
    need_command("openssl")  # to make the server's certificate
    with TlsPort(tmp_path) as tls:
        base = f"http://127.0.0.1:{tls.port}/v1"
        failure = await service.preflight(make_settings(base_url=base))
    assert failure is not None
    assert failure.cause == (f"the judge's base_url is {base}, but port {tls.port} speaks TLS (it hung up on a "
                             "plain HTTP request); use https://")


async def test_an_http_base_url_at_a_tls_port_answering_400_is_one_setup_failure_saying_use_https(
        service, make_settings, tmp_path):
    need_command("openssl")  # to make the server's certificate
    with TlsPort(tmp_path, plain_answer=NGINX_PLAIN_ANSWER) as tls:  # as nginx answers plain HTTP
        base = f"http://127.0.0.1:{tls.port}/v1"
        failure = await service.preflight(make_settings(base_url=base))
    assert failure is not None
    assert failure.cause == (f"the judge's base_url is {base}, but port {tls.port} speaks TLS (it answered a "
                             "plain HTTP request with 400); use https://")


async def test_dns_failure_is_a_setup_failure(make_settings):
    def unresolvable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)

    service = JudgeService(transport=httpx.MockTransport(unresolvable))
    try:
        failure = await service.preflight(make_settings(base_url="http://judge.example.invalid/v1"))
    finally:
        await service.aclose()
    assert failure is not None and "Name or service not known" in failure.cause


async def test_transient_answers_are_not_setup_failures(judge_server, service, make_settings):
    judge_server.enqueue(Reply.error(429, retry_after=5), Reply.error(503),
                         Reply.error(400, "bad max_tokens"))
    assert await service.preflight(make_settings(model="a")) is None
    assert await service.preflight(make_settings(model="b")) is None
    assert await service.preflight(make_settings(model="c")) is None


async def test_no_model_or_no_key_means_no_preflight_call(judge_server, service, make_settings, monkeypatch):
    assert await service.preflight(make_settings(model=None)) is None
    settings = make_settings()
    monkeypatch.delenv(settings.api_key_env)
    assert await service.preflight(settings) is None
    assert judge_server.requests == []


async def test_the_key_never_appears_in_the_cause(judge_server, service, make_settings, judge_key):
    judge_server.default = Reply.error(401, f"Incorrect API key provided: {judge_key}")
    failure = await service.preflight(make_settings())
    assert failure is not None and judge_key not in failure.cause and "[redacted]" in failure.cause
