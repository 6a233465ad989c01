"""Issue 9, item 26: the system under test is checked once before dispatch — `http`, `openai-chat`
and custom adapters with `preflight` — and refused / 401 / 404 is a setup error (exit 3) naming the
experiment and the URL, with none of that experiment's attempts dispatched, while a healthy
experiment in the same run still runs."""

from __future__ import annotations

import pytest

from tests.support.loopback import Loopback, free_port
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=3)
async def chat(t):
    turn = await t.send("hello")
    t.check(turn.message, includes("hi")).label("greets")
'''


def _answering(status: int) -> Loopback:
    def answer(method: str, path: str, body: bytes) -> tuple[int, bytes, str]:
        if method == "POST":
            return 200, b'{"message": "hi there", "choices": [{"message": {"content": "hi there"}}]}', \
                "application/json"
        return status, b'{"error": "no"}', "application/json"
    return Loopback(answer)


def _dispatched(server: Loopback) -> int:
    return sum(1 for method, _ in server.calls if method == "POST")


@pytest.mark.parametrize("status", [None, 401, 404], ids=["refused", "401", "404"])
def test_an_unreachable_http_system_is_a_setup_error_naming_experiment_and_url(proj: Project, status) -> None:
    healthy = _answering(405)  # a route that exists but does not answer OPTIONS: passes the preflight
    broken = _answering(status) if status else None
    url = f"{broken.url}/chat" if broken else f"http://127.0.0.1:{free_port()}/chat"
    try:
        proj.write("niceeval.toml", f'''
            [experiments.up]
            adapter = "http"
            [experiments.up.options]
            url = "{healthy.url}/chat"

            [experiments.down]
            adapter = "http"
            [experiments.down.options]
            url = "{url}"
        ''')
        proj.write("evals/chat.py", EVALS)
        res = proj.run("--junit", "junit.xml", env={"NO_COLOR": "1"})
    finally:
        healthy.stop()
        if broken:
            broken.stop()
    assert res.returncode == 3, (res.returncode, res.stdout[-1500:], res.stderr[-1500:])
    out = res.stdout + res.stderr
    assert "down" in out and url in out and "Traceback" not in out, out
    if status:
        assert str(status) in out
        assert _dispatched(broken) == 0
    assert _dispatched(healthy) == 3
    states = {(r["experiment_id"], r["state"]) for r in proj.sql("SELECT experiment_id, state FROM attempts")}
    assert states == {("up", "passed")}, states
    assert proj.sql("SELECT exit_code FROM runs") == [{"exit_code": 3}]
    assert proj.sql("SELECT status FROM runs") == [{"status": "setup-error"}]


def test_an_openai_chat_endpoint_refusing_the_key_is_a_setup_error(proj: Project) -> None:
    server = _answering(401)
    try:
        proj.write("niceeval.toml", f'''
            [experiments."models/m"]
            adapter = "openai-chat"
            model = "m"
            [experiments."models/m".options]
            base_url = "{server.url}/v1"
            api_key_env = "SUT_KEY"
        ''')
        proj.write("evals/chat.py", EVALS)
        res = proj.run(env={"SUT_KEY": "sut-key-value-1234", "NO_COLOR": "1"})
    finally:
        server.stop()
    assert res.returncode == 3, (res.returncode, res.stdout[-1500:], res.stderr[-1500:])
    out = res.stdout + res.stderr
    assert "models/m" in out and f"{server.url}/v1" in out and "401" in out
    assert "sut-key-value-1234" not in out
    assert _dispatched(server) == 0 and proj.sql("SELECT count(*) AS n FROM attempts") == [{"n": 0}]


def test_a_custom_adapter_preflight_cause_is_a_setup_error(proj: Project) -> None:
    proj.write("my_adapter.py", '''
        from niceeval_cli import define_adapter


        async def send(ctx, message, **options):
            raise AssertionError("never dispatched")


        adapter = define_adapter(name="mine", send=send,
                                 preflight=lambda: "the bot at http://127.0.0.1:9/ is down")
    ''')
    proj.write("niceeval.toml", '[experiments.custom]\nadapter = "my_adapter:adapter"\n')
    proj.write("evals/chat.py", EVALS)
    res = proj.run(env={"NO_COLOR": "1"})
    assert res.returncode == 3, (res.returncode, res.stdout[-1500:], res.stderr[-1500:])
    assert "custom" in res.stdout + res.stderr and "is down" in res.stdout + res.stderr
    assert proj.sql("SELECT count(*) AS n FROM attempts") == [{"n": 0}]
