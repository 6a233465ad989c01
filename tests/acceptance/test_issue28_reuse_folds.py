"""Issue 28, item 4: a re-run that reuses every result stores its unit folds by copying an earlier
run's rows — only while that run's slots are exactly its own.

The all-reused re-run of 20 000 evals spent a fifth of its time, and its peak memory, folding
20 000 units that an earlier run had already folded from the very same slots
(`benchmarks/floors.py reuse`). A unit's fold row is a function of its slots (ordinal, pass rule,
attempt), so a run whose slots are another finished run's, key for key, stores that run's rows;
any difference — an edited eval executed again, a pass rule changed in niceeval.toml — and the run
folds its own. Through the real `niceeval` (a subprocess); the plan and the stored rows read with
sqlite3, and every run's rows held to what the fold statements make of its slots.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from niceeval_cli.store import Store
from niceeval_cli.store.unit_folds import _folded_units, _quoted
from tests.support.project import Project

STEADY = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def steady(t):
    t.check(1, equals(1)).label("one is one")
"""

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def broken(t):
    t.check(1, equals(2)).label("one is two")


@define_eval(cases=["a", "b"])
def cased(t, case):
    t.check(case, equals("a")).label("is a")
"""


def _run(proj: Project, expected: int) -> str:
    done = proj.run(env={"NO_COLOR": "1"})
    assert done.returncode == expected, done.stdout + done.stderr
    [run] = proj.sql("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1")
    return str(run["id"])


def _slots(proj: Project, run_id: str) -> dict[tuple[str, int], tuple[str, str, str]]:
    return {(r["eval_id"], r["ordinal"]): (r["relation"], r["plan_reason"], r["pass_rule"]) for r in proj.sql(
        "SELECT eval_id, ordinal, relation, plan_reason, pass_rule FROM run_slots WHERE run_id = ?", (run_id,))}


def _stored(store: Path, run_id: str) -> list[tuple[object, ...]]:
    """The run's stored unit rows (less run_id), in key order, read with sqlite3."""
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT units FROM unit_fold_runs WHERE run_id = ?", [run_id]).fetchone() is not None
        rows = conn.execute("SELECT * FROM unit_folds WHERE run_id = ? ORDER BY experiment_id, eval_id",
                            [run_id]).fetchall()
    return [row[1:] for row in rows]


def _folded(store: Path, run_id: str) -> list[tuple[object, ...]]:
    """What the fold statements make of the run's slots now (the rows a run folds itself)."""
    with Store.open(store, readonly=True) as opened:
        return sorted(_folded_units(opened._db, _quoted([run_id]), 1), key=lambda row: (row[0], row[1]))


def test_a_reused_run_stores_the_rows_of_its_slots_and_copies_only_identical_slots(tmp_path: Path) -> None:
    proj = Project(tmp_path / "proj")
    proj.write("niceeval.toml", '[project]\nattempts = 2\npass_rule = "all"\n')
    proj.write("evals/m.py", EVALS)
    proj.write("evals/s.py", STEADY)
    fresh = _run(proj, 1)
    assert {relation for relation, _, _ in _slots(proj, fresh).values()} == {"origin"}

    again = _run(proj, 1)  # nothing changed: every result reused
    assert set(_slots(proj, again).values()) == {("reference", "reused", "all")}
    assert _stored(proj.store, again) == _stored(proj.store, fresh) == _folded(proj.store, again)
    compared = proj.cli("compare", fresh, again, "--format", "json")
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert {p["class"] for p in json.loads(compared.stdout)["pairs"]} == {"unchanged", "still-failing"}, compared.stdout

    # Another pass rule: the slots say "any" now, so no earlier run's rows are this run's.
    proj.write("niceeval.toml", '[project]\nattempts = 2\npass_rule = "any"\n')
    ruled = _run(proj, 1)
    assert {rule for _, _, rule in _slots(proj, ruled).values()} == {"any"}
    stored = _stored(proj.store, ruled)
    assert stored == _folded(proj.store, ruled) != _stored(proj.store, again)
    rules = proj.sql("SELECT DISTINCT pass_rule FROM unit_folds WHERE run_id = ?", (ruled,))
    assert [r["pass_rule"] for r in rules] == ["any"]  # as the slots recorded it

    # An edited eval runs again (its fingerprint changed); the others are reused.
    proj.write("evals/s.py", STEADY.replace("equals(1)).label", "equals(1)).key('same').label"))
    edited = _run(proj, 1)
    slots = _slots(proj, edited)
    assert {k: v[:2] for k, v in slots.items() if k[0] == "s"} == {
        ("s", 0): ("origin", "fingerprint-changed"), ("s", 1): ("origin", "fingerprint-changed")}
    assert {v[:2] for k, v in slots.items() if k[0] != "s"} == {("reference", "reused")}
    assert _stored(proj.store, edited) == _folded(proj.store, edited)

    settled = _run(proj, 1)  # unchanged since: the edited run's slots, every one reused
    assert set(_slots(proj, settled).values()) == {("reference", "reused", "any")}
    assert _stored(proj.store, settled) == _stored(proj.store, edited) == _folded(proj.store, settled)
