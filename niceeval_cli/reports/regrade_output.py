"""`niceeval regrade --dry`: what would be regraded, what is adopted or left out, and which judge
settings change. (A regrade's progress and summary are `run`'s: reports/run_output.py.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._safe import visible

if TYPE_CHECKING:
    from rich.console import Console

    from ..runner import RegradePlan


def dry_lines(plan: RegradePlan) -> list[str]:
    """One line per slot, then the settings that change and the totals."""
    run = plan.run
    lines = [f"regrade of run {run.id} ({', '.join(plan.experiments)}):"]
    for slot in plan.regrade:
        lines.append(f"regrade  {plan.label(slot)}  attempt {slot.attempt_id}")
    for slot in plan.adopt:
        lines.append(f"adopt    {plan.label(slot)}  attempt {slot.attempt_id} (no judge assertion: kept as it is)")
    for slot, attempt in plan.missing:
        lines.append(f"skip     {plan.label(slot)}  attempt {attempt} (sealed without its judge inputs)")
    if plan.changes:
        lines.append("judge settings that change: " + "; ".join(
            f"{name} {before} → {after}" for name, before, after in plan.changes))
    else:
        lines.append("judge settings that change: none (each attempt's own judge is asked again)")
    lines.append(f"{len(plan.regrade)} attempt(s) to regrade, {len(plan.adopt)} to adopt"
                 + (f", {len(plan.missing)} left out (--skip-missing)" if plan.missing else "")
                 + "; nothing was written (--dry)")
    return [visible(text, 400, single_line=True) for text in lines]


def print_dry(console: Console, plan: RegradePlan) -> None:
    for text in dry_lines(plan):
        console.file.write(text + "\n")


__all__ = ["dry_lines", "print_dry"]
