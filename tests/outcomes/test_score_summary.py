"""Score-style attempts summarised for reports (outcomes.md, "Several attempts")."""

from __future__ import annotations

import pytest

from niceeval_cli._states import AttemptState, GateState
from niceeval_cli.outcomes import AttemptOutcome, ScoreSummary, summarize_scores

SCORED, UNRANKABLE, ERRORED = AttemptState.SCORED, AttemptState.UNRANKABLE, AttemptState.ERRORED


def scored(score: float, max_score: float = 10.0, gate: GateState = GateState.NONE) -> AttemptOutcome:
    return AttemptOutcome(SCORED, None, score, max_score, 0.0, None, gate, None)


def unrankable(
    score: float, max_score: float, missing: float, gate: GateState = GateState.NONE
) -> AttemptOutcome:
    return AttemptOutcome(UNRANKABLE, "judge-timeout", score, max_score, missing, None, gate, None)


def errored(partial: float, max_score: float = 10.0, gate: GateState = GateState.NONE) -> AttemptOutcome:
    return AttemptOutcome(ERRORED, "timeout", None, max_score, 0.0, partial, gate, None)


def test_mean_min_max_cover_rankable_scores_only() -> None:
    summary = summarize_scores([scored(4.0), scored(8.0), unrankable(9.0, 10.0, 1.0), errored(9.5)])
    assert (summary.mean, summary.min, summary.max) == (6.0, 4.0, 8.0)
    assert (summary.attempts, summary.rankable, summary.unrankable, summary.errored) == (4, 2, 1, 1)


def test_totals_cover_attempts_with_a_score_and_keep_unavailable_weight() -> None:
    summary = summarize_scores([scored(4.0), unrankable(45.0, 100.0, 50.0), errored(7.0)])
    assert (summary.earned, summary.max_score, summary.unavailable_weight) == (49.0, 110.0, 50.0)


def test_zero_is_a_real_score() -> None:
    summary = summarize_scores([scored(0.0), scored(0.0)])
    assert (summary.mean, summary.min, summary.max, summary.rankable) == (0.0, 0.0, 0.0, 2)


def test_nothing_rankable_has_no_mean() -> None:
    summary = summarize_scores([unrankable(3.0, 10.0, 5.0), errored(1.0)])
    assert (summary.mean, summary.min, summary.max) == (None, None, None)


def test_gate_counts_include_every_attempt_state() -> None:
    summary = summarize_scores(
        [
            scored(5.0, gate=GateState.FAILED),
            unrankable(1.0, 10.0, 2.0, gate=GateState.FAILED),
            errored(0.0, gate=GateState.UNAVAILABLE),
            scored(5.0, gate=GateState.PASSED),
        ]
    )
    assert (summary.gate_failed, summary.gate_unavailable) == (2, 1)


def test_empty_summary() -> None:
    assert summarize_scores([]) == ScoreSummary(
        attempts=0, rankable=0, unrankable=0, errored=0, mean=None, min=None, max=None,
        earned=0.0, max_score=0.0, unavailable_weight=0.0, gate_failed=0, gate_unavailable=0,
    )  # fmt: skip


def test_mean_is_rounded_to_avoid_float_noise() -> None:
    assert summarize_scores([scored(0.1), scored(0.2)]).mean == 0.15
    assert summarize_scores([scored(0.1), scored(0.2), scored(0.0)]).earned == 0.3


@pytest.mark.parametrize("state", [AttemptState.PASSED, AttemptState.FAILED])
def test_pass_style_states_are_rejected(state: AttemptState) -> None:
    with pytest.raises(ValueError, match="not a score-style"):
        summarize_scores([AttemptOutcome(state, None, None, None, None, None, None, None)])


def test_counted_items_summarize_like_the_attempts_they_stand_for(entry):
    from niceeval_cli._states import AttemptState, GateState
    from niceeval_cli.outcomes import summarize_scores

    class A:
        def __init__(self, state, score, max_score, uw, gate):
            self.state, self.score, self.max_score, self.unavailable_weight = state, score, max_score, uw
            self.partial_score, self.gate = None, gate

    items = [
        A(AttemptState.SCORED, 7.5, 10.0, 0.0, GateState.PASSED),
        A(AttemptState.SCORED, 2.0, 10.0, 0.0, GateState.FAILED),
        A(AttemptState.UNRANKABLE, 4.0, 10.0, 5.0, GateState.UNAVAILABLE),
        A(AttemptState.ERRORED, None, 10.0, 0.0, GateState.NONE),
    ]
    counts = [3, 2, 4, 1]
    expanded = [item for item, n in zip(items, counts, strict=True) for _ in range(n)]
    assert summarize_scores(items, counts) == summarize_scores(expanded)
