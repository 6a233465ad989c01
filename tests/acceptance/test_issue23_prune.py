"""Issue 23, item 9: `niceeval sandbox prune` kills only what NiceEval started.

It used to SIGKILL every process whose working directory was inside a kept workspace — the user's
own shell included, even the shell running `prune` (exit 137). Now a workspace someone else works
in is left with a note, and a process NiceEval started there is killed wherever it went (`setsid`
and `cd /`). Each test prunes only its own temp folder (TMPDIR) and never touches Docker.

The CLI runs in process (its TMPDIR the test's own, as in a new process); what is about a process
is real: the run killed while its sandbox's daemon escaped, `prune` run from a shell inside the
workspace it would remove, and one `sandbox list` after the killed run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.project import Project, stop, wait_for


@pytest.fixture
def proj(project: Project) -> Project:
    return project


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (killed, not yet reaped by its parent) is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _env(tmp: Path) -> dict[str, str | None]:
    return {"TMPDIR": str(tmp), "NICEEVAL_DOCKER": str(tmp / "no-docker-here")}


def _kept_project(proj: Project, body: str) -> Project:
    proj.write("app.py", 'def reply(message: str) -> str:\n    return "hello"\n')
    proj.write("template/README.md", "hello\n")
    proj.write("niceeval.toml", '[project]\n\n[experiments.local]\nadapter = "python"\n'
               '[experiments.local.options]\ncallable = "app:reply"\n[experiments.local.sandbox]\n'
               'template = "template"\n')
    evals = proj.root / "evals"
    evals.mkdir(exist_ok=True)
    (evals / "work.py").write_text(
        "import asyncio\n"
        "from niceeval_cli import define_eval\n"
        "from niceeval_cli.expect import includes\n\n\n"
        "@define_eval()\n"
        "async def work(t):\n"
        + body
        + "    turn = await t.send('hi')\n"
        "    t.check(turn.message, includes('hello')).label('Says hello')\n"
    )
    return proj


def _listed(proj: Project, tmp: Path) -> list[dict[str, object]]:
    result = proj.cli("sandbox", "list", "--json", env=_env(tmp))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def private_tmp(tmp_path: Path) -> Path:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp


def test_a_shell_working_in_a_kept_workspace_is_never_killed(proj: Project, private_tmp: Path) -> None:
    _kept_project(proj, "")
    result = proj.run("--keep-sandbox", "all", env=_env(private_tmp))
    assert result.returncode == 0, result.stdout + result.stderr
    (kept,) = [row["location"] for row in _listed(proj, private_tmp)]
    shell = subprocess.Popen(["sleep", "300"], cwd=str(kept))  # the user's shell, cd'd into it
    try:
        pruned = proj.cli("sandbox", "prune", env=_env(private_tmp))
        assert pruned.returncode == 0, pruned.stderr
        assert _alive(shell.pid)
        assert Path(str(kept)).is_dir()
        assert "left" in pruned.stdout and str(shell.pid) in pruned.stdout
        as_json = json.loads(proj.cli("sandbox", "prune", "--json", env=_env(private_tmp)).stdout)
        assert [(row["status"], row["pids"]) for row in as_json] == [("left-in-use", [shell.pid])]
    finally:
        stop(shell)
    again = proj.cli("sandbox", "prune", env=_env(private_tmp))
    assert again.returncode == 0 and not Path(str(kept)).exists()


def test_prune_run_from_inside_a_kept_workspace_finishes(proj: Project, private_tmp: Path) -> None:
    _kept_project(proj, "")
    assert proj.run("--keep-sandbox", "all", env=_env(private_tmp)).returncode == 0
    (kept,) = [row["location"] for row in _listed(proj, private_tmp)]
    # the shell running `prune` sits inside the workspace it would remove
    result = subprocess.run(["bash", "-c", f"cd '{kept}' && {' '.join(_cli())} sandbox prune; echo rc=$?"],
                            capture_output=True, text=True, env=_full_env(private_tmp), timeout=120)
    assert "rc=0" in result.stdout, result.stdout + result.stderr
    assert Path(str(kept)).is_dir()


def test_an_escaped_daemon_of_an_orphaned_sandbox_is_killed_by_prune(proj: Project, private_tmp: Path) -> None:
    pid_file = proj.root / "daemon.pid"
    # The command waits for the daemon's pid file: when it exits, what is left in its group is killed,
    # and the daemon must have left the group (setsid) by then.
    body = (
        "    await t.sandbox.run(['sh', '-c', \"setsid sh -c 'cd / && echo $$ > " + str(pid_file)
        + " && exec sleep 300' >/dev/null 2>&1 & while [ ! -s " + str(pid_file) + " ]; do sleep 0.05; done\"])\n"
        "    await asyncio.sleep(120)\n"
    )
    _kept_project(proj, body)
    run = proj.popen("run", env=_env(private_tmp))
    try:
        wait_for(lambda: (pid_file.is_file() and pid_file.read_text().strip().isdigit()) or run.poll() is not None,
                 timeout=120)
        assert run.poll() is None, run.communicate()
        daemon = int(pid_file.read_text())
        assert _alive(daemon)
    finally:
        stop(run, signal.SIGKILL)  # the owner dies without tearing anything down
    try:
        # `sandbox list` as a real process once (the suite's one): it reads the dead owner's pid as gone
        assert [row["status"] for row in _listed(Project(proj.root), private_tmp)] == ["orphaned"]
        pruned = proj.cli("sandbox", "prune", env=_env(private_tmp))
        assert pruned.returncode == 0, pruned.stderr
        wait_for(lambda: not _alive(daemon), timeout=10)
        assert _listed(proj, private_tmp) == []
    finally:
        if _alive(daemon):
            os.kill(daemon, signal.SIGKILL)


def _cli() -> list[str]:
    from tests.support.project import NICEEVAL

    return [f"'{part}'" for part in NICEEVAL]


def _full_env(tmp: Path) -> dict[str, str]:
    from tests.support.project import base_env

    return base_env(_env(tmp))
