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
from typing import IO, Any


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


class _Kept(io.TextIOBase):
    """sys.stdout while eval and agent code runs and the command's own output is for people: what
    is printed goes to the real stdout, as before. Eval code that closed sys.stdout closed the
    command's stream with it (the summary then ended the run with an internal error, exit 4), and
    eval code that replaced it silenced the rest of the run; the command writes to the real
    stream, which neither reaches."""

    def __init__(self, real: IO[str]) -> None:
        self._real = real

    def write(self, text: str) -> int:
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        return self._real.write(text)

    def flush(self) -> None:
        if not self.closed:
            self._real.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._real.isatty()

    def fileno(self) -> int:
        return self._real.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._real, "encoding", "utf-8"))

    @property
    def buffer(self) -> Any:
        return getattr(self._real, "buffer", None)


@contextlib.contextmanager
def json_only(active: bool = True) -> Iterator[IO[str]]:
    """`run`, `list`: the command writes its output to the stream yielded (the real stdout). With
    `--json` (`active`), `print()` in eval and agent code meanwhile goes to stderr — one debugging
    print broke every `jq` reading the stream; without, it goes to stdout through a stand-in that
    eval code may close or replace without touching the command's stream (`_Kept`). Output a
    child process writes to the inherited file descriptor is not redirected."""
    real = sys.stdout
    sys.stdout = _ToStderr(real) if active else _Kept(real)
    try:
        yield real
    finally:
        sys.stdout = real


__all__ = ["json_only", "reader_went_away"]
