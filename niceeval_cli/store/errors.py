"""The store's errors: a user-facing message naming the file, never a traceback.

`StoreError` (exit 2) is something wrong with what the user pointed at: an unknown id, a file that
is not a NiceEval store, a store written by a newer NiceEval. `StoreUnavailable` (exit 6) is a
store that is fine but cannot be written now: locked beyond the busy timeout, disk full,
read-only. Both subclass `NiceEvalError`, so the CLI prints them without knowing about the store.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from .._errors import ExitCode, NiceEvalError


class StoreError(NiceEvalError):
    """`str(e)` is one paragraph for the user: which store file, what is wrong, what to do."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str) -> None:
        # A path holding a line break or a terminal escape (`--store $'a\nb.db'`) is shown
        # escaped: the message stays one line, and a name cannot drive the terminal.
        if not message.isprintable():
            message = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)
        super().__init__(message)


class StoreUnavailable(StoreError):
    """The store cannot be written now (locked too long, disk full, read-only); retrying may help."""

    exit_code = ExitCode.STORE_UNAVAILABLE


_FULL = (sqlite3.SQLITE_FULL,) if hasattr(sqlite3, "SQLITE_FULL") else (13,)
_BUSY = (5, 6, 261, 262, 517)  # SQLITE_BUSY, SQLITE_LOCKED and their extended codes
_READONLY = 8  # SQLITE_READONLY (primary code; extended codes keep it in the low byte)
_CANTOPEN = 14  # SQLITE_CANTOPEN: what a store in a folder that cannot be written gives at open
# SQLITE_IOERR_WRITE, _FSYNC, _TRUNCATE: what a write past a file size limit (EFBIG) or a
# failing disk gives; a plain full disk (ENOSPC) is SQLITE_FULL, except when the `-shm` file
# cannot grow (a new store on a nearly full disk): SQLITE_IOERR_SHMSIZE.
_WRITE_FAILED = (778, 1034, 1546, 4874)


def on_readonly_file_system(path: Path) -> bool:
    """Whether the folder holding `path` is mounted read-only (a CD, a read-only bind mount)."""
    if not hasattr(os, "statvfs"):
        return False
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return int(code) if code is not None else None


def _unavailable_cause(path: Path, error: BaseException) -> str | None:
    """Why the store cannot be written now, if that is what `error` says; else None."""
    if isinstance(error, OSError):
        if error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            return "the disk is full (or the file reached its size limit); free some space and run again"
        if error.errno == errno.EROFS:
            return "the file system is read-only; point --store at a writable location"
        return None
    if not isinstance(error, sqlite3.Error):
        return None
    code = _code(error)
    message = str(error).lower()
    if (code is not None and code & 0xFF in _FULL) or "database or disk is full" in message:
        return "the disk is full (or the store reached its size limit); free some space and run again"
    if code in _WRITE_FAILED:
        return (
            "writing to the disk failed (the disk is full, a file size limit was reached, or the disk "
            "has an I/O error); free some space (or check the disk) and run again"
        )
    if (code is not None and code in _BUSY) or "database is locked" in message or "is busy" in message:
        return (
            "another process held the store's write lock for longer than the busy timeout; "
            "wait for it to finish (or stop it) and run again"
        )
    if code is not None and code & 0xFF == _CANTOPEN and on_readonly_file_system(path):
        return "the file system is read-only; point --store at a writable location"
    if (code is not None and code & 0xFF == _READONLY) or "readonly database" in message:
        directory = path.parent
        journal = Path(f"{path}-journal")
        if journal.exists() and not os.access(directory, os.W_OK):  # only a writer can roll it back
            return (f"a write that did not finish left {journal} beside it, which can only be rolled back "
                    "where the folder is writable; open the store once there (`niceeval view` rolls it back)")
        if directory.exists() and not os.access(directory, os.W_OK):
            return f"the directory {directory} is not writable; point --store at a writable location"
        if path.exists() and not os.access(path, os.W_OK):
            return "the file is not writable; fix its permissions or point --store at another file"
        for side in (Path(f"{path}-wal"), Path(f"{path}-shm")):  # left by another user's process?
            if side.exists() and not os.access(side, os.W_OK):
                return f"the file {side} beside it is not writable; fix its permissions"
        return "the store cannot be written (read-only); point --store at a writable location"
    return None


def describe_sqlite_error(path: Path, error: sqlite3.Error) -> str:
    """Turn SQLite's terse message into the cause a user can act on."""
    message = str(error).rstrip(".")
    lowered = message.lower()
    if "file is not a database" in lowered:
        return f"it is not a SQLite database ({message})"
    if "malformed" in lowered or "corrupt" in lowered:
        return f"the database file is damaged ({message}); move it aside and NiceEval will start a new store"
    if lowered.startswith("could not decode to utf-8"):
        # Python's message quotes the whole stored text: garbage bytes, and as long as the value.
        column = re.match(r"could not decode to utf-8 column '([^']*)'", lowered)
        return (f"the database file is damaged (a text in column {column.group(1) if column else '?'} is "
                "not UTF-8, which NiceEval never writes); move it aside and NiceEval will start a new store")
    if "unable to open" in lowered:
        directory = path.parent
        if directory.exists() and not os.access(directory, os.W_OK):
            return f"the directory {directory} is not writable ({message})"
        if path.exists() and not os.access(path, os.W_OK):
            return f"the file is not writable ({message})"
    return message


@contextlib.contextmanager
def translated(path: Path, doing: str) -> Iterator[None]:
    """Re-raise any SQLite (or disk) error met while `doing` something as a StoreError naming the file."""
    try:
        yield
    except StoreError:
        raise
    except (sqlite3.Error, OSError) as error:
        cause = _unavailable_cause(path, error)
        if cause is not None:
            raise StoreUnavailable(f"{doing} failed on the results store {path}: {cause}.") from error
        if isinstance(error, OSError):
            raise
        raise StoreError(
            f"{doing} failed on the results store {path}: {describe_sqlite_error(path, error)}."
        ) from error
