"""A docker workspace refuses a path it could not check: where a symlink among a path's directories
leads is asked inside the container (`docker exec`), and the daemon's own file calls follow links
anywhere in the container. When that question gets no answer — the exec refused (here: the
container is paused; the daemon still serves its files), or its output lost — the read, write or
command is refused with the reason, never done unchecked. Real containers, over the daemon's socket.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from niceeval_cli.sandbox import OutsideWorkspace, docker_sandbox
from tests.sandbox.conftest import MakeWorkspace

pytestmark = pytest.mark.slow


def _docker(*args: str) -> None:
    subprocess.run(["docker", *args], check=True, capture_output=True, timeout=60)


async def test_a_path_whose_check_gets_no_answer_is_refused_not_followed(
        docker_image: str, template: Path, make_workspace: MakeWorkspace) -> None:
    workspace = await make_workspace(docker_sandbox(image=docker_image, template=str(template)))
    container = workspace.container  # type: ignore[attr-defined]
    made = await workspace.run(["ln", "-s", "/etc", "host"])
    assert made.exit_code == 0, made
    _docker("pause", container)
    try:
        with pytest.raises(OSError) as read:
            got = await workspace.read_bytes("host/hostname")
            pytest.fail(f"read through an unchecked link: {got!r}")
        assert not isinstance(read.value, (FileNotFoundError, OutsideWorkspace)), read.value
        assert "host/hostname: could not check where this path leads in the sandbox" in str(read.value)
        assert "paused" in str(read.value)  # the daemon's words
        with pytest.raises(OSError, match=r"host/planted\.txt: could not check where this path leads"):
            await workspace.write_bytes("host/planted.txt", b"planted")
    finally:
        _docker("unpause", container)
    # answered again: the link is refused for what it is, and nothing was written through it
    with pytest.raises(OutsideWorkspace, match=r"'host/hostname' leads outside the workspace"):
        await workspace.read_bytes("host/hostname")
    listed = await workspace.run(["ls", "/etc"])
    assert "planted.txt" not in listed.stdout
    assert await workspace.read_bytes("src/app.py") == b"def add(a, b):\n    return a - b\n"


async def test_the_check_sees_every_directory_the_eval_may_read(
        docker_image: str, template: Path, make_workspace: MakeWorkspace) -> None:
    """The sandbox's user (`user=`) may not enter a directory the eval still reads (the daemon
    reads files as root): the check runs as root too, so it answers there instead of refusing."""
    workspace = await make_workspace(docker_sandbox(image=docker_image, template=str(template), user="1000"))
    container = workspace.container  # type: ignore[attr-defined]
    _docker("exec", "-u", "0", container, "sh", "-c",
            "mkdir -p /workspace/closed && echo kept > /workspace/closed/f.txt && chmod 700 /workspace/closed")
    denied = await workspace.run(["cat", "closed/f.txt"])
    assert denied.exit_code != 0  # the sandbox's own user cannot
    assert await workspace.read_bytes("closed/f.txt") == b"kept\n"
