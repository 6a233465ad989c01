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
-v` is a forced delete), unversioned paths (the daemon's own API version). The HTTP is httpx's (its
Unix-socket transport, connections kept alive between calls); an exec's stream is the connection
httpx hands back once the daemon has upgraded it, read in Docker's frames (8-byte headers).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import socket
import struct
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, cast
from urllib.parse import quote

from .._capture import OUTPUT_LIMIT, CappedOutput, Captured

if TYPE_CHECKING:
    from .._httpx import httpx

__all__ = ["EngineError", "ExecProcess", "StreamReader", "arequest", "checked", "engine_socket", "exec_captured",
           "memory_bytes", "message_of", "open_stream", "request", "shut", "start_exec"]

_DEFAULT = "/var/run/docker.sock"
_known: dict[str, bool] = {}  # socket path → answered /_ping
_lock = threading.Lock()
_READ = 1 << 16
_START = b'{"Detach":false,"Tty":false}'


class EngineError(OSError):
    """The daemon refused a call: its status and its message, worded as the CLI words them."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Error response from daemon: {message}")
        self.status = status


def _context_in_config() -> str | None:
    """The docker config's current context. `engine_socket` asks on every call (several per
    attempt): the file is read again only when it changed (its path or modification time)."""
    path = os.path.join(os.environ.get("DOCKER_CONFIG") or os.path.join(os.path.expanduser("~"), ".docker"),
                        "config.json")
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return None
    return _read_context(path, stamp)


@functools.lru_cache(maxsize=8)
def _read_context(path: str, stamp: int) -> str | None:
    try:
        with open(path, "rb") as handle:
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


# ---- the HTTP of it: httpx over the socket ------------------------------------------------------
# (httpx is imported at the first call, from `_httpx` — without httpcore's trio backend: a run
# without a docker sandbox never loads it)


def stream_errors() -> tuple[type[BaseException], ...]:
    """What reading or writing a call's connection raises when it broke or was shut: the stream
    then ends, as a killed client's does."""
    from .._httpx import httpcore, httpx

    return (httpx.HTTPError, httpcore.NetworkError, OSError)


_UPGRADE = {"Content-Type": "application/json", "Connection": "Upgrade", "Upgrade": "tcp"}
_OWN = {"Connection": "close"}
_clients: dict[str, httpx.Client] = {}
_async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, httpx.AsyncClient]] = (
    weakref.WeakKeyDictionary())


def _client(path: str) -> httpx.Client:
    """One client per socket for the process (its connections kept alive between calls; httpx's
    client is safe to share between threads). A Unix socket carries no TLS: `verify=False` only
    spares loading the CA bundle (~20 ms of the first attempt's start) for a context never used."""
    from .._httpx import httpx

    with _lock:
        client = _clients.get(path)
        if client is None:
            client = _clients[path] = httpx.Client(transport=httpx.HTTPTransport(uds=path, verify=False),
                                                   base_url="http://docker", timeout=None)
    return client


def _async_client(path: str) -> httpx.AsyncClient:
    """One client per socket and event loop (an async client's connections belong to its loop)."""
    from .._httpx import httpx

    per_loop = _async_clients.setdefault(asyncio.get_running_loop(), {})
    client = per_loop.get(path)
    if client is None:
        client = per_loop[path] = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=path, verify=False),
                                                    base_url="http://docker", timeout=None)
    return client


def _failed(path: str, error: httpx.TransportError) -> OSError:
    """The daemon could not be asked: an OSError, as a CLI client that cannot connect fails
    (TimeoutError — an OSError — for a call that ran out of time)."""
    from .._httpx import httpx

    kind = TimeoutError if isinstance(error, httpx.TimeoutException) else OSError
    return kind(f"the Docker daemon at {path}: {error or type(error).__name__}")


def message_of(data: bytes) -> str:
    try:
        return str(json.loads(data).get("message") or data.decode(errors="replace").strip())
    except (ValueError, AttributeError):
        return data.decode(errors="replace").strip()


def request(path: str, method: str, target: str, body: Any = None, *, data: bytes | None = None,
            timeout: float | None = 120) -> tuple[int, bytes]:
    """One call, its whole answer: (status, body). `body` is sent as JSON, `data` (a tar) as it is."""
    from .._httpx import httpx

    headers = {"Content-Type": "application/x-tar"} if data is not None else None
    try:
        response = _client(path).request(method, target, json=body, content=data, headers=headers, timeout=timeout)
    except httpx.TransportError as error:
        raise _failed(path, error) from error
    return response.status_code, response.content


def checked(path: str, method: str, target: str, body: Any = None, *, data: bytes | None = None,
            timeout: float | None = 120) -> bytes:
    """`request`, an EngineError for any status ≥ 400."""
    status, answer = request(path, method, target, body, data=data, timeout=timeout)
    if status >= 400:
        raise EngineError(status, message_of(answer))
    return answer


def open_stream(path: str, method: str, target: str, *, upgrade: bool = False,
                payload: bytes = b"") -> httpx.Response:
    """A call whose answer is read as it comes (`response.extensions["network_stream"]`: the
    connection itself, which an upgraded exec also writes its stdin to, and which a kill shuts).
    The caller closes it. Its connection is never given back to the pool: httpx gives it back the
    moment the answer's last byte is read, and a kill after that would shut a connection another
    call has taken meanwhile (an upgraded one is never pooled anyway)."""
    from .._httpx import httpx

    client = _client(path)
    call = client.build_request(method, target, content=payload, headers=_UPGRADE if upgrade else _OWN)
    try:
        return client.send(call, stream=True)
    except httpx.TransportError as error:
        raise _failed(path, error) from error


class StreamReader:
    """A response's connection read as a file: `read(n)` gives n bytes unless the stream ends."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self._ended = False

    def read(self, size: int = -1) -> bytes:
        while not self._ended and (size < 0 or len(self._buffer) < size):
            try:
                data = self._stream.read(_READ)
            except stream_errors():
                data = b""
            if not data:
                self._ended = True
                break
            self._buffer += data
            if size < 0:
                continue
        taken = bytes(self._buffer if size < 0 else self._buffer[:size])
        del self._buffer[:len(taken)]
        return taken


def shut(stream: Any, how: int) -> None:
    """Shut one or both directions of a response's connection (end of stdin; a kill)."""
    sock = stream.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(how)


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
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        try:
            self._stream.write(data)
        except stream_errors() as error:
            raise BrokenPipeError(str(error)) from error

    def close(self) -> None:
        shut(self._stream, socket.SHUT_WR)


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

    def __init__(self, path: str, exec_id: str, response: httpx.Response) -> None:
        self._path, self._id, self._response = path, exec_id, response
        self._stream = response.extensions["network_stream"]
        demux = self._demux = _Demux(cast(IO[bytes], StreamReader(self._stream)))
        self.stdout = cast(IO[bytes], _Stdout(demux))
        self.stderr = _Stderr(demux)
        self.stdin = _Stdin(self._stream)
        self.returncode: int | None = None
        self._killed = False

    def kill(self) -> None:
        self._killed = True
        shut(self._stream, socket.SHUT_RDWR)

    def _close(self) -> None:
        with contextlib.suppress(*stream_errors()):
            self._response.close()

    def wait(self) -> int:
        """The exit code, once the stream has ended (read on to its end here, `drain`: a command
        still writing when the connection closed would die of SIGPIPE, not exit on its own)."""
        if self.returncode is None:
            self._demux.drain()
            self._close()
            # killed: its exit code is not waited for (what it was writing may block it for good)
            self.returncode = _exit_code(self._path, self._id, patient=not self._killed)
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


#: The pauses between asking an exec's state once its stream ended: the daemon can close the stream
#: before it has marked the exec done, by more than half a second on a loaded box; ~5 s in all.
_EXIT_PAUSES_S = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, *(0.25,) * 19)


def _exit_of(status: int, answer: bytes) -> int | None:
    """An exec's exit code from its inspect answer: -1 when the daemon refused; None while it is
    not marked done yet (ask again)."""
    if status >= 400:
        return -1
    state = json.loads(answer)
    if not state.get("Running") or state.get("ExitCode") is not None:
        return int(state.get("ExitCode") or 0)
    return None


def _exit_code(path: str, exec_id: str, *, patient: bool = True) -> int:
    """The exec's exit code once its stream ended (the CLI asks the same once; a daemon that has not
    marked it done yet is asked a few more times)."""
    import time

    for pause in (*(_EXIT_PAUSES_S if patient else ()), None):
        try:
            code = _exit_of(*request(path, "GET", f"/exec/{exec_id}/json", timeout=30))
        except OSError:
            return -1
        if code is not None:
            return code
        if pause is not None:
            time.sleep(pause)
    return -1


def start_exec(path: str, container: str, argv: Sequence[str], *, stdin: bool = False, user: str | None = None,
               workdir: str | None = None, env: Mapping[str, str] | None = None) -> ExecProcess:
    """`docker exec` started in this thread: read its `stdout`, then `wait()`. An exec the daemon
    refuses (the container is gone or stopped) raises EngineError."""
    created = checked(path, "POST", f"/containers/{quote(container)}/exec",
                      exec_body(argv, stdin=stdin, user=user, workdir=workdir, env=env), timeout=60)
    exec_id = str(json.loads(created)["Id"])
    response = open_stream(path, "POST", f"/exec/{exec_id}/start", upgrade=True, payload=_START)
    if response.status_code != 101:
        try:
            answer = response.read()
        finally:
            response.close()
        raise EngineError(response.status_code, message_of(answer) or "the exec did not start")
    return ExecProcess(path, exec_id, response)


# ---- asynchronous: a command of the eval (`t.sandbox.run`, `prepare`) ------------------------------


async def arequest(path: str, method: str, target: str, body: Any = None, *,
                   timeout: float | None = 120) -> tuple[int, bytes]:
    """`request` on the event loop (no worker thread): small answers only (create, start, delete, inspect)."""
    from .._httpx import httpx

    try:
        response = await _async_client(path).request(method, target, json=body, timeout=timeout)
    except httpx.TransportError as error:
        raise _failed(path, error) from error
    return response.status_code, response.content


async def achecked(path: str, method: str, target: str, body: Any = None, *,
                   timeout: float | None = 120) -> bytes:
    status, answer = await arequest(path, method, target, body, timeout=timeout)
    if status >= 400:
        raise EngineError(status, message_of(answer))
    return answer


async def _aexit_code(path: str, exec_id: str) -> int:
    """`_exit_code` on the event loop."""
    for pause in (*_EXIT_PAUSES_S, None):
        try:
            code = _exit_of(*await arequest(path, "GET", f"/exec/{exec_id}/json", timeout=30))
        except OSError:
            return -1
        if code is not None:
            return code
        if pause is not None:
            await asyncio.sleep(pause)
    return -1


async def exec_captured(path: str, container: str, argv: Sequence[str], *, workdir: str | None,
                        env: Mapping[str, str] | None, input: bytes | None, timeout_s: float | None,
                        limit: int = OUTPUT_LIMIT) -> Captured:
    """`docker exec` of a command, its output capped per stream as `_capture.run_captured` caps a
    client's: at `timeout_s` the stream is dropped and the result is `timed_out` (the caller kills
    what runs inside); a cancellation drops it and re-raises. A refused exec is exit code 1 with the
    daemon's words on stderr, as the CLI exits, and `refused`: nothing ran."""
    from .._httpx import httpx

    out, err = CappedOutput(limit), CappedOutput(limit)
    status, answer = await arequest(path, "POST", f"/containers/{quote(container)}/exec",
                                    exec_body(argv, stdin=input is not None, workdir=workdir, env=env))
    if status >= 400:
        err.feed(f"Error response from daemon: {message_of(answer)}\n".encode())
        return Captured(1, out, err, False, refused=True)
    exec_id = str(json.loads(answer)["Id"])
    client = _async_client(path)
    call = client.build_request("POST", f"/exec/{exec_id}/start", content=_START, headers=_UPGRADE)
    try:
        response = await client.send(call, stream=True)
    except httpx.TransportError as error:
        raise _failed(path, error) from error
    try:
        if response.status_code != 101:
            err.feed(f"Error response from daemon: {message_of(await response.aread())}\n".encode())
            return Captured(1, out, err, False, refused=True)
        stream = response.extensions["network_stream"]
        feeding = asyncio.ensure_future(_feed(stream, input)) if input is not None else None
        try:
            await asyncio.wait_for(_pump(_AsyncReader(stream), out, err), timeout_s)
        except asyncio.TimeoutError:
            return Captured(None, out, err, True)
        finally:
            if feeding is not None:
                feeding.cancel()
    finally:
        with contextlib.suppress(*stream_errors()):
            await response.aclose()
    code = await _aexit_code(path, exec_id)
    return Captured(code, out, err, False)


async def _feed(stream: Any, data: bytes) -> None:
    with contextlib.suppress(*stream_errors()):
        await stream.write(data)
        shut(stream, socket.SHUT_WR)


class _AsyncReader:
    """An upgraded connection read on the event loop: `readexactly(n)`, `read(n)`."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._buffer = bytearray()

    async def _more(self) -> bool:
        try:
            data = await self._stream.read(_READ)
        except stream_errors():
            data = b""
        self._buffer += data
        return bool(data)

    async def readexactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not await self._more():
                raise asyncio.IncompleteReadError(bytes(self._buffer), size)
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken

    async def read(self, size: int) -> bytes:
        if not self._buffer and not await self._more():
            return b""
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken


async def _pump(reader: _AsyncReader, out: CappedOutput, err: CappedOutput) -> None:
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
