"""Container and file calls of the Docker Engine API (`_engine`): what `docker run -d`, `docker rm -f
-v` and `docker cp` ask the daemon, for a docker sandbox's per-attempt work."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, cast
from urllib.parse import quote, urlencode

if TYPE_CHECKING:
    import httpx

from ._engine import StreamReader, arequest, message_of, open_stream, request, shut, stream_errors

__all__ = ["ArchiveProcess", "aremove", "create_body", "image_id", "not_found", "put_archive", "remove", "run_detached",
           "unread_file", "words_after_kill"]


class ArchiveProcess:
    """`docker cp CONTAINER:PATH -` as its readers use the client's `Popen`: `stdout` the tar (empty
    when the daemon refused: no such file), `stderr` the daemon's words, `kill()`, `wait()`."""

    def __init__(self, path: str, container: str, source: str) -> None:
        self.returncode: int | None = None
        self._error = b""
        target = f"/containers/{quote(container)}/archive?{urlencode({'path': source})}"
        self._response = open_stream(path, "GET", target)
        self._status = self._response.status_code
        if self._status >= 400:
            try:
                self._error = f"Error response from daemon: {message_of(self._response.read())}".encode()
            finally:
                self._close()
            self.stdout = cast(IO[bytes], _Guarded(_Fixed(b"")))
        else:
            self.stdout = cast(IO[bytes], _Guarded(StreamReader(_Body(self._response))))
        self.stderr = _Fixed(self._error)

    def kill(self) -> None:
        stream = self._response.extensions.get("network_stream")
        if stream is not None:
            shut(stream, socket.SHUT_RDWR)

    def _close(self) -> None:
        with contextlib.suppress(*stream_errors()):
            self._response.close()

    def wait(self) -> int:
        if self.returncode is None:
            self._close()
            self.returncode = 0 if self._status < 400 else 1
        return self.returncode


class _Body:
    """A streamed answer's body (its transfer encoding undone by httpx), read in pieces."""

    def __init__(self, response: httpx.Response) -> None:
        self._pieces = response.iter_raw(1 << 16)

    def read(self, size: int) -> bytes:
        return next(self._pieces, b"")


class _Guarded:
    def __init__(self, body: Any) -> None:
        self._body = body

    def read(self, size: int = -1) -> bytes:
        try:
            return bytes(self._body.read(size))
        except OSError:
            return b""  # killed: the stream ends here

    def close(self) -> None:
        pass


class _Fixed:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self, size: int = -1) -> bytes:
        return self._data

    def close(self) -> None:
        pass


def image_id(path: str, image: str) -> tuple[bool, str | None]:
    """`docker image inspect --format {{.Id}} IMAGE`: (whether the daemon answered, the image's id —
    None when it has no such image). Not answered (or an answer not understood): the caller asks
    the CLI, which then says what is wrong."""
    try:
        status, answer = request(path, "GET", f"/images/{quote(image, safe='/:@')}/json", timeout=30)
    except OSError:
        return False, None
    if status == 404:
        return True, None
    if status != 200:
        return False, None
    try:
        found = json.loads(answer).get("Id")
    except (ValueError, AttributeError):
        return False, None
    return (True, found) if isinstance(found, str) and found else (False, None)


def put_archive(path: str, container: str, dest: str, tar: bytes) -> str | None:
    """`docker cp - CONTAINER:DEST` (a tar, never overwriting a directory with a file, as the CLI
    asks); the daemon's words when it refused, else None."""
    target = f"/containers/{quote(container)}/archive?{urlencode({'path': dest, 'noOverwriteDirNonDir': 'true'})}"
    try:
        status, answer = request(path, "PUT", target, data=tar, timeout=120)
    except OSError as error:
        return str(error)
    return None if status < 400 else f"Error response from daemon: {message_of(answer)}"


def create_body(image: str, *, labels: Mapping[str, str], network: str, workdir: str, tmpfs: Mapping[str, str],
                entrypoint: Sequence[str], cmd: Sequence[str], cpus: float | None, memory: int | None,
                user: str | None, pids_limit: int) -> dict[str, object]:
    """What `docker run -d --name … --label … --network … --tmpfs … -w … --pids-limit … [--cpus] [--memory] [--user]
    --entrypoint … IMAGE CMD…` asks the daemon to create."""
    host: dict[str, object] = {"NetworkMode": network, "Tmpfs": dict(tmpfs), "PidsLimit": pids_limit}
    if cpus is not None:
        host["NanoCpus"] = round(cpus * 1e9)
    if memory is not None:
        host["Memory"] = memory
    body: dict[str, object] = {"Image": image, "Labels": dict(labels), "WorkingDir": workdir,
                               "Entrypoint": list(entrypoint), "Cmd": list(cmd), "Tty": False,
                               "OpenStdin": False, "AttachStdin": False, "AttachStdout": False,
                               "AttachStderr": False, "HostConfig": host}
    if user is not None:
        body["User"] = user
    return body


async def run_detached(path: str, name: str, body: Mapping[str, object]) -> str | None:
    """`docker run -d`: create, then start; the daemon's words when either refused, else None. A
    container created but not started stays (the caller removes it, as after the CLI's failure)."""
    status, answer = await arequest(path, "POST", f"/containers/create?{urlencode({'name': name})}", body)
    if status >= 400:
        return f"Error response from daemon: {message_of(answer)}"
    status, answer = await arequest(path, "POST", f"/containers/{quote(name)}/start")
    if status >= 400:
        return f"Error response from daemon: {message_of(answer)}"
    return None


async def aremove(path: str, container: str) -> bool:
    """`remove` on the event loop: a removal in the background holds no worker thread for the
    ~0.1–0.7 s the daemon takes (the snapshots of the attempts still going need them)."""
    try:
        await arequest(path, "DELETE", f"/containers/{quote(container)}?force=1&v=1", timeout=60)
    except (OSError, asyncio.TimeoutError):
        return False
    return True


def remove(path: str, container: str) -> bool:
    """`docker rm -f -v`; False when the daemon could not be asked (the caller tries the CLI)."""
    try:
        request(path, "DELETE", f"/containers/{quote(container)}?force=1&v=1", timeout=60)
    except OSError:
        return False
    return True


#: How the daemon (and the CLI passing its words on) says a path is not in the container.
_NOT_FOUND = ("could not find the file", "no such container:path", "no such file")


def not_found(words: str) -> bool:
    """Whether the daemon's (or the CLI's) words say the path is not in the container (which is there)."""
    return any(sign in words.lower() for sign in _NOT_FOUND)


def unread_file(shown: str, error: bytes) -> OSError:
    """A read that brought no file: missing (FileNotFoundError, what the test sees for a missing
    file), or refused for another reason, which is said as the daemon said it — a daemon error
    is not a missing file."""
    words = error.decode("utf-8", "replace").strip()
    if not words:
        return FileNotFoundError(f"{shown}: no such file in the sandbox workspace")
    if not_found(words):  # the daemon's words kept: they name what it missed
        return FileNotFoundError(f"{shown}: no such file in the sandbox workspace ({words})")
    return OSError(f"{shown}: could not be read from the sandbox: {words}")


def words_after_kill(process: Any) -> bytes:
    """The error words of a `docker cp` whose tar broke off: killed first (the CLI would block on
    its full pipe; a client that had not yet said why says nothing, and the read counts as missing)."""
    process.kill()
    return bytes(process.stderr.read())
