"""Issue 27, item 3, in a docker sandbox: a coding agent's CLI runs in the attempt's container, so
its preflight runs the binary there too — the image's binary counts, not this host's.

A binary only the image holds passes preflight and its stream becomes the turn; a binary only
this host holds is a setup error (exit 3) naming the image, before any attempt is dispatched."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.components import PYTHON_IMAGE, SHELL_IMAGE, need_docker
from tests.support.docker import niceeval_containers
from tests.support.project import Project

pytestmark = pytest.mark.slow


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process: the processes under test are the container and the CLI inside it."""
    return project


#: Where the derived image keeps the stand-in: a path this host does not have.
IN_IMAGE = "/usr/local/bin/claude-in-image"

STAND_IN = """#!/usr/local/bin/python3
# A stand-in for `claude` inside the image: Claude Code's documented stream-json.
import json, sys

if sys.argv[1:] == ["--version"]:
    print("2.0.0 (Claude Code)")
    sys.exit(0)
def emit(event):
    print(json.dumps({**event, "session_id": "s-7"}), flush=True)
emit({"type": "system", "subtype": "init", "model": "fake"})
emit({"type": "assistant", "message": {"content": [
    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}})
emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}})
emit({"type": "result", "subtype": "success", "is_error": False, "result": "done in the container",
      "total_cost_usd": 0.25, "usage": {"input_tokens": 8, "output_tokens": 2}})
"""

EVAL = ("from niceeval_cli import define_eval\n\n@define_eval()\nasync def fix(t):\n"
        "    (await t.send('go')).called_tool('Bash').label('ran')\n")


@pytest.fixture
def standin_image(tmp_path: Path) -> Iterator[str]:
    """The python test image plus the stand-in at IN_IMAGE, built locally from it (nothing pulled)."""
    need_docker(PYTHON_IMAGE)
    assert not Path(IN_IMAGE).exists()
    context = tmp_path / "image"
    context.mkdir()
    (context / "claude").write_text(STAND_IN)
    (context / "claude").chmod(0o755)
    (context / "Dockerfile").write_text(f"FROM {PYTHON_IMAGE}\nCOPY claude {IN_IMAGE}\n")
    tag = f"niceeval-test/claude-standin:{os.getpid()}-{tmp_path.name.lower()}"
    built = subprocess.run(["docker", "build", "-q", "-t", tag, str(context)], capture_output=True, text=True,
                           timeout=300, check=False)
    assert built.returncode == 0, built.stderr
    try:
        yield tag
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120, check=False)


def test_a_binary_only_the_image_holds_passes_preflight_and_streams_the_turn(proj: Project, standin_image: str) -> None:
    proj.write("evals/fix.py", EVAL)
    proj.write("niceeval.toml", f'[experiments.agent]\nadapter = "claude-code"\n'
                                f'[experiments.agent.options]\nbinary = "{IN_IMAGE}"\n'
                                f'[experiments.agent.sandbox]\nkind = "docker"\nimage = "{standin_image}"\n')

    result = proj.run()

    assert result.returncode == 0, result.stdout + result.stderr
    turn = proj.sql("SELECT message, cost_usd FROM turns")
    assert [(t["message"], t["cost_usd"]) for t in turn] == [("done in the container", 0.25)]
    assert proj.sql("SELECT state FROM assertion_results")[0]["state"] == "matched"
    assert niceeval_containers(store=proj.root / ".niceeval" / "results.db") == []


def test_a_binary_only_this_host_holds_is_a_setup_error_naming_the_image(proj: Project) -> None:
    need_docker(SHELL_IMAGE)
    proj.write("evals/fix.py", EVAL)
    proj.write("niceeval.toml", '[experiments.agent]\nadapter = "claude-code"\n'
                                '[experiments.agent.options]\nbinary = "git"\n'  # this host has git; the image not
                                f'[experiments.agent.sandbox]\nkind = "docker"\nimage = "{SHELL_IMAGE}"\n')

    result = proj.run()

    output = result.stdout + result.stderr
    assert result.returncode == 3, output
    assert f"'git' was not found in the docker image {SHELL_IMAGE}" in output
    assert proj.sql("SELECT count(*) AS n FROM attempts WHERE state != 'errored'")[0]["n"] == 0
