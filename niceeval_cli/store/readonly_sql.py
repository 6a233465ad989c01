"""`niceeval query --sql`: a user's statement, run where it cannot write.

Three locks, any one of which suffices: only SELECT/WITH statements are accepted, the file is
opened with SQLite's `mode=ro`, and the connection is `query_only`.

A statement may also never end (`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c)
...`). SQLite then runs in C, where Python's signal handlers do not get a turn, so Ctrl-C and
SIGTERM did nothing. SQLite's progress handler gives them one every `PROGRESS_STEPS` virtual
machine instructions: a signal ends the statement and the command (`Interrupted`, exit 130).
"""

from __future__ import annotations

import math
import re
import signal
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._errors import Interrupted
from .connect import connect, database
from .errors import StoreError

#: SQLite VM instructions between two looks at the signals: a few thousand looks a second,
#: a cost nobody measures, and an answer to Ctrl-C within milliseconds.
PROGRESS_STEPS = 20_000
_STOPPING = (signal.SIGINT, signal.SIGTERM)

_LEADING_NOISE = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.DOTALL)
_READING_KEYWORDS = frozenset({"SELECT", "WITH"})


def first_keyword(statement: str) -> str:
    """The statement's first word, after whitespace and comments (upper-cased)."""
    rest = statement[_LEADING_NOISE.match(statement).end():]  # type: ignore[union-attr]
    match = re.match(r"[A-Za-z]+", rest)
    return match.group(0).upper() if match else ""


def run_readonly(path: Path, statement: str, limit: int | None = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of one read-only statement (its first `limit` rows: SQLite stops
    there, so an endless statement ends too); anything else is a StoreError. Values are those a
    query format can write (`_shown`)."""
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
        with _interruptible(conn, path):
            cursor = database(conn).execute(statement)
            columns = [d[0] for d in cursor.description or ()]
            _one_name_each(columns, path)
            fetched = cursor.fetchall() if limit is None else cursor.fetchmany(limit)
            rows = [tuple(_shown(value) for value in row) for row in fetched]
    except (sqlite3.Error, sqlite3.Warning, ValueError) as error:
        message = str(error).rstrip(".")
        if "readonly" in message:
            message = f"--sql is read-only and the statement tries to write ({message})"
        raise StoreError(f"The --sql statement failed on {path}: {message}.") from error
    finally:
        conn.close()
    return columns, rows


def _one_name_each(columns: list[str], path: Path) -> None:
    """Rows are written by column name: two columns of one name (`SELECT a.id, b.id`) would
    print the second's values under both headers."""
    seen: set[str] = set()
    for name in columns:
        if name in seen:
            raise StoreError(f"The --sql statement on {path} returns two columns named {name!r}; name them apart "
                             f"with AS (`SELECT a.{name} AS a_{name}, b.{name} AS b_{name} ...`).")
        seen.add(name)


def _shown(value: Any) -> Any:
    """A value every format writes as it is: a BLOB (`x'00ff'`, `randomblob(8)`) as its SQL
    literal `X'00FF'` (no format carries bytes; JSON could not write them at all), an infinite
    REAL (`1e999`) as SQLite prints it, `Inf` / `-Inf` (JSON has no infinity: `Infinity` is not
    JSON). Stored rows hold neither: text, numbers and NULL pass unchanged."""
    if isinstance(value, bytes):
        return f"X'{value.hex().upper()}'"
    if isinstance(value, float) and math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return value


@contextmanager
def _interruptible(conn: sqlite3.Connection, path: Path) -> Iterator[None]:
    """SIGINT and SIGTERM end the statement (not only when SQLite hands control back) and then
    the command: `Interrupted`, exit 130. Only the main thread can take signals; elsewhere the
    statement runs as before."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def record(signum: int, frame: object) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, record) for sig in _STOPPING}
    conn.set_progress_handler(lambda: 1 if received else 0, PROGRESS_STEPS)
    try:
        try:
            yield
        except sqlite3.OperationalError:
            if not received:
                raise
    finally:
        conn.set_progress_handler(None, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        name = signal.Signals(received[0]).name
        raise Interrupted(f"--sql stopped by {name}: the statement was still running on {path} and was "
                          "ended before it finished; nothing was printed and the store is unchanged.")
