"""Whether a text looks like a pasted credential, and the check of a variable NAME (low module).

Configuration and adapters refuse a key written where the NAME of an environment variable
belongs, and never repeat it in a message.
"""

from __future__ import annotations

import re

__all__ = ["LOOKS_LIKE_A_KEY", "env_name_problem", "looks_like_secret"]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Prefixes of the API keys people paste most (OpenAI, Anthropic, Stripe, GitHub, Slack, AWS, Google).
_KEY_PREFIX = re.compile(r"(?:sk|pk|rk)[-_]|sk-ant-|gh[opsu]_|github_pat_|xox[abprs]-|AKIA|AIza|Bearer\s")
LOOKS_LIKE_A_KEY = "this looks like a key, not the NAME of a variable"


def looks_like_secret(value: object) -> bool:
    """Whether a string is likelier a pasted credential than a name or a setting."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if len(text) < 12 or any(c.isspace() for c in text.removeprefix("Bearer ")):
        return False
    if _KEY_PREFIX.match(text):
        return True
    # Long runs mixing cases and digits: env names are UPPER_CASE, words and paths have separators.
    digits = sum(c.isdigit() for c in text)
    mixed = any(c.islower() for c in text) and any(c.isupper() for c in text) and digits >= 3
    return len(text) >= 24 and mixed and not any(c in text for c in "/.: ")


def env_name_problem(value: str) -> str | None:
    """Why `value` is not the NAME of an environment variable, without ever repeating it."""
    if looks_like_secret(value):
        return LOOKS_LIKE_A_KEY
    if not _ENV_NAME.fullmatch(value):
        return "expected the NAME of an environment variable (letters, digits, _), not a key"
    return None
