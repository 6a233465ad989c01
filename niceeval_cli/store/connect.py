"""Opening the store file: connection settings, schema creation and version checks.

One writer at a time and any number of readers share the file: WAL lets readers read while a
writer writes. Every write transaction takes the write lock up front (`BEGIN IMMEDIATE`), so a
second writer waits on the busy timeout instead of failing at once with "database is locked"
(a deferred BEGIN that reads first gets SQLITE_BUSY_SNAPSHOT, which no timeout retries).

A file that is not ours (foreign tables, or a newer schema) is checked before anything is
written, so it is left byte-for-byte unchanged (no WAL conversion) when refused.

The schema is sqlite-utils' (its CREATE statements, pinned by tests/store/test_schema.py, run on
the connection); sqlite-utils itself is imported only to migrate an older store (and for
`query --sql`), so a command never pays for it and the click, pluggy and dateutil it imports
(start-up time and memory).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .._imports import import_without
from .._shards import sql_shard_of
from .errors import StoreError, on_readonly_file_system, translated
from .migrations import migrate
from .owner import sql_owner_gone
from .schema import SCHEMA_VERSION, TABLES, create_schema

if TYPE_CHECKING:
    from sqlite_utils import Database

BUSY_TIMEOUT_MS = 10_000
#: The writer's page cache, in KiB (SQLite's default is 2 000). A run writes its rows once and
#: reads few back; a full default cache would sit under a large run's peak memory, for no
#: time: pages it drops are in the OS's file cache. Readers (view, query) keep the default.
WRITER_CACHE_KIB = 256
#: Prepared statements a connection keeps (the sqlite3 module's default is 128). A run repeats a
#: dozen (its seals, reads and many-row inserts); a many-row INSERT with its triggers compiles to
#: tens of KiB, and 128 of them sat under a large run's peak for no time.
CACHED_STATEMENTS = 16
_SHARD_MEMO = 1 << 14  # planned slots whose shard one connection remembers


def readonly_uri(path: Path) -> str:
    """A `file:` URI opening `path` read-only at the SQLite level (writes fail inside SQLite).

    A store in WAL mode cannot be opened even read-only where SQLite cannot create its `-shm`
    file, which is so on a read-only file system. There, with no `-wal` file beside it, the main
    file holds every committed row and nothing can change it through this mount: SQLite is told
    it is immutable (no locks, no `-shm`). A `-wal` left there is read through its `-shm` as usual
    (and a rollback `-journal` is not ignored: SQLite refuses the file rather than read half a write).
    """
    resolved = path.resolve()  # SQLite keeps the -wal beside the file a link points to
    uri = resolved.as_uri() + "?mode=ro"
    unfinished = (Path(f"{resolved}-wal"), Path(f"{resolved}-journal"))  # rows not in the main file yet
    if on_readonly_file_system(resolved) and not any(side.exists() for side in unfinished):
        uri += "&immutable=1"
    return uri


def connect(path: Path, *, readonly: bool, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
            cache_kib: int | None = None) -> sqlite3.Connection:
    """A raw connection with the store's pragmas; the caller wraps it in a sqlite-utils Database.

    `isolation_level=None`: the sqlite3 module never opens a (deferred) transaction on its own;
    every write goes through `write_transaction`. `cache_kib`: the page cache (None: a writer's
    WRITER_CACHE_KIB, a reader's SQLite default).
    """
    if readonly:
        conn = sqlite3.connect(readonly_uri(path), uri=True, check_same_thread=False, isolation_level=None,
                               cached_statements=CACHED_STATEMENTS)
    else:
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None,
                               cached_statements=CACHED_STATEMENTS)
    # Raw sqlite3 for PRAGMAs: these are connection settings, not data.
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys = ON")
    if readonly:
        conn.execute("PRAGMA query_only = ON")
    else:
        conn.execute("PRAGMA synchronous = NORMAL")
    if cache_kib is not None or not readonly:
        conn.execute(f"PRAGMA cache_size = -{int(cache_kib if cache_kib is not None else WRITER_CACHE_KIB)}")
    conn.create_function("niceeval_owner_gone", 3, sql_owner_gone)
    # Memoised per connection: the shard runs of a group each store the group's full plan, so
    # `query runs` asks for every planned slot's shard once per member (4 shards: 4 x 8 000 hashes).
    conn.create_function("niceeval_shard_of", 4, functools.lru_cache(maxsize=_SHARD_MEMO)(sql_shard_of),
                         deterministic=True)
    return conn


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection, path: Path, doing: str) -> Iterator[None]:
    """One all-or-nothing write that holds the write lock from its first statement."""
    with translated(path, doing):
        conn.execute("BEGIN IMMEDIATE")  # waits on the busy timeout for another writer
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def database(conn: sqlite3.Connection) -> Database:
    """The sqlite-utils Database over `conn`, for creating and migrating the schema (imported
    then, without the numpy and pandas it would adapt values for: _imports.py)."""
    sqlite_utils = import_without("sqlite_utils", "numpy", "pandas")
    return sqlite_utils.Database(conn, execute_plugins=False)


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _newer_store_error(path: Path, version: int) -> StoreError:
    return StoreError(
        f"The results store {path} was written by a newer NiceEval (schema {version}); "
        f"this is schema {SCHEMA_VERSION}; upgrade niceeval-cli (or point --store at another file)."
    )


def _check_foreign(path: Path, conn: sqlite3.Connection) -> None:
    """A file without our schema version holds nothing of ours: any table in it is someone else's."""
    names = [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name"
    )]
    if names:
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        raise StoreError(
            f"{path} is a SQLite database but not a NiceEval results store (it has tables "
            f"{shown} and no NiceEval schema version); it was left unchanged; "
            "point --store at another file."
        )


def _check_tables(path: Path, conn: sqlite3.Connection) -> None:
    """Reading the schema also catches a damaged file early, at open, with a clear message."""
    present = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = sorted(set(TABLES) - present)
    if missing:
        raise StoreError(
            f"The results store {path} is damaged: tables {', '.join(missing)} are missing; "
            "move the file aside and NiceEval will start a new store."
        )


def _keep_wal(path: Path, conn: sqlite3.Connection) -> None:
    """A store of ours out of WAL mode (a `VACUUM INTO` copy, a tool's `PRAGMA journal_mode`)
    is switched back: in rollback-journal mode a reader blocks the writer, so a `query --sql`
    running for 10 s made a run exit 6. Reading the mode takes no lock; the switch is made once."""
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        with translated(path, "Switching to WAL mode"):
            conn.execute("PRAGMA journal_mode = wal")


def ensure_schema(path: Path, conn: sqlite3.Connection) -> None:
    """Create the schema in a new store, migrate an older one, refuse a newer or foreign one."""
    version = _user_version(conn)
    if version == SCHEMA_VERSION:
        # The common case takes no write lock, so opening never waits on a running writer.
        _check_tables(path, conn)
        _keep_wal(path, conn)
        return
    # Refuse before writing anything: not even the WAL switch may touch a file that is not ours.
    if version > SCHEMA_VERSION:
        raise _newer_store_error(path, version)
    if version == 0:
        _check_foreign(path, conn)
    # What sqlite-utils' enable_wal runs; persistent in the file; must run outside a transaction.
    conn.execute("PRAGMA journal_mode = wal")
    with write_transaction(conn, path, "Creating the schema of"):
        version = _user_version(conn)  # re-read under the write lock: another process may have won
        if version > SCHEMA_VERSION:
            raise _newer_store_error(path, version)
        if version == 0:
            _check_foreign(path, conn)
            create_schema(conn)
        elif version < SCHEMA_VERSION:
            migrate(database(conn), version)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def check_readable(path: Path, conn: sqlite3.Connection) -> None:
    """A read-only open cannot create or migrate, so it can only accept the current schema."""
    version = _user_version(conn)
    if version > SCHEMA_VERSION:
        raise _newer_store_error(path, version)
    if version == 0:
        _check_foreign(path, conn)
        raise StoreError(f"No results yet at {path}; run `niceeval run` first.")
    if version < SCHEMA_VERSION:
        raise StoreError(
            f"The results store {path} uses an older schema ({version}); run `niceeval run` once "
            f"to upgrade it to schema {SCHEMA_VERSION}."
        )
    _check_tables(path, conn)


def _check_link(path: Path) -> None:
    """A symbolic link that cannot lead to a store is named as one: SQLite says only "unable to
    open database file", and a reader would say "no results yet" though `run` cannot make any."""
    if not path.is_symlink() or path.exists():
        return  # a link to a store, or to a file a run will create, is followed as usual
    target = os.readlink(path)
    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise StoreError(f"The results store path {path} is a symbolic link that loops (to {target}); "
                             "fix the link or give another path (--store).") from error
    if not Path(os.path.realpath(path)).parent.is_dir():
        raise StoreError(f"The results store path {path} is a symbolic link to {target}, in a folder that "
                         "does not exist; fix the link or give another path (--store).")


def open_database(path: Path, *, readonly: bool, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
                  cache_kib: int | None = None) -> sqlite3.Connection:
    """Open (and when writable, create or migrate) the store, or raise a StoreError naming the cause."""
    path = Path(path)
    _check_link(path)
    if readonly:
        if not path.exists():
            raise StoreError(f"No results yet at {path}; run `niceeval run` first.")
    else:
        try:
            with translated(path, "Creating the folder of"):  # a read-only or full disk: exit 6
                path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(
                f"Cannot create the directory for the results store {path}: {error.strerror or error}."
            ) from error
    if path.is_dir():
        raise StoreError(f"The results store path {path} is a directory; give a file path (--store).")
    if path.exists() and not path.is_file():  # SQLite's read-only open of a FIFO waits for a writer, unkillable
        raise StoreError(f"The results store path {path} is not a regular file (a FIFO, socket or device); "
                         "give the path of a store file (--store).")
    conn: sqlite3.Connection | None = None
    try:
        with translated(path, "Opening"):
            if readonly and Path(f"{path}-journal").exists() and os.access(path.parent, os.W_OK):
                # A write that did not finish in rollback-journal mode (a `VACUUM INTO` copy written
                # by another tool) left a journal that only a writer rolls back; a reader opening
                # first would fail with "attempt to write a readonly database".
                open_database(path, readonly=False, busy_timeout_ms=busy_timeout_ms).close()
            conn = connect(path, readonly=readonly, busy_timeout_ms=busy_timeout_ms, cache_kib=cache_kib)
            if readonly and 0 < _user_version(conn) < SCHEMA_VERSION and os.access(path, os.W_OK):
                # A reader meeting an older store upgrades it first (a short write transaction),
                # so `view` / `query` work right after an upgrade of NiceEval.
                conn.close()
                conn = None
                open_database(path, readonly=False, busy_timeout_ms=busy_timeout_ms).close()
                conn = connect(path, readonly=True, busy_timeout_ms=busy_timeout_ms, cache_kib=cache_kib)
            if readonly:
                check_readable(path, conn)
            else:
                ensure_schema(path, conn)
            return conn
    except BaseException:
        if conn is not None:
            conn.close()
        raise
