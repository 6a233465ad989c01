"""Outcome rules (outcomes.md): assertion results → an Attempt's verdict or score.

Pure functions only. The runner calls `decide_attempt` once when sealing; `view`, `query`,
JUnit and the exit code read what was decided (stored) and never re-decide. The severity
tables below are the one home of the reading order: the Python functions and the SQL CASE
expressions the store sorts by are both built from them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ._errors import ExitCode
from ._states import AssertionState, AttemptReason, AttemptState, Derived, EvalKind, GateState, Role

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
        AttemptReason.EXECUTOR_LOST,
    }
)
BOOLEAN_MATCH = "boolean"
SCORE_MATCH = "score"
_MATCH_KINDS = frozenset({BOOLEAN_MATCH, SCORE_MATCH})
_DIGITS = 10  # sums are rounded so 0.1 + 0.2 reads 0.3, not 0.30000000000000004


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


# ── reading order (one home for Python and SQL) ───────────────────────────────────────────

_ATTEMPT_STATE_SEVERITY: Mapping[AttemptState, int] = {
    AttemptState.ERRORED: 0,
    AttemptState.FAILED: 1,
    AttemptState.UNRANKABLE: 2,
}
_GATE_FAILED_SEVERITY = 3  # a scored attempt whose gate failed (earned points kept)
_ATTEMPT_REST_SEVERITY = 4

_ASSERTION_STATE_SEVERITY: Mapping[AssertionState, int] = {
    AssertionState.ERRORED: 0,
    AssertionState.MISMATCHED: 1,
    AssertionState.BELOW: 1,
    AssertionState.UNAVAILABLE: 2,
}
_ASSERTION_REST_SEVERITY = 3


def attempt_severity(state: AttemptState | str, gate: GateState | str | None) -> int:
    """0 errored, 1 failed, 2 unrankable, 3 scored with gate failed, 4 the rest (worst first)."""
    state = AttemptState(state)
    if state in _ATTEMPT_STATE_SEVERITY:
        return _ATTEMPT_STATE_SEVERITY[state]
    if gate is not None and GateState(gate) is GateState.FAILED:
        return _GATE_FAILED_SEVERITY
    return _ATTEMPT_REST_SEVERITY


def assertion_severity(state: AssertionState | str) -> int:
    """0 errored, 1 mismatched/below, 2 unavailable, 3 the rest (worst first)."""
    return _ASSERTION_STATE_SEVERITY.get(AssertionState(state), _ASSERTION_REST_SEVERITY)


_COLUMN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")


def _column(name: str) -> str:
    if not _COLUMN.fullmatch(name):
        raise ValueError(f"not a column name: {name!r}")
    return name


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def attempt_severity_sql(state_col: str = "state", gate_col: str = "gate") -> str:
    """A SQL CASE expression equal to `attempt_severity` (for the store's ORDER BY)."""
    state_col, gate_col = _column(state_col), _column(gate_col)
    whens = [f"WHEN {state_col} = {_literal(s)} THEN {n}" for s, n in _ATTEMPT_STATE_SEVERITY.items()]
    whens.append(f"WHEN {gate_col} = {_literal(GateState.FAILED)} THEN {_GATE_FAILED_SEVERITY}")
    return f"CASE {' '.join(whens)} ELSE {_ATTEMPT_REST_SEVERITY} END"


def assertion_severity_sql(state_col: str = "state") -> str:
    """A SQL CASE expression equal to `assertion_severity` (for the store's ORDER BY)."""
    state_col = _column(state_col)
    whens = [f"WHEN {state_col} = {_literal(s)} THEN {n}" for s, n in _ASSERTION_STATE_SEVERITY.items()]
    return f"CASE {' '.join(whens)} ELSE {_ASSERTION_REST_SEVERITY} END"


ATTEMPT_SEVERITY_SQL = attempt_severity_sql()
ASSERTION_SEVERITY_SQL = assertion_severity_sql()


# ── several attempts of one eval ─────────────────────────────────────────────────────────

PassRule = Literal["any", "all"] | float


def parse_pass_rule(value: object) -> PassRule:
    """Validate a `pass_rule` setting: "any", "all", or a minimum pass rate in (0, 1]."""
    if value == "any":
        return "any"
    if value == "all":
        return "all"
    if isinstance(value, str):
        hint = " (write the number without quotes)" if _looks_numeric(value) else ""
        raise ValueError(f'pass_rule must be "any", "all" or a number in (0, 1], got {value!r}{hint}')
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f'pass_rule must be "any", "all" or a number in (0, 1], got {value!r}')
    rate = float(value)
    if not 0.0 < rate <= 1.0:  # NaN fails this too
        raise ValueError(f"pass_rule as a minimum pass rate must be in (0, 1], got {value!r}")
    return rate


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class EvalFold:
    """One (experiment, eval) folded over its attempts under a pass_rule."""

    result: AttemptState  # passed | failed | errored
    passed: int
    failed: int
    errored: int
    pass_rate: float | None  # passed / (passed + failed + errored); None with no attempts


_PASS_STATES = frozenset({AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED})


def fold_pass_eval(states: Sequence[AttemptState | str], rule: PassRule) -> EvalFold:
    """Fold pass-style attempt verdicts; with no attempts nothing was decided, so `errored`."""
    rule = parse_pass_rule(rule)
    decided = [AttemptState(s) for s in states]
    for s in decided:
        if s not in _PASS_STATES:
            raise ValueError(f"{s} is not a pass-style attempt state")
    passed = decided.count(AttemptState.PASSED)
    failed = decided.count(AttemptState.FAILED)
    errored = decided.count(AttemptState.ERRORED)
    total = len(decided)
    pass_rate = passed / total if total else None
    if rule == "any":
        ok = passed > 0
    elif rule == "all":
        ok = total > 0 and passed == total
    else:
        ok = pass_rate is not None and pass_rate >= rule
    if ok:
        result = AttemptState.PASSED
    elif failed:
        result = AttemptState.FAILED
    else:
        result = AttemptState.ERRORED
    return EvalFold(result=result, passed=passed, failed=failed, errored=errored, pass_rate=pass_rate)


@dataclass(frozen=True)
class ScoreSummary:
    """Score-style attempts of one scope; totals cover the attempts that have a score."""

    attempts: int
    rankable: int
    unrankable: int
    errored: int
    mean: float | None  # over rankable (`scored`) attempts only
    min: float | None
    max: float | None
    earned: float  # Σ score of scored + unrankable attempts (errored ones have no score)
    max_score: float
    unavailable_weight: float
    gate_failed: int
    gate_unavailable: int


_SCORE_STATES = frozenset({AttemptState.SCORED, AttemptState.UNRANKABLE, AttemptState.ERRORED})


def summarize_scores(
    attempts: Sequence[ScoreAttemptLike], counts: Sequence[int] | None = None
) -> ScoreSummary:
    """Mean/min/max of rankable scores, the counts around them, and the earned/max totals.

    `counts[i]` says how many attempts `attempts[i]` stands for (readers that group identical
    outcomes pass one item per group); default one each.
    """
    weights: Iterable[int] = counts if counts is not None else [1] * len(attempts)
    rankable: list[tuple[float, int]] = []
    counted: list[tuple[ScoreAttemptLike, int]] = []
    total = unrankable = errored = gate_failed = gate_unavailable = 0
    for a, n in zip(attempts, weights, strict=True):
        total += n
        state = AttemptState(a.state)
        if state not in _SCORE_STATES:
            raise ValueError(f"{state} is not a score-style attempt state")
        if state is AttemptState.ERRORED:
            errored += n
        else:
            counted.append((a, n))
            if state is AttemptState.UNRANKABLE:
                unrankable += n
            elif a.score is None:
                raise ValueError("a scored attempt needs a score")
            else:
                rankable.append((a.score, n))
        gate = GateState(a.gate) if a.gate is not None else GateState.NONE
        gate_failed += n if gate is GateState.FAILED else 0
        gate_unavailable += n if gate is GateState.UNAVAILABLE else 0
    ranked = sum(n for _, n in rankable)
    return ScoreSummary(
        attempts=total,
        rankable=ranked,
        unrankable=unrankable,
        errored=errored,
        mean=_round(math.fsum(s * n for s, n in rankable) / ranked) if ranked else None,
        min=min(s for s, _ in rankable) if ranked else None,
        max=max(s for s, _ in rankable) if ranked else None,
        earned=_sum((a.score or 0.0) * n for a, n in counted),
        max_score=_sum((a.max_score or 0.0) * n for a, n in counted),
        unavailable_weight=_sum((a.unavailable_weight or 0.0) * n for a, n in counted),
        gate_failed=gate_failed,
        gate_unavailable=gate_unavailable,
    )


# ── the run's exit code ──────────────────────────────────────────────────────────────────


def run_exit_code(
    *,
    pass_folds: Sequence[EvalFold],
    score_attempts: Sequence[ScoreAttemptLike],
    setup_error: bool,
    interrupted: bool,
) -> ExitCode:
    """cli.md "Exit codes (run)": 130 > 3 > 1 (definite failure) > 5 (could not tell) > 0."""
    if interrupted:
        return ExitCode.INTERRUPTED
    if setup_error:
        return ExitCode.SETUP
    fold_results = {AttemptState(f.result) for f in pass_folds}
    states = {AttemptState(a.state) for a in score_attempts}
    gates = {GateState(a.gate) for a in score_attempts if a.gate is not None}
    if AttemptState.FAILED in fold_results or GateState.FAILED in gates:
        return ExitCode.FAILED
    if (
        AttemptState.ERRORED in fold_results
        or states & {AttemptState.ERRORED, AttemptState.UNRANKABLE}
        or GateState.UNAVAILABLE in gates
    ):
        return ExitCode.UNDECIDED
    return ExitCode.OK


# ── the run decided from its sealed rows ────────────────────────────────────────────────


class OutcomeRow(Protocol):
    """What deciding a run reads of one sealed attempt filling one of its slots (the store's
    attempt row plus the slot's pass_rule; a reused attempt counts for the run that reuses it)."""

    @property
    def experiment_id(self) -> str: ...
    @property
    def eval_id(self) -> str: ...
    @property
    def case_id(self) -> str | None: ...
    @property
    def kind(self) -> EvalKind | str: ...
    @property
    def state(self) -> AttemptState | str: ...
    @property
    def gate(self) -> GateState | str | None: ...
    @property
    def score(self) -> float | None: ...
    @property
    def max_score(self) -> float | None: ...
    @property
    def unavailable_weight(self) -> float | None: ...
    @property
    def partial_score(self) -> float | None: ...
    @property
    def pass_rule(self) -> str | float | None: ...


def pass_rule_of(text: str | float | None) -> PassRule:
    """A slot's stored pass_rule ("any", "all" or the rate as text "0.5"); absent → "all"."""
    if text is None:
        return "all"
    if isinstance(text, str) and text not in ("any", "all"):
        try:
            return parse_pass_rule(float(text))
        except ValueError:
            pass
    return parse_pass_rule(text)


@dataclass(frozen=True)
class EvalDecision:
    """One (experiment, eval[, case]) of a run, folded over its attempts.

    `result`: pass-style → the pass_rule fold (passed | failed | errored); score-style → `failed`
    when a gate failed, `errored` when something could not be decided, else `scored`.
    """

    experiment_id: str
    eval_id: str
    case_id: str | None
    kind: EvalKind
    result: AttemptState
    attempts: int
    passed: int
    failed: int
    errored: int
    pass_rule: PassRule | None  # pass-style only


@dataclass(frozen=True)
class RunDecision:
    """A run's (or a shard group's) verdict, decided from its sealed rows only."""

    exit_code: ExitCode
    attempts: int  # sealed attempts counted (reused included)
    counts: Mapping[str, int]  # attempt state → n, plus `gate-failed` for scored ones
    evals: tuple[EvalDecision, ...]
    evals_passed: int
    evals_failed: int
    evals_errored: int
    evals_scored: int
    failed_evals: int  # definite failures by kind: pass evals failed under their pass rule ...
    gate_failed: int  # ... and score attempts whose gate failed (whatever their state)
    undecided: Mapping[str, int]  # what could not be decided: errored evals, unrankable, ...
    planned: int | None  # slots planned, when known
    not_run: int | None  # planned minus sealed (slots that never started); None when unknown

    @property
    def definite_failures(self) -> int:
        return self.failed_evals + self.gate_failed


def decide_run(
    attempts: Iterable[OutcomeRow],
    *,
    planned: int | None,
    setup_error: bool,
    interrupted: bool,
    budget_exhausted: bool = False,
) -> RunDecision:
    """The exit code and counts of a run (or of several merged runs) from its sealed rows.

    cli.md "Exit codes (run)": 130 > 3 > 1 (a definite failure) > 5 (something undecided, or
    planned slots not run) > 0. The one place this is decided: the runner, the summary, `view`,
    JUnit, `compare` and `merge` read it.
    """
    counts: dict[str, int] = {}
    pass_states: dict[tuple[str, str, str | None], list[AttemptState]] = {}
    rules: dict[tuple[str, str, str | None], PassRule] = {}
    score_rows: dict[tuple[str, str, str | None], list[OutcomeRow]] = {}
    total = 0
    for row in attempts:
        total += 1
        state = AttemptState(row.state)
        gate = GateState(row.gate) if row.gate is not None else None
        counts[str(state)] = counts.get(str(state), 0) + 1
        if state is AttemptState.SCORED and gate is GateState.FAILED:
            counts[str(Derived.GATE_FAILED)] = counts.get(str(Derived.GATE_FAILED), 0) + 1
        key = (row.experiment_id, row.eval_id, row.case_id)
        if EvalKind(row.kind) is EvalKind.PASS:
            pass_states.setdefault(key, []).append(state)
            rules.setdefault(key, pass_rule_of(row.pass_rule))
        else:
            score_rows.setdefault(key, []).append(row)

    evals: list[EvalDecision] = []
    folds: list[EvalFold] = []
    for key, states in pass_states.items():
        fold = fold_pass_eval(states, rules[key])
        folds.append(fold)
        evals.append(EvalDecision(*key, EvalKind.PASS, fold.result, len(states), fold.passed, fold.failed,
                                  fold.errored, rules[key]))
    score_attempts = [row for rows in score_rows.values() for row in rows]
    for key, rows in score_rows.items():
        summary = summarize_scores(rows)
        if summary.gate_failed:
            result = AttemptState.FAILED
        elif summary.errored or summary.unrankable or summary.gate_unavailable:
            result = AttemptState.ERRORED
        else:
            result = AttemptState.SCORED
        evals.append(EvalDecision(*key, EvalKind.SCORE, result, summary.attempts, 0, 0, summary.errored, None))

    by_result = {s: sum(e.result is s for e in evals) for s in AttemptState}
    score_summary = summarize_scores(score_attempts)
    undecided = {
        "errored-evals": sum(e.result is AttemptState.ERRORED for e in evals if e.kind is EvalKind.PASS),
        str(AttemptState.ERRORED): score_summary.errored,
        str(AttemptState.UNRANKABLE): score_summary.unrankable,
        str(Derived.GATE_UNAVAILABLE): score_summary.gate_unavailable,
    }
    not_run = max(0, planned - total) if planned is not None else None
    code = run_exit_code(
        pass_folds=folds, score_attempts=score_attempts, setup_error=setup_error, interrupted=interrupted,
    )
    if code is ExitCode.OK and (budget_exhausted or not_run):
        code = ExitCode.UNDECIDED  # nothing was decided about the slots that never started
    return RunDecision(
        exit_code=code,
        attempts=total,
        counts=counts,
        evals=tuple(evals),
        evals_passed=by_result[AttemptState.PASSED],
        evals_failed=by_result[AttemptState.FAILED],
        evals_errored=by_result[AttemptState.ERRORED],
        evals_scored=by_result[AttemptState.SCORED],
        failed_evals=sum(e.result is AttemptState.FAILED for e in evals if e.kind is EvalKind.PASS),
        gate_failed=score_summary.gate_failed,
        undecided={k: n for k, n in undecided.items() if n},
        planned=planned,
        not_run=not_run,
    )
