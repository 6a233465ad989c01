"""Per-measurement extras: what one assertion produced besides its state and measurement (the
tool calls an agent assertion pointed at, a sandbox diff's stats), sealed as a JSON object in
`AssertionResult.extras`. Not judge-specific: the judge's audit and tokens keep their columns.

A capability that produces extras registers a source; each source reads a registration and
returns a mapping (or None). The runner merges them (later sources win on a key), redacts and
bounds the JSON, and stores None when nothing was produced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._redact import safe_json
from ..authoring import Registration

EXTRAS_LIMIT = 16 * 1024

ExtrasSource = Callable[[Registration], Mapping[str, Any] | None]

_SOURCES: list[ExtrasSource] = []


def register_extras_source(source: ExtrasSource) -> None:
    if source not in _SOURCES:
        _SOURCES.append(source)


def extras_json(reg: Registration, secrets: Sequence[str]) -> str | None:
    if not _SOURCES:
        return None
    merged: dict[str, Any] = {}
    for source in _SOURCES:
        produced = source(reg)
        if produced:
            merged.update(produced)
    if not merged:
        return None
    return safe_json(merged, secrets=secrets, max_bytes=EXTRAS_LIMIT)


def _registration_extras(reg: Registration) -> Mapping[str, Any] | None:
    """What the registration itself carries (the agent assertions' pointed calls, agents.md)."""
    extras = getattr(reg, "extras", None)
    return extras if isinstance(extras, Mapping) else None


register_extras_source(_registration_extras)
