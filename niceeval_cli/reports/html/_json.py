"""JSON safe inside the page's `<script type="application/json">` block, and as UTF-8."""

from __future__ import annotations

import json
import math
import re
from typing import Any

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
# `<`, `>`, `&` so that no `</script>` or `<!--` in the data can end the block; lone surrogates
# (which UTF-8 cannot carry) as \uXXXX escapes.
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def _json_escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    return _JSON_ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _finite(value: Any) -> Any:
    """NaN and infinities are not JSON: they travel as text ("nan", "inf")."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def embed(value: Any) -> str:
    """JSON safe inside a `<script type="application/json">` element and as UTF-8."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    except ValueError:  # a non-finite float somewhere: rare, so only then walk the whole value
        text = json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), default=str)
    return _JSON_UNSAFE.sub(_json_escape, text)
