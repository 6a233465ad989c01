"""The checks before dispatch (a setup error, exit 3, for what fails them): the judge, the
sandboxes, the adapters — an adapter running its own binary in a sandbox off this host checked in
that sandbox — as one task that Ctrl-C / SIGTERM cancels."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from ..adapters import preflight_adapters
from ..config import JudgeSettings
from ._events import SetupFailure
from ._sandboxing import evals_by_experiment, preflight_adapters_in_sandboxes, preflight_sandbox_slots, runs_in_sandbox
from ._stop import Stop

if TYPE_CHECKING:
    from ..judge import Grader
    from ._plan import PlannedSlot


async def preflights(judge: Grader | None, slots: Sequence[PlannedSlot]) -> list[SetupFailure]:
    """Every check before dispatch: the judge, the sandboxes, then the adapters of the slots whose
    sandbox can be made (a binary is not probed in a sandbox that cannot be)."""
    failures = await _preflight(judge, slots) if judge is not None else []
    unmade = await preflight_sandbox_slots(slots)
    broken = {(f.experiment_id, e) for f in unmade for e in f.eval_ids}
    failures += await _preflight_adapters(
        [s for s in slots if (s.experiment.id, s.eval.id) not in broken] if broken else slots)
    return failures + unmade


async def interruptible(stop: Stop, checks: Coroutine[Any, Any, list[SetupFailure]]) -> list[SetupFailure]:
    """The preflight as a task Ctrl-C / SIGTERM cancels: a check that does not answer (a silent
    endpoint, a hanging probe) must not hold an interrupted run until its own timeout. Cancelled by
    the stop, it found nothing; the dispatch then starts nothing and the run ends `interrupted`."""
    task = asyncio.ensure_future(checks)
    stop.inflight.add(task)
    try:
        return await task
    except asyncio.CancelledError:
        if not (stop.requested and task.cancelled()):
            raise
        return []
    finally:
        stop.inflight.discard(task)


async def _preflight_adapters(slots: Sequence[PlannedSlot]) -> list[SetupFailure]:
    """The system under test checked once before dispatch, like the judge (a setup error, exit 3);
    an adapter running its own binary in a sandbox off this host is checked in that sandbox."""
    here: list[PlannedSlot] = []
    elsewhere: list[PlannedSlot] = []
    for slot in slots:
        if slot.adapter is not None:
            (elsewhere if runs_in_sandbox(slot) else here).append(slot)
    failures = await preflight_adapters_in_sandboxes(elsewhere) if elsewhere else []
    adapters = {s.experiment.id: s.adapter for s in here if s.adapter is not None}
    causes = await preflight_adapters(list(adapters.items()))
    evals = evals_by_experiment(here) if causes else {}
    for experiment_id, cause in causes.items():
        adapter = adapters[experiment_id]
        failures.append(SetupFailure(experiment_id, evals[experiment_id], adapter.endpoint or adapter.name, None,
                                     cause, "adapter"))
    return failures


async def _preflight(judge: Grader, slots: Sequence[PlannedSlot]) -> list[SetupFailure]:
    """Each distinct judge endpoint checked once; a failure names every (experiment, its evals) using it."""
    distinct: dict[tuple[Any, ...], JudgeSettings] = {}
    for slot in slots:
        settings = slot.settings.judge
        if settings is not None and judge.resolve_problem(settings) is None:
            distinct.setdefault(_judge_key(settings), settings)
    results = await asyncio.gather(*(judge.preflight(s) for s in distinct.values()))
    failed = {key: r for key, r in zip(distinct, results, strict=True) if r is not None}
    if not failed:
        return []
    by_experiment: dict[tuple[str, tuple[Any, ...]], dict[str, None]] = {}  # eval ids in order, once each
    for slot in slots:
        settings = slot.settings.judge
        if settings is not None and (key := _judge_key(settings)) in failed:
            by_experiment.setdefault((slot.experiment.id, key), {})[slot.eval.id] = None
    return [SetupFailure(experiment_id, tuple(eval_ids), failed[key].endpoint, key[0], failed[key].cause)
            for (experiment_id, key), eval_ids in by_experiment.items()]


def _judge_key(settings: JudgeSettings) -> tuple[Any, ...]:
    """What makes two judges one endpoint to check."""
    return settings.model, settings.base_url, settings.api_key_env


__all__ = ["interruptible", "preflights"]
