"""Issue 22, item 6 (what outside tools showed, the display half): a tool output that is a JSON
*string* is shown as a string in `view`'s transcript, never like an object; and a mismatch's
explanation shows the outputs it compared (observed and expected, trimmed). The CLI in process
(what it prints and stores is checked); the store read with sqlite3."""

from __future__ import annotations

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    return project


AGENT = '''
def reply(message):
    return {"message": "done", "events": [
        {"type": "tool_call", "name": "lookup", "input": {"order": "A1"}, "output": '{"status": "shipped"}'},
        {"type": "tool_call", "name": "lookup", "input": {"order": "A2"}, "output": {"status": "shipped"}},
        {"type": "tool_call", "name": "count", "input": "A3", "output": "42"},
    ]}
'''

EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import at_least, count_where, equals, tool_match


@define_eval()
async def tools(t):
    turn = await t.send("where is A1")
    t.called_tool(tool_match("lookup", output={"status": "delivered"})).label("delivered")
    t.check(turn.tool_calls, count_where(tool_match("count", output=equals(42)), at_least(1))).label("count")
'''


def test_a_json_string_output_reads_as_a_string_and_a_mismatch_shows_what_it_compared(proj: Project) -> None:
    proj.write("niceeval.toml", '''
        [experiments.py]
        adapter = "python"
        [experiments.py.options]
        callable = "agent:reply"
    ''')
    proj.write("agent.py", AGENT)
    proj.write("evals/tools.py", EVALS)
    res = proj.run(env={"NO_COLOR": "1"})
    assert res.returncode == 1, res.stdout + res.stderr
    [attempt] = proj.sql("SELECT id FROM attempts")
    explanations = {r["label"]: r["explanation"] for r in proj.sql("SELECT label, explanation FROM assertion_results")}

    delivered = explanations["delivered"]
    assert "counted 0" in delivered, delivered
    # both calls of the named tool, with what each output was and what was expected; the other tool is not listed
    assert "#1: 'lookup': output: expected an object {'status': 'delivered'}, got '{\"status\": \"shipped\"}'" \
        in delivered and "text that holds JSON" in delivered, delivered
    assert "#2: 'lookup': output: at status: expected 'delivered', got 'shipped'" in delivered, delivered
    assert "'count'" not in delivered, delivered
    count = explanations["count"]
    assert "#3: 'count': output: expected equals(42), got '42'" in count and "'lookup'" not in count, count
    assert "compared: #1" in res.stdout, res.stdout

    view = proj.cli("view", f"@{attempt['id']}", env={"NO_COLOR": "1"})
    assert view.returncode == 0, view.stderr
    outputs = [line.strip() for line in view.stdout.splitlines() if line.strip().startswith("output ")]
    assert outputs == ['output "{\\"status\\": \\"shipped\\"}"', 'output {"status": "shipped"}', 'output "42"'], \
        view.stdout
