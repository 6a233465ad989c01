"""Observed values that may be unavailable: Fact, Material, NumericMaterial."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")


class FactUnavailable(Exception):
    """Raised when `.value` of an unavailable Fact is read; branch on `.state` first."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"fact is unavailable ({reason}); branch on .state before reading .value"
        )
        self.reason = reason


@dataclass(frozen=True)
class Fact(Generic[T]):
    """A value the adapter observed, or the reason it could not be observed."""

    state: Literal["available", "unavailable"]
    _value: Any = None
    reason: str | None = None

    @staticmethod
    def available(value: T) -> Fact[T]:
        return Fact("available", value, None)

    @staticmethod
    def unavailable(reason: str) -> Fact[Any]:
        return Fact("unavailable", None, str(reason))

    @property
    def value(self) -> T:
        if self.state != "available":
            raise FactUnavailable(self.reason or "unavailable")
        return self._value  # type: ignore[no-any-return]

    @property
    def is_available(self) -> bool:
        return self.state == "available"

    def __repr__(self) -> str:
        if self.state == "available":
            return f"Fact.available({self._value!r})"
        return f"Fact.unavailable({self.reason!r})"


@dataclass(frozen=True)
class NumericMaterial:
    """A number where one is expected, or the reason it is unknown (never read as 0)."""

    state: Literal["available", "unavailable"]
    _value: float | None = None
    reason: str | None = None

    @staticmethod
    def available(value: float) -> NumericMaterial:
        return NumericMaterial("available", value, None)

    @staticmethod
    def unavailable(reason: str) -> NumericMaterial:
        return NumericMaterial("unavailable", None, str(reason))

    @property
    def value(self) -> float:
        if self.state != "available" or self._value is None:
            raise FactUnavailable(self.reason or "unavailable")
        return self._value

    @property
    def is_available(self) -> bool:
        return self.state == "available"

    def __repr__(self) -> str:
        if self.state == "available":
            return f"NumericMaterial.available({self._value!r})"
        return f"NumericMaterial.unavailable({self.reason!r})"


@dataclass(frozen=True)
class Material(Generic[T]):
    """A collection of observed items: complete, partial (more may exist) or unavailable."""

    state: Literal["complete", "partial", "unavailable"]
    items: tuple[T, ...] = ()
    reason: str | None = None

    @staticmethod
    def complete(items: Iterable[T]) -> Material[T]:
        return Material("complete", tuple(items), None)

    @staticmethod
    def partial(items: Iterable[T], reason: str) -> Material[T]:
        return Material("partial", tuple(items), str(reason))

    @staticmethod
    def unavailable(reason: str) -> Material[Any]:
        return Material("unavailable", (), str(reason))

    @property
    def is_available(self) -> bool:
        return self.state != "unavailable"

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.items)


def unavailable_reason(candidate: object) -> str | None:
    """The reason a candidate is unknown, or None when it can be matched."""
    if isinstance(candidate, (Fact, NumericMaterial)):
        return None if candidate.state == "available" else (candidate.reason or "unavailable")
    if isinstance(candidate, Material):
        return None if candidate.state != "unavailable" else (candidate.reason or "unavailable")
    return None


def unwrap(candidate: object) -> object:
    """An available Fact / NumericMaterial becomes its value; anything else is itself."""
    if isinstance(candidate, (Fact, NumericMaterial)) and candidate.state == "available":
        return candidate._value
    return candidate
