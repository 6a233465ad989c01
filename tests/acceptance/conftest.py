"""Fixtures of the outside-in acceptance checks of issue 9 (helpers in outside.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # lets the tests `from outside import Proj`
    sys.path.append(_HERE)

from outside import Proj  # noqa: E402


@pytest.fixture
def proj(tmp_path: Path) -> Proj:
    return Proj(tmp_path / "proj")
