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
        raise UsageError(f"--config {config}: no such file; expected a niceeval.toml")
    project = load_config(config, cwd or Path.cwd())
    load_credentials(project.root)
    return project


def store_path(store: Path | None, config: Path | None) -> Path:
    """`--store PATH`, else the project's store (which needs a valid niceeval.toml)."""
    if store is not None:
        return store
    return load_project(config).store
