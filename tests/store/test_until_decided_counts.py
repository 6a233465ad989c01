"""`run --until-decided` counts each round from the slots it added (`Store.slot_outcome_rows`,
`UnitCounts`), never the run again: after every round its undecided units and their next ordinals
must be exactly those a recount of the whole run gives (`undecided_units` over
`Store.run_outcome_rows`, what each round read before), in the same order."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from niceeval_cli._states import AttemptState, PlanReason, Relation
from niceeval_cli.runner._plan import UntilDecided
from niceeval_cli.runner._until_decided import UnitCounts
from niceeval_cli.store import SlotRecord
from tests.support.records import SealedStore, make_attempt, origin_slot


def undecided_units(groups, deciding):
    """The recount each round did before: the whole run's outcome groups counted afresh."""
    counts = UnitCounts()
    counts.add(groups)
    return counts.undecided(counts.units(), deciding)


RULES = ("0.8 until decided at 0.95", "0.5 until decided at 0.9", "0.8", "all", None)
DECIDING = UntilDecided(max_attempts=14, confidence=0.95)


class _Rounds:
    """A run sealed slot by slot: an attempt of its own, or now and then an earlier run's attempt
    at the same ordinal (a reused slot); a unit's next ordinal is the slots it has."""

    def __init__(self, project: SealedStore, rng: random.Random) -> None:
        self.project, self.rng = project, rng
        self.units = [(e, f"evals/{n:02d}") for e in ("exp/b", "exp/a") for n in rng.sample(range(30), 8)]
        self.rules = {u: rng.choice(RULES) for u in self.units}
        self.score_style = {u for u in self.units if rng.random() < 0.15}
        self.rate = {u: rng.choice([0.2, 0.5, 0.8, 0.95, 1.0]) for u in self.units}
        self.earlier = project.begin_run(("exp/a", "exp/b"))
        self.before = {(u, n): self._attempt(self.earlier, u, n)
                       for u in self.units for n in range(DECIDING.max_attempts)}
        project.finish(self.earlier)
        self.run_id = project.begin_run(("exp/a", "exp/b"))
        self.slots: Counter[tuple[str, str]] = Counter()

    def _attempt(self, run_id: str, unit: tuple[str, str], ordinal: int) -> str:
        if unit in self.score_style:
            state = self.rng.choice([AttemptState.SCORED, AttemptState.UNRANKABLE, AttemptState.ERRORED])
        else:
            state = self.rng.choices([AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED],
                                     [self.rate[unit], 1 - self.rate[unit], 0.1])[0]
        attempt = make_attempt(run_id, unit[0], unit[1], ordinal=ordinal, state=state)
        self.project.store.seal_attempt(attempt, [], origin_slot(attempt)._replace(pass_rule=self.rules[unit]))
        return attempt.id

    def fill(self, unit: tuple[str, str]) -> tuple[str, str, int]:
        """The unit's next slot, filled; one in ten is left unfilled (a slot that never sealed)."""
        ordinal = self.slots[unit]
        if self.rng.random() < 0.1:
            return (*unit, ordinal)
        if self.rng.random() < 0.3:
            self.project.store.add_reference_slots([SlotRecord(
                self.run_id, *unit, ordinal, self.before[(unit, ordinal)], Relation.REFERENCE, PlanReason.REUSED,
                self.rules[unit])])
        else:
            self._attempt(self.run_id, unit, ordinal)
        self.slots[unit] += 1
        return (*unit, ordinal)

    def recount(self) -> list[tuple[tuple[str, str], int]]:
        return list(undecided_units(self.project.store.run_outcome_rows(self.run_id).groups, DECIDING).items())


@pytest.mark.parametrize("seed", range(6))
def test_each_round_counted_from_its_own_slots_decides_as_a_recount_of_the_run(project, seed):
    rng = random.Random(seed)
    run = _Rounds(project, rng)
    for unit in run.units:
        for _ in range(rng.choice([1, 3, 5])):
            run.fill(unit)
    counts = UnitCounts()
    counts.add(project.store.run_outcome_rows(run.run_id).groups)
    units = counts.undecided(counts.units(), DECIDING)
    assert list(units.items()) == run.recount()
    rounds = 0
    while units:
        added = [run.fill(unit) for unit in units]
        counts.add(project.store.slot_outcome_rows(run.run_id, added))
        units = counts.undecided(units, DECIDING)
        assert list(units.items()) == run.recount(), rounds
        assert all(ordinal == run.slots[unit] for unit, ordinal in units.items())
        rounds += 1
    assert rounds > 0  # some unit was undecided at first


def test_planning_one_ordinal_reads_that_ordinals_history_alone(project):
    """A round plans one ordinal: its history lookup (`Store.latest_attempts(ordinal=)`) answers for
    that ordinal exactly what the whole lookup does, found by identity or, sealed before schema 5,
    by eval id."""
    from niceeval_cli.store import EvalRef

    for _ in range(2):  # two runs: the later attempt of each slot is its history
        run_id = project.begin_run()
        for ordinal in range(6):
            project.seal(make_attempt(run_id, eval_id="evals/a", ordinal=ordinal, eval_module="evals/a",
                                      eval_name="a", state=AttemptState.FAILED if ordinal % 2 else AttemptState.PASSED))
            project.seal(make_attempt(run_id, eval_id="evals/old", ordinal=ordinal))
        project.finish(run_id)
    refs = [EvalRef("evals/a", "evals/a", "a"), EvalRef("evals/old")]
    whole = project.store.latest_attempts("exp", refs)
    assert len(whole) == 12
    for ordinal in (0, 3, 5, 6):
        assert project.store.latest_attempts("exp", refs, ordinal) == {
            key: found for key, found in whole.items() if key[1] == ordinal}
