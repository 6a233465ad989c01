"""The built-in `http` adapter against a real loopback server."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli.adapters import AdapterLoadError, load_adapter
from niceeval_cli.authoring import AdapterContext, Usage

#: The project root the adapters are loaded for (their relative paths start there).
ROOT = Path(__file__).parent

SECRET = "tok-Qm3v9-not-a-real-token"


async def test_the_message_fills_the_request_template_and_the_response_path_is_read(
    app_server: Any, make_ctx: Callable[..., AdapterContext],
) -> None:
    app_server.reply_body = {"choices": [{"message": {"content": "Refunds take 30 days."}}]}
    adapter = load_adapter("http", {
        "url": app_server.url,
        "request_template": {"input": {"text": "Q: {message}", "tags": ["{message}", 3]}, "stream": False},
        "response_path": "choices.0.message.content",
    }, "exp", root=ROOT)
    try:
        turn = await adapter.send(make_ctx(), 'say "hi"')
    finally:
        await adapter.aclose()
    assert turn.message == "Refunds take 30 days."
    assert turn.data == app_server.reply_body
    [request] = app_server.requests
    assert request["json"] == {"input": {"text": 'Q: say "hi"', "tags": ['say "hi"', 3]}, "stream": False}


async def test_the_default_template_and_path_use_a_message_field(
    app_server: Any, make_ctx: Callable[..., AdapterContext],
) -> None:
    adapter = load_adapter("http", {"url": app_server.url}, "exp", root=ROOT)
    try:
        turn = await adapter.send(make_ctx(), "ping")
    finally:
        await adapter.aclose()
    assert turn.message == "pong"
    assert app_server.requests[0]["json"] == {"message": "ping"}


async def test_header_secrets_come_from_the_environment_and_are_exposed_for_redaction(
    app_server: Any, make_ctx: Callable[..., AdapterContext], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("APP_TOKEN", SECRET)
    monkeypatch.setenv("APP_KEY", "k-123")
    options = {"url": app_server.url,
               "headers": {"Authorization": "Bearer {env:APP_TOKEN}", "X-Api-Key": "env:APP_KEY", "X-Team": "evals"}}
    adapter = load_adapter("http", options, "exp", root=ROOT)
    try:
        await adapter.send(make_ctx(), "ping")
    finally:
        await adapter.aclose()
    headers = app_server.requests[0]["headers"]
    assert (headers["authorization"], headers["x-api-key"], headers["x-team"]) == (f"Bearer {SECRET}", "k-123", "evals")
    assert sorted(adapter.secrets) == sorted([SECRET, "k-123"])  # type: ignore[attr-defined]


def test_a_credential_header_written_in_plain_text_is_refused() -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter("http", {"url": "http://127.0.0.1:9/x", "headers": {"Authorization": "Bearer abc"}}, "staging",
                     root=ROOT)
    text = str(caught.value)
    assert "[experiments.staging.options]" in text and "'headers.Authorization'" in text
    assert "abc" not in text


async def test_an_unset_header_variable_fails_each_send_naming_the_variable(
    app_server: Any, make_ctx: Callable[..., AdapterContext], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("APP_TOKEN_UNSET", raising=False)
    adapter = load_adapter("http", {"url": app_server.url, "headers": {"Authorization": "env:APP_TOKEN_UNSET"}}, "exp",
                           root=ROOT)
    with pytest.raises(RuntimeError, match="header Authorization needs APP_TOKEN_UNSET"):
        await adapter.send(make_ctx(), "ping")
    assert app_server.requests == []


async def test_an_error_status_raises_with_the_status_and_a_redacted_body(
    app_server: Any, make_ctx: Callable[..., AdapterContext], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("APP_TOKEN", SECRET)
    app_server.reply_status = 503
    app_server.reply_body = f"overloaded; your token {SECRET} is fine"
    adapter = load_adapter("http", {"url": app_server.url, "headers": {"Authorization": "env:APP_TOKEN"}}, "exp",
                           root=ROOT)
    try:
        with pytest.raises(RuntimeError) as caught:
            await adapter.send(make_ctx(), "ping")
    finally:
        await adapter.aclose()
    assert "answered HTTP 503" in str(caught.value) and "overloaded" in str(caught.value)
    assert SECRET not in str(caught.value)


async def test_a_missing_response_path_says_where_it_stopped(
    app_server: Any, make_ctx: Callable[..., AdapterContext],
) -> None:
    app_server.reply_body = {"output": {"txt": "hi"}}
    adapter = load_adapter("http", {"url": app_server.url, "response_path": "output.text"}, "exp", root=ROOT)
    try:
        expected = r"'output.text' not found .*output is a dict without 'text' \(keys: txt\)"
        with pytest.raises(ValueError, match=expected):
            await adapter.send(make_ctx(), "ping")
    finally:
        await adapter.aclose()


async def test_token_paths_report_usage_and_a_missing_count_stays_unknown(
    app_server: Any, make_ctx: Callable[..., AdapterContext],
) -> None:
    app_server.reply_body = {"message": "ok", "meta": {"in": 9}}
    adapter = load_adapter("http", {"url": app_server.url, "input_tokens_path": "meta.in",
                                    "output_tokens_path": "meta.out"}, "exp", root=ROOT)
    try:
        turn = await adapter.send(make_ctx(), "ping")
    finally:
        await adapter.aclose()
    assert turn.usage == Usage(input_tokens=9, output_tokens=None)


async def test_an_unreachable_service_raises_a_connection_error(make_ctx: Callable[..., AdapterContext]) -> None:
    adapter = load_adapter("http", {"url": "http://127.0.0.1:9/api", "timeout_ms": 2000}, "exp", root=ROOT)
    try:
        with pytest.raises(ConnectionError, match=re.escape("POST http://127.0.0.1:9/api failed")):
            await adapter.send(make_ctx(), "ping")
    finally:
        await adapter.aclose()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, "key 'url' is required"),
        ({"url": "ftp://x"}, "key 'url': expected an http:// or https:// URL"),
        ({"url": "http://x", "response_path": "a..b"}, "key 'response_path'"),
        ({"url": "http://x", "request_template": ["{message}"]}, "key 'request_template'"),
        ({"url": "http://x", "method": "GET"}, "unknown key 'method'"),
    ],
)
def test_invalid_options_are_load_errors_naming_the_key(options: dict[str, Any], expected: str) -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter("http", options, "staging", root=ROOT)
    assert "[experiments.staging.options]" in str(caught.value)
    assert expected in str(caught.value)
