"""Turns built by hand for the pure agent-assertion tests."""

from __future__ import annotations

import json
from typing import Any

from niceeval_cli import ToolCall, Turn

OBSERVED = frozenset({"messages", "tool_calls"})


def call(name: str, input: Any = None, status: str = "completed", output: Any = None) -> ToolCall:
    return ToolCall(name, input=input, output=output, status=status)  # type: ignore[arg-type]


def turn(*calls: ToolCall, observed: bool = True, status: str = "completed", ordinal: int | None = None) -> Turn:
    made = Turn(input="hi", message="ok", events=calls, status=status,  # type: ignore[arg-type]
                observed=OBSERVED if observed else frozenset())
    if ordinal is not None:
        object.__setattr__(made, "_ordinal", ordinal)
    return made


def as_json(value: Any) -> Any:
    """A JSON column as `query --format json` gives it (a value), or as stored (text)."""
    return json.loads(value) if isinstance(value, str) else value
