"""The built-in `python` adapter: `t.send` calls a project function named "module:attr"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli.adapters import AdapterLoadError, load_adapter
from niceeval_cli.authoring import AdapterContext, Usage

#: The project root the adapters are loaded for (their relative paths start there).
ROOT = Path(__file__).parent


async def test_a_sync_function_returning_text_becomes_the_turn_message(
    agent_module: Callable[[str], str], make_ctx: Callable[..., AdapterContext],
) -> None:
    name = agent_module("def reply(message):\n    return message.upper()\n")
    adapter = load_adapter("python", {"callable": f"{name}:reply"}, "exp", root=ROOT)
    turn = await adapter.send(make_ctx(), "hello")
    assert (turn.input, turn.message, turn.usage) == ("hello", "HELLO", None)
    assert adapter.identity["name"] == "python"


async def test_an_async_function_returning_a_dict_reports_usage_and_data(
    agent_module: Callable[[str], str], make_ctx: Callable[..., AdapterContext],
) -> None:
    name = agent_module("""
        async def reply(message):
            return {"message": "ok", "usage": {"input_tokens": 12, "output_tokens": 3}, "data": {"k": 1}}
    """)
    adapter = load_adapter("python", {"callable": f"{name}:reply"}, "exp", root=ROOT)
    turn = await adapter.send(make_ctx(), "hi")
    assert turn.message == "ok"
    assert turn.usage == Usage(input_tokens=12, output_tokens=3)
    assert turn.data == {"k": 1}


async def test_kwargs_table_and_send_options_reach_a_function_that_accepts_them(
    agent_module: Callable[[str], str], make_ctx: Callable[..., AdapterContext],
) -> None:
    name = agent_module("""
        def reply(message, **options):
            return f"{message}|{sorted(options.items())}"
    """)
    adapter = load_adapter("python", {"callable": f"{name}:reply", "kwargs": {"tone": "dry", "n": 1}}, "exp", root=ROOT)
    turn = await adapter.send(make_ctx(), "m", n=2)
    assert turn.message == "m|[('n', 2), ('tone', 'dry')]"


async def test_a_function_without_keyword_parameters_is_called_with_the_message_only(
    agent_module: Callable[[str], str], make_ctx: Callable[..., AdapterContext],
) -> None:
    name = agent_module("def reply(message):\n    return 'only ' + message\n")
    adapter = load_adapter("python", {"callable": f"{name}:reply"}, "exp", root=ROOT)
    assert (await adapter.send(make_ctx(), "m")).message == "only m"
    with pytest.raises(TypeError, match="does not accept keyword option"):
        await adapter.send(make_ctx(), "m", temperature=0)


async def test_an_unusable_reply_is_an_error_naming_the_callable(
    agent_module: Callable[[str], str], make_ctx: Callable[..., AdapterContext],
) -> None:
    name = agent_module("def reply(message):\n    return {'text': 'wrong key'}\n")
    adapter = load_adapter("python", {"callable": f"{name}:reply"}, "exp", root=ROOT)
    with pytest.raises(TypeError, match=rf"{name}:reply returned a dict with unknown key\(s\) text"):
        await adapter.send(make_ctx(), "m")


def test_a_callable_that_cannot_be_imported_is_a_load_error_naming_the_options_key() -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter("python", {"callable": "no_such_module_xyz:reply"}, "local", root=ROOT)
    text = str(caught.value)
    assert "[experiments.local.options]" in text and "'callable'" in text and "no_such_module_xyz" in text


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, "key 'callable' is required"),
        ({"callable": "agent:reply", "typo": 1}, "unknown key 'typo'"),
        ({"callable": "just_a_module"}, 'expected "module:attr"'),
        ({"callable": "agent:reply", "kwargs": "x"}, "key 'kwargs'"),
    ],
)
def test_invalid_options_name_the_table_and_the_key(options: dict[str, Any], expected: str) -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter("python", options, "models/a", root=ROOT)
    text = str(caught.value)
    assert '[experiments."models/a".options]' in text
    assert expected in text
    assert "Allowed keys: callable, kwargs" in text


def test_the_callables_module_is_the_system_under_tests_code(agent_module: Callable[[str], str]) -> None:
    """The runner hashes `sut_files` (with their project imports) into the fingerprint, so editing
    the agent's module runs its evals again (config.md, "The system under test's identity")."""
    name = agent_module("def f(m):  return m")
    adapter = load_adapter("python", {"callable": f"{name}:f"}, "exp", root=ROOT)
    assert [path.name for path in adapter.sut_files] == [f"{name}.py"]
    assert adapter.remote is False and adapter.identity["version"] == "1"


def test_the_python_adapter_records_usage_and_errors_into_the_attempt(
    agent_module: Callable[[str], str], run_project: Any,
) -> None:
    name = agent_module("""
        def reply(message):
            if message == "boom":
                raise RuntimeError("the agent crashed")
            return {"message": "30 days", "usage": {"input_tokens": 40, "output_tokens": 2}}
    """)
    run = run_project(f"""
        [experiments.local]
        adapter = "python"
        [experiments.local.options]
        callable = "{name}:reply"
    """, {"chat.py": """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes

        @define_eval()
        async def refund(t):
            turn = await t.send("refund?")
            t.check(turn.message, includes("30 days"))

        @define_eval()
        async def crash(t):
            await t.send("boom")
    """})
    assert run.exit_code == 5, run.output
    rows = {r["eval_id"]: r for r in run.query()}
    assert rows["chat/refund"]["state"] == "passed"
    assert (rows["chat/refund"]["input_tokens"], rows["chat/refund"]["output_tokens"]) == (40, 2)
    assert rows["chat/crash"]["state"] == "errored"
    assert rows["chat/crash"]["reason"] == "adapter-error"
    assert "RuntimeError: the agent crashed" in rows["chat/crash"]["error"]
