"""Cost per experiment as terminal lines (run summary, `view` header)."""

from __future__ import annotations

from collections.abc import Sequence

from ..viewmodels.cost import ExperimentCost
from .lines import Line, line, pad

_LABEL_W = 10


def cost_lines(costs: Sequence[ExperimentCost]) -> list[Line]:
    """`cost      <experiment>  $… reported (…) · $… estimated (…)`, then the judge's cost apart:
    `judge     <experiment>  $… reported (…)` (judge-trust.md: never added to the first)."""
    if not costs:
        return []
    width = max(len(c.experiment_id) for c in costs)
    lines = [line((pad("cost", _LABEL_W), "dim"), pad(c.experiment_id, width), "  ", c.text, indent=2)
             for c in costs if c.text]
    lines += [line((pad("judge", _LABEL_W), "dim"), pad(c.experiment_id, width), "  ", c.judge_text, indent=2)
              for c in costs if c.judge_known]
    return lines


__all__ = ["cost_lines"]
