"""Hostile text in events (escape sequences, lone surrogates, huge or deeply nested values) never
aborts a run: the attempt seals, what cannot be stored is replaced or trimmed, visibly."""

from __future__ import annotations

AGENT = '''
from niceeval_cli import Message, ToolCall, Turn, define_adapter

def deep(n):
    value = "bottom"
    for _ in range(n):
        value = [value]
    return value

async def send(ctx, message):
    return Turn(input=message, message="\\x1b[2J bad \\ud800 reply " + "y" * 3_000_000,
                events=[ToolCall("lookup\\ud800", input=deep(50_000), output={"blob": "z" * 2_000_000}),
                        Message("assistant", "\\x1b]0;title\\x07 \\udfff")])

adapter = define_adapter(name="hostile", send=send, observes=("messages", "tool_calls"))
'''


def test_hostile_events_seal_and_the_run_goes_on(project):
    project.write("niceeval.toml", '[experiments.h]\nadapter = "agent:adapter"\n')
    project.write("agent.py", AGENT)
    project.write("evals/e.py", '''
from niceeval_cli import define_eval
from niceeval_cli.expect import tool_match

@define_eval()
async def hostile(t):
    await t.send("go")
    t.called_tool(tool_match("lookup\\ud800")).label("called")
    t.max_tool_calls(1).label("max")
''')
    run = project.run()
    assert run.exit_code in (0, 1, 5), (run.stdout, run.stderr)
    [attempt] = project.attempts()
    assert attempt["state"] in ("passed", "errored")
    [turn] = project.query("turns")
    assert "\ud800" not in turn["message"] and "… [+" in turn["message"]
    events = project.query("events")
    assert len(events) == 2
    assert events[0]["name"] == "lookup\ufffd"
    view = project.cli("view", f"@{attempt['id']}")
    assert view.exit_code == 0
    assert "\x1b" not in view.stdout and "\\x1b" in view.stdout
