"""Before dispatch (sandbox.md): a missing image or an unreachable daemon is a setup error (exit 3)
naming the image or the socket and the fix; each distinct sandbox is checked once."""

from __future__ import annotations

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
