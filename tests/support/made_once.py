"""Projects made once per test process and copied: many tests start from the same sealed run
(the same files, the same command lines) and only read it, or add to their own copy. Running it
once per worker and copying its store into each test's project gives every test the same store
it used to make itself, at the cost of a file copy (the `made_once` fixture, tests/conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import Project


class MadeOnce:
    """`place(project, files, *commands)`: write `files` into `project` and give it what running
    `commands` (each a `niceeval` argv, in process) on those files left behind — the store and
    any other file the commands wrote — with the commands' results, made the first time only."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._made: dict[tuple[Any, ...], tuple[Path, list[Any]]] = {}

    def place(self, project: Project, files: Mapping[str, str], *commands: tuple[str, ...]) -> list[Any]:
        key = (tuple(sorted(files.items())), commands)
        if key not in self._made:
            source = Project(self._factory.mktemp("made"), in_process=True)
            for rel, text in files.items():
                source.write(rel, text)
            results = [source.cli(*args) for args in commands]
            self._made[key] = (source.root, results)
        root, results = self._made[key]
        for rel, text in files.items():
            project.write(rel, text)
        shutil.copytree(root, project.root, dirs_exist_ok=True)
        return results
