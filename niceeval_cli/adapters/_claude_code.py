"""The built-in `claude-code` adapter: Claude Code's CLI, its `stream-json` events read into a turn.

    [experiments.claude]
    adapter = "claude-code"
    model = "claude-sonnet-4-5"          # or options.model
    [experiments.claude.options]
    allowed_tools = ["Bash", "Edit", "Write"]   # --allowedTools (-p mode asks no permission)
    max_turns = 20                               # --max-turns
    env = ["ANTHROPIC_API_KEY"]
    [experiments.claude.sandbox]
    template = "repo"

One turn runs `claude -p <message> --output-format stream-json --verbose [--model] [--allowedTools]
[--max-turns] [args...]`; a follow-up `t.send` in the same session adds `--resume <session id>`.
Stream (Claude Code's documented `stream-json`): `assistant` events carry text and `tool_use`
blocks (a subagent's too: its tool uses are calls, its text is not the reply), `user` events
the `tool_result`s (`is_error` → a failed call), the final `result` event the reply, `usage`
and `total_cost_usd` (the reported cost), `is_error` (→ a failed turn).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from ..authoring import Message, ToolCall, Turn, Usage
from ._agent_cli import OBSERVES, AgentCliAdapter, AgentCliOptions, Read, parse_lines, text_of
from ._options import parse_options

VERSION = "1"


class ClaudeCodeOptions(AgentCliOptions):
    allowed_tools: list[str] = Field(default_factory=list)
    max_turns: int | None = Field(default=None, gt=0)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _usage(result: Mapping[str, Any]) -> Usage:
    raw: Mapping[str, Any] = result["usage"] if isinstance(result.get("usage"), Mapping) else {}
    cost = result.get("total_cost_usd")
    cached = _int(raw.get("cache_read_input_tokens"))
    return Usage(
        # every token the model read: new, written to the cache, and read from it
        input_tokens=_int(raw.get("input_tokens")) + _int(raw.get("cache_creation_input_tokens")) + cached
        if "input_tokens" in raw else None,
        output_tokens=_count(raw.get("output_tokens")),
        cache_read_tokens=cached if "cache_read_input_tokens" in raw else None,
        # unreadable (negative, or past float range: 1e999) is unreported, never the turn's end
        cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool)
        and math.isfinite(cost) and cost >= 0 else None,
    )


def read_stream(message: str, lines: Sequence[str]) -> Read:
    """Claude Code's `stream-json` lines → the turn (observed only when the `result` event came)."""
    events: list[Any] = []
    calls: dict[str, int] = {}  # tool_use id → its index in events
    texts: list[str] = []
    session_id = None
    result: Mapping[str, Any] | None = None
    model = None
    for event in parse_lines(lines):
        session_id = event.get("session_id") or session_id
        kind = event.get("type")
        body: Mapping[str, Any] = event["message"] if isinstance(event.get("message"), Mapping) else {}
        if kind == "system" and event.get("subtype") == "init":
            model = event.get("model") or model
        elif kind == "assistant":
            # A subagent's step (the Task tool's) carries its parent call's id: its tool uses are
            # calls the agent made too (left out, `not_called_tool` passed over them), its text is
            # not the reply.
            nested = event.get("parent_tool_use_id") is not None
            for block in body.get("content") or []:
                if not isinstance(block, Mapping):
                    continue
                if block.get("type") == "text" and block.get("text") and not nested:
                    texts.append(str(block["text"]))
                    events.append(Message("assistant", str(block["text"])))
                elif block.get("type") == "tool_use" and block.get("name"):
                    call_id = str(block.get("id") or f"tool-{len(calls)}")
                    calls[call_id] = len(events)
                    events.append(ToolCall(name=str(block["name"]), input=block.get("input"), status="pending",
                                           id=call_id))
        elif kind == "user":
            for block in body.get("content") or []:
                if isinstance(block, Mapping) and block.get("type") == "tool_result":
                    index = calls.get(str(block.get("tool_use_id")))
                    if index is None:
                        continue
                    call, output = events[index], text_of(block.get("content"))
                    failed = bool(block.get("is_error"))
                    events[index] = ToolCall(name=call.name, input=call.input, output=output,
                                             status="failed" if failed else "completed", id=call.id,
                                             error=output if failed else None)
        elif kind == "result":
            result = event
    if result is None:
        turn = Turn(input=message, message="\n".join(texts), events=tuple(events), observed=frozenset(),
                    data={"session_id": session_id, "model": model})
        return Read(turn, False, session_id)
    reply = result["result"] if isinstance(result.get("result"), str) else "\n".join(texts)
    failed = bool(result.get("is_error")) or str(result.get("subtype", "success")) != "success"
    data = {"session_id": session_id, "model": model, "subtype": result.get("subtype"),
            "num_turns": result.get("num_turns"), "duration_ms": result.get("duration_ms")}
    turn = Turn(input=message, message=reply, events=tuple(events), status="failed" if failed else "completed",
                usage=_usage(result), observed=frozenset(OBSERVES), data=data)
    return Read(turn, True, session_id)


class ClaudeCodeAdapter(AgentCliAdapter):
    default_binary = "claude"
    install_hint = "npm install -g @anthropic-ai/claude-code"

    def __init__(self, options: ClaudeCodeOptions, root: Path) -> None:
        super().__init__("claude-code", options, VERSION, root)
        self.claude = options

    def argv(self, message: str, resume: str | None, model: str | None) -> list[str]:
        argv = [self.binary, "-p", message, "--output-format", "stream-json", "--verbose"]
        if model:
            argv += ["--model", model]
        if self.claude.allowed_tools:
            argv += ["--allowedTools", ",".join(self.claude.allowed_tools)]
        if self.claude.max_turns is not None:
            argv += ["--max-turns", str(self.claude.max_turns)]
        if resume:
            argv += ["--resume", resume]
        return [*argv, *self.claude.args]

    def read(self, message: str, lines: Sequence[str], state: dict[str, Any]) -> Read:
        return read_stream(message, lines)


def build(options: Mapping[str, Any], experiment_id: str, root: Path) -> ClaudeCodeAdapter:
    """The `claude-code` adapter of one experiment (a missing binary is the preflight's setup error)."""
    return ClaudeCodeAdapter(parse_options(ClaudeCodeOptions, options, experiment_id, "claude-code"), root)
