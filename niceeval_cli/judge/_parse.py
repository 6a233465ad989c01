"""Reading the judge's answer out of a chat-completions response (pure).

Accepted: the forced `grade` tool call (or a legacy `function_call`) whose arguments are a JSON
object, or a JSON object in the message content, with `choice` (one of the match's letters)
and `reasoning`. Anything else is an invalid response; nothing is guessed or clipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Kept in step with `_client.MAX_BODY_DEPTH` (a deeper body reaches here as text).
MAX_BODY_DEPTH = 64

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class Parsed:
    choice: str
    reasoning: str


class InvalidResponse(ValueError):
    """The response holds no usable grade; the message says what was wrong."""


def parse_grade(body: Any, letters: Mapping[str, float]) -> Parsed:
    """The grade in a chat-completions response body, or InvalidResponse."""
    message = _message(body)
    fields = _from_tool_call(message)
    if fields is None:
        fields = _from_content(message.get("content"))
    if fields is None:
        raise InvalidResponse("the judge made no `grade` call and its message holds no JSON object")
    choice = fields.get("choice")
    if not isinstance(choice, str) or not choice.strip():
        raise InvalidResponse(f"the grade has no choice letter (choice={choice!r})")
    letter = choice.strip().upper()
    if letter not in letters:
        raise InvalidResponse(f"unknown choice {choice!r}; expected one of {', '.join(letters)}")
    reasoning = fields.get("reasoning", "")
    if not isinstance(reasoning, str):
        raise InvalidResponse(f"reasoning must be text, got {type(reasoning).__name__}")
    return Parsed(letter, reasoning.strip())


#: A reported token count above this is nonsense (and would not fit SQLite's INTEGER once
#: summed): it is treated as unreported.
MAX_REPORTED_TOKENS = 2**53


def usage_tokens(body: Any) -> int | None:
    """Total tokens the response reports; None when it reports none or an impossible count."""
    usage = body.get("usage") if isinstance(body, Mapping) else None
    if not isinstance(usage, Mapping):
        return None
    if usage.get("total_tokens") is not None:
        return _count(usage.get("total_tokens"))
    parts = [_count(usage.get(part)) for part in ("prompt_tokens", "completion_tokens")]
    if any(p is None for p in parts):
        return None
    return sum(p or 0 for p in parts)


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_REPORTED_TOKENS:
        return value
    return None


def _message(body: Any) -> Mapping[str, Any]:
    if isinstance(body, str):
        raise InvalidResponse("the response body is not a JSON object "
                              f"(not JSON at all, or nested deeper than {MAX_BODY_DEPTH} levels)")
    if not isinstance(body, Mapping):
        raise InvalidResponse("the response body is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise InvalidResponse("the response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        raise InvalidResponse("the response's first choice has no message")
    return message


def _from_tool_call(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    calls = message.get("tool_calls")
    functions: list[Any] = []
    if isinstance(calls, list):
        functions = [c.get("function") for c in calls if isinstance(c, Mapping)]
    legacy = message.get("function_call")
    if isinstance(legacy, Mapping):
        functions.append(legacy)
    functions = [f for f in functions if isinstance(f, Mapping)]
    if not functions:
        return None
    chosen = next((f for f in functions if f.get("name") == "grade"), functions[0])
    arguments = chosen.get("arguments")
    if isinstance(arguments, Mapping):
        return arguments
    if not isinstance(arguments, str):
        raise InvalidResponse("the `grade` call has no arguments")
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise InvalidResponse(f"the `grade` call's arguments are not JSON ({exc.msg})") from None
    except RecursionError:  # the judge's fault, not ours: arguments nested thousands deep
        raise InvalidResponse("the `grade` call's arguments are nested too deeply to read") from None
    if not isinstance(parsed, Mapping):
        raise InvalidResponse("the `grade` call's arguments are not a JSON object")
    return parsed


def _from_content(content: Any) -> Mapping[str, Any] | None:
    """A JSON object in the content: the whole text, a fenced block, or the outermost braces."""
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        texts = [p.get("text", "") for p in content if isinstance(p, Mapping)]
        if not all(isinstance(text, str) for text in texts):  # the judge's fault, not NiceEval's
            raise InvalidResponse("a part of the judge's message content has a `text` that is not text")
        content = "".join(texts)
    if not isinstance(content, str):
        return None
    text = content.strip()
    fenced = _FENCE.match(text)
    candidates = [text, fenced.group(1).strip() if fenced else None]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        if not candidate:
            continue
        try:
            parsed = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(parsed, Mapping):
            return parsed
    return None
