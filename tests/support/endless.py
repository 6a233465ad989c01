"""A loopback HTTP server whose answers never end: every request gets a 200 head and then a
chunked body forever — `flood` (1 MiB chunks as fast as the client reads) or `trickle` (one byte
every 0.2 s, so no read ever waits long enough to time out) — or, `linger`, a whole chat
completion after which the server keeps sending junk on the kept-alive connection, or, `crumbs`,
a chat completion of 500 KB sent in 1-byte chunks. What a broken endpoint or a hostile one does; a
connection ends only when the client closes it."""

from __future__ import annotations

import socket
import threading
import time
from typing import Literal

Mode = Literal["flood", "trickle", "linger", "crumbs"]

_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
_CRUMBS_BODY = b'{"choices": [{"message": {"role": "assistant", "content": "hi' + b"x" * 500_000 + b'"}}]}'
_CRUMBS = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
           + b"".join(b"1\r\n%c\r\n" % byte for byte in _CRUMBS_BODY) + b"0\r\n\r\n")

LINGER_REPLY = b'{"choices": [{"message": {"role": "assistant", "content": "hi"}}]}'


class EndlessServer:
    """`with EndlessServer("flood") as server:` → `server.url`; `server.requests`: requests seen."""

    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.requests = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                head = b""
                while b"\r\n\r\n" not in head:
                    data = conn.recv(65536)
                    if not data:
                        return
                    head += data
                self.requests += 1
                if self.mode == "crumbs":  # (a GET, the preflight's /models, is answered 404 at once)
                    conn.sendall(_NOT_FOUND if head.startswith(b"GET") else _CRUMBS)
                    return
                if self.mode == "linger":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                                 % len(LINGER_REPLY) + LINGER_REPLY)
                    while not self._stopped.is_set():
                        conn.sendall(b"x" * (1 << 20))
                    return
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                piece = b"x" * (1 << 20) if self.mode == "flood" else b"{"
                chunk = b"%x\r\n" % len(piece) + piece + b"\r\n"
                while not self._stopped.is_set():
                    conn.sendall(chunk)
                    if self.mode == "trickle":
                        time.sleep(0.2)
            except OSError:  # the client hung up: what ends an endless answer
                return

    def stop(self) -> None:
        self._stopped.set()
        self._sock.close()

    def __enter__(self) -> EndlessServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
