"""A logging proxy of the Docker daemon's Unix socket: what a run asked the daemon, request by request.

Point `DOCKER_HOST` at `proxy.path`: every connection is passed on to the real socket unchanged,
and each request line a client sent (`METHOD /path`, ids and names as `{}`, the API version and
the query dropped) is kept in `proxy.requests`. A request inside a hijacked stream (an exec's
stdin) is never mistaken for one: only a chunk that starts with a request line counts.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from pathlib import Path

__all__ = ["DaemonProxy"]

_REQUEST = re.compile(rb"^(GET|HEAD|POST|PUT|DELETE) (/\S*) HTTP/1\.[01]\r\n")


def _shape(target: bytes) -> str:
    path = re.sub(r"^/v[0-9.]+", "", target.decode("latin-1").split("?")[0])
    return re.sub(r"^/(containers|exec|images)/(?!create$|json$)[^/]+", r"/\1/{}", path)


class DaemonProxy:
    def __init__(self, folder: Path, real: str = "/var/run/docker.sock") -> None:
        self.path = folder / "docker-proxy.sock"
        self.requests: list[str] = []
        #: per connection: when it opened, when it closed, the request lines it carried
        self.connections: list[tuple[float, float, list[str]]] = []
        self._real = real
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> DaemonProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        started = time.time()
        seen: list[str] = []
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(self._real)
        except OSError:
            client.close()
            return

        def pipe(source: socket.socket, sink: socket.socket, requests: bool) -> None:
            with contextlib.suppress(OSError):
                while data := source.recv(1 << 16):
                    if requests and (found := _REQUEST.match(data)):
                        line = f"{found.group(1).decode()} {_shape(found.group(2))}"
                        seen.append(line)
                        with self._lock:
                            self.requests.append(line)
                    sink.sendall(data)
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pipe, args=(upstream, client, False), daemon=True)
        back.start()
        pipe(client, upstream, True)
        back.join()
        client.close()
        upstream.close()
        with self._lock:
            self.connections.append((started, time.time(), seen))
