"""HTTP to an OpenAI-compatible judge endpoint: pooled clients, bounded concurrency, retries.

One `Endpoint` (an httpx.AsyncClient plus a semaphore) per (base_url, max_concurrency) serves
the whole run. A grading call holds one semaphore slot from its first request to its last retry,
and its time budget (`timeout_ms`) starts when it gets that slot, so waiting behind other
calls of the run never turns into a judge timeout.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import random
import ssl
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .._httpx import httpx
from .._states import UnavailableReason
from ._lanes import LaneTransport
from ._parse import MAX_BODY_DEPTH  # deeper bodies are kept as text: no grade is that deep

_DETAIL_CHARS = 300
_USER_AGENT = f"python-httpx/{httpx.__version__}"
T = TypeVar("T")


class Endpoint:
    """The shared transport of one judge endpoint and the bound on its in-flight calls.

    Requests are httpx `Request`s handed straight to the transport (`send`): an `AsyncClient`
    would only add work a judge call does not use (cookies, auth flows, redirects, event hooks,
    per-request header and URL merging) — about a fifth of the client's CPU per request.
    """

    def __init__(self, base_url: str, max_concurrency: int, transport: httpx.AsyncBaseTransport | None) -> None:
        self.base_url = base_url
        self._lanes = LaneTransport(max_concurrency, _tls_context) if transport is None else None
        self.transport: httpx.AsyncBaseTransport = transport or self._lanes  # type: ignore[assignment]
        self.slots = asyncio.Semaphore(max_concurrency)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._url = httpx.URL(self.url)
        # By key: the raw header lines httpx would send (Host first, as its `Request` puts it),
        # built once; a request adds its Content-Length. Giving httpx the body as a stream with
        # its headers complete skips re-encoding and re-validating them per request (20 µs → 5).
        self._headers: dict[str, list[tuple[bytes, bytes]]] = {}

    async def send(self, body: Mapping[str, Any], key: str, timeout_s: float) -> httpx.Response:
        """POST `body` as JSON (encoded as httpx encodes `json=`) and read the whole response."""
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        raw = self._headers.get(key)
        if raw is None:
            raw = self._headers[key] = [(b"Host", self._url.netloc), *httpx.Headers(headers_for(key)).raw]
        request = httpx.Request(
            "POST", self._url, stream=httpx.ByteStream(content),
            headers=httpx.Headers([*raw, (b"Content-Length", str(len(content)).encode("ascii"))]),
            extensions={"timeout": {"connect": timeout_s, "read": timeout_s, "write": timeout_s, "pool": timeout_s}},
        )
        response = await self.transport.handle_async_request(request)
        response.request = request
        try:
            await response.aread()
        finally:
            await response.aclose()
        return response

    def open_lanes(self) -> None:
        """Create the connections' transports now — while the preflight waits for its answer,
        so the first grading wave does not pay for them."""
        if self._lanes is not None:
            self._lanes.open_all()

    async def aclose(self) -> None:
        await self.transport.aclose()


def open_endpoint(
    base_url: str, max_concurrency: int, transport: httpx.AsyncBaseTransport | None,
) -> Endpoint:
    return Endpoint(base_url, max_concurrency, transport)


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """httpx's default verifying context, built once (loading the CA bundle is slow)."""
    return httpx.create_ssl_context()


@dataclass(frozen=True)
class CallOutcome:
    """How a grading call ended: a 2xx response, or why no usable response came back."""

    requests: int
    status: int | None = None
    body: Any = None  # the parsed JSON body, else the raw text (2xx or the last failure)
    failure: UnavailableReason | None = None
    detail: str = ""


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter: base·2^n seconds, capped, times a factor in [0.5, 1]."""

    base_s: float = 0.2
    cap_s: float = 8.0
    rng: Callable[[], float] = random.random

    def delay(self, retry: int) -> float:
        return min(self.cap_s, self.base_s * 2**retry) * (0.5 + 0.5 * self.rng())


def headers_for(key: str) -> dict[str, str]:
    """The headers of a judge request (httpx's client defaults, the key, JSON)."""
    return {
        "Accept": "*/*",
        "Accept-Encoding": "gzip, deflate",
        "Connection": "keep-alive",
        "User-Agent": _USER_AGENT,
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
    }




def body_of(response: httpx.Response) -> Any:
    """The parsed JSON body; its text when it is not JSON or is nested past MAX_BODY_DEPTH."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return response.text
    return response.text if _deeper_than(body, MAX_BODY_DEPTH) else body


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests more than `limit` containers (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def status_text(response: httpx.Response) -> str:
    """`429 Too Many Requests: <the server's message>`."""
    phrase = response.reason_phrase or httpx.codes.get_reason_phrase(response.status_code)
    head = f"{response.status_code} {phrase}".strip()
    detail = error_message(body_of(response))
    return f"{head}: {detail}" if detail else head


def error_message(body: Any) -> str:
    """The human part of an error body (`{"error": {"message": ...}}` and friends), shortened."""
    message: Any = body
    if isinstance(body, Mapping):
        error = body.get("error", body.get("detail", body.get("message")))
        if isinstance(error, Mapping):
            error = error.get("message", error)
        message = error if error is not None else body
    text = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"


def retry_after_s(response: httpx.Response) -> float | None:
    """`Retry-After` (seconds or an HTTP date) as seconds from now, or None."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def call(
    endpoint: Endpoint,
    body: Mapping[str, Any],
    key: str,
    *,
    timeout_s: float,
    max_retries: int,
    backoff: Backoff,
) -> CallOutcome:
    """POST `body`, retrying 429 / 5xx / connection errors up to `max_retries` times, all
    within `timeout_s`. A call that runs out of time is `judge-timeout`; one that runs out of
    retries keeps its last failure (`judge-rate-limited` or `judge-transport-error`)."""
    loop = asyncio.get_running_loop()
    async with endpoint.slots:
        deadline = loop.time() + timeout_s
        requests = 0
        while True:
            remaining = deadline - loop.time()
            requests += 1
            retry_wait: float | None = None
            try:
                response = await _within(endpoint.send(body, key, remaining), remaining)
            except (asyncio.TimeoutError, httpx.TimeoutException):
                return CallOutcome(requests, failure=UnavailableReason.JUDGE_TIMEOUT,
                                   detail=_timed_out(timeout_s, requests, "no complete response"))
            except httpx.TransportError as exc:
                last = CallOutcome(requests, failure=UnavailableReason.JUDGE_TRANSPORT_ERROR,
                                   detail=f"{type(exc).__name__}: {exc}".rstrip(": "))
            else:
                status = response.status_code
                if status < 300:
                    return CallOutcome(requests, status, body_of(response))
                if status == 429:
                    reason = UnavailableReason.JUDGE_RATE_LIMITED
                    retry_wait = retry_after_s(response)
                else:
                    reason = UnavailableReason.JUDGE_TRANSPORT_ERROR
                detail = f"HTTP {status_text(response)}"
                last = CallOutcome(requests, status, body_of(response), reason, detail)
                if status != 429 and status < 500:  # a client error: repeating it cannot help
                    return last
            if requests > max_retries:
                return _with_detail(last, f"{last.detail} (after {requests} request(s))")
            wait = retry_wait if retry_wait is not None else backoff.delay(requests - 1)
            remaining = deadline - loop.time()
            if wait >= remaining:
                why = f"the next retry (in {wait:.1f}s) would not fit"
                return CallOutcome(requests, last.status, last.body, UnavailableReason.JUDGE_TIMEOUT,
                                   f"{_timed_out(timeout_s, requests, why)}; last failure: {last.detail}")
            await asyncio.sleep(wait)


if sys.version_info >= (3, 11):

    async def _within(awaitable: Awaitable[T], seconds: float) -> T:
        """`awaitable` bounded by `seconds` (asyncio.TimeoutError past it), without the extra task
        `asyncio.wait_for` creates per call on the hot path of every judge request."""
        async with asyncio.timeout(seconds):
            return await awaitable

else:  # pragma: no cover - Python 3.10

    async def _within(awaitable: Awaitable[T], seconds: float) -> T:
        return await asyncio.wait_for(awaitable, seconds)


def _timed_out(timeout_s: float, requests: int, what: str) -> str:
    return f"{what} within timeout_ms={round(timeout_s * 1000)} ({requests} request(s) made)"


def _with_detail(outcome: CallOutcome, detail: str) -> CallOutcome:
    return CallOutcome(outcome.requests, outcome.status, outcome.body, outcome.failure, detail)


async def probe(endpoint: Endpoint, model: str, key: str, timeout_s: float) -> str | None:
    """A minimal chat completion (max_tokens 1): the cause when the endpoint refuses this
    setting (cannot connect, 401/403, 404 / unknown model), else None. Transient answers
    (429, 5xx, timeouts) and other 4xx are left to the grading calls to classify."""
    body = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    try:
        async with endpoint.slots:
            response = await _within(endpoint.send(body, key, timeout_s), timeout_s)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        return None
    except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        return f"cannot connect to {endpoint.url}: {exc}"
    except httpx.TransportError:
        return None
    status = response.status_code
    if status in (401, 403, 404) or (status == 400 and _unknown_model(body_of(response))):
        return status_text(response)
    return None


def _unknown_model(body: Any) -> bool:
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        if body["error"].get("code") in ("model_not_found", "invalid_model"):
            return True
    text = error_message(body).lower()
    return "model" in text and any(s in text for s in ("not found", "does not exist", "unknown", "not exist"))
