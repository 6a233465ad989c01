"""Matches for agent events: `tool_match` on one tool call, `json_match` on a JSON-like value.

Both are ordinary BooleanMatches, so they compose with the collection matches
(`count_where(tool_match("search"), at_least(2))`) and with `and_` / `or_` / `not_`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._states import AssertionState
from ._core import BooleanMatch, MatchResult
from ._json import JSON, to_jsonable
from ._values import is_number, short


def _shown(value: object) -> str:
    return value.describe() if isinstance(value, BooleanMatch) else short(value)


class _JsonMatch(BooleanMatch):
    def __init__(self, expected: Any) -> None:
        super().__init__("json_match", {"value": _config(expected)})
        self.expected = expected

    def describe(self) -> str:
        return f"json_match({_shown_json(self.expected)})"

    def _evaluate(self, value: Any) -> MatchResult:
        return _compare(self.expected, value, "")


def _config(expected: Any) -> JSON:
    """Nested Matches are stored by their description (config stays JSON)."""
    if isinstance(expected, BooleanMatch):
        return expected.describe()
    if isinstance(expected, Mapping):
        return {str(k): _config(v) for k, v in expected.items()}
    if isinstance(expected, (list, tuple)):
        return [_config(v) for v in expected]
    return to_jsonable(expected)


def _shown_json(expected: Any) -> str:
    if isinstance(expected, BooleanMatch):
        return expected.describe()
    if isinstance(expected, Mapping):
        return "{" + ", ".join(f"{k!r}: {_shown_json(v)}" for k, v in expected.items()) + "}"
    if isinstance(expected, (list, tuple)):
        return "[" + ", ".join(_shown_json(v) for v in expected) + "]"
    return repr(expected)


def _at(path: str) -> str:
    return f"at {path}: " if path else ""


def _compare(expected: Any, actual: Any, path: str) -> MatchResult:
    """Kleene conjunction over the expected structure; the explanation names the first path that
    decided (a mismatch, else an unknown)."""
    if isinstance(expected, BooleanMatch):
        result = expected.evaluate(actual)
        if result.state == AssertionState.MATCHED:
            return MatchResult.matched(f"{_at(path)}{result.explanation}")
        return result.with_explanation(f"{_at(path)}{result.explanation}")
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return MatchResult.mismatched(
                f"{_at(path)}expected an object {_shown_json(expected)}, got {short(actual)}"
                f"{_text_note(actual, 'an object')}")
        parts = []
        for key, want in expected.items():
            sub = f"{path}.{key}" if path else str(key)
            if key not in actual:
                return MatchResult.mismatched(f"{_at(sub)}missing (got keys {sorted(map(str, actual))})")
            parts.append(_compare(want, actual[key], sub))
        return _all(parts, f"{_at(path)}every expected key matched" if path else "every expected key matched")
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            return MatchResult.mismatched(
                f"{_at(path)}expected a list {_shown_json(expected)}, got {short(actual)}"
                f"{_text_note(actual, 'a list')}")
        if len(actual) != len(expected):
            return MatchResult.mismatched(
                f"{_at(path)}expected {len(expected)} item(s), got {len(actual)}: {short(actual)}"
            )
        parts = [_compare(w, a, f"{path}[{i}]") for i, (w, a) in enumerate(zip(expected, actual, strict=True))]
        return _all(parts, f"{_at(path)}every item matched")
    same = _scalar_equal(expected, actual)
    return MatchResult.of(same, f"{_at(path)}expected {short(expected)}, got {short(actual)}")


def _text_note(actual: Any, wanted: str) -> str:
    """Said when the value is text that holds JSON: a tool that returned a JSON *string*."""
    if not isinstance(actual, str):
        return ""
    try:
        json.loads(actual)
    except ValueError:
        return ""
    return f" (text that holds JSON, not {wanted}: parse it first, e.g. map_value('parsed', json.loads, ...))"


def _scalar_equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if is_number(expected) != is_number(actual):
        return False
    try:
        return bool(expected == actual)
    except Exception:  # an exotic __eq__: not equal
        return False


def _all(parts: list[MatchResult], ok: str) -> MatchResult:
    for p in parts:
        if p.state == AssertionState.MISMATCHED:
            return p
    for p in parts:
        if p.state != AssertionState.MATCHED:
            return p
    return MatchResult.matched(ok)


def json_match(expected: Any) -> BooleanMatch:
    """Structural match: dict keys present and matching (extra keys allowed), lists element-wise
    with equal length, nested Matches evaluated, scalars compared with `==` (`True` is not `1`)."""
    return _JsonMatch(expected)


def _as_match(value: Any) -> BooleanMatch:
    return value if isinstance(value, BooleanMatch) else json_match(value)


class _ToolMatch(BooleanMatch):
    def __init__(self, name: Any, input: Any, output: Any, status: Any) -> None:
        self.conditions: list[tuple[str, BooleanMatch]] = []
        config: dict[str, JSON] = {}
        shown: list[str] = []
        if name is not None:
            self.conditions.append(("name", _as_match(name)))
            config["name"] = _config(name)
            shown.append(_shown(name) if isinstance(name, BooleanMatch) else repr(name))
        for key, value in (("input", input), ("output", output), ("status", status)):
            if value is None:
                continue
            self.conditions.append((key, _as_match(value)))
            config[key] = _config(value)
            shown.append(f"{key}={_shown_json(value)}")
        super().__init__("tool_match", config)
        self._shown = f"tool_match({', '.join(shown)})"

    def describe(self) -> str:
        return self._shown

    def _evaluate(self, value: Any) -> MatchResult:
        call = _fields(value)
        if call is None:
            return MatchResult.mismatched(f"{self._shown} expects a ToolCall, got {short(value)}")
        results = [(key, m.evaluate(call.get(key))) for key, m in self.conditions]
        for key, r in results:
            if r.state == AssertionState.MISMATCHED:
                return MatchResult.mismatched(f"{call.get('name')!r}: {key}: {r.explanation}")
        for key, r in results:
            if r.state != AssertionState.MATCHED:
                return r.with_explanation(f"{call.get('name')!r}: {key}: {r.explanation}")
        return MatchResult.matched(f"{call.get('name')!r} matched {self._shown}")

    def near(self, value: Any) -> bool:
        """A call this match was about: a tool call whose name condition (if any) holds."""
        call = _fields(value)
        if call is None:
            return False
        named = [m for key, m in self.conditions if key == "name"]
        return not named or named[0].evaluate(call["name"]).state == AssertionState.MATCHED


_CALL_FIELDS = ("name", "input", "output", "status")
#: Mismatched items an aggregate's explanation shows with why (the rest are counted).
COMPARED_SHOWN = 3
_COMPARED_CHARS = 300


def compared(match: BooleanMatch, mismatched: Sequence[tuple[str, Any, MatchResult]]) -> str:
    """`; compared: #1 'lookup': output: expected …, got …` — why the items a count or a tool
    assertion looked at did not match, observed and expected values side by side (trimmed).
    For `tool_match`, only calls of the named tool: the others are not what was asked about."""
    if isinstance(match, _ToolMatch):
        mismatched = [m for m in mismatched if match.near(m[1])]
    if not mismatched:
        return ""
    shown = []
    for label, _, result in mismatched[:COMPARED_SHOWN]:
        text = result.explanation or str(result.state)
        if len(text) > _COMPARED_CHARS:
            text = text[: _COMPARED_CHARS - 1] + "…"
        shown.append(f"{label}: {text}")
    more = f"; and {len(mismatched) - COMPARED_SHOWN} more" if len(mismatched) > COMPARED_SHOWN else ""
    return f"; compared: {'; '.join(shown)}{more}"


def _fields(value: Any) -> dict[str, Any] | None:
    """A ToolCall (any object with name/input/output/status: expect sits below authoring) or a
    tool_call event dict, as a mapping."""
    if all(hasattr(value, f) for f in _CALL_FIELDS) and isinstance(value.name, str):
        return {f: getattr(value, f) for f in _CALL_FIELDS}
    if isinstance(value, Mapping) and isinstance(value.get("name"), str):
        return {f: value.get(f) for f in _CALL_FIELDS}
    return None


def tool_match(name: Any = None, *, input: Any = None, output: Any = None,
               status: Any = None) -> BooleanMatch:
    """A BooleanMatch on one tool call; every given condition holds on the same call.

    `name`: exact text or a Match. `input` / `output`: a Match, or a value meaning
    `json_match(value)`. `status`: text or a Match. `None` means no condition (to require a
    missing value, pass `json_match(None)`).
    """
    if name is not None and not isinstance(name, (str, BooleanMatch)):
        raise TypeError(f"tool_match(name=...) expects text or a Match, got {name!r}")
    if status is not None and not isinstance(status, (str, BooleanMatch)):
        raise TypeError(f"tool_match(status=...) expects text or a Match, got {status!r}")
    return _ToolMatch(name, input, output, status)


__all__ = ["COMPARED_SHOWN", "compared", "json_match", "tool_match"]
