"""Issue 28 item 3: docker sandboxes near the daemon's own speed, isolation kept.

A docker-sandboxed attempt used to make five `docker cp` calls (each about a third of a
container start for the daemon): the template in, the baseline out, the test's write in, and
one read out per change assertion. Now the template is baked into an image once per run (the
first attempts copy it while that happens), the baseline is read once per run (no `prepare`:
every container starts the same), assertions registered together share one read, and a
container that is not kept is removed while the next attempt runs — the run ends only once
every container, helper and baked image it made is gone (or kept, and then pruned).

The CLI in process against the real daemon (a run that keeps its containers, or is interrupted, is
the real `niceeval`: a baked image names its maker's pid, which must be gone for `prune`); every
docker call goes through a logging wrapper (NICEEVAL_DOCKER) so the test counts them. Each test
looks only at its own run.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.docker import SHELL_IMAGE, docker_logging_to, docker_seeing_only, need_docker
from tests.support.project import Project, base_env, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def proj(project: Project) -> Project:
    return project

ATTEMPTS, CONCURRENCY = 12, 3

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals, pattern


@define_eval()
async def edit(t):
    done = await t.sandbox.run("echo changed >> README.md && cat README.md")
    # isolation: this attempt sees the template and its own line, never another attempt's
    t.check(done.stdout, equals("# bench\\nchanged\\n")).gate().label("own workspace")
    await t.sandbox.write_text("notes.txt", "hello\\n")
    t.sandbox.file_changed("README.md", status="modified").gate()
    t.sandbox.file_exists("notes.txt").gate()  # written before any t.send: part of the start, not a change
    t.sandbox.no_changes(["src"]).gate()
    t.sandbox.not_in_diff(pattern("api_key=")).gate()
"""


def _docker(*args: str) -> list[str]:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, env=base_env(), timeout=60)
    return done.stdout.split()


def _project(proj: Project, wrapper_log: Path) -> dict[str, str]:
    proj.write("repo/README.md", "# bench\n")
    for i in range(6):
        proj.write(f"repo/src/file_{i}.py", f"VALUE = {i}\n")
    proj.write("evals/bench.py", EVAL)
    proj.write("niceeval.toml", f'[project]\nevals = ["evals"]\n\n[experiments.docker.sandbox]\nkind = "docker"\n'
                                f'image = "{SHELL_IMAGE}"\ntemplate = "repo"\n')
    return {"NICEEVAL_DOCKER": docker_logging_to(wrapper_log, proj.root), "NO_COLOR": "1"}


def _left_by(run_id: str) -> dict[str, list[str]]:
    """Every container and image run `run_id` made that is still there."""
    return {
        "containers": _docker("ps", "-aq", "--filter", f"label=niceeval.sandbox.run={run_id}"),
        "helpers": _docker("ps", "-aq", "--filter", "name=niceeval-template-",
                           "--filter", f"label=niceeval.template.run={run_id}"),
        "images": _docker("images", "-q", "--filter", f"label=niceeval.template.run={run_id}"),
    }


def test_docker_attempts_copy_the_template_and_read_the_baseline_once_and_leave_nothing(proj: Project, tmp_path: Path):
    need_docker(SHELL_IMAGE)
    log = tmp_path / "docker-calls.log"
    env = _project(proj, log)
    done = proj.run("--attempts", str(ATTEMPTS), "--max-concurrency", str(CONCURRENCY), env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    attempts = proj.sql("SELECT state, sandbox FROM attempts")
    assert [a["state"] for a in attempts] == ["passed"] * ATTEMPTS, attempts
    checks = proj.sql("SELECT state, COUNT(*) AS n FROM assertion_results GROUP BY state")
    assert checks == [{"state": "matched", "n": ATTEMPTS * 5}], checks
    # the stored sandbox is the image the user named, not the run's baked copy of it
    image_id = _docker("image", "inspect", "--format", "{{.Id}}", SHELL_IMAGE)[0]
    assert {json.loads(a["sandbox"])["image_id"] for a in attempts} == {image_id}

    calls = log.read_text().splitlines()
    copies = [c.split() for c in calls if c.startswith("cp ")]
    assert not [c for c in copies if ":" in c[1]], copies  # nothing read with `docker cp`: the image has tar
    into = [c for c in copies if ":" in c[2]]  # cp SRC CONTAINER:PATH
    # the template only into the attempts created before the bake, and the bake; never the test's write
    assert 1 <= len(into) <= CONCURRENCY + 1 + 3, into  # a loaded machine may let a few more start first
    reads = [c for c in calls if c.startswith("exec ") and " -u 0 " in c]
    # one read per attempt (its four assertions share it), carrying the attempt's write in (`-i`),
    # and the run's one baseline
    assert len(reads) == ATTEMPTS + 1, reads
    assert sum(c.startswith("exec -i -u 0 ") and c.endswith(" notes.txt") for c in reads) == ATTEMPTS, reads
    assert sum(c.startswith("exec ") for c in calls) == 2 * ATTEMPTS + 1, calls  # the command, the read; baseline
    assert sum(c.startswith("commit ") for c in calls) == 1, calls
    assert not [c for c in calls if c.startswith(("inspect", "container inspect"))], calls  # nothing asked twice

    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    assert _left_by(run_id) == {"containers": [], "helpers": [], "images": []}


def test_kept_containers_keep_their_baked_image_until_pruned(proj: Project, tmp_path: Path):
    need_docker(SHELL_IMAGE)
    env = _project(proj, tmp_path / "docker-calls.log")
    # a real process: its baked image names its maker's pid, which must be gone for `prune` to remove it
    done = Project(proj.root).run("--attempts", "4", "--max-concurrency", "1", "--keep-sandbox", "all", env=env,
                                  timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    left = _left_by(run_id)
    try:
        assert len(left["containers"]) == 4 and left["helpers"] == [], left
        assert len(left["images"]) == 1, left  # later attempts started from it: it stays while they are kept
        for container in left["containers"]:  # each kept container has its own files
            shown = subprocess.run(["docker", "cp", f"{container}:/workspace/README.md", "-"], capture_output=True,
                                   env=base_env(), timeout=60)
            assert shown.returncode == 0 and shown.stdout.count(b"changed") == 1, shown
        scoped = {"NICEEVAL_DOCKER": docker_seeing_only(run_id, tmp_path), "NO_COLOR": "1"}
        pruned = proj.cli("sandbox", "prune", env=scoped)
        assert pruned.returncode == 0, pruned.stdout + pruned.stderr
        assert _left_by(run_id) == {"containers": [], "helpers": [], "images": []}
    finally:
        for container in _left_by(run_id)["containers"]:
            _docker("rm", "-f", "-v", container)
        for image in _left_by(run_id)["images"]:
            _docker("rmi", image)


SLOW_EVAL = """
import asyncio
from pathlib import Path
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

_here = Path(__file__).resolve().parent.parent


@define_eval()
async def slow(t):
    done = await t.sandbox.run("cat README.md")
    t.check(done.stdout, equals("# bench\\n"))
    (_here / "started.flag").write_text("1")
    await asyncio.sleep(60)
"""


def test_an_interrupted_run_removes_its_containers_helpers_and_baked_images(proj: Project, tmp_path: Path):
    need_docker(SHELL_IMAGE)
    env = _project(proj, tmp_path / "docker-calls.log")
    proj.write("evals/bench.py", SLOW_EVAL)
    proc = proj.popen("run", "--attempts", "6", "--max-concurrency", "3", env=env)
    try:
        wait_for(lambda: (proj.root / "started.flag").exists() or proc.poll() is not None, timeout=180)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, out + err
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    assert _left_by(run_id) == {"containers": [], "helpers": [], "images": []}


PREPARED_EVAL = """
from niceeval_cli import define_eval


@define_eval()
async def untouched(t):
    t.sandbox.no_changes().gate()
"""


def test_a_sandbox_with_prepare_takes_each_attempts_own_baseline(proj: Project, tmp_path: Path):
    """`prepare` may leave different files in each container (here a random stamp): the baseline is
    then read per attempt, after its own `prepare`, never shared — `no_changes()` passes everywhere."""
    need_docker(SHELL_IMAGE)
    log = tmp_path / "docker-calls.log"
    env = _project(proj, log)
    proj.write("evals/bench.py", PREPARED_EVAL)
    with (proj.root / "niceeval.toml").open("a") as toml:
        toml.write("prepare = [\"cat /proc/sys/kernel/random/uuid > stamp.txt\"]\n")
    done = proj.run("--attempts", "4", "--max-concurrency", "2", env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [a["state"] for a in proj.sql("SELECT state FROM attempts")] == ["passed"] * 4
    reads = [c for c in log.read_text().splitlines() if c.startswith("exec ") and " -u 0 " in c]
    assert len(reads) == 2 * 4, reads  # each attempt's baseline and its one assertion read
    run_id = proj.sql("SELECT id FROM runs")[0]["id"]
    assert _left_by(run_id) == {"containers": [], "helpers": [], "images": []}
