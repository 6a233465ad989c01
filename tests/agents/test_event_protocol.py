"""Reading the event protocol (command ndjson, http event lists, OpenAI replies) and the tool loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from niceeval_cli import AgentError, Message, ToolCall, Usage
from niceeval_cli.adapters._events import (
    EventProtocolError,
    events_from_list,
    parse_chat_reply,
    turn_from_chat_reply,
    turn_from_ndjson,
)
from niceeval_cli.adapters._tool_loop import run_tool_loop


def ndjson(*objs: Any) -> str:
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n"


def test_ndjson_events_then_final_line_make_a_turn_observing_messages_and_tool_calls():
    out = ndjson({"type": "tool_call", "name": "search", "input": {"q": "x"}, "output": [1]},
                 "", {"type": "message", "role": "assistant", "text": "found"},
                 {"type": "final", "message": "done", "status": "completed",
                  "usage": {"input_tokens": 5, "output_tokens": 2, "cost_usd": 0.001}})
    turn = turn_from_ndjson("q", out, "cmd")
    assert turn.events == (ToolCall("search", {"q": "x"}, [1]), Message("assistant", "found"))
    assert (turn.message, turn.status, turn.observed) == ("done", "completed", {"messages", "tool_calls"})
    assert turn.usage == Usage(5, 2, cost_usd=0.001)


@pytest.mark.parametrize("out, words", [
    (ndjson({"type": "tool_call", "name": "a"}, "{not json", {"type": "final", "message": ""}),
     "line 2 of stdout is not JSON"),
    (ndjson({"type": "tool_call"}, {"type": "final", "message": ""}), "line 1 of stdout"),
    (ndjson({"type": "final", "message": ""}, {"type": "message", "text": "late"}), "line 2 of stdout comes after"),
    (ndjson({"type": "tool_call", "name": "a"}), "without the final line"),
    (ndjson({"type": "final", "message": "", "status": "ok"}), "the final line \\(line 1\\)"),
])
def test_ndjson_mistakes_name_the_line(out, words):
    with pytest.raises(EventProtocolError, match=words):
        turn_from_ndjson("q", out, "cmd")


def test_event_list_errors_name_the_index():
    with pytest.raises(EventProtocolError, match=r"events\[1\]"):
        events_from_list([{"type": "error", "text": "x"}, {"type": "tool_call"}], "events")
    assert events_from_list([{"type": "error", "text": "x"}], "events") == (AgentError("x"),)


def completion(content: Any = None, calls: list[dict[str, Any]] | None = None, usage: dict[str, Any] | None = None):
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = calls
    body: dict[str, Any] = {"choices": [{"message": msg, "finish_reason": "tool_calls" if calls else "stop"}]}
    if usage is not None:
        body["usage"] = usage
    return body


def fn_call(name: str, arguments: str, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_tool_call_reply_with_null_content_is_not_an_error():
    parsed = parse_chat_reply(completion(None, [fn_call("search", '{"q": 1}')]), "reply")
    assert parsed.content is None and len(parsed.tool_calls) == 1
    turn = turn_from_chat_reply("q", completion(None, [fn_call("search", '{"q": 1}')]), "reply")
    assert turn.events == (ToolCall("search", {"q": 1}, status="pending", id="c1"),)
    assert (turn.message, turn.status) == ("", "waiting")


def test_arguments_that_are_not_json_stay_raw_text():
    turn = turn_from_chat_reply("q", completion(None, [fn_call("echo", "not json")]), "reply")
    assert turn.events[0].input == "not json"
    deep = "[" * 100_000 + "]" * 100_000  # JSON, nested past what the parser reads
    turn = turn_from_chat_reply("q", completion(None, [fn_call("echo", deep)]), "reply")
    assert turn.events[0].input == deep


class Script:
    """A fake model: answers `post(messages)` from a list, recording what it was sent."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.sent: list[list[dict[str, Any]]] = []

    async def __call__(self, messages: list[dict[str, Any]]) -> Any:
        self.sent.append([dict(m) for m in messages])
        return self.replies.pop(0)


def loop(script: Script, handlers: Any, max_steps: int = 8):
    return asyncio.run(run_tool_loop("refund A1", [{"role": "system", "content": "be kind"}], script,
                                     handlers, max_steps))


USAGE = {"prompt_tokens": 10, "completion_tokens": 2}


def test_the_loop_runs_handlers_sends_results_back_and_sums_usage():
    script = Script(completion(None, [fn_call("lookup", '{"order": "A1"}')], USAGE),
                    completion("Refunded.", usage=USAGE))
    out = loop(script, {"lookup": lambda args: {"order": args["order"], "paid": 30}})
    assert [e.name for e in out.turn.events if isinstance(e, ToolCall)] == ["lookup"]
    call = out.turn.tool_calls.items[0]
    assert (call.status, call.output, call.input) == ("completed", {"order": "A1", "paid": 30}, {"order": "A1"})
    assert out.turn.message == "Refunded." and out.turn.status == "completed"
    assert out.turn.usage == Usage(20, 4)
    tool_msg = script.sent[1][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "c1"
    assert json.loads(tool_msg["content"]) == {"order": "A1", "paid": 30}
    assert script.sent[1][-2]["tool_calls"][0]["function"]["name"] == "lookup"  # the call is in the history
    assert [m["role"] for m in out.history] == ["system", "user", "assistant", "tool", "assistant"]


def test_a_handler_exception_fails_that_call_and_is_sent_back():
    def boom(args: Any) -> Any:
        raise RuntimeError("db down")

    script = Script(completion(None, [fn_call("lookup", "{}")]), completion("Sorry."))
    out = loop(script, {"lookup": boom})
    call = out.turn.tool_calls.items[0]
    assert (call.status, call.error) == ("failed", "RuntimeError: db down")
    assert "db down" in script.sent[1][-1]["content"]
    assert out.turn.status == "completed"


def test_one_callable_handles_every_tool_by_name():
    seen = []
    script = Script(completion(None, [fn_call("a", "1", "x"), fn_call("b", "2", "y")]), completion("ok"))
    out = loop(script, lambda name, args: seen.append((name, args)) or "done")
    assert seen == [("a", 1), ("b", 2)]
    assert [c.name for c in out.turn.tool_calls] == ["a", "b"]


def test_an_unknown_tool_in_a_handler_dict_is_a_failed_call():
    script = Script(completion(None, [fn_call("nope", "{}")]), completion("ok"))
    out = loop(script, {"lookup": lambda a: a})
    assert out.turn.tool_calls.items[0].status == "failed"
    assert "no handler for tool 'nope'" in out.turn.tool_calls.items[0].error


def test_reaching_max_steps_fails_the_turn():
    script = Script(*[completion(None, [fn_call("again", "{}", f"c{i}")]) for i in range(3)])
    out = loop(script, {"again": lambda a: "more"}, max_steps=3)
    assert out.turn.status == "failed"
    assert len(out.turn.tool_calls.items) == 3
    assert any(isinstance(e, AgentError) and "max_steps=3" in e.text for e in out.turn.events)


def test_without_handlers_calls_are_pending_and_the_turn_waits():
    script = Script(completion(None, [fn_call("lookup", "{}")]))
    out = loop(script, None)
    assert out.turn.tool_calls.items[0].status == "pending"
    assert out.turn.status == "waiting"
    assert out.history[-1]["role"] == "tool"  # answered, so the next t.send is a valid conversation


def test_usage_is_unknown_when_some_step_did_not_report_it():
    script = Script(completion(None, [fn_call("a", "{}")], USAGE), completion("ok"))
    assert loop(script, {"a": lambda x: x}).turn.usage == Usage(None, None)
