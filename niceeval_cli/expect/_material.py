"""Adapter-facing matches over the Attempt's facts: context matches and material matches.

A material match selects items from an observed collection and *captures* them (evidence,
judge material). A capture over any bound of `Capture` is never truncated: the result is
`unavailable` with reason `capture-limit-exceeded`, naming the bound that was hit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._states import AssertionState, UnavailableReason
from ._collections import Collection, as_collection
from ._core import BooleanMatch, MatchError, MatchResult
from ._facts import FactUnavailable
from ._json import JSON, canonical_json, to_jsonable
from ._values import fact_unavailable


@dataclass(frozen=True)
class Capture:
    """Bounds on captured (selected) items: count, UTF-8 bytes of canonical JSON, JSON nodes
    (every value inside the items, each item included) and nesting depth of an item (a scalar
    is depth 0, `{"a": 1}` depth 1)."""

    max_items: int = 1024
    max_bytes: int = 512 * 1024
    max_nodes: int = 65536
    max_depth: int = 32

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"Capture({f.name}={v!r}): expected a non-negative integer")

    def config(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def _nodes_and_depth(items: list[JSON]) -> tuple[int, int]:
    """Total JSON values in `items` and the deepest container nesting of one item."""
    nodes, deepest = 0, 0
    stack: list[tuple[JSON, int]] = [(item, 0) for item in items]
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if isinstance(value, dict):
            children = list(value.values())
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return nodes, deepest


def capture_items(items: tuple[Any, ...], capture: Capture, who: str) -> list[JSON] | MatchResult:
    """The JSON form of the selected items, or `unavailable` naming the bound exceeded."""

    def over(bound: str, limit: int, measured: str) -> MatchResult:
        return MatchResult.unavailable(
            UnavailableReason.CAPTURE_LIMIT_EXCEEDED,
            f"{who}: capture-limit-exceeded: selected items have {measured}, over {bound}={limit}",
        )

    if len(items) > capture.max_items:
        return over("max_items", capture.max_items, f"{len(items)} items")
    captured = [to_jsonable(item) for item in items]
    nodes, depth = _nodes_and_depth(captured)
    if depth > capture.max_depth:
        return over("max_depth", capture.max_depth, f"nesting depth {depth}")
    if nodes > capture.max_nodes:
        return over("max_nodes", capture.max_nodes, f"{nodes} JSON nodes")
    size = len(canonical_json(captured).encode("utf-8"))
    if size > capture.max_bytes:
        return over("max_bytes", capture.max_bytes, f"{size} bytes of JSON")
    return captured


def _read(read: Callable[[Any], Any], facts: object, who: str) -> Any:
    """Call the adapter's `read`; FactUnavailable comes back as an unavailable result."""
    try:
        return read(facts)
    except FactUnavailable as exc:
        return fact_unavailable(exc, who)


class ContextMatch(BooleanMatch):
    """`match` applied to `read(facts)`; evidence is what was read."""

    def __init__(self, name: str, read: Callable[[Any], Any], match: BooleanMatch) -> None:
        super().__init__(name, {"match": match.describe()})
        self.read, self.match = read, match

    def describe(self) -> str:
        return f"{self.name}({self.match.describe()})"

    def _evaluate(self, value: Any) -> MatchResult:
        read = _read(self.read, value, self.name)
        if isinstance(read, MatchResult):
            return read
        result = self.match.evaluate(read)
        return result.with_explanation(f"{self.name}: {result.explanation}").with_evidence(to_jsonable(read))


class MaterialMatch(BooleanMatch):
    """Selects items of `read(facts)` with `match`; matched when at least one is selected."""

    def __init__(
        self, name: str, read: Callable[[Any], Any], match: BooleanMatch, capture: Capture,
    ) -> None:
        super().__init__(name, {"match": match.describe(), "capture": capture.config()})
        self.read, self.match, self.capture = read, match, capture

    def describe(self) -> str:
        return f"{self.name}({self.match.describe()})"

    def _select(self, facts: object) -> tuple[Collection, tuple[Any, ...], MatchResult | None] | MatchResult:
        """(collection, selected items, first unavailable selection) or an unavailable result."""
        read = _read(self.read, facts, self.name)
        if isinstance(read, MatchResult):
            return read
        coll = as_collection(read)
        if coll is None:
            raise MatchError(
                f"{self.name}: read returned {type(read).__name__}; "
                "expected a Material, a list/tuple or a Fact holding one"
            )
        if isinstance(coll, MatchResult):
            return coll.with_explanation(f"{self.name}: {coll.explanation}")
        results = [self.match.evaluate(item) for item in coll.items]
        pairs = zip(coll.items, results, strict=True)
        selected = tuple(i for i, r in pairs if r.state == AssertionState.MATCHED)
        unknown = next((r for r in results if r.state == AssertionState.UNAVAILABLE), None)
        return coll, selected, unknown

    def _evaluate(self, value: Any) -> MatchResult:
        chosen = self._select(value)
        if isinstance(chosen, MatchResult):
            return chosen
        coll, selected, unknown = chosen
        captured = capture_items(selected, self.capture, self.name)
        if isinstance(captured, MatchResult):
            return captured
        text = f"{self.name}: selected {len(selected)} of {len(coll.items)} items by {self.match.describe()}"
        if selected:
            result = MatchResult.matched(text + coll.note())
        elif coll.partial is not None:
            result = MatchResult.unavailable(coll.partial, text + coll.note())
        elif unknown is not None:
            reason = unknown.reason or "unavailable"
            result = MatchResult.unavailable(reason, f"{text}; selection unknown for some ({reason})")
        else:
            result = MatchResult.mismatched(text)
        return result.with_evidence(captured)

    def judge_material(self, facts: object) -> list[JSON] | MatchResult:
        """All selected items as JSON for a judge, or why they cannot be graded (never partial)."""
        chosen = self._select(facts)
        if isinstance(chosen, MatchResult):
            return chosen
        coll, selected, unknown = chosen
        if coll.partial is not None:
            return MatchResult.unavailable(
                coll.partial, f"{self.name}: material is partial ({coll.partial}); a judge needs all of it",
            )
        if unknown is not None:
            reason = unknown.reason or "unavailable"
            return MatchResult.unavailable(
                reason, f"{self.name}: selection unknown for some items ({reason}); a judge needs all of it",
            )
        return capture_items(selected, self.capture, self.name)


def _named(factory: str, name: object, match: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{factory}: name must be non-empty text, got {name!r}")
    if not isinstance(match, BooleanMatch):
        raise TypeError(f"{factory}({name!r}): match must be a BooleanMatch, got {match!r}")
    return name


def define_context_match(*, name: str, read: Callable[[Any], Any], match: BooleanMatch) -> ContextMatch:
    """For adapters: `read(facts)` returns a Fact or a plain value; `match` applies to it."""
    return ContextMatch(_named("define_context_match", name, match), read, match)


def define_material_match(
    *, name: str, read: Callable[[Any], Any], match: BooleanMatch, capture: Capture | None = None,
) -> MaterialMatch:
    """For adapters: `read(facts)` returns a collection; `match` selects the captured items."""
    chosen = capture if capture is not None else Capture()
    if not isinstance(chosen, Capture):
        raise TypeError(f"define_material_match({name!r}): capture must be a Capture, got {chosen!r}")
    return MaterialMatch(_named("define_material_match", name, match), read, match, chosen)
