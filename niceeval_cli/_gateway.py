"""What every OpenAI-compatible client of the product shares with gateways such as LiteLLM.

The judge and the `openai-chat` / `http` adapters speak to the same kinds of servers (OpenAI,
LiteLLM's proxy, vLLM, OpenRouter ...). What they agree on lives here, below both of them:
extra request headers whose values name environment variables (`env:NAME`, resolved when a
request is made, never stored), the cost a gateway reports in a response header, `Retry-After`,
backoff with jitter, how to read "this model does not exist" from `/models` or a `400`, and a
server's answer as JSON (a hostile one nested past the parser included).
"""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._credentials import looks_like_secret

#: LiteLLM's proxy reports what a call cost (USD) in this response header.
COST_HEADERS = ("x-litellm-response-cost",)
#: A reported cost (USD) above this, for one request, is nonsense — and two such costs overflow
#: a float sum (`math.fsum` raises): unreported, as a token count above 2**53 is.
MAX_REPORTED_COST_USD = float(2**53)
#: Longest wait a `Retry-After` is honoured for before the request is given up (a server asking
#: for minutes is not a transient answer an eval should sit through).
MAX_RETRY_AFTER_S = 30.0

ENV_REF = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_WHOLE_ENV_REF = re.compile(r"env:([A-Za-z_][A-Za-z0-9_]*)")
CREDENTIAL_HEADER = re.compile(r"(?i)^(?:proxy-)?authorization$|^cookie$|api[-_]?key|token|secret")
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def header_template(value: str) -> str:
    """`env:NAME` (the whole value) as `{env:NAME}`; any other text unchanged."""
    whole = _WHOLE_ENV_REF.fullmatch(value)
    return "{env:" + whole.group(1) + "}" if whole else value


def header_env_names(value: str) -> list[str]:
    """The variables a header value names."""
    return ENV_REF.findall(header_template(value))


def header_problem(name: str, value: object) -> str | None:
    """Why `name = value` cannot be an extra header of the configuration, or None.

    A credential header (Authorization, Cookie, *api-key*, *token*, *secret*) and a value that
    looks like a key must name its secret as `env:NAME`: a key written into niceeval.toml would
    end up in the stored fingerprint and in every copy of the file.
    """
    if not _HEADER_NAME.fullmatch(name):
        return f"{name!r} is not a valid HTTP header name"
    if not isinstance(value, str):
        return f"expected text, got {type(value).__name__}"
    if "\n" in value or "\r" in value:
        return "a header value cannot contain a line break"
    if not header_env_names(value) and (CREDENTIAL_HEADER.search(name) or looks_like_secret(value)):
        what = "a credential header" if CREDENTIAL_HEADER.search(name) else "this looks like a key: a header"
        return (f'{what} must name its secret as "env:VAR_NAME" (or "Bearer {{env:VAR_NAME}}"), '
                "so the key stays out of niceeval.toml and the stored results")
    return None


@dataclass(frozen=True)
class ResolvedHeaders:
    """Header values with their `env:` references read: what is sent, and what must be redacted."""

    headers: dict[str, str]
    secrets: list[str]  # every value read from the environment (never stored or printed)
    missing: dict[str, list[str]]  # header → its variables that are unset or empty

    def missing_text(self) -> str:
        return "; ".join(f"header {h} needs {', '.join(v)}" for h, v in self.missing.items())


def resolve_headers(table: Mapping[str, str] | Iterable[tuple[str, str]],
                    environ: Mapping[str, str] | None = None) -> ResolvedHeaders:
    """Read the `env:` references of `table` now (a request is about to be made)."""
    import os

    env = os.environ if environ is None else environ
    items = table.items() if isinstance(table, Mapping) else table
    headers: dict[str, str] = {}
    secrets: list[str] = []
    missing: dict[str, list[str]] = {}
    for name, value in items:
        template = header_template(value)
        unset = []
        for var in ENV_REF.findall(template):
            found = env.get(var) or None
            if found is None:
                unset.append(var)
            else:
                secrets.append(found)
        if unset:
            missing[name] = unset
        headers[name] = ENV_REF.sub(lambda m: env.get(m.group(1)) or "", template)
    return ResolvedHeaders(headers, secrets, missing)


def usd(value: object) -> float | None:
    """A reported cost (USD) as a float; None when it is no number, negative, not finite, or past
    MAX_REPORTED_COST_USD (an integer of 400 digits does not even convert to a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not 0 <= value <= MAX_REPORTED_COST_USD:
        return None
    cost = float(value)
    return cost if math.isfinite(cost) and 0 <= cost <= MAX_REPORTED_COST_USD else None


def reported_cost(headers: Mapping[str, str], body: object = None) -> float | None:
    """The cost (USD) the server reported: the body's `usage.cost`, else a gateway's cost header.

    Unreadable, negative, non-finite or impossible values are unreported (None), never 0.
    """
    if isinstance(body, Mapping):
        usage = body.get("usage")
        cost = usd(usage.get("cost")) if isinstance(usage, Mapping) else None
        if cost is not None:
            return cost
    for name in COST_HEADERS:
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = usd(float(raw))
        except ValueError:
            continue
        if value is not None:
            return value
    return None


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """`Retry-After` (seconds or an HTTP date) as seconds from now, or None."""
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter: base·2^n seconds, capped, times a factor in [0.5, 1]."""

    base_s: float = 0.2
    cap_s: float = 8.0
    rng: Callable[[], float] = random.random

    def delay(self, retry: int) -> float:
        return min(self.cap_s, self.base_s * 2**retry) * (0.5 + 0.5 * self.rng())


def error_text(body: Any) -> str:
    """The human part of an error body (`{"error": {"message": ...}}` and friends), unshortened."""
    import json

    message: Any = body
    if isinstance(body, Mapping):
        error = body.get("error", body.get("detail", body.get("message")))
        if isinstance(error, Mapping):
            error = error.get("message", error)
        message = error if error is not None else body
    return message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)


_UNKNOWN_MODEL_CODES = frozenset({"model_not_found", "invalid_model"})
_UNKNOWN_MODEL_WORDS = ("not found", "does not exist", "unknown", "not exist", "invalid model", "no such model")


def unknown_model(body: Any) -> bool:
    """Whether an error body says the requested model is unknown to the server.

    OpenAI: `{"error": {"code": "model_not_found", "message": "The model `x` does not exist"}}`;
    LiteLLM's proxy: `400 ... Invalid model name passed in model=x`; vLLM / Ollama: "... not found".
    """
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        if body["error"].get("code") in _UNKNOWN_MODEL_CODES:
            return True
    text = " ".join(error_text(body).lower().split())
    return "model" in text and any(words in text for words in _UNKNOWN_MODEL_WORDS)


def listed_models(body: Any) -> list[str] | None:
    """The model ids of a `/models` answer (`{"data": [{"id": ...}]}`), or None when it lists none
    or is not such a list (then nothing can be concluded from it)."""
    items = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(items, list):
        return None
    ids = [item["id"] for item in items if isinstance(item, Mapping) and isinstance(item.get("id"), str)]
    return ids or None


def model_missing_text(model: str, url: str, listed: list[str]) -> str:
    """The setup error of a model the endpoint does not list (a few of the listed ids shown)."""
    shown = ", ".join(listed[:10]) + (f", … ({len(listed)} in all)" if len(listed) > 10 else "")
    return f"model {model!r} is not served by {url} (its /models lists: {shown})"


def redirect_text(response: Any) -> str:
    """` (a redirect to <Location> …)` for a 3xx answer that names where, else "". NiceEval
    follows no redirect (a POST's body would be dropped or resent somewhere unchecked), so an
    `http://` base URL its server sends to `https://` failed every request with a bare "HTTP 301"."""
    location = response.headers.get("location") if 300 <= response.status_code < 400 else None
    if not location:
        return ""
    shown = location if len(location) <= 200 else location[:199] + "…"
    return f" (a redirect to {shown}: NiceEval does not follow redirects; configure the URL it points to)"


def reply_json(response: Any) -> Any:
    """A server's answer (an `httpx.Response`) as JSON: ValueError when it is not JSON — or nests
    deeper than the parser goes (json's RecursionError is no ValueError, and a hostile server can
    send `[[[[…` for megabytes)."""
    try:
        return response.json()
    except RecursionError:
        raise ValueError("JSON nested too deep to read") from None


def json_or_text(response: Any) -> Any:
    """A server's answer as JSON, or its text when it is not JSON (`reply_json`)."""
    try:
        return reply_json(response)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return response.text


__all__ = [
    "COST_HEADERS",
    "CREDENTIAL_HEADER",
    "ENV_REF",
    "MAX_REPORTED_COST_USD",
    "MAX_RETRY_AFTER_S",
    "Backoff",
    "ResolvedHeaders",
    "error_text",
    "header_env_names",
    "header_problem",
    "header_template",
    "json_or_text",
    "listed_models",
    "model_missing_text",
    "redirect_text",
    "reply_json",
    "reported_cost",
    "resolve_headers",
    "retry_after_s",
    "unknown_model",
    "usd",
]
