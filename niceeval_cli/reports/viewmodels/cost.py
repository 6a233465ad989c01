"""Cost per experiment (agents.md, "Cost"): reported and estimated sums kept apart, each saying
how many attempts it covers, so a partial sum is never read as the whole cost."""

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

    @property
    def known(self) -> bool:
        return self.reported_n > 0 or self.estimated_n > 0

    @property
    def text(self) -> str:
        """`$0.0123 reported (4 of 4 attempts) · $0.0150 estimated from [prices] (4 of 4)`."""
        parts = []
        if self.reported is not None:
            parts.append(f"{usd(self.reported)} reported ({self.reported_n} of {self.attempts} attempts)")
        if self.estimated is not None:
            parts.append(f"{usd(self.estimated)} estimated from [prices] ({self.estimated_n} of {self.attempts})")
        return " · ".join(parts)


def usd(x: float) -> str:
    return f"${x:.4f}" if x < 1 else f"${x:,.2f}"


def experiment_costs(rows: Iterable[Mapping[str, Any]], order: Sequence[str] = ()) -> list[ExperimentCost]:
    """From the store's per-experiment sums (`Store.costs`): the experiments (in `order`, then the
    rest) whose cost is known."""
    by_id = {row["experiment_id"]: row for row in rows}
    ids = [e for e in order if e in by_id] + sorted(e for e in by_id if e not in order)
    costs = [
        ExperimentCost(name(e), int(r["attempts"]), r["reported"] if r["reported_n"] else None, int(r["reported_n"]),
                       r["estimated"] if r["estimated_n"] else None, int(r["estimated_n"]))
        for e in ids for r in [by_id[e]]
    ]
    return [c for c in costs if c.known]


def attempt_cost_text(attempt: AttemptRecord) -> str:
    parts = []
    if attempt.cost_usd is not None:
        parts.append(f"{usd(attempt.cost_usd)} reported")
    if attempt.estimated_cost_usd is not None:
        parts.append(f"{usd(attempt.estimated_cost_usd)} estimated from [prices]")
    return " · ".join(parts)


__all__ = ["ExperimentCost", "attempt_cost_text", "experiment_costs", "usd"]
