"""A mismatch shows what it compared: `count_where` over tool calls lists the calls of the named
tool that did not match, observed and expected values side by side, and `json_match` says when a
value is text holding JSON (expect/_tools.py)."""

from __future__ import annotations

from niceeval_cli.expect import at_least, count_where, json_match, tool_match

CALLS = [
    {"name": "lookup", "output": '{"status": "shipped"}'},
    {"name": "other", "output": {"status": "shipped"}},
    {"name": "lookup", "output": {"status": "shipped"}},
]


def test_count_where_shows_the_near_misses_it_compared() -> None:
    result = count_where(tool_match("lookup", output={"status": "delivered"}), at_least(1)).evaluate(CALLS)
    assert result.state == "mismatched"
    text = result.explanation
    assert "compared: #1: 'lookup': output: expected an object {'status': 'delivered'}, got" in text
    assert "#3: 'lookup': output: at status: expected 'delivered', got 'shipped'" in text
    assert "'other'" not in text  # a call of another tool is not what was asked about


def test_json_match_says_when_the_value_is_text_holding_json() -> None:
    result = json_match({"status": "shipped"}).evaluate('{"status": "shipped"}')
    assert result.state == "mismatched" and "text that holds JSON, not an object" in result.explanation
    assert "text that holds JSON" not in json_match({"a": 1}).evaluate("plain words").explanation
