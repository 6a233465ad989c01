"""Text from the system under test or a judge, made safe to print on a terminal."""

from __future__ import annotations

import re

# C0 and C1 controls except tab/newline, DEL, Unicode line/paragraph separators, and bidi /
# zero-width / invisible-format tricks that can reorder or hide what a reader sees, and lone
# surrogates (which a terminal encoder would choke on).
_UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ud800-\udfff\ufeff"
    r"\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_NAMED = {"\r": "\\r", "\x1b": "\\x1b", "\x00": "\\x00", "\x07": "\\x07", "\x08": "\\x08"}

DEFAULT_LIMIT = 400


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


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
