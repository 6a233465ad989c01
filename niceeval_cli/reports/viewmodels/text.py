"""Formatting every renderer shares: numbers, durations, names, exit codes. Pure text, no styles."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from ..._errors import EXIT_MEANING
from .._safe import visible

#: Default trims (characters) for the list views; `view @ATTEMPT_ID` shows everything.
NAME_LIMIT = 160
TEXT_LIMIT = 400


def num(x: float | None) -> str:
    """Scores and weights: whole numbers as such, else up to two decimals; missing as an em dash."""
    if x is None:
        return "—"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def name(text: object, limit: int | None = NAME_LIMIT) -> str:
    """Ids, labels, keys: one line, escaped, trimmed with a marker."""
    return visible(text, limit, single_line=True)


def when(iso: str | None) -> str:
    if not iso:
        return "—"
    return iso.replace("T", " ").split(".")[0].rstrip("Z") + " UTC"


def took(started: str | None, ended: str | None) -> str | None:
    try:
        start = datetime.fromisoformat((started or "").replace("Z", "+00:00"))
        end = datetime.fromisoformat((ended or "").replace("Z", "+00:00"))
    except ValueError:
        return None
    return duration((end - start).total_seconds() * 1000)


def duration(ms: float | None) -> str:
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{int(ms // 60_000)} min {ms % 60_000 / 1000:.0f} s"


def exit_text(code: int | None, because: str = "") -> str:
    """`exit 1 (a definite failure: 1 gate failed)`; the meaning comes from `_errors.EXIT_MEANING`."""
    if code is None:
        return "no exit code yet"
    meaning = EXIT_MEANING.get(code)
    if not meaning:
        return f"exit {code}"
    return f"exit {code} ({meaning}: {because})" if because else f"exit {code} ({meaning})"


def counts_text(words: dict[str, int]) -> str:
    return ", ".join(f"{n} {w}" for w, n in words.items() if n) or "none"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate * 100:.0f}%"


def join(items: Iterable[str]) -> str:
    return " · ".join(i for i in items if i)
