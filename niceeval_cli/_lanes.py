"""One httpx transport made of single-connection lanes, and the lean client that sends through
it: the HTTP of the judge (`judge.Endpoint`) and of the `openai-chat` / `http` adapters
(`lane_client`).

The judge client of an endpoint is bounded to `max_concurrency` calls. Behind it, instead of
one httpcore pool of `max_concurrency` connections, sit that many lanes of one connection each.
Same connections, same bound — but httpcore's pool rescans every connection for every request it
assigns (work that grows with the square of the pool size), which at 32 connections cost more
CPU than the grading itself.

A lane's connection is HTTP/1.1 driven by h11 (the parser httpcore drives for any httpx client)
over an `AsyncioStream` (`_wire.py`) instead of anyio's: a lane is only ever used by one request
at a time and reads each response whole, so neither a pool, nor anyio's locks and streams, nor
httpcore's per-request layers are needed between the request and the socket (httpcore's
connection cost about 40 % more CPU per request: benchmarks/README.md). A lane whose connection
was closed, expired (5 s idle, as httpx's default) or hung up by the server opens a new one for
its next request. Errors are httpx's (as httpx's own transport maps httpcore's).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import ssl
import time
import urllib.request
import zlib
from collections.abc import AsyncIterable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import h11

from ._httpx import httpcore, httpx
from ._redact import without_surrogates
from ._wire import AsyncioBackend, speaks_tls

try:  # httpx decodes zstd when it is installed (`httpx[zstd]`), and so does `read_bounded`
    import zstandard
except ImportError:  # pragma: no cover - then zstd is neither asked for nor decoded
    zstandard = None  # type: ignore[assignment]

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
    except Exception as exc:
        for core, mapped in _EXCEPTIONS:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


#: The largest response head h11 buffers (httpcore's own bound).
MAX_INCOMPLETE_EVENT_SIZE = 100 * 1024
#: The largest response body read (a model's, a judge's, an `http` system's answer). An endpoint
#: that streams without end would otherwise be read into memory until the machine runs out (each
#: read is quick, so no read timeout fires): past this the request fails, naming the bound.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
READ_BYTES = 64 * 1024
_DEFAULT_PORTS = {b"http": 80, b"https": 443}
#: A server that closed the connection before any byte of its answer (httpcore's words too).
HUNG_UP = "Server disconnected without sending a response."


def too_large(*, decoded: bool = False) -> str:
    """What a request whose response passed MAX_RESPONSE_BYTES fails with (`decoded`: once its
    Content-Encoding was undone — a decompression bomb)."""
    limit = f"{MAX_RESPONSE_BYTES // (1024 * 1024)} MiB"
    if decoded:
        return f"the response body is over {limit} once decoded (Content-Encoding): NiceEval stopped decoding it there"
    return (f"the response body is over {limit}: NiceEval stopped reading it there (an endpoint that never ends "
            "its answer?)")


class _Connection:
    """One HTTP/1.1 connection: h11 (the parser httpcore drives for httpx) over an
    `AsyncioStream`, used by one request at a time — what `httpcore.AsyncHTTP11Connection` does
    for a lane, without its per-request layers (request model conversion, trace hooks, state
    lock, response stream objects) that a request read whole in one go never needs."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_INCOMPLETE_EVENT_SIZE)
        self.expire_at = math.inf
        self.closed = False

    def reusable(self) -> bool:
        """Idle, not expired, and not hung up by the server (an idle connection with something
        to read has been closed from the other end)."""
        return (not self.closed and self.h11.our_state is h11.IDLE and time.monotonic() <= self.expire_at
                and not self.stream.get_extra_info("is_readable"))

    async def exchange(self, request: httpx.Request) -> httpx.Response:
        """Send `request` and read its whole response; the connection is closed unless both
        sides ended their message cleanly (then it is kept, for KEEPALIVE_EXPIRY_S)."""
        timeouts = request.extensions.get("timeout", {})
        try:
            try:
                await self._send(request, timeouts.get("write"))
            except httpcore.WriteError:
                # As httpcore does: a server may close the request early and still answer it.
                pass
            read = timeouts.get("read")
            event = await self._event(read)
            while not isinstance(event, h11.Response) and not (
                isinstance(event, h11.InformationalResponse) and event.status_code == 101
            ):
                event = await self._event(read)
            # The first piece as it came, later ones gathered in one buffer: a body sent in 1-byte
            # chunks held one object per byte (about 40 times the 32 MiB bound).
            first = b""
            rest: bytearray | None = None
            while True:
                part = await self._event(read)
                if isinstance(part, h11.Data):
                    if rest is None and not first:
                        first = bytes(part.data)
                        size = len(first)
                    else:
                        if rest is None:
                            rest = bytearray(first)
                        rest += part.data
                        size = len(rest)
                    if size > MAX_RESPONSE_BYTES:
                        raise httpcore.RemoteProtocolError(too_large())
                elif isinstance(part, h11.EndOfMessage) or part is h11.PAUSED:
                    break
        except BaseException:
            await self.aclose()
            raise
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
            self.expire_at = time.monotonic() + KEEPALIVE_EXPIRY_S
        else:
            await self.aclose()
        # The body is read here, whole (a judge call always reads all of it), so the lane is
        # free again before the caller looks at the answer.
        return _response(event, first if rest is None else bytes(rest))

    async def _send(self, request: httpx.Request, timeout: float | None) -> None:
        try:
            head = self.h11.send(h11.Request(method=request.method, target=request.url.raw_path,
                                             headers=request.headers.raw))
        except h11.LocalProtocolError as exc:
            raise httpcore.LocalProtocolError(str(exc)) from exc
        await self.stream.write(head or b"", timeout=timeout)
        stream = request.stream
        assert isinstance(stream, AsyncIterable)
        async for chunk in stream:
            await self.stream.write(self.h11.send(h11.Data(data=chunk)) or b"", timeout=timeout)
        await self.stream.write(self.h11.send(h11.EndOfMessage()) or b"", timeout=timeout)

    async def _event(self, timeout: float | None) -> Any:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpcore.RemoteProtocolError(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event
            data = await self.stream.read(READ_BYTES, timeout=timeout)
            if data == b"" and self.h11.their_state is h11.SEND_RESPONSE:
                raise httpcore.RemoteProtocolError(HUNG_UP)
            self.h11.receive_data(data)

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            await self.stream.aclose()


def _response(event: h11.Response | h11.InformationalResponse, body: bytes) -> httpx.Response:
    """The response as httpx's own transport hands it to its client (the headers as sent, the
    body a stream `read_bounded` reads, decoding any Content-Encoding). Without a Content-Encoding
    the read body is the body as received, so it is set as read already: building the
    response through httpx's decoding machinery was a noticeable share of a lane's request
    (benchmarks/README.md)."""
    encoded = any(name == b"content-encoding" for name, _ in event.headers)  # h11's names: lower case
    response = httpx.Response(
        status_code=event.status_code,
        headers=event.headers.raw_items(),
        stream=httpx.ByteStream(body),
        extensions={"http_version": b"HTTP/" + event.http_version, "reason_phrase": event.reason},
    )
    if not encoded:
        response._content = body
    return response


#: The Content-Encodings a body is decoded from, each bounded as it inflates (`_inflate`): also
#: what every request accepts. Another one is left as sent, as httpx leaves one it cannot decode.
DECODED = ("gzip", "deflate", *(("zstd",) if zstandard is not None else ()))
#: The largest zstd window a body may ask for (RFC 9659's bound for HTTP): the decoder sets it aside.
ZSTD_WINDOW_BYTES = 8 * 1024 * 1024
_DECODE_ERRORS: tuple[type[Exception], ...] = (zlib.error, *((zstandard.ZstdError,) if zstandard is not None else ()))


def _inflate(data: bytes, encoding: str) -> bytes:
    """`data` with one Content-Encoding undone — at most one byte past MAX_RESPONSE_BYTES of it;
    a body that is not what its encoding says fails as a RemoteProtocolError (a TransportError,
    which every caller handles; httpx's DecodingError is none, and the judge crashed on it).

    httpx's decoders inflate whatever they are given at once, and a few KB can stand for
    gigabytes (64 KB of zstd for 2 GiB, gzip inside gzip for more): the decoders here stop at
    the bound instead of measuring afterwards."""
    limit = MAX_RESPONSE_BYTES + 1
    try:
        if encoding == "zstd":
            reader = zstandard.ZstdDecompressor(max_window_size=ZSTD_WINDOW_BYTES).stream_reader(
                data, read_across_frames=True)
            out = bytearray()
            while len(out) < limit:
                piece = reader.read(min(limit - len(out), 1024 * 1024))
                if not piece:
                    break
                out += piece
            return bytes(out)
        if encoding == "deflate":  # zlib-wrapped as the RFC says, else raw deflate (as httpx reads it)
            try:
                return zlib.decompressobj().decompress(data, limit)
            except zlib.error:
                return zlib.decompressobj(-zlib.MAX_WBITS).decompress(data, limit)
        return zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(data, limit)
    except _DECODE_ERRORS as exc:  # the server's fault, as a malformed head is: a protocol error
        raise httpx.RemoteProtocolError(f"the response body is not valid {encoding} (its Content-Encoding): {exc}") \
            from exc


async def read_bounded(response: httpx.Response) -> None:
    """`response.aread()`, but the body ends with an error past MAX_RESPONSE_BYTES, as received
    and once decoded (what a decompression bomb would make of it); a body read already is left
    as it is. The lanes' bodies are bounded as they arrive too (`_Connection.exchange`); httpx's
    own client's arrive here in network-sized pieces."""
    if hasattr(response, "_content"):
        return
    chunks, size = [], 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise httpx.RemoteProtocolError(too_large())
        chunks.append(chunk)
    body = b"".join(chunks)
    encodings = [value.strip().lower() for value in response.headers.get_list("content-encoding", split_commas=True)]
    for encoding in reversed(encodings):  # the last one applied is undone first
        if encoding in DECODED:
            body = _inflate(body, encoding)
            if len(body) > MAX_RESPONSE_BYTES:
                raise httpx.RemoteProtocolError(too_large(decoded=True))
    response._content = body


class _Lane:
    """One connection at most, used by one request at a time."""

    def __init__(self, backend: httpcore.AsyncNetworkBackend, verify: Callable[[], ssl.SSLContext]) -> None:
        self._backend = backend
        self._verify = verify
        self._connection: _Connection | None = None

    async def send(self, request: httpx.Request) -> httpx.Response:
        connection = self._connection
        if connection is not None and not connection.reusable():
            await connection.aclose()
            connection = self._connection = None
        if connection is None:
            connection = self._connection = await self._connect(request)
        return await connection.exchange(request)

    async def _connect(self, request: httpx.Request) -> _Connection:
        url = request.url
        scheme = url.raw_scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpcore.UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme.decode()}://'.")
        timeout = request.extensions.get("timeout", {}).get("connect")
        host = url.raw_host.decode("ascii")
        stream = await self._backend.connect_tcp(host, url.port or _DEFAULT_PORTS[scheme], timeout=timeout)
        if scheme == b"https":
            stream = await stream.start_tls(self._verify(), server_hostname=host, timeout=timeout)
        return _Connection(stream)

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()


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
        try:
            with _httpx_errors():
                return await lane.send(request)
        finally:
            self._free.put_nowait(lane)

    async def aclose(self) -> None:
        for lane in self._lanes:
            await lane.aclose()


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """httpx's default verifying context, built once (loading the CA bundle is slow)."""
    return httpx.create_ssl_context()


@functools.lru_cache(maxsize=1)
def client_headers() -> tuple[tuple[bytes, bytes], ...]:
    """What every `httpx.AsyncClient` sends unless told otherwise (Accept, Connection,
    User-Agent), read from httpx itself once — but Accept-Encoding names only the encodings
    `read_bounded` decodes (httpx's would name brotli too when it is installed)."""
    accept = ", ".join(DECODED).encode("ascii")
    defaults = httpx.AsyncClient(trust_env=False, transport=httpx.AsyncBaseTransport()).headers.raw
    return tuple((name, accept if name.lower() == b"accept-encoding" else value) for name, value in defaults)


def accepted() -> dict[str, str]:
    """The Accept-Encoding header of every request (`client_headers`), for httpx's own client."""
    return {"Accept-Encoding": ", ".join(DECODED)}


def timeouts(seconds: float) -> dict[str, float]:
    """A request's `timeout` extension: `seconds` for each phase, as `httpx.Timeout(seconds)`."""
    return {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}


class _Lines:
    """A request's header lines for one (URL, headers) pair, merged as an `httpx.AsyncClient`
    merges them (its defaults, then the request's, case-insensitively), built once."""

    __slots__ = ("content_length", "content_type", "host", "merged", "raw")

    def __init__(self, url: httpx.URL, headers: Mapping[str, str]) -> None:
        merged = httpx.Headers(list(client_headers()))
        merged.update(headers)
        self.merged = merged
        # httpx puts Host first (unless given), and a JSON body's Content-Length and
        # Content-Type after the rest (unless given).
        self.host = "host" not in merged
        self.raw = ([(b"Host", url.netloc)] if self.host else []) + merged.raw
        self.content_length = "content-length" not in merged
        self.content_type = "content-type" not in merged


#: Header sets a client keeps built (a request whose headers change every time, a `traceparent`
#: say, is built each time; the set is emptied past this).
_MAX_LINES = 64


class LaneClient:
    """Sends a request straight to its transport, as `httpx.AsyncClient.send` would send it,
    without the client's per-request work that none of these requests use (auth flows,
    redirect handling, event hooks, URL, parameter and cookie merging) — about a third of the
    client's CPU per request on the agent path (benchmarks/agent_path.py): the header lines of
    a (URL, headers) pair are merged once, and the JSON body leaves as httpx would encode it.

    Kept as httpx's client does, when asked (`cookies`): cookies a server sets are sent back.
    `client`: httpx's own client instead, for what the lean path does not do (a proxy from the
    environment, credentials in the URL) — every request then goes through it unchanged, and
    `transport` is closed with it.
    """

    def __init__(self, transport: httpx.AsyncBaseTransport, timeout_s: float, *, cookies: bool = True,
                 client: httpx.AsyncClient | None = None) -> None:
        self.transport = transport
        self._client = client
        self._timeouts = timeouts(timeout_s)
        self._cookies = httpx.Cookies() if cookies else None
        self._urls: dict[str, httpx.URL] = {}
        self._lines: dict[tuple[str, tuple[tuple[str, str], ...]], _Lines] = {}

    def _url(self, url: str) -> httpx.URL:
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = self._urls[url] = httpx.URL(url)
        return parsed

    def _lines_for(self, url: str, headers: Mapping[str, str]) -> _Lines:
        key = (url, tuple(headers.items()))
        lines = self._lines.get(key)
        if lines is None:
            if len(self._lines) >= _MAX_LINES:
                self._lines.clear()
            lines = self._lines[key] = _Lines(self._url(url), headers)
        return lines

    async def post_json(self, url: str, body: Any, headers: Mapping[str, str],
                        timeout_s: float | None = None) -> httpx.Response:
        """POST `body` as JSON (encoded as httpx encodes `json=`) with `headers` over the client's
        own; the whole response read. `timeout_s`: this request's, else the client's."""
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        try:
            content = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (text decoded with surrogateescape) cannot be sent:
            text = without_surrogates(text)  # it goes as U+FFFD, as the store keeps it
            content, body = text.encode("utf-8"), json.loads(text)
        if self._client is not None:
            timeout = httpx.USE_CLIENT_DEFAULT if timeout_s is None else timeout_s
            return await self._through_client(
                self._client.build_request("POST", url, json=body, headers=dict(headers), timeout=timeout))
        lines = self._lines_for(url, headers)
        extensions = {"timeout": self._timeouts if timeout_s is None else timeouts(timeout_s)}
        if self._cookies:  # a server set some: httpx's own request building adds them
            request = httpx.Request("POST", self._url(url), json=body, headers=lines.merged,
                                    cookies=self._cookies, extensions=extensions)
        else:
            raw = list(lines.raw)
            if lines.content_length:
                raw.append((b"Content-Length", str(len(content)).encode("ascii")))
            if lines.content_type:
                raw.append((b"Content-Type", b"application/json"))
            request = httpx.Request("POST", self._url(url), stream=httpx.ByteStream(content),
                                    headers=httpx.Headers(raw), extensions=extensions)
        return await self.send(request)

    async def request(self, method: str, url: str, headers: Mapping[str, str],
                      timeout_s: float | None = None) -> httpx.Response:
        """A request without a body (a preflight's GET or OPTIONS), as httpx's client sends it.
        `timeout_s`: this request's, else the client's."""
        if self._client is not None:
            timeout = httpx.USE_CLIENT_DEFAULT if timeout_s is None else timeout_s
            return await self._through_client(
                self._client.build_request(method, url, headers=dict(headers), timeout=timeout))
        request = httpx.Request(method, self._url(url), headers=self._lines_for(url, headers).merged,
                                cookies=self._cookies or None,
                                extensions={"timeout": self._timeouts if timeout_s is None else timeouts(timeout_s)})
        return await self.send(request)

    async def send(self, request: httpx.Request) -> httpx.Response:
        """Hand `request` to the transport; the response comes back read and closed."""
        try:
            response = await self.transport.handle_async_request(request)
        except httpx.RequestError as exc:  # as httpx's client does: the error knows its request
            exc.request = request
            raise
        response.request = request
        try:
            await read_bounded(response)
        except httpx.RequestError as exc:
            exc.request = request
            raise
        finally:
            await response.aclose()
        if self._cookies is not None and "set-cookie" in response.headers:
            self._cookies.extract_cookies(response)
        return response

    async def _through_client(self, request: httpx.Request) -> httpx.Response:
        """`request` sent by httpx's own client; the body read whole, up to MAX_RESPONSE_BYTES."""
        assert self._client is not None
        response = await self._client.send(request, stream=True)
        try:
            await read_bounded(response)
        except httpx.RequestError as exc:  # the cap's error knows its request, as the client's do
            exc.request = request
            raise
        finally:
            await response.aclose()
        return response

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        await self.transport.aclose()

    async def __aenter__(self) -> LaneClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _proxied(url: str) -> bool:
    """Whether httpx would send `url` through a proxy from the environment (HTTP(S)_PROXY,
    ALL_PROXY, less NO_PROXY): lanes connect directly, so such a client keeps httpx's pool."""
    proxies = urllib.request.getproxies_environment()
    if not any(proxies.get(scheme) for scheme in ("http", "https", "all")):
        return False
    host = httpx.URL(url).host
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # not in typeshed
    return not bypass(host, proxies)


async def plain_http_at_tls(url: str, key: str, timeout_s: float, got: Exception | int) -> str | None:
    """Why every request to `url` fails, when it is `http://` but its port speaks TLS (a TLS
    handshake there completes). Such a server hangs up on a plain request (`got` is the failure:
    closed before answering, or reset), which an attempt can only report as "Server
    disconnected", or answers it 400 (`got` is that status: nginx's "The plain HTTP request was
    sent to HTTPS port", Go's "Client sent an HTTP request to an HTTPS server"), which each
    attempt would report as its own error. Asked by a preflight whose request got either; `key`
    names the setting that holds the URL. None otherwise — any other failure or answer (the port
    is then never probed), and always through a proxy (the port is the proxy's)."""
    if isinstance(got, int):
        seen = "it answered a plain HTTP request with 400" if got == 400 else None
    elif isinstance(got, httpx.ReadError) or str(got) == HUNG_UP:
        seen = "it hung up on a plain HTTP request"
    else:
        seen = None
    parsed = httpx.URL(url)
    if seen is None or parsed.scheme != "http" or not parsed.host or _proxied(url):
        return None
    port = parsed.port or 80
    if not await speaks_tls(parsed.host, port, timeout_s):
        return None
    return f"{key} is {url}, but port {port} speaks TLS ({seen}); use https://"


def lane_client(url: str, timeout_s: float, *, size: int = ADAPTER_LANES, cookies: bool = True) -> LaneClient:
    """A client for requests to `url` (an adapter's, or with `size` lanes a judge endpoint's):
    lanes and the lean request path instead of httpx's pool and client — whose rescan of every
    connection per request, and per-request merging, made the agent path spend more CPU in the
    client than in the requests (benchmarks/agent_path.py). With a proxy configured in the
    environment for `url`, or credentials in it: httpx's own client and pool, which honour them."""
    lanes = LaneTransport(size, tls_context)
    if _proxied(url):
        return LaneClient(lanes, timeout_s, cookies=cookies,
                          client=httpx.AsyncClient(timeout=timeout_s, headers=accepted()))
    parsed = httpx.URL(url)
    if parsed.username or parsed.password:  # httpx's client turns them into basic auth
        return LaneClient(lanes, timeout_s, cookies=cookies,
                          client=httpx.AsyncClient(timeout=timeout_s, transport=lanes, headers=accepted()))
    return LaneClient(lanes, timeout_s, cookies=cookies)
