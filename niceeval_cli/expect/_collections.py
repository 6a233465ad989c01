"""Matches over one mapped value and over collections (Material, list/tuple, Fact of either).

A collection is complete, partial (items seen so far; more may exist) or unavailable. Partial
and per-item unknowns are never read as "no": a count becomes an interval, `every` over a
partial collection without a counter-example stays unavailable, and so on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._states import AssertionState
from ._core import BooleanMatch, Interval, MatchResult
from ._facts import Fact, FactUnavailable, Material, NumericMaterial
from ._json import callable_name
from ._tools import compared
from ._values import fact_unavailable, short


@dataclass(frozen=True)
class Collection:
    """The readable items of a collection; `partial` is the reason more may exist."""

    items: tuple[Any, ...]
    partial: str | None = None

    def as_material(self) -> Material[Any]:
        if self.partial is None:
            return Material.complete(self.items)
        return Material.partial(self.items, self.partial)

    def note(self) -> str:
        return f"; collection partial ({self.partial})" if self.partial is not None else ""


def as_collection(value: object) -> Collection | MatchResult | None:
    """The collection in `value`, an unavailable result, or None when it is not a collection."""
    if isinstance(value, (Fact, NumericMaterial)):
        if value.state != "available":
            reason = value.reason or "unavailable"
            return MatchResult.unavailable(reason, f"collection unavailable ({reason})")
        return as_collection(value._value)
    if isinstance(value, Material):
        if value.state == "unavailable":
            reason = value.reason or "unavailable"
            return MatchResult.unavailable(reason, f"collection unavailable ({reason})")
        partial = (value.reason or "partial") if value.state == "partial" else None
        return Collection(tuple(value.items), partial)
    if isinstance(value, (list, tuple)):
        return Collection(tuple(value))
    return None


def _require(factory: str, **matches: object) -> None:
    for role, m in matches.items():
        if not isinstance(m, BooleanMatch):
            raise TypeError(f"{factory}: {role} must be a BooleanMatch, got {m!r}")


class CollectionMatch(BooleanMatch):
    """A BooleanMatch whose candidate is a collection."""

    def __init__(self, name: str, config: dict[str, Any], shown: str) -> None:
        super().__init__(name, config)
        self._shown = shown

    def describe(self) -> str:
        return self._shown

    def _evaluate(self, value: Any) -> MatchResult:
        coll = as_collection(value)
        if coll is None:
            return MatchResult.mismatched(
                f"{self.describe()} expects a collection, got {short(value)} ({type(value).__name__})"
            )
        if isinstance(coll, MatchResult):
            return coll.with_explanation(f"{self.describe()}: {coll.explanation}")
        return self._on(coll)

    def _on(self, coll: Collection) -> MatchResult:
        raise NotImplementedError


def _tally(results: Sequence[MatchResult]) -> tuple[int, int, MatchResult | None]:
    """(matched, unavailable, first unavailable result)."""
    k = sum(r.state == AssertionState.MATCHED for r in results)
    unknown = [r for r in results if r.state == AssertionState.UNAVAILABLE]
    return k, len(unknown), (unknown[0] if unknown else None)


class _MapValue(BooleanMatch):
    def __init__(self, label: str, fn: Callable[[Any], Any], inner: BooleanMatch) -> None:
        super().__init__("map_value", {"name": label, "match": inner.describe()})
        self.label, self.fn, self.inner = label, fn, inner

    def describe(self) -> str:
        return f"map_value({self.label!r}, {self.inner.describe()})"

    def _evaluate(self, value: Any) -> MatchResult:
        try:
            mapped = self.fn(value)
        except FactUnavailable as exc:
            return fact_unavailable(exc, self.label)
        result = self.inner.evaluate(mapped)
        return result.with_explanation(f"{self.label}: {result.explanation}")


def map_value(name: str, fn: Callable[[Any], Any], inner: BooleanMatch) -> BooleanMatch:
    """Applies `fn` to the value, then `inner` (the usual way to write a domain selector)."""
    _require("map_value", inner=inner)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"map_value: name must be non-empty text, got {name!r}")
    return _MapValue(name, fn, inner)


class _CountWhere(CollectionMatch):
    def __init__(self, predicate: BooleanMatch, aggregate: BooleanMatch) -> None:
        shown = f"count_where({predicate.describe()}, {aggregate.describe()})"
        super().__init__(
            "count_where", {"predicate": predicate.describe(), "aggregate": aggregate.describe()}, shown,
        )
        self.predicate, self.aggregate = predicate, aggregate

    def _on(self, coll: Collection) -> MatchResult:
        results = [self.predicate.evaluate(item) for item in coll.items]
        k, u, first = _tally(results)
        hi = math.inf if coll.partial is not None else k + u
        count: int | Interval = k if hi == k else Interval(k, hi)
        result = self.aggregate.evaluate(count)
        parts = [f"{k} matched", f"{len(results) - k - u} mismatched"]
        if first is not None:
            parts.append(f"{u} unavailable ({first.reason})")
        detail = f"counted {count} where {self.predicate.describe()} ({', '.join(parts)}{coll.note()})"
        why = ""
        if result.state == AssertionState.MISMATCHED:  # what it compared: the items that did not match, and why
            why = compared(self.predicate, [(f"#{i + 1}", item, r) for i, (item, r) in enumerate(
                zip(coll.items, results, strict=True)) if r.state == AssertionState.MISMATCHED])
        return result.with_explanation(f"{detail}; {result.explanation}{why}")


def count_where(predicate: BooleanMatch, aggregate: BooleanMatch) -> BooleanMatch:
    """Counts items where `predicate` matched and applies the numeric `aggregate` to the count."""
    _require("count_where", predicate=predicate, aggregate=aggregate)
    return _CountWhere(predicate, aggregate)


class _FilterWhere(CollectionMatch):
    def __init__(self, selector: BooleanMatch, inner: BooleanMatch) -> None:
        shown = f"filter_where({selector.describe()}, {inner.describe()})"
        super().__init__("filter_where", {"selector": selector.describe(), "match": inner.describe()}, shown)
        self.selector, self.inner = selector, inner

    def _on(self, coll: Collection) -> MatchResult:
        results = [self.selector.evaluate(item) for item in coll.items]
        pairs = zip(coll.items, results, strict=True)
        kept = tuple(item for item, r in pairs if r.state == AssertionState.MATCHED)
        k, u, first = _tally(results)
        partial = coll.partial if coll.partial is not None else (first.reason if first is not None else None)
        filtered = Collection(kept, partial)
        result = self.inner.evaluate(filtered.as_material())
        unknown = f", {u} unknown ({first.reason})" if first is not None else ""
        detail = f"selected {k} of {len(results)} by {self.selector.describe()}{unknown}{coll.note()}"
        return result.with_explanation(f"{detail}; {result.explanation}")


def filter_where(selector: BooleanMatch, inner: BooleanMatch) -> BooleanMatch:
    """Applies `inner` to the items `selector` matched; unknown selections make it partial."""
    _require("filter_where", selector=selector, inner=inner)
    return _FilterWhere(selector, inner)


class _MapEach(CollectionMatch):
    def __init__(self, fn: Callable[[Any], Any], inner: BooleanMatch) -> None:
        shown = f"map_each({callable_name(fn)}, {inner.describe()})"
        super().__init__("map_each", {"fn": callable_name(fn), "match": inner.describe()}, shown)
        self.fn, self.inner = fn, inner

    def _map(self, item: Any) -> Any:
        try:
            return self.fn(item)
        except FactUnavailable as exc:  # this item's value is unknown, not the whole collection
            return Fact.unavailable(exc.reason)

    def _on(self, coll: Collection) -> MatchResult:
        mapped = Collection(tuple(self._map(item) for item in coll.items), coll.partial)
        return self.inner.evaluate(mapped.as_material())


def map_each(fn: Callable[[Any], Any], inner: BooleanMatch) -> BooleanMatch:
    """Applies `inner` to the collection of `fn(item)` (same completeness)."""
    _require("map_each", inner=inner)
    return _MapEach(fn, inner)


class _Quantifier(CollectionMatch):
    def __init__(self, name: str, match: BooleanMatch) -> None:
        super().__init__(name, {"match": match.describe()}, f"{name}({match.describe()})")
        self.match = match

    def _on(self, coll: Collection) -> MatchResult:
        results = [self.match.evaluate(item) for item in coll.items]
        k, u, first = _tally(results)
        n = len(results)
        counts = f"{k} of {n} items matched {self.match.describe()}" + (
            f", {u} unavailable ({first.reason})" if first is not None else ""
        ) + coll.note()
        decided = self._decide(k, n - k - u)
        if decided is not None:
            return MatchResult.of(decided, counts)
        if first is not None:
            return MatchResult.unavailable(first.reason or "unavailable", counts)
        if coll.partial is not None:
            return MatchResult.unavailable(coll.partial, counts)
        return MatchResult.of(self.name == "every", counts)

    def _decide(self, matched: int, mismatched: int) -> bool | None:
        if self.name == "every":
            return False if mismatched else None
        return True if matched else None


def every(match: BooleanMatch) -> BooleanMatch:
    """Every item matches (an empty complete collection: matched)."""
    _require("every", match=match)
    return _Quantifier("every", match)


def some(match: BooleanMatch) -> BooleanMatch:
    """At least one item matches (an empty complete collection: mismatched)."""
    _require("some", match=match)
    return _Quantifier("some", match)
