"""A real Ray cluster on this machine for tests and benchmarks: a head node plus, optionally, a
second node with its own resources (`ray start --head` + `ray start --address`), bound to
127.0.0.1, stopped by pid (every process whose command line names the cluster's own temp dir,
and all their descendants) — never `ray stop`, which would stop every Ray on the machine."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.loopback import free_port

REPO = Path(__file__).resolve().parents[2]


def ray_env() -> dict[str, str]:
    """Workers must import this tree's niceeval_cli; no token auth for a loopback test cluster."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env["RAY_AUTH_MODE"] = "disabled"
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return env


def _ray_cli() -> list[str]:
    found = shutil.which("ray")
    return [found] if found else [sys.executable, "-m", "ray.scripts.scripts"]


@dataclass
class Cluster:
    address: str
    temp_dir: Path
    env: dict[str, str]
    nodes: int
    roots: list[int] = field(default_factory=list)

    def pids(self) -> set[int]:
        """Every live process of this cluster: those naming its temp dir, and their descendants."""
        parents: dict[int, int] = {}
        named: set[int] = set()
        marker = str(self.temp_dir).encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if fields[0] == "Z":
                continue
            parents[int(entry.name)] = int(fields[1])
            if marker in cmdline:
                named.add(int(entry.name))
        found = set(named)
        grew = True
        while grew:
            grew = False
            for pid, parent in parents.items():
                if parent in found and pid not in found:
                    found.add(pid)
                    grew = True
        return found - {os.getpid()}

    def stop(self) -> None:
        """Kill every process of the cluster at once (SIGKILL) and wait until none is left. A test
        cluster keeps nothing worth a graceful stop, and SIGTERM cost ~10 s a cluster: the raylets
        drain for 10 s and the GCS server and the autoscaler monitor ignore it until killed. The
        loop catches a process a dying one started meanwhile."""
        deadline = time.monotonic() + 15.0
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _own_ports(*, head: bool = False) -> list[str]:
    """Ports of this node's own (bound to port 0, then released), for the listeners Ray would
    otherwise open on fixed defaults (the head's dashboard process on 8265 without retries, the
    dashboard agent's 52365): clusters of tests running in parallel never meet on one. (The
    client server, 10001, runs only with ray[client].)"""
    flags = ["--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--metrics-export-port",
             "--runtime-env-agent-port", "--node-manager-port", "--object-manager-port"]
    if head:
        flags.append("--dashboard-port")
    return [item for flag in flags for item in (flag, str(free_port()))]


def start_cluster(*, nodes: int = 2, cpus: int = 1) -> Cluster:
    """Start a head node (and `nodes - 1` more, each with resource `node<N>`); the caller stops it."""
    temp_dir = Path(tempfile.mkdtemp(prefix="nr", dir="/tmp"))  # short: Ray's socket paths have a length limit
    port = free_port()
    env = ray_env()
    cluster = Cluster(f"127.0.0.1:{port}", temp_dir, env, nodes)
    common = ["--num-cpus", str(cpus), "--disable-usage-stats"]
    try:
        subprocess.run(
            [*_ray_cli(), "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
             "--include-dashboard", "false", "--temp-dir", str(temp_dir), *common, *_own_ports(head=True)],
            env=env, check=True, capture_output=True, timeout=120,
        )
        for n in range(2, nodes + 1):
            subprocess.run(
                [*_ray_cli(), "start", "--address", cluster.address, "--node-ip-address", "127.0.0.1",
                 "--resources", f'{{"node{n}": 1}}', *common, *_own_ports()],
                env=env, check=True, capture_output=True, timeout=120,
            )
    except BaseException:
        cluster.stop()
        raise
    return cluster


@contextmanager
def running_cluster(*, nodes: int = 2, check_stopped: bool = False) -> Iterator[Cluster]:
    """A started cluster for a test module's fixture, skipped (or failed under CI) without Ray,
    stopped afterwards; `check_stopped` then asserts none of its processes is left running."""
    from tests.support.components import need_ray

    need_ray()
    started = start_cluster(nodes=nodes)
    try:
        yield started
    finally:
        started.stop()
    if check_stopped:
        assert not started.pids(), "a Ray process of the test cluster is still running"
