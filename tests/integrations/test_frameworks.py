"""integrations.md, section 2: each converter against the real framework package, offline.

Every recorded tool call is compared with the log the tool functions wrote themselves: name,
arguments, and whether that try failed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from niceeval_cli import ToolCall
from niceeval_cli.integrations import turn_from_framework
from tests.support.frameworks import (
    langgraph_interrupted_run,
    langgraph_one_id_twice_run,
    langgraph_run,
    openai_agents_rejected_and_timed_out_run,
    openai_agents_run,
    pydantic_ai_early_end_run,
    pydantic_ai_run,
)

#: Under `-n`, the tests that import the real frameworks share one worker: importing pydantic-ai,
#: the Agents SDK and LangGraph costs ~4 s of CPU in each worker that does it.
pytestmark = pytest.mark.xdist_group("frameworks")


def _calls(turn) -> list[tuple[str, object, str]]:
    return [(e.name, e.input, e.status) for e in turn.events if isinstance(e, ToolCall)]


def test_pydantic_ai_run_result_keeps_each_try_of_a_retried_tool() -> None:
    pytest.importorskip("pydantic_ai")
    from niceeval_cli.integrations.pydantic_ai import turn_from

    result, log = pydantic_ai_run()
    turn = turn_from(result)
    assert _calls(turn) == log
    failed = [e for e in turn.events if isinstance(e, ToolCall) and e.status == "failed"]
    assert [e.error for e in failed] == ["payment service busy"]
    assert turn.message == "Refunded order 7." and turn.input == "refund order 7"
    assert turn.usage is not None and turn.usage.input_tokens and turn.usage.output_tokens
    assert turn.data["model"].startswith("function:")
    assert turn.observed == frozenset({"messages", "tool_calls"})
    assert turn_from_framework(result, "refund order 7") == turn



def test_pydantic_ai_a_tool_it_never_ran_is_pending_not_completed() -> None:
    """Beside an output tool that gave the final result, pydantic-ai skips the other calls and
    answers each with "Tool not executed …" (outcome `success`): that read as a `completed` call
    whose output was the stub, so `called_tool(tool_match("refund", status="completed"))` passed
    for a refund that never happened. And the run's structured output is its reply (it was empty)."""
    pytest.importorskip("pydantic_ai")
    from niceeval_cli.expect import tool_match
    from niceeval_cli.integrations.pydantic_ai import turn_from

    result, log = pydantic_ai_early_end_run()
    assert log == []  # the tool function never ran
    turn = turn_from(result)
    assert json.loads(turn.message) == {"text": "done"}  # the structured output is the reply (it was empty)
    refund = next(e for e in turn.events if isinstance(e, ToolCall) and e.name == "refund")
    assert (refund.status, refund.output, refund.input) == ("pending", None, {"order": 7}), refund
    assert "Tool not executed" in (refund.error or "")
    assert tool_match("refund", status="completed").evaluate(refund).state == "mismatched"

def test_openai_agents_run_result_marks_the_failed_tool() -> None:
    pytest.importorskip("agents")
    from niceeval_cli.integrations.openai_agents import turn_from

    result, log = openai_agents_run()
    turn = turn_from(result)
    assert _calls(turn) == log
    lookup, refund = [e for e in turn.events if isinstance(e, ToolCall)]
    assert lookup.output == {"order": 7} or lookup.output == "{'order': 7}"
    assert refund.error is not None and refund.error.startswith("An error occurred while running the tool")
    assert turn.message == "Refund failed for order 7."
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (30, 6)



def test_openai_agents_a_rejected_call_is_rejected_and_a_timed_out_one_failed() -> None:
    """The SDK answers a call that was not approved "Tool execution was not approved." and one past
    its tool's `timeout` "Tool 'slow' timed out after 0.1 seconds." — both read as `completed`
    calls with those texts as outputs, so `no_failed_actions()` passed over them."""
    pytest.importorskip("agents")
    from niceeval_cli.integrations.openai_agents import turn_from

    result, log = openai_agents_rejected_and_timed_out_run()
    assert log == []  # neither tool function ended
    calls = {e.name: e for e in turn_from(result).events if isinstance(e, ToolCall)}
    assert (calls["refund"].status, calls["refund"].output, calls["refund"].error) == (
        "rejected", None, "Tool execution was not approved.")
    assert (calls["slow"].status, calls["slow"].output) == ("failed", None)
    assert calls["slow"].error == "Tool 'slow' timed out after 0.1 seconds."

def test_langgraph_messages_with_an_error_tool_message() -> None:
    pytest.importorskip("langgraph")
    from niceeval_cli.integrations.langchain import turn_from

    result, log = langgraph_run()
    turn = turn_from(result)
    assert _calls(turn) == log
    refund = [e for e in turn.events if isinstance(e, ToolCall)][1]
    assert "payment down" in (refund.error or "")
    assert turn.message == "Refund failed for order 7." and turn.input == "refund order 7"
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (30, 8)
    assert turn.data == {"model": "fake-1"}
    assert turn_from(result["messages"]) == turn



def test_a_run_stopped_for_a_human_is_a_waiting_turn_not_a_completed_one() -> None:
    """A LangGraph `interrupt()` and an Agents SDK approval stop the run with the call unanswered:
    the turn read `completed`, so `succeeded()` matched an agent still waiting for its human."""
    pytest.importorskip("langgraph")
    pytest.importorskip("agents")
    from niceeval_cli.integrations import langchain, openai_agents

    result, log = langgraph_interrupted_run()
    turn = langchain.turn_from(result)
    assert log == [] and turn.status == "waiting", turn
    assert [(e.name, e.status) for e in turn.events if isinstance(e, ToolCall)] == [("refund", "pending")]

    result, _ = openai_agents_rejected_and_timed_out_run(reject=False)
    assert result.interruptions  # the SDK stopped for the approval of refund
    turn = openai_agents.turn_from(result)
    assert turn.status == "waiting", turn
    assert ("refund", "pending") in [(e.name, e.status) for e in turn.events if isinstance(e, ToolCall)]


def test_two_calls_given_one_id_each_keep_their_own_result() -> None:
    """Keyed by id alone, the second call took the first one's result and the first stayed
    `pending`: `tool_match("lookup", input={"order": 8}, output="order 7 found")` matched."""
    pytest.importorskip("langgraph")
    from niceeval_cli.integrations.langchain import turn_from

    result, log = langgraph_one_id_twice_run()
    assert sorted(entry[1]["order"] for entry in log) == [7, 8]  # both ran
    calls = [(e.input, e.output, e.status) for e in turn_from(result).events if isinstance(e, ToolCall)]
    assert calls == [({"order": 7}, "order 7 found", "completed"), ({"order": 8}, "order 8 found", "completed")]

def test_a_plain_value_is_no_framework_result() -> None:
    assert turn_from_framework("hello") is None
    assert turn_from_framework({"message": "hi"}) is None
    assert turn_from_framework({"messages": ["not", "langchain"]}) is None


def test_the_converters_import_no_framework() -> None:
    code = ("import sys, niceeval_cli.integrations as i, niceeval_cli.integrations.pydantic_ai, "
            "niceeval_cli.integrations.openai_agents, niceeval_cli.integrations.langchain;"
            "i.turn_from_framework({'messages': []}); i.turn_from_framework('x');"
            "import json; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pydantic_ai', 'agents', 'langgraph', 'langchain_core', 'openai'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(Path(__file__).resolve().parents[2]))
    assert json.loads(out.stdout) == []
