"""`run --until-decided` (statistics.md): more attempts only for the units still undecided.

After a round of attempts is sealed, each pass-style unit whose stored rule is an
`outcomes.IntervalRule` and whose Wilson interval still contains that rule's rate gets one more
slot — the next ordinal — until it is decided or has `max_attempts` attempts. The extra slots are
planned exactly as the configured ones (`plan_ordinal`, so an earlier run's sealed attempt at that
ordinal is reused when its fingerprint still matches): ordinary slots, which a later run reuses too.
Each round's work is what it adds: its new ordinal planned, its sealed attempts counted
(`UnitCounts`), never the run's earlier rounds again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Protocol

from .. import outcomes
from .._states import AttemptState, EvalKind
from ..store import OutcomeGroup, PlanSlot, Store
from ._events import PlanTotals
from ._plan import PlannedSlot, RunRequest, UntilDecided, plan_ordinal
from ._plan_rows import reference_slots

__all__ = ["UnitCounts", "UnitIndex", "decide_more", "more_slots"]

#: (experiment id, eval id) → one of that unit's configured slots: its experiment, its discovered
#: eval (case included) and the shape its extra slots are planned in.
UnitIndex = Mapping[tuple[str, str], PlannedSlot]


class UnitCounts:
    """Each pass-style unit's passed, failed and all attempts in the run, with its stored rule,
    added to as attempts are read: a round adds what it sealed, and the run is never read again
    (a full recount each round made a run quadratic in its attempts)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], list[int]] = {}  # → [passed, failed, all]
        self._rules: dict[tuple[str, str], outcomes.PassRule] = {}

    def add(self, groups: Iterable[OutcomeGroup]) -> None:
        """Count these outcome groups' attempts (a unit's rule is the one its first group stored)."""
        counts, rules = self._counts, self._rules
        for group in groups:
            if EvalKind(group.kind) is not EvalKind.PASS:
                continue
            key = (group.experiment_id, group.eval_id)
            entry = counts.get(key)
            if entry is None:
                entry = counts[key] = [0, 0, 0]
                rules[key] = outcomes.stored_pass_rule(group.pass_rule)
            state = AttemptState(group.state)
            entry[0] += group.total if state is AttemptState.PASSED else 0
            entry[1] += group.total if state is AttemptState.FAILED else 0
            entry[2] += group.total

    def units(self) -> list[tuple[str, str]]:
        """Every unit counted, in the order first read."""
        return list(self._counts)

    def undecided(self, units: Iterable[tuple[str, str]], deciding: UntilDecided) -> dict[tuple[str, str], int]:
        """Those of `units` (in their order) still undecided by their interval with room for
        another attempt → each one's next ordinal (the attempts it has: ordinals 0 … n − 1)."""
        found: dict[tuple[str, str], int] = {}
        for key in units:
            entry = self._counts.get(key)
            if entry is None:
                continue
            passed, failed, attempts = entry
            if attempts < deciding.max_attempts and outcomes.is_undecided(passed, failed, self._rules[key]):
                found[key] = attempts
        return found


def more_slots(request: RunRequest, store: Store, units: Mapping[tuple[str, str], int],
               index: UnitIndex) -> list[PlannedSlot]:
    """One more slot for each unit: its next ordinal, planned (execute or reuse) like any slot,
    in the shape of the unit's configured slots (`plan_ordinal`)."""
    by_round: dict[tuple[str, int], list[PlannedSlot]] = defaultdict(list)
    for (experiment_id, eval_id), ordinal in units.items():
        by_round[(experiment_id, ordinal)].append(index[(experiment_id, eval_id)])
    slots: list[PlannedSlot] = []
    for (_, ordinal), known in by_round.items():
        slots += plan_ordinal(request, store, known, ordinal)
    return slots


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
    deciding = request.until_decided
    assert deciding is not None
    added = PlanTotals(0, 0, {}, str(request.mode.value))
    counts = UnitCounts()
    units: dict[tuple[str, str], int] = {}
    slots: list[PlannedSlot] | None = None  # the last round's
    while not await stopped() and not dispatcher.stopping and not dispatcher.budget_hit:
        if slots is None:  # the configured attempts, read once
            counts.add(store.run_outcome_rows(run_id).groups)
            units = counts.undecided(counts.units(), deciding)
        else:  # then only what the last round added: a unit left out of a round is decided or capped
            counts.add(store.slot_outcome_rows(run_id, ((s.experiment.id, s.eval.id, s.ordinal) for s in slots)))
            units = counts.undecided(units, deciding)
        slots = more_slots(request, store, units, index) if units else []
        if not slots:
            break
        reused = [s for s in slots if not s.execute]
        executing = [s for s in slots if s.execute]
        # The plan, its total and its reused slots grow together: `query runs`, `view` and the
        # report read one plan, the one planned so far (docs/statistics.md).
        store.extend_plan(run_id, [PlanSlot(s.experiment.id, s.eval.id, s.ordinal,
                                            s.eval.case.id if s.eval.case else None) for s in executing],
                          list(reference_slots(run_id, reused)))
        added = added.plus(PlanTotals.of(slots, request.mode))
        if executing:
            await dispatcher.dispatch(executing)
    return added
