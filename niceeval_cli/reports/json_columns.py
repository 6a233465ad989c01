"""Which stored columns hold JSON text, and how machine formats emit them: as JSON values.

`query --format json|ndjson` and the `--json` events of `run` decode these columns so that `jq`
needs no `fromjson`; CSV and table keep the stored text. The one list of them is here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

#: Columns (of runs, attempts, assertion results, turns) stored as JSON text.
JSON_COLUMNS = frozenset({
    "argv", "experiments", "fingerprint_parts", "match_config", "evidence", "judge_audit", "extras", "notes",
    "sandbox", "case_value", "case_metadata", "data", "observed",
})
#: Columns of an event row (agents.md, table `events`) stored as JSON text.
EVENT_JSON_COLUMNS = frozenset({"input", "output"})


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # NaN / Infinity are not JSON: keep such text as it was stored


def json_value(text: Any) -> Any:
    """The JSON value a column's text holds; text that is not valid JSON stays text."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except ValueError:
        return text


def decoder(target: str | None) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """How `query --format json|ndjson` emits a row of `target`: its JSON-text columns as JSON
    values (an event's `input` / `output` too; a turn's `input` is a message, kept as text);
    the rows of a `--sql` statement (target None) as they are."""
    if target is None:
        return dict
    if target == "events":
        return _decode_event
    return decoded


def _decode_event(row: Mapping[str, Any]) -> dict[str, Any]:
    return decoded(row, JSON_COLUMNS | EVENT_JSON_COLUMNS)


def decoded(row: Mapping[str, Any], columns: frozenset[str] = JSON_COLUMNS) -> dict[str, Any]:
    """A copy of `row` with its JSON-text columns as JSON values (nested turns and events too)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in columns:
            out[key] = json_value(value)
        elif key == "turns" and isinstance(value, list | tuple):
            out[key] = [decoded(turn) if isinstance(turn, Mapping) else turn for turn in value]
        elif key == "events" and isinstance(value, list | tuple):
            out[key] = [decoded(e, EVENT_JSON_COLUMNS) if isinstance(e, Mapping) else e for e in value]
        else:
            out[key] = value
    return out
