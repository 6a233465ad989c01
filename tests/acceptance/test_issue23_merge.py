"""Issue 23, items 4, 5 and 11: `niceeval merge` against hostile and live shard stores.

A merge never attaches a source's rows to rows the target already sealed (4), validates every
incoming row before writing and names the bad one with exit 2 (5), and reads each source in one
consistent snapshot, so a store still being written merges cleanly (11). In every refusal the
target is left byte-identical."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval()
async def greets(t):
    turn = await t.send("hi")
    t.check(turn.message, includes("hello")).label("Says hello")


@define_eval()
async def waves(t):
    turn = await t.send("wave")
    t.check(turn.message, includes("hello")).label("Says hello")
"""


def _project(proj: Project) -> Project:
    proj.write("app.py", 'def reply(message: str) -> str:\n    return "hello there"\n')
    proj.write("niceeval.toml", '[project]\n\n[experiments.local]\nadapter = "python"\n'
               '[experiments.local.options]\ncallable = "app:reply"\n')
    proj.write("evals/hello.py", EVALS)
    return proj


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hostile(path: Path, *statements: str, params: tuple[tuple[object, ...], ...] = ()) -> None:
    """Edit a store as an attacker would: its protecting triggers dropped first (in one transaction:
    each DROP on its own committed and synced, ~0.25 s of a test's wall for the store's 40 triggers)."""
    con = sqlite3.connect(path)
    try:
        con.execute("BEGIN")
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            con.execute(f'DROP TRIGGER "{name}"')
        for i, statement in enumerate(statements):
            con.execute(statement, params[i] if i < len(params) else ())
        con.commit()
    finally:
        con.close()


@pytest.fixture
def sealed(proj: Project) -> Project:
    _project(proj)
    result = proj.run("--store", "target.db")
    assert result.returncode == 0, result.stdout + result.stderr
    return proj


def _has_schema(store: Path) -> bool:
    """The writer committed its store's schema: the file appears a moment before, and a merge of
    a store without one is refused as holding no results yet (exit 2), rightly."""
    if not store.exists():
        return False
    try:
        with contextlib.closing(sqlite3.connect(store, timeout=0.1)) as con:
            return int(con.execute("PRAGMA user_version").fetchone()[0]) > 0
    except sqlite3.Error:  # locked while the schema is being written
        return False


def _merge(proj: Project, *sources: str, into: str = "target.db"):
    return proj.cli("merge", *sources, "--into", into)


def test_a_shard_cannot_add_a_failed_check_to_an_attempt_the_target_sealed(sealed: Project) -> None:
    target = sealed.root / "target.db"
    shutil.copy(target, sealed.root / "shard.db")
    attempt = sealed.sql("SELECT * FROM attempts LIMIT 1", store=target)[0]
    row = sealed.sql("SELECT * FROM assertion_results WHERE attempt_id = ? LIMIT 1", [attempt["id"]], store=target)[0]
    row.update(id="HOSTILE0000000000000000001", ordinal=99, key="x", label="Injected", state="mismatched")
    _hostile(sealed.root / "shard.db",
             f"INSERT INTO assertion_results ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
             params=(tuple(row.values()),))
    before = _sha(target)

    result = _merge(sealed, "shard.db")

    assert result.returncode == 2, result.stdout + result.stderr
    assert "HOSTILE0000000000000000001" in result.stderr
    assert attempt["id"] in result.stderr and "already sealed" in result.stderr
    assert "Traceback" not in result.stderr
    assert _sha(target) == before
    view = sealed.cli("view", "--store", "target.db", "--all")
    assert "Injected" not in view.stdout


def test_a_shard_cannot_add_an_attempt_under_a_run_the_target_finished(sealed: Project) -> None:
    target = sealed.root / "target.db"
    shutil.copy(target, sealed.root / "shard.db")
    attempt = sealed.sql("SELECT * FROM attempts LIMIT 1", store=target)[0]
    extra = dict(attempt, id="HOSTILE0000000000000000002", ordinal=7, state="failed")
    _hostile(sealed.root / "shard.db",
             f"INSERT INTO attempts ({', '.join(extra)}) VALUES ({', '.join('?' * len(extra))})",
             params=(tuple(extra.values()),))
    before = _sha(target)

    result = _merge(sealed, "shard.db")

    assert result.returncode == 2, result.stdout + result.stderr
    assert "HOSTILE0000000000000000002" in result.stderr and attempt["run_id"] in result.stderr
    assert _sha(target) == before


def test_an_honest_copy_of_the_target_still_merges_as_a_no_op(sealed: Project) -> None:
    shutil.copy(sealed.root / "target.db", sealed.root / "shard.db")
    result = _merge(sealed, "shard.db")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("statement", "named"), [
    ("UPDATE runs SET argv = 'not json ['", "argv"),
    ("UPDATE attempts SET state = 'hacked' WHERE rowid = (SELECT min(rowid) FROM attempts)", "hacked"),
    ("UPDATE assertion_results SET evidence = '{broken' WHERE rowid = (SELECT min(rowid) FROM assertion_results)",
     "evidence"),
    ("UPDATE attempts SET gate = 'sideways' WHERE rowid = (SELECT min(rowid) FROM attempts)", "sideways"),
    # columns that disagree with each other (each column alone is a word NiceEval writes): the
    # readers' folds refuse them, so a merged copy made `view` and `report` end in an internal error
    ("UPDATE attempts SET state = 'scored' WHERE rowid = (SELECT min(rowid) FROM attempts)",
     "not a pass-style eval's state"),
    ("UPDATE attempts SET kind = 'score', state = 'scored', score = NULL "
     "WHERE rowid = (SELECT min(rowid) FROM attempts)", "empty for a scored attempt"),
])
@pytest.mark.parametrize("grouped", [False, True], ids=["run", "group"])
def test_a_malformed_row_is_refused_before_anything_is_written(proj: Project, statement: str, named: str,
                                                               grouped: bool) -> None:
    _project(proj)
    args = ("--shard", "1/1", "--group", "g1") if grouped else ()
    assert proj.run("--store", "shard.db", *args).returncode == 0
    _hostile(proj.root / "shard.db", statement)
    assert proj.run("--store", "target.db").returncode == 0  # a target with rows of its own
    before = _sha(proj.root / "target.db")

    result = _merge(proj, "shard.db")

    assert result.returncode == 2, result.stdout + result.stderr
    assert named in result.stderr and "shard.db" in result.stderr
    assert "write lock" not in result.stderr and "Traceback" not in result.stderr
    assert _sha(proj.root / "target.db") == before
    for command in (("view", "--store", "target.db"), ("query", "attempts", "--store", "target.db"),
                    ("report", "--store", "target.db", "--out", "r.html")):
        assert proj.cli(*command).returncode in (0, 1), command


@pytest.mark.slow
def test_a_store_still_being_written_merges_from_one_snapshot(proj: Project) -> None:
    """Each merge sees the source as it was at one instant: never a slot without its attempt. The
    writer runs for about 4 s (500 evals of 30 ms at concurrency 4): a loaded machine still fits
    about 20 merges in it, and read outside one transaction some 40 % of them fail."""
    proj.write("app.py", 'import time\n\ndef reply(message: str) -> str:\n    time.sleep(0.03)\n'
               '    return "hello there"\n')
    proj.write("niceeval.toml", '[project]\nmax_concurrency = 4\n\n[experiments.local]\nadapter = "python"\n'
               '[experiments.local.options]\ncallable = "app:reply"\n')
    proj.write("evals/many.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes

        def make(i):
            async def test(t):
                turn = await t.send(f"hi {i}")
                t.check(turn.message, includes("hello")).label("Says hello")
            return define_eval(name=f"e{i:04d}")(test)

        for _i in range(500):
            globals()[f"e{_i:04d}"] = make(_i)
        """)
    writer = proj.popen("run", "--store", "live.db")
    failures: list[str] = []
    merges = 0
    try:
        while writer.poll() is None and merges < 40:
            if not _has_schema(proj.root / "live.db"):
                time.sleep(0.02)  # the writer is starting: its store has no schema yet ("No results yet")
                continue
            merges += 1
            into = f"t{merges}.db"
            result = _merge(proj, "live.db", into=into)
            if result.returncode not in (0, 1, 5):
                failures.append(result.stderr)
            (proj.root / into).unlink(missing_ok=True)
    finally:
        _out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    assert merges >= 3
    assert failures == []
