"""Issue 27, item 3: the `claude-code` and `codex` adapters, driven with the real CLIs offline.

Each CLI runs in the attempt's sandbox against a scripted model server on 127.0.0.1
(examples/coding_agent/_fake_model.py: Anthropic's Messages API for Claude Code through
`ANTHROPIC_BASE_URL`, OpenAI's Responses API for Codex through a model provider with a local
`base_url` in a temporary CODEX_HOME). The model asks for shell commands that write their own log;
the stored tool calls equal that log, usage and reported cost come from the stream, a follow-up
`t.send` resumes the CLI's session, a CLI killed mid-stream leaves the turn unobserved, and a
missing binary stops the run with a setup error (exit 3)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.components import need_npm_cli
from tests.support.project import Project

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"


def _fake_model() -> Any:
    spec = importlib.util.spec_from_file_location("fake_model", EXAMPLE / "_fake_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Model:
    """The scripted model server of one test."""

    def __init__(self, folder: Path, commands: list[str], final: str) -> None:
        self.script = folder / "script.json"
        self.script.write_text(json.dumps({"commands": commands, "final": final, "input_tokens": 120,
                                           "output_tokens": 30}))
        self.server = _fake_model().serve(self.script)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def requests(self) -> list[dict[str, Any]]:
        log = self.script.with_suffix(".requests.ndjson")
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process: the processes under test are the agent CLIs it starts, not itself."""
    return project


@pytest.fixture
def model_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "model"
    folder.mkdir()
    yield folder


def _step(n: int, action: str) -> str:
    """A shell command that logs itself (the log the tool writes) and prints what it logged."""
    return f"echo 'step {n}' | tee -a \"$TOOL_LOG\" && {action}"


COMMANDS = [_step(1, "sed -i 's/return a - b/return a + b/' calc.py"), _step(2, "printf '# Notes\\n' > NOTES.md")]

EVAL = """
from niceeval_cli import define_eval


@define_eval()
async def fix(t):
    first = await t.send("Fix the failing test.")
    first.called_tool("{shell}", count=2).label("two commands")
    t.sandbox.file_changed("calc.py", status="modified").label("calc.py edited")
    t.sandbox.file_exists("NOTES.md").label("notes written")
    second = await t.send("Anything else?")
    second.not_called_tool("{shell}").label("nothing more to run")
"""


def _project(proj: Project, adapter: str, shell: str, options: str) -> None:
    shutil.copytree(EXAMPLE / "_repo", proj.root / "repo")
    proj.write("evals/fix.py", EVAL.replace("{shell}", shell))
    proj.write("niceeval.toml", f'[experiments.agent]\nadapter = "{adapter}"\nmodel = "fake-model"\n'
                                f"[experiments.agent.options]\n{options}"
                                '[experiments.agent.sandbox]\ntemplate = "repo"\n')


def _claude_env(model: Model, tmp_path: Path) -> dict[str, str | None]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-offline-test",
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "TOOL_LOG": str(tmp_path / "tools.log")}


def _codex_env(model: Model, tmp_path: Path) -> dict[str, str | None]:
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        'model_provider = "offline"\n[model_providers.offline]\nname = "offline"\n'
        f'base_url = "{model.url}/v1"\nwire_api = "responses"\n')
    return {"CODEX_HOME": str(home), "HOME": str(tmp_path), "TOOL_LOG": str(tmp_path / "tools.log")}


def _stored_calls(proj: Project) -> list[dict[str, Any]]:
    return proj.sql("SELECT turn_ordinal, name, input, output, status FROM events WHERE kind = 'tool_call' "
                    "ORDER BY turn_ordinal, seq")


def _check_log_equals_calls(proj: Project, tmp_path: Path) -> None:
    logged = (tmp_path / "tools.log").read_text().splitlines()
    calls = _stored_calls(proj)
    assert logged == ["step 1", "step 2"]
    assert [json.loads(c["output"]).strip() for c in calls] == logged  # what each command printed
    assert [c["status"] for c in calls] == ["completed", "completed"]
    assert all(c["turn_ordinal"] == 0 for c in calls)


@pytest.mark.slow
def test_claude_code_runs_in_the_sandbox_and_its_stream_becomes_the_turn(proj: Project, tmp_path: Path,
                                                                          model_dir: Path) -> None:
    claude = need_npm_cli("claude")
    model = Model(model_dir, COMMANDS, "Fixed calc.add and wrote NOTES.md.")
    try:
        _project(proj, "claude-code", "Bash", f'binary = "{claude}"\nallowed_tools = ["Bash"]\nmax_turns = 10\n'
                                             'env = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"]\n')
        result = proj.run(env=_claude_env(model, tmp_path), timeout=300)
    finally:
        model.server.shutdown()

    assert result.returncode == 0, result.stdout + result.stderr
    _check_log_equals_calls(proj, tmp_path)
    calls = _stored_calls(proj)
    assert [json.loads(c["input"])["command"] for c in calls] == COMMANDS
    turns = proj.sql("SELECT ordinal, message, status, observed, input_tokens, output_tokens, cost_usd, data "
                     "FROM turns ORDER BY ordinal")
    assert [t["message"] for t in turns] == ["Fixed calc.add and wrote NOTES.md."] * 2
    assert all(set(json.loads(t["observed"])) == {"messages", "tool_calls"} for t in turns)
    assert (turns[0]["input_tokens"], turns[0]["output_tokens"]) == (360, 90)  # three model calls
    assert turns[0]["cost_usd"] is not None and turns[0]["cost_usd"] > 0  # the stream's total_cost_usd
    # the second turn resumed the first one's session: same id, and the model saw the whole history
    sessions = [json.loads(t["data"])["session_id"] for t in turns]
    assert sessions[0] and sessions[0] == sessions[1]
    last = [r for r in model.requests() if r["body"].get("tools")][-1]["body"]
    assert "Fix the failing test." in json.dumps(last["messages"]) and "Anything else?" in json.dumps(last["messages"])
    states = {r["label"]: r["state"] for r in proj.sql("SELECT label, state FROM assertion_results")}
    assert states == {"two commands": "matched", "calc.py edited": "matched", "notes written": "matched",
                      "nothing more to run": "matched"}


@pytest.mark.slow
def test_codex_runs_in_the_sandbox_and_its_stream_becomes_the_turn(proj: Project, tmp_path: Path,
                                                                    model_dir: Path) -> None:
    codex = need_npm_cli("codex")
    model = Model(model_dir, COMMANDS, "Fixed calc.add and wrote NOTES.md.")
    try:
        _project(proj, "codex", "shell", f'binary = "{codex}"\nargs = ["-c", "sandbox_mode=\\"workspace-write\\""]\n'
                                         'env = ["CODEX_HOME"]\n')
        result = proj.run(env=_codex_env(model, tmp_path), timeout=300)
    finally:
        model.server.shutdown()

    assert result.returncode == 0, result.stdout + result.stderr
    _check_log_equals_calls(proj, tmp_path)
    calls = _stored_calls(proj)
    assert all(c["name"] == "shell" and "step" in json.loads(c["input"])["command"] for c in calls)
    turns = proj.sql("SELECT ordinal, message, observed, input_tokens, output_tokens, cost_usd, data "
                     "FROM turns ORDER BY ordinal")
    assert [t["message"] for t in turns] == ["Fixed calc.add and wrote NOTES.md."] * 2
    assert all(set(json.loads(t["observed"])) == {"messages", "tool_calls"} for t in turns)
    # Codex reports the thread's running total: each turn keeps its own share
    assert [(t["input_tokens"], t["output_tokens"]) for t in turns] == [(360, 90), (120, 30)]
    assert [t["cost_usd"] for t in turns] == [None, None]  # Codex reports no cost: unknown, never 0
    threads = [json.loads(t["data"])["thread_id"] for t in turns]
    assert threads[0] and threads[0] == threads[1]  # resumed
    states = {r["label"]: r["state"] for r in proj.sql("SELECT label, state FROM assertion_results")}
    assert states == {"two commands": "matched", "calc.py edited": "matched", "notes written": "matched",
                      "nothing more to run": "matched"}


@pytest.mark.slow
def test_a_cli_killed_mid_stream_leaves_the_turn_unobserved(proj: Project, tmp_path: Path, model_dir: Path) -> None:
    claude = need_npm_cli("claude")
    # the second command kills the CLI itself (the ancestor running with stream-json): no `result` event
    kill = ("p=$PPID; while [ \"$p\" -gt 1 ] && ! ps -o args= -p $p | grep -q stream-json; "
            "do p=$(ps -o ppid= -p $p | tr -d ' '); done; [ \"$p\" -gt 1 ] && kill -9 $p")
    commands = [COMMANDS[0], _step(2, kill)]
    model = Model(model_dir, commands, "never said")
    try:
        _project(proj, "claude-code", "Bash", f'binary = "{claude}"\nallowed_tools = ["Bash"]\n')
        proj.write("evals/fix.py", "from niceeval_cli import define_eval\n\n@define_eval()\nasync def fix(t):\n"
                                   "    turn = await t.send('Fix the failing test.')\n"
                                   "    turn.not_called_tool('Write').label('never wrote')\n"
                                   "    t.sandbox.file_changed('calc.py', status='modified').label('calc.py edited')\n")
        result = proj.run(env=_claude_env(model, tmp_path), timeout=300)
    finally:
        model.server.shutdown()

    assert result.returncode == 5, result.stdout + result.stderr
    rows = proj.sql("SELECT label, state, reason FROM assertion_results")
    states = {r["label"]: (r["state"], r["reason"]) for r in rows}
    assert states == {"never wrote": ("unavailable", "tool-calls-unobserved"), "calc.py edited": ("matched", None)}
    [turn] = proj.sql("SELECT observed FROM turns")
    assert json.loads(turn["observed"]) == []
    notes = proj.sql("SELECT notes FROM attempts")[0]["notes"]
    assert "without its final event" in notes


@pytest.mark.parametrize("adapter", ["claude-code", "codex"])
def test_a_missing_binary_is_a_setup_error(proj: Project, adapter: str) -> None:
    proj.write("evals/fix.py", "from niceeval_cli import define_eval\n\n@define_eval()\nasync def fix(t):\n"
                               "    await t.send('hi')\n")
    proj.write("niceeval.toml", f'[experiments.agent]\nadapter = "{adapter}"\n'
                                '[experiments.agent.options]\nbinary = "/nonexistent/agent-cli"\n')

    result = proj.run()

    assert result.returncode == 3, result.stdout + result.stderr
    assert "/nonexistent/agent-cli" in result.stdout + result.stderr
    assert proj.sql("SELECT count(*) AS n FROM attempts WHERE state != 'errored'")[0]["n"] == 0


STAND_IN = """#!{python}
# A stand-in for `claude`: replays Claude Code's documented stream-json, logging its argv.
import json, os, sys

if sys.argv[1:] == ["--version"]:
    print("2.0.0 (Claude Code)")
    sys.exit(0)
with open(os.environ["ARGV_LOG"], "a") as out:
    out.write(json.dumps(sys.argv[1:]) + "\\n")
session = "s-42"
def emit(event):
    print(json.dumps({**event, "session_id": session}), flush=True)
emit({"type": "system", "subtype": "init", "model": "fake"})
emit({"type": "assistant", "parent_tool_use_id": None, "message": {"content": [
    {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "calc.py"}}]}})
open("calc.py", "a").write("# edited\\n")
emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}})
said = "edited with key " + os.environ.get("STAND_IN_API_KEY", "(none)")
emit({"type": "result", "subtype": "success", "is_error": False, "result": said, "total_cost_usd": 0.5,
      "usage": {"input_tokens": 10, "output_tokens": 2}})
"""


def test_claude_code_with_a_stand_in_printing_the_documented_stream(proj: Project, tmp_path: Path) -> None:
    import sys

    stand_in = proj.write("bin/claude", STAND_IN.replace("{python}", sys.executable))
    stand_in.chmod(0o755)
    shutil.copytree(EXAMPLE / "_repo", proj.root / "repo")
    proj.write("evals/fix.py", "from niceeval_cli import define_eval\n\n@define_eval()\nasync def fix(t):\n"
                               "    (await t.send('one')).called_tool('Edit').label('edited')\n"
                               "    await t.send('two')\n")
    proj.write("niceeval.toml", '[experiments.agent]\nadapter = "claude-code"\nmodel = "m-9"\n'
                                '[experiments.agent.options]\nbinary = "bin/claude"\nallowed_tools = ["Edit", "Bash"]\n'
                                'max_turns = 3\nargs = ["--append-system-prompt", "be brief"]\n'
                                'env = ["STAND_IN_API_KEY"]\n'
                                '[experiments.agent.sandbox]\ntemplate = "repo"\n')
    argv_log = tmp_path / "argv.ndjson"

    key = "opensesame-correct-horse-battery-9"  # no known key shape: only the adapter knows it is one
    result = proj.run(env={"ARGV_LOG": str(argv_log), "STAND_IN_API_KEY": key})

    assert result.returncode == 0, result.stdout + result.stderr
    messages = [t["message"] for t in proj.sql("SELECT message FROM turns")]
    assert messages and all("edited with key" in m and key not in m for m in messages)  # handed over, never stored
    first, second = (json.loads(line) for line in argv_log.read_text().splitlines())
    assert first == ["-p", "one", "--output-format", "stream-json", "--verbose", "--model", "m-9",
                     "--allowedTools", "Edit,Bash", "--max-turns", "3", "--append-system-prompt", "be brief"]
    assert second[:2] == ["-p", "two"] and second[second.index("--resume") + 1] == "s-42"
    turns = proj.sql("SELECT cost_usd, input_tokens FROM turns ORDER BY ordinal")
    assert [(t["cost_usd"], t["input_tokens"]) for t in turns] == [(0.5, 10), (0.5, 10)]
    assert proj.sql("SELECT state FROM assertion_results")[0]["state"] == "matched"


SEPARATOR_STAND_IN = """#!{python}
# A stand-in for `claude` whose reply quotes a line separator: Node's JSON.stringify leaves U+2028 raw.
import json, sys

if sys.argv[1:] == ["--version"]:
    print("2.0.0 (Claude Code)")
    sys.exit(0)
def emit(event):
    print(json.dumps({**event, "session_id": "s-1"}, ensure_ascii=False), flush=True)
emit({"type": "system", "subtype": "init", "model": "fake"})
emit({"type": "result", "subtype": "success", "is_error": False, "result": "one\\u2028two\\u0085three",
      "usage": {"input_tokens": 10, "output_tokens": 2}})
"""


def test_claude_code_reading_a_reply_that_quotes_a_line_separator_keeps_the_turn(proj: Project) -> None:
    import sys

    stand_in = proj.write("bin/claude", SEPARATOR_STAND_IN.replace("{python}", sys.executable))
    stand_in.chmod(0o755)
    proj.write("evals/fix.py", "from niceeval_cli import define_eval\n\n@define_eval()\nasync def fix(t):\n"
                               "    await t.send('one')\n")
    proj.write("niceeval.toml", '[experiments.agent]\nadapter = "claude-code"\nmodel = "m-9"\n'
                                '[experiments.agent.options]\nbinary = "bin/claude"\n')
    result = proj.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert [t["message"] for t in proj.sql("SELECT message FROM turns")] == ["one\u2028two\u0085three"]
