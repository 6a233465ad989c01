"""`niceeval regrade` (judge-trust.md §2): a sealed run's judge assertions graded again.

A new run of kind `regrade`: every selected attempt with a judge result becomes a new attempt
(`regraded_from` = the original) whose non-judge results are copied, whose judge results are
graded again from their stored inputs through the run's grader seam (the same client, lanes,
rate limits, samples and calibration gate as `run`), and whose verdict is decided again by the
outcome rules. The system under test is never contacted and no eval code runs: everything comes
from the store. An attempt without a judge result is adopted as it is (a `reference` slot, as
`run` reuses one). The original run is never changed.

The judge settings of each attempt are its own frozen ones (its fingerprint's `judge` part)
with the flags given (`--judge-model`, `--judge-base-url`, `--judge-samples`) laid over them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import outcomes
from .._errors import UsageError
from .._fingerprint import canonical_json, digest
from .._ids import new_id, utc_now_iso
from .._records import AssertionResult, AttemptRecord, TurnRecord
from .._redact import note_secrets, redact
from .._selectors import selects_any_experiment, selects_experiment
from .._states import AssertionState, AttemptReason, PlanReason, Relation, RunStatus
from ..config import JudgeSettings
from ..expect import MatchResult, ThresholdedScoreMatch
from ..store import SlotRecord, Store
from ..store.regrades import RegradeSource, is_judge_result
from ..store.rows import AssertionRow, PlanSlot, SlotRow
from ._events import NullEvents, PlanTotals, RunEvents, RunOutcome, SetupFailure
from ._sanitize import clean_sealed, replace_surrogates
from ._sealer import Sealer
from ._stop import Stop

if TYPE_CHECKING:
    from ..judge import Grader
    from ..store.rows import RunRow

#: Judge settings a regrade may change, as (flag, field).
CHANGEABLE = (("--judge-model", "model"), ("--judge-base-url", "base_url"), ("--judge-samples", "samples"))
_STOPPING = frozenset({AssertionState.MISMATCHED, AssertionState.BELOW, AssertionState.UNAVAILABLE,
                       AssertionState.ERRORED})


@dataclass(frozen=True)
class RegradeRequest:
    """What to regrade, and the judge settings to lay over each attempt's own."""

    store_path: Path
    run: str | None  # None: the latest run
    experiments: tuple[str, ...] = ()
    model: str | None = None
    base_url: str | None = None
    samples: int | None = None
    skip_missing: bool = False
    argv: tuple[str, ...] = ()
    version: str = ""
    config_file: str | None = None
    #: The judge client's bound (the project's `[judge] max_concurrency`; None: the default).
    max_concurrency: int | None = None
    #: USD per million tokens by model (`[prices]`), for the judge's estimated cost.
    input_prices: Mapping[str, float] = field(default_factory=dict)
    #: The project's `[stats] confidence`: the intervals of the summary (as `run`'s).
    confidence: float = 0.95

    def overrides(self) -> dict[str, Any]:
        given = {"model": self.model, "base_url": self.base_url, "samples": self.samples}
        return {name: value for name, value in given.items() if value is not None}


@dataclass(frozen=True)
class RegradePlan:
    """What a regrade would do (`--dry` prints it; the regrade itself starts from it)."""

    run: RunRow
    experiments: tuple[str, ...]
    regrade: tuple[SlotRow, ...]  # slots whose attempt is graded again
    adopt: tuple[SlotRow, ...]  # slots whose attempt has no judge result: adopted as it is
    missing: tuple[tuple[SlotRow, str], ...]  # (slot, attempt id) sealed without judge inputs
    changes: tuple[tuple[str, str, str], ...]  # (field, before, after), each distinct change once
    settings: Mapping[str, JudgeSettings]  # original attempt id → the settings it is graded with
    adopted: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)  # adopted attempt id → (state, gate)

    def label(self, slot: SlotRow) -> str:
        return f"{slot.experiment_id} · {slot.eval_id}#{slot.ordinal}"


def plan_regrade(request: RegradeRequest, store: Store) -> RegradePlan:
    """Resolve the run, select its slots and classify each attempt; bad input → UsageError."""
    run = store.resolve_run(request.run)
    slots = store.regrade_slots(run.id)
    present = tuple(dict.fromkeys(s.experiment_id for s in slots))
    for selector in request.experiments:
        if not any(selects_experiment(selector, e) for e in present):
            raise UsageError(
                f"-e {selector}: run {run.id} has no such experiment; its experiments are "
                f"{', '.join(present) or '(none)'} (an exact id, or a group ending in '/')."
            )
    if request.experiments:
        slots = [s for s in slots if selects_any_experiment(request.experiments, s.experiment_id)]
    regrade: list[SlotRow] = []
    adopt: list[SlotRow] = []
    missing: list[tuple[SlotRow, str]] = []
    settings: dict[str, JudgeSettings] = {}
    made: dict[str, JudgeSettings] = {}  # one settings object per distinct original (the client's key)
    changes: dict[tuple[str, str, str], None] = {}
    adopted: dict[str, tuple[Any, Any]] = {}
    for source in store.regrade_sources(slots, transcripts=False):
        if not source.judged:
            adopt.append(source.slot)
            adopted[source.attempt.id] = (source.attempt.state, source.attempt.gate)
            continue
        original = _original_judge(source)
        if source.missing_inputs or original is None:
            missing.append((source.slot, source.attempt.id))
            continue
        key = canonical_json(original)
        if key not in made:
            made[key] = _resolved(original, request)
            for _flag, name in CHANGEABLE:
                before, after = original.get(name, _DEFAULTS[name]), getattr(made[key], name)
                if before != after:
                    changes[(name, str(before), str(after))] = None
        settings[source.attempt.id] = made[key]
        regrade.append(source.slot)
    if missing and not request.skip_missing:
        shown = ", ".join(f"{attempt} ({_label(slot)})" for slot, attempt in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        raise UsageError(
            f"regrade: {len(missing)} attempt(s) of run {run.id} were sealed without their judge inputs "
            f"(by a NiceEval before store schema 9), so they cannot be regraded: {shown}{more}. "
            "Run them again with `niceeval run --rerun-all` to store their inputs, or give --skip-missing "
            "to regrade the others and leave these out."
        )
    if not regrade:
        raise UsageError(f"regrade: run {run.id} has no judge assertion to regrade"
                         + (" in the selected experiments" if request.experiments else "")
                         + (f" ({len(missing)} attempt(s) left out by --skip-missing)" if missing else "")
                         + "; a regrade re-judges the judge assertions of sealed attempts.")
    return RegradePlan(run, present if not request.experiments else tuple(dict.fromkeys(
        s.experiment_id for s in (*regrade, *adopt))), tuple(regrade), tuple(adopt), tuple(missing),
        tuple(changes), settings, adopted)


_DEFAULTS = {name: JudgeSettings.model_fields[name].default for _flag, name in CHANGEABLE}


def _label(slot: SlotRow) -> str:
    return f"{slot.experiment_id} · {slot.eval_id}#{slot.ordinal}"


def _original_judge(source: RegradeSource) -> dict[str, Any] | None:
    """The attempt's frozen judge settings (its fingerprint's `judge` part), or None."""
    try:
        judge = json.loads(source.attempt.fingerprint_parts).get("judge")
    except (ValueError, AttributeError):
        return None
    return judge if isinstance(judge, dict) else None


def _resolved(original: Mapping[str, Any], request: RegradeRequest) -> JudgeSettings:
    """The attempt's own settings with the flags laid over them (a bad flag value → UsageError)."""
    from pydantic import ValidationError

    values = dict(original)
    values.update(request.overrides())
    if request.max_concurrency is not None:
        values["max_concurrency"] = request.max_concurrency
    try:
        return JudgeSettings.model_validate(values)
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = str(problem["loc"][0]) if problem.get("loc") else "?"
        flag = next((f for f, n in CHANGEABLE if n == name), f"the stored judge setting {name}")
        raise UsageError(f"regrade: {flag} {values.get(name)!r}: {problem['msg']}") from None


# ── the regrade ─────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class _Named:
    id: str
    case: Any = None


@dataclass(frozen=True)
class RegradeSlot:
    """A slot of the regrade run as the run's listeners read one (progress, NDJSON, plain lines)."""

    experiment: _Named
    eval: _Named
    ordinal: int
    reuse_attempt_id: str | None = None
    reuse_run_id: str | None = None
    reuse_state: Any = None
    reuse_gate: Any = None
    fingerprint: str | None = None
    changed: tuple[str, ...] = ()

    @property
    def execute(self) -> bool:
        return self.reuse_attempt_id is None

    @property
    def reason(self) -> PlanReason:
        return PlanReason.REGRADE if self.execute else PlanReason.REUSED

    @property
    def label(self) -> str:
        return f"{self.experiment.id} · {self.eval.id}#{self.ordinal}"

    @property
    def shape(self) -> Any:
        return _Shape()


@dataclass(frozen=True)
class _Shape:
    config_only: bool = False


def _listener_slot(slot: SlotRow, *, adopted: bool = False, state: Any = None, gate: Any = None) -> Any:
    return RegradeSlot(_Named(slot.experiment_id), _Named(slot.eval_id), slot.ordinal,
                       reuse_attempt_id=slot.attempt_id if adopted else None,
                       reuse_run_id=slot.run_id if adopted else None, reuse_state=state, reuse_gate=gate)


async def regrade_async(request: RegradeRequest, plan: RegradePlan, store: Store, events: RunEvents | None = None,
                        *, grader: str | None = None) -> RunOutcome:
    """Regrade as planned into `store`; returns the regrade run's outcome (exit codes as `run`)."""
    from .._registry import DEFAULT_GRADER
    from ..judge import Calibrated, create_grader
    from ._calibration import calibration_of

    events = events or NullEvents()
    stop = Stop()
    stop.install()
    judge: Grader = create_grader(grader or DEFAULT_GRADER)
    try:
        calibration = calibration_of(store, plan.settings.values())
        if calibration is not None:
            judge = Calibrated(judge, calibration)
        failures, blocked = await _preflight(judge, plan)
        secrets = _secrets(plan.settings.values())
        run_id = new_id()
        regrading = [s for s in plan.regrade if s.attempt_id not in blocked]
        store.begin_run(
            run_id, started_at=utc_now_iso(), argv=list(request.argv), version=request.version,
            config_file=request.config_file, experiments=list(plan.experiments),
            planned_total=len(plan.regrade) + len(plan.adopt), executor="regrade",
            reference_slots=[SlotRecord(run_id, s.experiment_id, s.eval_id, s.ordinal, s.attempt_id,
                                        Relation.REFERENCE, PlanReason.REUSED, s.pass_rule) for s in plan.adopt],
            plan=[PlanSlot(s.experiment_id, s.eval_id, s.ordinal) for s in plan.regrade],
            regrade_of=plan.run.id,
        )
        events.planned(run_id, [*(_listener_slot(s) for s in plan.regrade),
                                *(_listener_slot(s, adopted=True, state=plan.adopted[str(s.attempt_id)][0],
                                                 gate=plan.adopted[str(s.attempt_id)][1]) for s in plan.adopt)])
        if failures:
            events.setup_failed(run_id, failures)
        worker = _Regrader(request, plan, store, run_id, judge, events, stop, secrets)
        if not await stop.settle():
            await worker.dispatch(regrading)
    finally:
        await judge.aclose()
        stop.uninstall()
    interrupted = await stop.settle()
    status = RunStatus.INTERRUPTED if interrupted else RunStatus.SETUP_ERROR if failures else RunStatus.FINISHED
    planned = len(plan.regrade) + len(plan.adopt)
    read = store.run_outcome_rows(run_id)
    decision = outcomes.decide_run(
        read.groups, counts=[g.total for g in read.groups], planned=planned, setup_error=bool(failures),
        interrupted=interrupted, per_eval=False, passed_evals=read.passed_evals,
    )
    store.finish_run(run_id, status=status, ended_at=utc_now_iso(), exit_code=int(decision.exit_code))
    totals = PlanTotals(planned, len(plan.adopt), {str(PlanReason.REGRADE): len(plan.regrade)}, "default")
    outcome = RunOutcome(
        run_id, str(status), int(decision.exit_code), executed=worker.sealed, reused=len(plan.adopt),
        counts=dict(decision.counts), setup_failures=tuple(failures), planned=planned,
        not_run=decision.not_run or 0, plan=totals, spent_usd=worker.spent_usd, read=read,
    )
    events.finished(outcome)
    return outcome


async def _preflight(judge: Grader, plan: RegradePlan) -> tuple[list[SetupFailure], set[str]]:
    """judge.md's preflight of the new settings, once per (model, base_url, key variable): a refused
    endpoint holds back the attempts it would grade (a setup error, exit 3)."""
    distinct: dict[tuple[Any, ...], JudgeSettings] = {}
    for settings in plan.settings.values():
        if judge.resolve_problem(settings) is None:
            distinct.setdefault((settings.model, settings.base_url, settings.api_key_env), settings)
    found = await asyncio.gather(*(judge.preflight(s) for s in distinct.values()))
    refused = {key: f for key, f in zip(distinct, found, strict=True) if f is not None}
    if not refused:
        return [], set()
    blocked: set[str] = set()
    by_experiment: dict[tuple[str, tuple[Any, ...]], list[str]] = {}
    for slot in plan.regrade:
        settings = plan.settings[str(slot.attempt_id)]
        key = (settings.model, settings.base_url, settings.api_key_env)
        if key in refused:
            blocked.add(str(slot.attempt_id))
            evals = by_experiment.setdefault((slot.experiment_id, key), [])
            if slot.eval_id not in evals:
                evals.append(slot.eval_id)
    failures = [SetupFailure(experiment, tuple(evals), refused[key].endpoint, key[0], refused[key].cause)
                for (experiment, key), evals in by_experiment.items()]
    return failures, blocked


def _secrets(settings: Any) -> list[str]:
    values = [value for each in {id(s): s for s in settings}.values() for value in each.secret_values()]
    note_secrets(values)
    return sorted(set(values))


class _Regrader:
    """Regrades the planned attempts, a bounded number at once, and seals each (group commit)."""

    def __init__(self, request: RegradeRequest, plan: RegradePlan, store: Store, run_id: str, judge: Grader,
                 events: RunEvents, stop: Stop, secrets: Sequence[str]) -> None:
        self.request, self.plan, self.store, self.run_id = request, plan, store, run_id
        self.judge, self.events, self.stop, self.secrets = judge, events, stop, secrets
        self.sealer = Sealer(store)
        self.sealed = 0
        self.spent_usd = 0.0
        bound = max((s.max_concurrency for s in plan.settings.values()), default=8)
        self.limit = asyncio.Semaphore(max(64, 4 * bound))  # attempts in flight; the client bounds requests

    async def dispatch(self, slots: Sequence[SlotRow]) -> None:
        tasks: set[asyncio.Task[None]] = set()
        failed: list[BaseException] = []

        def settle(task: asyncio.Task[None]) -> None:
            tasks.discard(task)
            self.stop.inflight.discard(task)
            self.limit.release()
            if not task.cancelled() and task.exception() is not None:
                failed.append(task.exception())  # type: ignore[arg-type]

        for source in self.store.regrade_sources(slots):
            if self.stop.requested or failed:
                break
            await self.limit.acquire()
            if self.stop.requested or failed:
                self.limit.release()
                break
            task = asyncio.ensure_future(self._one(source))
            tasks.add(task)
            self.stop.inflight.add(task)
            task.add_done_callback(settle)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if failed:  # a bug, or the store refusing a seal: never a silently missing attempt
            raise failed[0]

    async def _one(self, source: RegradeSource) -> None:
        slot = _listener_slot(source.slot)
        self.events.started(self.run_id, slot)
        attempt, results = await regrade_attempt(
            source, self.plan.settings[source.attempt.id], self.judge, self.run_id, self.secrets,
            self.request.input_prices,
        )
        cleaned = clean_sealed(attempt, results)
        record = SlotRecord(self.run_id, attempt.experiment_id, attempt.eval_id, attempt.ordinal, attempt.id,
                            Relation.ORIGIN, PlanReason.REGRADE, source.slot.pass_rule)
        await self.sealer.seal(cleaned.attempt, cleaned.results, record)
        self.sealed += 1
        self.spent_usd += cleaned.attempt.judge_cost_usd or cleaned.attempt.judge_estimated_cost_usd or 0.0
        self.events.sealed(self.run_id, slot, cleaned.attempt, cleaned.results)


async def regrade_attempt(source: RegradeSource, settings: JudgeSettings, judge: Grader, run_id: str,
                          secrets: Sequence[str], input_prices: Mapping[str, float]
                          ) -> tuple[AttemptRecord, list[AssertionResult]]:
    """One attempt regraded: its judge results graded again, the rest copied, its verdict decided."""
    from ..judge import JUDGE_VERSION

    attempt_id = new_id()
    judged = [r for r in source.results if is_judge_result(r)]
    grades = dict(zip((r.id for r in judged), await asyncio.gather(
        *(_regrade_result(r, source.inputs[str(r.judge_input)], settings, judge, secrets) for r in judged)),
        strict=True))
    results: list[AssertionResult] = []
    costs: list[float] = []
    for result in source.results:
        if result.id in grades:
            new, cost = grades[result.id]
            if cost is not None:
                costs.append(cost)
        else:
            new = result
        results.append(dataclasses.replace(new, id=new_id(), attempt_id=attempt_id, judge_input_content=None))
    original = source.attempt
    decided = outcomes.decide_attempt(original.kind, results, _execution(source, results))
    tokens = sum(r.judge_tokens or 0 for r in results)
    price = input_prices.get(settings.model or "")
    parts = json.loads(original.fingerprint_parts)  # stored canonical: plain JSON already
    parts["judge"], parts["judge_version"] = _judge_part(settings), JUDGE_VERSION
    parts_json = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    fields = {f.name: getattr(original, f.name) for f in dataclasses.fields(AttemptRecord)}
    fields.update(
        id=attempt_id, run_id=run_id, state=decided.state, reason=decided.reason, score=decided.score,
        max_score=decided.max_score, unavailable_weight=decided.unavailable_weight,
        partial_score=decided.partial_score, gate=decided.gate, stop_cause=decided.stop_cause,
        error=decided.error, fingerprint=digest(parts_json), fingerprint_parts=parts_json, judge_tokens=tokens,
        judge_cost_usd=math.fsum(costs) if costs else None,
        judge_estimated_cost_usd=tokens * price / 1_000_000 if price is not None and tokens > 0 else None,
        # The first original: regrades of a regrade pair with the run that executed it (judge agreement --between).
        regraded_from=original.regraded_from or original.id, turns=_copied_turns(source.turns, attempt_id),
    )
    return AttemptRecord(**fields), results


_JUDGE_PARTS: dict[int, tuple[JudgeSettings, Any]] = {}


def _judge_part(settings: JudgeSettings) -> Any:
    """The fingerprint's `judge` part of `settings` as plain JSON (made once per settings object)."""
    found = _JUDGE_PARTS.get(id(settings))
    if found is None or found[0] is not settings:
        found = _JUDGE_PARTS[id(settings)] = (settings, json.loads(canonical_json(settings.fingerprint_view())))
    return found[1]


async def _regrade_result(result: AssertionRow, content: str, settings: JudgeSettings, judge: Grader,
                          secrets: Sequence[str]) -> tuple[AssertionResult, float | None]:
    """One judge result graded again from its stored input (as the run's judge glue grades one)."""
    from ..judge import read_judge_input

    stored = read_judge_input(content)
    if stored.unavailable is not None:  # no judge was shown a subject then; none is now
        return result, None
    try:
        graded = await judge.grade(stored.match, stored.subject, settings)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the evaluator's own failure, as the run's glue keeps it
        found = MatchResult(AssertionState.ERRORED, f"{type(exc).__name__}: {exc}", "judge-evaluator-error")
        audit = tokens = agreement = samples = cost = evidence = None
    else:
        found = MatchResult(graded.state, graded.explanation, graded.reason, graded.measurement)
        audit, tokens, agreement, samples = graded.audit, graded.tokens, graded.agreement, graded.samples
        cost, evidence = graded.cost_usd, graded.evidence
    if result.threshold is not None:
        found = ThresholdedScoreMatch(stored.match, result.threshold).apply_threshold(found)
    explanation = redact(replace_surrogates(found.explanation)[0], list(secrets)) if found.explanation else None
    state = AssertionState(found.state)
    reason = None if found.reason is None else str(found.reason)
    contribution = outcomes.contribution(result.role, state, result.weight, found.measurement)
    return dataclasses.replace(
        result, state=state, measurement=found.measurement, reason=reason, explanation=explanation,
        contribution=contribution,
        evidence=evidence if evidence is not None else result.evidence, judge_audit=audit, judge_tokens=tokens,
        agreement=agreement, judge_samples=samples,
    ), cost


def _execution(source: RegradeSource, results: Sequence[AssertionResult]) -> outcomes.Execution:
    """How the original's code ended, as far as a regrade can know it (outcomes.md): its own
    execution reason kept; a stop at a judge's `.or_stop()` the new judge would pass → errored."""
    original = source.attempt
    reason = original.reason if original.reason in {str(r) for r in outcomes.EXECUTION_REASONS} else None
    if reason is not None:
        return outcomes.Execution(AttemptReason(reason), original.error, original.stop_cause)
    if original.stop_cause is None:
        return outcomes.Execution()
    stopper = _stopper(source)
    if stopper is None:
        return outcomes.Execution(stop_cause=original.stop_cause)
    now = next(r for r in results if r.ordinal == stopper.ordinal)
    name = stopper.label or stopper.key or stopper.match_name
    if now.state in _STOPPING:
        return outcomes.Execution(stop_cause=f"{name}: {now.state}")
    return outcomes.Execution(
        AttemptReason.REGRADE_STOPPED_CONTINUATION,
        f"the original attempt stopped at {name}'s .or_stop() ({stopper.state}); the regraded judge says "
        f"{now.state}, so the code after it would have run — a regrade never invents results for code that "
        "did not run (run the eval again for them)",
        original.stop_cause,
    )


def _stopper(source: RegradeSource) -> AssertionRow | None:
    """The judge result whose `.or_stop()` stopped the original continuation, if a judge's did."""
    cause = source.attempt.stop_cause
    candidates = [r for r in source.results if r.or_stop and r.state in _STOPPING
                  and f"{r.label or r.key or r.match_name}: {r.state}" == cause]
    if not candidates:
        return None
    last = max(candidates, key=lambda r: r.ordinal)
    return last if is_judge_result(last) else None


def _copied_turns(turns: Sequence[TurnRecord], attempt_id: str) -> tuple[TurnRecord, ...]:
    """The original's transcript under the new attempt (`view @ATTEMPT` shows what was judged)."""
    return tuple(dataclasses.replace(t, attempt_id=attempt_id, events=tuple(
        dataclasses.replace(e, attempt_id=attempt_id) for e in t.events)) for t in turns)


def regrade(request: RegradeRequest, plan: RegradePlan, events: RunEvents | None = None,
            *, grader: str | None = None) -> RunOutcome:
    """Synchronous entry point (the CLI's): open the store, regrade as planned, close it."""
    with Store.open(request.store_path) as store:
        return asyncio.run(regrade_async(request, plan, store, events, grader=grader))


__all__ = ["CHANGEABLE", "RegradePlan", "RegradeRequest", "RegradeSlot", "plan_regrade", "regrade",
           "regrade_async", "regrade_attempt"]
