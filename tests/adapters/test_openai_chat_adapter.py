"""The built-in `openai-chat` adapter against the loopback OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli.adapters import AdapterLoadError, load_adapter
from niceeval_cli.authoring import AdapterContext, Usage
from tests.support.loopback import JudgeServer, Reply

#: The project root the adapters are loaded for (their relative paths start there).
ROOT = Path(__file__).parent

KEY_ENV = "NICEEVAL_TEST_CHAT_KEY"
KEY = "sk-test-chat-key-0123456789abcdef"


@pytest.fixture
def chat_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def _options(server: JudgeServer, **more: Any) -> dict[str, Any]:
    return {"base_url": server.base_url, "api_key_env": KEY_ENV, **more}


async def test_a_reply_becomes_a_turn_with_token_usage(
    judge_server: JudgeServer, chat_key: str, make_ctx: Callable[..., AdapterContext],
) -> None:
    judge_server.api_key = chat_key
    judge_server.default = Reply.text("Refunds take 30 days.", usage={"prompt_tokens": 31, "completion_tokens": 7})
    adapter = load_adapter("openai-chat", _options(judge_server, system_prompt="Be brief.", temperature=0), "exp",
                           root=ROOT)
    try:
        turn = await adapter.send(make_ctx(model="chat-model"), "How long do refunds take?")
    finally:
        await adapter.aclose()
    assert turn.message == "Refunds take 30 days."
    assert turn.usage == Usage(input_tokens=31, output_tokens=7)
    [request] = judge_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.json["model"] == "chat-model"
    assert request.json["temperature"] == 0
    assert request.json["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "How long do refunds take?"},
    ]
    assert adapter.secrets == [KEY]  # type: ignore[attr-defined]


async def test_sends_of_one_attempt_continue_the_conversation_and_attempts_do_not_share_it(
    judge_server: JudgeServer, chat_key: str, make_ctx: Callable[..., AdapterContext],
) -> None:
    judge_server.enqueue(Reply.text("first answer"), Reply.text("second answer"), Reply.text("other attempt"))
    adapter = load_adapter("openai-chat", _options(judge_server), "exp", root=ROOT)
    ctx, other = make_ctx(), make_ctx()
    try:
        await adapter.send(ctx, "one")
        await adapter.send(ctx, "two")
        await adapter.send(other, "three")
    finally:
        await adapter.aclose()
    second, third = judge_server.requests[1].json, judge_server.requests[2].json
    assert [m["content"] for m in second["messages"]] == ["one", "first answer", "two"]
    assert [m["content"] for m in third["messages"]] == ["three"]


async def test_send_options_are_added_to_the_request_body(
    judge_server: JudgeServer, chat_key: str, make_ctx: Callable[..., AdapterContext],
) -> None:
    judge_server.default = Reply.text("ok")
    adapter = load_adapter("openai-chat", _options(judge_server, history=False), "exp", root=ROOT)
    try:
        await adapter.send(make_ctx(), "hi", seed=7)
        with pytest.raises(TypeError, match="may not set model"):
            await adapter.send(make_ctx(), "hi", model="other")
    finally:
        await adapter.aclose()
    assert judge_server.requests[0].json["seed"] == 7


async def test_an_unset_key_fails_the_send_naming_the_variable_without_a_request(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch, make_ctx: Callable[..., AdapterContext],
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    adapter = load_adapter("openai-chat", _options(judge_server), "exp", root=ROOT)
    with pytest.raises(RuntimeError, match=f"{KEY_ENV} is unset or empty"):
        await adapter.send(make_ctx(), "hi")
    assert judge_server.requests == []


async def test_an_experiment_without_a_model_is_an_error_naming_the_experiment(
    judge_server: JudgeServer, chat_key: str, make_ctx: Callable[..., AdapterContext],
) -> None:
    adapter = load_adapter("openai-chat", _options(judge_server), "exp", root=ROOT)
    with pytest.raises(RuntimeError, match=r"needs a model: set model = \"...\" in \[experiments.nomodel\]"):
        await adapter.send(make_ctx(model=None, experiment_id="nomodel"), "hi")


async def test_a_refused_request_raises_with_the_status_and_never_the_key(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch, make_ctx: Callable[..., AdapterContext],
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-wrong-key-abcdefghijklmnop")
    judge_server.api_key = KEY
    judge_server.default = Reply.error(401, "Incorrect API key provided: sk-wrong-key-abcdefghijklmnop")
    adapter = load_adapter("openai-chat", _options(judge_server), "exp", root=ROOT)
    try:
        with pytest.raises(RuntimeError) as caught:
            await adapter.send(make_ctx(), "hi")
    finally:
        await adapter.aclose()
    assert "answered HTTP 401" in str(caught.value)
    assert "sk-wrong-key" not in str(caught.value)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"api_key_env": "sk-abc def"}, "key 'api_key_env': expected the NAME of an environment variable"),
        ({"base_url": "localhost:8000"}, "key 'base_url'"),
        ({"temperature": -1}, "key 'temperature'"),
        ({"model": "gpt"}, "unknown key 'model'"),
    ],
)
def test_invalid_options_are_load_errors_naming_the_key(options: dict[str, Any], expected: str) -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter("openai-chat", options, "chat", root=ROOT)
    assert "[experiments.chat.options]" in str(caught.value)
    assert expected in str(caught.value)


def test_token_usage_of_the_system_under_test_is_stored_on_the_attempt(
    judge_server: JudgeServer, chat_key: str, run_project: Any,
) -> None:
    judge_server.default = Reply.text("Refunds take 30 days.", usage={"prompt_tokens": 50, "completion_tokens": 8})
    run = run_project(f"""
        [experiments.chat]
        adapter = "openai-chat"
        model = "chat-model"
        [experiments.chat.options]
        base_url = "{judge_server.base_url}"
        api_key_env = "{KEY_ENV}"
    """, {"refund.py": """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import at_most, includes

        @define_eval()
        async def refund(t):
            turn = await t.send("How long?")
            await t.send("Thanks")
            t.check(turn.message, includes("30 days"))
            t.check(t.usage.total_tokens, at_most(200)).label("token budget")
    """})
    assert run.exit_code == 0, run.output
    [row] = run.query()
    assert (row["state"], row["input_tokens"], row["output_tokens"]) == ("passed", 100, 16)
