"""Execute one Attempt and seal it into records (the store writes them)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import outcomes
from .._ids import new_id, utc_now_iso
from .._records import AssertionResult, AttemptRecord
from .._redact import redact, safe_json
from .._states import AssertionState, AttemptReason, UnavailableReason
from ..authoring import (
    AdapterContext,
    AdapterFailure,
    AuthoringError,
    ExperimentInfo,
    NoAdapterError,
    Registration,
    StopContinuation,
    TestContext,
    UsageMeter,
    raised_at,
)
from ..expect._core import MatchResult
from ..expect._json import canonical_json
from ._plan import PlannedSlot

EVIDENCE_LIMIT = 64 * 1024

JudgeGrader = Callable[[Registration, Any, Any], Any]


@dataclass
class _Progress:
    """What the attempt reached before it ended; read after a timeout or an interrupt too."""

    ctx: TestContext | None = None
    reason: AttemptReason | None = None
    error: str | None = None
    stop_cause: str | None = None
    registrations: list[Registration] = field(default_factory=list)


async def _body(slot: PlannedSlot, progress: _Progress, adapter_ctx: AdapterContext, usage: UsageMeter,
                grader: JudgeGrader | None, started: float) -> None:
    definition = slot.eval.definition
    adapter = slot.adapter
    try:
        facts = await adapter.create(adapter_ctx) if adapter is not None else None
    except (AuthoringError, asyncio.CancelledError, KeyboardInterrupt):
        raise
    except BaseException as exc:
        progress.reason, progress.error = AttemptReason.ADAPTER_ERROR, _describe(exc)
        return
    ctx = TestContext(
        kind=definition.kind,
        eval_file=str(slot.eval.file),
        experiment=adapter_ctx.experiment,
        adapter=adapter,
        adapter_ctx=adapter_ctx,
        facts=facts,
        usage=usage,
        judge_declared=slot.settings.judge is not None,
        schedule_judge=grader,
        started=started,
        case_id=slot.eval.case.id if slot.eval.case is not None else None,
    )
    progress.ctx = ctx
    progress.registrations = ctx._registrations
    try:
        # A plain `def` test runs on the loop, between other attempts' steps: checks are quick,
        # and a thread hop per attempt would cost more than most tests. Slow I/O belongs in the
        # adapter (plain adapter functions do run in worker threads) or in an `async def` test.
        case = slot.eval.case
        result = definition.test(ctx) if case is None else definition.test(ctx, case.value)
        if inspect.isawaitable(result):
            await result
    except StopContinuation as stop:
        progress.stop_cause = stop.cause
    except AuthoringError as exc:
        progress.reason, progress.error = AttemptReason.AUTHORING_ERROR, str(exc)
    except AdapterFailure as exc:
        progress.reason, progress.error = AttemptReason.ADAPTER_ERROR, str(exc)
    except NoAdapterError as exc:
        progress.reason, progress.error = AttemptReason.NO_ADAPTER, str(exc)
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # SystemExit in eval code too: it must not end the run
        progress.reason, progress.error = AttemptReason.EXCEPTION, _describe(exc)
    pending = [r.pending for r in ctx._registrations if r.pending is not None and not r.pending.done()]
    if pending:  # an attempt seals when all its measurements settle (judge time counts)
        await asyncio.gather(*pending, return_exceptions=True)


def _describe(exc: BaseException) -> str:
    """`KeyError: 'missing' (at evals/x.py:12)`: the exception and where user code raised it."""
    text = f"{type(exc).__name__}: {exc}"
    where = raised_at(exc)
    return f"{text} (at {where})" if where is not None else text


async def execute_attempt(
    slot: PlannedSlot,
    *,
    run_id: str,
    project_root: Path,
    grader: JudgeGrader | None,
    secrets: Sequence[str],
) -> tuple[AttemptRecord, list[AssertionResult]]:
    """Run the slot's test once; always returns sealed records (errored ones included)."""
    attempt_id = new_id()
    started_at = utc_now_iso()
    started = time.monotonic()
    timeout_ms = slot.settings.timeout_ms
    usage = UsageMeter()
    experiment = ExperimentInfo(
        id=slot.experiment.id, model=slot.experiment.model, options=slot.experiment.options
    )
    adapter_ctx = AdapterContext(
        eval_id=slot.eval.id,
        attempt=slot.ordinal,
        experiment=experiment,
        deadline=started + timeout_ms / 1000 if timeout_ms else None,
        _usage=usage,
    )
    progress = _Progress()
    try:
        coro = _body(slot, progress, adapter_ctx, usage, grader, started)
        if timeout_ms:
            await asyncio.wait_for(coro, timeout_ms / 1000)
        else:
            await coro
    except asyncio.TimeoutError:
        progress.reason = AttemptReason.TIMEOUT
        progress.error = f"the attempt exceeded its timeout of {timeout_ms} ms"
    except asyncio.CancelledError:
        progress.reason = AttemptReason.INTERRUPTED
        progress.error = "the run was interrupted while this attempt was in flight"
    except AuthoringError as exc:  # raised by adapter.create through the context
        progress.reason, progress.error = AttemptReason.AUTHORING_ERROR, str(exc)
    ended = time.monotonic()
    if timeout_ms and progress.reason is None and (ended - started) * 1000 > timeout_ms:
        # Finished, but after its deadline (a plain `def` test that blocked cannot be cut short):
        # still over its timeout, and said so; what it registered is kept.
        progress.reason = AttemptReason.TIMEOUT
        progress.error = (
            f"the attempt took {(ended - started) * 1000:.0f} ms, over its timeout of {timeout_ms} ms"
        )
    registrations = list(progress.registrations)
    _settle_unfinished(registrations)
    results = _seal_results(attempt_id, registrations, project_root, secrets)
    execution = outcomes.Execution(reason=progress.reason, error=progress.error, stop_cause=progress.stop_cause)
    decided = outcomes.decide_attempt(slot.eval.definition.kind, results, execution)
    judge_tokens = sum(r.judge_tokens or 0 for r in results)
    record = AttemptRecord(
        id=attempt_id,
        run_id=run_id,
        experiment_id=slot.experiment.id,
        eval_id=slot.eval.id,
        ordinal=slot.ordinal,
        kind=slot.eval.definition.kind,
        state=decided.state,
        reason=decided.reason,
        score=decided.score,
        max_score=decided.max_score,
        unavailable_weight=decided.unavailable_weight,
        partial_score=decided.partial_score,
        gate=decided.gate,
        stop_cause=decided.stop_cause,
        error=redact(progress.error, secrets) if progress.error else None,
        fingerprint=slot.fingerprint,
        fingerprint_parts=slot.fingerprint_json,
        started_at=started_at,
        ended_at=utc_now_iso(),
        duration_ms=round((ended - started) * 1000, 3),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        judge_tokens=judge_tokens,
    )
    return record, results


def _settle_unfinished(registrations: Sequence[Registration]) -> None:
    """Judge calls cut short by a timeout or an interrupt: unknown, never a fabricated score."""
    for reg in registrations:
        if reg.pending is not None and not reg.pending.done():
            reg.pending.cancel()
        if reg.result is None:
            reg.result = MatchResult.unavailable(
                UnavailableReason.CANCELLED, "the measurement was cancelled before it settled"
            )


def _key(reg: Registration, rel_file: str | None, used: dict[str, int]) -> str:
    if reg.key is not None:
        base = reg.key
    elif reg.label is not None:
        base = f"{reg.group}/{reg.label}" if reg.group else reg.label
    else:
        base = f"{rel_file}:{reg.location.line}" if rel_file else f"#{reg.ordinal}"
    n = used.get(base, 0)
    used[base] = n + 1
    return base if n == 0 else f"{base}#{n + 1}"


@functools.lru_cache(maxsize=4096)
def _relative(file: str | None, root: Path) -> str | None:
    if file is None:
        return None
    try:
        return Path(file).resolve().relative_to(root).as_posix()
    except ValueError:
        return file


def _seal_results(
    attempt_id: str, registrations: Sequence[Registration], root: Path, secrets: Sequence[str]
) -> list[AssertionResult]:
    used: dict[str, int] = {}
    results = []
    for reg in registrations:
        result = reg.result
        assert result is not None
        rel_file = _relative(reg.location.file, root)
        role = reg.role
        contribution = outcomes.contribution(role, result.state, reg.weight, result.measurement)
        if reg.judge_evidence is not None:
            evidence: str | None = reg.judge_evidence
        elif reg.evidence is None:
            evidence = None
        else:
            evidence = safe_json(reg.evidence, secrets=secrets, max_bytes=EVIDENCE_LIMIT)
        explanation = redact(result.explanation, secrets) if result.explanation else None
        results.append(AssertionResult(
            id=new_id(),
            attempt_id=attempt_id,
            ordinal=reg.ordinal,
            key=_key(reg, rel_file, used),
            label=reg.label,
            group_name=reg.group,
            role=role,
            weight=reg.weight,
            contribution=contribution,
            state=AssertionState(result.state),
            measurement=result.measurement,
            threshold=result.threshold if result.threshold is not None else reg.threshold,
            reason=str(result.reason) if result.reason is not None else None,
            explanation=explanation,
            match_name=reg.match_name,
            match_config=canonical_json(reg.match_config),
            evidence=evidence,
            source_file=rel_file,
            source_line=reg.location.line,
            or_stop=reg.or_stop,
            match_kind=reg.match_kind,
            judge_audit=reg.judge_audit,
            judge_tokens=reg.judge_tokens,
        ))
    return results
