"""Comparing a console transcript of the docs with what niceeval prints (the convention a page
follows is in tests/support/code_blocks.py).

Why a pattern and not a plain diff: a transcript was produced on another machine at another time,
so its ids, clock times, durations and digests differ from a fresh run's, a run prints its attempt
lines in the order the attempts finished, and some pages show only part of a long output.
Everything else — every word, count, section and line order — must be what niceeval prints today,
so that a stale summary line fails the test.

Each line the page shows becomes a regular expression over one printed line (whitespace runs
collapsed on both sides, so column padding never matters): what varies is matched by its shape,
`…` matches any text, and a line `...` alone (indented or not) any number of lines. Ids are matched by shape, but a
page id stands for one printed id across the whole page (`PageIds`): "attempt X from run Y" in a
`--dry` plan must name the attempt and the run printed earlier, and a later `view @01M8N2KFAH`
runs with the printed id's prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

#: A run or attempt id (26 characters of Crockford base32), or a prefix of 8 or more.
_ID = re.compile(r"\b01(?=[0-9]*[A-HJKMNP-TV-Z])[0-9A-HJKMNP-TV-Z]{6,24}\b")
_ID_LENGTH = 26
_ID_CHARACTER = "[0-9A-HJKMNP-TV-Z]"
#: What differs between two runs of one command, by its shape on the page: (the shape on the
#: page, what it matches in the output).
_VARYING = (
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?: UTC|Z)?"),          # a clock time
     r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?: UTC|Z)?"),
    (re.compile(r"\b[0-9a-f]{64}\b"), r"[0-9a-f]{64}"),                                # a sha256 digest
    (re.compile(r"(?<=took )\d+(?:\.\d+)? ?m?s\b"), r"\d+(?:\.\d+)? ?m?s"),            # `took 6.0 ms`
    (re.compile(r"(?<=duration )\d+(?:\.\d+)? ?m?s\b"), r"\d+(?:\.\d+)? ?m?s"),        # `duration 0.5 ms`
    (re.compile(r'(?<="duration_ms": )\d+(?:\.\d+)?'), r"\d+(?:\.\d+)?"),             # `"duration_ms": 1.362`
)
_ANY_TEXT = "…"
_ANY_LINES = "..."
#: The line a run prints before its attempt lines (`niceeval: 6 slot(s): 6 to execute, 0 reused`).
_PLANNED = re.compile(r"^niceeval: \d+ slot\(s\): ")

T = TypeVar("T")


@dataclass(frozen=True)
class Shown:
    """One line the page shows, with its line number on the page."""

    line: int
    text: str


@dataclass
class PageIds:
    """Which printed id each id of a page stands for, learnt from the transcripts that matched."""

    printed: dict[str, str] = field(default_factory=dict)

    def known(self, page_id: str) -> str | None:
        """The printed id (or prefix) a page id (or prefix) stands for, once learnt."""
        for page_full, printed_full in self.printed.items():
            if page_full.startswith(page_id):
                return printed_full[: len(page_id)]
        return None

    def command(self, text: str) -> str:
        """A command of the page with its ids replaced by the printed ones (`view @01M8N2KFAH`)."""
        return _ID.sub(lambda m: self.known(m.group()) or m.group(), text)

    def as_page(self, printed: str) -> str:
        """Printed text with the ids already learnt written as the page writes them, so that a
        failure shows only the differences that matter (and can be pasted into the page)."""
        page_of = {printed_id: page_id for page_id, printed_id in self.printed.items()}
        return _ID.sub(lambda m: page_of.get(m.group(), m.group()), printed)


def mismatch(where: str, line: int, shown: Sequence[Shown], output: str, ids: PageIds) -> str | None:
    """None when `output` (of the command on page line `line`) is what the page shows under it,
    and the page's new ids are learnt from it; else what differs, naming the page and line of the
    first shown line the output does not continue with."""
    expected = _compared(shown)
    printed = "".join(text + "\n" for text in _compared_output(output))
    groups: dict[str, str] = {}
    found = re.fullmatch(_pattern(expected, ids, groups), printed)
    if found is not None:
        return _learn(where, expected, ids, {page_id: found.group(name) for page_id, name in groups.items()})
    for count in range(1, len(expected) + 1):
        if re.match(_pattern(expected[:count], ids, {}), printed) is None:
            wanted = expected[count - 1]
            at = re.match(_pattern(expected[:count - 1], ids, {}), printed)
            got = printed[at.end() if at else 0:].split("\n", 1)[0]
            return (f"{where}:{wanted.line}: the page shows\n    {_visible(wanted.text)}\nwhere niceeval printed\n"
                    f"    {_visible(got)}\n{_whole(output, ids)}")
    after = expected[-1].line + 1 if expected else line + 1
    return (f"{where}:{after}: niceeval printed more than the page shows (a `...` line marks an excerpt)\n"
            + _whole(output, ids))


def _compared(shown: Sequence[Shown]) -> list[Shown]:
    """The page's lines as compared: squeezed, trailing blank lines dropped, attempt lines sorted."""
    lines = [Shown(line.line, _squeeze(line.text)) for line in shown]
    while lines and not lines[-1].text:
        lines.pop()
    return _attempt_lines_sorted(lines, key=lambda line: line.text)


def _compared_output(output: str) -> list[str]:
    """What a command printed, as compared (the same rules as the page's lines)."""
    lines = [_squeeze(text) for text in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return _attempt_lines_sorted(lines, key=lambda text: text)


def _squeeze(text: str) -> str:
    """A line as compared: trailing space dropped, every whitespace run one space."""
    return re.sub(r"\s+", " ", text.rstrip())


def _attempt_lines_sorted(lines: list[T], key: Callable[[T], str]) -> list[T]:
    """A run prints one line per attempt as each finishes, so their order differs from run to
    run: the lines after `niceeval: N slot(s): ...` up to a blank line (or a `...`) are compared
    sorted. An excerpt shows them all or none."""
    lines = list(lines)
    for start, first in enumerate(lines):
        if _PLANNED.match(key(first)):
            end = next((i for i in range(start + 1, len(lines)) if not key(lines[i]) or _omits(key(lines[i]))),
                       len(lines))
            lines[start + 1:end] = sorted(lines[start + 1:end], key=key)
    return lines


def _pattern(shown: Sequence[Shown], ids: PageIds, groups: dict[str, str]) -> str:
    """The shown lines as one pattern over the printed text, a line `...` matching any lines."""
    return "".join(r"(?:[^\n]*\n)*?" if _omits(line.text) else _line_pattern(line.text, ids, groups) + r"\n"
                   for line in shown)


def _omits(text: str) -> bool:
    """A line `...` (indented or not) stands for lines the page leaves out."""
    return text.strip() == _ANY_LINES


def _line_pattern(text: str, ids: PageIds, groups: dict[str, str]) -> str:
    """The regular expression one shown line stands for: its text, with what varies matched by
    shape and `…` by any text."""
    varying = [(m.start(), m.end(), matches) for shape, matches in _VARYING for m in shape.finditer(text)]
    varying += [(m.start(), m.end(), _id_pattern(m.group(), ids, groups)) for m in _ID.finditer(text)]
    pattern, at = "", 0
    for start, end, matches in sorted(varying):
        if start >= at:  # not inside a piece already matched by shape
            pattern += _literal(text[at:start]) + matches
            at = end
    return pattern + _literal(text[at:])


def _literal(text: str) -> str:
    return ".*?".join(re.escape(piece) for piece in text.split(_ANY_TEXT))


def _id_pattern(page_id: str, ids: PageIds, groups: dict[str, str]) -> str:
    """A page id: the printed id it already stands for; else any id, the same one wherever the
    page repeats it in this transcript (a named group, learnt when the transcript matches)."""
    known = ids.known(page_id)
    if known is not None:
        return re.escape(known)
    if len(page_id) < _ID_LENGTH:
        return f"01{_ID_CHARACTER}{{{len(page_id) - 2}}}"
    if page_id in groups:
        return f"(?P={groups[page_id]})"
    groups[page_id] = f"id{len(groups)}"
    return f"(?P<{groups[page_id]}>01{_ID_CHARACTER}{{24}})"


def _learn(where: str, shown: Sequence[Shown], ids: PageIds, learnt: dict[str, str]) -> str | None:
    """Record what the transcript's new page ids stand for; two page ids for one printed id is a
    mismatch (the page names one run or attempt by two ids)."""
    for page_id, printed in learnt.items():
        for other, earlier in ids.printed.items():
            if earlier == printed and other != page_id:
                line = next(line.line for line in shown if page_id in line.text)
                return f"{where}:{line}: the page writes {page_id} for the id it wrote {other} before"
        ids.printed[page_id] = printed
    return None


def _visible(text: str) -> str:
    return text.strip() or "(a blank line)"


def _whole(output: str, ids: PageIds) -> str:
    """The whole output, ids written as the page writes them, to paste into the page."""
    return "niceeval's whole output:\n" + "".join(f"    {text}\n" for text in ids.as_page(output).splitlines())
