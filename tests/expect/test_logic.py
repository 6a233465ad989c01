"""Kleene combinators: truth tables, every child evaluated, reasons, intervals, explanations."""

from __future__ import annotations

import itertools

import pytest

from niceeval_cli._states import AssertionState, UnavailableReason
from niceeval_cli.expect import (
    BooleanMatch,
    Fact,
    Interval,
    and_,
    at_least,
    at_most,
    define_value_match,
    equals,
    is_true,
    not_,
    or_,
)

M, X, U = AssertionState.MATCHED, AssertionState.MISMATCHED, AssertionState.UNAVAILABLE
STATES = (M, X, U)


def const(state: AssertionState, calls: list[str] | None = None, tag: str = "") -> BooleanMatch:
    """A match that always answers `state` and records each call in `calls`."""
    answer = {M: True, X: False, U: Fact.unavailable(f"reason-{tag or state}")}[state]

    def evaluate(value: object) -> object:
        if calls is not None:
            calls.append(tag or str(state))
        return answer

    return define_value_match(name=f"const_{tag or state}", evaluate=evaluate)


def kleene_and(a: AssertionState, b: AssertionState) -> AssertionState:
    return X if X in (a, b) else U if U in (a, b) else M


def kleene_or(a: AssertionState, b: AssertionState) -> AssertionState:
    return M if M in (a, b) else U if U in (a, b) else X


AND_TABLE = [
    (M, M, M),
    (M, X, X),
    (M, U, U),
    (X, M, X),
    (X, X, X),
    (X, U, X),
    (U, M, U),
    (U, X, X),
    (U, U, U),
]
OR_TABLE = [
    (M, M, M),
    (M, X, M),
    (M, U, M),
    (X, M, M),
    (X, X, X),
    (X, U, U),
    (U, M, M),
    (U, X, U),
    (U, U, U),
]


@pytest.mark.parametrize(("a", "b", "expected"), AND_TABLE)
def test_and_truth_table(a: AssertionState, b: AssertionState, expected: AssertionState) -> None:
    assert and_(const(a), const(b)).evaluate(None).state == expected


@pytest.mark.parametrize(("a", "b", "expected"), OR_TABLE)
def test_or_truth_table(a: AssertionState, b: AssertionState, expected: AssertionState) -> None:
    assert or_(const(a), const(b)).evaluate(None).state == expected


@pytest.mark.parametrize(("a", "expected"), [(M, X), (X, M), (U, U)])
def test_not_truth_table(a: AssertionState, expected: AssertionState) -> None:
    assert not_(const(a)).evaluate(None).state == expected


@pytest.mark.parametrize("states", list(itertools.product(STATES, repeat=3)))
def test_three_children_follow_kleene_and_every_child_is_evaluated(
    states: tuple[AssertionState, ...],
) -> None:
    calls: list[str] = []
    children = [const(s, calls, f"c{i}") for i, s in enumerate(states)]
    want_and = kleene_and(kleene_and(states[0], states[1]), states[2])
    want_or = kleene_or(kleene_or(states[0], states[1]), states[2])
    assert and_(*children).evaluate(None).state == want_and
    assert calls == ["c0", "c1", "c2"]
    calls.clear()
    assert or_(*children).evaluate(None).state == want_or
    assert calls == ["c0", "c1", "c2"]


def test_and_evaluates_children_after_the_first_mismatch() -> None:
    calls: list[str] = []
    and_(const(X, calls, "first"), const(M, calls, "second"), const(U, calls, "third")).evaluate(None)
    assert calls == ["first", "second", "third"]


def test_or_evaluates_children_after_the_first_match() -> None:
    calls: list[str] = []
    or_(const(M, calls, "first"), const(X, calls, "second")).evaluate(None)
    assert calls == ["first", "second"]


def test_unavailable_combination_keeps_the_first_unknown_childs_reason() -> None:
    result = and_(const(M), const(U, tag="a"), const(U, tag="b")).evaluate(None)
    assert (result.state, result.reason) == (U, "reason-a")
    assert or_(const(X), const(U, tag="z")).evaluate(None).reason == "reason-z"
    assert not_(const(U, tag="n")).evaluate(None).reason == "reason-n"


def test_decided_results_carry_no_reason() -> None:
    assert and_(const(X), const(U)).evaluate(None).reason is None
    assert or_(const(M), const(U)).evaluate(None).reason is None


def test_explanation_lists_every_childs_result() -> None:
    result = and_(equals(3), at_least(5), is_true()).evaluate(3)
    assert result.state == X
    for fragment in (
        "equals(3) matched",
        "expected equals(3), got 3",
        "at_least(5) mismatched",
        "expected at_least(5), got 3",
        "is_true() mismatched",
    ):
        assert fragment in result.explanation


def test_not_explanation_names_the_inner_result() -> None:
    result = not_(equals(3)).evaluate(3)
    assert result.state == X
    assert "equals(3) matched" in result.explanation


def test_same_candidate_goes_to_every_child() -> None:
    seen: list[object] = []

    def record(v: object) -> bool:
        seen.append(v)
        return True

    spy = define_value_match(name="spy", evaluate=record)
    and_(spy, spy).evaluate(Fact.available({"id": 7}))
    assert seen == [{"id": 7}, {"id": 7}]


def test_unavailable_candidate_is_unavailable_for_every_combinator() -> None:
    missing = Fact.unavailable("not-observed")
    for m in (and_(equals(1)), or_(equals(1)), not_(equals(1))):
        result = m.evaluate(missing)
        assert (result.state, result.reason) == (U, "not-observed")


@pytest.mark.parametrize(
    ("interval", "expected"),
    [
        (Interval(1, 3), M),
        (Interval(2, 2), M),
        (Interval(4, 9), X),
        (Interval(0, 0), X),
        (Interval(2, 5), U),
        (Interval(1, float("inf")), U),
    ],
)
def test_combinators_pass_intervals_to_numeric_children(interval: Interval, expected: AssertionState) -> None:
    m = and_(at_least(1), at_most(3))
    assert m.accepts_interval
    result = m.evaluate(interval)
    assert result.state == expected
    if expected == U:
        assert result.reason == UnavailableReason.COUNT_UNCERTAIN


def test_not_of_an_interval() -> None:
    assert not_(at_least(5)).evaluate(Interval(1, 3)).state == M
    assert not_(at_least(5)).evaluate(Interval(4, 6)).state == U


def test_non_interval_child_is_unavailable_for_an_uncertain_interval_but_decides_an_exact_one() -> None:
    assert or_(equals("x"), at_least(1)).evaluate(Interval(2, 3)).state == M
    assert and_(equals("x"), at_least(1)).evaluate(Interval(2, 3)).state == U
    assert and_(is_true(), at_least(1)).evaluate(Interval(2, 2)).state == X


def test_identity_lists_the_children() -> None:
    m = and_(equals(3), not_(at_least(1)))
    assert m.name == "and_"
    assert m.config == {"matches": ["equals(3)", "not_(at_least(1))"]}
    assert m.describe() == "and_(equals(3), not_(at_least(1)))"
    assert or_(equals(1)).name == "or_"
    assert not_(equals(1)).config == {"match": "equals(1)"}


def test_combinators_require_boolean_matches() -> None:
    with pytest.raises(ValueError):
        and_()
    with pytest.raises(ValueError):
        or_()
    with pytest.raises(TypeError):
        and_(equals(1), 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        not_(lambda v: True)  # type: ignore[arg-type]


def test_child_exception_propagates_from_a_combinator() -> None:
    boom = define_value_match(name="boom", evaluate=lambda v: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        or_(const(M), boom).evaluate(None)
