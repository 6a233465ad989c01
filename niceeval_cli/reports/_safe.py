"""Text from the system under test or a judge, made safe to print on a terminal."""

from __future__ import annotations

import re

# C0 and C1 controls except tab/newline, DEL, and Unicode bidi / zero-width tricks.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\r": "\\r", "\x1b": "\\x1b", "\x00": "\\x00", "\x07": "\\x07", "\x08": "\\x08"}

DEFAULT_LIMIT = 400


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: object, limit: int | None = DEFAULT_LIMIT, *, single_line: bool = False) -> str:
    """Escape control characters (`\\x1b`, `\\r`, ...) and trim with a marker (`… [+N chars]`).

    Never sends an escape sequence to the terminal; never cuts text silently. `limit=None` keeps
    everything (`view @ATTEMPT_ID`).
    """
    s = "" if text is None else str(text)
    omitted = 0
    if limit is not None and len(s) > limit:
        omitted = len(s) - limit
        s = s[:limit]
    s = _UNSAFE.sub(_escape, s)
    if single_line:
        s = s.replace("\n", "\\n").replace("\t", " ")
    if omitted:
        s += f"… [+{omitted} chars]"
    return s
