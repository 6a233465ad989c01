"""A real Ray cluster on this machine for tests and benchmarks: a head node plus, optionally, a
second node with its own resources (`ray start --head` + `ray start --address`), stopped by pid
(every process whose command line names the cluster's own temp dir, and all their descendants) —
never `ray stop`, which would stop every Ray on the machine.

Its nodes are given the address 127.0.0.1, yet where the machine has another address (a
developer's laptop; CI's namespace has loopback alone) Ray 2.60 gives them that one and listens
on every interface: only a one-machine Ray (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`) keeps a
loopback address, and that switch refuses a second node. So a test cluster runs with Ray's
token authentication (`RAY_AUTH_MODE=token`, a fresh token of its own in a private file): a
caller without the token is refused by every port it listens on beyond loopback
(tests/scale/test_ray_exposure.py), and its drivers take the token from `Cluster.env` (or
`Cluster.auth`).

A test cluster runs only what a `niceeval run` driver uses (the GCS, a raylet per node and the
agents each raylet starts itself) and starts its nodes side by side; `start_cluster` says what
is left out and why."""

from __future__ import annotations

import ipaddress
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.loopback import free_port

REPO = Path(__file__).resolve().parents[2]


#: Ray system config (`RAY_<name>`, read by every Ray process it reaches) for a test Ray.
#: `prestart_worker_first_driver`: a raylet starts idle Python workers when the first driver
#: connects, for tasks that never come — an attempt runs in an actor whose worker the driver's
#: runtime env (PYTHONPATH) makes a process of its own anyway; each idle one cost ~1 s of CPU.
TEST_SYSTEM_CONFIG = {"RAY_prestart_worker_first_driver": "false"}


def ray_env() -> dict[str, str]:
    """Workers must import this tree's niceeval_cli; no token auth (a Ray the product starts itself
    listens on loopback only, and a local `ray.init()` with the mode unset would write a token to
    the user's ~/.ray; `start_cluster` turns it on for a cluster of its own); a test Ray's system
    config (`TEST_SYSTEM_CONFIG`) for every Ray this environment starts."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env["RAY_AUTH_MODE"] = "disabled"
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    env.update(TEST_SYSTEM_CONFIG)
    return env


def processes_naming(marker: str, roots: Iterable[int] = ()) -> dict[int, str]:
    """Live processes (pid → name) whose command line names `marker` (a Ray temp dir of a test's
    own), the `roots` given, and every descendant of any of them — nobody else's on this machine."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    found = set(roots)
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
        pid = int(entry.name)
        names[pid] = stat[stat.find("(") + 1:stat.rfind(")")]
        parents[pid] = int(fields[1])
        if marker.encode() in cmdline:
            found.add(pid)
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in found and pid not in found:
                found.add(pid)
                grew = True
    return {pid: names.get(pid, "?") for pid in found}


def _address(hexed: str) -> str:
    """An address of /proc/net/tcp{,6}: 32-bit words in host byte order (little-endian here)."""
    raw = b"".join(bytes.fromhex(hexed[i:i + 8])[::-1] for i in range(0, len(hexed), 8))
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)


def listening_sockets(processes: dict[int, str], netns_of: int) -> set[tuple[str, str, int]]:
    """(process name, address, port) of every TCP socket in LISTEN the given processes hold (the
    sockets of the network namespace process `netns_of` is in)."""
    listeners: dict[str, tuple[str, int]] = {}  # socket inode → where it listens
    for table in (f"/proc/{netns_of}/net/tcp", f"/proc/{netns_of}/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:  # the run has ended
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                host, port = fields[1].split(":")
                listeners[fields[9]] = (_address(host), int(port, 16))
    seen = set()
    for pid, name in processes.items():
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in listeners:
                seen.add((name, *listeners[target[8:-1]]))
    return seen


def is_loopback(address: str) -> bool:
    """An address of `listening_sockets` on loopback (an IPv4 one mapped into IPv6 too)."""
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


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

    @property
    def auth(self) -> dict[str, str]:
        """What a driver's environment needs to join this cluster: Ray's token mode and the file
        holding the cluster's token (`env` has them already)."""
        return {name: self.env[name] for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH")}

    def pids(self) -> set[int]:
        """Every live process of this cluster: those naming its temp dir, and their descendants."""
        return set(processes_naming(str(self.temp_dir))) - {os.getpid()}

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


def start_cluster(*, nodes: int = 2, cpus: int = 2) -> Cluster:
    """Start a head node (and `nodes - 1` more, each with resource `node<N>`); the caller stops it.

    What a test cluster leaves out, each a documented `ray start` flag: the log monitors
    (`--include-log-monitor false`: they forward worker output to drivers, and a `niceeval run`
    connects with `log_to_driver=False`; Ray's own `cluster_utils` runs none on added nodes) and
    the autoscaler monitor (`--no-monitor`, as KubeRay starts heads: nothing autoscales here) —
    three Python processes a cluster, ~1.5 s of CPU to start and more to poll. `cpus` (2) is the
    node's CPU count, and with it how many workers its raylet starts at once (at most the
    machine's cores): the actors of a run ask for none, but a driver makes its ledger and the
    head's worker together, and a lost worker's attempts each start a fresh one. The other nodes
    start as soon as the head's GCS answers, beside the rest of the head (its API server, its
    raylet): a node joins through the GCS alone."""
    temp_dir = Path(tempfile.mkdtemp(prefix="nr", dir="/tmp"))  # short: Ray's socket paths have a length limit
    port = free_port()
    env = {**ray_env(), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(_new_token(temp_dir))}
    cluster = Cluster(f"127.0.0.1:{port}", temp_dir, env, nodes)
    common = ["--num-cpus", str(cpus), "--disable-usage-stats", "--include-log-monitor", "false"]
    head = [*_ray_cli(), "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
            "--include-dashboard", "false", "--no-monitor", "--temp-dir", str(temp_dir), *common,
            *_own_ports(head=True)]
    others = [[*_ray_cli(), "start", "--address", cluster.address, "--node-ip-address", "127.0.0.1",
               "--resources", f'{{"node{n}": 1}}', *common, *_own_ports()] for n in range(2, nodes + 1)]
    started: list[subprocess.Popen[str]] = []
    try:
        started.append(_ray_start(head, env))
        if others:
            _wait_for_gcs(port, started[0])
            started += [_ray_start(argv, env) for argv in others]
        for process in started:
            _finished(process)
    except BaseException:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.communicate()
        cluster.stop()
        raise
    return cluster


def _new_token(folder: Path) -> Path:
    """A fresh token in a file only this user reads (Ray reads it from `RAY_AUTH_TOKEN_PATH`),
    removed with the cluster's temp dir."""
    path = folder / "auth_token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(32))
    return path


def _ray_start(argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _finished(process: subprocess.Popen[str], timeout: float = 120) -> None:
    """`ray start` returns once its node is registered with the GCS; a failure names its output."""
    out, _ = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, process.args, out)


def _wait_for_gcs(port: int, head: subprocess.Popen[str], timeout: float = 120) -> None:
    """Until the head's GCS accepts connections (a `ray start --head` that ended first failed)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            pass
        if head.poll() is not None:
            _finished(head)  # raises with its output when it failed
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the test Ray head's GCS did not answer on port {port} in {timeout:.0f} s")
        time.sleep(0.05)


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


class SharedCluster:
    """One test cluster for the tests of several modules, run one after another on one worker (an
    xdist group): started by the first test that asks (`get`), stopped by its conftest once the
    next test does not need it (`stop`), so it neither starts once per module nor idles while the
    worker runs other tests. Run without xdist, it starts again for each run of such tests."""

    def __init__(self, *, nodes: int = 2) -> None:
        self.nodes = nodes
        self._cluster: Cluster | None = None

    def get(self) -> Cluster:
        """The running cluster, started now if none is (skipped, or failed under CI, without Ray)."""
        from tests.support.components import need_ray

        need_ray()
        if self._cluster is None:
            self._cluster = start_cluster(nodes=self.nodes)
        return self._cluster

    def stop(self) -> None:
        """Stop the cluster if one runs, and check that none of its processes is left running."""
        cluster, self._cluster = self._cluster, None
        if cluster is not None:
            cluster.stop()
            assert not cluster.pids(), "a Ray process of the test cluster is still running"
