"""The store's page caches (docs/runner.md, "What a run keeps in memory"): a writer keeps a small
one, a reader SQLite's default unless it asks for another."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from niceeval_cli.store.connect import WRITER_CACHE_KIB, open_database


def _cache_size(path: Path, **options: object) -> int:
    db = open_database(path, **options)  # type: ignore[arg-type]
    try:
        return int(db.execute("PRAGMA cache_size").fetchone()[0])
    finally:
        db.close()


def test_a_writer_keeps_a_small_page_cache_and_a_reader_the_default(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    assert _cache_size(path, readonly=False) == -WRITER_CACHE_KIB == -256
    default = sqlite3.connect(":memory:").execute("PRAGMA cache_size").fetchone()[0]
    assert _cache_size(path, readonly=True) == default != -256  # SQLite's own: view and query read much
    assert _cache_size(path, readonly=True, cache_kib=128) == -128
    assert _cache_size(path, readonly=False, cache_kib=1024) == -1024
