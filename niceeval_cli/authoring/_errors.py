"""Authoring errors and the source locations they (and every assertion) carry."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A file and line. Every eval and assertion holds one, so it has no per-instance dict; the
    file is the calling code object's own `co_filename` (one string per module, not a copy)."""

    file: str | None
    line: int | None

    def __str__(self) -> str:
        if self.file is None:
            return "<unknown location>"
        return f"{_display_path(self.file)}:{self.line}"


#: Where nothing is known (no frame outside NiceEval); one shared instance.
NOWHERE = SourceLocation(None, None)


def _display_path(file: str) -> str:
    """Relative to the working directory (the project, usually) when the file is below it."""
    try:
        return Path(file).resolve().relative_to(Path.cwd()).as_posix()
    except (ValueError, OSError):
        return file


_LOCATIONS: dict[tuple[str, int], SourceLocation] = {}


def _location(file: str, line: int) -> SourceLocation:
    """One SourceLocation per call site: evals defined in a loop, and the same assertion in
    every attempt, share it (the table grows with the lines of code, not with the evals)."""
    key = (file, line)
    found = _LOCATIONS.get(key)
    if found is None:
        found = _LOCATIONS[key] = SourceLocation(file, line)
    return found


def caller_location(prefer_file: str | None = None) -> SourceLocation:
    """The user's call site: a frame in `prefer_file` (the eval module) if any, else the first
    frame outside this package. Adapter assertions therefore point at the eval, not the adapter."""
    frame = sys._getframe(1)
    first_outside: SourceLocation | None = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) and not filename.startswith("<frozen"):
            if prefer_file is None or filename == prefer_file:
                return _location(filename, frame.f_lineno)
            if first_outside is None:
                first_outside = _location(filename, frame.f_lineno)
        frame = frame.f_back  # type: ignore[assignment]
    return first_outside or NOWHERE


#: Characters of an exception's own text kept where NiceEval shows it (an attempt's or an
#: assertion's error); the rest is counted in a `… [+N chars]` marker.
EXCEPTION_TEXT_LIMIT = 4000


def exception_text(exc: BaseException, limit: int = EXCEPTION_TEXT_LIMIT) -> str:
    """`KeyError: 'missing'`: the exception's type and text, as eval, adapter and tool-handler
    code raised it. That code is the user's: its `__str__` may raise, recurse forever or return
    megabytes, and describing the exception must neither fail (the attempt would read "the
    executor failed") nor store megabytes in a row."""
    name = type(exc).__name__
    try:
        text = str(exc)
    except BaseException as failure:  # whatever its __str__ raises is its own fault
        return f"{name}: <its str() raised {type(failure).__name__}>"
    if len(text) > limit:
        text = f"{text[:limit]}… [+{len(text) - limit} chars]"
    return f"{name}: {text}"


class AuthoringError(Exception):
    """A mistake in eval code, raised at the offending call; the Attempt becomes `errored`
    with reason `authoring-error`."""

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        self.location = location or caller_location()
        self.detail = message
        super().__init__(f"{self.location}: {message}")


def raised_at(exc: BaseException) -> SourceLocation | None:
    """Where user code raised `exc`: the innermost traceback frame outside NiceEval, asyncio and
    the thread machinery (None when there is none)."""
    tb = exc.__traceback__
    found: SourceLocation | None = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) and not _is_machinery(filename):
            found = SourceLocation(filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _is_machinery(filename: str) -> bool:
    name = Path(filename).name
    return filename.startswith("<") or (
        name in {"threading.py", "thread.py", "events.py", "base_events.py", "tasks.py", "futures.py"}
        and ("asyncio" in filename or "concurrent" in filename or "threading" in name)
    )
