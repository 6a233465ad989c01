"""Execute one Attempt and seal it into records (the store writes them)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
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
    Case,
    ExperimentInfo,
    NoAdapterError,
    Price,
    Registration,
    SandboxFiles,
    StopContinuation,
    TestContext,
    UsageMeter,
    exception_text,
    raised_at,
    transcript_records,
)
from ..expect import MatchResult
from ..expect._json import canonical_json  # the engine's JSON form, not in expect's pinned user API
from ..traces import tracer_for
from ._executor import SealedAttempt
from ._extras import extras_json
from ._frames import original, project_frame, project_traceback
from ._sandboxing import AttemptScope, PrepareFailed
from ._sanitize import clean_value, fits_int64, replace_surrogates, usage_note
from ._spec import LiveHandles, SlotSpec

EVIDENCE_LIMIT = 64 * 1024
#: An interrupt during a sandbox's teardown waits this long for it to end before sealing the attempt.
TEARDOWN_GRACE_S = 30.0


class BoundedUsageMeter(UsageMeter):
    """Usage outside SQLite's int64 range is not a count anyone can use: unreported from then
    on (`t.usage` reads `usage-unreported`), and said in the attempt's notes."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[str] = []
        self.dropped = 0
        self._poisoned: set[str] = set()

    def record(self, input_tokens: int | None = None, output_tokens: int | None = None) -> None:
        values = {"input_tokens": input_tokens, "output_tokens": output_tokens}
        for name, value in values.items():
            if value is not None and name not in self._poisoned and not fits_int64(int(value)):
                self.notes.append(usage_note(name, int(value)))
                self.dropped += 1
                self._poisoned.add(name)
        super().record(
            None if "input_tokens" in self._poisoned else input_tokens,
            None if "output_tokens" in self._poisoned else output_tokens,
        )
        if "input_tokens" in self._poisoned:
            self._input = None
        if "output_tokens" in self._poisoned:
            self._output = None
        for name, total in (("input_tokens", self._input), ("output_tokens", self._output)):
            if total is not None and not fits_int64(total):  # a sum that grew out of range
                self.notes.append(usage_note(name, total))
                self.dropped += 1
                self._poisoned.add(name)
                setattr(self, "_input" if name == "input_tokens" else "_output", None)


@dataclass
class _Progress:
    """What the attempt reached before it ended; read after a timeout or an interrupt too."""

    ctx: TestContext | None = None
    reason: AttemptReason | None = None
    error: str | None = None
    stop_cause: str | None = None
    traceback: str | None = None
    registrations: list[Registration] = field(default_factory=list)


async def _body(spec: SlotSpec, live: LiveHandles, progress: _Progress, adapter_ctx: AdapterContext,
                usage: UsageMeter, root: Path, started: float, scope: AttemptScope) -> None:
    definition = live.definition
    adapter = live.adapter
    try:
        box = await scope.open()  # create → template → prepare → baseline (inside the timeout)
    except PrepareFailed as exc:
        progress.reason, progress.error = AttemptReason.SANDBOX_PREPARE_FAILED, str(exc)
        return
    except Exception as exc:
        progress.reason, progress.error = AttemptReason.EXCEPTION, f"the sandbox could not be created: {exc}"
        return
    if box is not None:
        adapter_ctx.sandbox = SandboxFiles(box.workspace, spec.eval_file)
    try:
        facts = await adapter.create(adapter_ctx) if adapter is not None else None
    except AuthoringError:
        raise
    except BaseException as exc:
        if _told_to_stop(exc):
            raise
        progress.reason, progress.error = AttemptReason.ADAPTER_ERROR, _describe(exc, root)
        progress.traceback = project_traceback(exc, root)
        return
    try:
        tracer = tracer_for(live.settings.traces, live.settings.trace_flush_ms)
    except Exception as exc:  # the tracer provider could not take the span processor, the port was refused
        progress.reason, progress.error = AttemptReason.ADAPTER_ERROR, f"traces: {exc}"
        return
    ctx = TestContext(
        tracer=tracer,
        kind=definition.kind,
        eval_file=spec.eval_file,
        experiment=adapter_ctx.experiment,
        adapter=adapter,
        adapter_ctx=adapter_ctx,
        facts=facts,
        usage=usage,
        judge_declared=live.settings.judge is not None,
        schedule_judge=live.grader,
        started=started,
        case_id=spec.case_id,
        case_metadata=_case_metadata(live.case, spec.case_metadata_json),
    )
    progress.ctx = ctx
    progress.registrations = ctx._registrations
    if box is not None:
        ctx._attach_sandbox(box.workspace, box.baseline, ctx._register)
    try:
        # A plain `def` test runs on the loop, between other attempts' steps: checks are quick,
        # and a thread hop per attempt would cost more than most tests. Slow I/O belongs in the
        # adapter (plain adapter functions do run in worker threads) or in an `async def` test.
        if spec.case_id is None:
            result = _test_call(definition.test, ctx)
        else:  # the in-process executor hands the very value over; a remote worker its JSON
            value = live.case.value if live.case is not None else json.loads(spec.case_json or "null")
            result = _test_call(definition.test, ctx, value)
        await result
        forgotten = ctx._never_awaited()
        if forgotten is not None:
            raise forgotten
    except StopContinuation as stop:
        progress.stop_cause = stop.cause
    except AuthoringError as exc:
        progress.reason, progress.error = AttemptReason.AUTHORING_ERROR, str(exc)
    except AdapterFailure as exc:  # with where the adapter's code raised it, like eval code's exceptions
        progress.reason, progress.error = AttemptReason.ADAPTER_ERROR, _describe(exc, root)
        progress.traceback = project_traceback(exc, root)
    except NoAdapterError as exc:
        progress.reason, progress.error = AttemptReason.NO_ADAPTER, str(exc)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt in eval code too: it must not end the run
        if _told_to_stop(exc):
            raise
        progress.reason, progress.error = AttemptReason.EXCEPTION, _describe(exc, root)
        progress.traceback = project_traceback(exc, root)
    pending = [r.pending for r in ctx._registrations if r.pending is not None and not r.pending.done()]
    if pending:  # an attempt seals when all its measurements settle (judge time counts)
        await asyncio.gather(*pending, return_exceptions=True)


async def _test_call(test: Any, *args: Any) -> None:
    """Call the test (and await it when it is `async def`), then give the interpreter back the
    recursion limit it had: `sys.setrecursionlimit(40)` in eval code left NiceEval's own code
    unable to describe the attempt, and the run ended with an internal error (exit 4)."""
    limit = sys.getrecursionlimit()
    try:
        result = test(*args)
        if inspect.isawaitable(result):
            await result
    finally:
        if sys.getrecursionlimit() != limit:
            sys.setrecursionlimit(limit)


def _told_to_stop(exc: BaseException) -> bool:
    """Whether `exc` is the attempt being stopped (Ctrl-C, its timeout, its cancelled Ray task),
    rather than the attempt's own code — the eval, the adapter, a tool handler — raising
    KeyboardInterrupt or CancelledError itself: that is the code's exception, sealed like any
    other, and neither ends the run nor reads `interrupted`. During a run Ctrl-C and SIGTERM
    cancel the attempts' tasks (`_stop.Stop`) and never raise KeyboardInterrupt in them, so only
    a CancelledError while this task is being cancelled is a stop (Python 3.10 cannot tell a
    task's own CancelledError apart: taken as a stop there)."""
    if not isinstance(exc, asyncio.CancelledError):
        return False
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is None or cancelling() > 0


def _config_json(config: Mapping[str, Any]) -> str:
    """A match's configuration as stored: its canonical JSON (one config, one text), kept within
    EVIDENCE_LIMIT like evidence. The expected value is part of it: `equals("x" * 10_000_000)`
    stored 10 MB per attempt, and an int past Python's 4300-digit limit errored the attempt at
    sealing ("the executor failed: ValueError") where the check itself had failed."""
    try:
        text = canonical_json(config)
    except (ValueError, RecursionError, TypeError):
        text = None
    if text is not None and len(text) <= EVIDENCE_LIMIT:
        return text
    return safe_json(config, max_bytes=EVIDENCE_LIMIT)


def _case_metadata(case: Case | None, metadata_json: str | None) -> Mapping[str, Any] | None:
    """`t.case_metadata`: the case's own mapping in process, its JSON copy on a remote worker."""
    if case is not None:
        return case.metadata
    if metadata_json is None:
        return None
    try:
        loaded = json.loads(metadata_json)
    except ValueError:
        return None
    return loaded if isinstance(loaded, Mapping) else None


def _case_value(case_json: str | None, secrets: Sequence[str]) -> str | None:
    """The case value as stored: its canonical JSON, redacted and trimmed at EVIDENCE_LIMIT like
    evidence (a long string ends with a visible marker; the JSON stays valid)."""
    if case_json is None:
        return None
    if len(case_json.encode("utf-8")) <= EVIDENCE_LIMIT and redact(case_json, secrets) == case_json:
        return case_json  # the common case: nothing to trim or redact, no need to decode it again
    return safe_json(json.loads(case_json), secrets=secrets, max_bytes=EVIDENCE_LIMIT)


def _describe(exc: BaseException, root: Path) -> str:
    """`KeyError: 'missing' (at evals/x.py:12)`: the exception and where the project's code raised
    it (the deepest frame inside the project, not json/decoder.py)."""
    shown = original(exc)
    text = exception_text(shown)
    where = project_frame(exc, root) or raised_at(shown)
    return f"{text} (at {where})" if where is not None else text


async def execute_attempt(
    spec: SlotSpec,
    live: LiveHandles,
    *,
    project_root: Path,
    secrets: Sequence[str],
    overlap_teardown: bool = False,
) -> SealedAttempt:
    """Run the slot's test once; always returns records to seal (errored ones included).

    `overlap_teardown`: a container that is not kept is removed in the background while the attempt
    seals and the next one runs; the caller then awaits `sandbox.settle_removals()` before the
    run ends (the in-process executor's `aclose`)."""
    attempt_id = new_id()
    started_at = utc_now_iso()
    started = time.monotonic()
    timeout_ms = live.settings.timeout_ms
    usage = BoundedUsageMeter()
    if spec.price is not None:
        usage.price = Price(**spec.price)  # type: ignore[arg-type]
    experiment = ExperimentInfo(
        id=spec.experiment_id, model=spec.model,
        options=live.options if live.options is not None else MappingProxyType(dict(spec.options)),
    )
    adapter_ctx = AdapterContext(
        eval_id=spec.eval_id,
        attempt=spec.ordinal,
        experiment=experiment,
        deadline=started + timeout_ms / 1000 if timeout_ms else None,
        _usage=usage,
    )
    progress = _Progress()
    scope = AttemptScope(live.settings.sandbox, keep=spec.keep_sandbox, label=attempt_id, about={
        "run": spec.run_id, "attempt": attempt_id, "experiment": spec.experiment_id, "eval": spec.eval_id,
        "ordinal": str(spec.ordinal),
    }, overlap=overlap_teardown)
    try:
        coro = _body(spec, live, progress, adapter_ctx, usage, project_root, started, scope)
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
    notes: list[str] = []
    results = _seal_results(attempt_id, registrations, project_root, secrets, notes)
    execution = outcomes.Execution(reason=progress.reason, error=progress.error, stop_cause=progress.stop_cause)
    decided = outcomes.decide_attempt(spec.kind, results, execution)
    sandbox = await _close_sandbox(scope, str(decided.state), notes)
    judge_tokens = sum(r.judge_tokens or 0 for r in results)
    judge_costs = [r.judge_cost_usd for r in registrations if r.judge_cost_usd is not None]
    record = AttemptRecord(
        **_slot_fields(spec, attempt_id, decided),
        stop_cause=decided.stop_cause,
        error=redact(progress.error, secrets) if progress.error else None,
        started_at=started_at,
        ended_at=utc_now_iso(),
        duration_ms=round((ended - started) * 1000, 3),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        judge_tokens=judge_tokens,
        traceback=redact(progress.traceback, secrets) if progress.traceback else None,
        cost_usd=usage.cost_usd,
        estimated_cost_usd=usage.estimated_cost_usd,
        judge_cost_usd=math.fsum(judge_costs) if judge_costs else None,
        turns=transcript_records(attempt_id, progress.ctx.turns if progress.ctx is not None else (), secrets),
        case_value=_case_value(spec.case_json, secrets),
        case_metadata=_case_value(spec.case_metadata_json, secrets),
        sandbox=sandbox,
    )
    if progress.ctx is not None:
        progress.ctx._release()  # its objects freed now, not by the cyclic collector
    adapter_notes = [redact(note, secrets) for note in adapter_ctx.notes]
    return SealedAttempt(record, tuple(results), (*adapter_notes, *notes, *usage.notes), usage.dropped)


async def _close_sandbox(scope: AttemptScope, state: str, notes: list[str]) -> str | None:
    """Teardown after the verdict (kept per `--keep-sandbox`); a failing teardown is a note, and the
    last-line cleanup of the run still removes what it left.

    The verdict is decided before the teardown starts, so an interrupt (Ctrl-C) arriving during it
    must not cost the attempt: the teardown is let finish (at most `TEARDOWN_GRACE_S`, or until a
    second interrupt) and the attempt is sealed with its real verdict, never dropped as not run."""
    closing = asyncio.ensure_future(scope.close(state))
    try:
        return await asyncio.shield(closing)
    except asyncio.CancelledError:
        uncancel = getattr(asyncio.current_task(), "uncancel", None)  # Python 3.11+
        if uncancel is not None:
            uncancel()  # handled: the attempt goes on to be sealed
        try:
            await asyncio.wait({closing}, timeout=TEARDOWN_GRACE_S)
        except asyncio.CancelledError:  # a second interrupt: stop waiting, the last-line cleanup removes it
            pass
        if not closing.done():
            closing.add_done_callback(_consume)
            notes.append("sandbox teardown interrupted; the run's last-line cleanup removed the sandbox")
            return None
        if closing.cancelled() or closing.exception() is not None:
            notes.append("sandbox teardown interrupted; the run's last-line cleanup removed the sandbox")
            return None
        return closing.result()
    except Exception as exc:
        notes.append(f"sandbox teardown failed: {type(exc).__name__}: {exc}")
        return None


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve an abandoned teardown's outcome, so asyncio never logs it as unretrieved."""
    if not task.cancelled():
        task.exception()


def errored_attempt(spec: SlotSpec, error: str, *, notes: Sequence[str] = (), traceback: str | None = None,
                    started_at: str | None = None, duration_ms: float = 0.0,
                    reason: AttemptReason = AttemptReason.EXCEPTION) -> AttemptRecord:
    """An `errored` attempt (reason `exception`, or the one given) for a slot whose attempt could
    not be run or sealed as produced: the run goes on, and the error says what happened."""
    now = utc_now_iso()
    decided = outcomes.decide_attempt(
        spec.kind, [], outcomes.Execution(reason=reason, error=error)
    )
    return AttemptRecord(
        **_slot_fields(spec, new_id(), decided),
        stop_cause=None,
        error=error,
        started_at=started_at or now,
        ended_at=now,
        duration_ms=duration_ms,
        input_tokens=None,
        output_tokens=None,
        judge_tokens=0,
        traceback=traceback,
        notes=json.dumps(list(notes), ensure_ascii=False) if notes else None,
    )


def _slot_fields(spec: SlotSpec, attempt_id: str, decided: outcomes.AttemptOutcome) -> dict[str, Any]:
    """What every sealed attempt record takes from its slot and its decided outcome."""
    return {
        "id": attempt_id, "run_id": spec.run_id, "experiment_id": spec.experiment_id, "eval_id": spec.eval_id,
        "ordinal": spec.ordinal, "kind": spec.kind, "state": decided.state, "reason": decided.reason,
        "score": decided.score, "max_score": decided.max_score, "unavailable_weight": decided.unavailable_weight,
        "partial_score": decided.partial_score, "gate": decided.gate,
        "fingerprint": spec.fingerprint, "fingerprint_parts": spec.fingerprint_json,
        # Its identity, so history follows the eval whatever its displayed id (errored ones too).
        "case_id": spec.case_id, "eval_module": spec.eval_module, "eval_name": spec.eval_name,
    }


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


def _extras(reg: Registration, secrets: Sequence[str], notes: list[str]) -> str | None:
    try:
        return extras_json(reg, secrets)
    except Exception as exc:  # a source's bug costs its extras, never the attempt
        notes.append(f"extras of {reg.label or f'#{reg.ordinal}'} dropped: {type(exc).__name__}: {exc}")
        return None


def _judge_input(reg: Registration, secrets: Sequence[str]) -> dict[str, str]:
    """The result's judge input fields (its key and content), redacted of the run's secrets too."""
    if reg.judge_input is None:
        return {}
    from ..judge import redacted_input

    found = redacted_input(reg.judge_input, tuple(secrets))
    return {"judge_input": found.sha256, "judge_input_content": found.content}


def _seal_results(
    attempt_id: str, registrations: Sequence[Registration], root: Path, secrets: Sequence[str],
    notes: list[str],
) -> list[AssertionResult]:
    used: dict[str, int] = {}
    results = []
    for reg in registrations:
        result = reg.result
        assert result is not None
        notes.extend(reg.seal_notes)
        rel_file = _relative(reg.location.file, root)
        role = reg.role
        contribution = outcomes.contribution(role, result.state, reg.weight, result.measurement)
        if reg.judge_evidence is not None:
            evidence: str | None = reg.judge_evidence
        elif reg.evidence is None:
            evidence = None
        else:
            # safe_json replaces lone surrogates by U+FFFD itself; count them (only when a U+FFFD
            # shows up, so the usual case pays nothing) so that the attempt's notes say so.
            evidence = safe_json(reg.evidence, secrets=secrets, max_bytes=EVIDENCE_LIMIT)
            if "\ufffd" in evidence:
                n = clean_value(reg.evidence)[1]
                if n:
                    notes.append(f"evidence of {reg.label or f'#{reg.ordinal}'}: {n} code point(s) that cannot "
                                 "be stored as UTF-8 replaced with U+FFFD")
        explanation = None
        if result.explanation:  # redact replaces lone surrogates silently: note them first
            explanation, n = replace_surrogates(result.explanation)
            if n:
                notes.append(f"explanation of {reg.label or f'#{reg.ordinal}'}: {n} code point(s) that cannot "
                             "be stored as UTF-8 replaced with U+FFFD")
            explanation = redact(explanation, secrets)
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
            match_config=_config_json(reg.match_config),
            evidence=evidence,
            source_file=rel_file,
            source_line=reg.location.line,
            or_stop=reg.or_stop,
            match_kind=reg.match_kind,
            judge_audit=reg.judge_audit,
            judge_tokens=reg.judge_tokens,
            extras=_extras(reg, secrets, notes),
            agreement=reg.judge_agreement,
            judge_samples=reg.judge_samples,
            **_judge_input(reg, secrets),
        ))
    return results
