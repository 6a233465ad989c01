"""Sandbox tables of `niceeval.toml` and the eval > experiment > project precedence (sandbox.md).

The tables are checked at load (template directories exist, docker-only keys are not given to a
local sandbox); the merge into one `SandboxSpec` happens per (experiment, eval), field by field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._sandbox_spec import SandboxSpec, SandboxSpecError, spec_from_mapping
from ._schema import DOCKER_ONLY_KEYS, ExperimentConfig, ProjectConfig, SandboxTable
from ._wording import ConfigError, table_name

__all__ = ["checked_sandbox_table", "resolve_sandbox"]


def checked_sandbox_table(table: SandboxTable | None, where: str, parts: Sequence[str],
                          root: Path) -> SandboxTable | None:
    """`table` with its template made absolute (against the project root) and checked."""
    if table is None:
        return None
    shown = f"{where}: [{table_name(parts)}]"
    if table.kind == "local":
        wrong = [key for key in DOCKER_ONLY_KEYS if getattr(table, key) is not None]
        if wrong:
            raise ConfigError(f"{shown} {wrong[0]}: only a docker sandbox takes {', '.join(DOCKER_ONLY_KEYS)}; "
                              'remove it or set kind = "docker".')
    if table.workdir is not None and not table.workdir.startswith("/"):
        raise ConfigError(f"{shown} workdir: expected an absolute path inside the container, got {table.workdir!r}.")
    if table.template is None:
        return table
    template = Path(table.template).expanduser()
    template = template if template.is_absolute() else root / template
    if not template.is_dir():
        raise ConfigError(f"{shown} template: {template} is not a directory (template paths are relative to the "
                          f"project root, {root}).")
    return table.model_copy(update={"template": str(template.resolve())})


def _spec(table: SandboxTable | None, root: Path) -> SandboxSpec | None:
    if table is None:
        return None
    return spec_from_mapping(table.given(), root)


def resolve_sandbox(project: ProjectConfig, experiment: ExperimentConfig, eval_sandbox: SandboxSpec | None,
                    eval_id: str) -> SandboxSpec | None:
    """Eval > experiment > project, field by field; None when none of them declares a sandbox."""
    layers = [layer for layer in (_spec(project.sandbox, project.root), _spec(experiment.sandbox, project.root),
                                  eval_sandbox) if layer is not None]
    if not layers:
        return None
    merged: SandboxSpec | None = None
    for layer in layers:
        merged = layer.over(merged)
    assert merged is not None
    try:
        return merged.resolved()
    except SandboxSpecError as error:
        raise ConfigError(f"eval {eval_id!r} in experiment {experiment.id!r}: sandbox {error}.") from None
