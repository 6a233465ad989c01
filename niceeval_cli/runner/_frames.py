"""Where an exception in eval code happened, as the project's author reads it.

The innermost frame is often in the standard library (`json/decoder.py:353`); the useful place
is the deepest frame inside the project. The stored traceback keeps the project's frames and the
innermost one, and folds the rest (NiceEval, asyncio, site-packages) into a count.

An adapter's exception reaches the runner wrapped (`AdapterFailure`, raised from the original
at `t.send`): its story is the wrapper's frames (eval code down to the adapter call) followed by
the original's (into the adapter's callable), told as one stack ending in the original exception.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from ..authoring import AdapterFailure, SourceLocation

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


def original(exc: BaseException) -> BaseException:
    """The exception the user's code raised: an adapter failure's cause, else `exc` itself."""
    if isinstance(exc, AdapterFailure) and exc.__cause__ is not None:
        return exc.__cause__
    return exc


def _stack(exc: BaseException) -> list[traceback.FrameSummary]:
    """Every frame from the test down to where the original exception was raised."""
    frames = list(traceback.extract_tb(exc.__traceback__))
    cause = original(exc)
    if cause is exc:
        return frames
    inner = list(traceback.extract_tb(cause.__traceback__))
    if frames and inner and (frames[-1].filename, frames[-1].name) == (inner[0].filename, inner[0].name):
        frames.pop()  # the frame that wrapped it is where the original passed through
    return frames + inner


def project_frame(exc: BaseException, root: Path) -> SourceLocation | None:
    """The deepest traceback frame inside the project (None when no frame is)."""
    found = None
    for fs in _stack(exc):
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
    frames = _stack(exc)
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
    shown = original(exc)
    lines.extend(line.rstrip("\n") for line in traceback.format_exception_only(type(shown), shown))
    text = "\n".join(lines)
    if len(text) > limit:
        text = text[: limit - 20] + "\n... (trimmed)"
    return text
