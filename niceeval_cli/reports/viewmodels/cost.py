"""Cost per experiment (agents.md, "Cost"): reported and estimated sums kept apart, each saying
how many attempts it covers, so a partial sum is never read as the whole cost; the judge's cost
apart from the system under test's (judge-trust.md, "Cost")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._records import AttemptRecord
from .text import name


@dataclass(frozen=True)
class ExperimentCost:
    experiment_id: str
    attempts: int
    reported: float | None  # sum over the attempts that reported a cost
    reported_n: int
    estimated: float | None  # sum over the attempts priced by [prices."MODEL"]
    estimated_n: int
    # The judge's: reported by the judge endpoint, and judge tokens priced by [prices."<judge model>"].
    judge_reported: float | None = None
    judge_reported_n: int = 0
    judge_estimated: float | None = None
    judge_estimated_n: int = 0

    @property
    def known(self) -> bool:
        return self.reported_n > 0 or self.estimated_n > 0 or self.judge_known

    @property
    def judge_known(self) -> bool:
        return self.judge_reported_n > 0 or self.judge_estimated_n > 0

    @property
    def text(self) -> str:
        """`$0.0123 reported (4 of 4 attempts) · $0.0150 estimated from [prices] (4 of 4)`."""
        return _sums(self.reported, self.reported_n, self.estimated, self.estimated_n, self.attempts)

    @property
    def judge_text(self) -> str:
        """The judge's cost in the same words: `$0.0040 reported (4 of 4 attempts) · ...`."""
        return _sums(self.judge_reported, self.judge_reported_n, self.judge_estimated, self.judge_estimated_n,
                     self.attempts)


def _sums(reported: float | None, reported_n: int, estimated: float | None, estimated_n: int, attempts: int) -> str:
    parts = []
    if reported is not None:
        parts.append(f"{usd(reported)} reported ({reported_n} of {attempts} attempts)")
    if estimated is not None:
        parts.append(f"{usd(estimated)} estimated from [prices] ({estimated_n} of {attempts})")
    return " · ".join(parts)


def usd(x: float) -> str:
    return f"${x:.4f}" if x < 1 else f"${x:,.2f}"


def experiment_costs(rows: Iterable[Mapping[str, Any]], order: Sequence[str] = ()) -> list[ExperimentCost]:
    """From the store's per-experiment sums (`Store.costs`): the experiments (in `order`, then the
    rest) whose cost is known."""
    by_id = {row["experiment_id"]: row for row in rows}
    ids = [e for e in order if e in by_id] + sorted(e for e in by_id if e not in order)
    costs = [
        ExperimentCost(name(e), int(r["attempts"]), *_sum(r, "reported"), *_sum(r, "estimated"),
                       *_sum(r, "judge_reported"), *_sum(r, "judge_estimated"))
        for e in ids for r in [by_id[e]]
    ]
    return [c for c in costs if c.known]


def _sum(row: Mapping[str, Any], key: str) -> tuple[float | None, int]:
    """(sum, count) of one kind of cost; rows of readers that do not know it count none."""
    n = int(row.get(f"{key}_n") or 0)
    return (row.get(key) if n else None), n


def attempt_cost_text(attempt: AttemptRecord) -> str:
    parts = []
    if attempt.cost_usd is not None:
        parts.append(f"{usd(attempt.cost_usd)} reported")
    if attempt.estimated_cost_usd is not None:
        parts.append(f"{usd(attempt.estimated_cost_usd)} estimated from [prices]")
    return " · ".join(parts)


def attempt_judge_cost_text(attempt: AttemptRecord) -> str:
    """The judge's cost of one attempt, apart from the system under test's."""
    parts = []
    if attempt.judge_cost_usd is not None:
        parts.append(f"{usd(attempt.judge_cost_usd)} reported")
    if attempt.judge_estimated_cost_usd is not None:
        parts.append(f"{usd(attempt.judge_estimated_cost_usd)} estimated from [prices]")
    return " · ".join(parts)


__all__ = ["ExperimentCost", "attempt_cost_text", "attempt_judge_cost_text", "experiment_costs", "usd"]
