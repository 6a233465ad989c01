"""The Ray executor against a real two-node cluster on this machine (scale.md): the same results
as in-process, attempts on both nodes, `max_concurrency` across the cluster, a worker killed
mid-attempt sealed `errored (executor-lost)` (run again only with --retry-lost), Ctrl-C.

One cluster for the module (`ray start --head` + `ray start --address` with resource `node2`),
stopped by pid at the end; the driver is a real `niceeval run` subprocess each time."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.project import Project
from tests.support.ray_cluster import Cluster, running_cluster
from tests.support.scale_project import TOML, comparable, eval_source

pytestmark = pytest.mark.slow

HERE = '_here = __import__("pathlib").Path(__file__).resolve().parent.parent'

PROBES = f"""
import asyncio, os, time
from niceeval_cli import define_eval
from niceeval_cli.expect import equals
{HERE}


def _note(kind):
    import ray
    with open(_here / "probes.log", "a") as log:
        log.write(f"{{kind}} {{time.time()}} {{ray.get_runtime_context().get_node_id()}} {{os.getpid()}}\\n")
"""
for _i in range(8):
    PROBES += f"""

@define_eval()
async def p{_i}(t):
    _note("start")
    await asyncio.sleep(0.4)
    _note("end")
    t.check({_i}, equals({_i}))
"""

VICTIM = f"""
import os, time
from niceeval_cli import define_eval
from niceeval_cli.expect import equals
{HERE}


@define_eval()
def victim(t):
    if not (_here / "victim.done").exists():
        (_here / "victim.pid").write_text(str(os.getpid()))
        time.sleep(60)
    t.check(1, equals(1))


@define_eval()
async def bystander(t):
    t.check(2, equals(2))
"""

SLOW = f"""
import asyncio
from niceeval_cli import define_eval
from niceeval_cli.expect import equals
{HERE}


@define_eval()
async def slow(t):
    (_here / "slow.started").write_text("1")
    await asyncio.sleep(60)
    t.check(1, equals(1))
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with running_cluster(nodes=2, check_stopped=True) as started:
        yield started


@pytest.fixture(scope="module")
def ray_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("rayproj")
    (root / "niceeval.toml").write_text(TOML)
    (root / "evals").mkdir()
    (root / "evals" / "many.py").write_text(eval_source())
    (root / "evals" / "probes.py").write_text(PROBES)
    (root / "evals" / "victim.py").write_text(VICTIM)
    (root / "evals" / "slow.py").write_text(SLOW)
    return root


def niceeval(root: Path, env: dict[str, str], *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "niceeval_cli", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=timeout)


def rows(root: Path, env: dict[str, str], target: str, store: str, *args: str) -> list[dict]:
    """The stored rows, read by `niceeval query` in process (reading a store is no Ray's business)."""
    return Project(root, in_process=True).query(target, "--store", store, *args)


def test_results_through_ray_equal_in_process_results(cluster, ray_project):
    env = cluster.env
    # The in-process run is the reference, nothing about its process is compared: run in process.
    local = Project(ray_project, in_process=True).run("many/", "--store", "inprocess.db")
    remote = niceeval(ray_project, env, "run", "many/", "--store", "ray.db", "--executor", "ray",
                      "--ray-address", cluster.address)
    assert remote.returncode == local.returncode == 1, remote.stderr
    for target in ("attempts", "assertions"):
        assert comparable(rows(ray_project, env, target, "ray.db")) == comparable(
            rows(ray_project, env, target, "inprocess.db"))
    run = rows(ray_project, env, "runs", "ray.db")[0]
    assert run["executor"] == "ray" and run["planned_total"] == 30
    # The summary says the same as in-process (only ids differ).
    def summary(out: str) -> list[str]:
        return [re.sub(r"[0-9A-HJKMNP-TV-Z]{26}", "ID", line) for line in out.splitlines()[-4:]]

    assert summary(remote.stdout) == summary(local.stdout)


def test_a_run_without_the_clusters_token_is_a_setup_error_naming_how_to_give_it(cluster, ray_project, tmp_path):
    """The test cluster wants its token (ray_cluster.py); a run given its address without the
    token (none in the environment, none in ~/.ray) runs nothing and says how to give it."""
    env = {key: value for key, value in cluster.env.items() if not key.startswith("RAY_AUTH")}
    env.update({"HOME": str(tmp_path), "RAY_NUM_REDIS_GET_RETRIES": "1"})  # Ray tries once, not for 20 s
    refused = niceeval(ray_project, env, "run", "many/", "--store", "refused.db", "--executor", "ray",
                       "--ray-address", cluster.address)
    assert refused.returncode == 3, refused.stderr
    assert "refused this run's Ray token" in refused.stderr
    assert "RAY_AUTH_MODE=token" in refused.stderr and "RAY_AUTH_TOKEN_PATH" in refused.stderr
    stored = Project(ray_project, in_process=True).cli("query", "attempts", "--store", "refused.db", "--format", "json")
    assert "No runs yet" in stored.stderr, stored


def test_attempts_spread_over_both_nodes_within_max_concurrency(cluster, ray_project):
    log = ray_project / "probes.log"
    log.unlink(missing_ok=True)
    done = niceeval(ray_project, cluster.env, "run", "probes/", "--store", "probes.db", "--executor", "ray",
                    "--ray-address", cluster.address, "--max-concurrency", "3", "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events].count("attempt.sealed") == 16
    notes = [line.split() for line in log.read_text().splitlines()]
    assert len({node for _, _, node, _ in notes}) == 2, notes  # both nodes ran attempts
    in_flight, most = 0, 0
    for kind, _, _, _ in sorted(notes, key=lambda n: float(n[1])):
        in_flight += 1 if kind == "start" else -1
        most = max(most, in_flight)
    assert 2 <= most <= 3


def _kill_victim(root: Path, driver: subprocess.Popen[str]) -> None:
    pid_file = root / "victim.pid"
    deadline = time.monotonic() + 90
    while not pid_file.exists():
        assert driver.poll() is None and time.monotonic() < deadline, "the victim attempt never started"
        time.sleep(0.1)
    time.sleep(0.2)
    (root / "victim.done").write_text("1")
    os.kill(int(pid_file.read_text()), signal.SIGKILL)  # the Ray worker process running the attempt


@pytest.mark.parametrize("retry", [False, True])
def test_a_worker_killed_mid_attempt_is_sealed_executor_lost(cluster, ray_project, retry):
    for name in ("victim.pid", "victim.done"):
        (ray_project / name).unlink(missing_ok=True)
    store = f"victim-{retry}.db"
    args = ["run", "victim/", "--store", store, "--executor", "ray", "--ray-address", cluster.address,
            "--attempts", "1", "--max-concurrency", "1", *(["--retry-lost"] if retry else [])]
    driver = subprocess.Popen([sys.executable, "-m", "niceeval_cli", *args], cwd=ray_project, env=cluster.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _kill_victim(ray_project, driver)  # once: the attempt run again (--retry-lost) passes
        _, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    attempts = {a["eval_id"]: a for a in rows(ray_project, cluster.env, "attempts", store)}
    assert attempts["victim/bystander"]["state"] == "passed"
    if retry:
        assert driver.returncode == 0, err
        assert attempts["victim/victim"]["state"] == "passed"
    else:
        assert driver.returncode == 5, err  # undecided, never silently missing
        assert (attempts["victim/victim"]["state"], attempts["victim/victim"]["reason"]) == ("errored", "executor-lost")
        assert "--retry-lost" in attempts["victim/victim"]["error"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_cancels_the_ray_tasks_and_exits_130(cluster, ray_project, sig):
    """SIGTERM too: `ray.init()` puts Ray's own SIGTERM handler in the driver (it logs a stack and
    ends the process, the run left `running`); the run's handler is given back after it."""
    started = ray_project / "slow.started"
    started.unlink(missing_ok=True)
    driver = subprocess.Popen(
        [sys.executable, "-m", "niceeval_cli", "run", "slow", "--attempts", "1", "--store", "slow.db",
         "--executor", "ray", "--ray-address", cluster.address],
        cwd=ray_project, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while not started.exists():
            assert driver.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        driver.send_signal(sig)
        _, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 130, err
    run = rows(ray_project, cluster.env, "runs", "slow.db")[0]
    attempt = rows(ray_project, cluster.env, "attempts", "slow.db")[0]
    assert run["status"] == "interrupted"
    assert (attempt["state"], attempt["reason"]) == ("errored", "interrupted")
