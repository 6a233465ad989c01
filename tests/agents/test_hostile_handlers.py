"""Tool handlers (and other code of an attempt) that misbehave cost their own attempt, never the
run, and never read as something they are not.

A handler that raised KeyboardInterrupt ended the whole run as if Ctrl-C had been pressed: the run
was left `abandoned` with nothing sealed, the other attempts never ran. One that raised
CancelledError was sealed `interrupted` — "the run was interrupted while this attempt was in
flight" — in a run nobody interrupted. During a run Ctrl-C cancels the attempts' tasks and never
raises in them, so both are the code's own exceptions: the attempt is `errored` naming them
(`adapter-error` for the KeyboardInterrupt that left the adapter's send, `exception` for the
CancelledError), and the run goes on. Each test is a real `niceeval` process against the loopback
OpenAI-compatible server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project

KEY_ENV = "NICEEVAL_HOSTILE_TEST_KEY"

TOOLS = """
import asyncio

def kbint(arguments):
    raise KeyboardInterrupt

async def cancel(arguments):
    raise asyncio.CancelledError

HANDLERS = {"kbint": kbint, "cancel": cancel}
"""

EVALS = """
from niceeval_cli import define_eval

@define_eval(cases={"kbint": "kbint", "cancel": "cancel", "plain": "plain"})
async def agent(t, tool):
    await t.send(tool)
    t.succeeded()
"""


def _call(name: str) -> Reply:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    return Reply.completion({"content": None, "tool_calls": [call]}, finish_reason="tool_calls")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 cannot tell a task's own CancelledError")
def test_a_handler_raising_keyboardinterrupt_or_cancellederror_errors_its_attempt_not_the_run(
        tmp_path: Path, judge_server: JudgeServer) -> None:
    judge_server.listed = ["m"]
    judge_server.when('"kbint"', _call("kbint"))
    judge_server.when('"cancel"', _call("cancel"))
    judge_server.default = Reply.text("plain answer")
    proj = Project(tmp_path / "proj")
    proj.write("tools.py", TOOLS)
    proj.write("evals/agent.py", EVALS)
    proj.write("niceeval.toml", f'[project]\nmax_concurrency = 1\n\n[experiments.chat]\nadapter = "openai-chat"\n'
                                f'model = "m"\n[experiments.chat.options]\nbase_url = "{judge_server.base_url}"\n'
                                f'api_key_env = "{KEY_ENV}"\ntool_handlers = "tools:HANDLERS"\n')
    run = proj.run(env={KEY_ENV: "sk-hostile-0123456789abcdef"}, timeout=120)
    out = run.stdout + run.stderr
    assert run.returncode == 5, out  # two attempts errored, one passed: undecided, not interrupted (130)
    [row] = proj.sql("SELECT status, exit_code FROM runs")
    assert (row["status"], row["exit_code"]) == ("finished", 5), row
    attempts = {a["case_id"]: a for a in proj.sql("SELECT case_id, state, reason, error FROM attempts")}
    assert attempts["plain"]["state"] == "passed", attempts
    # KeyboardInterrupt leaves the adapter's send as any exception does (docs/authoring.md:
    # `adapter-error`); a CancelledError cannot be told from the attempt being stopped there, and
    # is the attempt's own exception once it reaches the attempt.
    for case, raised, reason in (("kbint", "KeyboardInterrupt", "adapter-error"),
                                 ("cancel", "CancelledError", "exception")):
        attempt = attempts[case]
        assert (attempt["state"], attempt["reason"]) == ("errored", reason), attempt
        assert attempt["error"].startswith(f"{raised}:") and "tools.py" in attempt["error"], attempt
    assert "interrupted" not in json.dumps(attempts)


HOSTILE_TEXT_TOOLS = """
class Huge(Exception):
    def __str__(self):
        return "x" * 10_000_000

class Raises(Exception):
    def __str__(self):
        raise ValueError("its own bug")

def huge(arguments):
    raise Huge()

def raises(arguments):
    raise Raises()

HANDLERS = {"huge": huge, "raises": raises}
"""


def test_a_handler_exception_whose_text_is_huge_or_raises_fails_its_call_within_bounds(
        tmp_path: Path, judge_server: JudgeServer) -> None:
    """A handler's exception returning 10 MB from `__str__` was sent back to the model whole (a 10 MB
    request); one whose `__str__` raised errored the attempt (adapter-error, naming the second
    exception) where its tool call should simply have failed."""
    judge_server.listed = ["m"]
    judge_server.enqueue(_call("huge"), _call("raises"), Reply.text("done"))
    proj = Project(tmp_path / "proj")
    proj.write("tools.py", HOSTILE_TEXT_TOOLS)
    proj.write("evals/agent.py", """
from niceeval_cli import define_eval

@define_eval
async def agent(t):
    await t.send("go")
    t.succeeded()
""")
    proj.write("niceeval.toml", f'[project]\n\n[experiments.chat]\nadapter = "openai-chat"\n'
                                f'model = "m"\n[experiments.chat.options]\nbase_url = "{judge_server.base_url}"\n'
                                f'api_key_env = "{KEY_ENV}"\ntool_handlers = "tools:HANDLERS"\n')
    run = proj.run(env={KEY_ENV: "sk-hostile-0123456789abcdef"}, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr  # failed tool calls, answered: the attempt passes
    sent = [m["content"] for r in judge_server.requests for m in r.json["messages"] if m["role"] == "tool"]
    assert len(sent[-1]) < 5000 and "Raises: <its str() raised ValueError>" in sent[-1], sent[-1][:200]
    assert len(sent[0]) < 5000 and "Huge: xxx" in sent[0]
    stored = proj.sql("SELECT length(text) AS size FROM events")
    assert max(row["size"] or 0 for row in stored) < 20_000, stored
