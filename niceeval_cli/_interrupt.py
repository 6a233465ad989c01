"""Ctrl-C and SIGTERM at any moment of the `niceeval` process: one line, exit 130, no traceback.

Inside a command's body (`cli._common._guard`) a signal raises KeyboardInterrupt, as Python's
own handler does: the command stops where it is and seals what it must (a run marks itself
`interrupted`), then the guard prints one line and exits 130. Outside a body a KeyboardInterrupt
has no guard to reach: raised while typer, pydantic and the package import, while typer reads the
command line or while the interpreter exits, it printed a traceback, and CPython, seeing a
KeyboardInterrupt end the script, ended the process by SIGINT itself (a parent read returncode -2,
not 130). So the package's first line, in the console script's process, blocks both signals and
hands them to this module (`hold`), and until the end of the process they never raise outside a
body:

- before a body begins (start-up: imports, the command line, `--help`), nothing is open and
  nothing is sealed: one line and exit 130 at once;
- inside a body (`command_body`), SIGINT is Python's own handler (asyncio's runner and the run's
  own handlers recognise it) and SIGTERM raises KeyboardInterrupt too, as they always did;
- after a body (typer returning, threads joined, the atexit clean-ups such as leftover sandboxes)
  the process is already ending: a first signal prints the line and lets the clean-ups finish, the
  exit status becomes 130; a second ends the process at once, 130.

What comes before the package's first line (the interpreter's own start, its `site` module) is
Python's, not NiceEval's: there CPython dies by the signal or prints its own fatal error
(docs/cli.md says so).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from types import FrameType

MESSAGE = "niceeval: interrupted; results sealed before this point are kept."
#: The exit status of an interrupted command (`_errors.ExitCode.INTERRUPTED`).
INTERRUPTED = 130
_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_held = False  # the console script's handlers are installed (never in a library or test caller)
_bodies = 0  # command bodies running (a guard within a guard counts twice)
_after = False  # a command body has ended: the process is finishing
_signalled = False  # a signal arrived after a body: the exit status becomes 130
_announced = False  # MESSAGE was printed (once per process)
#: Signals the process was started with ignored (a shell script's background job, `nohup`-style
#: launchers): left ignored throughout, as every program leaves them (CPython itself does).
_ignored: frozenset[signal.Signals] = frozenset()


def hold() -> None:
    """The console script's start: from now on neither signal raises outside a command body.
    Idempotent; only ever called in the `niceeval` process itself. The package blocked both
    signals before importing this module; a signal that came meanwhile is delivered now."""
    global _held, _ignored
    if not _held:
        _held = True
        _ignored = frozenset(sig for sig in _SIGNALS if signal.getsignal(sig) == signal.SIG_IGN)
        atexit.register(_last_at_exit)  # registered first, so it runs after every later clean-up
        _outside_handlers()
    with contextlib.suppress(AttributeError, OSError, ValueError):  # no pthread_sigmask on Windows
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)


def announced() -> None:
    """The guard printed MESSAGE itself (through typer, so an in-process caller sees it)."""
    global _announced
    _announced = True


@contextlib.contextmanager
def command_body() -> Iterator[None]:
    """A command's body: a signal raises KeyboardInterrupt, for the guard to turn into exit 130."""
    global _bodies, _after
    if not _held:
        yield
        return
    _bodies += 1
    for sig, handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, _raise_interrupt)):
        if sig not in _ignored:
            signal.signal(sig, handler)
    try:
        yield
    finally:
        _bodies -= 1
        if _bodies == 0:
            _after = True
            _outside_handlers()


def _outside_handlers() -> None:
    for sig in _SIGNALS:
        if sig not in _ignored:
            signal.signal(sig, _outside)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _outside(signum: int, frame: FrameType | None) -> None:
    """A signal outside a command body: never an exception (there is no guard to catch it)."""
    global _signalled
    _announce()
    if _after and not _signalled:
        _signalled = True  # let the clean-ups finish; `_last_at_exit` makes the status 130
        return
    _exit_now()


def _announce() -> None:
    global _announced
    if _announced:
        return
    _announced = True
    _flush()
    with contextlib.suppress(OSError):
        os.write(2, (MESSAGE + "\n").encode())


def _flush() -> None:
    """Flush what was printed; a handler may run inside a write to the same stream (reentrant)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _exit_now() -> None:
    _flush()
    os._exit(INTERRUPTED)


def _last_at_exit() -> None:
    """After every other atexit clean-up: a signal that arrived after the body ends the process
    130; otherwise both signals wait, blocked, for the few instants left (CPython restores their
    defaults as it finalises, and a signal then would end a finished command by SIGINT)."""
    if _signalled:
        _exit_now()
    with contextlib.suppress(AttributeError, OSError, ValueError):  # no pthread_sigmask on Windows
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)


__all__ = ["INTERRUPTED", "MESSAGE", "announced", "command_body", "hold"]
