"""Ctrl-C during the preflight ends the run at once (exit 130, `interrupted`), instead of waiting
out a system under test, judge or sandbox that does not answer its check."""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.support.project import Project

pytestmark = pytest.mark.slow


@pytest.fixture
def silent_server() -> Iterator[tuple[str, threading.Event]]:
    """A loopback server that accepts connections and never answers (the adapter's probe hangs)."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = threading.Event()
    held: list[socket.socket] = []
    closing = threading.Event()

    def serve() -> None:
        listener.settimeout(0.05)
        while not closing.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)
            accepted.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    finally:
        closing.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_during_a_hanging_preflight_ends_the_run_at_once(proj: Project, silent_server, sig) -> None:
    url, accepted = silent_server
    proj.write("niceeval.toml",
               f'[experiments.chat]\nadapter = "http"\n[experiments.chat.options]\nurl = "{url}/chat"\n')
    proj.write("evals/ask.py", "from niceeval_cli import define_eval\n\n@define_eval()\nasync def ask(t):\n"
                               "    await t.send('hi')\n")
    proc = proj.popen("run")
    try:
        assert accepted.wait(60), "the preflight never reached the server"
        signalled = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        waited = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert proc.returncode == 130, out + err
    assert waited < 5, f"the run waited {waited:.1f} s for its preflight after the signal"
    assert proj.sql("SELECT status, exit_code FROM runs") == [{"status": "interrupted", "exit_code": 130}]
    assert proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"] == 0
