"""`Line`: one logical output line (rich Text + indent), and the styles every terminal view shares."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from ..._states import Derived

STYLES = {
    "passed": "green", "scored": "green", "matched": "green", "met": "green", "measured": "cyan",
    "failed": "bold red", "mismatched": "bold red", "below": "bold red", Derived.GATE_FAILED.label: "bold red",
    "errored": "bold magenta", "unrankable": "yellow", "unavailable": "yellow",
    Derived.GATE_UNAVAILABLE.label: "yellow",
    Derived.UNRANKABLE_GATE_FAILED.label: "bold red", Derived.ERRORED_GATE_FAILED.label: "bold red",
}
DETAIL_INDENT = 6


@dataclass(frozen=True)
class Line:
    """One logical output line; wrapped lines in a TTY keep the indent."""

    text: Text
    indent: int = 0


Part = str | tuple[str, str]


def line(*parts: Part, indent: int = 0) -> Line:
    """A line from plain strings and (text, style) pairs. Callers pass text already made visible."""
    text = Text()
    for part in parts:
        if isinstance(part, tuple):
            text.append(part[0], style=part[1])
        else:
            text.append(part)
    return Line(text, indent)


def blank() -> Line:
    return Line(Text(), 0)


def pad(text: str, width: int) -> str:
    """Left-align in terminal cells (a CJK character takes two), not in characters."""
    return text + " " * max(0, width - cell_len(text))


def text_block(shown: str, *, indent: int, first: str = "") -> list[Line]:
    """Multi-line text (already visible); continuation lines align under the first."""
    rows = shown.split("\n")
    out = [line((first, "dim"), rows[0], indent=indent)] if first else [line(rows[0], indent=indent)]
    out += [line(row, indent=indent + cell_len(first)) for row in rows[1:]]
    return out


def plain(lines: list[Line]) -> str:
    """Lines as plain text (JUnit bodies, tests)."""
    return "\n".join(" " * ln.indent + ln.text.plain for ln in lines)
