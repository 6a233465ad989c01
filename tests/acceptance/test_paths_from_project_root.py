"""Trust: the program a run starts is the one its fingerprint hashed, wherever `niceeval` is typed
(config.md: `niceeval.toml` is found by walking up from the working directory, and the command
adapter's identity is "every file inside the project root named in its argv"). A user who types
`niceeval run` in a subfolder of the project, or `niceeval run --config proj/niceeval.toml` from
elsewhere, gets the project's `app/agent.py`: never a same-named file of the folder they stood
in, and never a reused result after the project's agent changed. Driven through the real console
script, from the outside: each program prints its own name, stored rows, exit codes, and
`run --dry --json`'s `changed`."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path
from typing import Any

from tests.support.project import NICEEVAL, Project, base_env

AGENT = "import sys\nsys.stdin.read()\nprint({name!r})\n"

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval
async def hello(t):
    turn = await t.send("hi")
    t.check(turn.message, equals("project agent"))
"""


def _project(proj: Project, options: str) -> None:
    proj.write("niceeval.toml", f"""
        [experiments.cli]
        adapter = "command"
        [experiments.cli.options]
        {options}
    """)
    proj.write("evals/hello.py", EVAL)


def _niceeval(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real console script, started in `where` (not the project root)."""
    return subprocess.run([*NICEEVAL, *args], cwd=where, env=base_env(), capture_output=True, text=True,
                          timeout=120)


def _replies(proj: Project) -> list[str]:
    """What each stored attempt's agent answered, oldest first."""
    rows = proj.sql("SELECT t.message FROM turns t JOIN attempts a ON a.id = t.attempt_id "
                    "ORDER BY a.started_at, a.id")
    return [row["message"] for row in rows]


def _planned(where: Path, *args: str) -> dict[str, Any]:
    res = _niceeval(where, "run", "--dry", "--json", *args)
    assert res.returncode == 0, res.stdout + res.stderr
    [event] = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    [slot] = event["slots"]
    return dict(slot)


def test_from_a_subfolder_the_projects_agent_runs_and_editing_it_runs_again(proj: Project) -> None:
    _project(proj, 'argv = ["python", "app/agent.py"]')
    proj.write("app/agent.py", AGENT.format(name="project agent"))
    sub = proj.root / "sub"
    (sub / "app").mkdir(parents=True)  # a decoy the folder the user stands in would find first
    (sub / "app" / "agent.py").write_text(AGENT.format(name="decoy in sub/"))

    first = _niceeval(sub, "run")
    assert first.returncode == 0, first.stdout + first.stderr
    assert _replies(proj) == ["project agent"]
    [row] = proj.sql("SELECT state FROM attempts")
    assert row["state"] == "passed"

    (sub / "app" / "agent.py").write_text(AGENT.format(name="decoy, edited"))  # not what runs: no change
    assert _planned(sub)["decision"] == "reuse"

    proj.write("app/agent.py", AGENT.format(name="project agent, edited"))
    slot = _planned(sub)
    assert (slot["decision"], slot["changed"]) == ("execute", ["sut:app/agent.py"])
    again = _niceeval(sub, "run")
    assert again.returncode == 1, again.stdout + again.stderr  # the edited agent ran, and failed the check
    assert _replies(proj) == ["project agent", "project agent, edited"]


def test_with_config_from_elsewhere_cwd_is_taken_from_the_project_root(proj: Project, tmp_path: Path) -> None:
    _project(proj, 'argv = ["python", "agent.py"]\ncwd = "app"')
    proj.write("app/agent.py", AGENT.format(name="project agent"))
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "app").mkdir(parents=True)
    (elsewhere / "app" / "agent.py").write_text(AGENT.format(name="decoy elsewhere"))
    config = str(proj.root / "niceeval.toml")

    first = _niceeval(elsewhere, "run", "--config", config)
    assert first.returncode == 0, first.stdout + first.stderr
    assert _replies(proj) == ["project agent"]

    proj.write("app/agent.py", AGENT.format(name="project agent, edited"))
    slot = _planned(elsewhere, "--config", config)
    assert (slot["decision"], slot["changed"]) == ("execute", ["sut:app/agent.py"])


def test_a_command_cwd_that_is_not_a_project_folder_names_the_project_root(proj: Project, tmp_path: Path) -> None:
    _project(proj, 'argv = ["python", "agent.py"]\ncwd = "app"')
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "app").mkdir(parents=True)  # it exists here, not in the project: a configuration error

    res = _niceeval(elsewhere, "run", "--config", str(proj.root / "niceeval.toml"))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "'app' is not a directory" in res.stderr and str(proj.root) in res.stderr


def test_in_a_local_sandbox_the_projects_script_runs_from_a_subfolder(proj: Project) -> None:
    _project(proj, 'argv = ["python", "app/agent.py"]')
    proj.write("niceeval.toml", proj.root.joinpath("niceeval.toml").read_text() + '[sandbox]\nkind = "local"\n')
    proj.write("app/agent.py", AGENT.format(name="project agent"))
    sub = proj.root / "sub"
    (sub / "app").mkdir(parents=True)
    (sub / "app" / "agent.py").write_text(AGENT.format(name="decoy in sub/"))

    res = _niceeval(sub, "run")
    assert res.returncode == 0, res.stdout + res.stderr
    assert _replies(proj) == ["project agent"]


CLAUDE = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "1.0.0 ({name})"; exit 0; fi
cat > /dev/null
echo '{{"type":"result","subtype":"success","result":"{name} in '"$(pwd)"'","session_id":"s1"}}'
"""


def test_a_coding_agent_binary_is_the_projects_file_and_works_in_the_project_root(proj: Project) -> None:
    proj.write("niceeval.toml", """
        [experiments.agent]
        adapter = "claude-code"
        [experiments.agent.options]
        binary = "bin/claude"
    """)
    proj.write("evals/hello.py", EVAL)
    sub = proj.root / "sub"
    for folder, name in ((proj.root, "project claude"), (sub, "decoy claude")):
        script = folder / "bin" / "claude"
        script.parent.mkdir(parents=True)
        script.write_text(CLAUDE.format(name=name))
        script.chmod(script.stat().st_mode | stat.S_IXUSR)

    res = _niceeval(sub, "run")
    assert res.returncode == 1, res.stdout + res.stderr  # the check wants the command agent's reply
    assert _replies(proj) == [f"project claude in {proj.root.resolve()}"]


def test_a_coding_agent_binary_only_the_typed_in_folder_holds_is_missing(proj: Project) -> None:
    proj.write("niceeval.toml", """
        [experiments.agent]
        adapter = "claude-code"
        [experiments.agent.options]
        binary = "bin/claude"
    """)
    proj.write("evals/hello.py", EVAL)
    script = proj.root / "sub" / "bin" / "claude"  # not the project's: the project root has no bin/claude
    script.parent.mkdir(parents=True)
    script.write_text(CLAUDE.format(name="decoy claude"))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)

    res = _niceeval(proj.root / "sub", "run")
    assert res.returncode == 3, res.stdout + res.stderr  # the preflight's setup error, no attempt
    assert f"binary 'bin/claude' was not found in the project root ({proj.root.resolve()})" in res.stdout + res.stderr
    assert proj.sql("SELECT id FROM attempts") == []
