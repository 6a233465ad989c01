"""`from_promptfoo`: a promptfoo assertion (`{"type": "contains", "value": "Paris"}`) as a Match.

The deterministic types promptfoo users write most map to our own matches, `llm-rubric` to a
`closed_qa` judge; every other type (javascript, python, similar, model-graded types we have no
grader for, ...) becomes a match that is always `unavailable`, reason
`unsupported-assertion:<type>`, so a suite moved over never passes an assertion nobody checked.
A `not-` prefix negates any supported type, as in promptfoo.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ._core import BooleanMatch, Match, MatchResult
from ._judge import closed_qa
from ._logic import and_, not_, or_
from ._values import ValueMatch, equals, excludes, includes, pattern, short

__all__ = ["PROMPTFOO_TYPES", "UNSUPPORTED_PREFIX", "from_promptfoo"]

UNSUPPORTED_PREFIX = "unsupported-assertion:"


def _text(kind: str, value: object) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ValueError(f"promptfoo assertion {kind!r}: expected a text value, got {value!r}")
    return value


def _terms(kind: str, value: object) -> list[str]:
    """contains-any / contains-all: a list, or comma-separated text (promptfoo's CSV form)."""
    if isinstance(value, str):
        terms = [term.strip() for term in value.split(",") if term.strip()]
    elif isinstance(value, list):
        terms = [_text(kind, term) for term in value]
    else:
        raise ValueError(f"promptfoo assertion {kind!r}: expected a list of texts, got {value!r}")
    if not terms:
        raise ValueError(f"promptfoo assertion {kind!r}: expected at least one text")
    return terms


def _equals(value: object) -> Match:
    """promptfoo's equals: the output text equals the value; an object or list value is compared
    with the output parsed as JSON."""
    if isinstance(value, (Mapping, list)):
        expected = value

        def decide(v: Any) -> MatchResult:
            try:
                parsed = json.loads(v) if isinstance(v, str) else v
            except ValueError:
                return MatchResult.mismatched(f"expected JSON equal to {short(expected)}, got {short(v)} (not JSON)")
            return MatchResult.of(parsed == expected, f"expected JSON equal to {short(expected)}, got {short(v)}")

        return ValueMatch("promptfoo_equals", {"value": value}, decide)  # type: ignore[dict-item]
    return equals(_text("equals", value))


def _is_json() -> BooleanMatch:
    def decide(v: Any) -> MatchResult:
        if not isinstance(v, str):
            return MatchResult.mismatched(f"expected JSON text, got {short(v)} ({type(v).__name__})")
        try:
            json.loads(v)
        except ValueError as exc:
            return MatchResult.mismatched(f"expected JSON text, got {short(v)} ({exc})")
        return MatchResult.matched(f"expected JSON text, got {short(v)}")

    return ValueMatch("is_json", {}, decide, "is_json()")


def _unsupported(kind: str) -> BooleanMatch:
    reason = f"{UNSUPPORTED_PREFIX}{kind}"

    def decide(v: Any) -> MatchResult:
        return MatchResult.unavailable(
            reason, f"promptfoo assertion type {kind!r} has no NiceEval equivalent; it was not checked"
        )

    return ValueMatch("promptfoo_unsupported", {"type": kind}, decide, f"promptfoo {kind!r} (unsupported)")


_MAPPED: dict[str, Callable[[object, Mapping[str, Any]], Match]] = {
    "equals": lambda value, _a: _equals(value),
    "contains": lambda value, _a: includes(_text("contains", value)),
    "icontains": lambda value, _a: includes(_text("icontains", value), case_sensitive=False),
    "regex": lambda value, _a: pattern(_text("regex", value)),
    "starts-with": lambda value, _a: pattern("^" + re.escape(_text("starts-with", value))),
    "contains-any": lambda value, _a: or_(*[includes(term) for term in _terms("contains-any", value)]),
    "contains-all": lambda value, _a: and_(*[includes(term) for term in _terms("contains-all", value)]),
    "is-json": lambda _value, _a: _is_json(),
    "llm-rubric": lambda value, a: closed_qa(_text("llm-rubric", value)).at_least(float(a.get("threshold", 0.5))),
}
#: The promptfoo types that map to a NiceEval match (each also with a `not-` prefix).
PROMPTFOO_TYPES = (*_MAPPED, "not-contains")


def from_promptfoo(assertion: Mapping[str, Any]) -> Match:
    """The Match for one promptfoo assertion (a mapping with `type`, and `value` for most types)."""
    if not isinstance(assertion, Mapping) or not isinstance(assertion.get("type"), str):
        raise ValueError(f"from_promptfoo: expected a promptfoo assertion with a 'type', got {assertion!r}")
    kind: str = assertion["type"].strip()
    negated = kind.startswith("not-")
    base = kind.removeprefix("not-") if negated else kind
    if base not in _MAPPED or (negated and base in ("llm-rubric",)):
        return _unsupported(kind)
    if negated and base == "contains":
        return excludes(_text(kind, assertion.get("value")))
    match = _MAPPED[base](assertion.get("value"), assertion)
    return not_(match) if negated else match  # type: ignore[arg-type]
