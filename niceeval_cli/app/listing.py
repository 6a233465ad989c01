"""`niceeval list`: the evals discovery finds and the experiments the config declares."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import ProjectConfig
    from ..discovery import DiscoveredEval


@dataclass(frozen=True)
class ProjectListing:
    """What `list --json` prints (`evals`, `experiments`), plus where evals were looked for."""

    evals: list[dict[str, Any]]
    experiments: list[dict[str, Any]]
    where: str  # the eval roots, relative to the project

    def as_json(self) -> dict[str, list[dict[str, Any]]]:
        return {"evals": self.evals, "experiments": self.experiments}


@dataclass(frozen=True)
class _NoEvalOptions:
    """An eval that declares nothing: what an experiment resolves to on its own (precedence lives in config)."""

    id: str = ""
    attempts: int | None = None
    timeout_ms: int | None = None
    pass_rule: object | None = None
    judge: bool | None = None


def relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def eval_record(discovered: DiscoveredEval, root: Path) -> dict[str, Any]:
    definition = discovered.definition
    adapter = definition.adapter.name if definition.adapter is not None else None
    return {
        "id": discovered.id,
        "kind": discovered.kind,
        "tags": list(definition.tags),
        "adapter": adapter,  # null: the experiment's adapter (or none) is used
        "file": relative(discovered.file, root),
        "description": definition.description,
        "attempts": definition.attempts,
        "judge": bool(definition.judge),
    }


def experiment_record(project: ProjectConfig, experiment_id: str, evals: list[DiscoveredEval]) -> dict[str, Any]:
    from ..config import experiment_selects_eval, resolve_slot_settings

    experiment = project.experiments[experiment_id]
    selected = [e.id for e in evals if experiment_selects_eval(experiment, e.id, e.definition.tags)]
    settings = resolve_slot_settings(project, experiment, _NoEvalOptions())
    return {
        "id": experiment.id,
        "description": experiment.description,
        "adapter": experiment.adapter,
        "model": experiment.model,
        "evals": list(experiment.evals) if experiment.evals is not None else None,
        "tags": list(experiment.tags) if experiment.tags is not None else None,
        "attempts": settings.attempts,
        "pass_rule": settings.pass_rule,
        "selected_evals": selected,
    }


def list_project(project: ProjectConfig) -> ProjectListing:
    """Discover the project's evals and resolve each experiment's selection and settings."""
    from ..discovery import discover

    evals = discover(project.eval_roots, project.root)
    return ProjectListing(
        evals=[eval_record(e, project.root) for e in evals],
        experiments=[experiment_record(project, eid, evals) for eid in project.experiments],
        where=", ".join(relative(r, project.root) for r in project.eval_roots),
    )
