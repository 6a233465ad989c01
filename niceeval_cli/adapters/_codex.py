"""The built-in `codex` adapter: OpenAI Codex's CLI, its `exec --json` events read into a turn.

    [experiments.codex]
    adapter = "codex"
    model = "gpt-5-codex"                  # or options.model
    [experiments.codex.options]
    args = ["--sandbox", "workspace-write"]
    env = ["OPENAI_API_KEY", "CODEX_HOME"]

One turn runs `codex exec --json --skip-git-repo-check [--model] [args...] <message>`; a follow-up
`t.send` in the same session runs `codex exec resume --json ... <thread id> <message>`.
Stream (Codex's documented `exec --json` events): `thread.started` names the thread; each
`item.completed` is an `agent_message` (text), a `command_execution` (→ a `shell` call: command,
aggregated output, failed on a non-zero exit), a `file_change` (→ `apply_patch`: the changes), an
`mcp_tool_call` (→ `mcp__<server>__<tool>`, as Claude Code names them) or a `web_search`;
`turn.completed` carries the usage and ends the turn, `turn.failed` ends it failed. Codex reports
no cost; its usage is the thread's running total, so a resumed turn's usage is the difference.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..authoring import Message, ToolCall, Turn, Usage
from ._agent_cli import OBSERVES, AgentCliAdapter, AgentCliOptions, Read, parse_lines, text_of
from ._options import parse_options

VERSION = "1"
_TOTALS = "codex_usage_totals"  # the thread's running token totals after the session's last turn


def _minus(now: int | None, before: int | None) -> int | None:
    if now is None or before is None or now < before:
        return now if before is None else None  # a total that went down is no difference we can trust
    return now - before


def _tool_call(item: Mapping[str, Any]) -> ToolCall | None:
    kind, item_id = item.get("type"), str(item.get("id") or "") or None
    status = str(item.get("status") or "completed")
    if kind == "command_execution":
        code = item.get("exit_code")
        failed = status in ("failed", "declined") or (isinstance(code, int) and code != 0)
        output = item.get("aggregated_output")
        return ToolCall(name="shell", input={"command": item.get("command")}, output=output,
                        status="rejected" if status == "declined" else "failed" if failed else "completed",
                        id=item_id, error=f"exit code {code}" if failed and isinstance(code, int) else None)
    if kind == "file_change":
        failed = status == "failed"
        return ToolCall(name="apply_patch", input={"changes": item.get("changes")}, output=None,
                        status="failed" if failed else "completed", id=item_id,
                        error="the patch was not applied" if failed else None)
    if kind == "mcp_tool_call":
        error = item.get("error")
        error_text = text_of(error.get("message")) if isinstance(error, Mapping) else (str(error) if error else None)
        failed = status == "failed" or bool(error_text)
        return ToolCall(name=f"mcp__{item.get('server')}__{item.get('tool')}", input=item.get("arguments"),
                        output=item.get("result"), status="failed" if failed else "completed", id=item_id,
                        error=error_text or ("the MCP call failed" if failed else None))
    if kind == "web_search":
        return ToolCall(name="web_search", input={"query": item.get("query")}, id=item_id)
    return None


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, Mapping):
        return None

    def number(key: str) -> int | None:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    return Usage(input_tokens=number("input_tokens"), output_tokens=number("output_tokens"),
                 cache_read_tokens=number("cached_input_tokens"))


def read_stream(message: str, lines: Sequence[str]) -> Read:
    """Codex's `exec --json` lines → the turn (observed only when `turn.completed` / `turn.failed` came)."""
    events: list[Any] = []
    texts: list[str] = []
    thread_id = None
    final: Mapping[str, Any] | None = None
    warnings: list[str] = []
    for event in parse_lines(lines):
        kind = event.get("type")
        if kind == "thread.started":
            thread_id = event.get("thread_id") or thread_id
        elif kind == "item.completed" and isinstance(event.get("item"), Mapping):
            item = event["item"]
            if item.get("type") == "agent_message" and item.get("text"):
                texts.append(str(item["text"]))
                events.append(Message("assistant", str(item["text"])))
            elif item.get("type") == "error" and item.get("message"):
                warnings.append(str(item["message"]))
            elif (call := _tool_call(item)) is not None:
                events.append(call)
        elif kind in ("turn.completed", "turn.failed"):
            final = event
    data: dict[str, Any] = {"thread_id": thread_id, **({"warnings": warnings} if warnings else {})}
    if final is None:
        return Read(Turn(input=message, message=texts[-1] if texts else "", events=tuple(events),
                         observed=frozenset(), data=data), False, thread_id)
    failed = final.get("type") == "turn.failed"
    if failed and isinstance(final.get("error"), Mapping):
        data["error"] = final["error"].get("message")
    turn = Turn(input=message, message=texts[-1] if texts else "", events=tuple(events),
                status="failed" if failed else "completed", usage=_usage(final.get("usage")),
                observed=frozenset(OBSERVES), data=data)
    return Read(turn, True, thread_id)


class CodexAdapter(AgentCliAdapter):
    default_binary = "codex"
    install_hint = "npm install -g @openai/codex"

    def __init__(self, options: AgentCliOptions, root: Path) -> None:
        super().__init__("codex", options, VERSION, root)

    def argv(self, message: str, resume: str | None, model: str | None) -> list[str]:
        argv = [self.binary, "exec"]
        if resume:
            argv.append("resume")
        argv += ["--json", "--skip-git-repo-check"]
        if model:
            argv += ["--model", model]
        argv += self.options.args
        if resume:
            argv.append(resume)
        return [*argv, "--", message] if message.startswith("-") else [*argv, message]

    def read(self, message: str, lines: Sequence[str], state: dict[str, Any]) -> Read:
        read = read_stream(message, lines)
        usage = read.turn.usage
        if usage is not None:  # Codex reports the thread's running total: this turn's is the difference
            before = state.get(_TOTALS)
            state[_TOTALS] = usage
            if isinstance(before, Usage):
                usage = Usage(input_tokens=_minus(usage.input_tokens, before.input_tokens),
                              output_tokens=_minus(usage.output_tokens, before.output_tokens),
                              cache_read_tokens=_minus(usage.cache_read_tokens, before.cache_read_tokens))
                read = Read(dataclasses.replace(read.turn, usage=usage), read.complete, read.session_id)
        return read


def build(options: Mapping[str, Any], experiment_id: str, root: Path) -> CodexAdapter:
    """The `codex` adapter of one experiment (a missing binary is the preflight's setup error)."""
    return CodexAdapter(parse_options(AgentCliOptions, options, experiment_id, "codex"), root)
