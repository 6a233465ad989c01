"""Issue 23, item 22: merging a store of an older schema leaves the source byte-identical (it was
upgraded in place, and an older NiceEval could then no longer read it). The merged rows arrive as
the upgraded copy has them. Also: such a store's attempts (no identity) pair by their eval id."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


DATA = Path(__file__).resolve().parents[1] / "store" / "data"

GROW = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval()
def first(t):
    t.check("yes", includes("y")).label("has y")
'''

DS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(cases=[{"id": "c1", "q": "yes"}, {"id": "c2", "q": "yup"}], case_id="id")
def answers(t, case):
    t.check(case["q"], includes("y")).label("has y")
'''


def _old_store(path: Path, dump: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.executescript((DATA / dump).read_text(encoding="utf-8"))
        conn.execute("PRAGMA journal_mode = WAL")
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(("dump", "version", "attempts"), [("schema2.sql", 2, 3), ("schema4.sql", 4, 3)])
def test_merging_an_older_store_leaves_it_byte_identical(proj: Project, tmp_path: Path, dump: str, version: int,
                                                         attempts: int) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/grow.py", GROW)
    assert proj.run().returncode == 0
    source = _old_store(tmp_path / "old" / "results.db", dump)
    before = _digest(source)

    res = proj.cli("merge", str(source))
    assert res.returncode == 0, res.stdout + res.stderr
    assert _digest(source) == before
    wal = source.with_name(source.name + "-wal")  # SQLite's own, for a reader of a WAL store: no content
    assert not wal.exists() or wal.stat().st_size == 0
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version
    old_ids = {r[0] for r in sqlite3.connect(f"file:{source}?mode=ro", uri=True).execute("SELECT id FROM attempts")}
    merged = {r["id"] for r in proj.sql("SELECT id FROM attempts")}
    assert len(old_ids) == attempts and old_ids <= merged
    assert proj.cli("merge", str(source)).returncode == 0  # again: nothing new, still untouched
    assert _digest(source) == before


def test_attempts_stored_before_identities_pair_by_their_eval_id(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/grow.py", GROW)
    proj.write("evals/ds.py", DS)
    _old_store(proj.store, "schema4.sql")  # these very evals, sealed by NiceEval at schema 4
    res = proj.run("--dry", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    planned = next(json.loads(line) for line in res.stdout.splitlines() if '"run.planned"' in line)
    reasons = {s["eval_id"]: s["plan_reason"] for s in planned["slots"]}
    # Found by eval id (not `new`); the fingerprint's eval_id part is now the identity, so once more.
    assert reasons == {"grow": "fingerprint-changed", "ds[c1]": "fingerprint-changed",
                       "ds[c2]": "fingerprint-changed"}, reasons
    old_run = proj.sql("SELECT id FROM runs")[0]["id"]
    assert proj.run().returncode == 0
    new_run = proj.sql("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1")[0]["id"]
    pairs = json.loads(proj.cli("compare", old_run, new_run, "--format", "json").stdout)["pairs"]
    assert sorted((p["eval_id"], p["class"]) for p in pairs) == [
        ("ds", "unchanged"), ("ds", "unchanged"), ("grow", "unchanged")] or sorted(
        (p["eval_id"], p["class"]) for p in pairs) == [
        ("ds[c1]", "unchanged"), ("ds[c2]", "unchanged"), ("grow", "unchanged")], pairs
