"""Framework results as turns (integrations.md, "Framework results become turns").

`niceeval_cli.integrations.pydantic_ai`, `.openai_agents` and `.langchain` each expose
`turn_from(result, input=None) -> Turn`. None of them imports its framework: they read the
result's own attributes, so importing a converter never loads a framework your code did not
import, and the python adapter can recognise such a result (`turn_from_framework`) by its
class's module alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..authoring import Turn

__all__ = ["turn_from_framework"]


def _module_of(value: object) -> str:
    return type(value).__module__ or ""


def _is_langchain_messages(value: object) -> bool:
    messages = value.get("messages") if isinstance(value, Mapping) else value
    return (isinstance(messages, Sequence) and not isinstance(messages, (str, bytes)) and bool(messages)
            and all(_module_of(m).startswith("langchain_core.messages") for m in messages))


def _converter(result: object) -> Callable[[Any, str | None], Turn] | None:
    module = _module_of(result)
    if module.startswith("pydantic_ai.") and hasattr(result, "all_messages"):
        from .pydantic_ai import turn_from as pydantic_ai_turn

        return pydantic_ai_turn
    if module.startswith("agents.") and hasattr(result, "new_items"):
        from .openai_agents import turn_from as openai_agents_turn

        return openai_agents_turn
    if _is_langchain_messages(result):
        from .langchain import turn_from as langchain_turn

        return langchain_turn
    return None


def turn_from_framework(result: object, input: str | None = None) -> Turn | None:
    """The turn of a pydantic-ai, OpenAI Agents SDK or LangGraph / LangChain result; None when
    `result` is none of those (recognised by its class's module, no framework imported)."""
    convert = _converter(result)
    return convert(result, input) if convert is not None else None
