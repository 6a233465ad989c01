"""A coding agent's event stream past the output bound (docs/integrations.md, "Coding agents"):
stdout keeps its first and last 2 MiB, so the events in the middle are lost while the final event,
in the tail, still arrives. The turn must not claim every call observed: a `Bash` call cut out of
the middle made `not_called_tool("Bash")` pass. Stand-in CLIs (Python scripts printing each CLI's
documented stream) through the real `niceeval run`; states and stored rows checked."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from tests.support.project import Project

#: ~6.5 MB of stream: past the 4 MiB kept, the `Bash` call in the middle of it.
CALLS, PAD = 3000, 2000

CLAUDE = f"""#!{sys.executable}
import json, sys
if "--version" in sys.argv:
    print("2.0.0 (Claude Code)")
    sys.exit(0)
print(json.dumps({{"type": "system", "subtype": "init", "session_id": "s1", "model": "m"}}))
for i in range({CALLS}):
    name = "Bash" if i == {CALLS // 2} else "Read"
    print(json.dumps({{"type": "assistant", "session_id": "s1", "parent_tool_use_id": None, "message": {{
        "content": [{{"type": "tool_use", "id": f"t{{i}}", "name": name, "input": {{"pad": "x" * {PAD}}}}}]}}}}))
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": "Done.",
                  "session_id": "s1", "usage": {{"input_tokens": 3, "output_tokens": 2}}}}))
"""

CODEX = f"""#!{sys.executable}
import json, sys
if "--version" in sys.argv:
    print("codex-cli 0.50.0")
    sys.exit(0)
print(json.dumps({{"type": "thread.started", "thread_id": "th1"}}))
print(json.dumps({{"type": "turn.started"}}))
for i in range({CALLS}):
    command = "rm -rf build" if i == {CALLS // 2} else "cat a.py"
    print(json.dumps({{"type": "item.completed", "item": {{"id": f"i{{i}}", "type": "command_execution",
        "command": command, "aggregated_output": "x" * {PAD}, "exit_code": 0, "status": "completed"}}}}))
print(json.dumps({{"type": "item.completed", "item": {{"id": "m", "type": "agent_message", "text": "Done."}}}}))
print(json.dumps({{"type": "turn.completed", "usage": {{"input_tokens": 3, "output_tokens": 2}}}}))
"""

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import tool_match


@define_eval()
async def agent(t):
    turn = await t.send("fix it")
    t.not_called_tool({absent}).label("absent")
    t.called_tool({kept!r}).label("kept")
    t.succeeded().label("succeeded")
"""


@pytest.mark.parametrize(("adapter", "script", "absent", "kept"), [
    ("claude-code", CLAUDE, "'Bash'", "Read"),
    ("codex", CODEX, "tool_match('shell', input={'command': 'rm -rf build'})", "shell"),
])
def test_a_stream_cut_past_the_output_bound_observes_no_call_absent(
        project: Project, tmp_path: Path, adapter: str, script: str, absent: str, kept: str) -> None:
    cli = tmp_path / "installed" / adapter
    cli.parent.mkdir()
    cli.write_text(script)
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    project.write("niceeval.toml", f'[experiments.agent]\nadapter = "{adapter}"\nmodel = "m"\n'
                                   f'[experiments.agent.options]\nbinary = {json.dumps(str(cli))}\n')
    project.write("evals/e.py", EVAL.format(absent=absent, kept=kept))
    run = project.run()
    assert run.returncode == 5, (run.stdout, run.stderr)  # undecided, never a pass
    got = {r["label"]: (r["state"], r["reason"]) for r in project.assertions()}
    assert got == {"absent": ("unavailable", "capture-limit-exceeded"), "kept": ("matched", None),
                   "succeeded": ("matched", None)}, got
    [turn] = project.sql("SELECT observed FROM turns")
    assert json.loads(turn["observed"]) == []
