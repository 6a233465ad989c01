"""`--keep-sandbox failed|all`, `niceeval sandbox list|prune`, and Ctrl-C in a real subprocess:
no container, process or temporary directory outlives a run (sandbox.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.docker import (
    SHELL_IMAGE,
    docker_seeing_only,
    niceeval_containers,
    processes_running,
    unique_seconds,
)

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
async def good(t):
    await t.send("fix")
    t.sandbox.file_exists("out.txt").gate()

@define_eval()
async def bad(t):
    await t.send("fix")
    t.sandbox.file_exists("missing.txt").gate()
"""


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.slow)])  # a container takes seconds
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_image")
    return str(request.param)


def _setup(project, kind: str, argv: list[str]) -> None:
    project.write("repo/README.md", "# r\n")
    table = 'template = "repo"\n' + (f'kind = "docker"\nimage = "{SHELL_IMAGE}"\n' if kind == "docker" else "")
    project.write("niceeval.toml", f"[project]\n[experiments.agent]\nadapter = \"command\"\n"
                                   f"[experiments.agent.options]\nargv = {json.dumps(argv)}\n"
                                   f"[experiments.agent.sandbox]\n{table}")
    project.write("evals/e.py", EVALS)


def _only_this_run(project) -> dict[str, str]:
    """`sandbox list|prune` see only this test's containers (a parallel test's kept ones stay)."""
    (run,) = project.query("runs")
    return {"NICEEVAL_DOCKER": docker_seeing_only(run["id"], project.root)}


def _kept(project) -> dict[str, str]:
    out = {}
    for attempt in project.attempts():
        stored = attempt["sandbox"] if isinstance(attempt["sandbox"], dict) else json.loads(attempt["sandbox"])
        if "kept" in stored:
            out[attempt["eval_id"]] = stored["kept"]
    return out


def test_keep_failed_keeps_only_the_failed_attempts_sandbox_and_says_where(project, kind, own_tempdir):
    _setup(project, kind, ["sh", "-c", "read task; echo ok > out.txt"])
    run = project.run("--keep-sandbox", "failed")
    assert run.exit_code == 1, run.stdout + run.stderr
    kept = _kept(project)
    assert list(kept) == ["e/bad"]
    assert kept["e/bad"] in run.stdout  # printed in the summary
    if kind == "local":
        assert (Path(kept["e/bad"]) / "out.txt").read_text() == "ok\n"
    mine = _only_this_run(project)
    listed = project.cli("sandbox", "list", env=mine)
    assert listed.exit_code == 0 and kept["e/bad"] in listed.stdout and "kept" in listed.stdout
    pruned = project.cli("sandbox", "prune", env=mine)
    assert pruned.exit_code == 0 and kept["e/bad"] in pruned.stdout
    assert kept["e/bad"] not in project.cli("sandbox", "list", env=mine).stdout
    assert list(own_tempdir.glob("niceeval-sandbox-*")) == []
    if kind == "docker":
        assert niceeval_containers(store=project.root / ".niceeval" / "results.db") == []


def test_keep_all_keeps_passed_attempts_too(project, kind, own_tempdir):
    _setup(project, kind, ["sh", "-c", "read task; echo ok > out.txt"])
    project.run("--keep-sandbox", "all")
    assert set(_kept(project)) == {"e/good", "e/bad"}
    assert project.cli("sandbox", "prune", env=_only_this_run(project)).exit_code == 0
    assert list(own_tempdir.glob("niceeval-sandbox-*")) == []


def test_keep_sandbox_rejects_an_unknown_value(project):
    _setup(project, "local", ["sh", "-c", "read task"])
    run = project.run("--keep-sandbox", "sometimes")
    assert run.exit_code == 2
    assert "--keep-sandbox" in run.stderr and "failed" in run.stderr and "all" in run.stderr


@pytest.mark.slow
def test_ctrl_c_kills_the_sandbox_processes_and_removes_the_sandbox(project, kind, tmp_path):
    first, second = unique_seconds(), unique_seconds()
    _setup(project, kind, ["sh", "-c", f"read task; touch started; sleep {first} & sleep {second}"])
    project.write("niceeval.toml", (project.root / "niceeval.toml").read_text().replace(
        "[project]\n", "[project]\nmax_concurrency = 2\n"))
    tmp = tmp_path / "subprocess-tmp"
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "niceeval_cli.cli", "run", "--json"], cwd=project.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_COLOR": "1", "TMPDIR": str(tmp)})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # both attempts' agents are running in their sandboxes
            if kind == "local":
                if len(list(tmp.glob("niceeval-sandbox-*/workspace/started"))) == 2:
                    break
            elif len(niceeval_containers(owner=proc.pid)) == 2:
                time.sleep(1.5)
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the sandboxes never started")
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert list(tmp.glob("niceeval-sandbox-*")) == []
    if kind == "docker":
        assert niceeval_containers(owner=proc.pid) == []
    assert processes_running("sleep", first) == [] and processes_running("sleep", second) == []
