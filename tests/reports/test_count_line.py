"""Issue 9.14: the count line names the definite failures behind exit 1, even when the attempt
whose gate failed is itself unrankable (its word is "unrankable", its gate still failed)."""

from __future__ import annotations

from niceeval_cli._states import AttemptState, GateState
from tests.support.view_builders import Runs, render


def test_a_failed_gate_on_an_unrankable_attempt_is_named_as_the_cause_of_exit_1(runs: Runs) -> None:
    run = runs.begin()
    runs.seal(runs.attempt(run, "s/partial", AttemptState.UNRANKABLE, score=5.0, max_score=10.0,
                           unavailable_weight=5.0, gate=GateState.FAILED))
    runs.seal(runs.attempt(run, "e/ok", AttemptState.PASSED))
    runs.finish(run, 1)
    head = render(runs.path).splitlines()[0]
    assert head.endswith("exit 1 (a definite failure: 1 gate failed)")


def test_exit_5_names_what_could_not_be_decided(runs: Runs) -> None:
    run = runs.begin()
    runs.seal(runs.attempt(run, "s/partial", AttemptState.UNRANKABLE, score=5.0, max_score=10.0,
                           unavailable_weight=5.0, gate=GateState.PASSED))
    runs.seal(runs.attempt(run, "e/crash", AttemptState.ERRORED, reason="exception"))
    runs.finish(run, 5)
    head = render(runs.path).splitlines()[0]
    assert head.endswith("exit 5 (something could not be decided: 1 eval errored, 1 unrankable)")
