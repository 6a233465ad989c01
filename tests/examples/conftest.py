"""End-to-end fixtures for the examples: a private copy of examples/ and the root niceeval.toml,
run through the CLI (tests/support/examples.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.examples import ExamplesProject, copy_examples


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ExamplesProject]:
    yield copy_examples(tmp_path, monkeypatch)

