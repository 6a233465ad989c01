"""Drive NiceEval from the outside, as the hidden checks of issue 9 do: the real console script in
a subprocess (this worktree first on PYTHONPATH), a real store file read with sqlite3, real pipes.

`from outside import Proj` works in the acceptance tests: their conftest puts this folder on sys.path.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
_SCRIPT = Path(sys.executable).with_name("niceeval")
#: argv that starts the real CLI (the installed console script, else the same entry point).
NICEEVAL: list[str] = (
    [str(_SCRIPT)] if _SCRIPT.exists()
    else [sys.executable, "-c", "import sys; from niceeval_cli.cli import main; sys.argv[0] = 'niceeval'; main()"]
)
_SCRUBBED = ("OPENAI_API_KEY", "LOCAL_JUDGE_API_KEY", "FORCE_COLOR", "COLUMNS", "LINES")


def base_env(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


class Proj:
    """A project folder on disk; `run`/`cli` start the real `niceeval` in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def cli(self, *args: str, env: Mapping[str, str | None] | None = None, timeout: float = 120,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*NICEEVAL, *args], cwd=self.root, env=base_env(env), capture_output=True,
                              text=True, encoding="utf-8", errors="backslashreplace", timeout=timeout,
                              input=stdin)

    def shell(self, script: str, env: Mapping[str, str | None] | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a bash script in the project folder; `niceeval` there is the real CLI."""
        prelude = f"niceeval() {{ {' '.join(_quote(a) for a in NICEEVAL)} \"$@\"; }}\n"
        return subprocess.run(["bash", "-c", prelude + script], cwd=self.root, env=base_env(env),
                              capture_output=True, text=True, encoding="utf-8", errors="backslashreplace",
                              timeout=timeout)

    def popen(self, *args: str, env: Mapping[str, str | None] | None = None, **kw: Any) -> subprocess.Popen[str]:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen([*NICEEVAL, *args], cwd=self.root, env=base_env(env), text=True,
                                encoding="utf-8", errors="backslashreplace", **kw)

    def run(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return self.cli("run", *args, **kw)

    @property
    def store(self) -> Path:
        return self.root / ".niceeval" / "results.db"

    def sql(self, statement: str, params: Sequence[Any] = (), store: Path | None = None) -> list[dict[str, Any]]:
        """Rows read straight from the store file (read-only, no NiceEval code involved)."""
        con = sqlite3.connect(f"file:{store or self.store}?mode=ro", uri=True, timeout=30)
        con.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in con.execute(statement, params)]
        finally:
            con.close()

    def query_json(self, *args: str) -> Any:
        res = self.cli("query", *args, "--format", "json")
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def wait_for(predicate: Callable[[], bool], timeout: float = 60, every: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(every)


def sealed_count(proj: Proj) -> int:
    if not proj.store.exists():
        return 0
    try:
        return int(proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"])
    except sqlite3.OperationalError:
        return 0


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGKILL) -> None:
    """Stop a process this test started, by its pid."""
    if proc.poll() is None:
        os.kill(proc.pid, sig)
    proc.communicate(timeout=60)


# --- a loopback HTTP server with a scripted answer per request (the system under test) -----------
class Loopback:
    """A ThreadingHTTPServer on 127.0.0.1 answering every method with `answer(method, path, body)`
    → (status, body bytes, content type). Stop it with `stop()` (or use it as a context manager)."""

    def __init__(self, answer: Callable[[str, str, bytes], tuple[int, bytes, str]]) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        calls: list[tuple[str, str]] = []
        self.calls = calls

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                calls.append((self.command, self.path))
                status, payload, kind = answer(self.command, self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_OPTIONS = do_HEAD = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Loopback:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
