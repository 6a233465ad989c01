"""The rows a run's plan is recorded as: its reference slots (reused attempts) and its plan rows,
each made as SQLite reads them, and the pass rule as a slot stores it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from .. import outcomes
from .._states import PlanReason, Relation
from ..store import PlanSlot, SlotRecord
from ._plan import PlannedSlot

__all__ = ["Rows", "plan_slots", "reference_slots", "rule_text"]

T = TypeVar("T")


def rule_text(rule: object) -> str:
    """As a slot stores it: "any", "all", "0.8", or "0.8 until decided at 0.95" (`--until-decided`)."""
    if isinstance(rule, (str, outcomes.IntervalRule)):
        return str(rule)
    return f"{float(rule):g}"  # type: ignore[arg-type]


def reference_slots(run_id: str, reused: Sequence[PlannedSlot]) -> Iterator[SlotRecord]:
    """Made as SQLite reads them: each shape's pass rule is written out once, not once a slot."""
    reference, reason, make = Relation.REFERENCE, PlanReason.REUSED, tuple.__new__
    rules: dict[int, str] = {}
    for s in reused:
        shape = s.shape
        rule = rules.get(id(shape))
        if rule is None:
            rule = rules[id(shape)] = rule_text(shape.settings.pass_rule)
        yield make(SlotRecord, (run_id, s.experiment.id, s.eval.id, s.ordinal, s.reuse_attempt_id,
                                reference, reason, rule))


def plan_slots(planned: Sequence[PlannedSlot], reused: Sequence[PlannedSlot] | None) -> Iterator[PlanSlot]:
    """The plan less this run's reference slots, which stand for themselves (schema 4).

    `reused` None: the run is the whole plan, so its reference slots are the slots not executed
    (no set of 20 000 ids for a re-run that reuses everything)."""
    adopted = {id(s) for s in reused} if reused is not None else None
    for s in planned:
        if (not s.execute) if adopted is None else (id(s) in adopted):
            continue
        yield PlanSlot(s.experiment.id, s.eval.id, s.ordinal, s.eval.case.id if s.eval.case else None)


class Rows(Iterable[T]):
    """Rows made as they are read, again on each iteration: 20 000 slot rows are never held."""

    def __init__(self, make: Callable[[], Iterator[T]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[T]:
        return self._make()
