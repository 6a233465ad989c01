"""One httpx transport made of single-connection lanes: the HTTP of the judge and of the
`openai-chat` / `http` adapters (`lane_client`).

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
import functools
import ssl
import urllib.request
from collections.abc import AsyncIterable, Callable, Iterator
from contextlib import contextmanager

import httpcore
from httpcore._synchronization import AsyncLock as _CoreLock

from ._httpx import httpx
from ._wire import AsyncioBackend

KEEPALIVE_EXPIRY_S = 5.0
#: An adapter's lanes: httpx's own default bound on a client's connections. A lane (and its
#: connection) is made only when every earlier one is busy, so a run opens as many connections
#: as it has requests in flight at once, as httpx's pool would.
ADAPTER_LANES = 100

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

    def __init__(self, backend: httpcore.AsyncNetworkBackend, verify: Callable[[], ssl.SSLContext]) -> None:
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
            stream = await stream.start_tls(self._verify(), server_hostname=host, timeout=timeout)
        connection = httpcore.AsyncHTTP11Connection(origin, stream, keepalive_expiry=KEEPALIVE_EXPIRY_S)
        if isinstance(getattr(connection, "_state_lock", None), _CoreLock):
            # httpcore's lock goes through anyio (importing its asyncio backend on first use,
            # and yielding to the loop on every acquire); a lane is used by one request at a
            # time, so asyncio's own lock, never contended, keeps the same guarantee for free.
            connection._state_lock = asyncio.Lock()  # type: ignore[assignment]
        return connection

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()


async def _read_all(response: httpcore.Response) -> bytes:
    stream = response.stream
    assert isinstance(stream, AsyncIterable)
    try:
        chunks = [chunk async for chunk in stream]
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class LaneTransport(httpx.AsyncBaseTransport):
    """`size` single-connection lanes; a request takes a free lane (FIFO when none is) and
    hands it back with the whole response read."""

    def __init__(self, size: int, verify: ssl.SSLContext | Callable[[], ssl.SSLContext]) -> None:
        """`verify`: the TLS context, or what makes it — called at the first https connection
        only (loading the CA bundle costs tens of milliseconds a loopback judge never needs)."""
        self._size = size
        self._make_verify = verify if callable(verify) else (lambda: verify)
        self._context: ssl.SSLContext | None = None
        self._backend = AsyncioBackend()
        self._lanes: list[_Lane] = []
        self._free: asyncio.Queue[_Lane] = asyncio.Queue()

    def _new_lane(self) -> _Lane:
        lane = _Lane(self._backend, self._tls)
        self._lanes.append(lane)
        return lane

    def _tls(self) -> ssl.SSLContext:
        if self._context is None:
            context = self._make_verify()
            context.set_alpn_protocols(["http/1.1"])
            self._context = context
        return self._context

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
                body = await _read_all(response)
        finally:
            self._free.put_nowait(lane)
        # The body is read here, whole (a judge call always reads all of it), so the lane is
        # free again before the caller looks at the answer; httpx decodes it (Content-Encoding)
        # as for any response given its content.
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            content=body,
            extensions={k: v for k, v in response.extensions.items() if k != "network_stream"},
        )

    async def aclose(self) -> None:
        for lane in self._lanes:
            await lane.aclose()


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """httpx's default verifying context, built once (loading the CA bundle is slow)."""
    return httpx.create_ssl_context()


def _proxied(url: str) -> bool:
    """Whether httpx would send `url` through a proxy from the environment (HTTP(S)_PROXY,
    ALL_PROXY, less NO_PROXY): lanes connect directly, so such a client keeps httpx's pool."""
    proxies = urllib.request.getproxies_environment()
    if not any(proxies.get(scheme) for scheme in ("http", "https", "all")):
        return False
    host = httpx.URL(url).host
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # not in typeshed
    return not bypass(host, proxies)


def lane_client(url: str, timeout_s: float) -> httpx.AsyncClient:
    """An adapter's `httpx.AsyncClient` for requests to `url`, its transport `ADAPTER_LANES`
    lanes instead of httpcore's pool — whose rescan of every connection per request made the
    agent path spend more CPU in the pool than in the requests (benchmarks/agent_path.py).
    With a proxy configured in the environment for `url`: httpx's own pool, as before."""
    if _proxied(url):
        return httpx.AsyncClient(timeout=timeout_s)
    return httpx.AsyncClient(timeout=timeout_s, transport=LaneTransport(ADAPTER_LANES, tls_context))
