"""A subprocess's output captured within a bound, and a subprocess run that ends when it should.

Shared by the `command` adapter and sandbox commands (`t.sandbox.run`, `prepare`): an agent that
floods its stdout must not fill the driver's memory (one did 5.2 GB in 8 s), so each stream
keeps its first and last `limit / 2` bytes and counts what it left out; the text says so where
it was cut. A command killed at its timeout ends the step then, even when a process that left
its group still holds the pipes open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["DRAIN_S", "OUTPUT_LIMIT", "CappedOutput", "Captured", "json_lines_around_cut", "kill_group", "run_captured"]

#: Bytes of stdout (and, separately, of stderr) kept per command: the first and last half.
OUTPUT_LIMIT = 4 << 20
#: Once the command has exited (or was killed), how long what is still in its pipes is read.
DRAIN_S = 2.0
_CHUNK = 1 << 16


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads (gone already: nothing to do)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class CappedOutput:
    """One stream's bytes: the head and the tail kept, the middle counted, never held."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.half = max(1, limit // 2)
        self.head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self.half:  # trimmed now and then, not at every chunk
                del self._tail[: len(self._tail) - self.half]

    @property
    def tail(self) -> bytes:
        return bytes(self._tail[-self.half:])

    @property
    def left_out(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """The output as text; where bytes were left out, one line says how many."""
        tail = self.tail
        if self.left_out <= 0:
            return (bytes(self.head) + tail).decode("utf-8", "replace")
        return (self.head.decode("utf-8", "replace") + "\n" + cut_marker(self.left_out, self.total, self.half)
                + "\n" + tail.decode("utf-8", "replace"))


def cut_marker(left_out: int, total: int, kept_each: int) -> str:
    """The line that stands where output was left out (`json_lines_around_cut` finds it)."""
    return f"[… {left_out} bytes of output left out: {total} bytes in all, the first and last {kept_each} kept …]"


_MARKER = re.compile(r"^\[… (\d+) bytes of output left out: .* …\]$")


def json_lines_around_cut(text: str) -> str:
    """ndjson output that was cut: the marker line and the two lines the cut split in half are
    dropped, so the lines kept still parse (the events in the middle are lost, as said in docs)."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if _MARKER.match(line):
            keep = lines[:index]
            after = lines[index + 1:]
            if keep and not _is_json(keep[-1]):
                keep.pop()
            if after and not _is_json(after[0]):
                after.pop(0)
            return "\n".join(keep + after)
    return text


def _is_json(line: str) -> bool:
    import json

    try:
        json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser reads
        return False
    return True


@dataclass(frozen=True)
class Captured:
    exit_code: int | None  # None when killed at its timeout
    stdout: CappedOutput
    stderr: CappedOutput
    timed_out: bool
    refused: bool = False  # never started: the daemon refused the exec (its words on stderr)


async def _pump(stream: asyncio.StreamReader | None, into: CappedOutput) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        into.feed(chunk)


async def _feed(stream: asyncio.StreamWriter | None, data: bytes) -> None:
    if stream is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.write(data)
        await stream.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        stream.close()


async def run_captured(argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None,
                       input: bytes | None = None, timeout_s: float | None = None, new_session: bool = True,
                       limit: int = OUTPUT_LIMIT, started: Callable[[int], None] | None = None) -> Captured:
    """Run `argv` (in its own session: its group dies with it), its output capped per stream.

    At `timeout_s` the group is killed and the result is `timed_out`; when the command exits, what
    it left running in its group is killed too. What is still in the pipes is read for at most
    `DRAIN_S` more (a process that left the group may hold them open forever). Cancelling kills
    the group and re-raises.
    """
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=dict(env) if env is not None else None,
        stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=new_session,
    )
    if started is not None:
        started(process.pid)
    out, err = CappedOutput(limit), CappedOutput(limit)
    tasks = [asyncio.ensure_future(_pump(process.stdout, out)), asyncio.ensure_future(_pump(process.stderr, err))]
    if input is not None:
        tasks.append(asyncio.ensure_future(_feed(process.stdin, input)))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(process.wait(), timeout_s)
        except asyncio.TimeoutError:
            timed_out = True
        _end(process, new_session)
        await process.wait()
        await asyncio.wait(tasks[:2], timeout=DRAIN_S)
    except BaseException:
        _end(process, new_session)
        raise
    finally:
        for task in tasks:
            task.cancel()
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()  # the pipes, even when an escaped process still holds their other end
    return Captured(None if timed_out else process.returncode, out, err, timed_out)


def _end(process: asyncio.subprocess.Process, group: bool) -> None:
    if group:
        kill_group(process.pid)
    elif process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
