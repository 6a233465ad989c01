"""Issue 23, item 13: what an attempt started is torn down, whoever lost it.

1. A Ray worker killed mid-attempt never reaches its attempts' teardown: after the run, no
   process those attempts started (a daemon that left its group and the workspace) and no docker
   container of that run is left — the driver sweeps the run's sandboxes on every alive node.
   Against a real two-node local Ray cluster (the acceptance checks' shared `ray_cluster`), driven
   by a real `niceeval run`.
2. In a normal (in-process) run, an agent's process that leaves both its process group and the
   workspace (`setsid` + `cd /`) does not survive the run.

Each test looks only at what it made: its own `sleep` duration (`unique_seconds`), its own run id.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.docker import SHELL_IMAGE, need_docker, niceeval_containers, processes_running, unique_seconds
from tests.support.project import Project, wait_for
from tests.support.ray_cluster import Cluster

RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0"}  # with the cluster's token: `ray_cluster.auth`

# The daemon leaves its group (setsid) and the workspace (cd /); the command returns once it has.
DAEMON = ("setsid sh -c 'echo $$ > daemon.pid; cd / && exec sleep SECONDS' >/dev/null 2>&1 </dev/null & "
          "while [ ! -s daemon.pid ]; do sleep 0.05; done")

# Each attempt starts a daemon in its sandbox, then (the first time) holds its Ray worker until the
# test kills that worker's process.
SANDBOXED = """
import asyncio, os
from niceeval_cli import define_eval, FACTORY
from niceeval_cli.expect import equals

_here = __import__('pathlib').Path(__file__).resolve().parent.parent


@define_eval(sandbox=FACTORY(ARGS))
async def boxedN(t):
    await t.sandbox.run(DAEMON)
    if not (_here / "boxed.done").exists():
        with open(_here / "boxed.pids", "a") as log:
            log.write(f"{os.getpid()}\\n")
        await asyncio.sleep(120)
    t.check(1, equals(1))
"""


def _workspaces_of(run_id: str) -> list[Path]:
    """Local workspaces recorded as made for `run_id` (the Ray workers make them in their temp folder)."""
    found = []
    for owner in Path(tempfile.gettempdir()).glob("niceeval-sandbox-*/owner.json"):
        try:
            if json.loads(owner.read_text()).get("run") == run_id:
                found.append(owner.parent)
        except (OSError, ValueError):
            continue
    return found


def _running(seconds: str) -> list[int]:
    """This test's daemons still alive (a SIGKILLed one waiting for its reaper has no cmdline)."""
    return processes_running("sleep", seconds)


def _gone(seconds: str) -> bool:
    deadline = time.monotonic() + 5
    while _running(seconds) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _running(seconds)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["local", "docker"])
def test_a_lost_ray_workers_sandboxes_are_removed_after_the_run(proj: Project, ray_cluster: Cluster, kind: str) -> None:
    if kind == "docker":
        need_docker(SHELL_IMAGE)
        factory, args = "docker_sandbox", f'image="{SHELL_IMAGE}"'
    else:
        factory, args = "local_sandbox", ""
    seconds = unique_seconds()
    for n in range(3):
        source = (SANDBOXED.replace("FACTORY", factory).replace("ARGS", args).replace("boxedN", f"boxed{n}")
                  .replace("DAEMON", repr(DAEMON.replace("SECONDS", seconds))))
        proj.write(f"evals/boxed{n}.py", source)
    store = proj.root / f"boxed-{kind}.db"
    driver = proj.popen("run", "--store", store.name, "--executor", "ray", "--ray-address", ray_cluster.address,
                        "--attempts", "1", "--max-concurrency", "3", env={**RAY_ENV, **ray_cluster.auth})
    pids = proj.root / "boxed.pids"
    try:
        wait_for(lambda: (pids.exists() and len(pids.read_text().split()) == 3 and len(_running(seconds)) == 3)
                 or driver.poll() is not None, timeout=240)
        assert driver.poll() is None, driver.communicate()
        assert len(_running(seconds)) == 3  # every attempt's daemon is up: the scenario happened
        (proj.root / "boxed.done").write_text("1")  # run again, an attempt passes at once
        for pid in set(pids.read_text().split()):  # every worker holding a sandboxed attempt
            os.kill(int(pid), signal.SIGKILL)
        out, err = driver.communicate(timeout=300)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode in (0, 5), out + err  # the attempts' verdicts are item 4's business
    (run_id,) = [row["id"] for row in proj.sql("SELECT id FROM runs", store=store)]
    assert _gone(seconds), f"a process an attempt started survived the run: {_running(seconds)}"
    if kind == "docker":
        assert niceeval_containers(store=store) == [], "a container of a lost attempt survived the run"
    assert _workspaces_of(run_id) == [], "a workspace of a lost attempt survived the run"


def test_an_agent_daemon_that_left_its_group_and_the_workspace_does_not_outlive_a_run(
        proj: Project, tmp_path: Path) -> None:
    seconds = unique_seconds()
    # the agent (a `command` adapter in the attempt's local sandbox) daemonises a helper and answers
    told = proj.root / "daemon.pid"
    proj.write("agent.sh", "#!/bin/sh\n" + DAEMON.replace("SECONDS", seconds) + f"\ncp daemon.pid {told}\necho hello\n")
    (proj.root / "agent.sh").chmod(0o755)
    proj.write("niceeval.toml", '[project]\n\n[experiments.local]\nadapter = "command"\n'
               '[experiments.local.options]\nargv = ["sh", "agent.sh"]\n[experiments.local.sandbox]\n'
               'kind = "local"\n')
    proj.write("evals/agent.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes


        @define_eval()
        async def agent(t):
            turn = await t.send("hi")
            t.check(turn.message, includes("hello")).label("Says hello")
    """)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = proj.run(env={"TMPDIR": str(tmp)}, timeout=180)
    try:
        assert done.returncode == 0, done.stdout + done.stderr
        assert told.read_text().strip().isdigit()  # the daemon was started: the scenario happened
        assert _gone(seconds), "the agent's daemon (setsid + cd /) outlived the run"
        assert list(tmp.glob("niceeval-sandbox-*")) == []
    finally:
        for pid in _running(seconds):
            os.kill(pid, signal.SIGKILL)
