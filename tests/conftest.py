"""Shared pytest fixtures. Each helper appends its own fixtures below; keep sections separate."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.loopback import JudgeServer
from tests.support.project import Project

# --- judge: the loopback OpenAI-compatible server (tests/support/loopback.py) -------------------


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    """A running loopback judge endpoint (`.base_url`, `.default`, `.enqueue`, `.requests`)."""
    server = JudgeServer().start()
    try:
        yield server
    finally:
        server.stop()


# --- projects: a throwaway NiceEval project driven through the CLI in process (tests/support/project.py)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    """An empty project folder; write evals/niceeval.toml into it and call `.run()` / `.query()`.

    The CLI runs in-process, so afterwards the project's root leaves sys.path and the modules
    imported from it are forgotten: a later test's `app.py` is never served from this one's cache.
    """
    proj = Project(tmp_path / "proj", in_process=True)
    yield proj
    proj.forget()


# --- hermetic: no test may reach a real judge with a developer's or CI's key ----------------------
@pytest.fixture(autouse=True)
def _no_real_judge_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LOCAL_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
