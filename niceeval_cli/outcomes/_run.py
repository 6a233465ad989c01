"""A run decided from its sealed rows, and its exit code (cli.md "Exit codes", pure)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from .._errors import ExitCode
from .._states import AttemptState, Derived, EvalKind, GateState
from ._attempt import ScoreAttemptLike
from ._folds import (
    PassRule,
    ScoreCounts,
    count_scores,
    gate_of,
    not_pass_style,
    pass_verdict,
    settled_verdict,
    stored_pass_rule,
)

# ── the run's exit code ──────────────────────────────────────────────────────────────────


class Folded(Protocol):
    """What the exit code reads of one folded pass-style eval (an `EvalFold`, an `EvalDecision`)."""

    @property
    def result(self) -> AttemptState | str: ...


def run_exit_code(
    *,
    pass_folds: Sequence[Folded],
    score_attempts: Sequence[ScoreAttemptLike],
    setup_error: bool,
    interrupted: bool,
) -> ExitCode:
    """cli.md "Exit codes (run)": 130 > 3 > 1 (definite failure) > 5 (could not tell) > 0."""
    if interrupted:
        return ExitCode.INTERRUPTED
    if setup_error:
        return ExitCode.SETUP
    # The distinct raw values first, then each converted once (a group has 4 000 folds).
    fold_results = {AttemptState(r) for r in {f.result for f in pass_folds}}
    states = {AttemptState(s) for s in {a.state for a in score_attempts}}
    gates = {GateState(g) for g in {a.gate for a in score_attempts} if g is not None}
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


class OutcomeRow(ScoreAttemptLike, Protocol):
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
    def pass_rule(self) -> str | float | None: ...


class PassedEvalsRow(Protocol):
    """`evals` pass-style evals, each with `attempts_each` attempts that all passed, under one
    pass rule (the store's `PassedEvals`): counted by `decide_run`, never named."""

    @property
    def pass_rule(self) -> str | float | None: ...
    @property
    def attempts_each(self) -> int: ...
    @property
    def evals(self) -> int: ...


class EvalDecision(NamedTuple):
    """One (experiment, eval[, case]) of a run, folded over its attempts.

    `result`: pass-style → the pass_rule fold (passed | failed | errored); score-style → `failed`
    when a gate failed, `errored` when something could not be decided, else `scored`. A
    NamedTuple, not a dataclass (like `store.OutcomeGroup`): a run of 20 000 evals builds 20 000
    of them, and a frozen dataclass's `__init__` was a third of a shard group's read.
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
    counts: Iterable[int] | None = None,
    per_eval: bool = True,
    passed_evals: Iterable[PassedEvalsRow] = (),
    missing: Mapping[tuple[str, str, str | None], int] | None = None,
) -> RunDecision:
    """The exit code and counts of a run (or of several merged runs) from its sealed rows.

    cli.md "Exit codes (run)": 130 > 3 > 1 (a definite failure) > 5 (something undecided, or
    planned slots not run) > 0. The one place this is decided: the runner, the summary, `view`,
    JUnit, `compare` and `merge` read it.

    `counts`: how many attempts each row stands for (the store's outcome groups: `total`); a row
    of count n decides exactly as n copies of it (a count of 0 as none), without the copies.

    `per_eval=False`: `evals` is left empty, everything else decided the same. The runner reads
    only the verdict and the counts, and keeps the decision to the end of the run: 20 000
    `EvalDecision`s were held there for nobody.

    `passed_evals`: evals counted, not named (other evals than the rows'), each folded as its
    `attempts_each` passed attempts under its rule: deciding a run of 20 000 passing evals folds
    each distinct (attempts, rule) once. They have no ids, so only with `per_eval=False`.

    `missing`: per (experiment, eval, case), planned attempts no row stands for (a shard group's
    slots no shard filled): such a pass-style eval is folded by `settled_verdict` — a failure is
    definite only when the missing attempts could not undo it.
    """
    weights: Iterable[int] = itertools.repeat(1) if counts is None else counts
    state_counts: dict[str, int] = {}
    # Pass-style evals in the order they first came, each as [rule, passed, failed, errored]: one
    # small list per eval, counted in place (a run has 20 000 evals); `odd` holds the first
    # state of each eval that a pass fold refuses.
    pass_evals: dict[tuple[str, str, str | None], list[Any]] = {}
    odd: dict[tuple[str, str, str | None], AttemptState] = {}
    score_rows: dict[tuple[str, str, str | None], list[tuple[OutcomeRow, int]]] = {}
    total = 0
    # Rows repeat few distinct values (a state, a kind, a rule, a gate): each is converted once.
    # A state's entry: the state, its stored text, and where a pass fold counts it (0: refused).
    known_states: dict[object, tuple[AttemptState, str, int]] = {}
    known_rules: dict[object, PassRule] = {}
    known_kinds: dict[object, bool] = {}
    gate_failed_key = str(Derived.GATE_FAILED)
    for row, n in zip(attempts, weights, strict=counts is not None):
        if n <= 0:
            if n < 0:
                raise ValueError(f"an outcome row cannot stand for {n} attempts")
            continue
        total += n
        known = known_states.get(row.state)
        if known is None:
            converted = AttemptState(row.state)
            known = known_states[row.state] = (converted, converted.value, _PASS_SLOT.get(converted, 0))
        state, value, slot = known
        state_counts[value] = state_counts.get(value, 0) + n
        if state is AttemptState.SCORED and row.gate is not None and gate_of(row.gate) is GateState.FAILED:
            state_counts[gate_failed_key] = state_counts.get(gate_failed_key, 0) + n
        key = (row.experiment_id, row.eval_id, row.case_id)
        is_pass = known_kinds.get(row.kind)
        if is_pass is None:
            is_pass = known_kinds[row.kind] = row.kind is EvalKind.PASS or EvalKind(row.kind) is EvalKind.PASS
        if is_pass:
            tally = pass_evals.get(key)
            if tally is None:
                rule = known_rules.get(row.pass_rule)
                if rule is None:
                    rule = known_rules[row.pass_rule] = stored_pass_rule(row.pass_rule, "all")
                tally = pass_evals[key] = [rule, 0, 0, 0]
            if slot:
                tally[slot] += n
            else:
                odd.setdefault(key, state)
        else:
            score_rows.setdefault(key, []).append((row, n))

    evals: list[EvalDecision] = []
    by_result = dict.fromkeys(AttemptState, 0)
    verdicts: dict[tuple[int, int, int, PassRule], AttemptState] = {}
    for counted in passed_evals:
        if per_eval:
            raise ValueError("evals counted without ids cannot be decided per eval (per_eval=False)")
        if counted.evals <= 0 or counted.attempts_each <= 0:
            if counted.evals < 0 or counted.attempts_each < 0:
                raise ValueError(f"counted evals cannot be {counted.evals} of {counted.attempts_each} attempts")
            continue
        n = counted.attempts_each * counted.evals
        total += n
        state_counts[AttemptState.PASSED.value] = state_counts.get(AttemptState.PASSED.value, 0) + n
        fold = (counted.attempts_each, 0, 0, stored_pass_rule(counted.pass_rule, "all"))
        result = verdicts.get(fold)
        if result is None:
            result = verdicts[fold] = pass_verdict(*fold)[0]
        by_result[result] += counted.evals
    new = tuple.__new__  # EvalDecision's own __new__ is a Python frame per eval
    for key, (rule, passed, failed, errored) in pass_evals.items():
        if odd and key in odd:  # the state a fold over the copies meets first and refuses
            raise not_pass_style(odd[key])
        fold = (passed, failed, errored, rule)  # evals mostly share their counts: each decided once
        unsealed = missing.get(key, 0) if missing else 0
        result = verdicts.get(fold) if not unsealed else settled_verdict(passed, failed, errored, unsealed, rule)
        if result is None:
            result = verdicts[fold] = pass_verdict(passed, failed, errored, rule)[0]
        by_result[result] += 1
        if per_eval:
            evals.append(new(EvalDecision, (*key, EvalKind.PASS, result, passed + failed + errored, passed, failed,
                                            errored, rule)))
    failed_evals, errored_pass_evals = by_result[AttemptState.FAILED], by_result[AttemptState.ERRORED]
    # The exit code reads which results the pass folds reached: one of each, not every eval.
    pass_results = [_Reached(result) for result, n in by_result.items() if n]
    score_attempts: list[OutcomeRow] = []
    overall = ScoreCounts()
    for key, rows in score_rows.items():
        scores = count_scores([row for row, _ in rows], [n for _, n in rows])
        overall.add(scores)
        score_attempts.extend(row for row, _ in rows)
        if scores.gate_failed:
            result = AttemptState.FAILED
        elif scores.errored or scores.unrankable or scores.gate_unavailable:
            result = AttemptState.ERRORED
        else:
            result = AttemptState.SCORED
        by_result[result] += 1
        if per_eval:
            evals.append(EvalDecision(*key, EvalKind.SCORE, result, scores.attempts, 0, 0, scores.errored, None))

    undecided = {
        "errored-evals": errored_pass_evals,
        str(AttemptState.ERRORED): overall.errored,
        str(AttemptState.UNRANKABLE): overall.unrankable,
        str(Derived.GATE_UNAVAILABLE): overall.gate_unavailable,
    }
    not_run = max(0, planned - total) if planned is not None else None
    code = run_exit_code(
        pass_folds=pass_results, score_attempts=score_attempts, setup_error=setup_error, interrupted=interrupted,
    )
    if code is ExitCode.OK and (budget_exhausted or not_run):
        code = ExitCode.UNDECIDED  # nothing was decided about the slots that never started
    return RunDecision(
        exit_code=code,
        attempts=total,
        counts=state_counts,
        evals=tuple(evals),
        evals_passed=by_result[AttemptState.PASSED],
        evals_failed=by_result[AttemptState.FAILED],
        evals_errored=by_result[AttemptState.ERRORED],
        evals_scored=by_result[AttemptState.SCORED],
        failed_evals=failed_evals,
        gate_failed=overall.gate_failed,
        undecided={k: n for k, n in undecided.items() if n},
        planned=planned,
        not_run=not_run,
    )


class _Reached(NamedTuple):
    """A result some pass-style eval of the run reached (what `run_exit_code` reads of a fold)."""

    result: AttemptState


# Where a pass fold counts each state in an eval's [rule, passed, failed, errored]; others it refuses.
_PASS_SLOT = {AttemptState.PASSED: 1, AttemptState.FAILED: 2, AttemptState.ERRORED: 3}
