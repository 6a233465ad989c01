"""`run --until-decided` (statistics.md): more attempts only for the units still undecided.

After a round of attempts is sealed, each pass-style unit whose stored rule is an
`outcomes.IntervalRule` and whose Wilson interval still contains that rule's rate gets one more
slot — the next ordinal — until it is decided or has `max_attempts` attempts. The extra slots are
planned exactly as the configured ones (`plan`, so an earlier run's sealed attempt at that ordinal
is reused when its fingerprint still matches): ordinary slots, which a later run reuses too.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Protocol

from .. import outcomes
from .._states import AttemptState, EvalKind
from ..config import ExperimentConfig
from ..discovery import DiscoveredEval
from ..store import OutcomeGroup, PlanSlot, Store
from ._events import PlanTotals
from ._plan import PlannedSlot, RunRequest, UntilDecided, plan
from ._plan_rows import reference_slots

__all__ = ["UnitIndex", "decide_more", "more_slots", "undecided_units"]

#: (experiment id, eval id) → the experiment and the discovered eval (case included) of that unit.
UnitIndex = Mapping[tuple[str, str], tuple[ExperimentConfig, DiscoveredEval]]


def undecided_units(groups: Iterable[OutcomeGroup], deciding: UntilDecided) -> dict[tuple[str, str], int]:
    """Each unit still undecided by its interval with room for another attempt → its next ordinal
    (the attempts it has: its slots are ordinals 0 … n − 1)."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # passed, failed, all
    rules: dict[tuple[str, str], outcomes.PassRule] = {}
    for group in groups:
        if EvalKind(group.kind) is not EvalKind.PASS:
            continue
        key = (group.experiment_id, group.eval_id)
        rule = rules.get(key)
        if rule is None:
            rule = rules[key] = outcomes.stored_pass_rule(group.pass_rule)
        entry = counts[key]
        state = AttemptState(group.state)
        entry[0] += group.total if state is AttemptState.PASSED else 0
        entry[1] += group.total if state is AttemptState.FAILED else 0
        entry[2] += group.total
    return {
        key: attempts
        for key, (passed, failed, attempts) in counts.items()
        if attempts < deciding.max_attempts and outcomes.is_undecided(passed, failed, rules[key])
    }


def more_slots(request: RunRequest, store: Store, units: Mapping[tuple[str, str], int],
               index: UnitIndex) -> list[PlannedSlot]:
    """One more slot for each unit: its next ordinal, planned (execute or reuse) like any slot."""
    by_round: dict[tuple[str, int], list[DiscoveredEval]] = defaultdict(list)
    experiments: dict[str, ExperimentConfig] = {}
    for (experiment_id, eval_id), ordinal in units.items():
        experiment, discovered = index[(experiment_id, eval_id)]
        experiments[experiment_id] = experiment
        by_round[(experiment_id, ordinal)].append(discovered)
    slots: list[PlannedSlot] = []
    for (experiment_id, ordinal), evals in by_round.items():
        narrowed = dataclasses.replace(
            request, evals=_unique(evals), experiments=(experiment_id,), eval_prefixes=(), tags=(),
            overrides=dataclasses.replace(request.overrides, attempts=ordinal + 1),
        )
        wanted = {(experiment_id, d.id) for d in evals}
        slots += [s for s in plan(narrowed, store)
                  if s.ordinal == ordinal and (s.experiment.id, s.eval.id) in wanted]
    return slots


def _unique(evals: Sequence[DiscoveredEval]) -> list[DiscoveredEval]:
    return list({id(d): d for d in evals}.values())


class Rounds(Protocol):
    """What a round needs of the run's dispatcher (the one that seals, counts spend and stops)."""

    @property
    def stopping(self) -> bool: ...

    @property
    def budget_hit(self) -> bool: ...

    async def dispatch(self, slots: Sequence[PlannedSlot]) -> None: ...


async def decide_more(
    request: RunRequest, store: Store, run_id: str, index: UnitIndex, dispatcher: Rounds,
    stopped: Callable[[], Awaitable[bool]],
) -> PlanTotals:
    """Rounds of one more slot per unit still undecided by its interval, until every unit is
    decided, at its cap, or the run stops (Ctrl-C, `--budget`). Each round's slots join the run's
    plan before they start. Returns what the added slots were (executed by reason, reused)."""
    assert request.until_decided is not None
    added = PlanTotals(0, 0, {}, str(request.mode.value))
    while not await stopped() and not dispatcher.stopping and not dispatcher.budget_hit:
        units = undecided_units(store.run_outcome_rows(run_id).groups, request.until_decided)
        slots = more_slots(request, store, units, index) if units else []
        if not slots:
            break
        reused = [s for s in slots if not s.execute]
        store.record_plan(run_id, (PlanSlot(s.experiment.id, s.eval.id, s.ordinal,
                                            s.eval.case.id if s.eval.case else None) for s in slots if s.execute))
        store.add_reference_slots(list(reference_slots(run_id, reused)))
        added = added.plus(PlanTotals.of(slots, request.mode))
        executing = [s for s in slots if s.execute]
        if executing:
            await dispatcher.dispatch(executing)
    return added
