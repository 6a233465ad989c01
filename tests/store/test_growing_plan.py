"""A run's plan that grows while it runs (`run --until-decided`, schema 11): its plan rows, reused
slots and `planned_total` grow together; nothing else of a run row moves, a plan never shrinks, a
finished run's never changes; an older store's stale totals are set to the plans they recorded."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from niceeval_cli._states import PlanReason, Relation, RunStatus
from niceeval_cli.store import SCHEMA_VERSION, PlanSlot, SlotRecord, Store, StoreError

# Written by `niceeval run` at commit 258cf74 (schema 10): see the file's header.
SCHEMA_10_DUMP = Path(__file__).parent / "data" / "schema10_until_decided.sql"
GREW, PLAIN, GREW_BY_REUSE = "01M98WW6M0FYYEHVENRAKJ4Y3M", "01M98WW8SGP2DCF56TW5H2D3T0", "01M98WWEVX5ETZYFX8R9WWK258"


def _begin(store: Store, run_id: str, planned: int, **shard: object) -> None:
    store.begin_run(run_id, started_at="2030-01-01T00:00:00.000Z", argv=["run", "--until-decided"], version="0.1",
                    config_file=None, experiments=["exp"], planned_total=planned,
                    plan=[PlanSlot("exp", "evals/a", n) for n in range(planned)], **shard)  # type: ignore[arg-type]


def _planned(path: Path, run_id: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT planned_total FROM runs WHERE id = ?", [run_id]).fetchone()[0])


def test_a_round_grows_the_plan_its_reused_slots_and_the_total_together(project):
    earlier = project.begin_run()
    kept = project.seal(project.attempt(earlier, eval_id="evals/a", ordinal=3))
    project.finish(earlier)
    _begin(project.store, "R", 2)
    project.store.extend_plan("R", [PlanSlot("exp", "evals/a", 2)], [
        SlotRecord("R", "exp", "evals/a", 3, kept.id, Relation.REFERENCE, PlanReason.REUSED, "0.8")])
    run = project.store.resolve_run("R")
    assert (run.planned_total, run.not_run) == (4, 3)  # ordinals 0, 1, 2 planned and not run; 3 reused
    assert [s.ordinal for s in project.store.run_plan("R")] == [0, 1, 2, 3]
    project.store.extend_plan("R", [], [])  # nothing added: nothing written
    assert project.store.resolve_run("R").planned_total == 4


def test_a_plan_never_shrinks_and_a_finished_or_shard_run_never_grows(project):
    _begin(project.store, "R", 2)
    with sqlite3.connect(project.path) as conn, pytest.raises(sqlite3.IntegrityError, match="only grows"):
        conn.execute("UPDATE runs SET planned_total = 1 WHERE id = 'R'")
    with sqlite3.connect(project.path) as conn, pytest.raises(sqlite3.IntegrityError, match="only be finished"):
        conn.execute("UPDATE runs SET planned_total = 3, argv = '[]' WHERE id = 'R'")  # only the total may move
    project.finish("R")
    with pytest.raises(StoreError, match="finished run is immutable"):
        project.store.extend_plan("R", [PlanSlot("exp", "evals/a", 2)], [])
    assert _planned(project.path, "R") == 2 and len(project.store.run_plan("R")) == 2  # nothing written
    _begin(project.store, "S", 4, shard_index=1, shard_count=2, group_id="g", plan_digest="sha256:ab")
    with sqlite3.connect(project.path) as conn, pytest.raises(sqlite3.IntegrityError, match="never for a shard"):
        conn.execute("UPDATE runs SET planned_total = 5 WHERE id = 'S'")


def test_merge_takes_a_finished_run_over_its_running_copy_with_a_smaller_plan(project, tmp_path):
    """A copy of the store taken between two rounds holds the run running with 3 planned; the
    finished run has 4: merging it in finishes the copy's run with the plan grown, and merging
    the copy into the finished store adds nothing and refuses nothing."""
    _begin(project.store, "R", 2)
    project.store.extend_plan("R", [PlanSlot("exp", "evals/a", 2)], [])
    project.store.close()
    copy = tmp_path / "copy.db"
    shutil.copy(project.path, copy)
    project.store = Store.open(project.path)
    project.store.extend_plan("R", [PlanSlot("exp", "evals/a", 3)], [])
    project.finish("R")
    with Store.open(copy) as target:
        assert target.resolve_run("R").status is RunStatus.RUNNING
        target.merge([project.path])
        run = target.resolve_run("R")
        assert (run.status, run.planned_total, run.not_run) == (RunStatus.FINISHED, 4, 4)
    back = project.store.merge([copy])
    assert back.total_copied == 0 and project.store.resolve_run("R").planned_total == 4


def _schema_10_store(tmp_path: Path) -> Path:
    path = tmp_path / "results.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_10_DUMP.read_text(encoding="utf-8"))
    return path


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}


@pytest.mark.parametrize("readonly", [False, True])
def test_a_schema_10_store_gets_the_plan_totals_its_runs_recorded(tmp_path, readonly):
    """Two until-decided runs stored planned_total 5 beside 8 recorded slots (one executed them,
    one reused them); a plain run's 5 of 5 stays. Every other value of every row is kept."""
    path = _schema_10_store(tmp_path)
    before = _rows(path)
    assert [_planned(path, r) for r in (GREW, PLAIN, GREW_BY_REUSE)] == [5, 5, 5]
    Store.open(path, readonly=readonly).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 11
    assert [_planned(path, r) for r in (GREW, PLAIN, GREW_BY_REUSE)] == [8, 5, 8]
    after = _rows(path)
    planned_at = list(_column_names(path, "runs")).index("planned_total")
    strip = {t: [tuple(v for i, v in enumerate(r) if not (t == "runs" and i == planned_at)) for r in rows]
             for t, rows in after.items()}
    assert strip == {t: [tuple(v for i, v in enumerate(r) if not (t == "runs" and i == planned_at)) for r in rows]
                     for t, rows in before.items()}
    with Store.open(path, readonly=True) as store:
        assert [(r.planned_total, r.not_run) for r in (store.resolve_run(GREW), store.resolve_run(GREW_BY_REUSE))] \
            == [(8, 0), (8, 0)]
    with sqlite3.connect(path) as conn, pytest.raises(sqlite3.IntegrityError, match="immutable"):
        conn.execute(f"UPDATE runs SET planned_total = 9 WHERE id = '{GREW}'")  # finished: its triggers are back


def _column_names(path: Path, table: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
