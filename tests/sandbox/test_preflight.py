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
