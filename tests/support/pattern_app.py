"""The stand-in app of the statistics acceptance tests: it passes the first k of n attempts of each
message (k from `PASSES_<message>`), so every pass pattern is known in advance."""

APP = """
import os
import threading
from collections import Counter

_seen = Counter()
_lock = threading.Lock()


def reply(message: str) -> str:
    with _lock:
        n = _seen[message]
        _seen[message] += 1
    return "yes" if n < int(os.environ["PASSES_" + message]) else "no"
"""
