"""Issue 27, item 4 (integrations.md §4): gateways and providers, seen from outside — a real
`niceeval run` against a loopback OpenAI-compatible server that scripts a gateway's answers
(LiteLLM's cost header, `Retry-After`, "Invalid model name"), and the stored rows read back."""

from __future__ import annotations

import json

import pytest

from tests.support.loopback import GATEWAY_EVALS as EVALS
from tests.support.loopback import Gateway
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


KEY = "gw-key-for-tests-0001"
HEADER_SECRET = "gwtok-Zq8xY2secretvalue77"


@pytest.fixture
def gateway():
    server = Gateway(listed=["gw-model"])
    yield server
    server.stop()


def _project(proj: Project, url: str, model: str = "gw-model", extra: str = "") -> None:
    proj.write("niceeval.toml", f'''
        [experiments.gw]
        adapter = "openai-chat"
        model = "{model}"
        [experiments.gw.options]
        base_url = "{url}"
        api_key_env = "GW_KEY"
        headers = {{ X-Gateway-Token = "env:GW_TOKEN", X-Team = "evals" }}
        {extra}
    ''')
    proj.write("evals/chat.py", EVALS)


ENV = {"GW_KEY": KEY, "GW_TOKEN": HEADER_SECRET, "NO_COLOR": "1"}


def test_cost_header_and_env_headers(proj: Project, gateway: Gateway) -> None:
    _project(proj, gateway.url)
    res = proj.run(env=ENV)
    assert res.returncode == 0, (res.stdout[-1500:], res.stderr[-1500:])
    rows = proj.sql("SELECT state, cost_usd FROM attempts")
    assert rows == [{"state": "passed", "cost_usd": 0.0125}], rows
    chats = [h for method, path, h in gateway.seen if method == "POST"]
    assert chats and all(h["x-gateway-token"] == HEADER_SECRET and h["x-team"] == "evals" for h in chats)
    assert HEADER_SECRET not in res.stdout + res.stderr
    assert HEADER_SECRET.encode() not in proj.store.read_bytes()
    shown = proj.cli("view", env=ENV)  # a human view of the run
    assert HEADER_SECRET not in shown.stdout + shown.stderr


def test_a_model_the_gateway_does_not_list_is_a_setup_error(proj: Project, gateway: Gateway) -> None:
    _project(proj, gateway.url, model="gpt-typo")
    res = proj.run(env=ENV)
    out = res.stdout + res.stderr
    assert res.returncode == 3, out[-2000:]
    assert out.count("gpt-typo") >= 1 and "Traceback" not in out
    assert gateway.posts() == 0
    assert proj.sql("SELECT count(*) AS n FROM attempts") == [{"n": 0}]


def test_invalid_model_name_without_models_route(proj: Project) -> None:
    server = Gateway(listed=None)
    server.script.append((400, {}, {"error": {"message": "{'error': '/chat/completions: Invalid model name passed "
                                               "in model=gpt-typo. Call `/v1/models` to view available models'}",
                                    "type": "None", "param": "None", "code": "400"}}))
    try:
        _project(proj, server.url, model="gpt-typo")
        res = proj.run(env=ENV)
    finally:
        server.stop()
    out = res.stdout + res.stderr
    assert res.returncode == 3, out[-2000:]
    assert "gpt-typo" in out
    assert server.posts() == 1  # the preflight's one request; no attempt was dispatched
    assert proj.sql("SELECT count(*) AS n FROM attempts") == [{"n": 0}]


def test_429_with_retry_after_then_success_passes_with_the_retry_noted(proj: Project, gateway: Gateway) -> None:
    gateway.script.append((429, {"Retry-After": "0.3"}, {"error": {"message": "rate limited"}}))
    _project(proj, gateway.url)
    res = proj.run(env=ENV)
    assert res.returncode == 0, (res.stdout[-1500:], res.stderr[-1500:])
    rows = proj.sql("SELECT state, notes FROM attempts")
    assert rows[0]["state"] == "passed"
    notes = json.loads(rows[0]["notes"])
    assert any("HTTP 429" in n and "retry 1 of 2" in n and "Retry-After" in n for n in notes), notes
    assert gateway.posts() == 2


@pytest.mark.parametrize("adapter", ["openai-chat", "http"])
def test_stream_true_is_refused_at_configuration_time(proj: Project, adapter: str) -> None:
    options = 'base_url = "http://127.0.0.1:9/v1"' if adapter == "openai-chat" else 'url = "http://127.0.0.1:9/x"'
    proj.write("niceeval.toml", f'''
        [experiments.gw]
        adapter = "{adapter}"
        model = "m"
        [experiments.gw.options]
        {options}
        stream = true
    ''')
    proj.write("evals/chat.py", EVALS)
    res = proj.run(env=ENV)
    out = res.stdout + res.stderr
    assert res.returncode == 2, out[-2000:]
    assert "stream" in out and "does not stream" in out and "Traceback" not in out


def test_an_impossible_reported_cost_is_unreported_never_the_attempt_s_failure(proj: Project, gateway: Gateway) -> None:
    """A `usage.cost` of 1 followed by 400 zeros (an int no float holds) raised OverflowError: the
    attempt `errored`, though the answer was fine; 1e308 was kept, and two of them overflowed
    every sum of the run (`niceeval report` stopped with an internal error). Past 2**53 USD a
    reported cost is unreported, as a negative or non-finite one is."""
    _project(proj, gateway.url)
    ok = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi there"}}]}
    gateway.script.extend([(200, {}, {**ok, "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 10**400}}),
                           (200, {}, {**ok, "usage": {"cost": 1e308}}),
                           (200, {"x-litellm-response-cost": "1e308"}, ok)])
    res = proj.run("--attempts", "3", env=ENV)
    assert res.returncode == 0, (res.stdout[-1500:], res.stderr[-1500:])
    rows = proj.sql("SELECT state, cost_usd FROM attempts")
    assert rows == [{"state": "passed", "cost_usd": None}] * 3, rows
