"""Issue 28 item 3, session 6: a docker write goes in with the workspace's next use.

An eval that writes a file and then checks its changes paid two daemon operations: `docker cp`
in, `docker cp` out. The write is now held until the workspace is next used, and a read of the
whole workspace carries it in: one `docker exec` that untars the held files and tars the
workspace out. What a user sees must not change: the read sees the write, a write over a symlink
replaces the link (never writes where it points), a write that cannot be done is reported by
the read that carried it, and a kept container holds every write of its attempt.

The CLI in process against the real daemon; every docker call goes through a logging wrapper
(NICEEVAL_DOCKER) so the tests see which calls carried what.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.docker import SHELL_IMAGE, docker_logging_to, docker_seeing_only, need_docker
from tests.support.project import Project, base_env

pytestmark = pytest.mark.slow


@pytest.fixture
def proj(project: Project) -> Project:
    return project

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def write_then_check(t):
    done = await t.sandbox.run("echo changed >> README.md")
    t.check(done.exit_code, equals(0)).gate()
    await t.sandbox.write_text("notes.txt", "hello\\n")
    t.sandbox.file_changed("README.md", status="modified").gate()
    t.sandbox.file_exists("notes.txt").gate().label("the read sees the write it carried")


@define_eval()
async def write_over_a_planted_link(t):
    done = await t.sandbox.run("ln -s /etc/hostname planted.txt && cp /etc/hostname /tmp/hostname.before")
    t.check(done.exit_code, equals(0)).gate()
    await t.sandbox.write_text("planted.txt", "mine\\n")
    t.sandbox.file_exists("planted.txt").gate().label("read with the write")
    after = await t.sandbox.run("cat planted.txt; [ -L planted.txt ] && echo LINK; "
                                "cmp -s /etc/hostname /tmp/hostname.before && echo SAME")
    t.check(after.stdout, equals("mine\\nSAME\\n")).gate().label("the link was replaced, /etc untouched")


@define_eval()
async def write_onto_a_directory(t):
    await t.sandbox.write_text("src", "not a directory\\n")
    t.sandbox.file_exists("src").label("read after the write")


@define_eval()
async def write_then_read_one_file(t):
    await t.sandbox.write_text("deep/new.txt", "one\\n")
    t.check(await t.sandbox.read_text("deep/new.txt"), equals("one\\n")).gate()
"""


def _project(proj: Project, log: Path) -> dict[str, str]:
    proj.write("repo/README.md", "# bench\n")
    proj.write("repo/src/keep.py", "VALUE = 1\n")
    proj.write("evals/held.py", EVALS)
    proj.write("niceeval.toml", f'[project]\nevals = ["evals"]\n\n[experiments.docker.sandbox]\nkind = "docker"\n'
                                f'image = "{SHELL_IMAGE}"\ntemplate = "repo"\n')
    return {"NICEEVAL_DOCKER": docker_logging_to(log, proj.root), "NO_COLOR": "1"}


def _by_eval(proj: Project) -> dict[str, dict[str, object]]:
    return {row["eval_id"].split("/")[-1]: row for row in proj.sql("SELECT eval_id, state, error FROM attempts")}


def test_a_write_goes_in_with_the_next_read_and_means_what_it_meant(proj: Project, tmp_path: Path):
    need_docker(SHELL_IMAGE)
    log = tmp_path / "docker-calls.log"
    env = _project(proj, log)
    done = proj.run("--max-concurrency", "2", env=env, timeout=600)
    out = done.stdout + done.stderr
    states = _by_eval(proj)
    assert states["write_then_check"]["state"] == "passed", (states, out)
    assert states["write_over_a_planted_link"]["state"] == "passed", (states, out)
    assert states["write_then_read_one_file"]["state"] == "passed", (states, out)

    calls = log.read_text().splitlines()
    # the writes that a whole-workspace read followed went in with it, never through `docker cp`
    carried = [c for c in calls if c.startswith("exec -i -u 0 ")]
    assert sum(c.endswith(" notes.txt") for c in carried) == 1, carried
    assert sum(c.endswith(" planted.txt") for c in carried) == 1, carried
    into = [c.split() for c in calls if c.startswith("cp ") and ":" in c.split()[2]]
    assert len(into) <= 4 + 1, into  # the template (into attempts before the bake, the bake) and deep/new.txt only

    # a write that cannot be done is the read's failure, naming the file: never a pass
    onto = _by_eval(proj)["write_onto_a_directory"]
    assert onto["state"] != "passed", onto
    read = proj.sql("SELECT r.state, r.explanation FROM assertion_results r JOIN attempts a ON a.id = r.attempt_id "
                    "WHERE a.eval_id LIKE '%write_onto_a_directory'")
    assert len(read) == 1 and read[0]["state"] == "errored", read
    assert "src: could not write into the sandbox" in str(read[0]["explanation"]), read


KEPT_EVAL = """
from niceeval_cli import define_eval


@define_eval()
async def write_and_stop(t):
    await t.sandbox.write_text("left.txt", "kept\\n")
"""


def test_a_kept_container_holds_the_write_nothing_read_after(proj: Project, tmp_path: Path):
    need_docker(SHELL_IMAGE)
    env = _project(proj, tmp_path / "docker-calls.log")
    proj.write("evals/held.py", KEPT_EVAL)
    done = proj.run("--keep-sandbox", "all", env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    kept = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=niceeval.sandbox.run={run_id}"],
                          capture_output=True, text=True, env=base_env(), timeout=60).stdout.split()
    try:
        assert len(kept) == 1, kept
        shown = subprocess.run(["docker", "cp", f"{kept[0]}:/workspace/left.txt", "-"], capture_output=True,
                               env=base_env(), timeout=60)
        assert shown.returncode == 0 and b"kept\n" in shown.stdout, shown
    finally:
        scoped = {"NICEEVAL_DOCKER": docker_seeing_only(run_id, tmp_path), "NO_COLOR": "1"}
        proj.cli("sandbox", "prune", env=scoped)
        for container in kept:
            subprocess.run(["docker", "rm", "-f", "-v", container], capture_output=True, env=base_env(), timeout=60)


ENV_EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def env_of_the_command(t):
    done = await t.sandbox.run("echo ${GOMAXPROCS:-unset}")
    t.check(done.stdout, equals("unset\\n")).gate().label("the container never gets the client's setting")
    mine = await t.sandbox.run("echo $GOMAXPROCS", env={"GOMAXPROCS": "5"})
    t.check(mine.stdout, equals("5\\n")).gate().label("a command's own env wins")
"""


@pytest.mark.parametrize("given", [None, "3"])
def test_docker_clients_run_with_one_go_thread_unless_the_user_set_it(proj: Project, tmp_path: Path,
                                                                      given: str | None):
    """Each docker CLI client NiceEval spawns moves one stream and exits: GOMAXPROCS=1 spares the
    daemon's cores (benchmarks/README.md, session 6); a value of the user's is kept."""
    need_docker(SHELL_IMAGE)
    log = tmp_path / "docker-calls.log"
    env = _project(proj, log)
    proj.write("evals/held.py", ENV_EVAL)
    wrapper = proj.root / "docker-logging"
    real = shutil.which("docker") or "docker"
    wrapper.write_text(f'#!/bin/sh\necho "${{GOMAXPROCS:-unset}} $1" >> {shlex.quote(str(log))}\n'
                       f'exec {shlex.quote(real)} "$@"\n')
    done = proj.run(env={**env, "GOMAXPROCS": given}, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    calls = log.read_text().splitlines()
    assert calls.count("5 exec") == 1, calls  # the command given its own GOMAXPROCS: its client passes it on
    assert {line.split()[0] for line in calls if line != "5 exec"} == {given or "1"}, calls
