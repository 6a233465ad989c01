"""Reading surfaces: everything here reads sealed rows; nothing re-decides an outcome.

`visible` (text as every surface shows it: controls and bidi overrides escaped, cut to a length)
is exported for the command line's own messages, which quote what a user typed.
"""

from ._safe import visible

__all__ = ["visible"]
