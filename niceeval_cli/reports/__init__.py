"""Reading surfaces: everything here reads sealed rows; nothing re-decides an outcome.

`visible` (text as every surface shows it: controls and bidi overrides escaped, cut to a length)
is exported for the command line's own messages, which quote what a user typed.
"""

from typing import Any

from ._safe import visible


def console(**options: Any) -> Any:
    """A rich Console (`_console.PipeConsole`) for a command's output; rich is imported here, on
    first use, so that `niceeval --version` does not pay for it."""
    from ._console import PipeConsole

    return PipeConsole(**options)


__all__ = ["console", "visible"]
