"""Issue 22, item 2: an eval's identity is (module id, definition name), not its displayed id.

A module's only eval shows as `<module id>`; once the module gains an eval it shows as
`<module id>/<name>`. Its history must follow it: the plan re-executes it once because its
module's bytes changed (never `new`), `compare` pairs it with its earlier attempts (never removed +
added), `query` finds its earlier attempts and carries the identity columns, and a merge of shard
stores pairs alike. Case evals: identity plus case id. The CLI (in process), stores read
with sqlite3.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


ONE = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval()
def first(t):
    t.check("yes", includes("y")).label("has y")
'''

SECOND = '''

@define_eval()
def second(t):
    t.check("yes", includes("y")).label("has y")
'''

CASES = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(cases=[{"id": "c1", "q": "yes"}, {"id": "c2", "q": "yup"}], case_id="id")
def answers(t, case):
    t.check(case["q"], includes("y")).label("has y")
'''

CASES_SECOND = '''

@define_eval()
def extra(t):
    t.check("yes", includes("y")).label("has y")
'''


def _planned(proj: Project, *args: str) -> dict[tuple[str, str | None], dict[str, Any]]:
    res = proj.run("--dry", "--json", *args)
    assert res.returncode == 0, res.stdout + res.stderr
    for line in res.stdout.splitlines():
        event = json.loads(line)
        if event.get("event") == "run.planned":
            return {(s["eval_id"], s["case_id"]): s for s in event["slots"]}
    raise AssertionError(f"no run.planned event in {res.stdout[:2000]}")


def _run(proj: Project, *args: str) -> str:
    res = proj.run(*args)
    assert res.returncode == 0, res.stdout + res.stderr
    return str(proj.sql("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1")[0]["id"])


def _compare(proj: Project, base: str, new: str, *extra: str) -> dict[tuple[str, str | None], str]:
    res = proj.cli("compare", base, new, "--format", "json", *extra)
    assert res.returncode == 0, res.stdout + res.stderr
    return {(p["eval_id"], p["case_id"]): p["class"] for p in json.loads(res.stdout)["pairs"]}


@pytest.mark.slow
def test_a_module_growing_to_two_evals_keeps_the_first_ones_history(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/grow.py", ONE)
    proj.write("evals/ds.py", CASES)
    run1 = _run(proj)
    stored = proj.sql("SELECT eval_id, case_id, eval_module, eval_name FROM attempts ORDER BY eval_id, case_id")
    assert stored == [
        {"eval_id": "ds[c1]", "case_id": "c1", "eval_module": "ds", "eval_name": "answers"},
        {"eval_id": "ds[c2]", "case_id": "c2", "eval_module": "ds", "eval_name": "answers"},
        {"eval_id": "grow", "case_id": None, "eval_module": "grow", "eval_name": "first"},
    ]

    # Unchanged: everything reused.
    assert {s["plan_reason"] for s in _planned(proj).values()} == {"reused"}

    # Each module gains an eval: the first keeps its identity, re-executed because its module changed.
    proj.write("evals/grow.py", ONE + SECOND)
    proj.write("evals/ds.py", CASES + CASES_SECOND)
    plan = _planned(proj)
    assert set(plan) == {("grow/first", None), ("grow/second", None), ("ds/answers[c1]", "c1"),
                         ("ds/answers[c2]", "c2"), ("ds/extra", None)}
    for key in (("grow/first", None), ("ds/answers[c1]", "c1"), ("ds/answers[c2]", "c2")):
        assert plan[key]["plan_reason"] == "fingerprint-changed", plan[key]
        # Its module's bytes changed, not its identity.
        assert plan[key]["changed"] == [f"source:evals/{key[0].split('/')[0]}.py"], plan[key]
    assert plan[("grow/second", None)]["plan_reason"] == "new"
    assert plan[("ds/extra", None)]["plan_reason"] == "new"

    run2 = _run(proj)
    assert {s["plan_reason"] for s in _planned(proj).values()} == {"reused"}  # once, then reused

    # compare pairs the first eval (and each case) with its earlier attempts.
    pairs = _compare(proj, run1, run2)
    assert pairs == {
        ("grow/first", None): "unchanged", ("grow/second", None): "added",
        ("ds/answers", "c1"): "unchanged", ("ds/answers", "c2"): "unchanged", ("ds/extra", None): "added",
    } or pairs == {
        ("grow/first", None): "unchanged", ("grow/second", None): "added",
        ("ds/answers[c1]", "c1"): "unchanged", ("ds/answers[c2]", "c2"): "unchanged", ("ds/extra", None): "added",
    }, pairs
    assert "removed" not in pairs.values()
    text = proj.cli("compare", run1, run2, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert "0 removed" in text.stdout and "2 added" in text.stdout, text.stdout

    # query finds the eval's attempts under its earlier id too, and carries its identity.
    rows = proj.query_json("attempts", "--run", "all", "--eval", "grow/first")
    assert sorted((r["eval_id"], r["eval_module"], r["eval_name"]) for r in rows) == [
        ("grow", "grow", "first"), ("grow/first", "grow", "first")]
    cases = proj.query_json("attempts", "--run", "all", "--eval", "ds/answers")
    assert sorted(r["eval_id"] for r in cases) == ["ds/answers[c1]", "ds/answers[c2]", "ds[c1]", "ds[c2]"]

    # And back to one eval: still its history (module changed again), never new.
    proj.write("evals/grow.py", ONE)
    plan = _planned(proj, "grow")
    assert plan[("grow", None)]["plan_reason"] == "fingerprint-changed", plan
    assert "eval_id" not in plan[("grow", None)]["changed"]
    run3 = _run(proj, "grow")
    pairs = _compare(proj, run2, run3)
    assert pairs[("grow", None)] == "unchanged" and pairs[("grow/second", None)] == "removed", pairs
    assert ("grow/first", None) not in pairs


@pytest.mark.slow
def test_shards_of_a_grown_module_merge_and_pair_with_the_history(proj: Project, tmp_path) -> None:
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/grow.py", ONE)
    run1 = _run(proj)
    history = tmp_path / "history.db"
    shutil.copy(proj.store, history)

    proj.write("evals/grow.py", ONE + SECOND)
    shards = []
    for k in (1, 2):
        store = tmp_path / f"shard{k}" / "results.db"
        res = proj.run("--shard", f"{k}/2", "--group", "g1", "--store", str(store))
        assert res.returncode == 0, res.stdout + res.stderr
        shards.append(str(store))
    merged = proj.cli("merge", *shards)
    assert merged.returncode == 0, merged.stdout + merged.stderr

    # The merged attempts carry the identity, and the history pairs with them.
    rows = proj.sql("SELECT eval_id, eval_module, eval_name FROM attempts ORDER BY eval_id")
    assert rows == [
        {"eval_id": "grow", "eval_module": "grow", "eval_name": "first"},
        {"eval_id": "grow/first", "eval_module": "grow", "eval_name": "first"},
        {"eval_id": "grow/second", "eval_module": "grow", "eval_name": "second"},
    ]
    pairs = _compare(proj, run1, "g1")
    assert pairs == {("grow/first", None): "unchanged", ("grow/second", None): "added"}, pairs
    # A re-run reuses the merged shards' attempts: found by identity.
    assert {s["plan_reason"] for s in _planned(proj).values()} == {"reused"}
