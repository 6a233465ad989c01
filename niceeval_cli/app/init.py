"""`niceeval init`: write a minimal project that runs as it is; never overwrite a file."""

from __future__ import annotations

from pathlib import Path

from .._errors import UsageError
from ..reports.data import InitEntry, InitFile, InitReport
from ._templates import CONFIG_TEMPLATE, EXAMPLE_TEMPLATE


def init_files(root: Path) -> list[InitFile]:
    from ..config import CONFIG_FILE_NAME

    return [
        InitFile(root / CONFIG_FILE_NAME, CONFIG_TEMPLATE),
        InitFile(root / "evals" / "example.py", EXAMPLE_TEMPLATE),
    ]


def init_project(cwd: Path) -> InitReport:
    """Write what is missing, in order; report what was written and what was skipped."""
    from .listing import relative

    report = InitReport()
    for item in init_files(cwd):
        shown = relative(item.path, cwd)
        if item.path.exists():
            report.entries.append(InitEntry(shown, written=False))
            continue
        try:
            item.path.parent.mkdir(parents=True, exist_ok=True)  # a file in the folder's place: an OSError
            try:
                with item.path.open("x", encoding="utf-8") as handle:  # "x": never replace a file
                    handle.write(item.content)
            except FileExistsError:
                report.entries.append(InitEntry(shown, written=False))
                continue
        except OSError as error:  # a folder that cannot be written is the user's to fix, not a bug
            done = f" (already written: {', '.join(report.written)})" if report.written else ""
            why = ("a file stands where its folder should be" if isinstance(error, FileExistsError)
                   else error.strerror or str(error))
            raise UsageError(f"init: cannot write {shown} ({why}){done}; run `niceeval init` in a folder you "
                             "can write.") from None
        report.entries.append(InitEntry(shown, written=True))
    return report
