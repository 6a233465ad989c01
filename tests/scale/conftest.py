"""Fixtures of the scale tests (helpers in tests/support/scale_project.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.project import Project
from tests.support.scale_project import TOML, eval_source


@pytest.fixture
def suite(project):
    project.write("niceeval.toml", TOML)
    project.write("evals/many.py", eval_source())
    return project


@pytest.fixture(scope="package")
def group_stores(tmp_path_factory) -> Callable[[tuple[int, ...], Path], Path]:
    """`place(kept, root)` puts into `root` the stores of the `suite` project run as shard group
    `ci-7` (`shard1.db` … `shard3.db`) and `merged.db`, the shards `kept` merged, and returns
    the merged store. Each set is run and merged once per worker, in a project of its own, and
    each test gets copies: a test may write to its stores (merge again, insert) without another
    test seeing it. The shard runs and the merge are the ones each test used to make itself."""
    built: dict[tuple[int, ...], Path] = {}

    def place(kept: tuple[int, ...], root: Path) -> Path:
        if kept not in built:
            source = Project(tmp_path_factory.mktemp("group"), in_process=True)
            source.write("niceeval.toml", TOML)
            source.write("evals/many.py", eval_source())
            for k in (1, 2, 3):
                result = source.run("--shard", f"{k}/3", "--group", "ci-7", "--store", f"shard{k}.db")
                assert result.exit_code in (0, 1, 5), result.stderr
            result = source.cli("merge", *(f"shard{k}.db" for k in kept), "--into", "merged.db")
            assert result.exit_code == 0, result.stderr
            built[kept] = source.root
        for store in sorted(built[kept].glob("*.db*")):  # a WAL left beside a store goes with it
            shutil.copy2(store, root / store.name)
        return root / "merged.db"

    return place
