"""Trust: a coding agent's CLI is part of the system under test's identity (config.md, "The system
under test's identity"; docs/configuration.md). The `claude-code` adapter runs a program installed
outside the project, which no project file names: upgrading it must run the evals again, not reuse
what the old CLI produced. A stand-in CLI (a shell script printing Claude Code's documented
stream) whose `--version` reads a file; checked from the outside: `run --dry --json` plans, stored
slots, output and exit codes."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import Project

CLI = """#!/bin/sh
if [ "$1" = "--version" ]; then
  cat "$(dirname "$0")/VERSION" || exit 1
  exit 0
fi
echo '{"type":"system","subtype":"init","session_id":"s1","model":"m"}'
echo '{"type":"assistant","parent_tool_use_id":null,"session_id":"s1",'\\
'"message":{"content":[{"type":"text","text":"hello"}]}}'
echo '{"type":"result","subtype":"success","result":"hello bob","session_id":"s1",'\\
'"usage":{"input_tokens":3,"output_tokens":2}}'
"""

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

@define_eval()
async def greet(t):
    turn = await t.send("bob")
    t.check(turn.message, includes("hello"))
"""


@pytest.fixture
def proj(project: Project, tmp_path: Path) -> Project:
    """The CLI in process (these checks read plans, rows and output); the stand-in CLI lives outside
    the project, as an installed one does."""
    cli = tmp_path / "installed" / "claude"
    cli.parent.mkdir()
    cli.write_text(CLI)
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    (cli.parent / "VERSION").write_text("1.0.0 (Claude Code)\n")
    project.write("niceeval.toml", f"""
        [experiments.agent]
        adapter = "claude-code"
        [experiments.agent.options]
        binary = {json.dumps(str(cli))}
    """)
    project.write("evals/greet.py", EVAL)
    return project


def _version(proj: Project, tmp_path: Path, text: str) -> None:
    (tmp_path / "installed" / "VERSION").write_text(text)


def _planned(proj: Project) -> dict[str, Any]:
    res = proj.run("--dry", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    [event] = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    [slot] = event["slots"]
    return dict(slot)


def _last_slot(proj: Project) -> tuple[str, str]:
    [row] = proj.sql("SELECT relation, plan_reason FROM run_slots WHERE run_id = "
                     "(SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1)")
    return row["relation"], row["plan_reason"]


def test_upgrading_the_cli_runs_the_evals_again_and_dry_names_it(proj: Project, tmp_path: Path) -> None:
    first = proj.run()
    assert first.returncode == 0, first.stdout + first.stderr
    assert _planned(proj)["decision"] == "reuse"
    again = proj.run()
    assert again.returncode == 0 and _last_slot(proj) == ("reference", "reused")
    # the CLI's own version is its identity: no "identified by configuration only" note on reuse
    assert "identified by configuration only" not in again.stdout, again.stdout

    _version(proj, tmp_path, "1.1.0 (Claude Code)\n")
    slot = _planned(proj)
    assert (slot["decision"], slot["plan_reason"], slot["changed"]) == ("execute", "fingerprint-changed", ["installed"])
    upgraded = proj.run()
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    assert _last_slot(proj) == ("origin", "fingerprint-changed")
    assert _planned(proj)["decision"] == "reuse"  # and it is stable again under the new version
    [parts] = proj.sql("SELECT fingerprint_parts FROM attempts ORDER BY ended_at DESC LIMIT 1")
    assert json.loads(parts["fingerprint_parts"])["installed"]["version"] == "1.1.0 (Claude Code)"


def test_a_cli_that_cannot_tell_its_version_is_never_reused_and_stops_at_its_preflight(
        proj: Project, tmp_path: Path) -> None:
    proj.write("niceeval.toml", (proj.root / "niceeval.toml").read_text() + """
        [experiments.other]
        adapter = "python"
        [experiments.other.options]
        callable = "app:reply"
    """)
    proj.write("app.py", "def reply(message):\n    return 'hello ' + message\n")
    assert proj.run().returncode == 0
    (tmp_path / "installed" / "VERSION").unlink()  # `--version` now fails: what is installed is unknown
    plan = proj.run("--dry", "--json")
    assert plan.returncode == 0, plan.stderr
    [event] = [json.loads(line) for line in plan.stdout.splitlines() if line.strip()]
    decisions = {slot["experiment_id"]: slot["decision"] for slot in event["slots"]}
    assert decisions == {"agent": "execute", "other": "reuse"}, event["slots"]
    res = proj.run()
    assert res.returncode == 3, res.stdout + res.stderr
    assert "--version` exited with code 1" in res.stdout + res.stderr, res.stdout + res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    rows = proj.sql("SELECT experiment_id, relation, plan_reason FROM run_slots WHERE run_id = "
                    "(SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1) ORDER BY experiment_id")
    relations = [(r["experiment_id"], r["relation"]) for r in rows]
    assert ("other", "reference") in relations, rows
    # the agent's earlier pass was not adopted: it is not this run's result
    assert all(not (r["experiment_id"] == "agent" and r["relation"] == "reference") for r in rows), rows
