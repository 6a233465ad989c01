"""The system under test is checked once before dispatch, like the judge (issue 9.26, 9.9)."""

from __future__ import annotations

import socket

import pytest

from tests.support.components import need_command
from tests.support.loopback import NGINX_PLAIN_ANSWER, Loopback, TlsPort

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

@define_eval()
async def hello(t):
    turn = await t.send("ping")
    t.check(turn.message, includes("pong"))
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_bot_that_is_down_is_a_setup_error_naming_the_experiment_and_url(run_project):
    url = f"http://127.0.0.1:{_closed_port()}/api/chat"
    result = run_project(f"""
        [experiments.bot]
        adapter = "http"
        [experiments.bot.options]
        url = "{url}"
        request_template = {{ message = "{{message}}" }}
        response_path = "message"
    """, {"hello.py": EVAL})
    assert result.exit_code == 3, result.output
    assert "bot" in result.output and url in result.output
    assert result.query("attempts") == []  # nothing was dispatched
    assert result.query("runs")[0]["status"] == "setup-error"


def test_an_http_url_at_a_tls_port_is_one_setup_error_saying_use_https(run_project, tmp_path):
    """Not "Server disconnected" once per attempt: the run stops before dispatch, saying why."""
    need_command("openssl")  # to make the server's certificate
    with TlsPort(tmp_path) as tls:
        url = f"http://127.0.0.1:{tls.port}/api/chat"
        result = run_project(f"""
            [project]
            attempts = 3
            [experiments.bot]
            adapter = "http"
            [experiments.bot.options]
            url = "{url}"
            request_template = {{ message = "{{message}}" }}
            response_path = "message"
        """, {"hello.py": EVAL})
    assert result.exit_code == 3, result.output
    assert "url in [experiments.bot.options]" in result.output and "use https://" in result.output
    assert "Server disconnected" not in result.output
    assert result.query("attempts") == []


def test_an_http_url_at_a_tls_port_answering_400_is_one_setup_error_saying_use_https(run_project, tmp_path):
    """Not nginx's 400 once per attempt: the run stops before dispatch, saying why."""
    need_command("openssl")  # to make the server's certificate
    with TlsPort(tmp_path, plain_answer=NGINX_PLAIN_ANSWER) as tls:
        url = f"http://127.0.0.1:{tls.port}/api/chat"
        result = run_project(f"""
            [project]
            attempts = 3
            [experiments.bot]
            adapter = "http"
            [experiments.bot.options]
            url = "{url}"
            request_template = {{ message = "{{message}}" }}
            response_path = "message"
        """, {"hello.py": EVAL})
    assert result.exit_code == 3, result.output
    assert f"url in [experiments.bot.options] is {url}, but port {tls.port} speaks TLS" in result.output
    assert "use https://" in result.output and "plain HTTP request was sent" not in result.output
    assert result.query("attempts") == []


def test_the_other_experiments_still_run_when_one_bot_is_down(run_project, app_server):
    down = f"http://127.0.0.1:{_closed_port()}/api/chat"
    result = run_project(f"""
        [experiments.down]
        adapter = "http"
        [experiments.down.options]
        url = "{down}"
        request_template = {{ message = "{{message}}" }}
        response_path = "message"
        [experiments.up]
        adapter = "http"
        [experiments.up.options]
        url = "{app_server.url}"
        request_template = {{ message = "{{message}}" }}
        response_path = "message"
    """, {"hello.py": EVAL})
    assert result.exit_code == 3, result.output
    assert [(a["experiment_id"], a["state"]) for a in result.query("attempts")] == [("up", "passed")]


@pytest.mark.parametrize("bad", ["sk-first\nsecondline", "sk-caf\u00e9-key-0123456789"])
def test_an_adapter_key_that_cannot_be_a_header_is_a_setup_error_naming_the_variable(
    run_project, app_server, monkeypatch, bad
):
    monkeypatch.setenv("BOT_TOKEN", bad)
    result = run_project(f"""
        [experiments.bot]
        adapter = "http"
        [experiments.bot.options]
        url = "{app_server.url}"
        headers = {{ Authorization = "Bearer {{env:BOT_TOKEN}}" }}
        request_template = {{ message = "{{message}}" }}
        response_path = "message"
    """, {"hello.py": EVAL})
    assert result.exit_code == 3, result.output
    assert "BOT_TOKEN" in result.output
    assert "secondline" not in result.output and "caf" not in result.output
    assert app_server.requests == []


def test_an_openai_chat_key_with_a_newline_is_a_setup_error_naming_the_variable(run_project, monkeypatch):
    monkeypatch.setenv("CHAT_KEY", "sk-abc\nsecondline")
    result = run_project(f"""
        [experiments.chat]
        adapter = "openai-chat"
        model = "m"
        [experiments.chat.options]
        base_url = "http://127.0.0.1:{_closed_port()}/v1"
        api_key_env = "CHAT_KEY"
    """, {"hello.py": EVAL})
    assert result.exit_code == 3, result.output
    assert "CHAT_KEY" in result.output and "secondline" not in result.output


def test_an_endpoint_that_redirects_is_one_setup_error_naming_where(run_project, monkeypatch):
    """An `http://` base_url its server sends to `https://`: NiceEval follows no redirect, and every
    attempt errored with a bare "answered HTTP 301"; now the preflight says where it points, once."""
    def moved(method: str, path: str, body: bytes) -> tuple[int, bytes, str, dict[str, str]]:
        return 301, b"", "text/plain", {"Location": f"https://chat.example{path}"}

    monkeypatch.setenv("BOT_KEY", "k-123456789")
    with Loopback(moved) as server:
        result = run_project(f"""
            [experiments.bot]
            adapter = "openai-chat"
            model = "m"
            [experiments.bot.options]
            base_url = "{server.url}/v1"
            api_key_env = "BOT_KEY"
        """, {"hello.py": EVAL})
    assert result.exit_code == 3, result.output
    assert "a redirect to https://chat.example/v1/chat/completions" in result.output, result.output
    assert result.query("attempts") == []  # nothing was dispatched
