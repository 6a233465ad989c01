"""httpx (and httpcore, its transport), imported without httpcore's optional trio backend (see `_imports`).

Every module that speaks HTTP imports `httpx` from here, so the slow trio import is skipped
wherever HTTP is first used (httpx imports httpcore lazily, on its first transport).
"""

from __future__ import annotations

from ._imports import import_without

import_without("httpcore", "trio")

import httpcore  # noqa: E402  (the one just imported)
import httpx  # noqa: E402

__all__ = ["httpcore", "httpx"]
