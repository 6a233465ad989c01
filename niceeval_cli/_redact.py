"""Redaction and size-trimming of everything NiceEval stores or prints (never of what it sends).

Redaction replaces credentials with `[redacted]`: the exact secret values given (e.g. the judge
key read from its env var), the values of `Authorization` / `api-key` headers, `Bearer <token>`
and `sk-`-style keys (`sk-` followed by 16+ token characters).

Trimming keeps stored JSON valid: long strings inside the value are shortened with a visible
marker until the whole text fits; redaction always happens *before* trimming, so a secret cut
in half can never leak a prefix that no longer matches a pattern.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

REDACTED = "[redacted]"

# Header-style "name: value" / "name=value" / JSON "name": "value" pairs.
_HEADER = re.compile(
    r"""(?ix)
    (?P<head>["']?\b(?:proxy-)?(?:authorization|x-api-key|api[-_]?key)\b["']?\s*[:=]\s*["']?)
    (?P<value>[^"'\r\n,;}]+)
    """
)
_BEARER = re.compile(r"(?i)\b(Bearer)\s+[A-Za-z0-9\-._~+/]+=*")
_SK_KEY = re.compile(r"(?<![A-Za-z0-9_\-])sk-[A-Za-z0-9_\-]{16,}")
# Mapping keys whose whole value is a credential.
_SECRET_KEYS = re.compile(r"(?i)^(?:proxy-)?(?:authorization|x-api-key|api[-_]?key)$")


# Every pattern above needs one of these words; one scan for them skips the three
# substitutions on the (usual) text that has none. Redaction runs on every stored string.
_MAYBE = re.compile(r"(?i)authorization|api[-_]?key|bearer|(?<![A-Za-z0-9_\-])sk-")


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """`text` with the exact `secrets` and credential-looking values replaced by `[redacted]`."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    if _MAYBE.search(text) is None:
        return text
    text = _HEADER.sub(_header_value, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _SK_KEY.sub(REDACTED, text)


def _header_value(match: re.Match[str]) -> str:
    value = match.group("value")
    if value.strip() == REDACTED:
        return match.group(0)
    return match.group("head") + REDACTED


def redact_json(value: Any, secrets: Sequence[str] = ()) -> Any:
    """A copy of a JSON-like structure with every string (keys included) redacted; the values
    of credential-named keys (`Authorization`, `api-key`, ...) become `[redacted]` whole."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = redact(str(key), secrets)
            secret_key = bool(_SECRET_KEYS.match(str(key)))
            out[name] = REDACTED if secret_key and item not in (None, "") else redact_json(item, secrets)
        return out
    if isinstance(value, (list, tuple)):
        return [redact_json(item, secrets) for item in value]
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _cut_strings(value: Any, cap: int) -> Any:
    """`value` with every string longer than `cap` UTF-8 bytes cut to `cap` plus a marker."""
    if isinstance(value, str):
        raw = value.encode("utf-8")
        if len(raw) <= cap:
            return value
        kept = raw[:cap].decode("utf-8", errors="ignore")
        return f"{kept}… [+{len(raw) - len(kept.encode('utf-8'))} bytes trimmed]"
    if isinstance(value, Mapping):
        return {key: _cut_strings(item, cap) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cut_strings(item, cap) for item in value]
    return value


def _longest_string(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, Mapping):
        return max((_longest_string(v) for v in value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return max((_longest_string(v) for v in value), default=0)
    return 0


def trim_json(value: Any, max_bytes: int) -> str:
    """Compact JSON text of `value` within `max_bytes` UTF-8 bytes, still valid JSON.

    Strings are shortened (longest first, by one common cap found by bisection), each with a
    visible `… [+N bytes trimmed]` marker. When the structure alone is too big, the result is
    `{"trimmed": "<marker>", "head": "<start of the JSON text>"}`.
    """
    text = _dumps(value)
    total = _size(text)
    if total <= max_bytes:
        return text
    lo, hi = 0, _longest_string(value)  # find the largest cap that fits
    best: str | None = None
    while lo <= hi:
        cap = (lo + hi) // 2
        candidate = _dumps(_cut_strings(value, cap))
        if _size(candidate) <= max_bytes:
            best, lo = candidate, cap + 1
        else:
            hi = cap - 1
    if best is not None:
        return best
    marker = f"… [{total} bytes of JSON; only the start is kept]"
    head_budget = max(0, max_bytes - _size(_dumps({"trimmed": marker, "head": ""})))
    raw = text.encode("utf-8")[:head_budget].decode("utf-8", errors="ignore")
    while raw and _size(_dumps({"trimmed": marker, "head": raw})) > max_bytes:
        raw = raw[: max(0, len(raw) - max(1, len(raw) // 8))]  # escapes made it grow: shrink
    return _dumps({"trimmed": marker, "head": raw})


def safe_json(value: Any, *, secrets: Sequence[str] = (), max_bytes: int) -> str:
    """Redacted, then trimmed, JSON text of a JSON-like value: the form stored as evidence."""
    text = _dumps(value)
    # Fast path (the usual case): nothing in the text that any rule could redact, and it fits.
    if _MAYBE.search(text) is None and not any(s and s in text for s in secrets) and _size(text) <= max_bytes:
        return text
    return trim_json(redact_json(value, secrets), max_bytes)
