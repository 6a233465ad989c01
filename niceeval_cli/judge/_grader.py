"""The grader seam: what the runner asks of a judge, and the registry of graders.

The runner never builds a judge client itself: it is handed a grader name (`run(grader=...)`,
default `openai-compatible`, the HTTP judge of judge.md), makes one grader per run from the
registry (`create_grader`), and a remote worker makes its own from the same name — as httpx has
its transport injected rather than built inside the client. A grader never raises for a grading
problem: every outcome is a `JudgeGrade`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .._registry import DEFAULT_GRADER, GRADERS, UnknownName
from .._states import AssertionState

if TYPE_CHECKING:
    from ..config import JudgeSettings
    from ..expect._judge import JudgeMatch  # the judge match's definition: not in expect's pinned user API

__all__ = ["DEFAULT_GRADER", "Grader", "GraderFactory", "JudgeGrade", "PreflightFailure", "create_grader",
           "register_grader"]


@dataclass(frozen=True)
class JudgeGrade:
    """What one judge assertion settled to (the runner turns it into an AssertionResult)."""

    state: AssertionState  # MEASURED, UNAVAILABLE or ERRORED only
    measurement: float | None
    reason: str | None  # an UnavailableReason / ErroredReason value
    explanation: str  # the judge's reasoning, or the failure detail (with the HTTP status)
    audit: str | None  # JSON {"request": ..., "response": ...}, redacted, within max_audit_bytes
    tokens: int  # judge total tokens (0 when no call was made or the judge reported no usable usage)
    evidence: str | None  # the grading material as JSON, redacted, within EVIDENCE_MAX_BYTES
    replaced: int = 0  # lone surrogates in the judge's text, stored replaced with U+FFFD (the runner notes it)
    cost_usd: float | None = None  # what the judge endpoint reported the call cost (body or gateway header)
    #: With `judge.samples` > 1 (judge-trust.md): the share of the measured samples at the median,
    #: and how many samples were measured (the agreement's denominator); None for one sample.
    agreement: float | None = None
    samples: int | None = None


@dataclass(frozen=True)
class PreflightFailure:
    """A judge setting the endpoint refused before dispatch: a setup error for its evals."""

    settings: JudgeSettings
    endpoint: str
    cause: str  # e.g. "401 Unauthorized: invalid api key"


class Grader(Protocol):
    """Grades judge assertions for one run (or one remote worker)."""

    def resolve_problem(self, settings: JudgeSettings | None) -> str | None:
        """Why grading cannot even start (an UnavailableReason; no call is made), or None."""
        ...

    async def preflight(self, settings: JudgeSettings) -> PreflightFailure | None:
        """What the endpoint refused before dispatch (a setup error), or None."""
        ...

    async def grade(self, match: JudgeMatch, material: object, settings: JudgeSettings) -> JudgeGrade:
        """Grade `material` with `match`'s judge; never raises for a grading problem."""
        ...

    async def aclose(self) -> None:
        """Release the grader's clients (idempotent)."""
        ...


GraderFactory = Callable[[], Grader]


def register_grader(name: str, factory: GraderFactory) -> None:
    """Make a grader available by name (`_registry.GRADERS`); a later registration replaces it."""
    GRADERS.register(name, factory, replace=True)


def create_grader(name: str = DEFAULT_GRADER) -> Grader:
    """A new grader of the kind registered as `name` (LookupError naming the known ones), grading
    each assertion `judge.samples` times (`_samples.Sampled`; one sample hands its grade back as is)."""
    from ._samples import Sampled

    try:
        factory = GRADERS.get(name)
    except UnknownName as exc:
        raise LookupError(str(exc)) from None
    return Sampled(factory())
