"""The built-in `command` adapter: a real subprocess per `t.send`, message on stdin, reply on stdout."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli.adapters import AdapterLoadError, load_adapter
from niceeval_cli.adapters._command import CommandFailed
from niceeval_cli.authoring import AdapterContext

#: The project root the adapters are loaded for (their relative paths start there).
ROOT = Path(__file__).parent

PY = sys.executable


def _script(code: str) -> list[str]:
    return [PY, "-c", code]


async def test_the_message_goes_to_stdin_and_stdout_is_the_reply(make_ctx: Callable[..., AdapterContext]) -> None:
    adapter = load_adapter("command", {"argv": _script("import sys; print(sys.stdin.read()[::-1])")}, "exp", root=ROOT)
    turn = await adapter.send(make_ctx(), "héllo")
    assert turn.message == "olléh"  # UTF-8 both ways, trailing newline removed
    assert turn.input == "héllo"


async def test_a_non_zero_exit_raises_with_the_exit_code_and_the_stderr_tail(
    make_ctx: Callable[..., AdapterContext],
) -> None:
    code = "import sys; sys.stderr.write('x' * 5000 + 'model file missing'); sys.exit(3)"
    adapter = load_adapter("command", {"argv": _script(code)}, "exp", root=ROOT)
    with pytest.raises(CommandFailed) as caught:
        await adapter.send(make_ctx(), "hi")
    text = str(caught.value)
    assert "exited with code 3" in text
    assert text.endswith("model file missing")
    assert "chars before]" in text and len(text) < 2600  # only the tail is kept


async def test_a_command_over_its_timeout_is_killed_and_raises(make_ctx: Callable[..., AdapterContext]) -> None:
    adapter = load_adapter("command", {"argv": _script("import time; time.sleep(30)"), "timeout_ms": 200}, "exp",
                           root=ROOT)
    started = time.monotonic()
    with pytest.raises(CommandFailed, match="did not finish within timeout_ms=200"):
        await adapter.send(make_ctx(), "hi")
    assert time.monotonic() - started < 5


async def test_the_timeout_also_ends_the_commands_children(
    make_ctx: Callable[..., AdapterContext], tmp_path: Path,
) -> None:
    marker = tmp_path / "child-finished"
    child = f"import time, pathlib; time.sleep(0.4); pathlib.Path({str(marker)!r}).write_text('x')"
    parent = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(30)"
    adapter = load_adapter("command", {"argv": _script(parent), "timeout_ms": 200}, "exp", root=ROOT)
    with pytest.raises(CommandFailed):
        await adapter.send(make_ctx(), "hi")
    time.sleep(0.8)
    assert not marker.exists()


async def test_cwd_option_sets_the_working_directory(
    make_ctx: Callable[..., AdapterContext], tmp_path: Path,
) -> None:
    adapter = load_adapter("command", {"argv": _script("import os; print(os.getcwd())"), "cwd": str(tmp_path)}, "exp",
                           root=ROOT)
    assert Path((await adapter.send(make_ctx(), "")).message).resolve() == tmp_path.resolve()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, "key 'argv' is required"),
        ({"argv": []}, "key 'argv'"),
        ({"argv": ["no-such-program-xyz"]}, "'no-such-program-xyz' is not found on PATH"),
        ({"argv": [PY], "timeout_ms": 0}, "key 'timeout_ms'"),
        ({"argv": [PY], "timeout_ms": "5s"}, "key 'timeout_ms'"),
        ({"argv": [PY], "shell": True}, "unknown key 'shell'"),
    ],
)
def test_invalid_options_are_load_errors_naming_the_key(options: dict[str, Any], expected: str) -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter("command", options, "cli", root=ROOT)
    assert "[experiments.cli.options]" in str(caught.value)
    assert expected in str(caught.value)


def test_a_failing_command_makes_the_attempt_errored_with_adapter_error(run_project: Any) -> None:
    argv = json.dumps([PY, "-c", "import sys; sys.stderr.write('no GPU found'); sys.exit(7)"])
    run = run_project(f"""
        [experiments.cli]
        adapter = "command"
        [experiments.cli.options]
        argv = {argv}
    """, {"ask.py": """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes

        @define_eval()
        async def ask(t):
            turn = await t.send("hi")
            t.check(turn.message, includes("hello"))
    """})
    assert run.exit_code == 5, run.output
    [row] = run.query()
    assert (row["state"], row["reason"]) == ("errored", "adapter-error")
    assert "exited with code 7" in row["error"] and "no GPU found" in row["error"]


async def test_an_ndjson_event_quoting_a_line_separator_is_one_event(make_ctx: Callable[..., AdapterContext]) -> None:
    """JSON leaves U+2028 / U+2029 / U+0085 raw in strings (Node's JSON.stringify, ensure_ascii=False):
    the line is still one event, the text kept whole."""
    said = "one\u2028two\u2029three\u0085four"
    code = ("import json, sys; p = lambda o: sys.stdout.write(json.dumps(o, ensure_ascii=False) + '\\n'); "
            f"p({{'type': 'message', 'text': {said!r}}}); p({{'type': 'final', 'message': {said!r}}})")
    adapter = load_adapter("command", {"argv": _script(code), "output": "ndjson"}, "exp", root=ROOT)
    turn = await adapter.send(make_ctx(), "hi")
    assert turn.message == said
    assert [e.text for e in turn.events] == [said]  # type: ignore[union-attr]


async def test_an_ndjson_line_nested_too_deeply_is_an_event_protocol_error_naming_it(
    make_ctx: Callable[..., AdapterContext],
) -> None:
    from niceeval_cli.adapters._events import EventProtocolError

    code = "print('{\"type\": \"message\", \"text\": ' + '[' * 100000 + ']' * 100000 + '}')"
    adapter = load_adapter("command", {"argv": _script(code), "output": "ndjson"}, "exp", root=ROOT)
    with pytest.raises(EventProtocolError, match="line 1 of stdout is JSON nested too deeply"):
        await adapter.send(make_ctx(), "hi")
