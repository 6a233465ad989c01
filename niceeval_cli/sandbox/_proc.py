"""Host subprocesses for sandboxes: output captured within a bound, a timeout, the group killed."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from .._capture import OUTPUT_LIMIT, kill_group, run_captured
from ._workspace import CommandResult

__all__ = ["OUTPUT_LIMIT", "kill_group", "run_host"]


async def run_host(argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None,
                   input: str | bytes | None = None, timeout_ms: int | None = None,
                   groups: set[int] | None = None) -> CommandResult:
    """Run `argv` in its own process group; on timeout or cancellation the group is killed.

    stdout and stderr keep their first and last 2 MiB each, the cut marked (`_capture.py`).
    `groups` collects the live group ids so a teardown can kill them whatever happens.
    """
    started = time.monotonic()
    data = input.encode("utf-8", "surrogateescape") if isinstance(input, str) else input
    pids: list[int] = []

    def remember(pid: int) -> None:
        pids.append(pid)
        if groups is not None:
            groups.add(pid)

    try:
        done = await run_captured(argv, cwd=cwd, env=env, input=data,
                                  timeout_s=timeout_ms / 1000 if timeout_ms else None, started=remember)
    finally:
        if groups is not None:
            for pid in pids:
                groups.discard(pid)
    return CommandResult(
        exit_code=done.exit_code, stdout=done.stdout.text(), stderr=done.stderr.text(),
        duration_ms=(time.monotonic() - started) * 1000, timed_out=done.timed_out,
    )
