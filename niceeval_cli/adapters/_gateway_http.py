"""The HTTP of the `openai-chat` and `http` adapters: retries of the system under test's `429` /
`5xx`, and the `openai-chat` preflight that checks the model (`/models`, else a tiny request).

The policy is the judge's (`.._gateway`: `Retry-After`, backoff with jitter), and so is the
client: each adapter's `LaneClient` (`.._lanes.lane_client`), the judge's lanes and lean request
path. Every retry is said in the attempt's notes, so a run that passed only after a gateway's
rate limit shows it (`view @ATTEMPT`).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, TypeVar

from .._gateway import (
    MAX_RETRY_AFTER_S,
    Backoff,
    error_text,
    json_or_text,
    listed_models,
    model_missing_text,
    redirect_text,
    retry_after_s,
    unknown_model,
)
from .._httpx import httpx
from .._lanes import LaneClient, lane_client, plain_http_at_tls
from .._redact import redact
from ..authoring import AdapterContext
from ._preflight import REFUSING_STATUS

#: The adapters' backoff between retries when the server gives no `Retry-After`.
ADAPTER_BACKOFF = Backoff(base_s=0.5, cap_s=8.0)
DEFAULT_RETRIES = 2
T = TypeVar("T")


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


if sys.version_info >= (3, 11):

    async def _within(awaitable: Awaitable[T], seconds: float) -> T:
        """`awaitable` bounded by `seconds` (asyncio.TimeoutError past it), without the task
        `asyncio.wait_for` makes per call on every request of an attempt."""
        async with asyncio.timeout(seconds):
            return await awaitable

else:  # pragma: no cover - Python 3.10

    async def _within(awaitable: Awaitable[T], seconds: float) -> T:
        return await asyncio.wait_for(awaitable, seconds)


async def post_with_retries(
    client: LaneClient, url: str, body: Any, headers: Mapping[str, str], *,
    ctx: AdapterContext | None, retries: int, timeout_ms: int, backoff: Backoff = ADAPTER_BACKOFF,
) -> httpx.Response:
    """POST `body`; a `429` or `5xx` answer is retried up to `retries` times after the server's
    `Retry-After` (capped at MAX_RETRY_AFTER_S) or a backoff, never past the attempt's deadline.
    Returns the last response (the caller reports a non-2xx one); transport errors raise
    TimeoutError / httpx.HTTPError as without retries."""
    made = 0
    while True:
        try:  # bounded whole: a server that trickles its answer never lets a read time out
            response = await _within(client.post_json(url, body, headers), timeout_ms / 1000)
        except (httpx.TimeoutException, asyncio.TimeoutError):
            raise TimeoutError(f"POST {url} got no reply within timeout_ms={timeout_ms}") from None
        made += 1
        status = response.status_code
        if not _retryable(status) or made > retries:
            if made > 1 and ctx is not None and not response.is_success:
                ctx.note(f"POST {url}: still HTTP {status} after {made - 1} retr{'y' if made == 2 else 'ies'} "
                         f"(retries = {retries})")
            return response
        asked = retry_after_s(response.headers)
        wait = min(asked, MAX_RETRY_AFTER_S) if asked is not None else backoff.delay(made - 1)
        left = ctx.deadline - time.monotonic() if ctx is not None and ctx.deadline is not None else None
        if (asked is not None and asked > MAX_RETRY_AFTER_S) or (left is not None and wait >= left):
            why = (f"Retry-After {asked:.0f} s is over the {MAX_RETRY_AFTER_S:.0f} s the adapter waits"
                   if asked is not None and asked > MAX_RETRY_AFTER_S else
                   f"waiting {wait:.1f} s would pass the attempt's timeout")
            if ctx is not None:
                ctx.note(f"POST {url}: HTTP {status}; not retried: {why}")
            return response
        if ctx is not None:
            source = "Retry-After" if asked is not None else "backoff"
            ctx.note(f"POST {url}: HTTP {status}; retry {made} of {retries} after {wait:.2f} s ({source})")
        await asyncio.sleep(wait)


async def check_chat_model(
    base_url: str, model: str | None, headers: Mapping[str, str], *, secrets: Sequence[str],
    timeout_s: float, refused_hint: str = "", url_key: str = "base_url",
) -> str | None:
    """The `openai-chat` preflight: GET `{base_url}/models`; when it lists models, the experiment's
    model must be one of them. When the server has no `/models` (any non-2xx answer but 401/403),
    one chat completion of `max_tokens = 1` asks instead: `404` / `400` "unknown model" is a cause.
    Slow or transient answers are no cause: the attempts' own timeouts and retries decide; a port
    that speaks TLS hanging up on plain HTTP, or answering it 400, is (`url_key` names the
    setting holding base_url)."""
    models_url = f"{base_url}/models"
    try:
        # The adapters' own kind of client (no TLS context is made for an http:// endpoint); each
        # request bounded whole: a server that trickles its answer never lets a read time out.
        async with lane_client(models_url, timeout_s) as client:
            listing = await asyncio.wait_for(client.request("GET", models_url, headers), timeout_s)
            status = listing.status_code
            if status == 400:  # a TLS port's server may answer plain HTTP so
                cause = await plain_http_at_tls(base_url, url_key, timeout_s, status)
                if cause is not None:
                    return redact(cause, list(secrets))
            if status in (401, 403):
                return f"GET {models_url} answered HTTP {status} ({REFUSING_STATUS[status]}){refused_hint}"
            if listing.is_success:
                listed = listed_models(json_or_text(listing))
                if model and listed is not None and model not in listed:
                    return model_missing_text(model, models_url, listed)
                return None
            if not model:
                return f"GET {models_url} answered HTTP 404 (not found)" if status == 404 else None
            chat_url = f"{base_url}/chat/completions"
            ping = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
            answer = await asyncio.wait_for(client.post_json(chat_url, ping, headers), timeout_s)
    except (httpx.TimeoutException, asyncio.TimeoutError):
        return None
    except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        return redact(f"cannot connect to {models_url}: {type(exc).__name__}: {exc}", list(secrets))
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:  # hung up on: maybe a TLS port
        cause = await plain_http_at_tls(base_url, url_key, timeout_s, exc)
        return None if cause is None else redact(cause, list(secrets))
    except httpx.HTTPError:
        return None
    code = answer.status_code
    body = json_or_text(answer)
    if code in (400, 404) and unknown_model(body):
        detail = " ".join(error_text(body).split())[:300]
        return redact(f"model {model!r} is unknown to {chat_url}: HTTP {code}: {detail}", list(secrets))
    if code in (401, 403):
        return f"POST {chat_url} answered HTTP {code} ({REFUSING_STATUS[code]}){refused_hint}"
    if redirect_text(answer):  # every request would be answered so: one setup error, not one per attempt
        return redact(f"POST {chat_url} answered HTTP {code}{redirect_text(answer)}", list(secrets))
    if code == 404:  # neither route exists: the base_url is wrong
        if status == 404:
            return f"GET {models_url} answered HTTP 404 (not found)"
        return f"POST {chat_url} answered HTTP 404 (not found)"
    return None


__all__ = ["ADAPTER_BACKOFF", "DEFAULT_RETRIES", "check_chat_model", "post_with_retries"]
