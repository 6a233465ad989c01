"""JSON-safe forms of arbitrary values, for evidence, captured material and match config.

Everything stored (evidence, `match_config`, fingerprints) goes through `to_jsonable`, so the
store never sees an object it cannot serialise, and `canonical_json` gives one stable text for
the same value (sorted keys, no spaces) so fingerprints do not depend on dict order.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
from collections.abc import Mapping
from enum import Enum
from typing import Any

from ._core import Interval
from ._facts import Fact, Material, NumericMaterial

JSON = Any  # None | bool | int | float | str | list[JSON] | dict[str, JSON]

_CYCLE = "<cycle>"
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def to_jsonable(value: object) -> JSON:
    """A JSON-serialisable form of `value` (never raises for ordinary Python objects)."""
    return _convert(value, set())


def canonical_json(value: object) -> str:
    """One stable JSON text for `value`: sorted keys, compact separators, UTF-8 kept as is."""
    return json.dumps(
        to_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
    )


def callable_name(fn: object) -> str:
    """The stable display name of a user callable (stored instead of the function itself)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return str(name) if name else type(fn).__qualname__


def _convert(value: object, active: set[int]) -> JSON:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Enum):
        return _convert(value.value, active)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, _FUNCTIONS):
        return callable_name(value)
    if id(value) in active:  # a container that contains itself
        return _CYCLE
    active.add(id(value))
    try:
        return _container(value, active)
    finally:
        active.discard(id(value))


def _container(value: object, active: set[int]) -> JSON:
    kind = type(value)
    if kind is dict:  # the usual containers first (what the checks below would conclude for them)
        return {_key(k): _convert(v, active) for k, v in value.items()}  # type: ignore[attr-defined]
    if kind is list or kind is tuple:
        return [_convert(item, active) for item in value]  # type: ignore[attr-defined]
    if isinstance(value, (Fact, NumericMaterial)):
        if value.state == "available":
            return {"state": "available", "value": _convert(value._value, active)}
        return {"state": "unavailable", "reason": value.reason}
    if isinstance(value, Material):
        items = [_convert(item, active) for item in value.items]
        return {"state": value.state, "items": items, "reason": value.reason}
    if isinstance(value, Interval):
        return {"lo": _convert(value.lo, active), "hi": _convert(value.hi, active)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _convert(getattr(value, f.name), active) for f in dataclasses.fields(value)
        }
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):  # a pydantic model instance
        return _convert(dump(mode="json"), active)
    if isinstance(value, Mapping):
        return {_key(k): _convert(v, active) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_convert(item, active) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [_convert(item, active) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True, ensure_ascii=False))
    return repr(value)


def _float(x: float) -> JSON:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    converted = to_jsonable(key)
    return converted if isinstance(converted, str) else json.dumps(converted, ensure_ascii=False)
