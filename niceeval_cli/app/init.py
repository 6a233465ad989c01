"""`niceeval init`: write a minimal project that runs as it is; never overwrite a file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ._templates import CONFIG_TEMPLATE, EXAMPLE_TEMPLATE


@dataclass(frozen=True)
class InitFile:
    path: Path
    content: str


@dataclass(frozen=True)
class InitEntry:
    path: str  # relative to the folder `init` ran in
    written: bool  # False: it already existed and was left unchanged


@dataclass(frozen=True)
class InitReport:
    entries: list[InitEntry] = field(default_factory=list)  # in the order they were considered

    @property
    def written(self) -> list[str]:
        return [e.path for e in self.entries if e.written]


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
        item.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with item.path.open("x", encoding="utf-8") as handle:  # "x": never replace a file
                handle.write(item.content)
        except FileExistsError:
            report.entries.append(InitEntry(shown, written=False))
            continue
        report.entries.append(InitEntry(shown, written=True))
    return report
