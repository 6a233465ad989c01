"""The stores `merge` reads, each as a store of the current schema, never changed (issue 23.22).

A source of the current schema is read where it is. An older one is not upgraded in place (an
older NiceEval could then no longer read it): SQLite's backup API copies it from a read-only
connection — one consistent snapshot, WAL content included — into a temporary file, and the copy
is upgraded and read instead. The source file stays byte-identical.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from .connect import check_readable, connect, open_database
from .errors import StoreError, translated
from .schema import SCHEMA_VERSION

__all__ = ["readable_sources"]


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


@contextlib.contextmanager
def readable_sources(sources: Sequence[Path]) -> Iterator[dict[Path, Path]]:
    """For each source, the file to read it from: itself, or an upgraded temporary copy of it
    (removed on exit). A source that is not a readable store raises its StoreError first."""
    read_from: dict[Path, Path] = {}
    with contextlib.ExitStack() as stack:
        folder: Path | None = None
        for index, source in enumerate(sources):
            source = Path(source)
            if not source.exists():
                raise StoreError(f"No results yet at {source}; run `niceeval run` first.")
            with translated(source, "Reading for the merge"):
                conn = connect(source, readonly=True)
                try:
                    if _version(conn) >= SCHEMA_VERSION or _version(conn) == 0:
                        check_readable(source, conn)  # current (or refused: newer, empty, foreign, damaged)
                        read_from[source] = source
                        continue
                    if folder is None:
                        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="niceeval-merge-")))
                    copy = folder / f"source-{index}.db"
                    target = sqlite3.connect(copy)
                    try:
                        conn.backup(target)
                    finally:
                        target.close()
                finally:
                    conn.close()
            open_database(copy, readonly=False).close()  # the copy is upgraded, the source is not
            read_from[source] = copy
        yield read_from
