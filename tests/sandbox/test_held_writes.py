"""A docker workspace's held writes and its reads through one `docker exec` (`_held`): the read
through `tar` inside the container sees exactly what `docker cp` sees, and an image without `tar`
writes and reads through `docker cp` as before. Real containers."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from niceeval_cli.sandbox import AttemptSandbox, FileState, _held, docker_sandbox, kind_for

pytestmark = pytest.mark.slow


async def _open(template: Path) -> AttemptSandbox:
    spec = docker_sandbox(image="niceeval-test/busybox", template=str(template)).resolved()
    sandbox = await AttemptSandbox.open(spec, kind_for(spec), label=f"held{os.getpid()}-{time.time_ns()}")
    await sandbox.prepare()
    return sandbox


async def test_the_exec_read_sees_what_docker_cp_sees(docker_image, template):
    sandbox = await _open(template)
    workspace = sandbox.workspace
    try:
        done = await workspace.run("mkdir -p deep/er && printf 'x\\0y' > deep/er/bin.dat && ln -s README.md alias "
                                   "&& ln -s /etc/hostname out && mkfifo pipe && ln README.md hard && rm logo.bin")
        assert done.exit_code == 0, done
        await workspace.write_bytes("src/app.py", b"def add(a, b):\n    return a + b\n")
        await workspace.write_bytes("fresh.txt", b"new\n")
        await workspace.write_bytes("deep/ünï_" + "a" * 150 + ".txt", b"long\n")  # pax / GNU long names
        through_exec = workspace._exec_snapshot(None)  # type: ignore[attr-defined]
        assert through_exec is not None
        through_cp = workspace._cp_snapshot(None)  # type: ignore[attr-defined]
        assert through_exec == through_cp
        assert through_exec["fresh.txt"].digest == through_cp["fresh.txt"].digest
        assert "logo.bin" not in through_exec and "deep/er/bin.dat" in through_exec
        assert "deep/ünï_" + "a" * 150 + ".txt" in through_exec
    finally:
        await sandbox.close(keep=False)


async def test_an_image_without_tar_writes_and_reads_through_docker_cp(docker_image, template, monkeypatch):
    sandbox = await _open(template)
    workspace = sandbox.workspace
    image_id = workspace.image_id  # type: ignore[attr-defined]
    monkeypatch.setitem(_held._tar_known, image_id, False)  # what a first read finds in such an image
    try:
        await workspace.write_bytes("notes.txt", b"hello\n")
        assert workspace.held.take() == []  # type: ignore[attr-defined]  # written at once, nothing held
        now = workspace.snapshot()
        assert now["notes.txt"].digest == FileState.of(b"hello\n").digest
        assert await workspace.read_bytes("notes.txt") == b"hello\n"
    finally:
        await sandbox.close(keep=False)


async def test_a_held_write_is_in_before_a_command_or_a_file_read(docker_image, template):
    sandbox = await _open(template)
    workspace = sandbox.workspace
    try:
        await workspace.write_bytes("a.txt", b"first\n")
        await workspace.write_bytes("a.txt", b"second\n")  # the later write of a path wins
        done = await workspace.run("cat a.txt")
        assert done.stdout == "second\n"
        await workspace.write_bytes("b.txt", b"bee\n")
        assert await workspace.read_bytes("b.txt") == b"bee\n"
    finally:
        await sandbox.close(keep=False)


async def test_a_read_that_starts_while_another_carries_the_write_in_sees_it(docker_image, template):
    """Two reads of one workspace at once (an assertion registered once the first read had begun):
    the one that did not carry the write waits until it is in, as it would after a `docker cp`."""
    sandbox = await _open(template)
    workspace = sandbox.workspace
    try:
        for round_ in range(3):
            await workspace.write_bytes(f"w{round_}.txt", b"x" * 200_000)
            first, second = await asyncio.gather(asyncio.to_thread(workspace.snapshot),
                                                 asyncio.to_thread(workspace.snapshot))
            assert f"w{round_}.txt" in first and f"w{round_}.txt" in second, round_
    finally:
        await sandbox.close(keep=False)
