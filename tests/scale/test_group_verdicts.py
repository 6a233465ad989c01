"""A shard group's stored verdict (`group_verdicts`, store/groups.py): written by `merge` and by
the last shard run to finish into a store, used by readers only while the group's members are
exactly the ones it was decided for — a newly merged shard, a retried shard or a running member
change the verdict at once. Insert-only like the sealed tables, not copied by `merge` (derived:
each store decides its own), and merging twice adds none."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from niceeval_cli._ids import new_id, utc_now_iso
from niceeval_cli._shards import shard_of
from niceeval_cli._states import RunStatus
from niceeval_cli.app.view import RunPage, load_view
from niceeval_cli.store import Store, groups
from tests.support.scale_project import query


def verdicts(path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute(
            "SELECT group_id, members, decided_by, exit_code, not_run FROM group_verdicts ORDER BY decided_at, members"
        ))


def member_rows(path, group: str) -> list[tuple[str, str]]:
    with Store.open(path, readonly=True) as store:
        ids = store.resolve_run(group).member_run_ids
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute(
            f"SELECT id, status FROM runs WHERE id IN ({', '.join('?' * len(ids))})", list(ids)).fetchall())


def group_row(project, store: str, group: str) -> dict[str, object]:
    row = query(project, "runs", "--store", store, "--run", group)[0]
    assert row["kind"] == "group"
    return row


def decided_on_read(monkeypatch) -> None:
    """Readers ignore a verdict another NiceEval version stored, so this one decides it again."""
    monkeypatch.setattr(groups, "__version__", "0.0.0+another")


@pytest.fixture(params=[(1, 2, 3), (1, 3)], ids=["complete", "missing a shard"])
def merged(suite, request, built):
    """shard1.db … shard3.db run as group ci-7, and merged.db: the shards of the param merged."""
    return built.merged(request.param, suite.root)


def test_merge_stores_the_verdict_of_exactly_the_merged_members(merged):
    [(group, members, decided_by, exit_code, not_run)] = verdicts(merged)
    assert (group, decided_by) == ("ci-7", groups.__version__)
    assert [tuple(m) for m in json.loads(str(members))] == [(i, s) for i, s in member_rows(merged, "ci-7")]
    with Store.open(merged, readonly=True) as store:
        run = store.resolve_run("ci-7")
    assert (exit_code, not_run) == (run.exit_code, run.not_run)


def test_the_stored_verdict_is_the_one_decided_from_the_sealed_rows(merged, monkeypatch):
    with Store.open(merged, readonly=True) as store:
        stored = store.read_run("ci-7")
        decided_on_read(monkeypatch)
        decided = store.read_run("ci-7")
    assert stored.run == decided.run and stored.not_run == decided.not_run
    assert decided.groups is not None and stored.groups is None  # nothing was read to decide it


def test_readers_use_the_stored_verdict_instead_of_deciding_again(merged, monkeypatch):
    expected = load_view(merged, "ci-7")

    def refuse(*args, **kwargs):
        raise AssertionError("decided again")

    monkeypatch.setattr(groups, "decide_run", refuse)
    with Store.open(merged, readonly=True) as store:
        assert store.resolve_run("ci-7") == expected.run
    assert load_view(merged, "ci-7") == expected
    decided_on_read(monkeypatch)
    with Store.open(merged, readonly=True) as store, pytest.raises(AssertionError, match="decided again"):
        store.resolve_run("ci-7")


def test_merging_again_adds_no_verdict(suite, merged):
    before = verdicts(merged)
    again = suite.cli("merge", "shard1.db", "shard3.db", "--into", "merged.db")
    assert again.exit_code == 0 and "copied nothing new" in again.stdout
    assert verdicts(merged) == before


def test_a_store_holding_verdicts_merges_into_another_which_decides_its_own(suite, merged):
    result = suite.cli("merge", "merged.db", "--into", "again.db", "--exit-code")
    with Store.open(merged, readonly=True) as store:
        expected = store.resolve_run("ci-7")
    assert result.exit_code == expected.exit_code, result.stdout + result.stderr
    assert verdicts(suite.root / "again.db") == verdicts(merged)  # the same members: the same verdict
    with Store.open(suite.root / "again.db", readonly=True) as store:
        assert store.resolve_run("ci-7") == expected
    assert suite.cli("merge", "merged.db", "--into", "again.db").exit_code == 0
    assert verdicts(suite.root / "again.db") == verdicts(merged)


@pytest.mark.parametrize("statement", [
    "UPDATE group_verdicts SET exit_code = 0",
    "DELETE FROM group_verdicts",
    "INSERT OR REPLACE INTO group_verdicts SELECT * FROM group_verdicts",
    "INSERT INTO group_verdicts SELECT * FROM group_verdicts",
])
def test_stored_verdicts_are_insert_only(merged, statement):
    before = verdicts(merged)
    with sqlite3.connect(merged) as conn, pytest.raises(sqlite3.IntegrityError, match="insert-only"):
        conn.execute(statement)
    assert verdicts(merged) == before


# ── a group whose members change ────────────────────────────────────────────────────────────

def write_evals(project, failing: frozenset[int] = frozenset()) -> None:
    """8 evals `ok/p0..7`, those in `failing` failing; the module is imported afresh by the next run
    (a run in this process would otherwise reuse the one it imported)."""
    lines = ["from niceeval_cli import define_eval", "from niceeval_cli.expect import equals", ""]
    for i in range(8):
        lines += ["@define_eval()", f"def p{i}(t):", f"    t.check({i}, equals({-1 if i in failing else i}))", ""]
    path = project.write("evals/ok.py", "\n".join(lines)).resolve()
    for name, module in list(sys.modules.items()):
        if getattr(module, "__file__", None) and Path(module.__file__).resolve() == path:
            del sys.modules[name]


@pytest.fixture
def ok(project):
    """8 passing evals, one attempt each, run as 2 shards of group `ok` and merged into m.db."""
    project.write("niceeval.toml", "[project]\nattempts = 1\n")
    write_evals(project)
    for k in (1, 2):
        assert project.run("--shard", f"{k}/2", "--group", "ok", "--store", f"s{k}.db").exit_code == 0
    assert project.cli("merge", "s1.db", "s2.db", "--into", "m.db", "--exit-code").exit_code == 0
    return project


def in_shard_2() -> int:
    return next(i for i in range(8) if shard_of("default", f"ok/p{i}", 0, 2) == 2)


def test_a_newly_merged_shard_changes_the_verdict_at_once(project):
    project.write("niceeval.toml", "[project]\nattempts = 1\n")
    write_evals(project)
    for k in (1, 2):
        assert project.run("--shard", f"{k}/2", "--group", "ok", "--store", f"s{k}.db").exit_code == 0
    assert project.cli("merge", "s1.db", "--into", "m.db", "--exit-code").exit_code == 5
    assert group_row(project, "m.db", "ok")["exit_code"] == 5
    assert project.cli("merge", "s2.db", "--into", "m.db", "--exit-code").exit_code == 0
    row = group_row(project, "m.db", "ok")
    assert (row["exit_code"], row["status"], row["not_run"]) == (0, "complete", 0)
    assert [(v[3], v[4] > 0) for v in verdicts(project.root / "m.db")] == [(5, True), (0, False)]  # both kept


def test_a_retried_shard_merged_later_changes_the_verdict_at_once(ok):
    write_evals(ok, failing=frozenset({in_shard_2()}))
    assert ok.run("--shard", "2/2", "--group", "ok", "--store", "retry.db").exit_code == 1
    assert ok.cli("merge", "retry.db", "--into", "m.db", "--exit-code").exit_code == 1
    assert group_row(ok, "m.db", "ok")["exit_code"] == 1
    assert "exit 1" in ok.cli("view", "ok", "--store", "m.db").stdout.splitlines()[0]
    assert [v[3] for v in verdicts(ok.root / "m.db")] == [0, 1]


def test_a_shard_retried_into_the_merged_store_changes_the_verdict_at_once(ok):
    write_evals(ok, failing=frozenset({in_shard_2()}))
    assert ok.run("--shard", "2/2", "--group", "ok", "--store", "m.db").exit_code == 1
    assert group_row(ok, "m.db", "ok")["exit_code"] == 1
    write_evals(ok)
    assert ok.run("--shard", "2/2", "--group", "ok", "--store", "m.db").exit_code == 0
    assert group_row(ok, "m.db", "ok")["exit_code"] == 0
    assert [v[3] for v in verdicts(ok.root / "m.db")] == [0, 1, 0]  # each set of members decided once


def test_a_running_member_is_decided_on_every_read_and_its_finish_stores_the_verdict(ok):
    path = ok.root / "m.db"
    with sqlite3.connect(path) as conn:
        old, planned, digest = conn.execute(
            "SELECT id, planned_total, plan_digest FROM runs WHERE group_id = 'ok' AND shard_index = 2").fetchone()
    retry = new_id()
    with Store.open(path) as store:
        store.begin_run(retry, started_at=utc_now_iso(), argv=["run"], version=groups.__version__, config_file=None,
                        experiments=["default"], planned_total=planned, shard_index=2, shard_count=2, group_id="ok",
                        plan_digest=digest, plan=store.run_plan(old))
    row = group_row(ok, "m.db", "ok")  # the retry has filled none of its slots yet
    assert (row["exit_code"], row["status"]) == (5, "incomplete")
    assert row["not_run"] == sum(shard_of("default", f"ok/p{i}", 0, 2) == 2 for i in range(8)) > 0
    assert len(verdicts(path)) == 1  # none is stored while a member is running
    with Store.open(path) as store:
        store.finish_run(retry, status=RunStatus.FINISHED, ended_at=utc_now_iso(), exit_code=5)
    assert [(v[3], v[4]) for v in verdicts(path)] == [(0, 0), (5, row["not_run"])]
    assert group_row(ok, "m.db", "ok")["exit_code"] == 5


def test_shards_run_into_one_store_store_the_verdict_when_the_last_one_finishes(project, monkeypatch):
    project.write("niceeval.toml", "[project]\nattempts = 1\n")
    write_evals(project, failing=frozenset({in_shard_2()}))
    assert project.run("--shard", "1/2", "--group", "ok", "--store", "one.db").exit_code == 0
    assert verdicts(project.root / "one.db") == []  # shard 2 has not run: not stored by a run
    assert project.run("--shard", "2/2", "--group", "ok", "--store", "one.db").exit_code == 1
    [(group, _, _, exit_code, not_run)] = verdicts(project.root / "one.db")
    assert (group, exit_code, not_run) == ("ok", 1, 0)
    stored = load_view(project.root / "one.db", "ok")
    decided_on_read(monkeypatch)
    decided = load_view(project.root / "one.db", "ok")
    assert isinstance(stored, RunPage) and stored == decided
