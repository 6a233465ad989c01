"""One registered Assertion while its Attempt runs, and the handle that configures it."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._states import AssertionState, EvalKind, Role
from ..expect import MatchResult
from ._errors import AuthoringError, SourceLocation

if TYPE_CHECKING:
    from ._context import TestContext

_STOPPING = frozenset({
    AssertionState.MISMATCHED, AssertionState.BELOW, AssertionState.UNAVAILABLE, AssertionState.ERRORED,
})


class StopContinuation(BaseException):
    """Raised by `await handle.or_stop()`; a BaseException so user `except Exception` cannot swallow it."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


@dataclass
class Registration:
    """Mutable while the Attempt runs; sealed into an AssertionResult by the runner."""

    ordinal: int
    match_name: str
    match_config: Mapping[str, Any]
    match_kind: str  # "boolean" | "score"
    thresholded: bool
    location: SourceLocation
    group: str | None
    evidence: Any = None  # JSON-able subject, or what the match selected
    direct_score: bool = False  # a `t.score(...)` entry: only label/key may be set
    label: str | None = None
    key: str | None = None
    gate: bool = False
    weight: float | None = None
    or_stop: bool = False
    result: MatchResult | None = None
    pending: asyncio.Future[Any] | None = field(default=None, repr=False)
    extras: Any = None  # JSON-able per-measurement extras, e.g. {"calls": [[turn, seq], ...]}
    judge_audit: str | None = None
    seal_notes: list[str] = field(default_factory=list)  # what sealing must say it changed (attempts.notes)
    judge_tokens: int | None = None
    judge_evidence: str | None = None
    judge_agreement: float | None = None  # judge.samples > 1: the samples' agreement (judge-trust.md)
    judge_samples: int | None = None  # ... over this many measured samples
    judge_cost_usd: float | None = None  # what the judge endpoint reported its calls cost
    judge_input: Any = None  # judge.JudgeInput: the full input, stored so `regrade` can grade it again
    threshold: float | None = None  # the required value of a thresholded measurement, shown even when unknown

    @property
    def role(self) -> Role:
        if self.gate and self.weight is not None:
            return Role.GATE_SCORE
        if self.gate:
            return Role.GATE
        if self.weight is not None:
            return Role.SCORE
        return Role.RECORD

    def describe(self) -> str:
        name = self.label or self.key or self.match_name
        return f"{name!r} ({self.location})"


class AssertionHandle:
    """Configures one registered entry; every method returns the handle for chaining."""

    __slots__ = ("_ctx", "_reg")

    def __init__(self, ctx: TestContext, reg: Registration) -> None:
        self._ctx = ctx
        self._reg = reg

    def _error(self, message: str) -> AuthoringError:
        return AuthoringError(message, self._ctx._location())

    def gate(self) -> AssertionHandle:
        reg = self._reg
        if reg.direct_score:
            raise self._error("t.score(...) entries accept only .label() and .key(); .gate() is not allowed")
        if reg.match_kind == "score" and not reg.thresholded:
            raise self._error(
                f".gate() on {reg.match_name}: a measurement can gate only after .at_least(x) gave it "
                "a threshold"
            )
        reg.gate = True
        return self

    def score(self, n: float) -> AssertionHandle:
        reg = self._reg
        if reg.direct_score:
            raise self._error("t.score(...) entries accept only .label() and .key(); .score() is not allowed")
        if self._ctx._kind is not EvalKind.SCORE:
            raise self._error(".score(n) is only allowed in a score-style eval (define_score_eval)")
        if reg.weight is not None:
            raise self._error(".score(n) was already set on this entry")
        if isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n) or n < 0:
            raise self._error(f".score(n) needs a finite number ≥ 0, got {n!r}")
        reg.weight = float(n)
        return self

    def label(self, text: str) -> AssertionHandle:
        if self._reg.label is not None:
            raise self._error(f".label() was already set to {self._reg.label!r}; a label is set at most once")
        if not isinstance(text, str):
            raise self._error(f".label() needs text, got {text!r}")
        self._reg.label = text
        return self

    def key(self, text: str) -> AssertionHandle:
        if self._reg.key is not None:
            raise self._error(f".key() was already set to {self._reg.key!r}; a key is set at most once")
        if not isinstance(text, str) or not text:
            raise self._error(f".key() needs non-empty text, got {text!r}")
        self._reg.key = text
        return self

    async def or_stop(self) -> AssertionHandle:
        """Stop the current continuation unless this entry is matched / met / measured."""
        reg = self._reg
        if reg.direct_score:
            raise self._error("t.score(...) entries accept only .label() and .key(); .or_stop() is not allowed")
        if reg.match_kind == "score" and not reg.thresholded:
            raise self._error(
                f".or_stop() on {reg.match_name}: an un-thresholded measurement has nothing to stop on; "
                "use .at_least(x)"
            )
        reg.or_stop = True
        if reg.pending is not None:
            await asyncio.shield(reg.pending)
        result = reg.result
        if result is not None and result.state in _STOPPING:
            raise StopContinuation(f"{reg.label or reg.key or reg.match_name}: {result.state}")
        return self

    def __repr__(self) -> str:
        return f"<AssertionHandle {self._reg.describe()}>"
