"""A run: select, plan, preflight, dispatch (bounded asyncio), seal, decide the exit code."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import functools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from .. import outcomes
from .._collector import release as release_collector
from .._errors import ExitCode, NiceEvalError, UsageError
from .._ids import new_id, utc_now_iso
from .._records import AssertionResult, AttemptRecord
from .._redact import note_secrets, redact
from .._registry import DEFAULT_GRADER
from .._states import AssertionState, AttemptReason, Relation, RunStatus
from ..authoring import exception_text
from ..config import resolve_max_concurrency
from ..sandbox import cleanup_all
from ..store import SlotRecord, Store
from ._attempt import errored_attempt
from ._calibration import calibration_of
from ._events import NullEvents, PlanTotals, RunEvents, RunOutcome, SetupFailure
from ._executor import (
    DEFAULT_EXECUTOR,
    Executor,
    ExecutorContext,
    SealedAttempt,
    check_executor,
    create_executor,
)
from ._frames import project_traceback
from ._judge_glue import judge_grader
from ._plan import PlannedSlot, RunRequest, plan
from ._plan_rows import Rows, plan_slots, reference_slots, rule_text
from ._preflights import interruptible, preflights
from ._sanitize import clean_sealed, replace_surrogates
from ._sealer import Sealer
from ._shard import ShardLayout, layout_of
from ._spec import JudgeGrader, LiveHandles, SlotSpec, SpecMaker, handles_of
from ._stop import Stop as _Stop
from ._until_decided import UnitIndex, decide_more

if TYPE_CHECKING:
    from ..authoring import Adapter
    from ..judge import Grader

#: Workers start this far apart. Started in the same instant, attempts reach a slow endpoint (a
#: judge) together, its replies come back in one burst, and every next request waits for the
#: whole burst to be processed — a wave that repeats for the rest of the run. Started a
#: millisecond apart, replies come back spread out and each attempt turns around on its own.
#: The spread is capped, so it costs at most 50 ms once per run whatever max_concurrency is.
WORKER_STAGGER_S = 0.001
WORKER_STAGGER_MAX_S = 0.05
_NO_GRADER: Any = object()


class _Dispatcher:
    """The driver: bounded dispatch of the executing slots to an executor; it alone seals,
    tells the audience (events) and keeps the concurrency bounds."""

    def __init__(
        self,
        request: RunRequest,
        store: Store,
        run_id: str,
        events: RunEvents,
        executor: Executor,
        make_spec: Callable[[PlannedSlot], SlotSpec],
        live: Callable[[PlannedSlot], LiveHandles],
        handles: dict[tuple[str, str, int], LiveHandles],
        stop: _Stop,
        secrets: Sequence[str],
    ) -> None:
        self.request = request
        self.store = store
        self.sealer = Sealer(store)
        self.run_id = run_id
        self.events = events
        self.executor = executor
        # A slot's spec and live handles exist only while it runs (`handles` is the executor
        # context's mapping): a 20 000-slot run keeps nothing per attempt in the driver.
        self.make_spec = make_spec
        self.live = live
        self.handles = handles
        self.stop = stop
        self.secrets = secrets
        self.usage_unreported = 0
        self.replaced_code_points = 0
        #: reason → this run's recorded-only results (role `record`) that came back unavailable
        self.unavailable_records: dict[str, int] = {}
        self.spent_usd = 0.0
        self.uncounted = 0  # attempts with no reported or estimated cost: `--budget` cannot count them
        self.budget_hit = False
        self.sealed = 0  # attempts this run executed and sealed (`run.finished.executed`)
        self._sealing: set[asyncio.Future[None]] = set()  # attempts produced, waiting for their seal
        self.fatal: Exception | None = None  # what sealing raised that no attempt can survive
        self._taken = 0  # slots taken from the dispatch queue, in order
        self._skipped: list[int] = []  # positions taken, then left unstarted (stop, budget)
        self._unstarted: list[PlannedSlot] = []  # of every dispatch so far (`--until-decided` makes rounds)

    @property
    def stopping(self) -> bool:
        return self.stop.requested or self.fatal is not None

    def _judge_estimate(self, slot: PlannedSlot, attempt: AttemptRecord) -> float | None:
        """Judge tokens, priced when `[prices]` covers the judge's model (all at the input price:
        a judge's output is a short grade); None when unpriced or no judge tokens were used."""
        judge = slot.settings.judge
        price = self.request.project.prices.get(judge.model) if judge is not None and judge.model else None
        tokens = attempt.judge_tokens
        if price is None or not isinstance(tokens, int) or tokens <= 0:
            return None
        return tokens * price.input_per_mtok / 1_000_000

    def _over_budget(self) -> bool:
        """agents.md: once the run's spend reaches `--budget`, no new attempt is dispatched."""
        budget = self.request.budget_usd
        if budget is not None and self.spent_usd >= budget:
            self.budget_hit = True
        return self.budget_hit

    async def _run_slot(self, slot: PlannedSlot) -> None:
        spec = self.make_spec(slot)
        self.handles[spec.key] = self.live(slot)
        try:
            await self._execute(slot, spec)
        finally:
            del self.handles[spec.key]

    async def _execute(self, slot: PlannedSlot, spec: SlotSpec) -> None:
        self.events.started(self.run_id, slot)
        started_at = utc_now_iso()
        task = asyncio.ensure_future(self.executor.submit(spec))
        self.stop.inflight.add(task)
        try:
            produced = await task
        except asyncio.CancelledError:
            if not (self.stopping and task.cancelled()):
                raise
            # Cancelled before its first step: `attempt.started` was said, so it is sealed
            # `interrupted` (an attempt the audience saw start is never reported "not run").
            produced = SealedAttempt(errored_attempt(
                spec, "the run was interrupted while this attempt was starting", started_at=started_at,
                reason=AttemptReason.INTERRUPTED,
            ), ())
        except Exception as exc:  # the executor's failure costs this attempt, never the run
            produced = SealedAttempt(errored_attempt(
                spec, self._error_text("the executor failed", exc), started_at=started_at,
                traceback=self._traceback(exc),
            ), ())
        finally:
            self.stop.inflight.discard(task)
            self.stop.reclaim()  # eval code may have replaced the Ctrl-C / SIGTERM handlers
        judge_estimate = self._judge_estimate(slot, produced.attempt)
        if judge_estimate is not None:  # stored apart from the system under test's estimate
            produced = dataclasses.replace(
                produced, attempt=dataclasses.replace(produced.attempt, judge_estimated_cost_usd=judge_estimate))
        # Spent as soon as it is known (the budget stops the next dispatch, not the next seal).
        spend = attempt_spend(produced.attempt)
        self.uncounted += spend is None
        self.spent_usd += (spend or 0.0) + (judge_estimate or 0.0)
        # The worker moves on while the attempt waits for its group commit (`_sealer.py`); the
        # audience hears of it once it is sealed, and the run ends only when every one is.
        sealing = asyncio.ensure_future(self._seal_and_tell(slot, spec, produced))
        self._sealing.add(sealing)
        sealing.add_done_callback(self._sealing.discard)

    async def _seal_and_tell(self, slot: PlannedSlot, spec: SlotSpec, produced: SealedAttempt) -> None:
        try:
            attempt, results = await self._seal(slot, spec, produced)
        except Exception as exc:  # the store cannot be written: no further attempt starts
            if self.fatal is None:
                self.fatal = exc
            return
        self.sealed += 1
        self.events.sealed(self.run_id, slot, attempt, results)

    def _error_text(self, doing: str, exc: BaseException) -> str:
        return replace_surrogates(redact(f"{doing}: {exception_text(exc)}", self.secrets))[0]

    def _traceback(self, exc: BaseException) -> str | None:
        text = project_traceback(exc, self.request.project.root)
        return replace_surrogates(redact(text, self.secrets))[0]

    async def _seal(
        self, slot: PlannedSlot, spec: SlotSpec, produced: SealedAttempt
    ) -> tuple[AttemptRecord, Sequence[AssertionResult]]:
        """Clean, then seal (all of the attempt or nothing; attempts that finish together share
        one transaction, `_sealer.py`); whatever sealing raises for this attempt, the attempt
        alone is sealed `errored` (reason `exception`) and the run goes on."""
        try:
            cleaned = clean_sealed(produced.attempt, produced.results, produced.notes, produced.usage_unreported)
            attempt, results = cleaned.attempt, cleaned.results
            await self.sealer.seal(attempt, results, self._slot_record(slot, attempt))
        except Exception as exc:
            if isinstance(exc, NiceEvalError) and exc.exit_code == ExitCode.STORE_UNAVAILABLE:
                raise  # the store cannot be written at all: no errored record would seal either
            attempt = errored_attempt(
                spec, self._error_text("the attempt could not be sealed", exc),
                notes=["sealed as errored: the attempt's records could not be stored as produced"],
                started_at=_plain(produced.attempt.started_at, str),
                duration_ms=_plain(produced.attempt.duration_ms, float) or 0.0,
            )
            results = ()
            await self.sealer.seal(attempt, results, self._slot_record(slot, attempt))
            return attempt, results
        self.usage_unreported += cleaned.usage_unreported
        self.replaced_code_points += cleaned.replaced_code_points
        for result in results:  # no verdict rests on them, so only the summary can say so
            if result.state == AssertionState.UNAVAILABLE and outcomes.recorded_only(
                    attempt.kind, result.role, result.match_kind, result.or_stop):
                reason = result.reason or AssertionState.UNAVAILABLE.value
                self.unavailable_records[reason] = self.unavailable_records.get(reason, 0) + 1
        return attempt, results

    def _slot_record(self, slot: PlannedSlot, attempt: AttemptRecord) -> SlotRecord:
        return SlotRecord(
            run_id=self.run_id,
            experiment_id=slot.experiment.id,
            eval_id=slot.eval.id,
            ordinal=slot.ordinal,
            attempt_id=attempt.id,
            relation=Relation.ORIGIN,
            plan_reason=slot.reason,
            pass_rule=rule_text(slot.settings.pass_rule),
        )

    async def dispatch(self, slots: Sequence[PlannedSlot]) -> None:
        project, overrides = self.request.project, self.request.overrides
        total = overrides.max_concurrency or project.max_concurrency
        per_experiment = {
            slot.experiment.id: asyncio.Semaphore(resolve_max_concurrency(project, slot.experiment, overrides))
            for slot in slots
        }
        queue: Iterator[tuple[int, PlannedSlot]] = iter(enumerate(slots))

        workers = max(1, min(total, len(slots)))
        gap = min(WORKER_STAGGER_S, WORKER_STAGGER_MAX_S / workers)

        async def worker(index: int) -> None:
            if index:
                await asyncio.sleep(index * gap)
            for position, slot in queue:
                self._taken = position + 1
                if self.stopping or self._over_budget():
                    self._skipped.append(position)
                    return
                async with per_experiment[slot.experiment.id]:
                    if self.stopping or self._over_budget():
                        self._skipped.append(position)
                        return
                    await self._run_slot(slot)

        try:
            await asyncio.gather(*(worker(i) for i in range(workers)))
        finally:
            while self._sealing:  # every attempt produced is sealed before the run is decided
                await asyncio.gather(*list(self._sealing), return_exceptions=True)
            skipped = set(self._skipped)
            self._unstarted += [s for i, s in enumerate(slots) if i >= self._taken or i in skipped]
            self._taken, self._skipped = 0, []
        if self.fatal is not None:
            raise self.fatal

    def close(self) -> None:
        """No slot starts any more: the spec maker (which keeps, per eval module, a name for each
        of its globals) must not sit under the end-of-run peak with the dispatcher."""
        self.make_spec = _dispatch_over

    def unstarted(self) -> list[PlannedSlot]:
        """The dispatched slots that never started: left in the queue, or taken and left."""
        return list(self._unstarted)


def _dispatch_over(slot: PlannedSlot) -> NoReturn:
    raise AssertionError(f"slot {slot.eval.id}#{slot.ordinal} taken after the run's dispatch ended")


def attempt_spend(attempt: AttemptRecord) -> float | None:
    """What an attempt cost, reported first, else estimated; None when neither is known (it
    spends nothing the budget can count, and the summary says so)."""
    for value in (attempt.cost_usd, attempt.estimated_cost_usd):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value)
    return None


def _plain(value: Any, kind: type) -> Any:
    """`value` when it is of the plain type a column holds (a hostile record may hold anything)."""
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value if isinstance(value, kind) else None


def _file_order(request: RunRequest, slots: Sequence[PlannedSlot]) -> list[str]:
    """The run's experiments in the niceeval.toml file's order, which every output follows."""
    present = {s.experiment.id for s in slots}
    return [e for e in request.project.experiments if e in present] + sorted(
        present.difference(request.project.experiments))


def _calibration(store: Store, slots: Sequence[PlannedSlot]) -> Any:
    """The calibration gate's figures as the store holds them at the start of the run
    (judge-trust.md §4), when some executing slot's judge turns the gate on; else None."""
    return calibration_of(store, (s.settings.judge for s in slots))


def _check_group(store: Store, layout: ShardLayout) -> None:
    """A group's shards must split one plan the same way: refuse a shard of another plan, or with
    another N, under its id (its slots would be counted against the wrong partition: the group
    would list real results as "not run")."""
    if layout.shard is None:
        return
    plans = store.group_plans(str(layout.group_id))
    counts = sorted({count for _, count in plans if count != layout.shard.count})
    if counts:
        theirs = " and ".join(f"{n} (--shard K/{n})" for n in counts)
        raise UsageError(
            f"--shard {layout.shard.index}/{layout.shard.count}: the store {store.path} already has shards of "
            f"group {layout.group_id} split into {theirs}, not {layout.shard.count}; the shards of one group "
            f"split one plan into the same number of shards — run this one as --shard K/{counts[0]}, or give "
            "another --group (or unset NICEEVAL_RUN_GROUP)."
        )
    others = sorted(d for d, _ in plans if d is not None and d != layout.digest)
    if others and layout.digest is not None:
        raise UsageError(
            f"--group {layout.group_id}: the store {store.path} already has shards of this group planned "
            f"from another plan (plan digest {others[0][:12]}…, this run's is {layout.digest[:12]}…); "
            "shards of one group must select the same evals, experiments and attempts — give another "
            "--group (or unset NICEEVAL_RUN_GROUP)."
        )


def _adapters(slots: Sequence[PlannedSlot]) -> list[Adapter]:
    """The slots' distinct adapters, found shape by shape (a re-run's 20 000 slots share a few)."""
    shapes = {id(s.shape): s.shape for s in slots}
    return list({id(shape.adapter): shape.adapter for shape in shapes.values() if shape.adapter is not None}.values())


def _secrets(slots: Sequence[PlannedSlot]) -> list[str]:
    """Values never stored or printed: judge keys and what adapters read from the environment."""
    judges = {s.settings.judge for s in slots if s.settings.judge is not None}
    values = sorted({value for judge in judges for value in judge.secret_values()})
    adapters = {id(s.adapter): s.adapter for s in slots if s.adapter is not None}
    values += [v for a in adapters.values() for v in a.secrets if v]
    note_secrets(values)  # for the crash report, should this process meet a bug (`_crash`)
    return values


async def run_async(
    request: RunRequest, events: RunEvents | None = None, *, executor: str = DEFAULT_EXECUTOR,
    grader: str = DEFAULT_GRADER,
) -> RunOutcome:
    """Plan, preflight, dispatch and seal one run; returns its outcome (exit code included).
    `executor` and `grader` name the registered kinds that run the attempts and grade judges."""
    events = events or NullEvents()
    stop = _Stop()
    stop.install()  # before the first store write: opening may create the schema
    try:
        return await _run(request, events, stop, executor, grader)
    finally:
        stop.uninstall()
        cleanup_all()  # the last line: a sandbox whose attempt never reached its teardown


async def _run(request: RunRequest, events: RunEvents, stop: _Stop, executor_name: str, grader: str) -> RunOutcome:
    executor_name = request.executor or executor_name
    check_executor(executor_name, request.executor_options)  # before anything is written
    store_path = request.store_path or request.project.store
    store = Store.open(store_path)
    try:
        planned_slots = plan(request, store)
        layout = layout_of(planned_slots, request.shard, request.group_id)
        if layout.group_id is not None:
            _check_group(store, layout)
        slots: Sequence[PlannedSlot] = layout.slots  # not copied: the plan is the run
        if not request.dry:
            store.record_abandoned()  # runs whose process died: recorded by the next writer, never by readers
        totals = PlanTotals.of(slots, request.mode)
        if request.dry:
            events.planned(None, slots)
            outcome = RunOutcome(None, "dry", 0, executed=totals.slots - totals.reused, reused=totals.reused,
                                 dry=True, planned=totals.slots, not_run=0, plan=totals)
            events.finished(outcome)
            return outcome
        run_id = new_id()
        # `--until-decided`: which experiment and eval each unit is, to plan its extra attempts
        index: UnitIndex = {(s.experiment.id, s.eval.id): s for s in slots} \
            if request.until_decided is not None else {}
        reused = [s for s in slots if not s.execute]
        executing = [s for s in slots if s.execute] if reused else slots
        judge: Grader | None = None
        failures: list[SetupFailure] = []
        dispatcher: _Dispatcher | None = None
        if any(s.settings.judge is not None for s in executing):
            from ..judge import create_grader  # the judge's I/O (httpx) only for a run that grades

            judge = create_grader(grader)
        calibration = _calibration(store, executing)
        if judge is not None and calibration is not None:
            from ..judge import Calibrated

            judge = Calibrated(judge, calibration)
        try:
            if not await stop.settle():
                failures = await interruptible(stop, preflights(judge, executing))
            blocked = {(f.experiment_id, e) for f in failures for e in f.eval_ids}
            dispatchable = (
                [s for s in executing if (s.experiment.id, s.eval.id) not in blocked] if blocked else executing
            )
            root = request.project.root
            secrets = _secrets(executing)
            make_spec = SpecMaker(run_id, root, request.project.prices, request.keep_sandbox)
            handles: dict[tuple[str, str, int], LiveHandles] = {}
            context = ExecutorContext(
                project_root=root, secrets=secrets, handles=handles,
                options=request.executor_options, dispatchable=len(dispatchable),
                max_concurrency=request.overrides.max_concurrency or request.project.max_concurrency,
                grader=grader, calibration=calibration,
            )
            # Made before the run is recorded: an executor that cannot start (Ray not installed,
            # no cluster at the address) records no run at all.
            executor = create_executor(executor_name, context)
            graders: dict[int, JudgeGrader | None] = {}  # one grader per distinct judge settings

            def live(slot: PlannedSlot) -> LiveHandles:
                settings = slot.settings.judge
                grader = graders.get(id(settings), _NO_GRADER)
                if grader is _NO_GRADER:
                    grader = graders[id(settings)] = judge_grader(judge, settings)
                return handles_of(slot, grader)  # type: ignore[arg-type]

            try:
                # The run, its reused slots and its full plan in one transaction: no reader ever sees
                # an empty `running` run, and readers can name the planned slots that never ran.
                store.begin_run(
                    run_id, started_at=utc_now_iso(), argv=list(request.argv), version=request.version,
                    config_file=str(request.project.file) if request.project.file else None,
                    experiments=_file_order(request, slots),
                    planned_total=layout.planned_total, plan_digest=layout.digest,
                    shard_index=layout.shard.index if layout.shard else None,
                    shard_count=layout.shard.count if layout.shard else None,
                    group_id=layout.group_id, executor=executor_name, budget_usd=request.budget_usd,
                    reference_slots=Rows(functools.partial(reference_slots, run_id, reused)),
                    # The full plan (every shard's) less the reused slots, written just above.
                    plan=Rows(functools.partial(plan_slots, planned_slots,
                                                 reused if request.shard is not None else None)),
                )
                # The release point (planned and recorded): the full plan (every shard's), its id keys
                # and the evals handed over go, whose slots hold what runs (this shard's are `slots`);
                # what the run keeps is frozen, and the attempts' cycles are collected (`_collector`).
                del planned_slots, layout
                if request.hand_over_evals and isinstance(request.evals, list):
                    request.evals.clear()
                release_collector()
                events.planned(run_id, slots)
                if failures:
                    events.setup_failed(run_id, failures)
                dispatcher = _Dispatcher(request, store, run_id, events, executor, make_spec, live, handles,
                                         stop, secrets)
                del make_spec  # the dispatcher's now, and let go when its dispatch ends
                if not await stop.settle():
                    await dispatcher.dispatch(dispatchable)
                if request.until_decided is not None:
                    totals = totals.plus(await decide_more(
                        request, store, run_id, index, dispatcher, stop.settle))
                dispatcher.close()
            finally:
                await executor.aclose()
        finally:
            if judge is not None:
                await judge.aclose()
            for adapter in _adapters(slots):
                await adapter.aclose()
        interrupted = await stop.settle()
        budget_hit = dispatcher is not None and dispatcher.budget_hit
        status = (
            RunStatus.INTERRUPTED if interrupted
            else RunStatus.SETUP_ERROR if failures
            else RunStatus.BUDGET_EXHAUSTED if budget_hit else RunStatus.FINISHED
        )
        never_started = dispatcher.unstarted() if budget_hit and dispatcher is not None else []
        unstarted = tuple(f"{s.experiment.id} · {s.eval.id}#{s.ordinal}" for s in never_started)
        # An eval some of whose attempts never started is decided only as far as they could not change it.
        missing = Counter((s.experiment.id, s.eval.id, s.eval.case.id if s.eval.case else None) for s in never_started)
        # Executed: attempts this run sealed — not the slots it meant to (a budget or Ctrl-C stops some).
        planned, executed, reused_count = totals.slots, dispatcher.sealed if dispatcher else 0, totals.reused
        # The plan is done with: its slots (20 000, say) must not sit under the end-of-run peak.
        del slots, executing, reused, dispatchable, index
        unsettled = Counter({(e, v): n for (e, v, _), n in missing.items()})  # an eval id names its case
        read = store.run_outcome_rows(run_id, unsettled=unsettled)  # passing so far is not passed
        decision = outcomes.decide_run(
            read.groups, counts=[g.total for g in read.groups], planned=planned, setup_error=bool(failures),
            interrupted=interrupted, budget_exhausted=budget_hit, per_eval=False, passed_evals=read.passed_evals,
            missing=missing,
        )
        code = decision.exit_code
        store.finish_run(run_id, status=status, ended_at=utc_now_iso(), exit_code=int(code))
        outcome = RunOutcome(
            run_id, str(status), int(code), executed=executed, reused=reused_count,
            counts=dict(decision.counts), setup_failures=tuple(failures),
            planned=planned, not_run=decision.not_run or 0, plan=totals,
            usage_unreported=dispatcher.usage_unreported if dispatcher else 0,
            replaced_code_points=dispatcher.replaced_code_points if dispatcher else 0,
            unavailable_records=tuple(sorted(dispatcher.unavailable_records.items())) if dispatcher else (),
            spent_usd=dispatcher.spent_usd if dispatcher else None,
            uncounted=dispatcher.uncounted if dispatcher else 0,
            budget_usd=request.budget_usd,
            unstarted=unstarted,
            missing=unsettled,
            read=read,
        )
        events.finished(outcome)
        return outcome
    finally:
        store.close()


def run(
    request: RunRequest, events: RunEvents | None = None, *, executor: str = DEFAULT_EXECUTOR,
    grader: str = DEFAULT_GRADER,
) -> RunOutcome:
    """Synchronous entry point (the CLI's).

    Plain-function adapters run in worker threads. Unlike `asyncio.run`, this does not
    wait for them at the end: a thread abandoned by a timeout or an interrupt must not hold the
    run open (the CLI exits without waiting for it either).
    """
    workers = max(32, (request.overrides.max_concurrency or request.project.max_concurrency) + 4)
    threads = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="niceeval-worker")
    loop = asyncio.new_event_loop()
    loop.set_default_executor(threads)
    try:
        main = loop.create_task(run_async(request, events, executor=executor, grader=grader))
        while True:
            try:
                return loop.run_until_complete(main)
            except RuntimeError:
                if main.done():
                    raise
                # `asyncio.get_running_loop().stop()` in eval or adapter code stopped the loop
                # under the run: that attempt goes on sealing like the others; the run resumes.
    finally:
        try:
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            threads.shutdown(wait=False, cancel_futures=True)
            loop.close()
