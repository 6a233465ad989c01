"""The project (niceeval.toml + .env) and store a command works on."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import UsageError

if TYPE_CHECKING:
    from ..config import ProjectConfig


def load_project(config: Path | None, cwd: Path | None = None) -> ProjectConfig:
    """`--config PATH` or the niceeval.toml found from `cwd` upwards, with its .env loaded."""
    from ..config import load_config, load_credentials

    if config is not None and not config.is_file():
        found = "a directory" if config.is_dir() else "not a regular file" if config.exists() else "no such file"
        raise UsageError(f"--config {config}: {found}; expected the path of a niceeval.toml file")
    project = load_config(config, cwd or Path.cwd())
    load_credentials(project.root)
    return project


def store_path(store: Path | None, config: Path | None) -> Path:
    """`--store PATH`, else the project's store (which needs a valid niceeval.toml)."""
    if store is not None:
        return store
    return load_project(config).store


def reading_settings(store: Path | None, config: Path | None, *, alpha: float | None = None,
                     confidence: float | None = None) -> tuple[Path, float, float]:
    """(store path, alpha, confidence) for a reading command, the project loaded at most once:
    `--store PATH`, else the project's store (which needs a valid niceeval.toml); `--alpha` /
    `--confidence`, else the project's `[stats]` (read when the command reads the project's store
    or names `--config`), else the defaults (statistics.md)."""
    from ..stats import DEFAULT_ALPHA, DEFAULT_CONFIDENCE

    for flag, value, example in (("--alpha", alpha, "0.05"), ("--confidence", confidence, "0.95")):
        if value is not None and not 0.0 < value < 1.0:
            raise UsageError(f"{flag} {value}: expected a number between 0 and 1 (exclusive), e.g. {flag} {example}")
    if store is None or config is not None:
        project = load_project(config)
        path, stats = store or project.store, (project.stats.alpha, project.stats.confidence)
    else:
        path, stats = store, (DEFAULT_ALPHA, DEFAULT_CONFIDENCE)
    return path, alpha if alpha is not None else stats[0], confidence if confidence is not None else stats[1]
