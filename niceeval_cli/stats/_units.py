"""One unit's evidence and what statistics.md shows of it (rate, interval, pass@k, flaky, mean).

A unit is one (experiment, eval, case). Its evidence is its decided attempts only: errored,
unrankable and gate-unavailable attempts are counted beside, never as failures or zeros.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ._intervals import DEFAULT_CONFIDENCE, Interval, mean, pass_at_k, pass_hat_k, t_interval, wilson

__all__ = ["UnitEvidence", "UnitStats", "unit_stats"]


@dataclass(frozen=True, slots=True)
class UnitEvidence:
    """pass-style: `passed` of `passed + failed`; score-style: `scores` (score / max_score of each
    scored attempt with max_score > 0). `not_counted`: attempts that are not evidence either way."""

    style: str  # "pass" | "score"
    passed: int = 0
    failed: int = 0
    scores: tuple[float, ...] = field(default=())
    not_counted: int = 0

    @property
    def decided(self) -> int:
        return self.passed + self.failed if self.style == "pass" else len(self.scores)


@dataclass(frozen=True, slots=True)
class UnitStats:
    evidence: UnitEvidence
    k: int
    rate: float | None  # pass-style p̂ = s / n; score-style: the mean x̄
    interval: Interval | None  # Wilson (pass) or t (score, n ≥ 2)
    pass_at_k: float | None
    pass_hat_k: float | None
    flaky: bool

    @property
    def decided(self) -> int:
        return self.evidence.decided


def unit_stats(evidence: UnitEvidence, *, k: int, confidence: float = DEFAULT_CONFIDENCE) -> UnitStats:
    n = evidence.decided
    if evidence.style == "pass":
        s = evidence.passed
        return UnitStats(evidence, k, s / n if n else None, wilson(s, n, confidence), pass_at_k(n, s, k),
                         pass_hat_k(n, s, k), evidence.passed > 0 and evidence.failed > 0)
    scores: Sequence[float] = evidence.scores
    return UnitStats(evidence, k, mean(scores) if scores else None, t_interval(scores, confidence), None, None,
                     False)
