"""Opening the store file: connection settings, schema creation and version checks.

One writer (the runner) and any number of readers share the file: WAL lets readers read while
the writer writes, and the busy timeout makes the rare wait a wait, not "database is locked".
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from sqlite_utils import Database

from .errors import StoreError, translated
from .schema import SCHEMA_VERSION, TABLES, create_schema, migrate

BUSY_TIMEOUT_MS = 5000


def readonly_uri(path: Path) -> str:
    """A `file:` URI opening `path` read-only at the SQLite level (writes fail inside SQLite)."""
    return path.resolve().as_uri() + "?mode=ro"


def connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    """A raw connection with the store's pragmas; the caller wraps it in a sqlite-utils Database."""
    if readonly:
        conn = sqlite3.connect(readonly_uri(path), uri=True, check_same_thread=False)
    else:
        conn = sqlite3.connect(str(path), check_same_thread=False)
    # Raw sqlite3 for PRAGMAs: these are connection settings, not data.
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if readonly:
        conn.execute("PRAGMA query_only = ON")
    else:
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _user_version(db: Database) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _newer_store_error(path: Path, version: int) -> StoreError:
    return StoreError(
        f"The results store {path} was written by a newer NiceEval (schema {version}); "
        f"this is schema {SCHEMA_VERSION}; upgrade niceeval-cli (or point --store at another file)."
    )


def _check_foreign(path: Path, db: Database) -> None:
    unknown = sorted(set(db.table_names()) - set(TABLES))
    if unknown:
        raise StoreError(
            f"{path} is a SQLite database but not a NiceEval results store (it has tables "
            f"{', '.join(unknown)}); point --store at another file."
        )


def _check_tables(path: Path, db: Database) -> None:
    """Reading the schema also catches a damaged file early, at open, with a clear message."""
    missing = sorted(set(TABLES) - set(db.table_names()))
    if missing:
        raise StoreError(
            f"The results store {path} is damaged: tables {', '.join(missing)} are missing; "
            "move the file aside and NiceEval will start a new store."
        )


def ensure_schema(path: Path, db: Database) -> None:
    """Create the schema in a new store, migrate an older one, refuse a newer one."""
    if _user_version(db) == SCHEMA_VERSION:
        # The common case takes no write lock, so opening never waits on a running writer.
        _check_tables(path, db)
        return
    db.enable_wal()  # persistent in the file; must run outside a transaction
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")  # take the write lock before re-reading the version
    try:
        version = _user_version(db)
        if version > SCHEMA_VERSION:
            raise _newer_store_error(path, version)
        if version == 0:
            _check_foreign(path, db)
            create_schema(db)
        elif version < SCHEMA_VERSION:
            migrate(db, version)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def check_readable(path: Path, db: Database) -> None:
    """A read-only open cannot create or migrate, so it can only accept the current schema."""
    version = _user_version(db)
    if version > SCHEMA_VERSION:
        raise _newer_store_error(path, version)
    if version == 0:
        _check_foreign(path, db)
        raise StoreError(f"No results yet at {path}; run `niceeval run` first.")
    if version < SCHEMA_VERSION:
        raise StoreError(
            f"The results store {path} uses an older schema ({version}); run `niceeval run` once "
            f"to upgrade it to schema {SCHEMA_VERSION}."
        )
    _check_tables(path, db)


def open_database(path: Path, *, readonly: bool) -> Database:
    """Open (and when writable, create or migrate) the store, or raise a StoreError naming the cause."""
    path = Path(path)
    if readonly:
        if not path.exists():
            raise StoreError(f"No results yet at {path}; run `niceeval run` first.")
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(
                f"Cannot create the directory for the results store {path}: {error.strerror or error}."
            ) from error
    if path.is_dir():
        raise StoreError(f"The results store path {path} is a directory; give a file path (--store).")
    conn: sqlite3.Connection | None = None
    try:
        with translated(path, "Opening"):
            conn = connect(path, readonly=readonly)
            db = Database(conn, execute_plugins=False)
            if readonly and 0 < _user_version(db) < SCHEMA_VERSION and os.access(path, os.W_OK):
                # A reader meeting an older store upgrades it first (a short write transaction),
                # so `view` / `query` work right after an upgrade of NiceEval.
                conn.close()
                conn = None
                open_database(path, readonly=False).close()
                conn = connect(path, readonly=True)
                db = Database(conn, execute_plugins=False)
            if readonly:
                check_readable(path, db)
            else:
                ensure_schema(path, db)
            return db
    except BaseException:
        if conn is not None:
            conn.close()
        raise
