"""The pure comparison rules (reports.md, "compare"): pairing, classes, folding, totals."""

from __future__ import annotations

from typing import Any

import pytest

from niceeval_cli._states import AssertionState, AttemptState, EvalKind, GateState
from niceeval_cli.comparison import (
    CLASS_ORDER,
    EXPERIMENTS_ORDER,
    ROW_COLUMNS,
    AttemptFacts,
    PairClass,
    Verdict,
    classify,
    compare,
    fold_side,
)
from niceeval_cli.experiment_totals import experiment_totals

P, F, E = AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED
S, U = AttemptState.SCORED, AttemptState.UNRANKABLE


def pas(state: AttemptState, eval_id: str = "e", experiment: str = "x", **kw: Any) -> AttemptFacts:
    return AttemptFacts(experiment_id=experiment, eval_id=eval_id, kind=EvalKind.PASS, state=state, **kw)


def sco(
    state: AttemptState = S, score: float | None = 5.0, gate: GateState = GateState.NONE, eval_id: str = "e",
    experiment: str = "x", max_score: float = 10.0, **kw: Any,
) -> AttemptFacts:
    return AttemptFacts(experiment_id=experiment, eval_id=eval_id, kind=EvalKind.SCORE, state=state,
                        score=score, max_score=max_score, gate=gate, **kw)


def one(base: list[AttemptFacts], new: list[AttemptFacts]) -> PairClass:
    pairs = compare(base, new).pairs
    assert len(pairs) == 1
    return pairs[0].cls


# ── pass-style classes ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("before", "after", "cls"), [
    (P, F, PairClass.REGRESSED),
    (F, P, PairClass.FIXED),
    (F, F, PairClass.STILL_FAILING),
    (P, P, PairClass.UNCHANGED),
    (P, E, PairClass.UNDECIDED),
    (F, E, PairClass.UNDECIDED),
    (E, P, PairClass.DECIDED),
    (E, F, PairClass.DECIDED),
    (E, E, PairClass.UNCHANGED),
])
def test_pass_style_pair_class_follows_the_verdicts(before, after, cls) -> None:
    assert one([pas(before)], [pas(after)]) is cls


def test_an_eval_on_one_side_only_is_added_or_removed() -> None:
    comparison = compare([pas(P, "old")], [pas(P, "new")])
    assert {(p.eval_id, p.cls) for p in comparison.pairs} == {("old", PairClass.REMOVED), ("new", PairClass.ADDED)}


def test_a_case_on_one_side_only_is_added_and_cases_pair_by_case_id() -> None:
    base = [pas(P, case_id="c1"), pas(P, case_id="c2")]
    new = [pas(F, case_id="c1"), pas(P, case_id="c2"), pas(P, case_id="c3")]
    got = {p.case_id: p.cls for p in compare(base, new).pairs}
    assert got == {"c1": PairClass.REGRESSED, "c2": PairClass.UNCHANGED, "c3": PairClass.ADDED}


def test_pairs_are_keyed_by_experiment_too() -> None:
    comparison = compare([pas(P, experiment="a"), pas(P, experiment="b")],
                         [pas(F, experiment="a"), pas(P, experiment="b")])
    assert {p.experiment_id: p.cls for p in comparison.pairs} == {"a": PairClass.REGRESSED, "b": PairClass.UNCHANGED}


# ── score-style classes ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("before", "after", "cls"), [
    (sco(gate=GateState.PASSED), sco(gate=GateState.FAILED), PairClass.REGRESSED),
    (sco(gate=GateState.FAILED), sco(gate=GateState.PASSED), PairClass.FIXED),
    (sco(gate=GateState.FAILED), sco(gate=GateState.FAILED, score=9.0), PairClass.STILL_FAILING),
    (sco(score=5.0), sco(score=4.0), PairClass.REGRESSED),
    (sco(score=5.0), sco(score=6.0), PairClass.FIXED),
    (sco(score=5.0), sco(score=5.0), PairClass.UNCHANGED),
    (sco(score=0.1 + 0.2), sco(score=0.3), PairClass.UNCHANGED),
    (sco(score=5.0), sco(U, score=5.0), PairClass.UNDECIDED),
    (sco(score=5.0), sco(E, score=None), PairClass.UNDECIDED),
    (sco(gate=GateState.PASSED), sco(gate=GateState.UNAVAILABLE), PairClass.UNDECIDED),
    (sco(U), sco(score=1.0), PairClass.DECIDED),
    (sco(gate=GateState.UNAVAILABLE), sco(gate=GateState.FAILED), PairClass.DECIDED),
    (sco(U), sco(E, score=None), PairClass.UNCHANGED),
])
def test_score_style_pair_class_follows_gate_then_rankable_score(before, after, cls) -> None:
    assert one([before], [after]) is cls


def test_scores_out_of_different_maxima_compare_as_fractions() -> None:
    assert one([sco(score=5.0, max_score=10.0)], [sco(score=6.0, max_score=20.0)]) is PairClass.REGRESSED
    assert one([sco(score=5.0, max_score=10.0)], [sco(score=10.0, max_score=20.0)]) is PairClass.UNCHANGED


def test_an_unrankable_score_never_counts_as_a_score_change() -> None:
    base, new = fold_side([sco(U, score=9.0)]), fold_side([sco(U, score=1.0)])
    assert classify(base, new) is PairClass.UNCHANGED


# ── repeated attempts ───────────────────────────────────────────────────────────────────


def test_repeated_attempts_compare_by_their_folded_verdict_and_keep_pass_counts() -> None:
    base = [pas(s, ordinal=i, pass_rule="any") for i, s in enumerate([P, P, P, F, F])]
    new = [pas(s, ordinal=i, pass_rule="any") for i, s in enumerate([P, F, F, F, F])]
    pair = compare(base, new).pairs[0]
    assert pair.cls is PairClass.UNCHANGED  # pass@5 passed on both sides
    row = pair.row()
    assert (row["base_passed"], row["base_attempts"], row["new_passed"], row["new_attempts"]) == (3, 5, 1, 5)


def test_a_pass_rate_rule_turns_a_lower_pass_rate_into_a_regression() -> None:
    base = [pas(s, ordinal=i, pass_rule="0.6") for i, s in enumerate([P, P, P, F, F])]
    new = [pas(s, ordinal=i, pass_rule="0.6") for i, s in enumerate([P, F, F, F, F])]
    assert one(base, new) is PairClass.REGRESSED


def test_rule_all_fails_on_one_failed_attempt() -> None:
    base = [pas(P, ordinal=i, pass_rule="all") for i in range(3)]
    new = [pas(s, ordinal=i, pass_rule="all") for i, s in enumerate([P, F, P])]
    assert one(base, new) is PairClass.REGRESSED


def test_score_gates_fold_under_the_pass_rule() -> None:
    gates = [GateState.PASSED, GateState.FAILED, GateState.FAILED]
    any_side = fold_side([sco(gate=g, ordinal=i, pass_rule="any") for i, g in enumerate(gates)])
    all_side = fold_side([sco(gate=g, ordinal=i, pass_rule="all") for i, g in enumerate(gates)])
    assert (any_side.gate, any_side.verdict) == (GateState.PASSED, Verdict.PASSED)
    assert (all_side.gate, all_side.verdict) == (GateState.FAILED, Verdict.FAILED)
    assert any_side.passed == all_side.passed == 1


def test_repeated_score_attempts_compare_their_mean_and_one_unrankable_makes_the_side_undecided() -> None:
    side = fold_side([sco(score=4.0, ordinal=0), sco(score=6.0, ordinal=1)])
    assert (side.score, side.state, side.verdict) == (5.0, S, Verdict.PASSED)
    mixed = fold_side([sco(score=4.0, ordinal=0), sco(U, score=6.0, ordinal=1)])
    assert (mixed.state, mixed.verdict) == (U, Verdict.UNDECIDED)


def test_a_side_without_attempts_is_refused() -> None:
    with pytest.raises(ValueError):
        fold_side([])
    with pytest.raises(ValueError):
        classify(None, None)


# ── assertion keys ──────────────────────────────────────────────────────────────────────


def test_changed_keys_name_assertions_whose_state_changed_or_that_exist_on_one_side() -> None:
    m, mm = AssertionState.MATCHED, AssertionState.MISMATCHED
    base = [pas(P, assertion_states={"a": m, "b": m, "gone": m})]
    new = [pas(F, assertion_states={"a": m, "b": mm, "fresh": m})]
    assert compare(base, new).pairs[0].changed_keys == ("b", "fresh", "gone")


def test_changed_keys_over_repeated_attempts_ignore_attempt_order() -> None:
    m, mm = AssertionState.MATCHED, AssertionState.MISMATCHED
    base = [pas(P, ordinal=0, assertion_states={"a": m}), pas(F, ordinal=1, assertion_states={"a": mm})]
    new = [pas(F, ordinal=0, assertion_states={"a": mm}), pas(P, ordinal=1, assertion_states={"a": m})]
    assert compare(base, new).pairs[0].changed_keys == ()


# ── order, rows, fail-on ────────────────────────────────────────────────────────────────


def test_pairs_read_regressions_first_then_fixed_then_undecided_then_the_rest() -> None:
    base = [pas(P, "same"), pas(F, "fix"), pas(P, "reg"), pas(P, "und"), pas(E, "dec"), pas(F, "still"),
            pas(P, "gone")]
    new = [pas(P, "same"), pas(P, "fix"), pas(F, "reg"), pas(E, "und"), pas(P, "dec"), pas(F, "still"),
           pas(P, "new")]
    got = [p.cls for p in compare(base, new).pairs]
    assert got == list(CLASS_ORDER)


def test_experiments_order_puts_wins_then_losses_first() -> None:
    assert EXPERIMENTS_ORDER[:2] == (PairClass.FIXED, PairClass.REGRESSED)
    assert set(EXPERIMENTS_ORDER) == set(CLASS_ORDER)


def test_rows_carry_every_documented_column() -> None:
    pair = compare([pas(P)], [pas(F)]).pairs[0]
    row = pair.row()
    assert tuple(row) == ROW_COLUMNS
    assert (row["class"], row["base_state"], row["new_state"], row["case_id"]) == ("regressed", "passed", "failed",
                                                                                  None)
    removed = compare([pas(P)], []).pairs[0].row()
    assert removed["new_state"] is None and removed["base_state"] == "passed"


def test_any_in_answers_fail_on() -> None:
    comparison = compare([pas(P, "a"), pas(P, "b")], [pas(P, "a"), pas(E, "b")])
    assert comparison.any_in(["undecided"])
    assert not comparison.any_in(["regressed"])
    assert comparison.counts()[PairClass.UNDECIDED] == 1


# ── experiment against experiment ───────────────────────────────────────────────────────


def test_experiments_pair_by_eval_and_case_with_a_playing_base() -> None:
    run = [pas(P, "e1", "a"), pas(F, "e1", "b"), pas(F, "e2", "a"), pas(P, "e2", "b"), pas(P, "e3", "a")]
    comparison = compare(run, run, experiments=("a", "b"))
    got = [(p.eval_id, p.cls, p.base_experiment_id, p.experiment_id) for p in comparison.pairs]
    assert got == [("e2", PairClass.FIXED, "a", "b"), ("e1", PairClass.REGRESSED, "a", "b"),
                   ("e3", PairClass.REMOVED, "a", "b")]


def test_experiment_totals_fold_pass_evals_and_average_rankable_scores() -> None:
    run = [
        pas(P, "p1", "a", ordinal=0, duration_ms=10.0, cost_usd=0.5), pas(F, "p1", "a", ordinal=1, duration_ms=30.0),
        pas(F, "p2", "a"),
        sco(S, 4.0, eval_id="s1", experiment="a"), sco(S, 8.0, eval_id="s2", experiment="a"),
        sco(U, 3.0, eval_id="s3", experiment="a"),
        pas(P, "p1", "b"),
    ]
    totals = experiment_totals(run, "a")
    assert (totals.pass_evals, totals.pass_evals_passed, totals.eval_pass_rate) == (2, 1, 0.5)
    assert (totals.attempts_passed, totals.pass_attempts) == (1, 3)
    assert (totals.rankable, totals.unrankable, totals.mean_score) == (2, 1, 6.0)
    assert totals.cost_usd == 0.5
    assert totals.duration_ms == 40.0 and totals.attempts == 6
    assert experiment_totals(run, "b").cost_usd is None


def test_an_eval_pairs_by_identity_when_its_shown_id_changed():
    base = [pas(P, "grow", eval_module="grow", eval_name="first")]
    new = [pas(F, "grow/first", eval_module="grow", eval_name="first"),
           pas(P, "grow/second", eval_module="grow", eval_name="second")]
    pairs = {(p.eval_id, p.cls) for p in compare(base, new).pairs}
    assert pairs == {("grow/first", PairClass.REGRESSED), ("grow/second", PairClass.ADDED)}


def test_an_attempt_without_identity_pairs_by_its_shown_id():
    # Stored before identities were: it pairs with whatever shows its id on the other side.
    pairs = compare([pas(P, "grow")], [pas(F, "grow", eval_module="grow", eval_name="first")]).pairs
    assert [(p.eval_id, p.cls) for p in pairs] == [("grow", PairClass.REGRESSED)]
    # Two evals that showed one id but are not the same eval do not pair.
    other = compare([pas(P, "a/b", eval_module="a", eval_name="b")],
                    [pas(P, "a/b", eval_module="a/b", eval_name="main")]).pairs
    assert sorted(p.cls.value for p in other) == ["added", "removed"]


def test_a_pair_its_gate_decided_is_tested_on_the_gates_and_one_its_score_decided_on_the_scores() -> None:
    from scipy import stats as sp

    base = [sco(score=6.0, gate=GateState.PASSED, ordinal=i) for i in range(5)]
    gated = compare(base, [sco(score=6.0, gate=GateState.FAILED, ordinal=i) for i in range(5)]).pairs[0]
    assert gated.cls is PairClass.REGRESSED and gated.stats is not None
    assert gated.stats.test.p_value == pytest.approx(sp.fisher_exact([[5, 0], [0, 5]]).pvalue)
    scores = [6.0, 7.0, 5.0, 6.0, 6.0]
    lower = [4.0, 5.0, 3.0, 4.0, 5.0]
    moved = compare([sco(score=x, gate=GateState.PASSED, ordinal=i) for i, x in enumerate(scores)],
                    [sco(score=x, gate=GateState.PASSED, ordinal=i) for i, x in enumerate(lower)]).pairs[0]
    assert moved.cls is PairClass.REGRESSED and moved.stats is not None
    assert moved.stats.test.p_value == pytest.approx(
        sp.ttest_ind([x / 10 for x in scores], [x / 10 for x in lower], equal_var=False).pvalue)
