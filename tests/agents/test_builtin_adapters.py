"""The built-in adapters report events (agents.md, "Built-in adapters report events"), each
against a real subprocess or the loopback OpenAI-compatible server, through the real CLI."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys

import pytest

from tests.support.loopback import JudgeServer, Reply

KEY_ENV = "NICEEVAL_AGENTS_TEST_KEY"
KEY = "sk-agents-test-key-0123456789abcdef"

CHECKS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import is_defined, tool_match

@define_eval()
async def agent(t):
    turn = await t.send("refund A1")
    t.check(turn.message, is_defined()).label("message")
    t.called_tool(tool_match("refund", input={"order": "A1"})).label("refund")
    t.not_called_tool("cancel").label("no cancel")
    t.no_failed_actions().label("no failures")
    t.succeeded().label("succeeded")
"""


def states(sealed) -> dict[str, tuple[str, str | None]]:
    return {r["label"]: (r["state"], r["reason"]) for r in sealed.results}


# -- python -----------------------------------------------------------------------------------
PY_AGENT = """
def reply(message, mode="events"):
    if mode == "text":
        return "refunded"
    events = [{"type": "tool_call", "name": "refund", "input": {"order": "A1"}, "output": {"ok": True}},
              {"type": "message", "role": "assistant", "text": "refunded"}]
    if mode == "failed":
        events[0]["status"] = "failed"
        return {"message": "sorry", "events": events, "status": "failed"}
    usage = {"input_tokens": 3, "output_tokens": 1, "cost_usd": 0.002}
    return {"message": "refunded", "events": events, "usage": usage}
"""


def py_toml(mode: str) -> str:
    return (f'[experiments.py]\nadapter = "python"\n[experiments.py.options]\ncallable = "agent:reply"\n'
            f'kwargs = {{ mode = "{mode}" }}\n')


def test_python_dict_events_are_observed_tool_calls(run_one):
    sealed = run_one(CHECKS, toml=py_toml("events"), files={"agent.py": PY_AGENT})
    assert set(states(sealed).values()) == {("matched", None)}, sealed.results
    assert sealed.attempt["state"] == "passed"


def test_python_failed_status_and_failed_call(run_one):
    sealed = run_one(CHECKS, toml=py_toml("failed"), files={"agent.py": PY_AGENT})
    got = states(sealed)
    assert got["succeeded"][0] == "mismatched" and got["no failures"][0] == "mismatched"
    assert got["refund"] == ("matched", None)


def test_python_text_reply_observes_nothing(run_one):
    sealed = run_one(CHECKS, toml=py_toml("text"), files={"agent.py": PY_AGENT})
    got = states(sealed)
    assert got["refund"] == ("unavailable", "tool-calls-unobserved")
    assert got["no cancel"] == ("unavailable", "tool-calls-unobserved")
    assert got["succeeded"] == ("matched", None)


def test_python_callable_with_a_session_parameter_gets_the_session(run_one):
    sealed = run_one(
        """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def sessions(t):
            await t.send("a")
            s = t.new_session("other")
            r = await s.send("b")
            again = await t.send("c")
            t.check(r.message, equals("other:1")).label("other")
            t.check(again.message, equals("default:2")).label("default")
        """,
        toml='[experiments.py]\nadapter = "python"\n[experiments.py.options]\ncallable = "agent:reply"\n',
        files={"agent.py": "def reply(message, session):\n"
                           "    n = session.state['n'] = session.state.get('n', 0) + 1\n"
                           "    return f'{session.id}:{n}'\n"},
    )
    assert set(states(sealed).values()) == {("matched", None)}, sealed.results


# -- command ----------------------------------------------------------------------------------
CMD_AGENT = """
import json, sys
message = sys.stdin.read()
mode = sys.argv[1]
print(json.dumps({"type": "tool_call", "name": "refund", "input": {"order": "A1"}}))
if mode == "broken":
    print("{this is not json")
print(json.dumps({"type": "message", "role": "assistant", "text": "refunded"}))
print(json.dumps({"type": "final", "message": "refunded " + message, "status": "completed",
                  "usage": {"input_tokens": 2, "output_tokens": 1}}))
"""


def cmd_toml(mode: str, output: str = "ndjson") -> str:
    argv = json.dumps([sys.executable, "agent_cmd.py", mode])
    return f'[experiments.cmd]\nadapter = "command"\n[experiments.cmd.options]\nargv = {argv}\noutput = "{output}"\n'


def test_command_ndjson_events_are_observed(run_one):
    sealed = run_one(CHECKS, toml=cmd_toml("ok"), files={"agent_cmd.py": CMD_AGENT})
    assert set(states(sealed).values()) == {("matched", None)}, (sealed.results, sealed.attempt)
    assert (sealed.attempt["input_tokens"], sealed.attempt["output_tokens"]) == (2, 1)


def test_command_malformed_ndjson_line_is_an_adapter_error_naming_the_line(run_one):
    sealed = run_one(CHECKS, toml=cmd_toml("broken"), files={"agent_cmd.py": CMD_AGENT})
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("errored", "adapter-error")
    assert "line 2 of stdout is not JSON" in sealed.attempt["error"]


def test_command_text_output_observes_nothing(run_one):
    sealed = run_one(CHECKS, toml=cmd_toml("ok", output="text"), files={"agent_cmd.py": CMD_AGENT})
    assert states(sealed)["no cancel"] == ("unavailable", "tool-calls-unobserved")



FLOODING_AGENT = """
import json, sys
sys.stdin.read()
filler = json.dumps({"type": "message", "role": "assistant", "text": "x" * 100}) + "\\n"
sys.stdout.write(filler * 30000)  # ~3.5 MiB: past the first 2 MiB kept
sys.stdout.write(json.dumps({"type": "tool_call", "name": "cancel", "input": {}}) + "\\n")
sys.stdout.write(filler * 30000)
sys.stdout.write(json.dumps({"type": "final", "message": "done"}) + "\\n")
"""


def test_command_ndjson_cut_past_the_output_bound_observes_no_call_absent(run_one):
    """stdout past 4 MiB keeps its first and last 2 MiB: a `cancel` call in the middle was lost
    while the turn still claimed every call observed, so `not_called_tool("cancel")` passed."""
    sealed = run_one(CHECKS, toml=cmd_toml("ok"), files={"agent_cmd.py": FLOODING_AGENT})
    got = states(sealed)
    assert got["no cancel"] == ("unavailable", "capture-limit-exceeded"), sealed.results
    assert got["succeeded"] == ("matched", None)
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("errored", "evidence-unavailable")

# -- http -------------------------------------------------------------------------------------
def http_toml(server: JudgeServer, extra: str) -> str:
    return (f'[experiments.web]\nadapter = "http"\n[experiments.web.options]\n'
            f'url = "{server.base_url}/chat/completions"\n{extra}\n')


def test_http_events_path_reads_the_event_list(run_one, judge_server: JudgeServer):
    judge_server.default = Reply.raw({"message": "refunded", "trace": {"events": [
        {"type": "tool_call", "name": "refund", "input": {"order": "A1"}}]}})
    sealed = run_one(CHECKS, toml=http_toml(judge_server, 'events_path = "trace.events"'))
    assert set(states(sealed).values()) == {("matched", None)}, (sealed.results, sealed.attempt)


def test_http_bad_event_in_the_list_is_an_adapter_error_naming_its_index(run_one, judge_server: JudgeServer):
    events = [{"type": "message", "text": "ok"}, {"type": "tool_call"}]
    judge_server.default = Reply.raw({"message": "x", "events": events})
    sealed = run_one(CHECKS, toml=http_toml(judge_server, 'events_path = "events"'))
    assert sealed.attempt["reason"] == "adapter-error"
    assert "[1]" in sealed.attempt["error"] and "name" in sealed.attempt["error"]


def test_http_openai_format_reads_tool_calls_with_null_content(run_one, judge_server: JudgeServer):
    call = {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": '{"order": "A1"}'}}
    judge_server.default = Reply.completion({"content": None, "tool_calls": [call]}, finish_reason="tool_calls")
    sealed = run_one(CHECKS, toml=http_toml(judge_server, 'format = "openai"'))
    got = states(sealed)
    assert got["refund"] == ("matched", None) and got["no cancel"] == ("matched", None)
    assert got["succeeded"][0] == "mismatched"  # the model waits for the tool result


# -- openai-chat --------------------------------------------------------------------------------
TOOLS = """
CALLS = []

def lookup(arguments):
    CALLS.append(arguments)
    return {"order": arguments["order"], "paid": 30}

def broken(arguments):
    raise RuntimeError("database is down")

HANDLERS = {"lookup": lookup, "refund": lambda arguments: {"refunded": arguments.get("amount")},
            "broken": broken}
SCHEMAS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
"""


def fn(name: str, arguments: str, call_id: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_reply(*calls: dict, usage: dict | None = None) -> Reply:
    return Reply.completion({"content": None, "tool_calls": list(calls)}, finish_reason="tool_calls",
                            usage=usage or {"prompt_tokens": 10, "completion_tokens": 5})


def chat_toml(server: JudgeServer, extra: str = "") -> str:
    server.listed = ["m"]  # the fake endpoint lists its model, as OpenAI-compatible servers do: no preflight ping
    return (f'[experiments.chat]\nadapter = "openai-chat"\nmodel = "m"\n[experiments.chat.options]\n'
            f'base_url = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\n{extra}\n')


@pytest.fixture
def chat_key(monkeypatch: pytest.MonkeyPatch, judge_server: JudgeServer) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def chat_requests(server: JudgeServer) -> list[dict]:
    return [r.json for r in server.requests if isinstance(r.json, dict) and "messages" in r.json]


def test_openai_chat_tool_loop_runs_handlers_and_sums_usage(run_one, judge_server: JudgeServer, chat_key):
    judge_server.enqueue(
        tool_reply(fn("lookup", '{"order": "A1"}', "c1")),
        tool_reply(fn("refund", '{"order": "A1", "amount": 30}', "c2")),
        Reply.text("Refunded 30.", usage={"prompt_tokens": 20, "completion_tokens": 4}),
    )
    sealed = run_one(
        """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals, tool_match

        @define_eval()
        async def loop(t):
            turn = await t.send("refund A1")
            t.check(turn.message, equals("Refunded 30.")).label("message")
            turn.tool_order(["lookup", tool_match("refund", input={"amount": 30})]).label("order")
            turn.called_tool(tool_match("lookup", output={"paid": 30})).label("output recorded")
            t.max_tool_calls(2).label("max")
            t.succeeded().label("succeeded")
        """,
        toml=chat_toml(judge_server, 'tools = "tools:SCHEMAS"\ntool_handlers = "tools:HANDLERS"'),
        files={"tools.py": TOOLS},
    )
    assert set(states(sealed).values()) == {("matched", None)}, sealed.results
    assert (sealed.attempt["input_tokens"], sealed.attempt["output_tokens"]) == (40, 14)
    requests = chat_requests(judge_server)
    assert len(requests) == 3 and requests[0]["tools"][0]["function"]["name"] == "lookup"
    last = requests[2]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "assistant", "tool"]
    assert json.loads(last[2]["content"]) == {"order": "A1", "paid": 30}
    assert last[1]["tool_calls"][0]["id"] == "c1" and last[2]["tool_call_id"] == "c1"


def test_openai_chat_handler_exception_fails_the_call_and_is_sent_back(run_one, judge_server: JudgeServer, chat_key):
    judge_server.enqueue(tool_reply(fn("broken", "{}", "c1")), Reply.text("Sorry, try later."))
    sealed = run_one(
        """
        from niceeval_cli import define_eval

        @define_eval()
        async def recover(t):
            await t.send("hi")
            t.no_failed_actions().label("no failures")
            t.succeeded().label("succeeded")
        """,
        toml=chat_toml(judge_server, 'tool_handlers = "tools:HANDLERS"'),
        files={"tools.py": TOOLS},
    )
    got = states(sealed)
    assert got["no failures"][0] == "mismatched" and got["succeeded"] == ("matched", None)
    sent_back = chat_requests(judge_server)[1]["messages"][-1]
    assert sent_back["role"] == "tool" and "database is down" in sent_back["content"]



def test_openai_chat_a_value_a_handler_returns_that_cannot_be_sent_back_fails_that_call(
        run_one, judge_server: JudgeServer, chat_key):
    """A handler returned an object whose repr raises: converting it for the model raised out of the
    loop and errored the whole attempt (`adapter-error`), though a handler's own exception only
    fails its call. Now the call fails, the model is told, and the turn goes on."""
    judge_server.enqueue(tool_reply(fn("odd", "{}", "c1")), Reply.text("Could not read it."))
    sealed = run_one(
        """
        from niceeval_cli import define_eval

        @define_eval()
        async def odd(t):
            await t.send("hi")
            t.no_failed_actions().label("no failures")
            t.succeeded().label("succeeded")
        """,
        toml=chat_toml(judge_server, 'tool_handlers = "odd_tools:HANDLERS"'),
        files={"odd_tools.py": "class Odd:\n    def __repr__(self):\n        raise RuntimeError('repr broke')\n\n"
                               "HANDLERS = {'odd': lambda arguments: Odd()}\n"},
    )
    assert sealed.attempt["reason"] != "adapter-error", sealed.attempt
    got = states(sealed)
    assert got["no failures"][0] == "mismatched" and got["succeeded"] == ("matched", None)
    sent_back = chat_requests(judge_server)[1]["messages"][-1]
    assert sent_back["role"] == "tool" and "cannot be sent back (RuntimeError: repr broke)" in sent_back["content"]

def test_openai_chat_max_steps_reached_fails_the_turn(run_one, judge_server: JudgeServer, chat_key):
    judge_server.default = tool_reply(fn("lookup", '{"order": "A1"}', "c"))
    sealed = run_one(
        """
        from niceeval_cli import define_eval

        @define_eval()
        async def forever(t):
            turn = await t.send("hi")
            turn.succeeded().label("succeeded")
            turn.called_tool("lookup", count=3).label("three calls")
        """,
        toml=chat_toml(judge_server, 'tool_handlers = "tools:HANDLERS"\nmax_steps = 3'),
        files={"tools.py": TOOLS},
    )
    got = states(sealed)
    assert got["succeeded"][0] == "mismatched" and got["three calls"] == ("matched", None)
    assert len(chat_requests(judge_server)) == 3


def test_openai_chat_a_reply_of_too_many_tool_calls_fails_the_turn_and_runs_none(
        project, run_one, judge_server: JudgeServer, chat_key):
    """A model (or an endpoint) that asks for more than 1 000 tool calls in one reply: the turn is
    `failed` with an agent error saying so, no handler runs, and a next t.send is still a valid
    conversation (the reply's unanswered calls are not in the history). 1 000 calls still run."""
    many = [fn("lookup", '{"order": "A1"}', f"c{i}") for i in range(1001)]
    judge_server.enqueue(tool_reply(*many), Reply.text("next answer"),
                         tool_reply(*many[:1000]), Reply.text("done"))
    sealed = run_one(
        """
        import tools
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def flood(t):
            turn = await t.send("hi")
            turn.succeeded().label("flooded turn succeeded")
            t.check(len(tools.CALLS), equals(0)).label("no handler ran")
            again = await t.send("next")
            t.check(again.message, equals("next answer")).label("the conversation goes on")
            last = await t.send("a thousand")
            last.called_tool("lookup", count=1000).label("a thousand run")
        """,
        toml=chat_toml(judge_server, 'tool_handlers = "tools:HANDLERS"'),
        files={"tools.py": TOOLS},
    )
    got = states(sealed)
    assert got["flooded turn succeeded"][0] == "mismatched", got
    assert got["no handler ran"] == ("matched", None) and got["the conversation goes on"] == ("matched", None), got
    assert got["a thousand run"] == ("matched", None), got
    with contextlib.closing(sqlite3.connect(project.root / ".niceeval" / "results.db")) as db:
        errors = db.execute("SELECT turn_ordinal, name, text FROM events WHERE attempt_id = ? AND kind = 'error'",
                            [sealed.attempt["id"]]).fetchall()
    assert errors == [(0, "too-many-tool-calls", "the model asked for 1001 tool calls in one reply; NiceEval runs "
                                                 "at most 1000 a reply, so none of them was run")]
    second = chat_requests(judge_server)[1]["messages"]
    assert [m["role"] for m in second] == ["user", "user"]  # the flooded reply is not in the history


def test_openai_chat_without_handlers_records_pending_calls_and_keeps_them_in_the_history(
        run_one, judge_server: JudgeServer, chat_key):
    judge_server.enqueue(tool_reply(fn("lookup", "not json", "c1")), Reply.text("ok"))
    sealed = run_one(
        """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import tool_match

        @define_eval()
        async def pending(t):
            turn = await t.send("hi")
            turn.called_tool(tool_match("lookup", input="not json", status="pending")).label("pending raw input")
            await t.send("next")
        """,
        toml=chat_toml(judge_server),
    )
    assert states(sealed)["pending raw input"] == ("matched", None), sealed.results
    second = chat_requests(judge_server)[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "user"]
    assert second[1]["tool_calls"][0]["function"]["name"] == "lookup"


def test_openai_chat_sessions_keep_separate_histories(run_one, judge_server: JudgeServer, chat_key):
    judge_server.default = Reply.text("ok")
    run_one(
        """
        from niceeval_cli import define_eval

        @define_eval()
        async def two(t):
            await t.send("one")
            s = t.new_session()
            await s.send("other")
            await t.send("two")
        """,
        toml=chat_toml(judge_server),
    )
    contents = [[m["content"] for m in r["messages"]] for r in chat_requests(judge_server)]
    assert contents == [["one"], ["other"], ["one", "ok", "two"]]


def test_openai_chat_bad_tool_handlers_reference_is_a_configuration_error(project, judge_server: JudgeServer, chat_key):
    project.write("niceeval.toml", chat_toml(judge_server, 'tool_handlers = "nowhere:HANDLERS"'))
    project.write("evals/e.py", "from niceeval_cli import define_eval\n@define_eval()\ndef e(t):\n    pass\n")
    run = project.run()
    assert run.exit_code == 2, (run.stdout, run.stderr)
    assert "tool_handlers" in run.stderr + run.stdout


def test_openai_chat_inline_tools_are_sent_with_every_request(run_one, judge_server: JudgeServer, chat_key):
    judge_server.default = Reply.text("ok")
    run_one(
        """
        from niceeval_cli import define_eval

        @define_eval()
        async def inline(t):
            await t.send("hi")
        """,
        toml=chat_toml(judge_server, 'tools = [{ type = "function", function = { name = "lookup", '
                                     'parameters = { type = "object" } } }]'),
    )
    [request] = chat_requests(judge_server)
    assert request["tools"] == [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]


def test_openai_chat_a_cost_past_float_range_is_unreported_not_the_attempts_end(run_one, judge_server: JudgeServer,
                                                                                chat_key):
    """`"cost": 1e999` parses as inf: it made the turn's Usage raise, the attempt `errored
    (adapter-error)` over a reply that was fine. A cost that is no finite number is unreported."""
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "cost": 12345}}
    judge_server.default = Reply(200, json.dumps(body).replace("12345", "1e999"))
    sealed = run_one(
        """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def costly(t):
            turn = await t.send("hi")
            t.check(turn.message, equals("ok")).label("message")
        """,
        toml=chat_toml(judge_server),
    )
    assert (sealed.attempt["state"], sealed.attempt["reason"]) == ("passed", None), sealed.attempt
    assert (sealed.attempt["input_tokens"], sealed.attempt["cost_usd"]) == (3, None), sealed.attempt
