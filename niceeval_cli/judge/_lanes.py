"""One httpx transport made of single-connection lanes.

The judge client of an endpoint is one `httpx.AsyncClient` bounded to `max_concurrency` calls.
Behind it, instead of one httpcore pool of `max_concurrency` connections, sit that many
transports of one connection each. Same connections, same bound — but httpcore's pool rescans
every connection for every request it assigns (work that grows with the square of the pool
size), which at 32 connections cost more CPU than the grading itself.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator

from .._httpx import httpx


class _Releasing(httpx.AsyncByteStream):
    """A response body that hands its lane back once the client has closed it."""

    def __init__(self, inner: httpx.AsyncByteStream, release: asyncio.Queue[httpx.AsyncHTTPTransport],
                 lane: httpx.AsyncHTTPTransport) -> None:
        self._inner, self._release, self._lane = inner, release, lane
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            if not self._done:
                self._done = True
                self._release.put_nowait(self._lane)


class LaneTransport(httpx.AsyncBaseTransport):
    """`size` single-connection transports; a request takes a free lane (FIFO when none is)."""

    def __init__(self, size: int, verify: ssl.SSLContext) -> None:
        self._size = size
        self._verify = verify
        self._lanes: list[httpx.AsyncHTTPTransport] = []
        self._free: asyncio.Queue[httpx.AsyncHTTPTransport] = asyncio.Queue()

    def _new_lane(self) -> httpx.AsyncHTTPTransport:
        lane = httpx.AsyncHTTPTransport(
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1), verify=self._verify
        )
        self._lanes.append(lane)
        return lane

    def open_all(self) -> None:
        """Create every lane now (no connection yet), e.g. while a preflight request waits."""
        while len(self._lanes) < self._size:
            self._free.put_nowait(self._new_lane())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._free.empty() and len(self._lanes) < self._size:
            lane = self._new_lane()
        else:
            lane = await self._free.get()
        try:
            response = await lane.handle_async_request(request)
        except BaseException:
            self._free.put_nowait(lane)
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Releasing(response.stream, self._free, lane),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        for lane in self._lanes:
            await lane.aclose()
