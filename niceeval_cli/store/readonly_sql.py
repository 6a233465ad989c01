"""`niceeval query --sql`: a user's statement, run where it cannot write.

Three locks, any one of which suffices: only SELECT/WITH statements are accepted, the file is
opened with SQLite's `mode=ro`, and the connection is `query_only`.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from .connect import connect, database
from .errors import StoreError

_LEADING_NOISE = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.DOTALL)
_READING_KEYWORDS = frozenset({"SELECT", "WITH"})


def first_keyword(statement: str) -> str:
    """The statement's first word, after whitespace and comments (upper-cased)."""
    rest = statement[_LEADING_NOISE.match(statement).end():]  # type: ignore[union-attr]
    match = re.match(r"[A-Za-z]+", rest)
    return match.group(0).upper() if match else ""


def run_readonly(path: Path, statement: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of one read-only statement; anything else is a StoreError."""
    keyword = first_keyword(statement)
    if keyword not in _READING_KEYWORDS:
        shown = keyword or "an empty statement"
        raise StoreError(
            f"--sql runs read-only queries on {path}: only SELECT or WITH statements are allowed, "
            f"not {shown}."
        )
    if not path.exists():
        raise StoreError(f"No results yet at {path}; run `niceeval run` first.")
    try:
        conn = connect(path, readonly=True)
    except sqlite3.Error as error:
        raise StoreError(f"Cannot open the results store {path} read-only: {error}.") from error
    try:
        cursor = database(conn).execute(statement)
        columns = [d[0] for d in cursor.description or ()]
        rows = [tuple(row) for row in cursor.fetchall()]
    except (sqlite3.Error, sqlite3.Warning, ValueError) as error:
        message = str(error).rstrip(".")
        if "readonly" in message:
            message = f"--sql is read-only and the statement tries to write ({message})"
        raise StoreError(f"The --sql statement failed on {path}: {message}.") from error
    finally:
        conn.close()
    return columns, rows
