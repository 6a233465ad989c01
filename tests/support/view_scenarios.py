"""The sealed runs the `view` snapshots read: one builder per case the issue names."""

from __future__ import annotations

from niceeval_cli._states import AssertionState, AttemptState, GateState, Role
from tests.support.view_builders import Runs, judge_result, result


def pass_style(runs: Runs) -> str:
    run = runs.begin()
    ok = runs.attempt(run, "support/greeting")
    runs.seal(ok, result(ok, 0, "matched", "Says hello"))
    bad = runs.attempt(run, "support/refund", AttemptState.FAILED)
    runs.seal(bad, result(bad, 0, "matched", "Polite"), result(bad, 1, "mismatched", "Mentions 30 days"),
              result(bad, 2, "matched", "No apology"))
    runs.finish(run, 1)
    return run


def score_style(runs: Runs) -> str:
    run = runs.begin(["models/a"])
    scored = runs.attempt(run, "review/full", AttemptState.SCORED, experiment="models/a", score=8.0,
                          max_score=10.0, unavailable_weight=0.0, gate=GateState.PASSED)
    runs.seal(
        scored,
        result(scored, 0, "matched", "Gate ok", role=Role.GATE),
        result(scored, 1, "matched", "Right tool", role=Role.SCORE, weight=5.0, contribution=5.0),
        result(scored, 2, "measured", "Close wording", role=Role.SCORE, weight=5.0, contribution=3.0,
               measurement=0.6, match_name="similarity", match_kind="score", explanation="similarity 0.60"),
    )
    unrankable = runs.attempt(run, "review/partial", AttemptState.UNRANKABLE, experiment="models/a",
                              score=45.0, max_score=100.0, unavailable_weight=50.0, gate=GateState.NONE,
                              reason="completion-unobserved")
    runs.seal(
        unrankable,
        result(unrankable, 0, "matched", "Said goodbye", role=Role.SCORE, weight=45.0, contribution=45.0),
        result(unrankable, 1, "mismatched", "Asked for rating", role=Role.SCORE, weight=5.0, contribution=0.0),
        result(unrankable, 2, "unavailable", "Task completed", role=Role.SCORE, weight=50.0,
               reason="completion-unobserved", explanation=None),
    )
    gate_failed = runs.attempt(run, "review/rude", AttemptState.SCORED, experiment="models/a", score=7.0,
                               max_score=10.0, unavailable_weight=0.0, gate=GateState.FAILED)
    runs.seal(
        gate_failed,
        result(gate_failed, 0, "mismatched", "No insults", role=Role.GATE,
               explanation="expected excludes('idiot'), got 'you idiot'"),
        result(gate_failed, 1, "matched", "Answered", role=Role.SCORE, weight=7.0, contribution=7.0),
        result(gate_failed, 2, "mismatched", "Offered help", role=Role.SCORE, weight=3.0, contribution=0.0),
    )
    runs.finish(run, 1)
    return run


def judge(runs: Runs) -> str:
    run = runs.begin()
    bad = runs.attempt(run, "support/clear", AttemptState.FAILED, judge_tokens=280)
    runs.seal(
        bad,
        judge_result(bad, 0, "below", "Clear answer", role=Role.GATE, measurement=0.0, threshold=0.8,
                     explanation="0.00 < 0.80 required; N: The reply talks about shipping, not refunds."),
        judge_result(bad, 1, "measured", "Friendly tone", measurement=1.0,
                     explanation="Y: Warm and polite throughout."),
    )
    runs.finish(run, 1)
    return run


def unavailable(runs: Runs) -> str:
    run = runs.begin()
    attempt = runs.attempt(run, "support/usage", AttemptState.ERRORED, reason="evidence-unavailable")
    runs.seal(
        attempt,
        result(attempt, 0, "matched", "Replied"),
        judge_result(attempt, 1, "unavailable", "Judge agrees", role=Role.GATE, threshold=0.8,
                     reason="judge-key-unresolved", judge_audit=None, judge_tokens=0,
                     explanation="the judge key variable OPENAI_API_KEY is unset or empty; no request was sent"),
    )
    runs.finish(run, 5)
    return run


def errored(runs: Runs) -> str:
    run = runs.begin()
    crashed = runs.attempt(run, "support/crash", AttemptState.ERRORED, reason="exception",
                           error="ValueError: the reply was empty")
    runs.seal(crashed)
    broken = runs.attempt(run, "support/broken_match", AttemptState.ERRORED, reason="assertion-errored")
    runs.seal(
        broken,
        result(broken, 0, "errored", "Parses JSON", reason="match-error",
               explanation="JSONDecodeError: Expecting value: line 1 column 1"),
        result(broken, 1, "matched", "Non-empty"),
    )
    runs.finish(run, 5)
    return run


def reused(runs: Runs) -> tuple[str, str]:
    first = runs.begin(started="2025-03-01T09:00:00.000Z")
    old = runs.attempt(first, "support/refund", AttemptState.FAILED)
    runs.seal(old, result(old, 0, "mismatched", "Mentions 30 days"))
    runs.finish(first, 1)
    second = runs.begin()
    runs.reuse(second, old)
    fresh = runs.attempt(second, "support/greeting")
    runs.seal(fresh, result(fresh, 0, "matched", "Says hello"))
    runs.finish(second, 1)
    return first, second


def multi_attempt(runs: Runs) -> str:
    run = runs.begin()
    for ordinal, state in enumerate([AttemptState.FAILED, AttemptState.PASSED, AttemptState.FAILED]):
        attempt = runs.attempt(run, "support/flaky", state, ordinal=ordinal)
        outcome = AssertionState.MATCHED if state is AttemptState.PASSED else AssertionState.MISMATCHED
        runs.seal(attempt, result(attempt, 0, outcome, "Mentions 30 days"))
    for ordinal in range(2):
        attempt = runs.attempt(run, "support/steady", ordinal=ordinal)
        runs.seal(attempt, result(attempt, 0, "matched", "Says hello"))
    runs.finish(run, 0)
    return run


HOSTILE_ANSI = "We ship\x1b[2J\x1b[31m in 3 days\x1b[0m\rOK: all good"
LONG = "word " * 2000


def hostile(runs: Runs) -> str:
    run = runs.begin()
    attempt = runs.attempt(run, "support/hostile", AttemptState.FAILED, error=None)
    runs.seal(
        attempt,
        result(attempt, 0, "mismatched", "Label \x1b]0;pwned\x07 with OSC",
               explanation=f"expected includes('30 days'), got {HOSTILE_ANSI!s}"),
        result(attempt, 1, "mismatched", "Long reply", explanation=LONG),
        result(attempt, 2, "mismatched", "Bidi \u202etxt.exe", explanation="abc\u202edef"),
    )
    chinese = runs.attempt(run, "支持/退款", AttemptState.FAILED)
    runs.seal(chinese, result(chinese, 0, "mismatched", "提到三十天"), result(chinese, 1, "matched", "礼貌"))
    for eval_id in ("支持/问候语", "support/ok"):
        attempt = runs.attempt(run, eval_id, ordinal=0)
        runs.seal(attempt, result(attempt, 0, "matched", "ok"))
    runs.finish(run, 1)
    return run
