"""Host subprocesses for sandboxes: output captured, a timeout, and the whole group killed."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Mapping, Sequence

from ._workspace import CommandResult

__all__ = ["kill_group", "run_host"]

OUTPUT_LIMIT = 4 << 20  # bytes of stdout / stderr kept per command


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _text(data: bytes) -> str:
    if len(data) > OUTPUT_LIMIT:
        data = data[-OUTPUT_LIMIT:]
    return data.decode("utf-8", "replace")


async def run_host(argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None,
                   input: str | bytes | None = None, timeout_ms: int | None = None,
                   groups: set[int] | None = None) -> CommandResult:
    """Run `argv` in its own process group; on timeout or cancellation the group is killed.

    `groups` collects the live group ids so a teardown can kill them whatever happens.
    """
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=dict(env) if env is not None else None,
        stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
    )
    if groups is not None:
        groups.add(process.pid)
    data = input.encode("utf-8", "surrogateescape") if isinstance(input, str) else input
    timed_out = False
    try:
        try:
            out, err = await asyncio.wait_for(process.communicate(data), timeout_ms / 1000 if timeout_ms else None)
        except asyncio.TimeoutError:
            timed_out = True
            kill_group(process.pid)
            out, err = await process.communicate()
    except BaseException:
        kill_group(process.pid)
        raise
    finally:
        kill_group(process.pid)  # what the command left running in its group dies with it
        if groups is not None:
            groups.discard(process.pid)
    return CommandResult(
        exit_code=None if timed_out else process.returncode,
        stdout=_text(out), stderr=_text(err),
        duration_ms=(time.monotonic() - started) * 1000, timed_out=timed_out,
    )
