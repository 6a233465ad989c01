"""How rendered Lines reach the console: the only place that knows about TTYs and NO_COLOR.

- A TTY: colours, a box around the header, long lines wrapped at the terminal width with their
  indent kept (rich measures CJK text in cells, so wrapping and alignment stay right).
- Not a TTY (piped, CI) or NO_COLOR: plain text, no styles, no boxes. When piped nothing is
  wrapped either, so the output does not depend on the width and stays stable for tools.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

from .lines import Line


def is_plain(console: Console) -> bool:
    return not console.is_terminal or console.no_color


def _renderable(line: Line, plain: bool) -> RenderableType:
    text = Text(line.text.plain) if plain else line.text
    if not line.indent:
        return text
    return Padding(text, (0, 0, 0, line.indent), expand=False)


def emit(console: Console, lines: Sequence[Line]) -> None:
    if not console.is_terminal:
        # Plain text, written in one go: rich's per-line layout is wasted on unwrapped output and
        # is paid per line (a 100-attempt page has ~1500 lines).
        text = "".join((" " * line.indent + line.text.plain).rstrip() + "\n" for line in lines)
        with console:  # joins any buffered rich output first, in order
            pass
        # A reader that went away raises BrokenPipeError: the caller applies the one policy
        # (`_stdout.reader_went_away`) and decides whether the command ends or goes on.
        console.file.write(text)
        console.file.flush()
        return
    plain = console.no_color
    for line in lines:
        console.print(_renderable(line, plain), soft_wrap=False)


def emit_boxed(console: Console, lines: Sequence[Line]) -> None:
    """The header: boxed in a colour TTY, plain lines otherwise."""
    if is_plain(console):
        emit(console, lines)
        return
    body = Group(*(_renderable(line, False) for line in lines))
    console.print(Panel(body, box=box.ROUNDED, padding=(0, 1)), soft_wrap=False)


def section(console: Console, title: str) -> None:
    """A section title: a rule in a colour TTY, a plain line otherwise."""
    if is_plain(console):
        emit(console, [Line(Text(title))])
        return
    console.rule(Text(title, style="bold"), align="left", style="dim")
