"""A warm `niceeval` for tests that run many shell commands: each command is still a real process
of its own, forked from one interpreter that has already imported the CLI and the modules its
commands import.

Why: a `niceeval` process spends ~0.35 s of CPU importing (the interpreter, typer, rich, pydantic,
the store, the runner, jinja2) before its command does ~0.05 s of work on a small project; a page
of docs/ runs up to fifteen of them. Forked from a warm interpreter the same command costs ~0.05 s.

What a command gets is what the shell gave it: its argv, its environment (including `VAR=x niceeval
...` prefixes), its working directory, and its stdin / stdout / stderr as file descriptors (passed
over a Unix socket); the shell sees its exit code (or the signal that ended it). The warm
interpreter is started with the same environment and working directory as the shell, so its
`sys.path` is the one a fresh `niceeval` would compute; it imports only this checkout's modules and
the libraries they use (never a project's own modules: those are imported by each command after
the fork, as a fresh process would). It must not hold threads when it forks (checked at start).

Not for tests whose subject is the process start itself (start-up imports and timings, the
console script, environment read at interpreter start): those start a fresh `niceeval`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

#: What every command of a small project imports (run, view, query, list, report, merge, sandbox),
#: measured as the union of their `sys.modules`: ~0.5 s of CPU, paid once per warm interpreter.
COMMANDS = (
    "niceeval_cli.cli", "niceeval_cli.app.run", "niceeval_cli.app.view", "niceeval_cli.app.query",
    "niceeval_cli.app.report", "niceeval_cli.app.merge", "niceeval_cli.app.listing", "niceeval_cli.app.sandbox",
    "niceeval_cli.app.scale", "niceeval_cli.runner", "niceeval_cli.store", "niceeval_cli.reports.run_output",
    "niceeval_cli.reports.view", "niceeval_cli.reports.listing", "niceeval_cli.reports.merge_output",
    "niceeval_cli.reports.sandboxes", "niceeval_cli.reports.html", "niceeval_cli.reports.terminal.transcript",
    "niceeval_cli._output_file", "niceeval_cli.discovery", "niceeval_cli.datasets", "typer._adapters",
    "xml.etree.ElementTree",
)
#: What `compare` (and a report against a baseline) adds: scipy's tests, ~0.8 s of CPU a process.
COMPARISONS = ("niceeval_cli.app.compare", "niceeval_cli.comparison", "scipy.stats")

# The warm interpreter (run with `python -c`, as the shim's fresh process would be: sys.path[0] is
# the working directory). It forks once per connection; the child returns from serve() and runs
# the command at the top level, so it ends as a process does (SystemExit, atexit, flushed streams).
_SERVER = r'''
import importlib, json, os, selectors, socket, struct, sys, threading

for _name in sys.argv[2:]:
    importlib.import_module(_name)
if threading.active_count() != 1:
    raise SystemExit(f"warm niceeval: a preloaded module started a thread: {threading.enumerate()}")
_listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
_listener.bind(sys.argv[1])
_listener.listen(16)
print("ready", flush=True)


def _request(conn):
    header, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
    (size,) = struct.unpack("!I", header)
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("the client went away mid-request")
        data += chunk
    return json.loads(data), fds


def serve():
    sel = selectors.DefaultSelector()
    sel.register(_listener, selectors.EVENT_READ, ("listener",))
    parent = os.getppid()
    while True:
        if os.getppid() != parent:  # the test's process died without stopping us: so do we
            try:
                os.unlink(sys.argv[1])
                os.rmdir(os.path.dirname(sys.argv[1]))
            except OSError:
                pass
            os.killpg(0, 9)
        for key, _events in sel.select(timeout=1.0):
            kind = key.data[0]
            if kind == "listener":
                conn, _ = _listener.accept()
                try:
                    request, fds = _request(conn)
                except (OSError, EOFError, ValueError):
                    conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:  # the command: none of the other commands' connections or pidfds
                    for other in list(sel.get_map().values()):
                        if isinstance(other.fileobj, int):
                            os.close(other.fileobj)
                        else:
                            other.fileobj.close()
                    sel.close()
                    return conn, request, fds
                for fd in fds:
                    os.close(fd)
                conn.sendall(f"{pid}\n".encode())
                pidfd = os.pidfd_open(pid)
                sel.register(pidfd, selectors.EVENT_READ, ("exited", pid, conn))
                sel.register(conn, selectors.EVENT_READ, ("client", pid))
            elif kind == "exited":
                _, pid, conn = key.data
                sel.unregister(key.fileobj)
                os.close(key.fileobj)
                _, status = os.waitpid(pid, 0)
                if conn.fileno() >= 0:
                    sel.unregister(conn)
                    try:
                        conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                    except OSError:
                        pass
                    conn.close()
            else:  # the client forwards a signal, or went away (killed) while its command ran
                _, pid = key.data
                data = key.fileobj.recv(64)
                if data:
                    for number in data.split():
                        os.kill(pid, int(number))
                else:
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    os.kill(pid, 9)


_conn, _request_, _fds = serve()
_conn.close()
for _target, _fd in enumerate(_fds):
    os.dup2(_fd, _target)
    os.close(_fd)
os.chdir(_request_["cwd"])
os.environ.clear()
os.environ.update(_request_["env"])
sys.argv = _request_["argv"]
sys.stdout.reconfigure(line_buffering=os.isatty(1))  # as a fresh process decides it for its stdout
importlib.invalidate_caches()
del _conn, _request_, _fds
from niceeval_cli.cli import main
main()
'''

# The `niceeval` on the shell's PATH: a bare interpreter (-I -S: ~10 ms) that hands its argv,
# environment, working directory and standard streams to the warm interpreter, forwards the signals
# it gets to the command, and exits as the command did.
_CLIENT = r'''
import json, os, signal, socket, struct, sys

conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect({socket!r})
payload = json.dumps({{"argv": ["niceeval", *sys.argv[1:]], "env": dict(os.environ), "cwd": os.getcwd()}}).encode()
socket.send_fds(conn, [struct.pack("!I", len(payload))], [0, 1, 2])
conn.sendall(payload)
reader = conn.makefile("rb")
pid = int(reader.readline())
for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
    signal.signal(number, lambda sig, _frame: conn.sendall(f"{{sig}}\n".encode()))
line = reader.readline()
code = int(line) if line.strip() else 1
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
    code = 128 - code
os._exit(code)
'''


class WarmCli:
    """One warm interpreter for one shell environment; `shim(bin_dir)` puts its `niceeval` there.

    Use as a context manager: the interpreter is stopped (by its pid) on exit, and so is any
    command still running."""

    def __init__(self, folder: Path, env: Mapping[str, str], cwd: Path, preload: Sequence[str] = COMMANDS) -> None:
        self.log = folder / "warm-niceeval.log"
        self.socket = Path()  # set on start: a Unix socket's path holds at most 107 bytes, so a short
        self._socket_dir: Path | None = None  # folder of its own in the temp folder, whatever `folder` is
        self._env, self._cwd, self._preload = dict(env), cwd, list(preload)
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> WarmCli:
        self._socket_dir = Path(tempfile.mkdtemp(prefix="niceeval-warm-"))
        self.socket = self._socket_dir / "cli.sock"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self._process = subprocess.Popen([sys.executable, "-c", _SERVER, str(self.socket), *self._preload],
                                             cwd=self._cwd, env=self._env, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        assert self._process.stdout is not None
        ready = self._process.stdout.readline()
        self._process.stdout.close()
        if ready.strip() != b"ready":
            self.__exit__()
            raise RuntimeError(f"the warm niceeval did not start:\n{self.log.read_text(errors='replace')[-3000:]}")
        return self

    def shim(self, bin_dir: Path) -> Path:
        """Write `niceeval` into `bin_dir`: the command a shell with that directory first on PATH runs."""
        bin_dir.mkdir(parents=True, exist_ok=True)
        shim = bin_dir / "niceeval"
        shim.write_text(f"#!{sys.executable} -IS\n" + _CLIENT.format(socket=str(self.socket)), encoding="utf-8")
        shim.chmod(0o755)
        return shim

    def __exit__(self, *exc: object) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)  # its session: the interpreter and any command left
            process.wait(timeout=30)
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
