"""Fixtures for the built-in adapter tests: a loopback JSON app server, an adapter context,
importable callables written to a temporary folder, and a tiny project runner."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli.authoring import AdapterContext, ExperimentInfo, UsageMeter
from niceeval_cli.cli import app
from tests.support.cli_runner import CliRunner
from tests.support.loopback import Answer, Loopback
from tests.support.project import DISPLAY_VARIABLES

#: The CLI in process prints as to a pipe of a new process, whatever the shell running pytest set.
_PLAIN = dict.fromkeys(DISPLAY_VARIABLES)


@dataclass
class AppServer:
    """A real HTTP server on 127.0.0.1 standing in for the system under test: POST answers with
    `reply_status` / `reply_body` (a str is sent as text); any other method is not supported (501)."""

    reply_status: int = 200
    reply_body: Any = field(default_factory=lambda: {"message": "pong"})
    loopback: Loopback | None = None

    @property
    def url(self) -> str:
        assert self.loopback is not None
        return f"{self.loopback.url}/api/chat"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The POSTs received: {"path", "headers", "json"}."""
        assert self.loopback is not None
        return [{"path": r.path, "headers": r.headers, "json": json.loads(r.body) if r.body else None}
                for r in self.loopback.requests if r.method == "POST"]

    def answer(self, method: str, path: str, body: bytes) -> Answer:
        if method != "POST":
            return 501, b"", "text/plain"
        reply = self.reply_body
        payload = reply.encode() if isinstance(reply, str) else json.dumps(reply).encode()
        return self.reply_status, payload, "text/plain" if isinstance(reply, str) else "application/json"


@pytest.fixture
def app_server() -> Iterator[AppServer]:
    server = AppServer()
    with Loopback(server.answer) as server.loopback:
        yield server


@pytest.fixture
def make_ctx() -> Callable[..., AdapterContext]:
    def make(model: str | None = "test-model", experiment_id: str = "exp") -> AdapterContext:
        return AdapterContext(eval_id="e", attempt=0, experiment=ExperimentInfo(id=experiment_id, model=model),
                              deadline=None, _usage=UsageMeter())

    return make


_counter = iter(range(1_000_000))


@pytest.fixture
def agent_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], str]:
    """Write `source` as a fresh importable module; returns its (unique) module name."""
    folder = tmp_path / "agents"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))

    def write(source: str) -> str:
        name = f"agent_mod_{next(_counter)}"
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return name

    return write


@dataclass
class ProjectRun:
    exit_code: int
    output: str
    store: Path

    def query(self, target: str = "attempts") -> list[dict[str, Any]]:
        result = CliRunner().invoke(app, ["query", target, "--format", "json", "--store", str(self.store)],
                                    env=_PLAIN)
        assert result.exit_code == 0, result.output
        rows: list[dict[str, Any]] = json.loads(result.output)
        return rows


@pytest.fixture
def run_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, dict[str, str]], ProjectRun]:
    """Write niceeval.toml + evals/, run `niceeval run` in it (in-process), return the outcome."""

    def run(toml: str, evals: dict[str, str]) -> ProjectRun:
        root = tmp_path / f"project_{next(_counter)}"
        (root / "evals").mkdir(parents=True)
        (root / "niceeval.toml").write_text(textwrap.dedent(toml), encoding="utf-8")
        for name, source in evals.items():
            (root / "evals" / name).write_text(textwrap.dedent(source), encoding="utf-8")
        monkeypatch.chdir(root)
        store = root / ".niceeval" / "results.db"
        result = CliRunner().invoke(app, ["run"], env=_PLAIN)
        return ProjectRun(result.exit_code, result.output, store)

    return run
