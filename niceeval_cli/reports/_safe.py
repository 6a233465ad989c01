"""Text from the system under test or a judge, made safe to print on a terminal."""

from __future__ import annotations

import re

# C0 and C1 controls except tab/newline, DEL, Unicode line/paragraph separators, and bidi /
# zero-width / invisible-format tricks that can reorder or hide what a reader sees, and lone
# surrogates (which a terminal encoder would choke on). One table: the terminal, JUnit and the
# HTML report (whose page script builds the same class from `UNSAFE_RANGES`) escape the same set.
UNSAFE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0x061C, 0x061C), (0x180E, 0x180E), (0x200B, 0x200F),
    (0x2028, 0x202E), (0x2060, 0x2069), (0xD800, 0xDFFF), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),
    (0xE0000, 0xE007F),
)
_UNSAFE = re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in UNSAFE_RANGES) + "]")
NAMED_ESCAPES = {"\r": "\\r", "\x1b": "\\x1b", "\x00": "\\x00", "\x07": "\\x07", "\x08": "\\x08"}

DEFAULT_LIMIT = 400


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = NAMED_ESCAPES.get(ch)
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
