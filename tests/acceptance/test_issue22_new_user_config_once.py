"""Issue 22, item 5: a configuration mistake is reported once, before anything is dispatched —
never one ERRORED block per attempt. The CLI (in process), a real loopback server that
counts the requests, stores read with sqlite3."""

from __future__ import annotations

import pytest

from tests.support.loopback import Loopback
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


ASK_TWENTY = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=20)
async def ask(t):
    turn = await t.send("hello")
    t.check(turn.message, includes("hi"))
'''


def _server() -> Loopback:
    return Loopback(lambda method, path, body: (
        200, b'{"data": [], "message": "hi", "choices": [{"message": {"content": "hi"}}]}', "application/json"))


def _attempts(proj: Project) -> int:
    if not proj.store.exists():
        return 0
    return int(proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"])


def test_an_openai_chat_experiment_without_a_model_is_one_configuration_error(proj: Project) -> None:
    with _server() as server:
        proj.write("niceeval.toml", f'''
            [experiments.chat]
            adapter = "openai-chat"
            [experiments.chat.options]
            base_url = "{server.url}/v1"
        ''')
        proj.write("evals/ask.py", ASK_TWENTY)
        res = proj.run(env={"NO_COLOR": "1", "OPENAI_API_KEY": "test-key-123"})
        dry = proj.run("--dry", env={"NO_COLOR": "1", "OPENAI_API_KEY": "test-key-123"})
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    assert "ERRORED" not in out and "Traceback" not in out, out
    assert out.count("needs a model") + out.count("names none") == 1, out
    assert "[experiments.chat]" in out and 'model = "' in out, out
    assert _attempts(proj) == 0 and server.calls == []
    assert dry.returncode == 2 and "[experiments.chat]" in dry.stderr, dry.stdout + dry.stderr


@pytest.mark.parametrize("adapter", ["openai-chat", "http"])
def test_an_unset_key_variable_is_one_setup_error_and_nothing_is_sent(proj: Project, adapter: str) -> None:
    with _server() as server:
        if adapter == "openai-chat":
            proj.write("niceeval.toml", f'''
                [experiments.chat]
                adapter = "openai-chat"
                model = "m"
                [experiments.chat.options]
                base_url = "{server.url}/v1"
                api_key_env = "NICEEVAL_TEST_UNSET_KEY"
            ''')
        else:
            proj.write("niceeval.toml", f'''
                [experiments.chat]
                adapter = "http"
                [experiments.chat.options]
                url = "{server.url}/chat"
                headers = {{ Authorization = "Bearer {{env:NICEEVAL_TEST_UNSET_KEY}}" }}
            ''')
        proj.write("evals/ask.py", ASK_TWENTY)
        res = proj.run(env={"NO_COLOR": "1", "NICEEVAL_TEST_UNSET_KEY": None})
    out = res.stdout + res.stderr
    assert res.returncode == 3, out
    assert "ERRORED" not in out and "Traceback" not in out, out
    assert out.count("NICEEVAL_TEST_UNSET_KEY") == 1, out
    assert "unset or empty" in out and "[experiments.chat.options]" in out, out
    assert server.calls == []  # not even the preflight's probe: the cause is known without asking
    assert _attempts(proj) == 0
    assert proj.sql("SELECT status, exit_code FROM runs") == [{"status": "setup-error", "exit_code": 3}]


def test_python_adapter_kwargs_its_callable_refuses_are_one_configuration_error(proj: Project) -> None:
    proj.write("niceeval.toml", '''
        [experiments.py]
        adapter = "python"
        [experiments.py.options]
        callable = "agent:reply"
        kwargs = { temprature = 0 }
    ''')
    proj.write("agent.py", "def reply(message, temperature=1):\n    return 'hi'\n")
    proj.write("evals/ask.py", ASK_TWENTY)
    res = proj.run(env={"NO_COLOR": "1"})
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    assert out.count("temprature") == 1 and "kwargs" in out and "ERRORED" not in out, out
    assert _attempts(proj) == 0
