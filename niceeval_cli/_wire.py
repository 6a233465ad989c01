"""An httpcore network stream on a plain asyncio protocol (httpcore's `AsyncNetworkStream`).

httpcore runs on asyncio through anyio's socket streams: per request a write and a read each
pass through anyio's stream, cancel-scope and exception-mapping layers, and the request's
headers and body leave in two separate `send` calls. This stream is httpcore's own extension
point, implemented on an `asyncio.Protocol`: writes are gathered and leave in one `send` when
httpcore starts reading the response, received bytes wait in a buffer (reading pauses while it
holds READ_BUFFER_BYTES), and "is the idle connection readable?" (has the server hung up?) is a
flag, not a `select` call.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Coroutine, Iterable
from typing import Any

from ._httpx import httpcore

#: Gathered writes past this size leave at once (and wait while the socket buffer is full).
FLUSH_BYTES = 64 * 1024
#: Received bytes past this wait in the kernel (reading pauses until the reader takes them): a
#: server that keeps sending on an idle keep-alive connection — no request reads it — filled
#: memory at the speed of the network (8 GB in 8 s on loopback).
READ_BUFFER_BYTES = 1024 * 1024


class _TimedOut(Exception):
    """Set on a waiter by its timer."""


class AsyncioStream(asyncio.Protocol, httpcore.AsyncNetworkStream):
    """One TCP (or TLS) connection, as httpcore reads and writes it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._transport: asyncio.Transport | None = None
        self._received = bytearray()
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._eof = False
        self._lost: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._reading_paused = False
        self._drained: asyncio.Future[None] | None = None

    # ── asyncio.Protocol ────────────────────────────────────────────────────────────────
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._received += data
        if len(self._received) >= READ_BUFFER_BYTES and not self._reading_paused and self._transport is not None:
            self._reading_paused = True
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._lost = exc
        self._wake()
        self._paused = False
        self._wake_drain()

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wake_drain()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake_drain(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    # ── httpcore.AsyncNetworkStream ─────────────────────────────────────────────────────
    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._flush()
        while not self._received:
            if self._eof:
                if self._lost is not None:
                    raise httpcore.ReadError(str(self._lost) or type(self._lost).__name__)
                return b""
            self._waiter = self._loop.create_future()
            await self._wait(self._waiter, timeout, httpcore.ReadTimeout)
        if len(self._received) <= max_bytes:
            data = bytes(self._received)
            self._received.clear()
        else:
            data = bytes(self._received[:max_bytes])
            del self._received[:max_bytes]
        if self._reading_paused and len(self._received) < READ_BUFFER_BYTES and self._transport is not None:
            self._reading_paused = False
            self._transport.resume_reading()
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._transport is None or self._transport.is_closing():
            raise httpcore.WriteError(str(self._lost) if self._lost else "the connection is closed")
        self._pending.append(buffer)
        self._pending_bytes += len(buffer)
        if self._pending_bytes >= FLUSH_BYTES:
            self._flush()
            if self._paused:
                self._drained = self._loop.create_future()
                await self._wait(self._drained, timeout, httpcore.WriteTimeout)

    def _flush(self) -> None:
        if self._pending:
            data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
            self._pending.clear()
            self._pending_bytes = 0
            if self._transport is not None and not self._transport.is_closing():
                self._transport.write(data)

    async def _wait(self, waiter: asyncio.Future[None], timeout: float | None, error: type[Exception]) -> None:
        if timeout is None:
            await waiter
            return
        timer = self._loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        except _TimedOut:
            raise error(f"timed out after {timeout:g} s") from None
        finally:
            timer.cancel()

    async def aclose(self) -> None:
        self._pending.clear()
        if self._transport is not None:
            self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        assert self._transport is not None
        try:
            transport = await self._loop.start_tls(
                self._transport, self, ssl_context, server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )
        except (TimeoutError, asyncio.TimeoutError) as exc:
            self._transport.close()
            raise httpcore.ConnectTimeout(str(exc) or "TLS handshake timed out") from exc
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            self._transport.close()
            raise httpcore.ConnectError(str(exc)) from exc
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle connection with something to read has been hung up
            return bool(self._received) or self._eof
        if self._transport is None:
            return None
        name = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        return self._transport.get_extra_info(name)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(_TimedOut())


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Opens `AsyncioStream`s (TCP only: the judge client never uses Unix sockets)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        stream = AsyncioStream(loop)
        connecting = loop.create_connection(
            lambda: stream, host, port, local_addr=(local_address, 0) if local_address else None,
        )
        try:
            transport = await _connected(loop, connecting, timeout)
        except _TimedOut as exc:
            raise httpcore.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = transport.get_extra_info("socket")
        if sock is not None:
            for option in socket_options or ():
                sock.setsockopt(*option)
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return stream

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:  # pragma: no cover - not used by the judge client
        raise httpcore.ConnectError("Unix sockets are not supported by the judge client")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _connected(loop: asyncio.AbstractEventLoop,
                     connecting: Coroutine[Any, Any, tuple[asyncio.BaseTransport, Any]],
                     timeout: float | None) -> asyncio.BaseTransport:
    """`connecting` within `timeout` (`_TimedOut` past it). Not `asyncio.wait_for`: before Python
    3.12 it swallows a cancellation (Ctrl-C) that arrives as the connection completes, and the
    request then waited out its read timeout. A connection made as the caller is cancelled is
    closed, never leaked."""
    task = asyncio.ensure_future(connecting)
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    timer = loop.call_later(timeout, expire) if timeout is not None else None
    try:
        transport, _ = await task
        return transport
    except asyncio.CancelledError:
        if task.done() and not task.cancelled() and task.exception() is None:
            task.result()[0].close()
        if expired and task.cancelled():
            raise _TimedOut() from None
        raise
    finally:
        if timer is not None:
            timer.cancel()


async def speaks_tls(host: str, port: int, timeout_s: float) -> bool:
    """Whether a TLS handshake with `host:port` completes within `timeout_s`. Nothing is sent
    through it, so the certificate goes unchecked: the only question is which protocol the port
    speaks (`_lanes.plain_http_at_tls` asks it of a server that hung up on plain HTTP)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    loop = asyncio.get_running_loop()
    try:
        transport = await _connected(loop, loop.create_connection(asyncio.Protocol, host, port, ssl=context),
                                     timeout_s)
    except (OSError, _TimedOut):  # ssl.SSLError too: not TLS, or not a handshake we could finish
        return False
    transport.close()
    return True
