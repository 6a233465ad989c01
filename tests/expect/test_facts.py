"""Facts and numeric materials: unknown stays unknown through every match, never a no or a 0."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from niceeval_cli._states import AssertionState
from niceeval_cli.expect import (
    Fact,
    FactUnavailable,
    Material,
    NumericMaterial,
    and_,
    at_least,
    at_most,
    between,
    count_where,
    define_context_match,
    define_material_match,
    define_score_match,
    define_value_match,
    equals,
    every,
    excludes,
    filter_where,
    greater_than,
    includes,
    is_defined,
    is_false,
    is_true,
    less_than,
    map_each,
    map_value,
    matches,
    not_,
    or_,
    pattern,
    satisfies,
    similarity,
    some,
)

U = AssertionState.UNAVAILABLE

BOOLEAN_MATCHES = [
    equals(3),
    equals("x"),
    greater_than(0),
    less_than(0),
    at_least(0),
    at_most(0),
    between(0, 1),
    includes("x"),
    excludes("x"),
    pattern("x"),
    is_defined(),
    is_true(),
    is_false(),
    matches(int),
    satisfies("s", lambda v: True),
    define_value_match(name="v", evaluate=lambda v: True),
    and_(equals(1), is_true()),
    or_(equals(1)),
    not_(equals(1)),
    map_value("m", lambda v: v, equals(1)),
    count_where(equals(1), at_least(0)),
    every(equals(1)),
    some(equals(1)),
    filter_where(equals(1), every(equals(1))),
    map_each(lambda v: v, every(equals(1))),
]
SCORE_MATCHES = [
    similarity("x"),
    similarity("x").at_least(0.5),
    define_score_match(name="s", score=lambda v: 1.0),
    define_score_match(name="s", score=lambda v: 1.0).at_least(1),
]
UNKNOWNS = [
    Fact.unavailable("not-observed"),
    NumericMaterial.unavailable("not-observed"),
    Material.unavailable("not-observed"),
]


@pytest.mark.parametrize("candidate", UNKNOWNS)
@pytest.mark.parametrize("match", BOOLEAN_MATCHES, ids=lambda m: m.describe())
def test_every_boolean_match_is_unavailable_for_an_unknown_candidate(match: Any, candidate: object) -> None:
    result = match.evaluate(candidate)
    assert (result.state, result.reason) == (U, "not-observed")


@pytest.mark.parametrize("candidate", UNKNOWNS)
@pytest.mark.parametrize("match", SCORE_MATCHES, ids=lambda m: m.describe())
def test_every_score_match_is_unavailable_for_an_unknown_candidate(match: Any, candidate: object) -> None:
    result = match.measure(candidate)
    assert (result.state, result.reason, result.measurement) == (U, "not-observed", None)


def test_an_available_fact_is_unwrapped_by_every_match() -> None:
    assert equals(3).evaluate(Fact.available(3)).state == AssertionState.MATCHED
    assert includes("ok").evaluate(Fact.available("it is ok")).state == AssertionState.MATCHED
    assert every(equals(1)).evaluate(Fact.available([1, 1])).state == AssertionState.MATCHED
    assert similarity("ab").measure(Fact.available("ab")).measurement == 1.0


def test_usage_gate_with_unreported_usage_is_unavailable_not_zero() -> None:
    unreported = NumericMaterial.unavailable("usage-unreported")
    result = at_most(10_000).evaluate(unreported)
    assert (result.state, result.reason) == (U, "usage-unreported")
    assert at_most(10_000).evaluate(NumericMaterial.available(9_000)).state == AssertionState.MATCHED


def test_reading_an_unavailable_fact_raises_with_guidance() -> None:
    with pytest.raises(FactUnavailable, match=r"branch on \.state") as info:
        _ = Fact.unavailable("hp-unobserved").value
    assert info.value.reason == "hp-unobserved"


def _read_hp(p: Any) -> Any:
    return p["hp"].value


PLAYER: dict[str, Fact[int]] = {"hp": Fact.unavailable("hp-unobserved")}

# Every place a user function runs inside a match: (build match from fn, how to run it).
USER_FUNCTION_SITES: list[tuple[str, Callable[[Callable[[Any], Any]], Any], Callable[[Any], Any]]] = [
    ("map_value", lambda fn: map_value("hp", fn, greater_than(0)), lambda m: m.evaluate(PLAYER)),
    ("satisfies", lambda fn: satisfies("alive", lambda p: fn(p) > 0), lambda m: m.evaluate(PLAYER)),
    (
        "define_value_match",
        lambda fn: define_value_match(name="alive", evaluate=lambda p: fn(p) > 0),
        lambda m: m.evaluate(PLAYER),
    ),
    (
        "define_score_match",
        lambda fn: define_score_match(name="hp", score=lambda p: fn(p) / 100),
        lambda m: m.measure(PLAYER),
    ),
    ("map_each", lambda fn: map_each(fn, every(greater_than(0))), lambda m: m.evaluate([PLAYER])),
    (
        "context read",
        lambda fn: define_context_match(name="hp", read=fn, match=greater_than(0)),
        lambda m: m.evaluate(PLAYER),
    ),
    (
        "material read",
        lambda fn: define_material_match(name="hp", read=lambda p: [fn(p)], match=greater_than(0)),
        lambda m: m.evaluate(PLAYER),
    ),
    (
        "material selector",
        lambda fn: define_material_match(
            name="players", read=lambda p: [p], match=map_value("hp", fn, greater_than(0))
        ),
        lambda m: m.evaluate(PLAYER),
    ),
]


@pytest.mark.parametrize(
    ("site", "build", "run"), USER_FUNCTION_SITES, ids=[s[0] for s in USER_FUNCTION_SITES]
)
def test_fact_unavailable_inside_a_user_function_is_unavailable_with_the_facts_reason(
    site: str,
    build: Any,
    run: Any,
) -> None:
    result = run(build(_read_hp))
    assert (result.state, result.reason) == (U, "hp-unobserved")


class Boom(Exception):
    pass


def _explode(p: Any) -> Any:
    raise Boom("adapter bug")


@pytest.mark.parametrize(
    ("site", "build", "run"), USER_FUNCTION_SITES, ids=[s[0] for s in USER_FUNCTION_SITES]
)
def test_any_other_exception_inside_a_user_function_propagates(site: str, build: Any, run: Any) -> None:
    with pytest.raises(Boom):
        run(build(_explode))


def test_unavailable_hp_never_counts_as_zero() -> None:
    players = [{"hp": Fact.available(0)}, {"hp": Fact.available(0)}, PLAYER]
    result = count_where(map_value("hp", _read_hp, equals(0)), equals(2)).evaluate(players)
    assert result.state == U
