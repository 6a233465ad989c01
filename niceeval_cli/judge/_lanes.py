"""One httpx transport made of single-connection lanes.

The judge client of an endpoint is bounded to `max_concurrency` calls. Behind it, instead of
one httpcore pool of `max_concurrency` connections, sit that many lanes of one connection each.
Same connections, same bound — but httpcore's pool rescans every connection for every request it
assigns (work that grows with the square of the pool size), which at 32 connections cost more
CPU than the grading itself.

A lane is httpcore's own HTTP/1.1 connection (`httpcore.AsyncHTTP11Connection`: h11 parses, as
in any httpx client) over an `AsyncioStream` (`_wire.py`) instead of anyio's: a lane is only ever
used by one request at a time, so neither a pool nor anyio's locks and streams are needed
between the request and the socket. A lane whose connection was closed, expired (5 s idle, as
httpx's default) or hung up by the server opens a new one for its next request.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from contextlib import contextmanager

import httpcore

from .._httpx import httpx
from ._wire import AsyncioBackend

KEEPALIVE_EXPIRY_S = 5.0

#: httpcore's exceptions as the httpx ones callers catch (what httpx's own transport does).
_EXCEPTIONS: tuple[tuple[type[Exception], type[Exception]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except httpcore.ConnectionNotAvailable:
        raise
    except Exception as exc:
        for core, mapped in _EXCEPTIONS:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


class _Lane:
    """One connection at most, used by one request at a time."""

    def __init__(self, backend: httpcore.AsyncNetworkBackend, verify: ssl.SSLContext) -> None:
        self._backend = backend
        self._verify = verify
        self._connection: httpcore.AsyncHTTP11Connection | None = None

    async def send(self, request: httpcore.Request) -> httpcore.Response:
        connection = self._connection
        if connection is not None and (
            connection.is_closed() or not connection.is_idle() or connection.has_expired()
        ):
            await connection.aclose()
            connection = self._connection = None
        if connection is None:
            connection = self._connection = await self._connect(request)
        return await connection.handle_async_request(request)

    async def _connect(self, request: httpcore.Request) -> httpcore.AsyncHTTP11Connection:
        origin = request.url.origin
        if origin.scheme not in (b"http", b"https"):
            raise httpcore.UnsupportedProtocol(f"Request URL has an unsupported protocol '{origin.scheme.decode()}://'.")
        timeout = request.extensions.get("timeout", {}).get("connect")
        host = origin.host.decode("ascii")
        stream = await self._backend.connect_tcp(host, origin.port, timeout=timeout)
        if origin.scheme == b"https":
            stream = await stream.start_tls(self._verify, server_hostname=host, timeout=timeout)
        return httpcore.AsyncHTTP11Connection(origin, stream, keepalive_expiry=KEEPALIVE_EXPIRY_S)

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()


class _Releasing(httpx.AsyncByteStream):
    """A response body that hands its lane back once the client has closed it."""

    def __init__(self, inner: AsyncIterable[bytes], release: asyncio.Queue[_Lane], lane: _Lane) -> None:
        self._inner, self._release, self._lane = inner, release, lane
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors():
            async for chunk in self._inner:
                yield chunk

    async def aclose(self) -> None:
        try:
            close = getattr(self._inner, "aclose", None)
            if close is not None:
                with _httpx_errors():
                    await close()
        finally:
            if not self._done:
                self._done = True
                self._release.put_nowait(self._lane)


class LaneTransport(httpx.AsyncBaseTransport):
    """`size` single-connection lanes; a request takes a free lane (FIFO when none is)."""

    def __init__(self, size: int, verify: ssl.SSLContext) -> None:
        self._size = size
        verify.set_alpn_protocols(["http/1.1"])
        self._verify = verify
        self._backend = AsyncioBackend()
        self._lanes: list[_Lane] = []
        self._free: asyncio.Queue[_Lane] = asyncio.Queue()

    def _new_lane(self) -> _Lane:
        lane = _Lane(self._backend, self._verify)
        self._lanes.append(lane)
        return lane

    def open_all(self) -> None:
        """Create every lane now (no connection yet), e.g. while a preflight request waits."""
        while len(self._lanes) < self._size:
            self._free.put_nowait(self._new_lane())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        if self._free.empty() and len(self._lanes) < self._size:
            lane = self._new_lane()
        else:
            lane = await self._free.get()
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            with _httpx_errors():
                try:
                    response = await lane.send(core)
                except httpcore.ConnectionNotAvailable:  # closed under us: once more, on a new one
                    await lane.aclose()
                    response = await lane.send(core)
        except BaseException:
            self._free.put_nowait(lane)
            raise
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Releasing(response.stream, self._free, lane),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        for lane in self._lanes:
            await lane.aclose()
