"""`tool_match` and `json_match` (agents.md, "Matches for events"): pure, three-valued."""

from __future__ import annotations

from niceeval_cli import Fact, Material, ToolCall
from niceeval_cli.expect import (
    at_least,
    count_where,
    define_value_match,
    equals,
    includes,
    json_match,
    not_,
    tool_match,
)
from tests.support.agents import call


def state(match, candidate) -> str:
    return str(match.evaluate(candidate).state)


def test_json_match_allows_extra_keys_recursively():
    m = json_match({"order": "A1", "items": [{"sku": "x"}]})
    assert state(m, {"order": "A1", "items": [{"sku": "x", "qty": 2}], "note": "hi"}) == "matched"


def test_json_match_names_the_path_that_decided_a_mismatch():
    result = json_match({"order": {"id": "A1"}}).evaluate({"order": {"id": "B2"}})
    assert str(result.state) == "mismatched"
    assert "order.id" in result.explanation and "'B2'" in result.explanation


def test_json_match_missing_key_is_a_mismatch():
    assert state(json_match({"order": "A1"}), {"other": 1}) == "mismatched"


def test_json_match_lists_need_equal_length():
    assert state(json_match([1, 2]), [1, 2]) == "matched"
    assert state(json_match([1, 2]), [1, 2, 3]) == "mismatched"
    assert state(json_match([1, 2]), (1, 2)) == "matched"


def test_json_match_nested_matches_are_evaluated():
    assert state(json_match({"q": includes("refund")}), {"q": "a refund please"}) == "matched"
    assert state(json_match({"n": at_least(2)}), {"n": 1}) == "mismatched"


def test_json_match_true_is_not_one():
    assert state(json_match(1), True) == "mismatched"
    assert state(json_match(True), True) == "matched"
    assert state(json_match(1), 1.0) == "matched"


def test_json_match_unknown_nested_value_is_unavailable_unless_another_key_mismatches():
    unknown = define_value_match(name="unknown", evaluate=lambda v: Fact.unavailable("not-yet"))
    result = json_match({"a": unknown, "b": 1}).evaluate({"a": 0, "b": 1})
    assert (str(result.state), result.reason) == ("unavailable", "not-yet")
    assert state(json_match({"a": unknown, "b": 1}), {"a": 0, "b": 2}) == "mismatched"


def test_json_match_on_an_unavailable_fact_is_unavailable():
    result = json_match({"a": 1}).evaluate(Fact.unavailable("gone"))
    assert (str(result.state), result.reason) == ("unavailable", "gone")


def test_tool_match_every_condition_holds_on_the_same_call():
    m = tool_match("refund", input={"order": "A1"}, status="completed")
    assert state(m, call("refund", {"order": "A1", "amount": 5})) == "matched"
    assert state(m, call("refund", {"order": "B2"})) == "mismatched"
    assert state(m, call("search", {"order": "A1"})) == "mismatched"
    assert state(m, call("refund", {"order": "A1"}, status="failed")) == "mismatched"


def test_tool_match_name_may_be_a_match_and_output_a_value():
    m = tool_match(includes("search"), output=[1, 2])
    assert state(m, call("web_search", output=[1, 2])) == "matched"
    assert state(m, call("web_search", output=[1])) == "mismatched"


def test_tool_match_input_scalar_means_json_match_of_it():
    assert state(tool_match("echo", input="raw text"), call("echo", "raw text")) == "matched"
    assert state(tool_match("echo", input="raw text"), call("echo", {"t": "raw text"})) == "mismatched"


def test_tool_match_on_something_that_is_not_a_call_is_a_mismatch():
    assert state(tool_match("x"), "x") == "mismatched"


def test_tool_match_describes_itself_as_agents_md_writes_it():
    assert tool_match("refund", input={"order": "A1"}).describe() == "tool_match('refund', input={'order': 'A1'})"


def test_tool_match_composes_with_count_where_and_not():
    calls = [call("search"), call("search"), call("refund")]
    assert state(count_where(tool_match("search"), at_least(2)), calls) == "matched"
    assert state(count_where(tool_match("search"), equals(3)), calls) == "mismatched"
    assert state(count_where(not_(tool_match("search")), equals(1)), calls) == "matched"


def test_count_where_over_a_partial_tool_call_material_is_three_valued():
    partial = Material.partial([call("search")], "tool-calls-unobserved")
    assert state(count_where(tool_match("search"), at_least(1)), partial) == "matched"
    assert state(count_where(tool_match("search"), equals(1)), partial) == "unavailable"


def test_tool_match_config_is_json():
    import json

    m = tool_match("refund", input={"order": includes("A")})
    assert json.loads(json.dumps(m.config)) == {"name": "refund", "input": {"order": "includes('A')"}}
    assert isinstance(call("x"), ToolCall)
