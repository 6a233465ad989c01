"""The test context `t`: registers Assertions, talks to the adapter, exposes facts and usage."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import math
import time
import weakref
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from .._states import AssertionState, ErroredReason, EvalKind
from ..expect import (
    BooleanMatch,
    FactUnavailable,
    MatchResult,
    Material,
    NumericMaterial,
    ScoreMatch,
    ThresholdedScoreMatch,
)
from ..expect._facts import unavailable_reason, unwrap  # engine helpers below are not in expect's pinned user API
from ..expect._json import to_jsonable  # the JSON form of a value, as the judge and the store see it
from ..expect._material import ContextMatch, MaterialMatch  # the match kinds t.check tells apart
from ._adapter import RESERVED_NAMES, Adapter, AdapterContext, ExperimentInfo
from ._agent_checks import ScopedChecks, ScopeMatch
from ._errors import AuthoringError, SourceLocation, caller_location, exception_text
from ._pending import PendingTurn, never_awaited
from ._registration import AssertionHandle, Registration
from ._sandbox_api import SandboxMember
from ._session import DEFAULT_SESSION, Session
from ._transcript import keep_bounded_events
from ._turns import Turn
from ._usage import UsageMeter, UsageView

#: Grades a judge ScoreMatch over JSON material; provided by the runner. Must settle `reg` itself.
JudgeScheduler = Callable[[Registration, Any, Any], Coroutine[Any, Any, None]]


class NoAdapterError(Exception):
    """`t.send` with no adapter configured: the Attempt is `errored`, reason `no-adapter`."""


class AdapterFailure(Exception):
    """An exception from the adapter's `create` or `send`: reason `adapter-error`."""


def errored_result(exc: BaseException) -> MatchResult:
    return MatchResult(
        AssertionState.ERRORED, exception_text(exc), ErroredReason.MATCH_ERROR
    )


class TestContext(SandboxMember):
    """`t`: what an eval's test function receives. Private state lives in `_`-prefixed slots."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        kind: EvalKind,
        eval_file: str | None,
        experiment: ExperimentInfo,
        adapter: Adapter | None,
        adapter_ctx: AdapterContext,
        facts: Any,
        usage: UsageMeter,
        judge_declared: bool,
        schedule_judge: JudgeScheduler | None,
        started: float,
        case_id: str | None = None,
        case_metadata: Mapping[str, Any] | None = None,
        tracer: Any = None,
    ) -> None:
        self._tracer = tracer  # `traces = ...` (docs/integrations.md): each send's spans join its turn
        self._kind = kind
        self._case_id = case_id
        self._case_metadata = case_metadata
        self._eval_file = eval_file
        self._experiment = experiment
        self._adapter = adapter
        self._adapter_ctx = adapter_ctx
        self._facts = facts
        self._usage = usage
        self._judge_declared = judge_declared
        self._schedule_judge = schedule_judge
        self._started = started
        self._groups: list[str] = []
        self._registrations: list[Registration] = []
        self._assertion_methods: Mapping[str, Callable[..., Any]] | None = None
        self._turns: list[Turn] = []
        self._sessions: list[Session] = []
        self._session_ids: set[str] = set()
        self._contexts: dict[str, AdapterContext] = {}
        self._pending_sends: list[PendingTurn] = []  # every send started, to find one never awaited
        existing = adapter_ctx.session  # made before `create` ran, so it saw the same session
        if isinstance(existing, Session) and existing._send is None:
            self._default_session = self._adopt(existing)
        else:
            self._default_session = self._open_session(DEFAULT_SESSION, None)
        self._checks = self._scoped(lambda: tuple(self._turns))
        adapter_ctx.session = self._default_session

    # -- read-only views -------------------------------------------------------------------
    @property
    def facts(self) -> Any:
        return self._facts

    @property
    def usage(self) -> UsageView:
        return self._usage.snapshot()

    @property
    def elapsed_ms(self) -> float:
        return (time.monotonic() - self._started) * 1000.0

    @property
    def experiment(self) -> ExperimentInfo:
        return self._experiment

    @property
    def case_id(self) -> str | None:
        """The id of the case this attempt runs (datasets.md); None for an eval without cases."""
        return self._case_id

    @property
    def case_metadata(self) -> Mapping[str, Any] | None:
        """The metadata of the case this attempt runs (`Case(..., metadata=...)`; a promptfoo
        case's assertions); None for an eval without cases or a case without metadata."""
        return self._case_metadata

    def _location(self) -> SourceLocation:
        return caller_location(self._eval_file)

    @contextmanager
    def group(self, name: str) -> Iterator[None]:
        """Prefix the labels of Assertions registered inside (display only)."""
        self._groups.append(str(name))
        try:
            yield
        finally:
            self._groups.pop()

    # -- registration ------------------------------------------------------------------------
    def check(self, *args: Any, **kwargs: Any) -> AssertionHandle:
        """Register one Assertion: `t.check(subject, match)`."""
        if kwargs or len(args) != 2:
            raise AuthoringError(
                f"t.check takes exactly two arguments (subject, match); got {len(args)} positional"
                + (f" and keyword(s) {', '.join(kwargs)}" if kwargs else ""),
                self._location(),
            )
        return self._register(args[0], args[1])

    def _register(self, subject: Any, match: Any) -> AssertionHandle:
        if isinstance(subject, PendingTurn):
            subject._forgotten("there is no turn to check")
        location = self._location()
        if isinstance(match, (ThresholdedScoreMatch, ScoreMatch)):
            is_score, thresholded = True, isinstance(match, ThresholdedScoreMatch)
        elif isinstance(match, BooleanMatch):
            is_score, thresholded = False, False
        else:
            raise AuthoringError(
                f"the second argument of t.check must be a Match from niceeval_cli.expect, got "
                f"{type(match).__name__}",
                location,
            )
        reg = Registration(
            ordinal=len(self._registrations),
            match_name=match.name,
            match_config=match.config,
            match_kind="score" if is_score else "boolean",
            thresholded=thresholded,
            location=location,
            group="/".join(self._groups) or None,
            threshold=match.threshold if isinstance(match, ThresholdedScoreMatch) else None,
        )
        if getattr(match, "is_judge", False):
            if not self._judge_declared:
                raise AuthoringError(
                    f"{match.name} is a judge assertion, but this eval does not declare judge; add "
                    "judge=True (or judge={...}) to define_eval / define_score_eval",
                    location,
                )
            self._registrations.append(reg)
            self._start_judge(reg, subject, match)
            return AssertionHandle(self, reg)
        self._registrations.append(reg)
        try:
            result = match.evaluate(subject) if not is_score else match.measure(subject)
        except FactUnavailable as exc:
            result = MatchResult.unavailable(exc.reason, f"{match.describe()}: {exc}")
        except Exception as exc:  # an exception inside a match is `errored`, never `mismatched`
            result = errored_result(exc)
        reg.result = result
        if isinstance(match, ScopeMatch):
            pointed = ScopeMatch.pointed(result)
            if pointed:
                reg.extras = {"calls": pointed}
        if result.has_evidence:
            reg.evidence = result.evidence
        elif not isinstance(match, (ContextMatch, MaterialMatch)):
            reg.evidence = to_jsonable(subject)
        # else: a match over the adapter's facts that selected nothing storable (e.g. over its
        # capture limits) keeps no evidence: the whole facts object is never stored instead.
        return AssertionHandle(self, reg)

    def _start_judge(self, reg: Registration, subject: Any, match: Any) -> None:
        material = self._judge_material(subject)
        if isinstance(material, MatchResult):
            reg.result = material
            reg.evidence = None
            if isinstance(match, ThresholdedScoreMatch):
                reg.result = match.apply_threshold(material)
            return
        reg.evidence = material
        if self._schedule_judge is None:  # pragma: no cover - the runner always provides one
            raise RuntimeError("judge assertions need the runner")
        reg.pending = asyncio.ensure_future(self._schedule_judge(reg, match, material))

    def _judge_material(self, subject: Any) -> Any:
        """A judge subject: {"input","output"} text, a material match's captured items, or text."""
        judge_material = getattr(subject, "judge_material", None)
        if callable(judge_material):
            try:
                return judge_material(self._facts)
            except FactUnavailable as exc:
                return MatchResult.unavailable(exc.reason)
            except Exception as exc:
                return errored_result(exc)
        reason = unavailable_reason(subject)
        if reason is not None:
            return MatchResult.unavailable(reason)
        value = unwrap(subject)
        if isinstance(value, str):
            return {"output": value}
        if isinstance(value, Material):
            if value.state == "partial":
                return MatchResult.unavailable(value.reason or "material-partial")
            value = list(value.items)
        return to_jsonable(value)

    def score(self, value: Any, weight: float | None = None) -> AssertionHandle:
        """A direct score contribution (score-style evals only)."""
        location = self._location()
        if self._kind is not EvalKind.SCORE:
            raise AuthoringError("t.score(...) is only allowed in a score-style eval (define_score_eval)", location)
        if weight is None:
            if not _finite_non_negative(value):
                raise AuthoringError(
                    f"t.score(v) needs a finite number ≥ 0 (the points earned), got {value!r}; "
                    "for a ratio or an unavailable value use t.score(value, weight=w)",
                    location,
                )
            value, weight = 1.0, float(value)
        elif not _finite_non_negative(weight):
            raise AuthoringError(f"t.score(weight=...) needs a finite number ≥ 0, got {weight!r}", location)
        reg = Registration(
            ordinal=len(self._registrations),
            match_name="score",
            match_config={"weight": float(weight)},
            match_kind="score",
            thresholded=False,
            location=location,
            group="/".join(self._groups) or None,
            direct_score=True,
            weight=float(weight),
        )
        self._registrations.append(reg)
        reg.evidence = to_jsonable(value)
        reg.result = _direct_score_result(value)
        return AssertionHandle(self, reg)

    # -- the system under test ------------------------------------------------------------
    def send(self, message: str, **options: Any) -> PendingTurn:
        """Send one turn through the experiment's adapter (in the default session): `await` it."""
        return self._start_send(self._default_session, message, options)

    def _start_send(self, session: Session, message: str, options: dict[str, Any]) -> PendingTurn:
        """The send as an awaitable that says "await it" (at the eval's line) when it is not."""
        call = "t.send(...)" if session is self._default_session else f"session {session.id!r}.send(...)"
        pending = PendingTurn(self._send_in(session, message, options), self._location(), call)
        self._pending_sends.append(pending)
        return pending

    def _release(self) -> None:
        """The attempt ended and its records are made: let go of what ties its objects into
        reference cycles — `t`'s scoped checks, its sessions and its turns' scopes all point
        back at `t` — so they are freed as soon as nothing holds them, rather than by the
        cyclic collector (which walked them all, a sizeable share of a quick attempt's CPU:
        benchmarks/README.md). Agent assertions and sends made after it say the attempt ended."""
        self._checks.close()
        for session in self._sessions:
            session._detach()
        for turn in self._turns:
            scope = turn.__dict__.get("_scope")
            if scope is not None:
                scope.close()
        self._assertion_methods = None
        self._pending_sends.clear()

    def _never_awaited(self) -> AuthoringError | None:
        """After the test: a send it started and never awaited (nothing was sent)."""
        return never_awaited(self._pending_sends)

    def new_session(self, name: str | None = None) -> Session:
        """Open an independent conversation with the same adapter."""
        if name is not None and not isinstance(name, str):
            raise AuthoringError(f"t.new_session(name=...) needs text, got {name!r}", self._location())
        n = len(self._sessions)
        session_id = name if name and name not in self._session_ids else (
            f"{name}-{n}" if name else f"s{n}"
        )
        return self._open_session(session_id, name)

    @property
    def turns(self) -> tuple[Turn, ...]:
        """Every turn of the attempt, across sessions, in the order they were recorded."""
        return tuple(self._turns)

    @property
    def sessions(self) -> tuple[Session, ...]:
        return tuple(self._sessions)

    def _open_session(self, session_id: str, name: str | None) -> Session:
        return self._adopt(Session(session_id, name))

    def _adopt(self, session: Session) -> Session:
        session._bind(self._start_send, lambda s: self._scoped(lambda: s.turns))
        self._sessions.append(session)
        self._session_ids.add(session.id)
        return session

    def _scoped(self, turns: Callable[[], tuple[Turn, ...]]) -> ScopedChecks:
        return ScopedChecks(turns, self._register, lambda text: AuthoringError(text, self._location()))

    async def _send_in(self, session: Session, message: str, options: dict[str, Any]) -> Turn:
        if self._adapter is None:
            raise NoAdapterError(
                f"t.send needs an adapter, but experiment {self._experiment.id!r} has none; set "
                f"`adapter = ...` in [experiments.{self._experiment.id}] of niceeval.toml "
                "(or define the eval through adapter.define_eval)"
            )
        if not self._adapter.has_send:
            raise AuthoringError(
                f"adapter {self._adapter.name!r} does not implement send, so t.send cannot be used",
                self._location(),
            )
        if not isinstance(message, str):
            raise AuthoringError(f"send(message) needs text, got {type(message).__name__}", self._location())
        started = time.monotonic()
        ctx = self._session_ctx(session)
        await self._sandbox_sent()
        capture = self._tracer.begin() if self._tracer is not None else None
        try:
            if capture is None:
                turn = await self._adapter.send(ctx, message, **options)
            else:
                with capture:  # spans started inside the send (this task's context) are the turn's
                    turn = await self._adapter.send(ctx, message, **options)
                turn = await capture.finish(turn, self._adapter.observes)
        except (AuthoringError, asyncio.CancelledError):
            raise
        except BaseException as exc:  # SystemExit, KeyboardInterrupt too: the adapter's error, as in `create`
            raise AdapterFailure(exception_text(exc)) from exc
        return self._record(session, turn, started)

    def _session_ctx(self, session: Session) -> AdapterContext:
        """The adapter context a session's sends see (one per session, so `ctx.session` is its own)."""
        if session is self._default_session:
            return self._adapter_ctx
        ctx = self._contexts.get(session.id)
        if ctx is None:
            ctx = self._contexts[session.id] = dataclasses.replace(self._adapter_ctx, session=session)
        return ctx

    def _record(self, session: Session, turn: Turn, started: float) -> Turn:
        """A fresh copy of the adapter's turn that knows its place, its events within the bound;
        usage adds to `t.usage`."""
        recorded = copy.copy(turn)  # validated already: a shallow copy, not a re-construction
        if turn.elapsed_ms is None:
            object.__setattr__(recorded, "elapsed_ms", (time.monotonic() - started) * 1000)
        if turn.observed is None:
            observes = self._adapter.observes if self._adapter is not None else frozenset()
            object.__setattr__(recorded, "observed", observes)
        keep_bounded_events(recorded)
        object.__setattr__(recorded, "_ordinal", len(self._turns))
        object.__setattr__(recorded, "_session", weakref.ref(session))  # the session holds the turn
        object.__setattr__(recorded, "_scope", self._scoped(lambda: (recorded,)))
        self._usage.record_turn(recorded.usage)
        self._turns.append(recorded)
        session._record(recorded)
        return recorded

    # -- scoped agent assertions (the scope: every turn so far, all sessions) ------------------
    def succeeded(self) -> AssertionHandle:
        return self._checks.succeeded()  # type: ignore[no-any-return]

    def called_tool(self, match: Any, count: Any = None) -> AssertionHandle:
        return self._checks.called_tool(match, count)  # type: ignore[no-any-return]

    def not_called_tool(self, match: Any) -> AssertionHandle:
        return self._checks.not_called_tool(match)  # type: ignore[no-any-return]

    def tool_order(self, matches: Any) -> AssertionHandle:
        return self._checks.tool_order(matches)  # type: ignore[no-any-return]

    def max_tool_calls(self, n: int) -> AssertionHandle:
        return self._checks.max_tool_calls(n)  # type: ignore[no-any-return]

    def no_failed_actions(self) -> AssertionHandle:
        return self._checks.no_failed_actions()  # type: ignore[no-any-return]

    # -- judge sugar ------------------------------------------------------------------------
    def closed_qa(self, material: Any, question: str, **limits: Any) -> AssertionHandle:
        from ..expect import closed_qa

        return self._register(material, closed_qa(question, **limits))

    def factuality(self, material: Any, reference: str, **limits: Any) -> AssertionHandle:
        from ..expect import factuality

        return self._register(material, factuality(reference, **limits))

    def summarizes(self, material: Any, source: str, **limits: Any) -> AssertionHandle:
        from ..expect import summarizes

        return self._register(material, summarizes(source, **limits))

    # -- adapter assertions as attributes --------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        methods = self._adapter_methods()
        if name in methods:
            return methods[name]
        offered = ", ".join(sorted(methods)) or "none"
        adapter = self._adapter.name if self._adapter is not None else "(no adapter)"
        raise AuthoringError(
            f"t.{name} is not a member of the test context nor an assertion of adapter {adapter!r} "
            f"(it offers: {offered})",
            self._location(),
        )

    def _adapter_methods(self) -> Mapping[str, Callable[..., Any]]:
        if self._assertion_methods is None:
            self._assertion_methods = {}
            if self._adapter is not None:
                self._assertion_methods = self._adapter.assertion_methods(
                    lambda match: self._register(self._facts, match)
                )
        return self._assertion_methods


def _finite_non_negative(x: object) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x) and x >= 0


def _direct_score_result(value: Any) -> MatchResult:
    reason = unavailable_reason(value)
    if reason is not None:
        return MatchResult.unavailable(reason, f"score unavailable: {reason}")
    value = unwrap(value)
    if isinstance(value, NumericMaterial):  # pragma: no cover - unwrap handles available ones
        value = value.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return MatchResult(
            AssertionState.ERRORED, f"t.score value must be a number in [0, 1], got {value!r}",
            ErroredReason.MATCH_ERROR,
        )
    if not math.isfinite(value) or not 0 <= value <= 1:
        return MatchResult(
            AssertionState.ERRORED,
            f"t.score value {value!r} is outside [0, 1] (never clipped)",
            ErroredReason.MATCH_ERROR,
        )
    return MatchResult.measured(float(value), f"{float(value):g} of the weight")


__all__ = ["RESERVED_NAMES", "AdapterFailure", "NoAdapterError", "TestContext"]
