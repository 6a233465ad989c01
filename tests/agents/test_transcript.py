"""Transcript records (tables `turns` / `events`): redacted, trimmed at a documented bound."""

from __future__ import annotations

import json

from niceeval_cli import AgentError, Event, Message, ToolCall, Turn, Usage
from niceeval_cli.authoring._transcript import JSON_LIMIT, TEXT_LIMIT, transcript_records


def test_turns_and_events_become_records_in_order():
    turns = [
        Turn("q1", "a1", events=[Message("assistant", "a1"), ToolCall("s", {"q": 1}, {"hits": 2}, id="c1"),
                                 AgentError("oops", kind="rate"), Event("skill", {"n": "pdf"})],
             usage=Usage(3, 4, cost_usd=0.01), elapsed_ms=12.34567, observed=frozenset({"tool_calls", "messages"})),
        Turn("q2", "a2", status="waiting"),
    ]
    records = transcript_records("A1", turns)
    assert [(r.ordinal, r.session, r.input, r.message, r.status) for r in records] == [
        (0, "default", "q1", "a1", "completed"), (1, "default", "q2", "a2", "waiting")]
    first = records[0]
    assert json.loads(first.observed) == ["messages", "tool_calls"]
    assert (first.input_tokens, first.output_tokens, first.cost_usd, first.elapsed_ms) == (3, 4, 0.01, 12.346)
    assert [(e.seq, e.kind) for e in first.events] == [(0, "message"), (1, "tool_call"), (2, "error"), (3, "skill")]
    call = first.events[1]
    assert (call.name, json.loads(call.input), json.loads(call.output), call.status) == (
        "s", {"q": 1}, {"hits": 2}, "completed")
    assert (first.events[2].name, first.events[2].text) == ("rate", "oops")
    assert json.loads(first.events[3].input) == {"n": "pdf"}
    assert records[1].observed == "[]" and records[1].events == ()


def test_long_texts_are_trimmed_saying_how_many_characters_were_left_out():
    long = "x" * (TEXT_LIMIT + 1234)
    record = transcript_records("A", [Turn(long, "ok")])[0]
    assert record.input == "x" * TEXT_LIMIT + "… [+1234 chars]"


def test_long_json_stays_valid_within_the_bound():
    big = {"blob": "y" * (JSON_LIMIT * 2)}
    event = transcript_records("A", [Turn("q", "a", events=[ToolCall("t", big)])])[0].events[0]
    assert len(event.input.encode()) <= JSON_LIMIT
    assert "bytes trimmed" in json.loads(event.input)["blob"]


def test_secrets_are_redacted_in_texts_and_tool_payloads():
    turn = Turn("my key is sk-abcdefghijklmnopqrstuv", "uses TOPSECRET",
                events=[ToolCall("http", {"headers": {"Authorization": "Bearer abc.def"}}, "TOPSECRET")])
    record = transcript_records("A", [turn], secrets=["TOPSECRET"])[0]
    assert "sk-abc" not in record.input and "[redacted]" in record.input
    assert record.message == "uses [redacted]"
    call = record.events[0]
    assert "abc.def" not in call.input and "TOPSECRET" not in call.output


def test_lone_surrogates_are_replaced_so_the_text_can_be_stored():
    record = transcript_records("A", [Turn("bad \ud800 text", "ok")])[0]
    assert record.input == "bad \ufffd text"
    record.input.encode("utf-8")
