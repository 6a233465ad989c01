"""The one broken-pipe policy: a reader that went away (`niceeval run | head`) stops the output;
and stdout kept for a command's JSON while eval and agent code runs (`json_only`).

stdout is pointed at /dev/null, so later writes and the interpreter's final flush at exit do not
fail again (the Python docs' recipe for SIGPIPE). The caller decides what else follows: a run's
event relay drops that listener and the run goes on to its own exit code; any other command
ends with exit 0 like other Unix tools (`cli/_common._guard`).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import IO


def reader_went_away() -> None:
    """Point stdout at /dev/null after a BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class _ToStderr(io.TextIOBase):
    """sys.stdout while a command's stdout is JSON only: what is printed goes to stderr. Its
    `fileno` stays the real stdout's, so the broken-pipe policy above still silences that."""

    def __init__(self, real: IO[str]) -> None:
        self._real = real

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return sys.stderr.isatty()

    def fileno(self) -> int:
        return self._real.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return sys.stderr.encoding


@contextlib.contextmanager
def json_only(active: bool = True) -> Iterator[IO[str]]:
    """`run --json`, `list --json`: the command writes its JSON to the stream yielded (the real
    stdout); meanwhile `print()` in eval and agent code goes to stderr — one debugging print
    broke every `jq` reading the stream. Output a child process writes to the inherited file
    descriptor is not redirected."""
    real = sys.stdout
    if not active:
        yield real
        return
    sys.stdout = _ToStderr(real)
    try:
        yield real
    finally:
        sys.stdout = real


__all__ = ["json_only", "reader_went_away"]
