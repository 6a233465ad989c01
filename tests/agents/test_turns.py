"""Events and turns (agents.md, "Events and turns"): records, observed kinds, the dict protocol."""

from __future__ import annotations

import pytest

from niceeval_cli import AgentError, Event, Message, ToolCall, Turn, Usage
from niceeval_cli.authoring._turns import event_from_dict, turn_from_reply
from niceeval_cli.authoring._usage import Price, UsageMeter


def test_turn_keeps_the_old_constructor():
    turn = Turn("q", "a", data={"x": 1}, usage=Usage(1, 2), elapsed_ms=3.0)
    assert (turn.input, turn.message, turn.data, turn.usage.total_tokens, turn.elapsed_ms) == (
        "q", "a", {"x": 1}, 3, 3.0)
    assert (turn.events, turn.status, turn.observed) == ((), "completed", None)


def test_tool_calls_are_complete_only_when_observed():
    calls = (ToolCall("a"), Message("assistant", "hi"), ToolCall("b"))
    observed = Turn("q", "a", events=calls, observed=frozenset({"tool_calls"}))
    assert observed.tool_calls.state == "complete" and [c.name for c in observed.tool_calls] == ["a", "b"]
    assert (observed.messages.state, observed.messages.reason) == ("partial", "messages-unobserved")
    blind = Turn("q", "a")
    assert (blind.tool_calls.state, blind.tool_calls.reason) == ("unavailable", "tool-calls-unobserved")
    assert (blind.messages.state, blind.messages.reason) == ("unavailable", "messages-unobserved")


def test_events_given_as_a_list_become_a_tuple():
    assert Turn("q", "a", events=[ToolCall("a")]).events == (ToolCall("a"),)


@pytest.mark.parametrize("bad", [
    lambda: Turn("q", "a", status="done"),
    lambda: Turn("q", "a", events=[{"type": "tool_call"}]),
    lambda: Turn("q", "a", observed={"tools"}),
    lambda: ToolCall("a", status="ok"),
    lambda: ToolCall(""),
    lambda: Message("robot", "x"),
    lambda: Event("tool_call"),
    lambda: Usage(input_tokens=-1),
    lambda: Usage(cost_usd=float("nan")),
    lambda: Usage(cost_usd=1e308),  # two of them overflowed the run's cost sum: `niceeval report` exited 4
    lambda: Usage(cost_usd=10**400),  # was an OverflowError, not the clear error
])
def test_invalid_records_are_rejected_with_a_clear_error(bad):
    with pytest.raises((TypeError, ValueError)):
        bad()


def test_event_dicts_of_the_protocol():
    assert event_from_dict({"type": "tool_call", "name": "s", "input": {"q": 1}, "status": "failed",
                            "error": "boom"}) == ToolCall("s", {"q": 1}, status="failed", error="boom")
    assert event_from_dict({"type": "message", "role": "user", "text": "hi"}) == Message("user", "hi")
    assert event_from_dict({"type": "error", "text": "x"}) == AgentError("x")
    assert event_from_dict({"type": "skill", "data": {"n": "pdf"}}) == Event("skill", {"n": "pdf"})


@pytest.mark.parametrize("obj, words", [
    ([], "JSON object"),
    ({"name": "x"}, '"type"'),
    ({"type": "tool_call", "nme": "x"}, "nme"),
    ({"type": "tool_call"}, "name"),
    ({"type": "message", "text": 3}, "text"),
    ({"type": "final"}, "final"),
])
def test_malformed_event_dicts_say_what_is_wrong(obj, words):
    with pytest.raises(ValueError, match=words):
        event_from_dict(obj)


def test_a_reply_with_events_observes_what_the_adapter_declares():
    turn = turn_from_reply("q", {"message": "a", "events": [{"type": "tool_call", "name": "s"}],
                                  "status": "waiting", "usage": {"input_tokens": 1, "cost_usd": 0.5}},
                           ("messages", "tool_calls"))
    assert turn.observed == {"messages", "tool_calls"} and turn.status == "waiting"
    assert turn.usage == Usage(input_tokens=1, cost_usd=0.5)
    plain = turn_from_reply("q", {"message": "a"}, ("messages", "tool_calls"))
    assert plain.observed == frozenset()


def test_reply_with_unknown_keys_is_rejected():
    with pytest.raises(ValueError, match="unknown key"):
        turn_from_reply("q", {"message": "a", "tools": []}, ())


def test_reported_cost_sums_and_is_unknown_when_any_turn_reported_none():
    meter = UsageMeter()
    assert meter.snapshot().cost_usd.reason == "cost-unreported"
    meter.record_turn(Usage(1, 2, cost_usd=0.25))
    meter.record_turn(Usage(1, 2, cost_usd=0.5))
    assert meter.snapshot().cost_usd == 0.75
    meter.record_turn(Usage(1, 2))
    assert meter.snapshot().cost_usd.reason == "cost-unreported"
    assert meter.cost_usd is None


def test_estimated_cost_comes_from_prices_and_is_never_mixed_with_reported_cost():
    meter = UsageMeter(Price(input_per_mtok=2.0, output_per_mtok=10.0, cache_read_per_mtok=0.5))
    meter.record_turn(Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=200_000))
    view = meter.snapshot()
    assert view.estimated_cost_usd == pytest.approx(0.8 * 2 + 0.2 * 0.5 + 0.1 * 10)
    assert view.cost_usd.reason == "cost-unreported"
    assert UsageMeter().snapshot().estimated_cost_usd.reason == "price-unknown"
    unpriced_tokens = UsageMeter(Price(1, 1))
    unpriced_tokens.record_turn(None)
    assert unpriced_tokens.snapshot().estimated_cost_usd.reason == "usage-unreported"
