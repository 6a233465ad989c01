"""Cost per experiment (agents.md, "Cost"): reported and estimated sums shown apart, each
saying how many attempts it covers, so a partial sum is never read as the whole cost.

Pure: sealed attempt records in, `Line`s out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._records import AttemptRecord
from ._render import Line, line, name, pad

_LABEL_W = 10


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


def experiment_costs(attempts: Iterable[AttemptRecord], order: Sequence[str] = ()) -> list[ExperimentCost]:
    """One entry per experiment (in `order`, then first seen)."""
    sums: dict[str, list[float | int]] = {}
    for a in attempts:
        entry = sums.setdefault(a.experiment_id, [0, 0.0, 0, 0.0, 0])
        entry[0] += 1
        if isinstance(a.cost_usd, (int, float)):
            entry[1] += a.cost_usd
            entry[2] += 1
        if isinstance(a.estimated_cost_usd, (int, float)):
            entry[3] += a.estimated_cost_usd
            entry[4] += 1
    ids = [e for e in order if e in sums] + [e for e in sums if e not in order]
    return [
        ExperimentCost(e, int(sums[e][0]), float(sums[e][1]) if sums[e][2] else None, int(sums[e][2]),
                       float(sums[e][3]) if sums[e][4] else None, int(sums[e][4]))
        for e in ids
    ]


def usd(x: float) -> str:
    return f"${x:.4f}" if x < 1 else f"${x:,.2f}"


def cost_text(cost: ExperimentCost) -> str:
    """`$0.0123 reported (4 of 4 attempts) · $0.0150 estimated (4 of 4)`."""
    parts = []
    if cost.reported is not None:
        parts.append(f"{usd(cost.reported)} reported ({cost.reported_n} of {cost.attempts} attempts)")
    if cost.estimated is not None:
        parts.append(f"{usd(cost.estimated)} estimated from [prices] ({cost.estimated_n} of {cost.attempts})")
    return " · ".join(parts)


def cost_lines(attempts: Iterable[AttemptRecord], order: Sequence[str] = ()) -> list[Line]:
    """`cost  <experiment>  $… reported (…) · $… estimated (…)`, for experiments whose cost is known."""
    known = [c for c in experiment_costs(attempts, order) if c.known]
    if not known:
        return []
    width = max(len(c.experiment_id) for c in known)
    return [line((pad("cost", _LABEL_W), "dim"), pad(name(c.experiment_id), width), "  ", cost_text(c), indent=2)
            for c in known]


__all__ = ["ExperimentCost", "cost_lines", "cost_text", "experiment_costs", "usd"]
