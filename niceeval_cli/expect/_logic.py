"""Three-valued (Kleene) combinators over BooleanMatches.

Every child is evaluated even when the answer is already decided, so the explanation lists
what each child said. Combinators pass `Interval` candidates through to their children, so
`count_where(p, and_(at_least(1), at_most(3)))` answers for an uncertain count; a child that
does not understand intervals answers `unavailable` itself.
"""

from __future__ import annotations

from typing import Any

from .._states import AssertionState
from ._core import BooleanMatch, MatchResult


def _children(factory: str, matches: tuple[object, ...]) -> tuple[BooleanMatch, ...]:
    if not matches:
        raise ValueError(f"{factory}() needs at least one match")
    for m in matches:
        if not isinstance(m, BooleanMatch):
            raise TypeError(f"{factory}(...): expected BooleanMatches, got {m!r}")
    return matches  # type: ignore[return-value]


def _listing(children: tuple[BooleanMatch, ...], results: list[MatchResult]) -> str:
    parts = []
    for child, result in zip(children, results, strict=True):
        detail = f": {result.explanation}" if result.explanation else ""
        parts.append(f"{child.describe()} {result.state}{detail}")
    return "; ".join(parts)


class _Combinator(BooleanMatch):
    accepts_interval = True
    #: The state that decides the combination when any child has it (mismatched for and_).
    decisive: AssertionState
    fallback: AssertionState

    def __init__(self, name: str, children: tuple[BooleanMatch, ...]) -> None:
        super().__init__(name, {"matches": [c.describe() for c in children]})
        self.children = children

    def describe(self) -> str:
        return f"{self.name}({', '.join(c.describe() for c in self.children)})"

    def _evaluate(self, value: Any) -> MatchResult:
        results = [child.evaluate(value) for child in self.children]  # all of them, always
        listing = _listing(self.children, results)
        if any(r.state == self.decisive for r in results):
            return MatchResult(self.decisive, f"{self.name} {self.decisive} [{listing}]")
        unknown = next((r for r in results if r.state == AssertionState.UNAVAILABLE), None)
        if unknown is not None:
            return MatchResult.unavailable(
                unknown.reason or "unavailable", f"{self.name} unavailable [{listing}]",
            )
        return MatchResult(self.fallback, f"{self.name} {self.fallback} [{listing}]")


class _And(_Combinator):
    decisive = AssertionState.MISMATCHED
    fallback = AssertionState.MATCHED


class _Or(_Combinator):
    decisive = AssertionState.MATCHED
    fallback = AssertionState.MISMATCHED


def and_(*matches: BooleanMatch) -> BooleanMatch:
    """Any mismatched → mismatched; else any unavailable → unavailable; else matched."""
    return _And("and_", _children("and_", matches))


def or_(*matches: BooleanMatch) -> BooleanMatch:
    """Any matched → matched; else any unavailable → unavailable; else mismatched."""
    return _Or("or_", _children("or_", matches))


class _Not(BooleanMatch):
    accepts_interval = True

    def __init__(self, inner: BooleanMatch) -> None:
        super().__init__("not_", {"match": inner.describe()})
        self.inner = inner

    def describe(self) -> str:
        return f"not_({self.inner.describe()})"

    def _evaluate(self, value: Any) -> MatchResult:
        result = self.inner.evaluate(value)
        detail = f"{self.inner.describe()} {result.state}" + (
            f": {result.explanation}" if result.explanation else ""
        )
        if result.state == AssertionState.MATCHED:
            return MatchResult.mismatched(f"not_ mismatched [{detail}]")
        if result.state == AssertionState.MISMATCHED:
            return MatchResult.matched(f"not_ matched [{detail}]")
        return MatchResult.unavailable(result.reason or "unavailable", f"not_ unavailable [{detail}]")


def not_(match: BooleanMatch) -> BooleanMatch:
    """Swaps matched and mismatched; unavailable stays unavailable (with its reason)."""
    return _Not(_children("not_", (match,))[0])
