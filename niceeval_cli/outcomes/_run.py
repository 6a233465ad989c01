"""A run decided from its sealed rows, and its exit code (cli.md "Exit codes", pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._errors import ExitCode
from .._states import AttemptState, Derived, EvalKind, GateState
from ._attempt import ScoreAttemptLike
from ._folds import EvalFold, PassRule, fold_pass_eval, parse_pass_rule, summarize_scores

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


@dataclass(frozen=True, slots=True)  # one per eval: a run of 20 000 holds 20 000
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
    # Rows repeat few distinct values (a state, a kind, a rule): each is converted once.
    known_states: dict[object, AttemptState] = {}
    known_rules: dict[object, PassRule] = {}
    for row in attempts:
        total += 1
        state = known_states.get(row.state)
        if state is None:
            state = known_states[row.state] = AttemptState(row.state)
        counts[state.value] = counts.get(state.value, 0) + 1
        if state is AttemptState.SCORED and row.gate is not None and GateState(row.gate) is GateState.FAILED:
            counts[str(Derived.GATE_FAILED)] = counts.get(str(Derived.GATE_FAILED), 0) + 1
        key = (row.experiment_id, row.eval_id, row.case_id)
        if row.kind is EvalKind.PASS or EvalKind(row.kind) is EvalKind.PASS:
            states = pass_states.get(key)
            if states is None:
                states = pass_states[key] = []
                rule = known_rules.get(row.pass_rule)
                if rule is None:
                    rule = known_rules[row.pass_rule] = pass_rule_of(row.pass_rule)
                rules[key] = rule
            states.append(state)
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
