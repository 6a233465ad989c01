"""The calibration gate (judge-trust.md §4): a judge not yet shown to agree with people decides nothing.

Opt-in per judge settings (`min_human_kappa`; `min_labels`, default 20). The figures are those in
the store when the run starts — per judge identity (model, factory, prompt / scale version,
sha256 of the criterion text), the number of effective human labels and Cohen's kappa — handed
to the grader as plain data (`Calibration`), so a remote worker gates as the driver would.
`Calibrated` grades as usual, then turns a measured grade of a gated identity that falls short
into `unavailable` (`judge-uncalibrated`), keeping the measurement so people can label it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._states import AssertionState, UnavailableReason
from ..expect._judge import (  # the judge match's engine side: not in expect's pinned user API
    JUDGE_SCALE_VERSION,
    JudgeMatch,
)
from ._grader import Grader, JudgeGrade, PreflightFailure
from ._prompts import PROMPT_VERSION

if TYPE_CHECKING:
    from ..config import JudgeSettings

#: (model, factory, prompt / scale version, sha256 of the criterion's UTF-8 text)
IdentityKey = tuple[str | None, str, str | None, str]

#: The prompt / scale version of this NiceEval's judges, as the fingerprint's `judge_version`.
JUDGE_VERSION = f"prompt-{PROMPT_VERSION}/scale-{JUDGE_SCALE_VERSION}"


def identity_key(model: str | None, factory: str, version: str | None, criterion: str) -> IdentityKey:
    """The key a judge identity's figures are filed under."""
    return (model, factory, version, hashlib.sha256(criterion.encode("utf-8")).hexdigest())


@dataclass(frozen=True)
class Calibration:
    """Per identity: effective human labels and Cohen's kappa (None: undefined) at the run's start."""

    figures: tuple[tuple[IdentityKey, int, float | None], ...] = ()

    def of(self, key: IdentityKey) -> tuple[int, float | None]:
        for known, labels, kappa in self.figures:
            if known == key:
                return labels, kappa
        return 0, None

    def cleared(self, settings: JudgeSettings) -> list[str]:
        """The identities of `settings`' judge (its model, this NiceEval's prompts) whose figures
        clear the gate now, as `factory:sha256 of the criterion`, sorted: what a gated eval's
        fingerprint holds, so its results stop being reused when their judge stops clearing it."""
        return sorted(f"{factory}:{criterion}" for (model, factory, version, criterion), labels, kappa
                      in self.figures
                      if model == settings.model and version == JUDGE_VERSION
                      and shortfall(settings, labels, kappa) is None)


def shortfall(settings: JudgeSettings, labels: int, kappa: float | None) -> str | None:
    """Why the gate holds this identity back (its figures in words), or None when it may decide."""
    floor = settings.min_human_kappa
    if floor is None:
        return None
    shown = "undefined" if kappa is None else f"{kappa:.4f}"
    if labels < settings.min_labels:
        return (f"{labels} effective human label(s) < min_labels {settings.min_labels} (kappa {shown}, "
                f"min_human_kappa {floor:g})")
    if kappa is None or kappa < floor:
        return f"kappa {shown} < min_human_kappa {floor:g} over {labels} effective human label(s)"
    return None


class Calibrated:
    """A grader whose measured grades of an uncalibrated judge identity become unavailable."""

    def __init__(self, inner: Grader, calibration: Calibration) -> None:
        self.inner = inner
        self.calibration = calibration

    def resolve_problem(self, settings: JudgeSettings | None) -> str | None:
        return self.inner.resolve_problem(settings)

    async def preflight(self, settings: JudgeSettings) -> PreflightFailure | None:
        return await self.inner.preflight(settings)

    async def grade(self, match: JudgeMatch, material: object, settings: JudgeSettings) -> JudgeGrade:
        grade = await self.inner.grade(match, material, settings)
        if settings.min_human_kappa is None or grade.state != AssertionState.MEASURED:
            return grade
        key = identity_key(settings.model, match.judge_kind, JUDGE_VERSION, match.criterion)
        why = shortfall(settings, *self.calibration.of(key))
        if why is None:
            return grade
        return dataclasses.replace(
            grade, state=AssertionState.UNAVAILABLE, reason=UnavailableReason.JUDGE_UNCALIBRATED.value,
            explanation=f"judge-uncalibrated: {why}; the judge said {grade.measurement:g}: {grade.explanation}",
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


__all__ = ["JUDGE_VERSION", "Calibrated", "Calibration", "IdentityKey", "identity_key", "shortfall"]
