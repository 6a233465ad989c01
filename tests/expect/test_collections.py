"""Collections: map_value, count_where, filter_where, map_each, every, some."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from niceeval_cli._states import AssertionState, UnavailableReason
from niceeval_cli.expect import (
    BooleanMatch,
    Fact,
    Interval,
    Material,
    and_,
    at_least,
    at_most,
    between,
    count_where,
    define_value_match,
    equals,
    every,
    filter_where,
    greater_than,
    is_true,
    map_each,
    map_value,
    satisfies,
    some,
)

M, X, U = AssertionState.MATCHED, AssertionState.MISMATCHED, AssertionState.UNAVAILABLE


@dataclass(frozen=True)
class Npc:
    id: str
    hp: Fact[int]


@dataclass(frozen=True)
class Speech:
    actor_id: str
    text: str
    delivered: bool


def hp_of(npc: Npc) -> int:
    return npc.hp.value


# ---------------------------------------------------------------- map_value


def test_map_value_applies_fn_then_inner() -> None:
    actor = map_value("actor", lambda s: s.actor_id, equals("agent"))
    assert actor.evaluate(Speech("agent", "hi", True)).state == M
    result = actor.evaluate(Speech("user", "hi", True))
    assert result.state == X
    assert result.explanation == "actor: expected equals('agent'), got 'user'"


def test_map_value_fn_reading_an_unavailable_fact_is_unavailable_with_its_reason() -> None:
    alive = map_value("hp", hp_of, greater_than(0))
    result = alive.evaluate(Npc("a", Fact.unavailable("hp-unobserved")))
    assert (result.state, result.reason) == (U, "hp-unobserved")
    assert "hp" in result.explanation


def test_map_value_fn_returning_an_unavailable_fact_is_unavailable() -> None:
    result = map_value("hp", lambda n: n.hp, greater_than(0)).evaluate(Npc("a", Fact.unavailable("gone")))
    assert (result.state, result.reason) == (U, "gone")
    assert map_value("hp", lambda n: n.hp, greater_than(0)).evaluate(Npc("a", Fact.available(3))).state == M


def test_map_value_other_exceptions_propagate() -> None:
    with pytest.raises(AttributeError):
        map_value("actor", lambda s: s.missing, equals("x")).evaluate(Speech("a", "b", True))


def test_map_value_identity() -> None:
    m = map_value("角色", lambda s: s.actor_id, equals("代理"))
    assert (m.name, m.config) == ("map_value", {"name": "角色", "match": "equals('代理')"})
    assert m.describe() == "map_value('角色', equals('代理'))"
    with pytest.raises(ValueError):
        map_value("", str, equals(1))
    with pytest.raises(TypeError):
        map_value("x", str, "not a match")  # type: ignore[arg-type]


# ---------------------------------------------------------------- count_where


def test_spec_example_three_matched_one_unavailable() -> None:
    hps = [0, 0, 0, Fact.unavailable("hp-unobserved")]
    exact = count_where(equals(0), equals(3)).evaluate(hps)
    assert (exact.state, exact.reason) == (U, UnavailableReason.COUNT_UNCERTAIN)
    assert "counted [3, 4]" in exact.explanation
    assert "hp-unobserved" in exact.explanation
    assert count_where(equals(0), at_least(1)).evaluate(hps).state == M


def test_complete_known_count_is_exact() -> None:
    result = count_where(equals(0), equals(3)).evaluate([0, 5, 0, 7])
    assert result.state == X
    assert "counted 2 where equals(0)" in result.explanation
    assert "expected equals(3), got 2" in result.explanation
    assert count_where(equals(0), equals(2)).evaluate([0, 5, 0, 7]).state == M


@pytest.mark.parametrize(
    ("aggregate", "state"),
    [
        (at_least(2), M),
        (at_least(3), U),
        (at_most(1), X),
        (at_most(5), U),
        (equals(2), U),
        (greater_than(1), M),
    ],
)
def test_partial_collection_count_is_open_ended(aggregate: BooleanMatch, state: AssertionState) -> None:
    seen = Material.partial([True, True, False], "observation-deadline")
    result = count_where(is_true(), aggregate).evaluate(seen)
    assert result.state == state
    assert "counted [2, ∞)" in result.explanation
    assert "observation-deadline" in result.explanation


@pytest.mark.parametrize(
    ("items", "aggregate", "state"),
    [
        ([], equals(0), M),
        ([], at_least(1), X),
        (Material.complete([]), equals(0), M),
        (Material.partial([], "late"), equals(0), U),
        (Material.partial([], "late"), at_least(0), M),
    ],
)
def test_empty_collections(items: Any, aggregate: BooleanMatch, state: AssertionState) -> None:
    assert count_where(equals(1), aggregate).evaluate(items).state == state


def test_count_where_with_a_combinator_aggregate() -> None:
    m = count_where(equals(0), and_(at_least(1), at_most(3)))
    assert m.evaluate([0, 0, Fact.unavailable("r")]).state == M  # [2, 3]
    assert m.evaluate([0, 0, 0, Fact.unavailable("r")]).state == U  # [3, 4]
    assert m.evaluate([1, 1]).state == X


def test_count_where_passes_an_exact_count_to_a_non_numeric_aggregate_as_an_int() -> None:
    seen: list[object] = []

    def record(v: object) -> bool:
        seen.append(v)
        return True

    spy = define_value_match(name="spy", evaluate=record)
    count_where(equals(1), spy).evaluate([1, 2, 1])
    assert seen == [2] and type(seen[0]) is int
    result = count_where(equals(1), spy).evaluate([1, Fact.unavailable("r")])
    assert (result.state, result.reason) == (U, UnavailableReason.COUNT_UNCERTAIN)


def test_count_where_evaluates_per_item_predicates_and_selectors() -> None:
    npcs = [Npc("a", Fact.available(0)), Npc("b", Fact.available(0)), Npc("c", Fact.available(9))]
    dead = map_value("hp", hp_of, equals(0))
    assert count_where(dead, equals(2)).evaluate(npcs).state == M
    npcs.append(Npc("d", Fact.unavailable("hp-unobserved")))
    result = count_where(dead, equals(2)).evaluate(npcs)
    assert (result.state, result.reason) == (U, UnavailableReason.COUNT_UNCERTAIN)


def test_count_where_identity() -> None:
    m = count_where(equals(0), equals(3))
    assert (m.name, m.config) == ("count_where", {"predicate": "equals(0)", "aggregate": "equals(3)"})
    with pytest.raises(TypeError):
        count_where(equals(0), 3)  # type: ignore[arg-type]


# ---------------------------------------------------------------- reading collections


@pytest.mark.parametrize(
    "candidate",
    [
        [1, 1],
        (1, 1),
        Material.complete([1, 1]),
        Fact.available([1, 1]),
        Fact.available(Material.complete((1, 1))),
    ],
)
def test_every_collection_form_is_accepted(candidate: object) -> None:
    assert count_where(equals(1), equals(2)).evaluate(candidate).state == M


@pytest.mark.parametrize(
    "candidate",
    [
        Material.unavailable("log-lost"),
        Fact.unavailable("log-lost"),
        Fact.available(Material.unavailable("log-lost")),
    ],
)
@pytest.mark.parametrize(
    "match",
    [
        count_where(equals(1), at_least(0)),
        every(equals(1)),
        some(equals(1)),
        filter_where(equals(1), every(equals(1))),
        map_each(str, every(equals("1"))),
    ],
)
def test_unavailable_collection_is_unavailable_with_its_reason(
    candidate: object, match: BooleanMatch
) -> None:
    result = match.evaluate(candidate)
    assert (result.state, result.reason) == (U, "log-lost")


@pytest.mark.parametrize("candidate", ["abc", 3, None, {"a": 1}])
def test_a_non_collection_is_mismatched_with_an_explanation(candidate: object) -> None:
    result = every(equals(1)).evaluate(candidate)
    assert result.state == X
    assert "expects a collection" in result.explanation


# ---------------------------------------------------------------- every / some


@pytest.mark.parametrize(
    ("items", "every_state", "some_state"),
    [
        ([], M, X),
        ([1, 1], M, M),
        ([1, 2], X, M),
        ([2, 2], X, X),
        ([1, Fact.unavailable("r")], U, M),
        ([2, Fact.unavailable("r")], X, U),
        ([Fact.unavailable("r")], U, U),
        (Material.partial([], "more"), U, U),
        (Material.partial([1], "more"), U, M),
        (Material.partial([2], "more"), X, U),
        (Material.partial([1, 2], "more"), X, M),
    ],
)
def test_every_and_some_are_three_valued(
    items: Any,
    every_state: AssertionState,
    some_state: AssertionState,
) -> None:
    assert every(equals(1)).evaluate(items).state == every_state
    assert some(equals(1)).evaluate(items).state == some_state


def test_quantifier_reasons_come_from_the_item_or_the_partial_collection() -> None:
    assert every(equals(1)).evaluate([1, Fact.unavailable("item-lost")]).reason == "item-lost"
    assert every(equals(1)).evaluate(Material.partial([1], "deadline")).reason == "deadline"
    assert some(equals(1)).evaluate(Material.partial([2], "deadline")).reason == "deadline"


def test_quantifier_explanation_counts_items() -> None:
    result = every(equals(1)).evaluate([1, 2, 1])
    assert "2 of 3 items matched equals(1)" in result.explanation


# ---------------------------------------------------------------- filter_where / map_each


SPEECHES = [
    Speech("agent", "hello", True),
    Speech("user", "hi", True),
    Speech("agent", "bye", False),
]
AGENT = map_value("actor", lambda s: s.actor_id, equals("agent"))


def test_filter_where_applies_inner_to_selected_items_only() -> None:
    assert (
        filter_where(AGENT, every(map_value("d", lambda s: s.delivered, is_true()))).evaluate(SPEECHES).state
        == X
    )
    delivered = map_value("d", lambda s: s.delivered, is_true())
    assert filter_where(AGENT, some(delivered)).evaluate(SPEECHES).state == M
    assert filter_where(AGENT, count_where(delivered, equals(1))).evaluate(SPEECHES).state == M
    sel = filter_where(AGENT, count_where(satisfies("any", lambda s: True), equals(2)))
    assert sel.evaluate(SPEECHES).state == M


def test_filter_where_unknown_selection_makes_the_filtered_collection_partial() -> None:
    items = [*SPEECHES, Fact.unavailable("speaker-unknown")]
    m = filter_where(AGENT, count_where(satisfies("any", lambda s: True), equals(2)))
    result = m.evaluate(items)
    assert (result.state, result.reason) == (U, UnavailableReason.COUNT_UNCERTAIN)
    assert "speaker-unknown" in result.explanation
    everyone = filter_where(AGENT, every(satisfies("any", lambda s: True))).evaluate(items)
    assert (everyone.state, everyone.reason) == (U, "speaker-unknown")
    assert filter_where(AGENT, some(satisfies("any", lambda s: True))).evaluate(items).state == M


def test_filter_where_keeps_a_partial_source_partial() -> None:
    m = filter_where(AGENT, every(satisfies("any", lambda s: True)))
    result = m.evaluate(Material.partial(SPEECHES, "stream-open"))
    assert (result.state, result.reason) == (U, "stream-open")


def test_filter_where_selector_with_and_means_the_same_item_satisfies_all() -> None:
    delivered = map_value("delivered", lambda s: s.delivered, is_true())
    same_item = filter_where(and_(AGENT, delivered), count_where(satisfies("any", lambda s: True), equals(1)))
    # one agent speech is delivered, another agent speech is not, a user speech is delivered
    assert same_item.evaluate(SPEECHES).state == M
    assert same_item.evaluate([Speech("agent", "x", False), Speech("user", "y", True)]).state == X


def test_seed_speech_delivery_pipeline() -> None:
    delivery = filter_where(AGENT, map_each(lambda s: s.delivered, count_where(equals(True), at_least(1))))
    assert delivery.evaluate(SPEECHES).state == M
    assert delivery.evaluate([Speech("agent", "x", False)]).state == X
    partial = delivery.evaluate(Material.partial([Speech("agent", "x", False)], "deadline"))
    assert partial.state == U


def test_map_each_keeps_completeness() -> None:
    m = map_each(lambda s: s.delivered, every(is_true()))
    assert m.evaluate([Speech("a", "", True)]).state == M
    result = m.evaluate(Material.partial([Speech("a", "", True)], "deadline"))
    assert (result.state, result.reason) == (U, "deadline")
    assert m.evaluate([]).state == M


def test_map_each_fact_unavailable_makes_only_that_item_unknown() -> None:
    npcs = [
        Npc("a", Fact.available(0)),
        Npc("b", Fact.unavailable("hp-unobserved")),
        Npc("c", Fact.available(5)),
    ]
    hps = map_each(hp_of, count_where(equals(0), between(1, 2)))
    assert hps.evaluate(npcs).state == M  # [1, 2]
    assert map_each(hp_of, some(greater_than(3))).evaluate(npcs).state == M
    result = map_each(hp_of, every(greater_than(-1))).evaluate(npcs)
    assert (result.state, result.reason) == (U, "hp-unobserved")


def test_map_each_other_exceptions_propagate() -> None:
    with pytest.raises(ZeroDivisionError):
        map_each(lambda v: 1 / 0, every(equals(1))).evaluate([1])


def test_collection_identities() -> None:
    def delivered(s: Speech) -> bool:
        return s.delivered

    assert filter_where(AGENT, every(is_true())).config == {
        "selector": "map_value('actor', equals('agent'))",
        "match": "every(is_true())",
    }
    assert map_each(delivered, some(is_true())).config == {
        "fn": delivered.__qualname__,
        "match": "some(is_true())",
    }
    assert every(equals(1)).name == "every" and some(equals(1)).name == "some"
    for factory in (every, some):
        with pytest.raises(TypeError):
            factory(3)  # type: ignore[arg-type]


def test_interval_candidate_for_a_collection_match_is_not_a_collection() -> None:
    assert every(equals(1)).evaluate(Interval(1, 3)).state == U
