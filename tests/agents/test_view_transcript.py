"""`niceeval view @ATTEMPT` shows the transcript with the calls assertions pointed at marked;
`view` shows cost per experiment (agents.md, "Store and reading surfaces")."""

from __future__ import annotations

import json

from tests.support.loopback import Loopback

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


def test_a_multi_line_answer_stays_inside_its_message_in_the_transcript(project):
    """A model's (or a hostile endpoint's) text with line breaks: its continuation lines started
    at column 0 of `view @ATTEMPT`, so an answer could print `passed     shop · e#0` as a line
    that looks like the view's own. Now they align under the message's first line."""
    fake = "passed     shop · e#0  @01FAKE"
    reply = {"choices": [{"message": {"role": "assistant", "content": f"hi\n{fake}"}}]}

    def answer(method: str, path: str, body: bytes) -> tuple[int, bytes, str]:
        if path.endswith("/models"):
            return 404, b"{}", "application/json"
        return 200, json.dumps(reply).encode(), "application/json"

    with Loopback(answer) as server:
        project.write("niceeval.toml", f'[experiments.shop]\nadapter = "openai-chat"\nmodel = "m"\n'
                                       f'[experiments.shop.options]\nbase_url = "{server.url}/v1"\n'
                                       'api_key_env = "SHOP_KEY"\n')
        project.write("evals/e.py", "from niceeval_cli import define_eval\n\n@define_eval()\n"
                                    "async def e(t):\n    await t.send('hello\\nthere')\n")
        run = project.run(env={"SHOP_KEY": "k-123456789"})
    assert run.exit_code == 0, (run.stdout, run.stderr)
    [attempt] = project.attempts()
    view = project.cli("view", f"@{attempt['id']}")
    transcript = view.stdout[view.stdout.index("Transcript ("):].splitlines()
    shown = [row for row in transcript if fake in row or row.strip() == "there"]
    assert len(shown) == 3 and all(row.startswith("        ") for row in shown), transcript  # reply, message, sent
