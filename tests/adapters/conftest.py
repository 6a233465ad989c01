"""Fixtures for the built-in adapter tests: a loopback JSON app server, an adapter context,
importable callables written to a temporary folder, and a tiny project runner."""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from niceeval_cli.authoring import AdapterContext, ExperimentInfo, UsageMeter
from niceeval_cli.cli import app


@dataclass
class AppServer:
    """A real HTTP server on 127.0.0.1 standing in for the system under test."""

    reply_status: int = 200
    reply_body: Any = field(default_factory=lambda: {"message": "pong"})
    requests: list[dict[str, Any]] = field(default_factory=list)  # {"path", "headers", "json"}
    httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/api/chat"


def _handler(server: AppServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            server.requests.append({
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "json": json.loads(raw) if raw else None,
            })
            body = server.reply_body
            payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(server.reply_status)
            self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def app_server() -> Iterator[AppServer]:
    server = AppServer()
    server.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    thread = threading.Thread(target=server.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(timeout=5)


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
        result = CliRunner().invoke(app, ["query", target, "--format", "json", "--store", str(self.store)])
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
        result = CliRunner().invoke(app, ["run"])
        return ProjectRun(result.exit_code, result.output, store)

    return run
