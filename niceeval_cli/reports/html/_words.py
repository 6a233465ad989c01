"""The words, marks and small readings of store rows the report shares (as `view` says them)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from ..._records import AttemptRecord
from ..._states import CLEAN_STATES, Derived, EvalKind
from .. import _tally
from .._safe import visible
from ..viewmodels import attempt as attempt_vm


def attempt_word(state: str, gate: str | None) -> str:
    """The one word for an attempt's outcome (`gate failed` is its own word), as `view` says it."""
    return _tally.attempt_word(state, gate)


class _Attributes:
    """A store row (dict) read by attribute, for the view-models that take records."""

    __slots__ = ("_row",)

    def __init__(self, row: Mapping[str, Any]) -> None:
        self._row = row

    def __getattr__(self, name: str) -> Any:
        return self._row.get(name)


def score_text(row: Mapping[str, Any]) -> str:
    """`45 of 100 · 50 unavailable · not rankable` (the view-model's words, never a fabricated zero)."""
    if row.get("kind") != EvalKind.SCORE.value:
        return ""
    return attempt_vm.score_text(cast(AttemptRecord, _Attributes(row)))


def slug(word: str) -> str:
    """A CSS-safe class name: `unrankable (gate failed)` → `unrankable-gate-failed`."""
    return "-".join("".join(c if c.isalnum() else " " for c in word).split())


OK_WORDS = frozenset(CLEAN_STATES)
_GATE_FAILED, _GATE_UNAVAILABLE = Derived.GATE_FAILED.label, Derived.GATE_UNAVAILABLE.label
MARKS = {"errored": "!", "failed": "✗", "unrankable": "?", _GATE_FAILED: "✗", _GATE_UNAVAILABLE: "?",
         Derived.UNRANKABLE_GATE_FAILED.label: "✗", Derived.ERRORED_GATE_FAILED.label: "✗",
         "passed": "✓", "scored": "·", "unavailable": "?", "mismatched": "✗", "below": "✗", "matched": "✓",
         "met": "✓", "measured": "·", "removed": "−", "added": "+"}


def json_value(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def eval_tags(row: Mapping[str, Any], cache: dict[tuple[str, str], tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The eval's tags, from what its fingerprint hashed (one parse per experiment and eval)."""
    key = (row["experiment_id"], row["eval_id"])
    if cache is not None and key in cache:
        return cache[key]
    found = _parse_tags(row)
    if cache is not None:
        cache[key] = found
    return found


def tags_attribute(tags: tuple[str, ...]) -> str:
    """A row's tags for its `data-tags`: a JSON list, so the tag filter matches whole tags ("smoke"
    never matches "smoke test"), each tag as its `<option>` shows it (controls escaped)."""
    return json.dumps([visible(tag, None) for tag in tags], ensure_ascii=False)


def _parse_tags(row: Mapping[str, Any]) -> tuple[str, ...]:
    parts = json_value(row.get("fingerprint_parts"))
    if isinstance(parts, dict):
        options = parts.get("eval_options")
        if isinstance(options, dict) and isinstance(options.get("tags"), list):
            return tuple(str(t) for t in options["tags"])
    return ()


def model_of(row: Mapping[str, Any]) -> str | None:
    parts = json_value(row.get("fingerprint_parts"))
    model = parts.get("model") if isinstance(parts, dict) else None
    return str(model) if model else None
