"""Frozen, JSON-only values: what an experiment's `options` table may hold once loaded."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

from ._wording import show


def freeze(value: object) -> object:
    """A read-only deep copy: tables become mappingproxies, arrays tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: object) -> object:
    """A plain, mutable, JSON-ready copy of a frozen value."""
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def json_problem(value: object, path: str) -> str | None:
    """Where `value` stops being plain JSON (TOML dates and nan/inf are not), or None."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            problem = json_problem(v, f"{path}.{k}" if path else str(k))
            if problem:
                return problem
        return None
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            problem = json_problem(v, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if value is None or isinstance(value, (bool, int, str)):
        return None
    if isinstance(value, float) and math.isfinite(value):
        return None
    return f"{path or 'value'} is {show(value)}, which is not JSON (use a string or a finite number)"
