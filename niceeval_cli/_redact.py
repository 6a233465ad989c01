"""Redaction and size-trimming of everything NiceEval stores or prints (never of what it sends).

Redaction replaces credentials with `[redacted]`: the exact secret values given (e.g. the judge
key read from its env var) *in every encoding they can take on the way to storage or output*
(raw, JSON-escaped, JSON-in-JSON, Python repr of str and bytes, URL-encoded, XML-escaped, and
`\\/` / `\\uXXXX` escapes, in any mix character by character: an error body that is not valid
JSON cannot be decoded first), in any letter case, and base64-encoded (inside longer base64
text too); the values of `Authorization` / `api-key` headers, `Bearer <token>` and `sk-`-style
keys (`sk-` followed by 16+ token characters). `redact` is the one function every writer calls; `safe_json`
uses it on every string of a JSON-like value.

Trimming keeps stored JSON valid: long strings inside the value are shortened with a visible
marker until the whole text fits; redaction always happens *before* trimming, so a secret cut
in half can never leak a prefix that no longer matches a pattern.
"""

from __future__ import annotations

import functools
import json
import math
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
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


# Every pattern above needs one of these words; one scan for them (of the lower-cased text:
# several times faster than a case-insensitive regex) skips the three substitutions on the
# (usual) text that has none. Redaction runs on every stored string.
_MAYBE_WORDS = ("authorization", "apikey", "api-key", "api_key", "bearer", "sk-")


def _maybe_credential(low: str) -> bool:
    """`low`: the text, lower-cased. (`_MAYBE_WORDS` spelled out: the three api-key words share
    one scan for "api", and a generator over the tuple costs more than the scans of a turn's text.)"""
    return ("sk-" in low or "bearer" in low or "authorization" in low
            or ("api" in low and ("apikey" in low or "api-key" in low or "api_key" in low)))


#: Deeper JSON-like values are cut there (with a marker): deep values never reach a recursive
#: encoder, and nobody reads level 65 of a stored value.
MAX_DEPTH = 64


# A lone surrogate (from a JSON "\ud800" escape, or undecodable bytes) cannot be encoded as
# UTF-8, so it could never be stored or printed: it becomes U+FFFD, visibly.
_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (what `redact` and the store do too)."""
    return _SURROGATE.sub("\ufffd", text) if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    """A lone surrogate is never ASCII: `isascii` answers for the usual text without the regex."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _xml_escape(text: str, entities: Mapping[str, str] | None = None) -> str:
    """`xml.sax.saxutils.escape`, imported on first use: the module imports urllib.request,
    a few ms of every start-up, and most runs have no secret to encode."""
    from xml.sax import saxutils

    return saxutils.escape(text, entities or {})


def _html_escape(text: str, quote: bool = True) -> str:
    """`html.escape`, imported on first use: `html` loads its 2 000-entity table into
    every run's memory, and most runs have no secret to encode."""
    import html

    return html.escape(text, quote=quote)


_ENCODINGS: tuple[Callable[[str], str], ...] = (
    lambda t: json.dumps(t)[1:-1],
    lambda t: json.dumps(t, ensure_ascii=False)[1:-1],
    lambda t: repr(t)[1:-1],
    lambda t: t.replace("\\", "\\\\").replace("'", "\\'"),  # repr inside '...' whatever the quotes
    lambda t: t.replace("\\", "\\\\").replace('"', '\\"'),
    lambda t: t.encode("unicode_escape").decode("ascii"),
    lambda t: repr(t.encode("utf-8", "surrogateescape"))[2:-1],  # header form: b'Bearer ...' (h11)
    lambda t: urllib.parse.quote(t, errors="surrogateescape"),
    lambda t: urllib.parse.quote(t, safe="", errors="surrogateescape"),
    lambda t: urllib.parse.quote_plus(t, errors="surrogateescape"),
    _html_escape,
    lambda t: _html_escape(t, quote=False),
    lambda t: t.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;").replace("'", "&apos;"),
    _xml_escape,  # XML text and attributes as ElementTree writes them (JUnit)
    lambda t: _xml_escape(t, {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#09;"}),
    lambda t: _SURROGATE.sub("\ufffd", t),  # how `redact` itself rewrites lone surrogates
)


def _escapes(text: str) -> set[str]:
    """The one-step encodings of `text` that serialisers put in the text we store or print."""
    forms = set()
    for encode in _ENCODINGS:
        try:
            forms.add(encode(text))
        except (UnicodeError, ValueError):  # e.g. a lone surrogate: that encoding cannot hold it
            continue
    return forms


def secret_forms(secret: str) -> frozenset[str]:
    """`secret` and every encoding of it, one or two levels deep (JSON text inside JSON, the
    repr of a JSON text, ...), that can appear in stored or printed text."""
    if not secret:
        return frozenset()
    first = _escapes(secret) | {secret}
    second = {form for once in first for form in _escapes(once)}
    return frozenset(f for f in first | second if f)


_URLSAFE = str.maketrans("+/", "-_")


def _base64_forms(secret: str) -> set[str]:
    """The base64 text of `secret` inside any longer base64 text (standard and URL-safe alphabets,
    at each of the three byte alignments): the characters that carry only the secret's bits, so
    one or two characters at each end, shared with neighbouring bytes, are not part of it. Only for
    secrets of 9 bytes or more (10 characters or more): a shorter core would match by chance."""
    import base64

    try:
        raw = secret.encode("utf-8", "surrogateescape")
    except UnicodeError:  # a lone surrogate no byte form holds: it cannot be base64 of anything sent
        return set()
    if len(raw) < 9:
        return set()
    forms = set()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode("ascii")
        core = encoded[-(-8 * pad // 6):(8 * pad + 8 * len(raw)) // 6]
        forms |= {core, core.translate(_URLSAFE)}
    return forms


def _char_pattern(char: str) -> str:
    """Every way one character of a secret can reach stored text, as a regex over LOWER-CASED text:
    itself in either letter case, its one- and two-level encodings (`secret_forms`), and the
    escapes some JSON encoders write and ours never do — `\\/` for "/" and `\\uXXXX` for any
    character (either hex case; a surrogate pair beyond the BMP), once or twice escaped. Any mix of
    these, character by character, is matched: an error body that is not valid JSON cannot be
    decoded first."""
    if char.isascii() and char.isalnum():
        return re.escape(char.lower())
    forms: set[str] = set()
    for variant in {char, char.lower(), char.upper()}:
        if len(variant) != 1:
            continue
        forms |= secret_forms(variant)
        code = ord(variant)
        if code > 0xFFFF:
            high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
            escaped = f"\\u{high:04x}\\u{low:04x}"
        else:
            escaped = f"\\u{code:04x}"
        forms |= {escaped, escaped.replace("\\", "\\\\"), f"&#{code};", f"&#x{code:x};"}
    if char == "/":
        forms |= {"\\/", "\\\\/", "\\\\\\/"}
    lowered = {form.lower() for form in forms}
    return "(?:" + "|".join(re.escape(f) for f in sorted(lowered, key=len, reverse=True)) + ")"


def _secret_pattern(text: str) -> str:
    """A regex over lower-cased text matching `text` in any letter case and any mix of the
    per-character encodings of `_char_pattern`."""
    parts: list[str] = []
    run = ""
    for char in text:
        if char.isascii() and char.isalnum():
            run += char.lower()
            continue
        if run:
            parts.append(run)
            run = ""
        parts.append(_char_pattern(char))
    return "".join(parts) + run


@dataclass(frozen=True)
class _Matcher:
    """The compiled pattern of a set of secrets, plus a cheap pre-check: every encoding above
    leaves runs of ASCII letters and digits alone (but for their case), so a text whose lower-cased
    form has none of the secrets' longest such runs (lower-cased, the secret's own and its base64
    forms') cannot hold any form (`cores` is None when a secret has no such run).

    The pattern runs over the lower-cased text (several times faster than a case-insensitive
    regex), and the matched spans are replaced in the original; when lower-casing changed the
    text's length (a rare character such as "İ"), a case-insensitive copy of it runs instead."""

    pattern: re.Pattern[str]
    cores: tuple[str, ...] | None

    def search_needed(self, low: str) -> bool:
        """`low`: the text, lower-cased."""
        return self.cores is None or any(core in low for core in self.cores)

    def sub(self, text: str, low: str) -> str:
        if len(low) != len(text):
            return re.compile(self.pattern.pattern, re.IGNORECASE).sub(REDACTED, text)
        parts, end = [], 0
        for found in self.pattern.finditer(low):
            parts += [text[end:found.start()], REDACTED]
            end = found.end()
        return "".join(parts) + text[end:] if parts else text

    def search(self, text: str, low: str) -> bool:
        if len(low) != len(text):
            return re.compile(self.pattern.pattern, re.IGNORECASE).search(text) is not None
        return self.pattern.search(low) is not None


_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")


@functools.lru_cache(maxsize=64)
def _matcher(secrets: tuple[str, ...]) -> _Matcher | None:
    texts = {text for secret in secrets for text in (secret, *_base64_forms(secret))}
    if not texts:
        return None
    runs = [max(_ALNUM_RUN.findall(text), key=len, default="").lower() for text in texts]
    cores = None if not all(runs) else tuple(sorted(set(runs)))
    patterns = sorted((_secret_pattern(text) for text in texts), key=len, reverse=True)
    return _Matcher(re.compile("|".join(patterns)), cores)


_NOTED: set[str] = set()


def note_secrets(values: Iterable[str]) -> None:
    """Remember secret values this process uses (judge keys, adapter header secrets) for writers
    that are not handed them — the crash report of an internal error (`_crash`)."""
    _NOTED.update(value for value in values if value)


def noted_secrets() -> list[str]:
    """Every value `note_secrets` was given in this process."""
    return sorted(_NOTED)


#: A key value shorter than this is not redacted by its value (credential patterns still are):
#: it protects nothing, and a local server's placeholder key (`EMPTY` for vLLM, `x`, `ollama`)
#: replaced every occurrence of that word — in any letter case — in everything stored and shown
#: (`evals/e.py` read `e[redacted]pect` with the key `x`). Real provider keys are far longer.
MIN_SECRET_CHARS = 8


def _find_matcher(secrets: Iterable[str]) -> _Matcher | None:
    return _matcher(tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS})))


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """`text` with the `secrets` (in any encoding and letter case, see `_secret_pattern`, and as
    base64) and credential-looking values replaced by `[redacted]`, and lone surrogates by U+FFFD.
    The one redaction every writer of stored or printed text uses."""
    text = without_surrogates(text)
    matcher = _find_matcher(secrets)
    low = text.lower()
    if matcher is not None and matcher.search_needed(low):
        text = matcher.sub(text, low)
        low = text.lower()
    if not _maybe_credential(low):
        return text
    text = _HEADER.sub(_header_value, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _SK_KEY.sub(REDACTED, text)


def is_clean(text: str, secrets: Sequence[str] = ()) -> bool:
    """True when `redact(text, secrets)` would return `text` unchanged: one cheap check for many
    small values joined together (a transcript's texts), instead of one per value."""
    low = text.lower()
    if _has_surrogate(text) or _maybe_credential(low):
        return False
    matcher = _find_matcher(secrets)
    return matcher is None or not matcher.search_needed(low) or not matcher.search(text, low)


def _header_value(match: re.Match[str]) -> str:
    value = match.group("value")
    if value.strip() == REDACTED:
        return match.group(0)
    return match.group("head") + REDACTED


def redact_json(value: Any, secrets: Sequence[str] = (), *, _depth: int = 0) -> Any:
    """A copy of a JSON-like structure with every string (keys included) redacted; the values
    of credential-named keys (`Authorization`, `api-key`, ...) become `[redacted]` whole.
    Non-finite floats become the strings "NaN" / "Infinity" / "-Infinity" (stored JSON stays
    valid JSON) and levels past MAX_DEPTH become a marker string."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (Mapping, list, tuple)) and _depth >= MAX_DEPTH:
        return f"… [nested deeper than {MAX_DEPTH} levels; trimmed]"
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = redact(str(key), secrets)
            secret_key = bool(_SECRET_KEYS.match(str(key)))
            out[name] = (REDACTED if secret_key and item not in (None, "")
                         else redact_json(item, secrets, _depth=_depth + 1))
        return out
    if isinstance(value, (list, tuple)):
        return [redact_json(item, secrets, _depth=_depth + 1) for item in value]
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def trim_text(text: str, max_bytes: int) -> str:
    """`text` within `max_bytes` UTF-8 bytes, its end replaced by a visible marker when cut."""
    raw = _SURROGATE.sub("\ufffd", text).encode("utf-8")
    if len(raw) <= max_bytes:
        return raw.decode("utf-8")
    marker = f"… [+{len(raw)} bytes in all; trimmed to {max_bytes}]"
    kept = raw[: max(0, max_bytes - len(marker.encode("utf-8")))].decode("utf-8", errors="ignore")
    return kept + marker


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _utf8_size(text: str) -> int:
    """`text`'s UTF-8 length, ASCII text's without encoding it: the bisection of `trim_json` asks
    it of every string each round (a 200 MB tool output was encoded whole ~28 times: 8 s)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _cut_strings(value: Any, cap: int) -> Any:
    """`value` with every string longer than `cap` UTF-8 bytes cut to `cap` plus a marker."""
    if isinstance(value, str):
        size = _utf8_size(value)
        if size <= cap:
            return value
        kept = value[:cap].encode("utf-8")[:cap].decode("utf-8", errors="ignore")  # cap characters: cap bytes or more
        return f"{kept}… [+{size - _utf8_size(kept)} bytes trimmed]"
    if isinstance(value, Mapping):
        return {key: _cut_strings(item, cap) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cut_strings(item, cap) for item in value]
    return value


#: A string in compact JSON text (`_dumps`): its quotes, and escapes taken whole.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


def _skeleton(text: str) -> str:
    """The compact JSON text `text` with each string emptied: its structure, all ASCII."""
    return _JSON_STRING.sub('""', text)


def _longest_string(value: Any) -> int:
    if isinstance(value, str):
        return _utf8_size(value)
    if isinstance(value, Mapping):
        return max((_longest_string(v) for v in value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return max((_longest_string(v) for v in value), default=0)
    return 0


def trim_json(value: Any, max_bytes: int, *, dumped: str | None = None, skeleton: str | None = None) -> str:
    """Compact JSON text of `value` within `max_bytes` UTF-8 bytes, still valid JSON (`dumped`:
    that text already made, `_dumps(value)`, so a large value is not encoded twice; `skeleton`:
    `_skeleton` of that text, when made already).

    Strings are shortened (longest first, by one common cap found by bisection), each with a
    visible `… [+N bytes trimmed]` marker. When the structure alone is too big, the result is
    `{"trimmed": "<marker>", "head": "<start of the JSON text>"}`.
    """
    text = _dumps(value) if dumped is None else dumped
    total = _size(text)
    if total <= max_bytes:
        return text
    # Every cap leaves at least the structure (the text with each string emptied): when that alone
    # is too big, no cap fits (200 000 tool calls of one reply took 15 bisection rounds, 12 s).
    fits_some = _size(_skeleton(text) if skeleton is None else skeleton) <= max_bytes
    lo, hi = 0, (_longest_string(value) if fits_some else -1)  # the largest cap that fits
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


def _json_escaped(secrets: Sequence[str]) -> bool:
    """Whether a secret has a character JSON text writes escaped (a quote, a backslash, a control
    character): found in a value's strings, it would not be found in the value's JSON text."""
    return any(ch in '"\\' or ch < " " for secret in secrets for ch in secret)


#: A skeleton's brackets, an object's written as an array's; everything else left out.
_BRACKETS = str.maketrans({**dict.fromkeys(map(chr, range(128))), "[": "[", "]": "]", "{": "[", "}": "]"})


def _nests_deeper(skeleton: str, limit: int) -> bool:
    """Whether the JSON text of `skeleton` (`_skeleton`) nests arrays or objects more than `limit`
    levels. With its strings emptied every bracket left is structure; a pass that takes out the
    empty pairs takes out the innermost level, so the brackets are gone after `limit` passes
    exactly when nothing is deeper (a walk of the value took 2–3 s for a reply of 10^6 events)."""
    brackets = skeleton.translate(_BRACKETS)
    for _ in range(limit):
        if not brackets:
            return False
        brackets = brackets.replace("[]", "")
    return bool(brackets)


def safe_json(value: Any, *, secrets: Sequence[str] = (), max_bytes: int) -> str:
    """Redacted, then trimmed, valid JSON text of a JSON-like value: the form stored as evidence
    and judge audit (never `NaN` / `Infinity`, never deeper than MAX_DEPTH)."""
    try:
        text = _dumps(value)
    except (ValueError, RecursionError, TypeError):  # non-finite floats, too deep, odd types
        text = None
    if text is not None:
        # Fast path (the usual case): nothing in the text any rule could redact, and it fits
        # (`is_clean` first: a lone surrogate cannot even be measured in UTF-8 bytes).
        clean = is_clean(text, secrets)
        if clean and _size(text) <= max_bytes:
            return text
        # Clean but too big: redacting would copy it unchanged (no secret, no credential word, so no
        # credential-named key; finite floats, or it would not have been dumped), string by string
        # (4 s for a reply of 200 000 tool calls). Unless it is deeper than MAX_DEPTH, which
        # redact_json cuts, or a secret is spelled differently inside JSON text (escaped).
        skeleton = _skeleton(text) if clean and not _json_escaped(secrets) else None
        if skeleton is not None and not _nests_deeper(skeleton, MAX_DEPTH):
            try:
                return trim_json(value, max_bytes, dumped=text, skeleton=skeleton)
            except (ValueError, RecursionError, TypeError) as exc:
                return _dumps({"trimmed": f"… [a value NiceEval could not store as JSON: {type(exc).__name__}]"})
    try:
        return trim_json(redact_json(value, secrets), max_bytes)
    except (ValueError, RecursionError, TypeError) as exc:
        return _dumps({"trimmed": f"… [a value NiceEval could not store as JSON: {type(exc).__name__}]"})
