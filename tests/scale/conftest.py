"""Fixtures of the scale tests (helpers in tests/support/scale_project.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import Project
from tests.support.scale_project import TOML, eval_source


@pytest.fixture
def suite(project):
    project.write("niceeval.toml", TOML)
    project.write("evals/many.py", eval_source())
    return project


class Built:
    """Stores of the `suite` project that many tests start from, each run once per worker in a
    project of its own; a test gets copies in its own folder, so it may write to them (merge
    again, tamper) without another test seeing it. The runs and merges are the ones each test
    used to make itself: the same command lines on the same project."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._made: dict[tuple[Any, ...], tuple[Path, Any]] = {}

    def _make(self, key: tuple[Any, ...], *commands: tuple[str, ...]) -> tuple[Path, Any]:
        if key not in self._made:
            source = Project(self._factory.mktemp("built"), in_process=True)
            source.write("niceeval.toml", TOML)
            source.write("evals/many.py", eval_source())
            result = None
            for args in commands:
                result = source.cli(*args)
                assert result.exit_code in (0, 1, 5), result.stderr
            self._made[key] = (source.root, result)
        return self._made[key]

    @staticmethod
    def _copy(made: Path, root: Path) -> None:
        for store in sorted(made.glob("*.db*")):  # a WAL left beside a store goes with it
            shutil.copy2(store, root / store.name)

    def shards(self, n: int, root: Path) -> list[str]:
        """`run --shard K/n --group ci-7 --store shardK.db` for each K, into `root`."""
        names = [f"shard{k}.db" for k in range(1, n + 1)]
        made, _ = self._make(("shards", n), *(("run", "--shard", f"{k}/{n}", "--group", "ci-7", "--store", name)
                                               for k, name in enumerate(names, start=1)))
        self._copy(made, root)
        return names

    def merged(self, kept: tuple[int, ...], root: Path) -> Path:
        """The three shards of group ci-7 and `merged.db`, the shards `kept` merged."""
        made, _ = self._make(("merged", kept),
                             *(("run", "--shard", f"{k}/3", "--group", "ci-7", "--store", f"shard{k}.db")
                               for k in (1, 2, 3)),
                             ("merge", *(f"shard{k}.db" for k in kept), "--into", "merged.db"))
        self._copy(made, root)
        return root / "merged.db"

    def one_machine(self, root: Path) -> Any:
        """`run --store one.db`: the whole plan on one machine; its result."""
        made, result = self._make(("one",), ("run", "--store", "one.db"))
        self._copy(made, root)
        return result


@pytest.fixture(scope="package")
def built(tmp_path_factory) -> Built:
    return Built(tmp_path_factory)
