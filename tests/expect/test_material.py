"""Adapter matches: define_context_match, define_material_match, Capture limits, judge material."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import pytest

from niceeval_cli._states import AssertionState, UnavailableReason
from niceeval_cli.expect import (
    Capture,
    Fact,
    MatchError,
    MatchResult,
    Material,
    at_least,
    count_where,
    define_context_match,
    define_material_match,
    equals,
    filter_where,
    greater_than,
    is_true,
    map_each,
    map_value,
    satisfies,
)

M, X, U = AssertionState.MATCHED, AssertionState.MISMATCHED, AssertionState.UNAVAILABLE
LIMIT = UnavailableReason.CAPTURE_LIMIT_EXCEEDED


@dataclass(frozen=True)
class Speech:
    actor_id: str
    text: str
    delivered: bool


@dataclass(frozen=True)
class SupportFacts:
    speeches: Any
    completion: Any = None


AGENT = map_value("actor", lambda s: s.actor_id, equals("agent"))
ANY = satisfies("any", lambda item: True)
SPEECHES = (Speech("agent", "hello", True), Speech("user", "hi", True), Speech("agent", "bye", False))


def said(match: Any = AGENT, capture: Capture | None = None) -> Any:
    return define_material_match(
        name="actor-speeches", read=lambda f: f.speeches, match=match, capture=capture
    )


# ---------------------------------------------------------------- context matches


def test_context_match_applies_match_to_the_read_fact() -> None:
    done = define_context_match(name="completion", read=lambda f: f.completion, match=is_true())
    result = done.evaluate(SupportFacts((), Fact.available(True)))
    assert result.state == M
    assert result.has_evidence and result.evidence == {"state": "available", "value": True}
    missing = done.evaluate(SupportFacts((), Fact.unavailable("observation-ended")))
    assert (missing.state, missing.reason) == (U, "observation-ended")
    assert missing.evidence == {"state": "unavailable", "reason": "observation-ended"}


def test_context_match_takes_a_plain_value_as_available() -> None:
    tokens = define_context_match(name="tokens", read=lambda f: f["tokens"], match=at_least(10))
    result = tokens.evaluate({"tokens": 12})
    assert (result.state, result.evidence) == (M, 12)
    assert tokens.evaluate({"tokens": 3}).state == X
    assert "tokens: expected at_least(10), got 3" == tokens.evaluate({"tokens": 3}).explanation


def test_context_match_read_hitting_an_unavailable_fact_is_unavailable() -> None:
    hp = define_context_match(name="hp", read=lambda f: f.completion.value, match=greater_than(0))
    result = hp.evaluate(SupportFacts((), Fact.unavailable("hp-unobserved")))
    assert (result.state, result.reason) == (U, "hp-unobserved")


def test_context_match_read_exception_propagates() -> None:
    broken = define_context_match(name="broken", read=lambda f: f.nope, match=is_true())
    with pytest.raises(AttributeError):
        broken.evaluate(SupportFacts(()))


def test_seed_speech_delivery_context_match() -> None:
    delivery = define_context_match(
        name="speech-delivery",
        read=lambda f: Fact.available(f.speeches),
        match=filter_where(AGENT, map_each(lambda s: s.delivered, count_where(equals(True), at_least(1)))),
    )
    assert delivery.evaluate(SupportFacts(Material.complete(SPEECHES))).state == M
    late = delivery.evaluate(SupportFacts(Material.partial([Speech("agent", "x", False)], "deadline")))
    assert late.state == U
    gone = delivery.evaluate(SupportFacts(Material.unavailable("log-lost")))
    assert (gone.state, gone.reason) == (U, "log-lost")


def test_context_match_identity() -> None:
    m = define_context_match(name="完成", read=lambda f: f, match=is_true())
    assert (m.name, m.config) == ("完成", {"match": "is_true()"})
    json.dumps(m.config)
    with pytest.raises(ValueError):
        define_context_match(name="", read=lambda f: f, match=is_true())
    with pytest.raises(TypeError):
        define_context_match(name="x", read=lambda f: f, match=None)  # type: ignore[arg-type]


# ---------------------------------------------------------------- material matches as assertions


def test_material_match_is_matched_when_an_item_is_selected_and_captures_them() -> None:
    result = said().evaluate(SupportFacts(Material.complete(SPEECHES)))
    assert result.state == M
    assert result.evidence == [
        {"actor_id": "agent", "text": "hello", "delivered": True},
        {"actor_id": "agent", "text": "bye", "delivered": False},
    ]
    assert "selected 2 of 3" in result.explanation


def test_material_match_on_a_complete_material_without_selection_is_mismatched() -> None:
    result = said().evaluate(SupportFacts(Material.complete([Speech("user", "hi", True)])))
    assert (result.state, result.evidence) == (X, [])
    assert said().evaluate(SupportFacts([])).state == X


def test_material_match_on_a_partial_material() -> None:
    with_agent = said().evaluate(SupportFacts(Material.partial(SPEECHES[:1], "observation-deadline")))
    assert with_agent.state == M
    without = said().evaluate(SupportFacts(Material.partial(SPEECHES[1:2], "observation-deadline")))
    assert (without.state, without.reason) == (U, "observation-deadline")


def test_material_match_with_an_unknown_selection_and_nothing_selected_is_unavailable() -> None:
    items = [Speech("user", "hi", True), Fact.unavailable("speaker-unknown")]
    result = said().evaluate(SupportFacts(items))
    assert (result.state, result.reason) == (U, "speaker-unknown")
    assert said().evaluate(SupportFacts([*items, SPEECHES[0]])).state == M


def test_material_match_on_unavailable_material() -> None:
    for speeches in (Material.unavailable("log-lost"), Fact.unavailable("log-lost")):
        result = said().evaluate(SupportFacts(speeches))
        assert (result.state, result.reason) == (U, "log-lost")


@pytest.mark.parametrize(
    "speeches",
    [
        list(SPEECHES),
        SPEECHES,
        Material.complete(SPEECHES),
        Fact.available(list(SPEECHES)),
        Fact.available(Material.complete(SPEECHES)),
    ],
)
def test_material_read_accepts_every_collection_form(speeches: object) -> None:
    assert said().evaluate(SupportFacts(speeches)).state == M


def test_material_read_returning_a_non_collection_is_an_error() -> None:
    with pytest.raises(MatchError, match="read returned int"):
        said().evaluate(SupportFacts(3))


def test_material_read_hitting_an_unavailable_fact_is_unavailable() -> None:
    m = define_material_match(name="objs", read=lambda f: f.completion.value, match=ANY)
    result = m.evaluate(SupportFacts((), Fact.unavailable("objects-unobserved")))
    assert (result.state, result.reason) == (U, "objects-unobserved")


def test_material_match_identity() -> None:
    m = said(capture=Capture(max_items=10))
    assert m.name == "actor-speeches"
    assert m.config == {
        "match": "map_value('actor', equals('agent'))",
        "capture": {"max_items": 10, "max_bytes": 512 * 1024, "max_nodes": 65536, "max_depth": 32},
    }
    json.dumps(m.config)
    assert define_material_match(name="发言", read=lambda f: f, match=ANY).name == "发言"


# ---------------------------------------------------------------- capture limits


def test_capture_defaults_are_the_seeds() -> None:
    assert Capture() == Capture(max_items=1024, max_bytes=512 * 1024, max_nodes=65536, max_depth=32)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Capture().max_items = 3  # type: ignore[misc]


@pytest.mark.parametrize("bad", [{"max_items": -1}, {"max_bytes": 1.5}, {"max_depth": True}])
def test_capture_bounds_must_be_non_negative_integers(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Capture(**bad)


@pytest.mark.parametrize(
    ("items", "capture", "bound", "value"),
    [
        ([1, 2, 3], Capture(max_items=2), "max_items=2", "3 items"),
        (["你好"], Capture(max_bytes=9), "max_bytes=9", "10 bytes"),  # ["你好"]: UTF-8 bytes, not chars
        ([{"a": [1, 2]}], Capture(max_nodes=3), "max_nodes=3", "4 JSON nodes"),
        ([{"a": {"b": [1]}}], Capture(max_depth=2), "max_depth=2", "nesting depth 3"),
    ],
)
def test_capture_over_any_bound_is_unavailable_naming_the_bound(
    items: list[Any],
    capture: Capture,
    bound: str,
    value: str,
) -> None:
    m = define_material_match(name="items", read=lambda f: f, match=ANY, capture=capture)
    result = m.evaluate(items)
    assert (result.state, result.reason) == (U, LIMIT)
    assert bound in result.explanation and value in result.explanation
    assert not result.has_evidence  # never a silently truncated capture
    judged = m.judge_material(items)
    assert isinstance(judged, MatchResult) and judged.reason == LIMIT


@pytest.mark.parametrize(
    ("items", "capture"),
    [
        ([1, 2], Capture(max_items=2)),
        (["你好"], Capture(max_bytes=10)),
        ([{"a": [1, 2]}], Capture(max_nodes=4)),
        ([{"a": {"b": [1]}}], Capture(max_depth=3)),
        ([7], Capture(max_depth=0)),
    ],
)
def test_capture_exactly_at_a_bound_is_kept_whole(items: list[Any], capture: Capture) -> None:
    m = define_material_match(name="items", read=lambda f: f, match=ANY, capture=capture)
    result = m.evaluate(items)
    assert (result.state, result.evidence) == (M, items)
    assert m.judge_material(items) == items


def test_only_selected_items_count_against_the_capture() -> None:
    m = said(capture=Capture(max_items=2))
    many = [Speech("user", str(i), True) for i in range(50)] + list(SPEECHES)
    assert m.evaluate(SupportFacts(many)).state == M
    one_too_many = [*many, Speech("agent", "again", True)]
    assert m.evaluate(SupportFacts(one_too_many)).reason == LIMIT


def test_capture_limit_wins_over_a_selection() -> None:
    result = said(capture=Capture(max_bytes=20)).evaluate(SupportFacts(SPEECHES))
    assert (result.state, result.reason) == (U, LIMIT)


# ---------------------------------------------------------------- judge material


def test_judge_material_is_every_selected_item() -> None:
    material = said().judge_material(SupportFacts(Material.complete(SPEECHES)))
    assert material == [
        {"actor_id": "agent", "text": "hello", "delivered": True},
        {"actor_id": "agent", "text": "bye", "delivered": False},
    ]
    assert said().judge_material(SupportFacts([Speech("user", "x", True)])) == []


@pytest.mark.parametrize(
    ("speeches", "reason"),
    [
        (Material.partial(SPEECHES, "observation-deadline"), "observation-deadline"),
        (Material.unavailable("log-lost"), "log-lost"),
        ([*SPEECHES, Fact.unavailable("speaker-unknown")], "speaker-unknown"),
    ],
)
def test_judge_material_refuses_incomplete_material(speeches: object, reason: str) -> None:
    result = said().judge_material(SupportFacts(speeches))
    assert isinstance(result, MatchResult)
    assert (result.state, result.reason) == (U, reason)
