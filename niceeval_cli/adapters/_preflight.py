"""Before dispatch, check each distinct adapter's system under test once (like the judge's preflight).

A cause is one line naming the URL, never a key: the runner turns it into a setup error (exit 3)
naming the experiment, and dispatches none of that experiment's attempts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from .._redact import redact
from ..authoring import Adapter

#: Answers that say the endpoint is wrong or refuses us (anything else — 405, 429, 5xx — is left
#: to the attempts: a method we probe with may not be allowed, and a transient answer may pass).
REFUSING_STATUS = {401: "unauthorized", 403: "forbidden", 404: "not found"}
PREFLIGHT_TIMEOUT_S = 10.0


async def probe_url(method: str, url: str, *, headers: Mapping[str, str] | None = None,
                    secrets: Sequence[str] = (), timeout_s: float = PREFLIGHT_TIMEOUT_S,
                    refused_hint: str = "", url_key: str = "the URL") -> str | None:
    """One cheap request: the cause when it cannot connect, is answered 401/403/404, or is hung
    up on or answered 400 by a port that speaks TLS (`url_key` names the setting holding the
    http:// URL), else None."""
    from .._httpx import httpx  # only adapters that speak HTTP pay for importing it
    from .._lanes import lane_client, plain_http_at_tls

    try:  # the adapters' own kind of client (no TLS context is made for an http:// URL)
        async with lane_client(url, timeout_s) as client:
            # a bound on the whole request: a server that trickles its answer never lets a read time out
            response = await asyncio.wait_for(client.request(method, url, headers or {}), timeout_s)
    except (httpx.TimeoutException, asyncio.TimeoutError):
        return None  # slow is not down: the attempts' own timeouts decide
    except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        return redact(f"cannot connect to {url}: {type(exc).__name__}: {exc}", list(secrets))
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:  # hung up on: maybe a TLS port
        cause = await plain_http_at_tls(url, url_key, timeout_s, exc)
        return None if cause is None else redact(cause, list(secrets))
    except httpx.HTTPError:
        return None
    meaning = REFUSING_STATUS.get(response.status_code)
    if response.status_code == 400:  # a TLS port's server may answer plain HTTP so
        cause = await plain_http_at_tls(url, url_key, timeout_s, 400)
        return None if cause is None else redact(cause, list(secrets))
    if meaning is None:
        return None
    hint = refused_hint if response.status_code in (401, 403) else ""
    return f"{method} {url} answered HTTP {response.status_code} ({meaning}){hint}"


async def _checked(adapter: Adapter) -> str | None:
    try:
        cause = await adapter.preflight()
    except Exception as exc:  # a custom preflight's own failure is its answer
        cause = f"the preflight of adapter {adapter.name!r} raised {type(exc).__name__}: {exc}"
    if cause is None:
        return None
    line = " ".join(str(cause).split())  # one line, whatever a custom adapter returned
    return redact(line, [s for s in adapter.secrets if s])


async def preflight_adapters(pairs: Sequence[tuple[str, Adapter]]) -> dict[str, str]:
    """Experiment id → why its adapter's system is unreachable; each distinct adapter is checked
    once, all concurrently. Experiments whose adapter is fine are absent."""
    distinct: dict[int, Adapter] = {}
    for _, adapter in pairs:
        distinct.setdefault(id(adapter), adapter)
    causes = await asyncio.gather(*(_checked(adapter) for adapter in distinct.values()))
    failed = {key: cause for key, cause in zip(distinct, causes, strict=True) if cause is not None}
    return {experiment_id: failed[id(adapter)] for experiment_id, adapter in pairs if id(adapter) in failed}
