"""Opening a store that cannot be used gives one clear message naming the file, never a traceback."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from niceeval_cli.store import SCHEMA_VERSION, Store, StoreError


def _open_fails(path: Path, *, readonly: bool = False) -> str:
    with pytest.raises(StoreError) as caught:
        Store.open(path, readonly=readonly)
    message = str(caught.value)
    assert str(path) in message
    assert "\n" not in message
    return message


def test_writable_open_creates_missing_parent_directories(tmp_path):
    path = tmp_path / "deep" / "er" / "results.db"
    Store.open(path).close()
    assert path.is_file()


def test_reading_a_missing_store_says_to_run_first(tmp_path):
    path = tmp_path / ".niceeval" / "results.db"
    message = _open_fails(path, readonly=True)
    assert "no results yet" in message.lower() and "niceeval run" in message
    assert not path.exists() and not path.parent.exists()


def test_newer_schema_is_refused_with_an_upgrade_hint(project):
    project.store.close()
    with sqlite3.connect(project.path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    for readonly in (False, True):
        message = _open_fails(project.path, readonly=readonly)
        assert f"newer NiceEval (schema {SCHEMA_VERSION + 1})" in message and f"schema {SCHEMA_VERSION}" in message
        assert "upgrade niceeval-cli" in message


def test_a_file_of_garbage_bytes_is_not_a_store(tmp_path):
    path = tmp_path / "results.db"
    path.write_bytes(os.urandom(8192))
    for readonly in (False, True):
        assert "not a SQLite database" in _open_fails(path, readonly=readonly)


def test_a_damaged_store_is_reported_as_damaged(tmp_path):
    path = tmp_path / "results.db"
    Store.open(path).close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # page 1 (the schema table) after the header
    path.write_bytes(bytes(data))
    assert "damaged" in _open_fails(path, readonly=True)
    assert "damaged" in _open_fails(path)


def test_a_sqlite_file_of_another_program_is_not_taken_over(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    assert "not a NiceEval results store" in _open_fails(path)
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["notes"]


def test_a_store_path_below_a_regular_file_is_reported(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    assert "Cannot create the directory" in _open_fails(blocker / "results.db")


def test_a_directory_is_not_a_store_path(tmp_path):
    assert "is a directory" in _open_fails(tmp_path)


def _chmod_is_enforced(directory: Path) -> bool:
    probe = directory / "probe"
    try:
        probe.write_text("x")
    except PermissionError:
        return True
    probe.unlink()
    return False  # e.g. running as root: permissions are not enforced, the case cannot be built


def test_an_unwritable_directory_is_named_in_the_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not _chmod_is_enforced(locked):
            pytest.skip("file permissions are not enforced for this user (root?)")
        message = _open_fails(locked / "results.db")
        assert "not writable" in message or "Permission denied" in message
    finally:
        locked.chmod(0o700)


def test_a_store_path_at_a_fifo_is_refused_at_once_by_every_reader(tmp_path):
    """SQLite's read-only open of a FIFO waits for a writer — `query runs --store pipe` hung, and
    ignored SIGTERM. Every command names the path instead, exit 2."""
    from tests.support.project import Project

    project = Project(tmp_path / "proj")  # a real process: the old code hung in it
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", "from niceeval_cli import define_eval\n\n@define_eval()\ndef ok(t):\n    pass\n")
    fifo = tmp_path / "results.db"
    os.mkfifo(fifo)
    expected = (f"niceeval: The results store path {fifo} is not a regular file (a FIFO, socket or device); "
                "give the path of a store file (--store).")
    for command in (("query", "runs"), ("view",), ("run",)):
        done = project.cli(*command, "--store", str(fifo), timeout=20)
        assert (done.returncode, done.stderr.strip()) == (2, expected), command


def test_a_symbolic_link_that_cannot_lead_to_a_store_is_named_as_one(tmp_path):
    """A link that loops, or points into a folder that does not exist: readers said "No results
    yet ...; run `niceeval run` first", and that run said only "unable to open database file"."""
    loop = tmp_path / "loop.db"
    loop.symlink_to(loop)
    dangling = tmp_path / "dangling.db"
    dangling.symlink_to(tmp_path / "gone" / "results.db")
    for readonly in (False, True):
        assert f"{loop} is a symbolic link that loops" in _open_fails(loop, readonly=readonly)
        message = _open_fails(dangling, readonly=readonly)
        assert f"{dangling} is a symbolic link to {tmp_path / 'gone' / 'results.db'}, in a folder" in message
    assert not (tmp_path / "gone").exists()


def test_a_symbolic_link_to_a_store_not_made_yet_is_followed(tmp_path):
    link = tmp_path / "results.db"
    link.symlink_to(tmp_path / "elsewhere.db")
    Store.open(link).close()
    assert (tmp_path / "elsewhere.db").is_file() and link.is_symlink()


def test_a_path_with_a_line_break_or_a_terminal_escape_is_named_escaped_on_one_line(tmp_path):
    """`--store $'n\\nl/x.db'` split the message over two lines, and an ESC in a path (from a
    cloned project's `[project] store`) reached the terminal as a control sequence."""
    folder = tmp_path / "n\nl"
    folder.mkdir()
    (folder / "x.db").write_text("not a database")
    with pytest.raises(StoreError) as caught:
        Store.open(folder / "x.db")
    assert str(caught.value) == (f"Opening failed on the results store {tmp_path}/n\\nl/x.db: "
                                 "it is not a SQLite database (file is not a database).")
    with pytest.raises(StoreError) as caught:
        Store.open(tmp_path / "\x1b[31mred.db", readonly=True)
    assert str(caught.value) == f"No results yet at {tmp_path}/\\x1b[31mred.db; run `niceeval run` first."


def test_a_stored_text_that_is_not_utf8_is_named_as_damage_in_one_short_line(tmp_path):
    """Python's sqlite3 quotes the whole undecodable value: `run --dry` on a store with a damaged
    page printed "Could not decode to UTF-8 column 'fingerprint' with text '…'" — raw bytes, a
    line break, as long as the value — and never said the file was damaged."""
    from tests.support.project import Project

    project = Project(tmp_path / "proj")
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", "from niceeval_cli import define_eval\n\n@define_eval()\ndef ok(t):\n    pass\n")
    store = tmp_path / "results.db"
    assert project.cli("run", "--store", str(store)).returncode == 0
    conn = sqlite3.connect(store)
    for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {trigger}")  # damage bypasses what NiceEval's writes go through
    conn.execute("UPDATE attempts SET fingerprint = CAST(x'ff0a' || hex(zeroblob(50000)) AS TEXT)")
    conn.commit()
    conn.close()
    for command in (("run", "--dry"), ("query", "attempts")):
        done = project.cli(*command, "--store", str(store))
        assert done.returncode == 2, (command, done.stderr[:500])
        assert done.stderr.count("\n") == 1 and len(done.stderr) < 400, (command, done.stderr[:500])
        assert f"results store {store}: the database file is damaged (a text in column fingerprint is not UTF-8" \
            in done.stderr, command


_UNFINISHED_WRITE = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size = 1")  # pages spill into the file before the commit that never comes
conn.execute("BEGIN")
for (trigger,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
    conn.execute(f"DROP TRIGGER {trigger}")
conn.execute("DELETE FROM assertion_results")
conn.execute("UPDATE attempts SET error = hex(randomblob(3000))")
os._exit(9)
"""


def unfinished_rollback_write(store: Path) -> None:
    """`store` as a `VACUUM INTO` copy (rollback-journal mode) that another program's write, killed
    before its commit, left with a hot `-journal` and half-written pages."""
    import subprocess
    import sys

    copy = store.with_name("copy.db")
    with sqlite3.connect(store) as conn:
        conn.execute("VACUUM INTO ?", [str(copy)])
    copy.replace(store)
    subprocess.run([sys.executable, "-c", _UNFINISHED_WRITE, str(store)], check=False, timeout=60)
    assert Path(f"{store}-journal").exists()


def test_a_reader_rolls_back_a_write_that_did_not_finish(tmp_path):
    """`view` / `query` exited 6, "the store cannot be written (read-only); point --store at a
    writable location": only a writer may roll back a hot journal. The reader rolls it back first
    (as it upgrades an older store) and reads what was committed."""
    from tests.support.project import Project

    project = Project(tmp_path / "proj")
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", "from niceeval_cli import define_eval\n\n@define_eval()\ndef ok(t):\n    pass\n")
    store = tmp_path / "results.db"
    assert project.cli("run", "--store", str(store)).returncode == 0
    unfinished_rollback_write(store)
    done = project.cli("query", "--sql", "SELECT count(*) AS n, min(a.error) AS e FROM attempts a",
                       "--format", "csv", "--store", str(store))
    assert (done.returncode, done.stdout.splitlines(), done.stderr) == (0, ["n,e", "1,"], "")
    assert not Path(f"{store}-journal").exists()
