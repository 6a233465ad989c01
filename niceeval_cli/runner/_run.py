"""A run: select, plan, preflight, dispatch (bounded asyncio), seal, decide the exit code."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .. import outcomes
from .._ids import new_id, utc_now_iso
from .._states import AssertionState, AttemptState, EvalKind, GateState, PlanReason, Relation, RunStatus
from ..authoring import Registration
from ..config import JudgeSettings, resolve_max_concurrency
from ..expect._core import MatchResult, ThresholdedScoreMatch
from ..store import SlotRecord, Store
from ._attempt import execute_attempt
from ._events import NullEvents, RunEvents, RunOutcome, SetupFailure
from ._plan import PlannedSlot, RunRequest, plan


@dataclass(slots=True)
class _Light:
    """Just what the exit code and totals need of one attempt (kept per slot, not per result)."""

    experiment_id: str
    eval_id: str
    kind: str
    state: str
    gate: str | None
    score: float | None = None
    max_score: float | None = None
    unavailable_weight: float | None = None
    partial_score: float | None = None


#: Workers start this far apart. Started in the same instant, attempts reach a slow endpoint (a
#: judge) together, its replies come back in one burst, and every next request waits for the
#: whole burst to be processed — a wave that repeats for the rest of the run. Started a
#: millisecond apart, replies come back spread out and each attempt turns around on its own.
#: The spread is capped, so it costs at most 50 ms once per run whatever max_concurrency is.
WORKER_STAGGER_S = 0.001
WORKER_STAGGER_MAX_S = 0.05


class _Dispatcher:
    """Bounded asyncio dispatch of the executing slots, with Ctrl-C / SIGTERM handling."""

    def __init__(
        self,
        request: RunRequest,
        store: Store,
        run_id: str,
        events: RunEvents,
        judge: Any,
        secrets: Sequence[str],
    ) -> None:
        self.request = request
        self.store = store
        self.run_id = run_id
        self.events = events
        self.judge = judge
        self.secrets = secrets
        self.stopping = False
        self.inflight: set[asyncio.Future[Any]] = set()
        self.lights: list[_Light] = []

    def interrupt(self) -> None:
        self.stopping = True
        for task in list(self.inflight):
            task.cancel()

    def _grader(self, settings: JudgeSettings | None) -> Any:
        if settings is None or self.judge is None:
            return None
        judge = self.judge

        async def grade(reg: Registration, match: Any, material: Any) -> None:
            inner = match.inner if isinstance(match, ThresholdedScoreMatch) else match
            try:
                graded = await judge.grade(inner, material, settings)
                result = MatchResult(graded.state, graded.explanation, graded.reason, graded.measurement)
                reg.judge_audit, reg.judge_tokens, reg.judge_evidence = (
                    graded.audit, graded.tokens, graded.evidence,
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                result = MatchResult(
                    AssertionState.ERRORED, f"{type(exc).__name__}: {exc}", "judge-evaluator-error"
                )
            if isinstance(match, ThresholdedScoreMatch):
                result = match.apply_threshold(result)
            reg.result = result

        return grade

    async def _run_slot(self, slot: PlannedSlot) -> None:
        self.events.started(self.run_id, slot)
        task = asyncio.ensure_future(execute_attempt(
            slot,
            run_id=self.run_id,
            project_root=self.request.project.root,
            grader=self._grader(slot.settings.judge),
            secrets=self.secrets,
        ))
        self.inflight.add(task)
        try:
            attempt, results = await task
        except asyncio.CancelledError:
            if self.stopping and task.cancelled():
                return  # interrupted before it started: not recorded
            raise
        finally:
            self.inflight.discard(task)
        record = SlotRecord(
            run_id=self.run_id,
            experiment_id=slot.experiment.id,
            eval_id=slot.eval.id,
            ordinal=slot.ordinal,
            attempt_id=attempt.id,
            relation=Relation.ORIGIN,
            plan_reason=slot.reason,
            pass_rule=_rule_text(slot.settings.pass_rule),
        )
        self.store.seal_attempt(attempt, results, record)  # one transaction: the attempt is sealed
        self.lights.append(_Light(
            slot.experiment.id, slot.eval.id, str(attempt.kind), str(attempt.state),
            str(attempt.gate) if attempt.gate is not None else None,
            attempt.score, attempt.max_score, attempt.unavailable_weight, attempt.partial_score,
        ))
        self.events.sealed(self.run_id, slot, attempt, results)

    async def dispatch(self, slots: Sequence[PlannedSlot]) -> None:
        project, overrides = self.request.project, self.request.overrides
        total = overrides.max_concurrency or project.max_concurrency
        per_experiment = {
            slot.experiment.id: asyncio.Semaphore(resolve_max_concurrency(project, slot.experiment, overrides))
            for slot in slots
        }
        queue: Iterator[PlannedSlot] = iter(slots)

        workers = max(1, min(total, len(slots)))
        gap = min(WORKER_STAGGER_S, WORKER_STAGGER_MAX_S / workers)

        async def worker(index: int) -> None:
            if index:
                await asyncio.sleep(index * gap)
            for slot in queue:
                if self.stopping:
                    return
                async with per_experiment[slot.experiment.id]:
                    if self.stopping:
                        return
                    await self._run_slot(slot)

        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.interrupt)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - non-main thread
                pass
        try:
            await asyncio.gather(*(worker(i) for i in range(workers)))
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)


def _rule_text(rule: object) -> str:
    return rule if isinstance(rule, str) else f"{float(rule):g}"  # type: ignore[arg-type]


def _reference_light(slot: PlannedSlot, store: Store) -> _Light:
    row = store.resolve_attempt(slot.reuse_attempt_id or "")
    return _Light(
        slot.experiment.id, slot.eval.id, str(row.kind), str(row.state),
        str(row.gate) if row.gate is not None else None,
        row.score, row.max_score, row.unavailable_weight, row.partial_score,
    )


def _exit_code(lights: Sequence[_Light], slots: Sequence[PlannedSlot], *, setup_error: bool,
               interrupted: bool) -> int:
    rules = {(s.experiment.id, s.eval.id): s.settings.pass_rule for s in slots}
    pass_states: dict[tuple[str, str], list[str]] = {}
    score_attempts = []
    for light in lights:
        if light.kind == EvalKind.PASS:
            pass_states.setdefault((light.experiment_id, light.eval_id), []).append(light.state)
        else:
            score_attempts.append(light)
    folds = [
        outcomes.fold_pass_eval(states, outcomes.parse_pass_rule(rules[key]))
        for key, states in pass_states.items()
    ]
    return outcomes.run_exit_code(
        pass_folds=folds, score_attempts=score_attempts, setup_error=setup_error, interrupted=interrupted,
    )


def _counts(lights: Sequence[_Light]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for light in lights:
        counts[light.state] = counts.get(light.state, 0) + 1
        if light.state == AttemptState.SCORED and light.gate == GateState.FAILED:
            counts["gate-failed"] = counts.get("gate-failed", 0) + 1
    return counts


def _secrets(slots: Sequence[PlannedSlot]) -> list[str]:
    """Values never stored or printed: judge keys and what adapters read from the environment."""
    names = {s.settings.judge.api_key_env for s in slots if s.settings.judge is not None}
    values = [value for name in sorted(names) if (value := os.environ.get(name))]
    adapters = {id(s.adapter): s.adapter for s in slots if s.adapter is not None}
    values += [v for a in adapters.values() for v in getattr(a, "secrets", ()) if v]
    return values


async def _preflight(judge: Any, slots: Sequence[PlannedSlot]) -> list[SetupFailure]:
    distinct: dict[tuple[Any, ...], JudgeSettings] = {}
    for slot in slots:
        settings = slot.settings.judge
        if settings is not None and judge.resolve_problem(settings) is None:
            distinct.setdefault((settings.model, settings.base_url, settings.api_key_env), settings)
    results = await asyncio.gather(*(judge.preflight(s) for s in distinct.values()))
    failed = {key: r for key, r in zip(distinct, results, strict=True) if r is not None}
    failures = []
    by_experiment: dict[tuple[str, tuple[Any, ...]], list[str]] = {}
    for slot in slots:
        settings = slot.settings.judge
        if settings is None:
            continue
        key = (settings.model, settings.base_url, settings.api_key_env)
        if key in failed and slot.eval.id not in by_experiment.setdefault((slot.experiment.id, key), []):
            by_experiment[(slot.experiment.id, key)].append(slot.eval.id)
    for (experiment_id, key), eval_ids in by_experiment.items():
        failure = failed[key]
        failures.append(SetupFailure(experiment_id, tuple(eval_ids), failure.endpoint, key[0], failure.cause))
    return failures


async def run_async(request: RunRequest, events: RunEvents | None = None) -> RunOutcome:
    """Plan, preflight, dispatch and seal one run; returns its outcome (exit code included)."""
    events = events or NullEvents()
    store_path = request.store_path or request.project.store
    store = Store.open(store_path)
    try:
        slots = plan(request, store)
        if request.dry:
            events.planned(None, slots)
            outcome = RunOutcome(None, "dry", 0, executed=sum(s.execute for s in slots),
                                 reused=sum(not s.execute for s in slots), dry=True)
            events.finished(outcome)
            return outcome
        run_id = new_id()
        executing = [s for s in slots if s.execute]
        reused = [s for s in slots if not s.execute]
        judge = None
        if any(s.settings.judge is not None for s in executing):
            from ..judge import JudgeService

            judge = JudgeService()
        try:
            failures = await _preflight(judge, executing) if judge is not None else []
            blocked = {(f.experiment_id, e) for f in failures for e in f.eval_ids}
            dispatchable = [s for s in executing if (s.experiment.id, s.eval.id) not in blocked]
            store.begin_run(
                run_id, started_at=utc_now_iso(), argv=list(request.argv), version=request.version,
                config_file=str(request.project.file) if request.project.file else None,
                experiments=sorted({s.experiment.id for s in slots}),
            )
            store.add_reference_slots([
                SlotRecord(run_id, s.experiment.id, s.eval.id, s.ordinal, s.reuse_attempt_id,
                           Relation.REFERENCE, PlanReason.REUSED, _rule_text(s.settings.pass_rule))
                for s in reused
            ])
            events.planned(run_id, slots)
            if failures:
                events.setup_failed(run_id, failures)
            dispatcher = _Dispatcher(request, store, run_id, events, judge, _secrets(executing))
            dispatcher.lights.extend(_reference_light(s, store) for s in reused)
            await dispatcher.dispatch(dispatchable)
        finally:
            if judge is not None:
                await judge.aclose()
            for adapter in {id(s.adapter): s.adapter for s in slots if s.adapter is not None}.values():
                await adapter.aclose()
        interrupted = dispatcher.stopping
        status = (
            RunStatus.INTERRUPTED if interrupted
            else RunStatus.SETUP_ERROR if failures else RunStatus.FINISHED
        )
        code = _exit_code(dispatcher.lights, slots, setup_error=bool(failures), interrupted=interrupted)
        store.finish_run(run_id, status=status, ended_at=utc_now_iso(), exit_code=code)
        outcome = RunOutcome(
            run_id, str(status), code, executed=len(dispatchable), reused=len(reused),
            counts=_counts(dispatcher.lights), setup_failures=tuple(failures),
        )
        events.finished(outcome)
        return outcome
    finally:
        store.close()


def run(request: RunRequest, events: RunEvents | None = None) -> RunOutcome:
    """Synchronous entry point (the CLI's).

    Plain-function adapters run in worker threads. Unlike `asyncio.run`, this does not
    wait for them at the end: a thread abandoned by a timeout or an interrupt must not hold the
    run open (the CLI exits without waiting for it either).
    """
    workers = max(32, (request.overrides.max_concurrency or request.project.max_concurrency) + 4)
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="niceeval-worker")
    loop = asyncio.new_event_loop()
    loop.set_default_executor(executor)
    try:
        return loop.run_until_complete(run_async(request, events))
    finally:
        try:
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
            loop.close()
