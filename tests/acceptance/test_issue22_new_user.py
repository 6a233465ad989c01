"""Issue 22, items 4 and 5: what a new user hit, replayed from the outside (the CLI in
process, stores read with sqlite3). Items 6's tool-output parts live in
test_issue22_tool_outputs.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.project import REPO, Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


GATED_AND_UNRANKABLE = '''
from niceeval_cli import Fact, define_score_eval
from niceeval_cli.expect import equals


@define_score_eval()
async def gated(t):
    t.check(1, equals(2)).gate().label("must hold")
    t.check(1, equals(1)).score(3).label("earned")
    t.check(Fact.unavailable("no-signal"), equals(1)).score(5).label("unknown")
'''


def test_an_unrankable_score_attempt_whose_gate_failed_says_gate_failed_everywhere(proj: Project) -> None:
    proj.write("niceeval.toml", "[experiments.base]\n")
    proj.write("evals/gs.py", GATED_AND_UNRANKABLE)
    res = proj.run("--junit", "junit.xml", env={"NO_COLOR": "1"})
    assert res.returncode == 1, res.stdout + res.stderr
    assert proj.sql("SELECT state, gate FROM attempts") == [{"state": "unrankable", "gate": "failed"}]
    # JUnit agrees with the exit code: a failed gate is a <failure> naming the gate, not an <error>
    case = ET.parse(proj.root / "junit.xml").getroot().find(".//testcase")
    assert case is not None and case.find("error") is None, ET.tostring(case)
    failure = case.find("failure")
    assert failure is not None and "must hold" in failure.get("message", ""), ET.tostring(case)
    attempt_line = next(line for line in res.stdout.splitlines() if "gs#0" in line)
    assert "gate failed" in attempt_line, res.stdout
    count_line = next(line for line in res.stdout.splitlines() if line.startswith("run "))
    counts = count_line.split(" · exit")[0]  # the counts themselves, not only the exit's explanation
    assert "unrankable (gate failed)" in counts, count_line

    view = proj.cli("view", env={"NO_COLOR": "1"})
    assert view.returncode == 0, view.stderr
    heading = next(line for line in view.stdout.splitlines() if "gs#0" in line)
    assert "GATE FAILED" in heading.upper() and heading.startswith("UNRANKABLE"), view.stdout
    assert re.search(r"1 attempt: 1 unrankable \(gate failed\)", view.stdout), view.stdout

    # a failed gate is what `--state gate-failed` finds, whatever the attempt's state
    only = proj.cli("view", "--state", "gate-failed", env={"NO_COLOR": "1"})
    assert "gs#0" in only.stdout, only.stdout
    rows = json.loads(proj.cli("query", "attempts", "--state", "gate-failed", "--format", "json").stdout)
    assert [r["state"] for r in rows] == ["unrankable"]


def test_a_case_value_that_is_not_json_names_the_eval_and_the_case(proj: Project) -> None:
    proj.write("niceeval.toml", "")
    proj.write("evals/q.csv", "id,when\nr-1,2024-01-01\n")
    proj.write("evals/refunds.py", '''
        import datetime

        from niceeval_cli import Case, define_eval
        from niceeval_cli.datasets import load_csv
        from niceeval_cli.expect import equals


        @define_eval(cases=load_csv("q.csv", types={"when": datetime.date.fromisoformat}))
        async def by_csv(t, case):
            t.check(1, equals(1))


        @define_eval(cases=[Case("c-2", {"when": datetime.date(2024, 1, 1)})])
        async def by_case(t, case):
            t.check(1, equals(1))
    ''')
    res = proj.run()
    assert res.returncode == 2, res.stdout + res.stderr
    assert "eval 'by_csv'" in res.stderr and "case 'r-1' (evals/q.csv:2)" in res.stderr, res.stderr
    assert "not JSON" in res.stderr and "Traceback" not in res.stderr, res.stderr
    proj.write("evals/q.csv", "id,when\nr-1,2024\n")
    proj.write("evals/refunds.py", (proj.root / "evals/refunds.py").read_text().replace(
        'types={"when": datetime.date.fromisoformat}', 'types={"when": int}'))
    res = proj.run()
    assert res.returncode == 2, res.stdout + res.stderr
    assert "eval 'by_case'" in res.stderr and "case 'c-2'" in res.stderr and "not JSON" in res.stderr, res.stderr


def _python_without_pytest(where: Path) -> Path:
    """A real interpreter that has no pytest (a venv without pip): the fresh machine's `python`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    bin_dir = where / "bin"
    probe = subprocess.run([str(bin_dir / "python"), "-c", "import pytest"], capture_output=True, timeout=60)
    if probe.returncode == 0:
        pytest.skip("could not make an interpreter without pytest")
    return bin_dir


@pytest.mark.slow
def test_the_coding_agent_example_without_pytest_says_the_tests_could_not_run(proj: Project, tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples" / "coding_agent", proj.root, dirs_exist_ok=True)
    bin_dir = _python_without_pytest(tmp_path / "fresh")
    env = {"NO_COLOR": "1", "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    res = proj.run("-e", "local", "-e", "local/", env=env, timeout=300)  # local and the local/ group
    assert "expected equals(0), got 1" not in res.stdout, res.stdout
    rows = proj.sql("SELECT a.experiment_id, r.state, r.reason, r.evidence FROM assertion_results r "
                    "JOIN attempts a ON a.id = r.attempt_id WHERE r.label = 'Tests pass'")
    assert {r["experiment_id"] for r in rows} == {"local", "local/forgets-notes", "local/leaks-key"}, rows
    for row in rows:
        assert row["state"] == "unavailable", row
        assert "No module named pytest" in row["reason"] and "No module named pytest" in row["evidence"], row
    assert "No module named pytest" in res.stdout, res.stdout
    # the agent that did everything right could not be judged: undecided, never a definite failure
    assert proj.sql("SELECT state, reason FROM attempts WHERE experiment_id = 'local'") == [
        {"state": "errored", "reason": "evidence-unavailable"}]
    assert res.returncode == 1, res.stdout + res.stderr  # the two broken agents still fail for real


def test_a_workspace_command_that_cannot_start_is_unavailable_and_a_real_failure_still_fails(proj: Project) -> None:
    proj.write("niceeval.toml", "[experiments.e]\n[experiments.e.sandbox]\nkind = \"local\"\n")
    proj.write("evals/commands.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals


        @define_eval()
        async def commands(t):
            shell = await t.sandbox.run("no-such-program-niceeval --version")
            t.check(shell.exit_code, equals(0)).label("shell")
            argv = await t.sandbox.run(["no-such-program-niceeval", "--version"])
            t.check(argv.exit_code, equals(0)).label("argv")
            module = await t.sandbox.run(["python", "-m", "no_such_module_niceeval"])
            t.check(module.exit_code, equals(0)).label("module")
            real = await t.sandbox.run(["python", "-c", "import sys; sys.exit(1)"])
            t.check(real.exit_code, equals(0)).label("real")
            t.check((shell.returncode, argv.returncode, real.returncode), equals((127, None, 1))).label("raw")
    ''')
    res = proj.run(env={"NO_COLOR": "1"})
    states = {r["label"]: (r["state"], r["reason"] or "") for r in proj.sql(
        "SELECT label, state, reason FROM assertion_results")}
    assert states["shell"][0] == "unavailable" and "not found" in states["shell"][1], states
    assert states["argv"][0] == "unavailable" and "no-such-program-niceeval" in states["argv"][1], states
    assert states["module"][0] == "unavailable" and "No module named no_such_module_niceeval" in states["module"][1]
    assert states["real"] == ("mismatched", ""), states
    assert states["raw"][0] == "matched", states
    assert res.returncode == 1, res.stdout + res.stderr  # the real failure is still a failure


def test_an_exception_in_a_python_adapter_callable_shows_its_file_line_and_traceback(proj: Project) -> None:
    proj.write("niceeval.toml", '''
        [experiments.py]
        adapter = "python"
        [experiments.py.options]
        callable = "myapp.agent:reply"
    ''')
    proj.write("myapp/__init__.py", "")
    proj.write("myapp/agent.py", '''
        import json


        def _parse(text):
            return json.loads(text)


        def reply(message):
            data = _parse("{not json")
            return data["answer"]
    ''')
    proj.write("evals/ask.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes


        @define_eval()
        async def ask(t):
            turn = await t.send("hello")
            t.check(turn.message, includes("hi"))
    ''')
    res = proj.run(env={"NO_COLOR": "1"})
    assert res.returncode == 5, res.stdout + res.stderr
    [row] = proj.sql("SELECT id, state, reason, error, traceback FROM attempts")
    assert (row["state"], row["reason"]) == ("errored", "adapter-error")
    assert row["error"].startswith("JSONDecodeError: ") and row["error"].endswith("(at myapp/agent.py:5)"), row
    view = proj.cli("view", f"@{row['id']}", env={"NO_COLOR": "1"})
    assert view.returncode == 0, view.stderr
    for shown in ('File "myapp/agent.py", line 9, in reply', 'File "myapp/agent.py", line 5, in _parse',
                  'File "evals/ask.py", line 7, in ask', "JSONDecodeError"):
        assert shown in view.stdout, view.stdout


def test_a_forgotten_await_on_t_send_says_to_await_it_at_the_eval_line(proj: Project) -> None:
    proj.write("niceeval.toml", '''
        [experiments.py]
        adapter = "python"
        [experiments.py.options]
        callable = "agent:reply"
    ''')
    proj.write("agent.py", "def reply(message):\n    return 'hi ' + message\n")
    proj.write("evals/ask.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes


        @define_eval()
        async def read_it(t):
            turn = t.send("hello")
            t.check(turn.message, includes("hi"))


        @define_eval()
        async def never_awaited(t):
            t.send("hello")
            t.check("hi", includes("hi"))


        @define_eval()
        async def awaited(t):
            turn = await t.send("hello")
            t.check(turn.message, includes("hi"))
    ''')
    res = proj.run(env={"NO_COLOR": "1"})
    out = res.stdout + res.stderr
    assert "'coroutine' object" not in out and "niceeval_cli" not in out and "never awaited" not in res.stderr, out
    rows = {r["eval_id"]: r for r in proj.sql("SELECT eval_id, state, reason, error FROM attempts")}
    read_it, forgotten = rows["ask/read_it"], rows["ask/never_awaited"]
    assert (read_it["state"], read_it["reason"]) == ("errored", "authoring-error"), read_it
    assert read_it["error"].startswith("evals/ask.py:7: ") and "await t.send(" in read_it["error"], read_it
    assert (forgotten["state"], forgotten["reason"]) == ("errored", "authoring-error"), forgotten
    assert forgotten["error"].startswith("evals/ask.py:13: ") and "never awaited" in forgotten["error"], forgotten
    assert rows["ask/awaited"]["state"] == "passed"
