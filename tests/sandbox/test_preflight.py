"""Before dispatch (sandbox.md): a missing image or an unreachable daemon is a setup error (exit 3)
naming the image or the socket and the fix; each distinct sandbox is checked once."""

from __future__ import annotations

import os
import subprocess

import pytest

from niceeval_cli._errors import ExitCode
from niceeval_cli.sandbox import SandboxSetupError, docker_sandbox, local_sandbox, preflight_sandboxes


async def test_a_missing_image_names_it_and_says_it_is_never_pulled(docker_image):
    spec = docker_sandbox(image="niceeval-test/not-built").resolved()
    with pytest.raises(SandboxSetupError) as caught:
        await preflight_sandboxes([(spec, "experiment 'a'"), (spec, "experiment 'b'")])
    message = str(caught.value)
    assert caught.value.exit_code == ExitCode.SETUP
    assert "'niceeval-test/not-built' is not present locally" in message
    assert "docker build -t niceeval-test/not-built" in message and "never pulls" in message
    assert "used by experiment 'a', experiment 'b'" in message


async def test_an_unreachable_daemon_names_the_socket_and_how_to_start_it(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    spec = docker_sandbox(image="anything").resolved()
    with pytest.raises(SandboxSetupError) as caught:
        await preflight_sandboxes([(spec, "experiment 'docker'")])
    message = str(caught.value)
    assert "unix:///nonexistent/docker.sock" in message and "is not reachable" in message
    assert "dockerd" in message


async def test_a_missing_docker_cli_says_how_to_install_it(monkeypatch):
    monkeypatch.setenv("NICEEVAL_DOCKER", "/nonexistent/docker")
    with pytest.raises(SandboxSetupError, match=r"not installed; install Docker"):
        await preflight_sandboxes([(docker_sandbox(image="x").resolved(), "experiment 'docker'")])


async def test_a_present_image_passes_and_gives_its_id(docker_image):
    ids = await preflight_sandboxes([(docker_sandbox(image=docker_image).resolved(), "experiment 'a'"),
                                     (local_sandbox().resolved(), "experiment 'b'")])
    assert ids[("docker", docker_image)].startswith("sha256:")
    assert ids[("local", None)] is None


def _probes() -> list[str]:
    """The probe containers this test process made (their names and labels carry its pid)."""
    import os
    import subprocess

    done = subprocess.run(["docker", "ps", "-aq", f"--filter=label=niceeval.sandbox.probe={os.getpid()}",
                           f"--filter=name=niceeval-probe-{os.getpid()}-"], capture_output=True, text=True,
                          timeout=30, check=False)
    return done.stdout.split()


@pytest.mark.slow
async def test_a_cancelled_binary_probe_leaves_no_container(docker_image):
    """A coding agent's binary is checked in a throwaway container (`DockerKind.probe`). Killing the
    `docker run` client does not stop its container: a probe cancelled while a binary never
    answers (busybox `yes --version` prints for ever) must remove the container itself."""
    import asyncio

    from niceeval_cli.sandbox import kind_for

    spec = docker_sandbox(image=docker_image).resolved()
    probing = asyncio.ensure_future(kind_for(spec).probe(spec, ["yes", "--version"], timeout_ms=120_000))
    try:
        for _ in range(300):
            await asyncio.sleep(0.1)
            if _probes():
                break
        assert _probes(), "the probe's container never started"
        probing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await probing
        assert _probes() == []
    finally:
        probing.cancel()
        for container in _probes():
            await asyncio.to_thread(__import__("subprocess").run, ["docker", "rm", "-f", container],
                                    capture_output=True, timeout=60, check=False)


@pytest.mark.slow
def test_a_probe_left_running_by_a_killed_run_is_listed_orphaned_and_pruned(docker_image, tmp_path):
    """A run killed outright (SIGKILL: no cleanup runs) while a binary probe hangs leaves the probe's
    container running. It carries the sandbox label, its owner and its host like every sandbox
    container, so `sandbox list` shows it `orphaned` and `sandbox prune` removes it."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.support.docker import docker_seeing_only
    from tests.support.project import Project

    prober = (
        "import asyncio\n"
        "from niceeval_cli.sandbox import docker_sandbox, kind_for\n"
        f"spec = docker_sandbox(image={docker_image!r}).resolved()\n"
        "asyncio.run(kind_for(spec).probe(spec, ['sleep', '300'], timeout_ms=600_000))\n"
    )
    child = subprocess.Popen([sys.executable, "-c", prober], start_new_session=True)
    name = f"niceeval-probe-{child.pid}-"

    def probes() -> list[str]:
        return subprocess.run(["docker", "ps", "-aq", f"--filter=name={name}"], capture_output=True, text=True,
                              timeout=30, check=False).stdout.split()

    try:
        deadline = time.monotonic() + 60
        while not probes():
            assert time.monotonic() < deadline and child.poll() is None, "the probe's container never started"
            time.sleep(0.1)
        os.killpg(child.pid, signal.SIGKILL)  # the run and its `docker run` client, no cleanup
        child.wait(timeout=30)
        assert probes(), "the probe's container outlived its run"
        project = Project(tmp_path)
        mine = {"NICEEVAL_DOCKER": docker_seeing_only(None, tmp_path, label=f"niceeval.sandbox.probe={child.pid}")}
        listed = project.cli("sandbox", "list", "--json", env=mine)
        assert listed.returncode == 0, listed.stderr
        rows = json.loads(listed.stdout)
        assert [(row["kind"], row["status"]) for row in rows] == [("docker", "orphaned")], rows
        assert name in rows[0]["location"]
        pruned = project.cli("sandbox", "prune", env=mine)
        assert pruned.returncode == 0 and name in pruned.stdout, pruned.stdout + pruned.stderr
        assert probes() == []
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        for container in probes():
            subprocess.run(["docker", "rm", "-f", container], capture_output=True, timeout=60, check=False)


async def test_over_the_socket_the_preflight_spawns_no_client_and_gives_the_clis_id(docker_image, tmp_path,
                                                                                   monkeypatch):
    from niceeval_cli.sandbox import _engine
    from tests.support.docker import docker_logging_to

    if _engine.engine_socket() is None:
        pytest.skip("the daemon is not on a local socket here: the preflight uses the CLI (checked above)")
    log = tmp_path / "clients.log"
    docker_logging_to(log, tmp_path, name="docker")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    expected = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", docker_image],
                              capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    log.unlink()
    ids = await preflight_sandboxes([(docker_sandbox(image=docker_image).resolved(), "experiment 'a'")])
    assert ids[("docker", docker_image)] == expected  # the same id the fingerprint always held
    assert not log.exists(), log.read_text()
    with pytest.raises(SandboxSetupError, match="'niceeval-test/never-built' is not present locally"):
        await preflight_sandboxes([(docker_sandbox(image="niceeval-test/never-built").resolved(), "experiment 'b'")])
    assert not log.exists(), log.read_text()


async def test_a_reachable_socket_without_the_cli_still_says_how_to_install_it(docker_image, monkeypatch):
    from niceeval_cli.sandbox import _engine

    if _engine.engine_socket() is None:
        pytest.skip("the daemon is not on a local socket here: the CLI check above covers it")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxSetupError, match=r"not installed; install Docker"):
        await preflight_sandboxes([(docker_sandbox(image=docker_image).resolved(), "experiment 'docker'")])
