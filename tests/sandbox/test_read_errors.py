"""A docker workspace's read that brings no file says why: a path the container does not have is
`FileNotFoundError` (what a test catches for a missing file); anything else the daemon refused —
here, the container is gone — is an error in the daemon's words, never "no such file". Real
containers, read over the daemon's socket."""

from __future__ import annotations

import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from niceeval_cli.sandbox import _engine, _engine_ops, docker_sandbox
from tests.sandbox.conftest import MakeWorkspace

pytestmark = pytest.mark.slow


async def test_a_missing_file_and_a_vanished_container_are_told_apart(
        docker_image: str, template: Path, make_workspace: MakeWorkspace) -> None:
    workspace = await make_workspace(docker_sandbox(image=docker_image, template=str(template)))
    assert await workspace.read_bytes("README.md") == b"# demo\nline two\n"
    with pytest.raises(FileNotFoundError, match=r"nope\.txt: no such file in the sandbox workspace"):
        await workspace.read_bytes("nope.txt")

    container = workspace.container  # type: ignore[attr-defined]
    subprocess.run(["docker", "rm", "-f", container], check=True, capture_output=True, timeout=60)
    with pytest.raises(OSError) as refused:
        await workspace.read_bytes("README.md")
    assert not isinstance(refused.value, FileNotFoundError), refused.value
    assert "README.md: could not be read from the sandbox" in str(refused.value)
    assert "No such container" in str(refused.value)


async def test_a_finished_read_killed_late_leaves_other_calls_whole(
        docker_image: str, template: Path, make_workspace: MakeWorkspace) -> None:
    """A workspace read is killed when it is cut short (a timeout, Ctrl-C) and once it is done. Its
    answer can end before that kill — and then its connection must not be one another call has
    taken meanwhile (seen as "Server disconnected without sending a response" in a concurrent
    attempt's read, one run in ~15 under load)."""
    workspace = await make_workspace(docker_sandbox(image=docker_image, template=str(template)))
    container = workspace.container  # type: ignore[attr-defined]
    path = _engine.engine_socket()
    assert path is not None
    made = await workspace.run(["sh", "-c", "head -c 33554432 /dev/zero > big.bin"])
    assert made.exit_code == 0, made
    done = _engine_ops.ArchiveProcess(path, container, "/workspace/README.md")
    while done.stdout.read(1 << 16):  # read to its very end: the answer is complete
        pass
    # another call now, streaming 32 MiB; the first read is killed while it streams
    other = _engine_ops.ArchiveProcess(path, container, "/workspace/big.bin")
    done.kill()
    done.wait()
    with tarfile.open(fileobj=other.stdout, mode="r|*") as archive:
        member = next(iter(archive))
        handle = archive.extractfile(member)
        assert handle is not None
        assert len(handle.read()) == 32 << 20
    other.wait()


async def test_a_killed_exec_is_not_waited_for(
        docker_image: str, template: Path, make_workspace: MakeWorkspace) -> None:
    """A workspace read cut short (a deadline, Ctrl-C) kills its exec; the command inside may go on
    (blocked writing what nobody reads), so its exit code is asked once, not waited for."""
    workspace = await make_workspace(docker_sandbox(image=docker_image, template=str(template)))
    path = _engine.engine_socket()
    assert path is not None
    process = _engine.start_exec(path, workspace.container, ["sleep", "30"])  # type: ignore[attr-defined]
    process.kill()
    started = time.monotonic()
    code = process.wait()
    assert time.monotonic() - started < 2.5, "waited for a killed exec's exit"
    assert code == -1  # still running inside: no exit code to give
