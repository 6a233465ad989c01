"""`niceeval view @ATTEMPT` shows the transcript with the calls assertions pointed at marked;
`view` shows cost per experiment (agents.md, "Store and reading surfaces")."""

from __future__ import annotations

AGENT = '''
from niceeval_cli import AgentError, Message, ToolCall, Turn, Usage, define_adapter

async def send(ctx, message):
    return Turn(input=message, message="done \\x1b[31mred",
                events=[Message("assistant", "checking"),
                        ToolCall("lookup", input={"order": "A1"}, output={"paid": 30}),
                        ToolCall("cancel", input={"order": "A1"}, status="failed", error="not allowed"),
                        AgentError("gave up", kind="policy")],
                usage=Usage(input_tokens=10, output_tokens=2, cost_usd=0.0125))

adapter = define_adapter(name="agent", send=send, observes=("messages", "tool_calls"))
'''

EVAL = '''
from niceeval_cli import define_eval
from agent import adapter

@define_eval()
async def agent(t):
    await t.send("refund A1")
    s = t.new_session("second")
    await s.send("again")
    t.not_called_tool("cancel").label("Never cancels")
    t.called_tool("lookup", count=2).label("Looks up twice")
'''


def _run(project):
    project.write("niceeval.toml", "[experiments.shop]\nadapter = \"agent:adapter\"\n")
    project.write("agent.py", AGENT)
    project.write("evals/e.py", EVAL)
    run = project.run()
    assert run.exit_code == 1, (run.stdout, run.stderr)
    [attempt] = project.attempts()
    return attempt


def test_view_attempt_shows_each_session_turns_events_and_marks(project):
    attempt = _run(project)
    view = project.cli("view", f"@{attempt['id']}")
    assert view.exit_code == 0, view.stderr
    out = view.stdout
    transcript = out[out.index("Transcript (2 turns, 4 tool calls, 2 sessions)"):]
    assert transcript.index("session default") < transcript.index("session second")
    assert "→ sent  refund A1" in transcript and "→ sent  again" in transcript
    assert "◆ cancel  failed  ◀ ✗ Never cancels" in transcript
    assert "◆ lookup  completed  ◀ ✓ Looks up twice" in transcript
    assert 'input  {"order": "A1"}' in transcript and 'output {"paid": 30}' in transcript
    assert "error  not allowed" in transcript
    assert "! agent error (policy): gave up" in transcript
    assert "← reply done \\x1b[31mred" in transcript  # escape sequences are made visible
    assert "\x1b[31m" not in out
    assert "cost         $0.0250 reported" in out


def test_view_of_the_run_shows_cost_per_experiment(project):
    _run(project)
    view = project.cli("view")
    assert "cost      shop  $0.0250 reported (1 of 1 attempts)" in view.stdout


def test_an_attempt_without_turns_shows_no_transcript(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", "from niceeval_cli import define_eval\n@define_eval()\ndef e(t):\n    pass\n")
    project.run()
    [attempt] = project.attempts()
    assert "Transcript" not in project.cli("view", f"@{attempt['id']}").stdout
