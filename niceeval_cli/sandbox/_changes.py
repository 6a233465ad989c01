"""What changed in a workspace since its snapshot, the lines a diff adds and its evidence (pure).

Every text file is diffed whole, in time linear in its size (`_linediff`); only the *evidence*
is trimmed. A file whose content was not read (over the size a snapshot reads, unreadable) is a
change whose lines are unknown: the checks over it say so (`unavailable`), never "nothing found".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ._linediff import opcodes, unified
from ._workspace import FileState, Snapshot

__all__ = [
    "ADDED", "DELETED", "MODIFIED", "STATUSES", "AddedLine", "Change", "added_lines", "changes", "diff_lines",
    "diff_text", "hidden", "is_binary", "shown_path", "trimmed",
]

ADDED, MODIFIED, DELETED = "added", "modified", "deleted"
STATUSES = (ADDED, MODIFIED, DELETED)

Check = Callable[[], None]  # called now and then; raises to cancel


@dataclass(frozen=True)
class Change:
    path: str
    status: str  # added | modified | deleted
    binary: bool = False  # read, but not text: listed, not diffed
    node: str | None = None  # not a regular file ("symlink", "fifo", ...): no content to diff
    unread: str | None = None  # why its content was not read: its lines are unknown

    @property
    def diffable(self) -> bool:
        return not (self.binary or self.node or self.unread)


@dataclass(frozen=True)
class AddedLine:
    path: str
    number: int  # in the new file, from 1
    text: str
    certain: bool = True  # False: the old content is unknown, so the line may have been there before


def is_binary(state: FileState | None) -> bool:
    """A read file that is not UTF-8 text (a NUL byte, or undecodable)."""
    return state is not None and state.binary


def _within(path: str, under: Sequence[str]) -> bool:
    """`under` entries are workspace-relative prefixes; "" is the whole workspace."""
    return not under or any(not p or path == p or path.startswith(p + "/") for p in under)


def _change(path: str, status: str, old: FileState | None, new: FileState | None) -> Change:
    sides = [s for s in ((new,) if status == ADDED else (old,) if status == DELETED else (old, new)) if s is not None]
    node = next((s.node for s in sides if s.node), None)
    unread = next((s.unread for s in reversed(sides) if s.unread), None)
    return Change(path, status, any(is_binary(s) for s in sides), node, None if node else unread)


def hidden(before: Snapshot, after: Snapshot, under: Sequence[str] = ()) -> list[str]:
    """The folders either side could not list (`FileState.hides`) that overlap `under`: whether
    anything under them was added, modified or deleted is unknown."""
    found = {path for snap in (before, after) for path, state in snap.items() if state.hides}
    return sorted(path for path in found
                  if path == "." or _within(path, under) or any(_under(p, path) for p in under if p))


def _under(path: str, folder: str) -> bool:
    """`path` lies in `folder` ("." is the workspace itself, which holds everything)."""
    return folder == "." or path == folder or path.startswith(f"{folder}/")


def changes(before: Snapshot, after: Snapshot, under: Sequence[str] = ()) -> list[Change]:
    """Paths added, modified or deleted, sorted by path; `under` narrows to those prefixes. A path
    under a folder that could not be listed is left out (neither there nor gone is known): the
    folder itself is the change, and `hidden` names it."""
    out = []
    unlisted = hidden(before, after)
    for path in sorted(set(before) | set(after)):
        if not _within(path, under) or (unlisted and any(h != path and _under(path, h) for h in unlisted)):
            continue
        old, new = before.get(path), after.get(path)
        if old is None and new is not None:  # a folder that held files before and cannot be listed now: modified
            held = new.hides and any(p != path and _under(p, path) for p in before)
            out.append(_change(path, MODIFIED if held else ADDED, None, new))
        elif new is None and old is not None:
            out.append(_change(path, DELETED, old, None))
        elif old is not None and new is not None and old.digest != new.digest:
            out.append(_change(path, MODIFIED, old, new))
    return out


def shown_path(path: str) -> str:
    """A workspace path as an explanation or a diff names it. The agent chose the name: a line break
    in it is escaped, so it cannot start a line of its own in a report ("✓ matched …")."""
    if path.isprintable():
        return path
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in path)


def _lines(state: FileState | None) -> list[str]:
    if state is None or state.data is None:
        return []
    return state.data.decode("utf-8").splitlines(keepends=True)


def _file_diff(change: Change, before: Snapshot, after: Snapshot, check: Check | None) -> Iterator[str]:
    if change.node == "symlink":
        yield f"Symlink {shown_path(change.path)} {change.status}\n"
        return
    if change.node:
        yield f"Special file {shown_path(change.path)} {change.status}: a {change.node}, never read\n"
        return
    if change.unread:
        yield f"File {shown_path(change.path)} {change.status}: not diffed ({change.unread})\n"
        return
    if change.binary:
        yield f"Binary file {shown_path(change.path)} {change.status}\n"
        return
    old_lines, new_lines = _lines(before.get(change.path)), _lines(after.get(change.path))
    old = "/dev/null" if change.status == ADDED else f"a/{shown_path(change.path)}"
    new = "/dev/null" if change.status == DELETED else f"b/{shown_path(change.path)}"
    for line in unified(old_lines, new_lines, old, new, opcodes(old_lines, new_lines, check)):
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def diff_lines(before: Snapshot, after: Snapshot, found: Sequence[Change] | None = None,
               check: Check | None = None) -> Iterator[str]:
    """The workspace's unified diff, line by line (files not diffed are named with the reason)."""
    for change in changes(before, after) if found is None else found:
        yield from _file_diff(change, before, after, check)


def diff_text(before: Snapshot, after: Snapshot, found: Sequence[Change] | None = None) -> str:
    """The whole unified diff of the workspace (binary files named, not diffed)."""
    return "".join(diff_lines(before, after, found))


def trimmed(lines: Iterator[str], limit: int) -> str:
    """The first `limit` characters of a diff (cut at a line end) and a marker saying how much is
    not shown; the rest is counted as it streams past, never held."""
    kept: list[str] = []
    size = 0
    more_chars = more_lines = 0
    for line in lines:
        if more_lines or size + len(line) > limit:
            more_chars += len(line)
            more_lines += line.count("\n") or 1
            continue
        kept.append(line)
        size += len(line)
    if not more_lines:
        return "".join(kept)
    return ("".join(kept) + f"[… diff trimmed: {more_chars} more characters ({more_lines} lines) not shown; "
            "the check read the whole diff]\n")


def added_lines(before: Snapshot, after: Snapshot, found: Sequence[Change] | None = None,
                check: Check | None = None) -> Iterator[AddedLine]:
    """Every line the diff adds to a text file. When only the old content is unknown, every line
    of the new file is yielded as uncertain (it may or may not be new)."""
    for change in changes(before, after) if found is None else found:
        old_state, new_state = before.get(change.path), after.get(change.path)
        if change.status == DELETED or new_state is None or new_state.node or is_binary(new_state):
            continue  # nothing added, or not text: listed, not searched (the caller counts binaries)
        if new_state.data is None:
            continue  # new content unknown (the caller reports it)
        new = _lines(new_state)
        if old_state is None or old_state.node or is_binary(old_state) or old_state.data is None:
            certain = old_state is None or old_state.unread is None
            yield from (AddedLine(change.path, n, line.rstrip("\n"), certain) for n, line in enumerate(new, 1))
            continue
        for tag, _i1, _i2, j1, j2 in opcodes(_lines(old_state), new, check):
            if tag in ("replace", "insert"):
                yield from (AddedLine(change.path, j + 1, new[j].rstrip("\n")) for j in range(j1, j2))
