"""Finding and reading `niceeval.toml`, and the `.env` beside it (credentials only)."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from typing import Any

from dotenv import load_dotenv
from pydantic import ValidationError

from ._file_errors import file_errors, unknown_top_level
from ._sandbox import checked_sandbox_table
from ._schema import (
    CONFIG_FILE_NAME,
    DEFAULT_EXPERIMENT_ID,
    ENV_FILE_NAME,
    ExperimentConfig,
    FileSettings,
    ProjectConfig,
)
from ._wording import ConfigError, strip_value_error, table_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


def find_config(start: Path) -> Path | None:
    """The nearest `niceeval.toml` in `start` or any folder above it."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILE_NAME
        if candidate.is_file():
            return candidate
        if candidate.exists():  # a folder of that name: running with the defaults would hide it
            raise ConfigError(f"{candidate}: is not a file (a folder or a device); the project's configuration "
                              f"must be a TOML file named {CONFIG_FILE_NAME}.")
    return None


def load_credentials(root: Path) -> Path | None:
    """Load `root/.env` without overriding variables already set; the file loaded, or None.

    Read here, not by python-dotenv: a file saved with a byte-order mark (Windows editors) would
    otherwise lose its first variable to a key named "\ufeffNAME", and bytes that are not UTF-8
    would escape as a traceback instead of an error naming the file."""
    env_file = root / ENV_FILE_NAME
    if not env_file.is_file():
        return None
    load_dotenv(stream=io.StringIO(_read_text(env_file, "file of credentials")), override=False)
    return env_file


def load_config(path: Path | None = None, cwd: Path | None = None) -> ProjectConfig:
    """Load and validate the project configuration; no file at all gives the defaults at `cwd`."""
    base = (cwd or Path.cwd()).resolve()
    if path is None:
        path = find_config(base)
        if path is None:
            return _build(None, base, FileSettings())
    else:
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise ConfigError(f"{path}: configuration file not found.")
    path = path.resolve()
    raw = _read_toml(path)
    private = [key for key in raw if key.startswith("_")]  # never settings parameters
    if private:
        raise ConfigError(f"{path}: {unknown_top_level(private[0], raw[private[0]])}")
    try:
        settings = FileSettings(**raw)
    except ValidationError as error:
        raise ConfigError(file_errors(path, error, raw)) from None
    return _build(path, path.parent, settings)


def _read_text(path: Path, what: str) -> str:
    """The file's UTF-8 text, a leading byte-order mark dropped (an editor's, not the user's)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the {what} ({error.strerror}).") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        line = data[: _first_undecodable(data)].count(b"\n") + 1
        raise ConfigError(f"{path}: the {what} is not valid UTF-8 text (line {line}); save it as UTF-8.") from None


def _first_undecodable(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start
    return 0


def _read_toml(path: Path) -> dict[str, Any]:
    text = _read_text(path, "configuration file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML {_toml_position(error)}.") from None


def _toml_position(error: Exception) -> str:
    text = str(error)
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", text)
    if found:
        detail = text[: found.start()]
        return f"at line {found.group(1)}, column {found.group(2)}: {detail}"
    found = re.search(r"\s*\(at end of document\)$", text)
    if found:
        return f"at the end of the file: {text[: found.start()]}"
    return f": {text}"


def _build(path: Path | None, root: Path, settings: FileSettings) -> ProjectConfig:
    where = str(path) if path else CONFIG_FILE_NAME
    experiments: dict[str, ExperimentConfig] = {}
    for experiment_id, table in settings.experiments.items():
        problem = _experiment_id_problem(experiment_id)
        if problem:
            raise ConfigError(f"{where}: [{table_name(('experiments', experiment_id))}] {problem}.")
        try:
            experiment = ExperimentConfig(id=experiment_id, **table.model_dump())
        except ValidationError as error:  # only `options` can still fail here
            details = "; ".join(strip_value_error(e["msg"]) for e in error.errors())
            shown_table = table_name(("experiments", experiment_id, "options"))
            raise ConfigError(f"{where}: [{shown_table}] {details}.") from None
        sandbox = checked_sandbox_table(experiment.sandbox, where, ("experiments", experiment_id, "sandbox"), root)
        experiments[experiment_id] = experiment.model_copy(update={"sandbox": sandbox})
    if not experiments:
        experiments[DEFAULT_EXPERIMENT_ID] = ExperimentConfig(id=DEFAULT_EXPERIMENT_ID)
    project = settings.project
    return ProjectConfig(
        file=path,
        root=root,
        eval_roots=tuple(_under(root, entry) for entry in project.evals),
        store=_under(root, project.store),
        attempts=project.attempts,
        max_concurrency=project.max_concurrency,
        timeout_ms=project.timeout_ms,
        pass_rule=project.pass_rule,
        judge=settings.judge,
        sandbox=checked_sandbox_table(settings.sandbox, where, ("sandbox",), root),
        experiments=experiments,
        executor=settings.run.executor,
        ray_address=settings.run.ray_address,
        max_attempts=settings.run.max_attempts,
        stats=settings.stats,
        prices=dict(settings.prices),
    )


def _under(root: Path, entry: str) -> Path:
    candidate = Path(entry).expanduser()
    return candidate if candidate.is_absolute() else root / candidate


def _experiment_id_problem(experiment_id: str) -> str | None:
    if not experiment_id.strip():
        return "an experiment id must not be empty"
    if experiment_id != experiment_id.strip():
        return "an experiment id must not start or end with spaces"
    if any(not part for part in experiment_id.split("/")):
        return 'an experiment id must not start or end with "/" or contain "//"'
    return None
