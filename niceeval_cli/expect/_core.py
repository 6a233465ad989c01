"""Match base classes and the result every Match returns.

A Match is pure: `evaluate` / `measure` return a MatchResult and never record anything.
An exception escaping a Match means the assertion is `errored` (the caller decides that);
`MatchError` is the exception Matches raise for an invalid evaluation (e.g. a score out of
range) so the caller can tell it from a bug elsewhere.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._states import AssertionState, UnavailableReason
from ._facts import unavailable_reason, unwrap

JSON = Any  # a JSON-serialisable value


class MatchError(Exception):
    """An evaluation that cannot produce a valid result (the assertion becomes `errored`)."""


@dataclass(frozen=True)
class Interval:
    """A numeric candidate known only to lie in [lo, hi] (hi may be math.inf)."""

    lo: float
    hi: float

    @property
    def exact(self) -> bool:
        return self.lo == self.hi

    def __str__(self) -> str:
        if self.exact:
            return _num(self.lo)
        if math.isinf(self.hi):
            return f"[{_num(self.lo)}, ∞)"
        return f"[{_num(self.lo)}, {_num(self.hi)}]"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class MatchResult:
    """What one Match said about one candidate."""

    state: AssertionState
    explanation: str = ""
    reason: str | None = None
    measurement: float | None = None
    threshold: float | None = None
    # Evidence the match selected (e.g. captured material items); None = the subject itself.
    evidence: JSON = None
    has_evidence: bool = False

    @staticmethod
    def matched(explanation: str = "") -> MatchResult:
        return MatchResult(AssertionState.MATCHED, explanation)

    @staticmethod
    def mismatched(explanation: str = "") -> MatchResult:
        return MatchResult(AssertionState.MISMATCHED, explanation)

    @staticmethod
    def of(ok: bool, explanation: str = "") -> MatchResult:
        return MatchResult.matched(explanation) if ok else MatchResult.mismatched(explanation)

    @staticmethod
    def unavailable(reason: str, explanation: str = "") -> MatchResult:
        return MatchResult(AssertionState.UNAVAILABLE, explanation or f"unavailable: {reason}", str(reason))

    @staticmethod
    def measured(m: float, explanation: str = "") -> MatchResult:
        return MatchResult(AssertionState.MEASURED, explanation, measurement=m)

    def with_evidence(self, evidence: JSON) -> MatchResult:
        return MatchResult(
            self.state, self.explanation, self.reason, self.measurement, self.threshold,
            evidence, True,
        )

    def with_explanation(self, explanation: str) -> MatchResult:
        return MatchResult(
            self.state, explanation, self.reason, self.measurement, self.threshold,
            self.evidence, self.has_evidence,
        )


class Match(ABC):
    """Common identity of every Match: a name and a JSON-safe config."""

    name: str
    config: Mapping[str, JSON]

    def describe(self) -> str:
        """Short human form, e.g. `equals(3)`; used inside explanations."""
        if not self.config:
            return f"{self.name}()"
        args = ", ".join(f"{v!r}" if k == "value" else f"{k}={v!r}" for k, v in self.config.items())
        return f"{self.name}({args})"

    def __repr__(self) -> str:
        return self.describe()


class BooleanMatch(Match):
    """A Match yielding matched / mismatched / unavailable."""

    #: True when `_evaluate` understands an `Interval` candidate (numeric matches, combinators).
    accepts_interval: bool = False

    def __init__(self, name: str, config: Mapping[str, JSON] | None = None) -> None:
        self.name = name
        self.config = dict(config or {})

    def evaluate(self, candidate: object) -> MatchResult:
        reason = unavailable_reason(candidate)
        if reason is not None:
            return MatchResult.unavailable(reason, f"{self.describe()}: candidate unavailable ({reason})")
        value = unwrap(candidate)
        if isinstance(value, Interval) and not self.accepts_interval:
            if not value.exact:
                return MatchResult.unavailable(
                    UnavailableReason.COUNT_UNCERTAIN,
                    f"{self.describe()}: value only known to lie in {value}",
                )
            value = int(value.lo) if float(value.lo).is_integer() else value.lo
        return self._evaluate(value)

    @abstractmethod
    def _evaluate(self, value: Any) -> MatchResult:
        """Decide for an available, unwrapped candidate."""


class ScoreMatch(Match):
    """A Match yielding a measurement in [0, 1] or unavailable."""

    #: Judge ScoreMatches are measured asynchronously by the runner, not by `measure`.
    is_judge: bool = False

    def __init__(self, name: str, config: Mapping[str, JSON] | None = None) -> None:
        self.name = name
        self.config = dict(config or {})

    def measure(self, candidate: object) -> MatchResult:
        reason = unavailable_reason(candidate)
        if reason is not None:
            return MatchResult.unavailable(reason, f"{self.describe()}: candidate unavailable ({reason})")
        result = self._measure(unwrap(candidate))
        if result.state == AssertionState.MEASURED:
            check_measurement(result.measurement, self.name)
        return result

    def _measure(self, value: Any) -> MatchResult:
        raise NotImplementedError(f"{self.name} is measured by the runner")

    def at_least(self, threshold: float) -> ThresholdedScoreMatch:
        return ThresholdedScoreMatch(self, threshold)


def check_measurement(m: object, name: str) -> float:
    """A measurement must be a finite float in [0, 1]; never clipped."""
    if isinstance(m, bool) or not isinstance(m, (int, float)):
        raise MatchError(f"{name} returned {m!r}; a measurement must be a number in [0, 1]")
    if not math.isfinite(m) or m < 0 or m > 1:
        raise MatchError(f"{name} returned {m!r}; a measurement must be finite and in [0, 1]")
    return float(m)


@dataclass(frozen=True, repr=False)
class ThresholdedScoreMatch(Match):
    """`score_match.at_least(x)`: the measurement plus met (m ≥ x) or below."""

    inner: ScoreMatch
    threshold: float
    name: str = field(init=False)
    config: Mapping[str, JSON] = field(init=False)

    def __post_init__(self) -> None:
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not 0 <= t <= 1:
            raise ValueError(f"at_least({t!r}): a threshold must be a finite number in [0, 1]")
        object.__setattr__(self, "name", self.inner.name)
        object.__setattr__(self, "config", dict(self.inner.config))

    @property
    def is_judge(self) -> bool:
        return self.inner.is_judge

    def describe(self) -> str:
        return f"{self.inner.describe()}.at_least({self.threshold:g})"

    def apply_threshold(self, result: MatchResult) -> MatchResult:
        """Turn a measured result of `inner` into met/below (other states pass through)."""
        if result.state != AssertionState.MEASURED or result.measurement is None:
            return MatchResult(
                result.state, result.explanation, result.reason, result.measurement,
                self.threshold, result.evidence, result.has_evidence,
            )
        m = result.measurement
        met = m >= self.threshold
        state = AssertionState.MET if met else AssertionState.BELOW
        relation = "≥" if met else "<"
        text = f"{m:.2f} {relation} {self.threshold:.2f} required"
        explanation = f"{text}; {result.explanation}" if result.explanation else text
        return MatchResult(
            state, explanation, None, m, self.threshold, result.evidence, result.has_evidence,
        )

    def measure(self, candidate: object) -> MatchResult:
        return self.apply_threshold(self.inner.measure(candidate))
