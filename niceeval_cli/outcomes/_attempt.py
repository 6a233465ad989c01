"""One attempt's verdict or score from its assertion results (outcomes.md, pure)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._states import AssertionState, AttemptReason, AttemptState, EvalKind, GateState, Role

# ── vocabulary ───────────────────────────────────────────────────────────────────────────

SCORING_ROLES: frozenset[Role] = frozenset({Role.SCORE, Role.GATE_SCORE})
GATE_ROLES: frozenset[Role] = frozenset({Role.GATE, Role.GATE_SCORE})
# The states in which an entry "falls short": a definite failure when the entry decides.
SHORT_STATES: frozenset[AssertionState] = frozenset({AssertionState.MISMATCHED, AssertionState.BELOW})
_MEASUREMENT_STATES = frozenset({AssertionState.MEASURED, AssertionState.MET, AssertionState.BELOW})
_UNSETTLED_STATES = frozenset({AssertionState.UNAVAILABLE, AssertionState.ERRORED})
# Reasons the execution itself can give; `assertion-errored` / `evidence-unavailable` are decided here.
EXECUTION_REASONS: frozenset[AttemptReason] = frozenset(
    {
        AttemptReason.ADAPTER_ERROR,
        AttemptReason.EXCEPTION,
        AttemptReason.TIMEOUT,
        AttemptReason.AUTHORING_ERROR,
        AttemptReason.NO_ADAPTER,
        AttemptReason.INTERRUPTED,
        AttemptReason.SANDBOX_PREPARE_FAILED,
        AttemptReason.EXECUTOR_LOST,
        # `regrade`: the original's continuation stopped where the new judge would have gone on.
        AttemptReason.REGRADE_STOPPED_CONTINUATION,
    }
)
BOOLEAN_MATCH = "boolean"
SCORE_MATCH = "score"
_MATCH_KINDS = frozenset({BOOLEAN_MATCH, SCORE_MATCH})
_DIGITS = 10  # sums are rounded so 0.1 + 0.2 reads 0.3, not 0.30000000000000004


def is_clean(state: AttemptState | str, gate: GateState | str | None) -> bool:
    """Nothing to look at: passed, or scored with its gate passed or absent (the summary and
    `view` expand every other attempt)."""
    if state == AttemptState.PASSED:
        return True
    return state == AttemptState.SCORED and gate not in (GateState.FAILED, GateState.UNAVAILABLE)


def recorded_only(kind: EvalKind | str, role: Role | str, match_kind: str, or_stop: bool) -> bool:
    """A result no verdict, score or gate rests on: a `record` entry without `or_stop` — except,
    in a pass-style eval, a Boolean assertion, which decides the verdict even ungated (an
    unavailable one errs the attempt, `evidence-unavailable`). Only of these the run summary's
    note "recorded without deciding" speaks; `store.reads.unavailable_records` asks the same in SQL."""
    if Role(role) is not Role.RECORD or or_stop:
        return False
    return not (EvalKind(kind) is EvalKind.PASS and match_kind == BOOLEAN_MATCH)


def _round(x: float) -> float:
    return round(x, _DIGITS) + 0.0  # `+ 0.0` turns -0.0 into 0.0


class EntryLike(Protocol):
    """What outcomes read from one assertion result (`_records.AssertionResult` satisfies it)."""

    @property
    def role(self) -> Role: ...
    @property
    def state(self) -> AssertionState: ...
    @property
    def weight(self) -> float | None: ...
    @property
    def measurement(self) -> float | None: ...
    @property
    def or_stop(self) -> bool: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def label(self) -> str | None: ...
    @property
    def key(self) -> str: ...
    @property
    def match_kind(self) -> str: ...


class ScoreAttemptLike(Protocol):
    """What the score summary and the exit code read from a decided score-style attempt."""

    @property
    def state(self) -> AttemptState | str: ...
    @property
    def score(self) -> float | None: ...
    @property
    def max_score(self) -> float | None: ...
    @property
    def unavailable_weight(self) -> float | None: ...
    @property
    def partial_score(self) -> float | None: ...
    @property
    def gate(self) -> GateState | str | None: ...


@dataclass(frozen=True)
class Execution:
    """How the Attempt's test code ended, as the runner saw it."""

    reason: AttemptReason | None = None  # None = completed normally (a normal or_stop stop included)
    error: str | None = None  # "ValueError: boom" for reason `exception`
    stop_cause: str | None = None  # set when or_stop stopped the continuation

    def __post_init__(self) -> None:
        if self.reason is not None:
            reason = AttemptReason(self.reason)
            if reason not in EXECUTION_REASONS:
                raise ValueError(f"{reason} is decided from the assertion results, not an execution reason")
            object.__setattr__(self, "reason", reason)
        elif self.error is not None:
            raise ValueError("an execution error needs a reason (e.g. exception)")


@dataclass(frozen=True)
class AttemptOutcome:
    """The decided fields of an AttemptRecord (same names as the store's columns)."""

    state: AttemptState
    reason: str | None
    score: float | None
    max_score: float | None
    unavailable_weight: float | None
    partial_score: float | None
    gate: GateState | None  # None for pass-style
    stop_cause: str | None
    error: str | None = None  # the execution's error text, kept when it decided `errored`


# ── one entry ────────────────────────────────────────────────────────────────────────────


def contribution(
    role: Role | str, state: AssertionState | str, weight: float | None, measurement: float | None
) -> float | None:
    """Points one entry earned; None (never 0) when it earned nothing knowable or does not score."""
    role, state = Role(role), AssertionState(state)
    if role not in SCORING_ROLES or state in _UNSETTLED_STATES:
        return None
    if weight is None:
        raise ValueError(f"a {role} entry needs a weight")
    if state is AssertionState.MATCHED:
        return _round(weight)
    if state is AssertionState.MISMATCHED:
        return 0.0
    if measurement is None:
        raise ValueError(f"a {state} entry needs a measurement")
    return _round(measurement * weight)


@dataclass(frozen=True)
class _Entry:
    role: Role
    state: AssertionState
    weight: float | None
    measurement: float | None
    or_stop: bool
    reason: str | None
    boolean: bool

    @staticmethod
    def of(entry: EntryLike) -> _Entry:
        if entry.match_kind not in _MATCH_KINDS:
            raise ValueError(f"match_kind must be one of {sorted(_MATCH_KINDS)}, got {entry.match_kind!r}")
        return _Entry(
            role=Role(entry.role),
            state=AssertionState(entry.state),
            weight=entry.weight,
            measurement=entry.measurement,
            or_stop=bool(entry.or_stop),
            reason=entry.reason,
            boolean=entry.match_kind == BOOLEAN_MATCH,
        )

    @property
    def deciding(self) -> bool:
        """Pass-style: Boolean assertions, gates and or_stop entries decide; the rest is recorded."""
        return self.boolean or self.role in GATE_ROLES or self.or_stop

    @property
    def scoring(self) -> bool:
        return self.role in SCORING_ROLES

    def contribution(self) -> float | None:
        return contribution(self.role, self.state, self.weight, self.measurement)

    def required_weight(self) -> float:
        if self.weight is None:
            raise ValueError(f"a {self.role} entry needs a weight")
        return self.weight


# ── one attempt ──────────────────────────────────────────────────────────────────────────


def decide_attempt(
    kind: EvalKind | str, entries: Sequence[EntryLike], execution: Execution
) -> AttemptOutcome:
    """Decide an Attempt from its sealed assertion results (entries in registration order)."""
    kind = EvalKind(kind)
    items = [_Entry.of(e) for e in entries]
    if kind is EvalKind.PASS:
        return _decide_pass(items, execution)
    return _decide_score(items, execution)


def _errored_reason(items: Sequence[_Entry], execution: Execution) -> tuple[str, str | None] | None:
    """(reason, error) when the Attempt is errored before anything else is considered."""
    if execution.reason is not None:
        return str(execution.reason), execution.error
    if any(e.state is AssertionState.ERRORED for e in items):
        return str(AttemptReason.ASSERTION_ERRORED), None
    return None


def _decide_pass(items: Sequence[_Entry], execution: Execution) -> AttemptOutcome:
    deciding = [e for e in items if e.deciding]
    reason: str | None = None
    error: str | None = None
    errored = _errored_reason(items, execution)
    if errored is not None:
        state = AttemptState.ERRORED
        reason, error = errored
    elif any(e.state in SHORT_STATES for e in deciding):
        state = AttemptState.FAILED
    elif any(e.state is AssertionState.UNAVAILABLE for e in deciding):
        state, reason = AttemptState.ERRORED, str(AttemptReason.EVIDENCE_UNAVAILABLE)
    else:
        state = AttemptState.PASSED
    return AttemptOutcome(
        state=state,
        reason=reason,
        score=None,
        max_score=None,
        unavailable_weight=None,
        partial_score=None,
        gate=None,
        stop_cause=execution.stop_cause,
        error=error,
    )


def _decide_score(items: Sequence[_Entry], execution: Execution) -> AttemptOutcome:
    scoring = [e for e in items if e.scoring]
    earned = _sum(c for c in (e.contribution() for e in scoring) if c is not None)
    max_score = _sum(e.required_weight() for e in scoring)
    unavailable_weight = _sum(e.required_weight() for e in scoring if e.state is AssertionState.UNAVAILABLE)
    blocking = [e for e in items if (e.scoring or e.or_stop) and e.state is AssertionState.UNAVAILABLE]
    gate = _gate([e for e in items if e.role in GATE_ROLES])

    errored = _errored_reason(items, execution)
    if errored is not None:
        return AttemptOutcome(
            state=AttemptState.ERRORED,
            reason=errored[0],
            score=None,
            max_score=max_score,
            unavailable_weight=unavailable_weight,
            partial_score=earned,
            gate=gate,
            stop_cause=execution.stop_cause,
            error=errored[1],
        )
    reason: str | None
    if blocking:
        state, reason = AttemptState.UNRANKABLE, _unavailable_reasons(blocking)
    else:
        state, reason = AttemptState.SCORED, None
    return AttemptOutcome(
        state=state,
        reason=reason,
        score=earned,
        max_score=max_score,
        unavailable_weight=unavailable_weight,
        partial_score=None,
        gate=gate,
        stop_cause=execution.stop_cause,
    )


def _sum(values: Iterable[float]) -> float:
    return _round(math.fsum(values))


def _gate(gates: Sequence[_Entry]) -> GateState:
    """An errored gate entry could not decide, so it reads `unavailable` (never `passed`)."""
    if not gates:
        return GateState.NONE
    if any(e.state in SHORT_STATES for e in gates):
        return GateState.FAILED
    if any(e.state in _UNSETTLED_STATES for e in gates):
        return GateState.UNAVAILABLE
    return GateState.PASSED


def _unavailable_reasons(entries: Sequence[_Entry]) -> str:
    reasons = list(dict.fromkeys(e.reason for e in entries if e.reason))
    return ", ".join(reasons) if reasons else str(AttemptReason.EVIDENCE_UNAVAILABLE)


