"""`run --shard K/N` + `niceeval merge` (scale.md): the merged group reads as one run of the whole
plan — the same `query` rows as a one-machine run — with exact denominators while a shard is
missing; merging is idempotent, a conflicting row or another plan refuses the whole merge."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from niceeval_cli._shards import shard_of
from tests.support.scale_project import comparable, query

TABLES = ("runs", "run_plan", "attempts", "assertion_results", "run_slots", "turns", "events")


def counts(path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def merge(suite, *args: str):
    return suite.cli("merge", *args)


@pytest.fixture
def one_machine(suite, built):
    result = built.one_machine(suite.root)
    assert result.exit_code == 1, result.stderr
    return result


def test_shard_runs_record_the_whole_plan_and_their_part(suite, built):
    built.shards(3, suite.root)
    runs = [next(r for r in query(suite, "runs", "--store", f"shard{k}.db") if r["kind"] == "run") for k in (1, 2, 3)]
    assert [r["shard_index"] for r in runs] == [1, 2, 3]
    assert {r["shard_count"] for r in runs} == {3}
    assert {r["group_id"] for r in runs} == {"ci-7"}
    assert {r["planned_total"] for r in runs} == {30}
    assert len({r["plan_digest"] for r in runs}) == 1
    parts = [{(a["experiment_id"], a["eval_id"], a["ordinal"])
              for a in query(suite, "attempts", "--store", f"shard{k}.db", "--run", runs[k - 1]["id"])}
             for k in (1, 2, 3)]
    assert sum(len(p) for p in parts) == 30 and len(set().union(*parts)) == 30  # disjoint, union = plan
    for k, part in enumerate(parts, start=1):
        assert all(shard_of(*slot, 3) == k for slot in part)
        assert runs[k - 1]["not_run"] == 0  # a shard run counts only its own slots as not run
    with sqlite3.connect(suite.root / "shard2.db") as conn:
        assert conn.execute("SELECT count(*) FROM run_plan").fetchone()[0] == 30


def test_only_shard_runs_record_a_plan_digest(suite, built, one_machine):
    """A digest tells the plans of one group's shards apart; a plain run has no group to compare."""
    built.shards(2, suite.root)
    plain = next(r for r in query(suite, "runs", "--store", "one.db") if r["kind"] == "run")
    shard = next(r for r in query(suite, "runs", "--store", "shard1.db") if r["kind"] == "run")
    assert plain["plan_digest"] in (None, "") and plain["shard_count"] in (None, "")
    assert len(shard["plan_digest"]) == 64


@pytest.mark.parametrize("order", [(1, 2, 3), (3, 1, 2)])
def test_a_merged_group_reads_like_a_one_machine_run_of_the_same_plan(suite, built, one_machine, order):
    names = built.shards(3, suite.root)
    result = merge(suite, *[names[k - 1] for k in order], "--into", "merged.db", "--exit-code")
    assert result.exit_code == 1, result.stdout + result.stderr  # the group's verdict, like the one-machine run's
    assert "shards merged 3 of 3" in result.stdout
    for target in ("attempts", "assertions"):
        grouped = query(suite, target, "--store", "merged.db", "--run", "ci-7")
        alone = query(suite, target, "--store", "one.db")
        assert comparable(grouped) == comparable(alone)
    group = query(suite, "runs", "--store", "merged.db", "--run", "ci-7")[0]
    single = query(suite, "runs", "--store", "one.db")[0]
    assert {k: group[k] for k in ("id", "kind", "status", "shard_count", "shards_merged", "planned_total",
                                  "not_run", "exit_code")} == {
        "id": "ci-7", "kind": "group", "status": "complete", "shard_count": 3, "shards_merged": 3,
        "planned_total": 30, "not_run": 0, "exit_code": single["exit_code"]}


@pytest.mark.slow
def test_different_hash_seeds_shard_alike(suite):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    picked = []
    for seed, name in (("0", "a.db"), ("4242", "b.db")):
        subprocess.run([sys.executable, "-m", "niceeval_cli", "run", "--shard", "2/3", "--store", name],
                       cwd=suite.root, env={**env, "PYTHONHASHSEED": seed}, capture_output=True, check=False)
        picked.append(sorted((a["eval_id"], a["ordinal"]) for a in query(suite, "attempts", "--store", name)))
    assert picked[0] == picked[1] and picked[0]


def test_merging_twice_or_overlapping_stores_is_a_no_op(suite, built):
    names = built.shards(2, suite.root)
    assert merge(suite, *names, "--into", "merged.db").exit_code == 0
    before = counts(suite.root / "merged.db")
    again = merge(suite, *names, "--into", "merged.db")
    assert again.exit_code == 0, again.stderr
    assert "copied nothing new" in again.stdout and "identical row(s) already there" in again.stdout
    shutil.copy(suite.root / "merged.db", suite.root / "copy.db")
    assert merge(suite, "copy.db", names[0], "--into", "merged.db").exit_code == 0
    assert counts(suite.root / "merged.db") == before


def _tamper(path, sql: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TRIGGER attempts_no_update")
        conn.execute(sql)


def test_a_conflicting_id_refuses_the_whole_merge_and_names_the_id(suite, built):
    names = built.shards(2, suite.root)
    shutil.copy(suite.root / names[0], suite.root / "tampered.db")
    victim = query(suite, "attempts", "--store", "tampered.db")[0]["id"]
    _tamper(suite.root / "tampered.db", f"UPDATE attempts SET state = 'passed', error = NULL WHERE id = '{victim}'")
    result = merge(suite, names[1], names[0], "tampered.db", "--into", "merged.db")
    assert result.exit_code == 2
    assert victim in result.stderr and "nothing was written" in result.stderr
    assert set(counts(suite.root / "merged.db").values()) == {0}
    # The conflict with rows already in the target is refused the same way.
    assert merge(suite, names[0], "--into", "merged.db").exit_code == 0
    before = counts(suite.root / "merged.db")
    result = merge(suite, names[1], "tampered.db", "--into", "merged.db")
    assert result.exit_code == 2 and victim in result.stderr
    assert counts(suite.root / "merged.db") == before


def test_shards_of_another_plan_under_one_group_are_refused(suite):
    suite.run("--shard", "1/2", "--group", "g", "--store", "a.db")
    suite.run("--shard", "2/2", "--group", "g", "--store", "b.db", "--attempts", "1")
    result = merge(suite, "a.db", "b.db", "--into", "merged.db")
    assert result.exit_code == 2 and "different plans" in result.stderr and "g" in result.stderr
    assert set(counts(suite.root / "merged.db").values()) == {0}
    # ... and a shard run into a store that has the group from another plan.
    result = suite.run("--shard", "2/2", "--group", "g", "--store", "a.db", "--attempts", "1")
    assert result.exit_code == 2 and "another plan" in result.stderr


def test_a_missing_shard_leaves_exact_denominators_and_not_run_slots(suite, built):
    names = built.shards(3, suite.root)
    result = merge(suite, names[0], names[2], "--into", "merged.db", "--junit", "merged.xml")
    assert result.exit_code == 0  # merge itself succeeded; --exit-code gates
    group = query(suite, "runs", "--store", "merged.db", "--run", "ci-7")[0]
    missing = [a for a in query(suite, "attempts", "--store", "shard2.db")]
    assert group["status"] == "incomplete" and group["shards_merged"] == 2 and group["shard_count"] == 3
    assert group["planned_total"] == 30 and group["not_run"] == len(missing) > 0
    for slot in missing:
        assert f"not run  {slot['experiment_id']} · {slot['eval_id']}#{slot['ordinal']}" in result.stdout
    view = suite.cli("view", "ci-7", "--store", "merged.db").stdout
    assert "incomplete · shards merged 2 of 3 · 30 planned" in view
    for slot in missing[:20]:
        assert f"not run  {slot['experiment_id']} · {slot['eval_id']}#{slot['ordinal']}" in view
    merged = query(suite, "attempts", "--store", "merged.db", "--run", "ci-7")
    assert len(merged) == 30 - len(missing)  # not-run slots are never rows of passed/failed/undecided
    suites = ET.parse(suite.root / "merged.xml").getroot()
    skipped = {case.get("name") for case in suites.iter("testcase") if case.find("skipped") is not None}
    assert suites.get("skipped") == str(len(missing))
    assert skipped == {f"{slot['eval_id']}#{slot['ordinal']}" for slot in missing}


def test_the_group_exit_code_is_1_for_a_sealed_failure_else_5_while_a_shard_is_missing(project):
    project.write("niceeval.toml", "[project]\nattempts = 1\n")
    lines = ["from niceeval_cli import define_eval", "from niceeval_cli.expect import equals", ""]
    for i in range(8):
        lines += ["@define_eval()", f"def p{i}(t):", f"    t.check({i}, equals({i}))", ""]
    project.write("evals/ok.py", "\n".join(lines))
    for k in (1, 2):
        assert project.run("ok/", "--shard", f"{k}/2", "--group", "ok", "--store", f"s{k}.db").exit_code == 0
    assert project.cli("merge", "s1.db", "--into", "m.db", "--exit-code").exit_code == 5
    assert project.cli("merge", "s2.db", "--into", "m.db", "--exit-code").exit_code == 0
    # a definite failure sealed in the shards that arrived: 1, even while one is missing
    failing = "\n".join(lines).replace("equals(3)", "equals(-3)").replace("equals(5)", "equals(-5)")
    project.write("evals/bad.py", failing)
    for k in (1, 2):
        project.run("bad/", "--shard", f"{k}/2", "--group", "bad", "--store", f"b{k}.db")
    bad = next(k for k in (1, 2) if query(project, "runs", "--store", f"b{k}.db")[1]["exit_code"] == 1)
    assert project.cli("merge", f"b{bad}.db", "--into", "n.db", "--exit-code").exit_code == 1


def test_a_group_id_is_accepted_wherever_a_run_id_is_and_latest_is_the_group(suite, built):
    names = built.shards(2, suite.root)
    merge(suite, *names, "--into", "merged.db")
    latest = query(suite, "attempts", "--store", "merged.db")
    assert len(latest) == 30  # the latest run is the group (a group counts as one)
    assert query(suite, "attempts", "--store", "merged.db", "--run", "ci") == latest  # a unique prefix
    view = suite.cli("view", "ci-7", "--store", "merged.db")
    assert view.exit_code == 0 and "Group ci-7" in view.stdout and "shards merged 2 of 2" in view.stdout
    assert suite.cli("view", "--store", "merged.db").stdout.splitlines()[0] == view.stdout.splitlines()[0]
    rows = query(suite, "runs", "--store", "merged.db")
    assert [r["kind"] for r in rows] == ["group", "run", "run"]


def test_the_default_group_is_the_environment_label_else_the_plan_digest(suite):
    suite.run("--shard", "1/2", "--store", "a.db")
    group, run = query(suite, "runs", "--store", "a.db")
    assert group["kind"] == "group" and run["group_id"] == run["plan_digest"] == group["id"]
    suite.run("--shard", "1/2", "--store", "b.db", env={"NICEEVAL_RUN_GROUP": "pipeline-81"})
    assert query(suite, "runs", "--store", "b.db")[0]["id"] == "pipeline-81"


@pytest.mark.parametrize("bad", ["0/3", "4/3", "1/0", "x", "2"])
def test_a_bad_shard_is_a_usage_error(suite, bad):
    result = suite.run("--shard", bad, "--store", "a.db")
    assert result.exit_code == 2 and "--shard" in result.stderr
    assert not (suite.root / "a.db").exists()


def test_group_without_shard_is_a_usage_error(suite):
    result = suite.run("--group", "g")
    assert result.exit_code == 2 and "--shard" in result.stderr


def test_a_shard_against_the_merged_store_reuses_by_fingerprint(suite, built):
    names = built.shards(2, suite.root)
    merge(suite, *names, "--into", "cache.db")
    result = suite.run("--shard", "1/2", "--group", "ci-8", "--store", "cache.db", "--json")
    finished = next(json.loads(line) for line in result.stdout.splitlines() if '"run.finished"' in line)
    assert finished["executed"] == 0 and finished["reused"] > 0
    run = query(suite, "runs", "--store", "cache.db", "--run", "ci-8")
    members = [r for r in run if r["kind"] == "run"]
    slots = query(suite, "attempts", "--store", "cache.db", "--run", members[0]["id"])
    assert slots and {s["relation"] for s in slots} == {"reference"}


def test_merge_of_a_missing_file_is_a_usage_error(suite):
    result = merge(suite, "nope.db", "--into", "m.db")
    assert result.exit_code == 2 and "nope.db" in result.stderr


def test_report_and_compare_take_a_group_id(suite, built, one_machine):
    names = built.shards(2, suite.root)
    assert merge(suite, "one.db", *names, "--into", "merged.db").exit_code == 0
    single = next(r for r in query(suite, "runs", "--store", "one.db") if r["kind"] == "run")["id"]
    compared = suite.cli("compare", single, "ci-7", "--store", "merged.db", "--format", "json",
                         "--fail-on", "regressed", "--fail-on", "fixed")
    assert compared.exit_code == 0, compared.stdout + compared.stderr
    pairs = json.loads(compared.stdout)["pairs"]
    assert pairs and {p["class"] for p in pairs} <= {"unchanged", "still-failing", "decided", "undecided"}
    report = suite.cli("report", "ci-7", "--store", "merged.db", "--out", "group.html")
    assert report.exit_code == 0, report.stderr
    assert "ci-7" in (suite.root / "group.html").read_text()


def test_merge_says_which_human_labels_it_left_behind_and_how_to_move_them(suite, built):
    """Merge copies sealed rows, not labels (docs/cli.md): a shard store's labels stay behind —
    said once, with the two commands that move them, never silently lost from the merged view."""
    names = built.shards(2, suite.root)
    attempt = query(suite, "attempts", "--store", names[0])[0]["id"]
    labelled = suite.cli("label", f"@{attempt}", "--value", "1", "--author", "Ada", "--store", names[0])
    assert labelled.exit_code == 0, labelled.stderr
    merged = merge(suite, *names, "--into", "merged.db")
    assert merged.exit_code == 0, merged.stderr
    assert ("note: 1 human label(s) in the sources were not copied (merge copies sealed results only): "
            "`niceeval label export --store SOURCE > labels.jsonl`, then "
            "`niceeval label import labels.jsonl --store merged.db`") in merged.stdout
    with sqlite3.connect(suite.root / "merged.db") as conn:
        assert conn.execute("SELECT count(*) FROM labels").fetchone()[0] == 0
    # the two commands as the note gives them
    exported = suite.cli("label", "export", "--store", names[0])
    assert exported.exit_code == 0, exported.stderr
    (suite.root / "labels.jsonl").write_text(exported.stdout)
    imported = suite.cli("label", "import", "labels.jsonl", "--store", "merged.db")
    assert imported.exit_code == 0, imported.stderr
    with sqlite3.connect(suite.root / "merged.db") as conn:
        assert conn.execute("SELECT attempt_id, author, value FROM labels").fetchall() == [(attempt, "Ada", 1.0)]
    again = merge(suite, *names, "--into", "merged.db")  # the label is there now: nothing left behind
    assert again.exit_code == 0, again.stderr
    assert "human label" not in again.stdout
