"""httpx (and httpcore, its transport), imported without the optional parts we never use (see
`_imports`): httpcore's trio backend, and httpx's own command-line client (`httpx.main`: click,
pygments and rich's syntax highlighting, ~110 ms of every start-up that speaks HTTP).

Every module that speaks HTTP imports `httpx` and `httpcore` from here, so those imports are
skipped wherever HTTP is first used.
"""

from __future__ import annotations

from ._imports import import_without

import_without("httpcore", "trio")
import_without("httpx", "click")

import httpcore  # noqa: E402  (the one just imported)
import httpx  # noqa: E402

__all__ = ["httpcore", "httpx"]
