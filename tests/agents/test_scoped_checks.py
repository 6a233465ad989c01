"""The scoped agent assertions as pure matches over a scope's turns (agents.md table)."""

from __future__ import annotations

import pytest

from niceeval_cli.authoring._agent_checks import (
    MaxToolCalls,
    NoFailedActions,
    ScopeMatch,
    Succeeded,
    called_tool_match,
    max_tool_calls_match,
    tool_order_match,
)
from niceeval_cli.expect import Fact, at_least, between, define_value_match, tool_match
from tests.support.agents import call, turn


def judge(match, *turns):
    result = match.evaluate(list(turns))
    return str(result.state), result.reason, result.explanation


# -- succeeded -------------------------------------------------------------------------------
def test_succeeded_when_every_turn_completed():
    assert judge(Succeeded(), turn(), turn())[0] == "matched"


@pytest.mark.parametrize("status", ["failed", "waiting"])
def test_succeeded_mismatched_when_some_turn_failed_or_waits(status):
    state, _, text = judge(Succeeded(), turn(), turn(status=status, ordinal=1))
    assert state == "mismatched" and f"turn 1 {status}" in text


def test_succeeded_mismatched_on_a_scope_without_turns():
    assert judge(Succeeded())[0] == "mismatched"


def test_succeeded_ignores_failed_tool_calls_and_unobserved_coverage():
    assert judge(Succeeded(), turn(call("x", status="failed")), turn(observed=False))[0] == "matched"


# -- called_tool -----------------------------------------------------------------------------
def test_called_tool_by_name_at_least_once():
    assert judge(called_tool_match("search"), turn(call("search")))[0] == "matched"
    assert judge(called_tool_match("search"), turn(call("other")))[0] == "mismatched"


def test_called_tool_exact_count_explanation_names_the_calls_that_decided():
    m = called_tool_match(tool_match("refund", input={"order": "A1"}), 1)
    scope = [turn(call("search"), call("lookup"), ordinal=0),
             turn(call("refund", {"order": "A1"}), call("x"), call("refund", {"order": "A1"}), ordinal=1)]
    result = m.evaluate(scope)
    assert str(result.state) == "mismatched"
    assert result.explanation == (
        "expected exactly 1 call of tool_match('refund', input={'order': 'A1'}), counted 2: #3, #5"
    )
    assert ScopeMatch.pointed(result) == [[1, 0], [1, 2]]


def test_called_tool_count_match_between():
    scope = [turn(call("s"), call("s"))]
    assert judge(called_tool_match("s", between(1, 3)), *scope)[0] == "matched"
    assert judge(called_tool_match("s", at_least(3)), *scope)[0] == "mismatched"


def test_called_tool_found_one_decides_despite_unobserved_turns():
    assert judge(called_tool_match("s"), turn(call("s")), turn(observed=False))[0] == "matched"


def test_called_tool_none_found_with_an_unobserved_turn_is_unavailable_tool_calls_unobserved():
    state, reason, _ = judge(called_tool_match("s"), turn(call("x")), turn(observed=False))
    assert (state, reason) == ("unavailable", "tool-calls-unobserved")


def test_called_tool_exact_count_reached_with_unobserved_turns_is_unavailable():
    state, reason, _ = judge(called_tool_match("s", 1), turn(call("s")), turn(observed=False))
    assert (state, reason) == ("unavailable", "tool-calls-unobserved")


def test_called_tool_exact_count_already_exceeded_is_mismatched_despite_unobserved_turns():
    state, _, text = judge(called_tool_match("s", 1), turn(call("s"), call("s")), turn(observed=False))
    assert state == "mismatched" and "counted 2: #1, #2" in text


def test_partial_coverage_counts_reported_calls_of_an_unobserved_turn():
    # A turn that did not observe tool calls but still reported one: that call happened.
    assert judge(called_tool_match("s"), turn(call("s"), observed=False))[0] == "matched"
    state, reason, _ = judge(called_tool_match("s", 1), turn(call("s"), observed=False))
    assert (state, reason) == ("unavailable", "tool-calls-unobserved")


def test_unknown_per_call_match_makes_the_count_an_interval():
    maybe = define_value_match(name="maybe", evaluate=lambda v: Fact.unavailable("arg-unknown"))
    m = called_tool_match(tool_match("s", input=maybe), 1)
    state, reason, _ = judge(m, turn(call("s", 1)))
    assert (state, reason) == ("unavailable", "arg-unknown")
    assert judge(called_tool_match(tool_match("s", input=maybe), at_least(0)), turn(call("s")))[0] == "matched"
    state, _, _ = judge(called_tool_match(tool_match("s", input=maybe), at_least(2)), turn(call("s")))
    assert state == "mismatched"


# -- not_called_tool ---------------------------------------------------------------------------
def test_not_called_tool_matched_only_with_complete_coverage():
    assert judge(called_tool_match("refund", 0), turn(call("search")))[0] == "matched"
    state, reason, _ = judge(called_tool_match("refund", 0), turn(call("search")), turn(observed=False))
    assert (state, reason) == ("unavailable", "tool-calls-unobserved")


def test_not_called_tool_mismatched_when_seen_even_with_unobserved_turns():
    state, _, text = judge(called_tool_match("refund", 0), turn(call("a"), call("refund")), turn(observed=False))
    assert state == "mismatched"
    assert text.startswith("expected no call of tool_match('refund'), counted 1: #2")


def test_a_text_only_adapter_never_proves_a_tool_was_not_called():
    state, reason, _ = judge(called_tool_match("refund", 0), turn(observed=False))
    assert (state, reason) == ("unavailable", "tool-calls-unobserved")


# -- tool_order -----------------------------------------------------------------------------
def test_tool_order_allows_other_calls_between():
    scope = [turn(call("search"), call("noise")), turn(call("refund"))]
    state, _, text = judge(tool_order_match(["search", "refund"]), *scope)
    assert state == "matched" and "#1" in text and "#3" in text


def test_tool_order_wrong_order_with_complete_coverage_is_mismatched():
    state, _, text = judge(tool_order_match(["search", "refund"]), turn(call("refund"), call("search")))
    assert state == "mismatched"
    assert "no tool_match('refund') after that" in text


def test_tool_order_not_found_with_unobserved_turn_is_unavailable():
    state, reason, _ = judge(tool_order_match(["search", "refund"]), turn(call("search")), turn(observed=False))
    assert (state, reason) == ("unavailable", "tool-calls-unobserved")


def test_tool_order_found_decides_despite_unobserved_turns():
    scope = [turn(call("search"), observed=False), turn(call("refund"))]
    assert judge(tool_order_match(["search", "refund"]), *scope)[0] == "matched"


def test_tool_order_unknown_per_call_results_leave_it_unavailable():
    maybe = define_value_match(name="maybe", evaluate=lambda v: Fact.unavailable("arg-unknown"))
    state, _, _ = judge(tool_order_match([tool_match("a", input=maybe), "b"]), turn(call("a"), call("b")))
    assert state == "unavailable"


def test_tool_order_rejects_a_bare_name():
    with pytest.raises(TypeError):
        tool_order_match("search")


# -- max_tool_calls -------------------------------------------------------------------------
def test_max_tool_calls_complete():
    assert judge(MaxToolCalls(2), turn(call("a"), call("b")))[0] == "matched"
    state, _, text = judge(MaxToolCalls(1), turn(call("a"), call("b")))
    assert state == "mismatched" and text == "expected at most 1 tool call(s), counted 2: #1, #2"


def test_max_tool_calls_already_exceeded_decides_despite_unobserved_turns():
    assert judge(MaxToolCalls(1), turn(call("a"), call("b")), turn(observed=False))[0] == "mismatched"


def test_max_tool_calls_within_bound_with_unobserved_turn_is_unavailable():
    state, reason, _ = judge(MaxToolCalls(5), turn(call("a")), turn(observed=False))
    assert (state, reason) == ("unavailable", "tool-calls-unobserved")


def test_max_tool_calls_points_at_the_calls_over_the_bound():
    result = MaxToolCalls(1).evaluate([turn(call("a"), call("b"), call("c"), ordinal=4)])
    assert ScopeMatch.pointed(result) == [[4, 1], [4, 2]]


def test_max_tool_calls_rejects_a_negative_bound():
    with pytest.raises(TypeError):
        max_tool_calls_match(-1)


# -- no_failed_actions -------------------------------------------------------------------------
@pytest.mark.parametrize("status", ["failed", "rejected"])
def test_no_failed_actions_mismatched_by_a_failed_or_rejected_call_even_if_recovered(status):
    scope = [turn(call("pay", status=status), call("pay"))]
    state, _, text = judge(NoFailedActions(), *scope)
    assert state == "mismatched" and f"#1 pay {status}" in text
    assert judge(Succeeded(), *scope)[0] == "matched"


def test_no_failed_actions_matched_with_complete_coverage_and_pending_calls():
    assert judge(NoFailedActions(), turn(call("a"), call("b", status="pending")))[0] == "matched"


def test_no_failed_actions_unobserved_is_unavailable_unless_a_failure_was_seen():
    state, reason, _ = judge(NoFailedActions(), turn(call("a")), turn(observed=False))
    assert (state, reason) == ("unavailable", "tool-calls-unobserved")
    assert judge(NoFailedActions(), turn(call("a", status="failed"), observed=False))[0] == "mismatched"


# -- scopes ----------------------------------------------------------------------------------
def test_a_single_turn_is_a_scope():
    assert str(called_tool_match("a").evaluate(turn(call("a"))).state) == "matched"


def test_an_empty_scope_has_complete_coverage_for_tool_assertions():
    assert judge(called_tool_match("a", 0))[0] == "matched"
    assert judge(MaxToolCalls(0))[0] == "matched"
