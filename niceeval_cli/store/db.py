"""`Db`: one open connection and the file it reads, handed to the modules that do the store's jobs.

`Store` is the one door; behind it each job (sealing.py, references.py, groups.py, summary.py,
targets.py, reads.py) is functions over a `Db`, so no module needs the `Store` class and none
grows into it. `rows` is the typed readers' common step: SQLite errors become a `StoreError`
naming the file (errors.translated), rows become column-named dicts.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import translated


@dataclass(frozen=True, slots=True)
class Db:
    """A store's connection and path (what a message names)."""

    conn: sqlite3.Connection
    path: Path

    def rows(self, doing: str, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        """The statement's rows as dicts by column name; `doing` says what failed, if it fails."""
        with translated(self.path, doing):
            cursor = self.conn.execute(sql, params)
            keys = [column[0] for column in cursor.description]
            return [dict(zip(keys, row, strict=True)) for row in cursor]

    def columns(self, table: str) -> set[str]:
        """The columns `table` has in this store (an older store may lack the newest ones)."""
        return {r["name"] for r in self.rows(f"Reading the columns of {table}", f"PRAGMA table_info({table})")}
