"""The benchmarks build their large stores straight into the schema: a schema change that leaves
a builder behind breaks the figures a closing note quotes. Each builder, small, read back by the
real CLI."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path
from types import ModuleType

from tests.support.project import Project

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_view_large_builds_a_store_the_cli_reads(tmp_path: Path) -> None:
    view_large = _load("view_large")
    store = tmp_path / "results.db"
    run_id = view_large.build(store, 400, 10)
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT count(*) FROM attempts WHERE run_id = ?", (run_id,)).fetchone()[0] == 400
        assert conn.execute("SELECT count(*) FROM assertion_results").fetchone()[0] == 4000
    done = Project(tmp_path, in_process=True).cli("query", "units", "--run", run_id, "--store", str(store),
                                                  "--format", "ndjson")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 400 // view_large.ATTEMPTS_PER_EVAL


def test_view_large_with_every_attempt_recording_an_unmeasured_check(tmp_path: Path) -> None:
    view_large = _load("view_large")
    store = tmp_path / "results.db"
    view_large.build(store, 400, 10, recorded=True)
    done = Project(tmp_path, in_process=True).cli("view", "--store", str(store), env={"COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    note = "note: 400 results recorded without deciding could not be measured (judge-key-unresolved × 400)"
    assert note in done.stdout, done.stdout
