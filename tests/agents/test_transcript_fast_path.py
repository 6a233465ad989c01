"""The usual turn is stored without redacting each value (one check over all its text): the rows
must be exactly those of the careful way, value by value (`stored_text` / `stored_json`), for
any turn — clean or not, short or long, every event kind (issue 27 item 8 made the path faster)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from niceeval_cli import AgentError, Event, Message, ToolCall, Turn, Usage
from niceeval_cli._records import EventRecord
from niceeval_cli.authoring._transcript import TEXT_LIMIT, stored_json, stored_text, transcript_records

SECRETS = ("TOPSECRET",)
_PIECES = ("plain", "é", "☃", " ", "\n", '"', "TOPSECRET", "topsecret", "sk-abcdefghijklmnopqrstuv", "Bearer x.y",
           "api_key=1", "\ud800", "x" * 700)
texts = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
events = st.one_of(
    st.builds(Message, st.sampled_from(("assistant", "user", "tool")), texts),
    st.builds(ToolCall, texts.filter(bool), json_values, json_values,
              st.sampled_from(("completed", "failed")), st.none() | texts, st.none() | texts),
    st.builds(AgentError, texts, st.none() | texts),
    st.builds(Event, st.sampled_from(("span", "trace", "skill")), json_values),
)
turns = st.builds(Turn, texts, texts, st.lists(events, max_size=6), data=st.none() | json_values,
                  usage=st.none() | st.builds(Usage, st.none() | st.integers(0, 9)), elapsed_ms=st.just(1.5),
                  observed=st.just(frozenset({"tool_calls"})))


def _careful(attempt_id: str, ordinal: int, seq: int, event: object) -> EventRecord:
    t = lambda text: stored_text(text, SECRETS)  # noqa: E731
    if isinstance(event, ToolCall):
        return EventRecord(attempt_id, ordinal, seq, "tool_call", name=t(event.name),
                           input=stored_json(event.input, SECRETS), output=stored_json(event.output, SECRETS),
                           status=event.status, text=t(event.error))
    if isinstance(event, Message):
        return EventRecord(attempt_id, ordinal, seq, "message", role=event.role, text=t(event.text))
    if isinstance(event, AgentError):
        return EventRecord(attempt_id, ordinal, seq, "error", name=t(event.kind), text=t(event.text))
    assert isinstance(event, Event)
    return EventRecord(attempt_id, ordinal, seq, t(event.kind) or event.kind, input=stored_json(event.data, SECRETS))


@settings(max_examples=300, deadline=None)
@given(turns)
def test_a_turn_is_stored_exactly_as_the_careful_way_stores_each_value(turn: Turn) -> None:
    (record,) = transcript_records("A1", [turn], SECRETS)
    assert (record.input, record.message, record.data) == (
        stored_text(turn.input, SECRETS), stored_text(turn.message, SECRETS), stored_json(turn.data, SECRETS))
    assert record.events == tuple(_careful("A1", 0, seq, event) for seq, event in enumerate(turn.events))
    for text in (record.input, record.message):
        assert text is None or len(text) <= TEXT_LIMIT + 40
    for event in record.events:
        for value in (event.input, event.output):
            assert value is None or json.loads(value) is not None or value == "null"


def test_a_turn_with_values_longer_than_both_limits_is_stored_as_the_careful_way() -> None:
    """A long turn leaves its values longer than both limits out of the one check (they are stored
    the careful way whatever it says): a secret in one of them, or in a short value beside them,
    is still redacted, and every row is the careful way's."""
    long = "x" * 70_000
    for turn in (
        Turn("go", "done", [ToolCall("read", {"p": 1}, long + "TOPSECRET"), Message("assistant", "plain")]),
        Turn("go", "done", [ToolCall("read", {"p": 1}, long),
                            Message("assistant", "the key is TOPSECRET, keep it out of the logs")]),
        Turn("go " + "y" * 30_000, "done", [ToolCall("read", {"p": 1}, [long]), Message("assistant", "plain")]),
    ):
        (record,) = transcript_records("A1", [turn], SECRETS)
        assert (record.input, record.message) == (stored_text(turn.input, SECRETS), stored_text(turn.message, SECRETS))
        assert record.events == tuple(_careful("A1", 0, seq, event) for seq, event in enumerate(turn.events))
        assert all("TOPSECRET" not in (e.output or "") + (e.text or "") for e in record.events)
