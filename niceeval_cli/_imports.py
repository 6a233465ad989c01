"""Import a dependency without the optional extras it would pull in and we never use.

sqlite-utils imports numpy and pandas (when installed) to adapt their values on insert; httpcore
imports trio (when installed) to offer a trio backend. NiceEval stores no numpy or pandas values
(it inserts through its own prepared statements) and runs on asyncio only, and those imports
are a large part of start-up (benchmarks/README.md).
Hiding them while the dependency is first imported changes nothing else: the user's own code
can still import them.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType


def import_without(module: str, *optional: str) -> ModuleType:
    """`import module`, letting its `try: import <optional>` see ImportError."""
    if module in sys.modules:
        return sys.modules[module]
    hidden = [name for name in optional if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        return importlib.import_module(module)
    finally:
        for name in hidden:
            del sys.modules[name]
