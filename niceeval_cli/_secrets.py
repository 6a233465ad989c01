"""Checks on secret values read from the environment before they go into an HTTP header (pure).

A key is one line of printable ASCII. A line break (a `.env` file or `echo` that kept the
newline), another control character, a non-ASCII character (a pasted curly quote or a
non-breaking space) or surrounding whitespace would either be refused by the HTTP library —
with an error that quotes the header, key included — or be sent differently from what was
meant. These checks describe the problem by its position, never by the value.
"""

from __future__ import annotations

import unicodedata

from ._errors import SetupError

__all__ = ["SecretValueError", "check_header_secret", "header_secret_problem", "secret_problem_text"]


class SecretValueError(SetupError):
    """A secret read from an environment variable cannot be sent as an HTTP header (exit 3)."""


def header_secret_problem(value: str) -> str | None:
    """What makes `value` unusable as an HTTP header credential (without quoting it), or None."""
    for index, char in enumerate(value, start=1):
        if " " <= char <= "~":
            continue
        where = f"at character {index} of {len(value)}"
        code = f"U+{ord(char):04X}"
        if char in "\r\n":
            return f"holds a line break ({code}) {where}"
        if ord(char) < 0x20 or ord(char) == 0x7F:
            return f"holds a control character ({code}) {where}"
        name = unicodedata.name(char, "unnamed")
        return f"holds a non-ASCII character ({code} {name}) {where}"
    if value != value.strip():
        return "starts or ends with whitespace"
    return None


def check_header_secret(variable: str, value: str, *, what: str = "key") -> None:
    """Raise SecretValueError naming `variable` (never its value) when `value` cannot be sent."""
    problem = header_secret_problem(value)
    if problem is not None:
        raise SecretValueError(secret_problem_text(variable, problem, what=what))


def secret_problem_text(variable: str, problem: str, *, what: str = "key") -> str:
    return (f"the {what} in the environment variable {variable} {problem}; a {what} is one line of "
            f"printable ASCII: set {variable} again without it (the value is not shown)")
