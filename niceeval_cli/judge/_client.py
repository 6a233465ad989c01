"""HTTP to an OpenAI-compatible judge endpoint: pooled clients, bounded concurrency, retries.

One `Endpoint` (an httpx.AsyncClient plus a semaphore) per (base_url, max_concurrency) serves
the whole run. A grading call holds one semaphore slot from its first request to its last retry,
and its time budget (`timeout_ms`) starts when it gets that slot, so waiting behind other
calls of the run never turns into a judge timeout.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .._gateway import (
    Backoff,
    error_text,
    json_or_text,
    listed_models,
    model_missing_text,
    redirect_text,
    reported_cost,
    unknown_model,
)
from .._gateway import retry_after_s as gateway_retry_after_s
from .._httpx import httpx
from .._lanes import LaneClient, LaneTransport, lane_client, plain_http_at_tls
from .._states import UnavailableReason
from ._parse import MAX_BODY_DEPTH  # deeper bodies are kept as text: no grade is that deep

_DETAIL_CHARS = 300
#: The client's own timeout; never used, every judge request gives its remaining budget.
DEFAULT_TIMEOUT_S = 60.0
_USER_AGENT = f"python-httpx/{httpx.__version__}"
T = TypeVar("T")
#: Extra request headers, values already resolved (hashable: it keys the prebuilt header lines).
Extra = tuple[tuple[str, str], ...]


class Endpoint:
    """The shared transport of one judge endpoint and the bound on its in-flight calls.

    Requests go through the lean `LaneClient` (`.._lanes`), the adapters' too: an
    `AsyncClient` would only add work a judge call does not use (cookies, auth flows,
    redirects, event hooks, per-request header and URL merging) — about a fifth of the
    client's CPU per request. A judge keeps no cookies, as before (behind a proxy from the
    environment, httpx's own client sends its requests, and keeps any a server sets).
    """

    def __init__(self, base_url: str, max_concurrency: int, transport: httpx.AsyncBaseTransport | None) -> None:
        self.base_url = base_url
        self.url = base_url.rstrip("/") + "/chat/completions"
        # A proxy from the environment (or credentials in the URL) is honoured as the adapters
        # honour it: `lane_client` sends through httpx's own client then.
        self.client = (lane_client(self.url, DEFAULT_TIMEOUT_S, size=max_concurrency, cookies=False)
                       if transport is None else LaneClient(transport, DEFAULT_TIMEOUT_S, cookies=False))
        self.transport: httpx.AsyncBaseTransport = self.client.transport
        self._lanes = self.transport if isinstance(self.transport, LaneTransport) else None
        self.slots = asyncio.Semaphore(max_concurrency)
        self.models_url = base_url.rstrip("/") + "/models"
        # By key: the headers of a judge request, made once (the client merges each set once).
        self._headers: dict[tuple[str, Extra], dict[str, str]] = {}

    async def send(self, body: Mapping[str, Any], key: str, timeout_s: float, extra: Extra = ()) -> httpx.Response:
        """POST `body` as JSON (encoded as httpx encodes `json=`) and read the whole response."""
        cache_key = (key, extra)
        headers = self._headers.get(cache_key)
        if headers is None:
            headers = self._headers[cache_key] = headers_for(key, extra)
        return await self.client.post_json(self.url, body, headers, timeout_s)

    async def get_models(self, key: str, timeout_s: float, extra: Extra = ()) -> httpx.Response:
        """GET `{base_url}/models` with the judge's headers (through the same lanes)."""
        headers = {k: v for k, v in headers_for(key, extra).items() if k != "Content-Type"}
        return await self.client.request("GET", self.models_url, headers, timeout_s)

    def open_lanes(self) -> None:
        """Create the connections' transports now — while the preflight waits for its answer,
        so the first grading wave does not pay for them."""
        if self._lanes is not None:
            self._lanes.open_all()

    async def aclose(self) -> None:
        await self.client.aclose()


def open_endpoint(
    base_url: str, max_concurrency: int, transport: httpx.AsyncBaseTransport | None,
) -> Endpoint:
    return Endpoint(base_url, max_concurrency, transport)


@dataclass(frozen=True)
class CallOutcome:
    """How a grading call ended: a 2xx response, or why no usable response came back."""

    requests: int
    status: int | None = None
    body: Any = None  # the parsed JSON body, else the raw text (2xx or the last failure)
    failure: UnavailableReason | None = None
    detail: str = ""
    cost_usd: float | None = None  # what the endpoint reported the answered call cost (body or header)


def headers_for(key: str, extra: Extra = ()) -> dict[str, str]:
    """The headers of a judge request (httpx's client defaults, the key, JSON), then the
    configured extra headers (`[judge] headers`, their `env:` values already read)."""
    headers = {
        "Accept": "*/*",
        "Accept-Encoding": "gzip, deflate",
        "Connection": "keep-alive",
        "User-Agent": _USER_AGENT,
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
    }
    lowered = {name.lower(): name for name in headers}
    for name, value in extra:
        headers.pop(lowered.get(name.lower(), name), None)
        headers[name] = value
    return headers




def body_of(response: httpx.Response) -> Any:
    """The parsed JSON body; its text when it is not JSON or is nested past MAX_BODY_DEPTH."""
    body = json_or_text(response)
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
    head += redirect_text(response)
    detail = error_message(body_of(response))
    return f"{head}: {detail}" if detail else head


def error_message(body: Any) -> str:
    """The human part of an error body (`{"error": {"message": ...}}` and friends), shortened."""
    text = " ".join(error_text(body).split())
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"


def retry_after_s(response: httpx.Response) -> float | None:
    """`Retry-After` (seconds or an HTTP date) as seconds from now, or None."""
    return gateway_retry_after_s(response.headers)


async def call(
    endpoint: Endpoint,
    body: Mapping[str, Any],
    key: str,
    *,
    timeout_s: float,
    max_retries: int,
    backoff: Backoff,
    extra: Extra = (),
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
                response = await _within(endpoint.send(body, key, remaining, extra), remaining)
            except (asyncio.TimeoutError, httpx.TimeoutException):
                return CallOutcome(requests, failure=UnavailableReason.JUDGE_TIMEOUT,
                                   detail=_timed_out(timeout_s, requests, "no complete response"))
            except httpx.TransportError as exc:
                last = CallOutcome(requests, failure=UnavailableReason.JUDGE_TRANSPORT_ERROR,
                                   detail=f"{type(exc).__name__}: {exc}".rstrip(": "))
            else:
                status = response.status_code
                if status < 300:
                    answer = body_of(response)
                    return CallOutcome(requests, status, answer, cost_usd=reported_cost(response.headers, answer))
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


async def probe(endpoint: Endpoint, model: str, key: str, timeout_s: float, extra: Extra = ()) -> str | None:
    """The cause when the endpoint refuses this setting, else None: cannot connect, 401/403,
    a model its `/models` does not list (when it lists any), and a minimal chat completion
    (max_tokens 1) answered 404 or `400` "unknown model". Transient answers (429, 5xx, timeouts)
    and other 4xx are left to the grading calls to classify. An http:// base_url whose port
    speaks TLS (it hangs up on both requests, or answers them 400) is a cause too."""
    try:
        async with endpoint.slots:
            listing = await _within(endpoint.get_models(key, timeout_s, extra), timeout_s)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        listing = None
    except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        return f"cannot connect to {endpoint.url}: {exc}"
    except httpx.TransportError:
        listing = None
    if listing is not None:
        listed = listed_models(body_of(listing)) if listing.status_code < 300 else None
        if listed is not None and model not in listed:
            return f"the judge {model_missing_text(model, endpoint.models_url, listed)}"
    body = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    try:
        async with endpoint.slots:
            response = await _within(endpoint.send(body, key, timeout_s, extra), timeout_s)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        return None
    except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        return f"cannot connect to {endpoint.url}: {exc}"
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:  # hung up on: maybe a TLS port
        return await plain_http_at_tls(endpoint.base_url, "the judge's base_url", timeout_s, exc)
    except httpx.TransportError:
        return None
    status = response.status_code
    answer = body_of(response)
    if status == 400 and unknown_model(answer):
        return f"{status_text(response)} (the judge model {model!r} is unknown to this endpoint)"
    if status == 400:  # a TLS port's server may answer plain HTTP so
        return await plain_http_at_tls(endpoint.base_url, "the judge's base_url", timeout_s, status)
    if status in (401, 403, 404) or redirect_text(response):  # a redirect answers every call so
        return status_text(response)
    return None
