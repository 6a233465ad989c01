"""Where an exception in eval code happened, as the project's author reads it.

The innermost frame is often in the standard library (`json/decoder.py:353`); the useful place
is the deepest frame inside the project. The stored traceback keeps the project's frames and the
innermost one, and folds the rest (NiceEval, asyncio, site-packages) into a count.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from ..authoring import SourceLocation

TRACEBACK_LIMIT = 16 * 1024
_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_THIRD_PARTY = frozenset({"site-packages", "dist-packages", ".venv", "venv", ".tox", ".nox"})


def in_project(filename: str, root: Path) -> bool:
    if filename.startswith("<"):
        return False
    try:
        path = Path(filename).resolve()
        rel = path.relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    if path.is_relative_to(_PACKAGE_DIR):
        return False
    return not any(part in _THIRD_PARTY for part in rel.parts)


def project_frame(exc: BaseException, root: Path) -> SourceLocation | None:
    """The deepest traceback frame inside the project (None when no frame is)."""
    found = None
    for fs in traceback.extract_tb(exc.__traceback__):
        if in_project(fs.filename, root):
            found = SourceLocation(fs.filename, fs.lineno)
    return found


def _shown(filename: str, root: Path) -> str:
    try:
        return Path(filename).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return filename


def project_traceback(exc: BaseException, root: Path, limit: int = TRACEBACK_LIMIT) -> str:
    """The traceback trimmed to the project's frames (and the innermost one), bounded in size."""
    frames = traceback.extract_tb(exc.__traceback__)
    lines = ["Traceback (most recent call last):"]
    skipped = 0
    for i, fs in enumerate(frames):
        if in_project(fs.filename, root) or i == len(frames) - 1:
            if skipped:
                lines.append(f"  ... {skipped} frame(s) outside the project")
                skipped = 0
            lines.append(f'  File "{_shown(fs.filename, root)}", line {fs.lineno}, in {fs.name}')
            if fs.line:
                lines.append(f"    {fs.line.strip()}")
        else:
            skipped += 1
    lines.extend(line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc))
    text = "\n".join(lines)
    if len(text) > limit:
        text = text[: limit - 20] + "\n... (trimmed)"
    return text
