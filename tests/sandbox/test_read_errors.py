"""A docker workspace's read that brings no file says why: a path the container does not have is
`FileNotFoundError` (what a test catches for a missing file); anything else the daemon refused —
here, the container is gone — is an error in the daemon's words, never "no such file". Real
containers, read over the daemon's socket."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from niceeval_cli.sandbox import AttemptSandbox, docker_sandbox, kind_for

pytestmark = pytest.mark.slow


async def test_a_missing_file_and_a_vanished_container_are_told_apart(docker_image: str, template: Path) -> None:
    spec = docker_sandbox(image=docker_image, template=str(template)).resolved()
    sandbox = await AttemptSandbox.open(spec, kind_for(spec), label=f"reads{os.getpid()}-{time.time_ns()}")
    await sandbox.prepare()
    workspace = sandbox.workspace
    try:
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
    finally:
        await sandbox.close(keep=False)
