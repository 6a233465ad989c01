"""The `claude-code` and `codex` stream readers on the CLIs' documented event formats."""

from __future__ import annotations

import json

from niceeval_cli.adapters._claude_code import read_stream as read_claude
from niceeval_cli.adapters._codex import read_stream as read_codex
from niceeval_cli.authoring import Message, ToolCall


def _lines(*events: dict) -> list[str]:
    return [json.dumps(e) for e in events]


CLAUDE = _lines(
    {"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-x", "tools": ["Bash"]},
    {"type": "assistant", "session_id": "s-1", "parent_tool_use_id": None, "message": {"content": [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "t2", "name": "mcp__db__query", "input": {"sql": "select 1"}}]}},
    {"type": "user", "session_id": "s-1", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "calc.py", "is_error": False},
        {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "denied"}],
         "is_error": True}]}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Done.", "session_id": "s-1",
     "total_cost_usd": 0.0125, "num_turns": 2,
     "usage": {"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 30,
               "output_tokens": 40}},
)


def test_claude_tool_uses_and_results_become_calls_and_the_result_event_the_usage_and_cost() -> None:
    read = read_claude("hi", CLAUDE)
    turn = read.turn
    assert read.complete and read.session_id == "s-1"
    assert turn.message == "Done." and turn.status == "completed"
    assert turn.observed == frozenset({"messages", "tool_calls"})
    calls = [e for e in turn.events if isinstance(e, ToolCall)]
    assert [(c.name, c.input, c.output, c.status, c.error) for c in calls] == [
        ("Bash", {"command": "ls"}, "calc.py", "completed", None),
        ("mcp__db__query", {"sql": "select 1"}, "denied", "failed", "denied")]
    assert [e.text for e in turn.events if isinstance(e, Message)] == ["Looking."]
    assert turn.usage is not None
    assert (turn.usage.input_tokens, turn.usage.output_tokens, turn.usage.cache_read_tokens,
            turn.usage.cost_usd) == (150, 40, 30, 0.0125)


def test_claude_without_its_result_event_is_unobserved_and_an_error_result_is_a_failed_turn() -> None:
    cut = read_claude("hi", CLAUDE[:-1])
    assert not cut.complete and cut.turn.observed == frozenset() and cut.turn.usage is None
    failed = read_claude("hi", [*CLAUDE[:-1], json.dumps({"type": "result", "subtype": "error_max_turns",
                                                          "is_error": True, "session_id": "s-1"})])
    assert failed.complete and failed.turn.status == "failed"


CODEX = _lines(
    {"type": "thread.started", "thread_id": "th-1"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "i0", "type": "error", "message": "metadata not found"}},
    {"type": "item.started", "item": {"id": "i1", "type": "command_execution", "command": "ls",
                                      "status": "in_progress"}},
    {"type": "item.completed", "item": {"id": "i1", "type": "command_execution", "command": "ls",
                                        "aggregated_output": "calc.py\n", "exit_code": 0, "status": "completed"}},
    {"type": "item.completed", "item": {"id": "i2", "type": "command_execution", "command": "pytest",
                                        "aggregated_output": "1 failed", "exit_code": 1, "status": "failed"}},
    {"type": "item.completed", "item": {"id": "i3", "type": "file_change", "status": "completed",
                                        "changes": [{"path": "calc.py", "kind": "update"}]}},
    {"type": "item.completed", "item": {"id": "i4", "type": "mcp_tool_call", "server": "db", "tool": "query",
                                        "arguments": {"sql": "x"}, "result": None,
                                        "error": {"message": "no such table"}, "status": "failed"}},
    {"type": "item.completed", "item": {"id": "i5", "type": "agent_message", "text": "Fixed."}},
    {"type": "turn.completed", "usage": {"input_tokens": 500, "cached_input_tokens": 100, "output_tokens": 50}},
)


def test_codex_items_become_calls_and_turn_completed_the_usage() -> None:
    read = read_codex("hi", CODEX)
    turn = read.turn
    assert read.complete and read.session_id == "th-1" and turn.message == "Fixed."
    calls = [e for e in turn.events if isinstance(e, ToolCall)]
    assert [(c.name, c.status) for c in calls] == [("shell", "completed"), ("shell", "failed"),
                                                   ("apply_patch", "completed"), ("mcp__db__query", "failed")]
    assert calls[0].output == "calc.py\n" and calls[3].error == "no such table"
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.output_tokens) == (500, 50)
    assert turn.usage.cost_usd is None  # Codex reports no cost
    assert turn.data["warnings"] == ["metadata not found"]


def test_codex_without_turn_completed_is_unobserved_and_turn_failed_is_a_failed_turn() -> None:
    cut = read_codex("hi", CODEX[:-1])
    assert not cut.complete and cut.turn.observed == frozenset()
    failed = read_codex("hi", [*CODEX[:-1], json.dumps({"type": "turn.failed", "error": {"message": "quota"}})])
    assert failed.complete and failed.turn.status == "failed" and failed.turn.data["error"] == "quota"


def test_claude_a_subagents_tool_uses_are_calls_and_unreadable_usage_is_unreported() -> None:
    """Claude Code's Task tool runs a subagent whose steps carry `parent_tool_use_id`: its tool uses
    were left out while the turn claimed every call observed, so `not_called_tool("Bash")` passed
    over a Bash the subagent ran. And a `total_cost_usd` of 1e999 or a negative `output_tokens`
    made the turn raise (`adapter-error`) over a run that had finished."""
    stream = _lines(
        {"type": "assistant", "session_id": "s-1", "parent_tool_use_id": None, "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "clean up"}}]}},
        {"type": "assistant", "session_id": "s-1", "parent_tool_use_id": "t1", "message": {"content": [
            {"type": "text", "text": "Subagent thinking."},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "rm -rf build"}}]}},
        {"type": "user", "session_id": "s-1", "parent_tool_use_id": "t1", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "", "is_error": False}]}},
        {"type": "user", "session_id": "s-1", "parent_tool_use_id": None, "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "cleaned", "is_error": False}]}},
    )
    result = '{"type": "result", "subtype": "success", "is_error": false, "result": "Done.", "session_id": "s-1", ' \
             '"total_cost_usd": 1e999, "usage": {"input_tokens": 10, "output_tokens": -4}}'
    read = read_claude("hi", [*stream, result])
    turn = read.turn
    assert read.complete and turn.status == "completed" and turn.message == "Done."
    calls = [(c.name, c.status) for c in turn.events if isinstance(c, ToolCall)]
    assert calls == [("Task", "completed"), ("Bash", "completed")]
    assert [e.text for e in turn.events if isinstance(e, Message)] == []  # the subagent's text is not the reply's
    assert turn.usage is not None
    assert (turn.usage.input_tokens, turn.usage.output_tokens, turn.usage.cost_usd) == (10, None, None)
