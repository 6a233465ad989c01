"""The crash report of an internal error (exit 4): the traceback, for the bug report.

A traceback quotes exception messages, and those can hold what a run read: a judge key, a header
token an adapter echoed. The file is therefore redacted like everything NiceEval stores — the
secrets this process has used (`_redact.note_secrets`), the values of environment variables whose
names say they are credentials, and the credential patterns — and is private to its owner: made
by `tempfile.mkstemp` (mode 0600, an unpredictable name, `O_CREAT | O_EXCL | O_NOFOLLOW`, so a
file or symbolic link someone planted in the shared temporary folder is never opened, let alone
followed).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from ._redact import noted_secrets, redact

__all__ = ["crash_secrets", "write_crash_report"]

PREFIX = "niceeval-crash-"

# Names of variables that hold credentials by convention (OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD…).
_CREDENTIAL_NAME = re.compile(r"(?i)key|token|secret|passw|credential|auth|cookie|session")


def crash_secrets() -> list[str]:
    """What a crash report must not contain: secrets the run used, and credential-named variables
    (a value shorter than `_redact.MIN_SECRET_CHARS` is not redacted by value: "true", "1234")."""
    found = [value for name, value in os.environ.items() if _CREDENTIAL_NAME.search(name)]
    return [*noted_secrets(), *found]


def write_crash_report(text: str) -> Path:
    """Write `text`, redacted, to a new private file in the temporary folder; return its path."""
    handle, name = tempfile.mkstemp(prefix=PREFIX, suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as out:
        out.write(redact(text, crash_secrets()))
    return Path(name)
