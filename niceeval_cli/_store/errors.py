"""The one error the store raises: a user-facing message, never a traceback."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path


class StoreError(Exception):
    """`str(e)` is one paragraph for the user: which store file, what is wrong, what to do."""


def describe_sqlite_error(path: Path, error: sqlite3.Error) -> str:
    """Turn SQLite's terse message into the cause a user can act on."""
    message = str(error).rstrip(".")
    lowered = message.lower()
    if "file is not a database" in lowered:
        return f"it is not a SQLite database ({message})"
    if "malformed" in lowered or "corrupt" in lowered:
        return f"the database file is damaged ({message}); move it aside and NiceEval will start a new store"
    if "unable to open" in lowered or "readonly" in lowered or "read-only" in lowered:
        directory = path.parent
        if directory.exists() and not os.access(directory, os.W_OK):
            return f"the directory {directory} is not writable ({message})"
        if path.exists() and not os.access(path, os.W_OK):
            return f"the file is not writable ({message})"
    return message


@contextlib.contextmanager
def translated(path: Path, doing: str) -> Iterator[None]:
    """Re-raise any SQLite error met while `doing` something as a StoreError naming the file."""
    try:
        yield
    except sqlite3.Error as error:
        cause = describe_sqlite_error(path, error)
        raise StoreError(f"{doing} failed on the results store {path}: {cause}.") from error
