"""The Docker Engine API over its Unix socket: an attempt's docker calls without a CLI client each.

A docker-sandboxed attempt asks the daemon four things (start a container, run the eval's command,
put its writes in and read the workspace out, remove the container). Through the CLI each is a
`docker` client process, ~15–20 ms of CPU on a 2-core box whose cores the daemon needs, and 4
clients per attempt against the floor's one (`docker run --rm`); asked over the socket they cost
the daemon the same and this process well under a millisecond (benchmarks/README.md, "Session 8").

Used only where the CLI would talk to the same daemon over a local Unix socket: `NICEEVAL_DOCKER`
unset, `DOCKER_CONTEXT` unset or `default`, `DOCKER_HOST` unset or `unix://…`, no other current
context in the docker config, and the socket answers `/_ping`. Anything else (TCP, TLS, ssh,
contexts, another binary) goes through the CLI as before. The calls are the ones the CLI makes
(`docker run -d` is create + start, `docker exec` is exec create + start + inspect, `docker rm -f
-v` is a forced delete), one connection each, unversioned paths (the daemon's own API version).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import struct
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any, cast
from urllib.parse import quote

from .._capture import OUTPUT_LIMIT, CappedOutput, Captured

__all__ = ["EngineError", "ExecProcess", "Limited", "arequest", "body_of", "checked", "connect", "engine_socket",
           "exec_captured", "memory_bytes", "message_of", "read_head", "request", "request_head", "start_exec"]

_DEFAULT = "/var/run/docker.sock"
_known: dict[str, bool] = {}  # socket path → answered /_ping
_lock = threading.Lock()
_READ = 1 << 16


class EngineError(OSError):
    """The daemon refused a call: its status and its message, worded as the CLI words them."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Error response from daemon: {message}")
        self.status = status


def _context_in_config() -> str | None:
    folder = os.environ.get("DOCKER_CONFIG") or os.path.join(os.path.expanduser("~"), ".docker")
    try:
        with open(os.path.join(folder, "config.json"), "rb") as handle:
            current = json.load(handle).get("currentContext")
    except (OSError, ValueError, AttributeError):
        return None
    return current if isinstance(current, str) and current else None


def engine_socket() -> str | None:
    """The daemon's Unix socket when the `docker` CLI would use that same socket; None: use the CLI."""
    if os.environ.get("NICEEVAL_DOCKER"):
        return None
    if os.environ.get("DOCKER_CONTEXT", "default") != "default":
        return None
    host = os.environ.get("DOCKER_HOST")
    if host:
        if not host.startswith("unix://"):
            return None
        path = host[len("unix://"):]
    else:
        if _context_in_config() not in (None, "default"):
            return None
        path = _DEFAULT
    with _lock:
        known = _known.get(path)
    if known is None:
        try:
            status, _ = request(path, "GET", "/_ping", timeout=10)
            known = status == 200
        except OSError:
            known = False
        with _lock:
            _known[path] = known
    return path if known else None


_SIZE = re.compile(r"^(\d+(?:\.\d+)*) ?([kmgtp])?i?b?$", re.IGNORECASE)


def memory_bytes(value: str) -> int | None:
    """`--memory` as the CLI reads it (binary multiples: `512m`, `2g`, `1.5GiB`); None: not one."""
    match = _SIZE.match(value.strip())
    if match is None:
        return None
    try:
        number = float(match.group(1))
    except ValueError:
        return None
    power = " kmgtp".index((match.group(2) or " ").lower())
    return int(number * 1024 ** power)


# ---- blocking calls (worker threads) ------------------------------------------------------------


def request_head(method: str, target: str, length: int, *, upgrade: bool = False) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: docker", "Content-Type: application/json",
             f"Content-Length: {length}"]
    lines += ["Connection: Upgrade", "Upgrade: tcp"] if upgrade else ["Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def connect(path: str, timeout: float | None) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except BaseException:
        sock.close()
        raise
    return sock


def read_head(reader: IO[bytes]) -> tuple[int, dict[str, str]]:
    status_line = reader.readline(65536)
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise OSError(f"the Docker daemon answered something other than HTTP: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    while True:
        line = reader.readline(65536)
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


class _Chunked:
    """A chunked HTTP body as a file (`read(n)`; b"" at its end)."""

    def __init__(self, reader: IO[bytes]) -> None:
        self._reader = reader
        self._left = 0
        self._done = False

    def read(self, size: int = -1) -> bytes:
        if self._done:
            return b""
        if self._left == 0:
            line = self._reader.readline(1024)
            try:
                self._left = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                self._left = 0
            if self._left == 0:
                self._done = True
                return b""
        data = self._reader.read(min(self._left, size if size > 0 else self._left))
        if not data:
            self._done = True
            return b""
        self._left -= len(data)
        if self._left == 0:
            self._reader.readline(16)  # the CRLF after the chunk
        return data


class Limited:
    def __init__(self, reader: IO[bytes], length: int) -> None:
        self._reader, self._left = reader, length

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        data = self._reader.read(min(self._left, size if size > 0 else self._left))
        self._left -= len(data)
        return data


def body_of(reader: IO[bytes], headers: Mapping[str, str]) -> Any:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return _Chunked(reader)
    if "content-length" in headers:
        return Limited(reader, int(headers["content-length"]))
    return reader


def message_of(data: bytes) -> str:
    try:
        return str(json.loads(data).get("message") or data.decode(errors="replace").strip())
    except (ValueError, AttributeError):
        return data.decode(errors="replace").strip()


def request(path: str, method: str, target: str, body: Any = None, *, data: bytes | None = None,
            timeout: float | None = 120) -> tuple[int, bytes]:
    """One call, its whole answer: (status, body). `body` is sent as JSON, `data` as it is."""
    payload = data if data is not None else (json.dumps(body).encode() if body is not None else b"")
    with connect(path, timeout) as sock, sock.makefile("rb") as reader:
        sock.sendall(request_head(method, target, len(payload)) + payload)
        status, headers = read_head(reader)
        stream = body_of(reader, headers)
        chunks = []
        while chunk := stream.read(_READ):
            chunks.append(chunk)
        return status, b"".join(chunks)


def checked(path: str, method: str, target: str, body: Any = None, *, data: bytes | None = None,
            timeout: float | None = 120) -> bytes:
    """`request`, an EngineError for any status ≥ 400."""
    status, answer = request(path, method, target, body, data=data, timeout=timeout)
    if status >= 400:
        raise EngineError(status, message_of(answer))
    return answer


def exec_body(argv: Sequence[str], *, stdin: bool, user: str | None = None, workdir: str | None = None,
              env: Mapping[str, str] | None = None) -> dict[str, object]:
    """What `docker exec [-i] [-u] [-w] [-e NAME…] CONTAINER argv` asks the daemon for."""
    body: dict[str, object] = {"AttachStdin": stdin, "AttachStdout": True, "AttachStderr": True,
                               "Tty": False, "Cmd": list(argv)}
    if user is not None:
        body["User"] = user
    if workdir is not None:
        body["WorkingDir"] = workdir
    if env:
        body["Env"] = [f"{name}={value}" for name, value in env.items()]
    return body


class _Demux:
    """stdout of an exec's multiplexed stream as a file; its stderr gathered (an 8-byte frame header
    per write: stream 1 or 2, then the length)."""

    def __init__(self, reader: IO[bytes]) -> None:
        self._reader = reader
        self._left = 0
        self._kind = 0
        self.errors = bytearray()

    def read(self, size: int = -1) -> bytes:
        while True:
            if self._left == 0:
                header = self._reader.read(8)
                if len(header) < 8:
                    return b""
                self._kind, self._left = header[0], struct.unpack(">I", header[4:8])[0]
                continue
            data = self._reader.read(min(self._left, size if size > 0 else self._left))
            if not data:
                return b""
            self._left -= len(data)
            if self._kind == 2:
                if len(self.errors) < OUTPUT_LIMIT:
                    self.errors += data
                continue
            return data

    def drain(self, limit: int = 1 << 20) -> None:
        """Read on to the stream's end, at most `limit` more bytes: a tar's padding and the stderr
        after it, never the rest of a stream its reader gave up on (a client whose stdout was
        closed stops there too)."""
        with contextlib.suppress(OSError, ValueError):  # killed, or closed already: the stream ends here
            while limit > 0 and (data := self.read(min(_READ, limit))):
                limit -= len(data)


class _Stdin:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def write(self, data: bytes) -> None:
        self._sock.sendall(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)


class _Stderr:
    def __init__(self, demux: _Demux) -> None:
        self._demux = demux

    def read(self) -> bytes:
        """What the command wrote to stderr: the stream is read on to its end first (`drain`; what
        a reader left of stdout, a tar's padding, is dropped), as the client's stderr ends with it."""
        self._demux.drain()
        return bytes(self._demux.errors)

    def close(self) -> None:
        pass


class ExecProcess:
    """A started exec, shaped as much like the `Popen` of `docker exec` as its readers need:
    `stdin` (write, then close: end of input), `stdout` (read), `stderr` (read once stdout ended),
    `kill()` (drop the connection, as killing the client does), `wait()` → the exit code."""

    def __init__(self, path: str, exec_id: str, sock: socket.socket, reader: IO[bytes]) -> None:
        self._path, self._id, self._sock = path, exec_id, sock
        self._reader = reader
        demux = self._demux = _Demux(reader)
        self.stdout = cast(IO[bytes], _Stdout(demux))
        self.stderr = _Stderr(demux)
        self.stdin = _Stdin(sock)
        self.returncode: int | None = None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)

    def _close(self) -> None:
        with contextlib.suppress(OSError):
            self._reader.close()
        with contextlib.suppress(OSError):
            self._sock.close()

    def wait(self) -> int:
        """The exit code, once the stream has ended (read on to its end here, `drain`: a command
        still writing when the connection closed would die of SIGPIPE, not exit on its own)."""
        if self.returncode is None:
            self._demux.drain()
            self._close()
            self.returncode = _exit_code(self._path, self._id)
        return self.returncode


class _Stdout:
    def __init__(self, demux: _Demux) -> None:
        self._demux = demux

    def read(self, size: int = -1) -> bytes:
        try:
            return self._demux.read(size)
        except (OSError, ValueError):
            return b""  # killed, or closed: the stream ends here

    def close(self) -> None:
        pass


def _exit_code(path: str, exec_id: str) -> int:
    """The exec's exit code once its stream ended (the CLI asks the same once; a daemon that has not
    marked it done yet is asked a few more times)."""
    import time

    for _ in range(50):
        try:
            status, answer = request(path, "GET", f"/exec/{exec_id}/json", timeout=30)
        except OSError:
            return -1
        if status >= 400:
            return -1
        state = json.loads(answer)
        if not state.get("Running") or state.get("ExitCode") is not None:
            return int(state.get("ExitCode") or 0)
        time.sleep(0.01)
    return -1


def start_exec(path: str, container: str, argv: Sequence[str], *, stdin: bool = False, user: str | None = None,
               workdir: str | None = None, env: Mapping[str, str] | None = None) -> ExecProcess:
    """`docker exec` started in this thread: read its `stdout`, then `wait()`. An exec the daemon
    refuses (the container is gone or stopped) raises EngineError."""
    created = checked(path, "POST", f"/containers/{quote(container)}/exec",
                      exec_body(argv, stdin=stdin, user=user, workdir=workdir, env=env), timeout=60)
    exec_id = str(json.loads(created)["Id"])
    payload = b'{"Detach":false,"Tty":false}'
    sock = connect(path, None)
    try:
        reader = sock.makefile("rb")
        sock.sendall(request_head("POST", f"/exec/{exec_id}/start", len(payload), upgrade=True) + payload)
        status, headers = read_head(reader)
        if status >= 400:
            raise EngineError(status, message_of(body_of(reader, headers).read()))
    except BaseException:
        sock.close()
        raise
    return ExecProcess(path, exec_id, sock, reader)


# ---- asynchronous: a command of the eval (`t.sandbox.run`, `prepare`) ------------------------------


def _dechunk(data: bytes) -> bytes:
    out, at = bytearray(), 0
    while True:
        end = data.find(b"\r\n", at)
        if end < 0:
            return bytes(out)
        try:
            size = int(data[at:end].split(b";")[0].strip() or b"0", 16)
        except ValueError:
            return bytes(out)
        if size == 0:
            return bytes(out)
        out += data[end + 2:end + 2 + size]
        at = end + 2 + size + 2


async def arequest(path: str, method: str, target: str, body: Any = None, *,
                   timeout: float | None = 120) -> tuple[int, bytes]:
    """`request` on the event loop (no worker thread): small answers only (create, start, delete, inspect)."""
    payload = json.dumps(body).encode() if body is not None else b""

    async def call() -> bytes:
        reader, writer = await asyncio.open_unix_connection(path)
        try:
            writer.write(request_head(method, target, len(payload)) + payload)
            await writer.drain()
            return await reader.read()  # `Connection: close`: the answer ends with the connection
        finally:
            writer.close()

    answer = await asyncio.wait_for(call(), timeout)
    head, _, rest = answer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise OSError(f"the Docker daemon answered something other than HTTP: {lines[0][:80]!r}")
    if any(line.lower().startswith(b"transfer-encoding:") and b"chunked" in line.lower() for line in lines[1:]):
        rest = _dechunk(rest)
    return int(parts[1]), rest


async def achecked(path: str, method: str, target: str, body: Any = None, *,
                   timeout: float | None = 120) -> bytes:
    status, answer = await arequest(path, method, target, body, timeout=timeout)
    if status >= 400:
        raise EngineError(status, message_of(answer))
    return answer


async def _aexit_code(path: str, exec_id: str) -> int:
    for _ in range(50):
        try:
            status, answer = await arequest(path, "GET", f"/exec/{exec_id}/json", timeout=30)
        except OSError:
            return -1
        if status >= 400:
            return -1
        state = json.loads(answer)
        if not state.get("Running") or state.get("ExitCode") is not None:
            return int(state.get("ExitCode") or 0)
        await asyncio.sleep(0.01)
    return -1


async def exec_captured(path: str, container: str, argv: Sequence[str], *, workdir: str | None,
                        env: Mapping[str, str] | None, input: bytes | None, timeout_s: float | None,
                        limit: int = OUTPUT_LIMIT) -> Captured:
    """`docker exec` of a command, its output capped per stream as `_capture.run_captured` caps a
    client's: at `timeout_s` the stream is dropped and the result is `timed_out` (the caller kills
    what runs inside); a cancellation drops it and re-raises. A refused exec is exit code 1 with the
    daemon's words on stderr, as the CLI exits."""
    out, err = CappedOutput(limit), CappedOutput(limit)
    status, answer = await arequest(path, "POST", f"/containers/{quote(container)}/exec",
                                    exec_body(argv, stdin=input is not None, workdir=workdir, env=env))
    if status >= 400:
        err.feed(f"Error response from daemon: {message_of(answer)}\n".encode())
        return Captured(1, out, err, False)
    exec_id = str(json.loads(answer)["Id"])
    reader, writer = await asyncio.open_unix_connection(path, limit=1 << 20)
    try:
        payload = b'{"Detach":false,"Tty":false}'
        writer.write(request_head("POST", f"/exec/{exec_id}/start", len(payload), upgrade=True) + payload)
        await writer.drain()
        status_line = await reader.readline()
        while await reader.readline() not in (b"\r\n", b"\n", b""):
            pass
        parts = status_line.split(None, 2)
        if len(parts) < 2 or not parts[1].isdigit() or int(parts[1]) >= 400:
            err.feed(f"Error response from daemon: {message_of(await reader.read(65536))}\n".encode())
            return Captured(1, out, err, False)
        feeding = asyncio.ensure_future(_feed(writer, input)) if input is not None else None
        try:
            await asyncio.wait_for(_pump(reader, out, err), timeout_s)
        except asyncio.TimeoutError:
            return Captured(None, out, err, True)
        finally:
            if feeding is not None:
                feeding.cancel()
    finally:
        writer.close()
    code = await _aexit_code(path, exec_id)
    return Captured(code, out, err, False)


async def _feed(writer: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(OSError):
        writer.write(data)
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()


async def _pump(reader: asyncio.StreamReader, out: CappedOutput, err: CappedOutput) -> None:
    while True:
        try:
            header = await reader.readexactly(8)
        except asyncio.IncompleteReadError:
            return
        left = struct.unpack(">I", header[4:8])[0]
        into = err if header[0] == 2 else out
        while left:
            chunk = await reader.read(min(left, _READ))
            if not chunk:
                return
            into.feed(chunk)
            left -= len(chunk)
