"""What changed in a workspace since its snapshot, and the diff evidence (pure)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ._workspace import FileState, Snapshot

__all__ = ["ADDED", "DELETED", "MODIFIED", "STATUSES", "Change", "added_lines", "changes", "diff_text", "is_binary"]

ADDED, MODIFIED, DELETED = "added", "modified", "deleted"
STATUSES = (ADDED, MODIFIED, DELETED)


@dataclass(frozen=True)
class Change:
    path: str
    status: str  # added | modified | deleted
    binary: bool


def is_binary(state: FileState | None) -> bool:
    if state is None:
        return False
    if state.data is None:
        return True  # too large to diff: listed, not diffed
    if b"\0" in state.data[:8192]:
        return True
    try:
        state.data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def changes(before: Snapshot, after: Snapshot, under: Sequence[str] = ()) -> list[Change]:
    """Paths added, modified or deleted, sorted by path; `under` narrows to those prefixes."""
    out = []
    for path in sorted(set(before) | set(after)):
        if under and not any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in under):
            continue
        old, new = before.get(path), after.get(path)
        if old is None and new is not None:
            out.append(Change(path, ADDED, is_binary(new)))
        elif new is None and old is not None:
            out.append(Change(path, DELETED, is_binary(old)))
        elif old is not None and new is not None and old.digest != new.digest:
            out.append(Change(path, MODIFIED, is_binary(old) or is_binary(new)))
    return out


def _lines(state: FileState | None) -> list[str]:
    if state is None or state.data is None:
        return []
    return state.data.decode("utf-8").splitlines(keepends=True)


def _file_diff(change: Change, before: Snapshot, after: Snapshot) -> Iterator[str]:
    if change.binary:
        yield f"Binary file {change.path} {change.status}\n"
        return
    old = "/dev/null" if change.status == ADDED else f"a/{change.path}"
    new = "/dev/null" if change.status == DELETED else f"b/{change.path}"
    for line in difflib.unified_diff(_lines(before.get(change.path)), _lines(after.get(change.path)), old, new):
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def diff_text(before: Snapshot, after: Snapshot, found: Sequence[Change] | None = None) -> str:
    """The whole unified diff of the workspace (binary files named, not diffed)."""
    found = changes(before, after) if found is None else found
    return "".join(line for change in found for line in _file_diff(change, before, after))


def added_lines(before: Snapshot, after: Snapshot) -> list[tuple[str, int, str]]:
    """(path, line number in the new file, text) for every line the diff adds."""
    out: list[tuple[str, int, str]] = []
    for change in changes(before, after):
        if change.binary or change.status == DELETED:
            continue
        if change.status == ADDED:  # every line is new: no matching needed
            out.extend((change.path, n, line.rstrip("\n")) for n, line in enumerate(_lines(after.get(change.path)), 1))
            continue
        matcher = difflib.SequenceMatcher(a=_lines(before.get(change.path)), b=_lines(after.get(change.path)),
                                          autojunk=False)
        new = _lines(after.get(change.path))
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
            if tag in ("replace", "insert"):
                out.extend((change.path, j + 1, new[j].rstrip("\n")) for j in range(j1, j2))
    return out
