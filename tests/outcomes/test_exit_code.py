"""`niceeval run` exit codes (cli.md, "Exit codes (run)"): 130 > 3 > 1 > 5 > 0."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from niceeval_cli._states import AttemptState, GateState
from niceeval_cli.outcomes import AttemptOutcome, EvalFold, run_exit_code

P, F, E = AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED


def fold(result: AttemptState) -> EvalFold:
    counts = {P: (1, 0, 0), F: (0, 1, 0), E: (0, 0, 1)}[result]
    return EvalFold(result, *counts, pass_rate=1.0 if result is P else 0.0)


def attempt(state: AttemptState, gate: GateState = GateState.NONE) -> AttemptOutcome:
    score = None if state is E else 5.0
    return AttemptOutcome(state, None, score, 10.0, 0.0, None, gate, None)


def code(
    *,
    folds: Sequence[EvalFold] = (),
    attempts: Sequence[AttemptOutcome] = (),
    setup: bool = False,
    interrupted: bool = False,
) -> int:
    return run_exit_code(
        pass_folds=folds, score_attempts=attempts, setup_error=setup, interrupted=interrupted
    )


def test_everything_passed_and_scored_exits_0() -> None:
    assert code(folds=[fold(P)], attempts=[attempt(AttemptState.SCORED, GateState.PASSED)]) == 0
    assert code(attempts=[attempt(AttemptState.SCORED, GateState.NONE)]) == 0


def test_a_low_score_is_not_a_failure() -> None:
    low = AttemptOutcome(AttemptState.SCORED, None, 0.0, 10.0, 0.0, None, GateState.NONE, None)
    assert code(attempts=[low]) == 0


@pytest.mark.parametrize(
    ("folds", "attempts"),
    [
        ([fold(F)], []),
        ([], [attempt(AttemptState.SCORED, GateState.FAILED)]),
        ([], [attempt(AttemptState.UNRANKABLE, GateState.FAILED)]),
        ([], [attempt(E, GateState.FAILED)]),
    ],
)
def test_a_definite_failure_exits_1(folds: list[EvalFold], attempts: list[AttemptOutcome]) -> None:
    assert code(folds=folds, attempts=attempts) == 1


@pytest.mark.parametrize(
    ("folds", "attempts"),
    [
        ([fold(E)], []),
        ([], [attempt(E)]),
        ([], [attempt(AttemptState.UNRANKABLE)]),
        ([], [attempt(AttemptState.SCORED, GateState.UNAVAILABLE)]),
    ],
)
def test_something_undecided_exits_5(folds: list[EvalFold], attempts: list[AttemptOutcome]) -> None:
    assert code(folds=folds, attempts=attempts) == 5


def test_a_failure_outranks_something_undecided() -> None:
    assert code(folds=[fold(E), fold(F)]) == 1
    assert code(folds=[fold(E)], attempts=[attempt(AttemptState.SCORED, GateState.FAILED)]) == 1


def test_setup_error_outranks_failures_and_undecided() -> None:
    assert code(folds=[fold(F), fold(E)], setup=True) == 3
    assert code(setup=True) == 3


def test_interrupted_outranks_everything() -> None:
    assert code(folds=[fold(F), fold(E)], setup=True, interrupted=True) == 130


def test_stored_strings_are_read_too() -> None:
    stored = AttemptOutcome("scored", None, 5.0, 10.0, 0.0, None, "failed", None)  # type: ignore[arg-type]
    assert code(attempts=[stored]) == 1
