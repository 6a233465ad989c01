"""One experiment's totals for `compare --experiments A B` and the report's summary: "is B
better than A?" as counts — the folded eval pass rate over decided evals (undecided ones said
beside), the attempt
pass rate over decided attempts, the mean score, cost and time. Pure: no I/O.

Beside `comparison` (pairs and their classes), which it folds with: an experiment's evals are
folded by the same `fold_side` as a pair's sides.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import outcomes
from ._states import ATTEMPT_STATE_OF, KIND_OF, AttemptState, EvalKind, GateState
from ._unit_folds import AttemptFacts
from .comparison import Verdict, fold_side, group_units

__all__ = ["ExperimentTotals", "experiment_totals"]


@dataclass(frozen=True)
class ExperimentTotals:
    """One experiment's totals for "is B better than A?"."""

    experiment_id: str
    attempts: int
    pass_evals: int  # pass-style (eval, case) pairs, folded under their pass_rule
    pass_evals_passed: int
    attempts_passed: int  # pass-style attempts that passed
    pass_attempts: int  # every pass-style attempt, errored ones included
    score_attempts: int
    rankable: int
    unrankable: int
    mean_score: float | None  # over rankable score-style attempts (outcomes.summarize_scores)
    earned: float
    max_score: float
    unavailable_weight: float
    cost_usd: float | None  # None when no attempt reported a cost
    duration_ms: float  # summed over attempts
    mean_duration_ms: float | None
    attempts_errored: int = 0  # pass-style attempts that errored: not counted in the attempt pass rate
    pass_evals_undecided: int = 0  # pass-style evals neither passed nor failed (every attempt errored, ...)

    @property
    def pass_evals_decided(self) -> int:
        """Pass-style evals that passed or failed: an undecided one is evidence neither way."""
        return self.pass_evals - self.pass_evals_undecided

    @property
    def eval_pass_rate(self) -> float | None:
        """Passed over decided evals (statistics.md: undecided ones are counted beside, never as
        a 0 in the rate); None when no eval was decided."""
        decided = self.pass_evals_decided
        return self.pass_evals_passed / decided if decided else None

    @property
    def attempt_pass_rate(self) -> float | None:
        """Passed over decided attempts: errored ones are evidence neither way (statistics.md)."""
        decided = self.pass_attempts - self.attempts_errored
        return self.attempts_passed / decided if decided else None

    def row(self) -> dict[str, Any]:
        return {
            "experiment_id": self.experiment_id,
            "attempts": self.attempts,
            "pass_evals": self.pass_evals,
            "pass_evals_passed": self.pass_evals_passed,
            "eval_pass_rate": self.eval_pass_rate,
            "pass_evals_undecided": self.pass_evals_undecided,
            "attempt_pass_rate": self.attempt_pass_rate,
            "attempts_errored": self.attempts_errored,
            "score_attempts": self.score_attempts,
            "rankable": self.rankable,
            "unrankable": self.unrankable,
            "mean_score": self.mean_score,
            "earned": self.earned,
            "max_score": self.max_score,
            "unavailable_weight": self.unavailable_weight,
            "cost_usd": self.cost_usd,
            "duration_ms": self.duration_ms,
            "mean_duration_ms": self.mean_duration_ms,
        }


@dataclass(frozen=True)
class _ScoreView:
    state: AttemptState
    score: float | None
    max_score: float | None
    unavailable_weight: float | None
    partial_score: float | None
    gate: GateState | None


def experiment_totals(attempts: Iterable[AttemptFacts], experiment_id: str) -> ExperimentTotals:
    """Totals of one experiment's attempts: folded eval pass rate, attempt pass rate, mean score, cost."""
    mine = [a for a in attempts if a.experiment_id == experiment_id]
    pass_attempts = [a for a in mine if KIND_OF[a.kind] is EvalKind.PASS]
    score_attempts = [a for a in mine if KIND_OF[a.kind] is EvalKind.SCORE]
    sides = [fold_side(g, keys=False) for g in group_units(pass_attempts, by_experiment=True).values()]
    summary = outcomes.summarize_scores(
        [_ScoreView(ATTEMPT_STATE_OF[a.state], a.score, a.max_score, a.unavailable_weight, None, a.gate)
         for a in score_attempts]
    )
    costs = [a.cost_usd for a in mine if a.cost_usd is not None]
    durations = [a.duration_ms for a in mine if a.duration_ms is not None]
    return ExperimentTotals(
        experiment_id=experiment_id,
        attempts=len(mine),
        pass_evals=len(sides),
        pass_evals_passed=sum(1 for s in sides if s.verdict is Verdict.PASSED),
        pass_evals_undecided=sum(1 for s in sides if s.verdict is Verdict.UNDECIDED),
        attempts_passed=sum(1 for a in pass_attempts if ATTEMPT_STATE_OF[a.state] is AttemptState.PASSED),
        pass_attempts=len(pass_attempts),
        attempts_errored=sum(1 for a in pass_attempts if ATTEMPT_STATE_OF[a.state] is AttemptState.ERRORED),
        score_attempts=len(score_attempts),
        rankable=summary.rankable,
        unrankable=summary.unrankable,
        mean_score=summary.mean,
        earned=summary.earned,
        max_score=summary.max_score,
        unavailable_weight=summary.unavailable_weight,
        cost_usd=round(math.fsum(costs), 10) if costs else None,
        duration_ms=round(math.fsum(durations), 3),
        mean_duration_ms=round(math.fsum(durations) / len(durations), 3) if durations else None,
    )
