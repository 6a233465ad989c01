"""`niceeval list`: the evals discovery finds and the experiments the config declares."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..reports.data import ProjectListing

if TYPE_CHECKING:
    from ..config import ProjectConfig
    from ..discovery import DiscoveredEval


@dataclass(frozen=True)
class _NoEvalOptions:
    """An eval that declares nothing: what an experiment resolves to on its own (precedence lives in config)."""

    id: str = ""
    attempts: int | None = None
    timeout_ms: int | None = None
    pass_rule: object | None = None
    judge: bool | None = None


@functools.lru_cache(maxsize=4096)  # every case of an eval lives in one file: resolve it once
def relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def eval_record(discovered: DiscoveredEval, root: Path) -> dict[str, Any]:
    """One eval; for an eval with cases, the eval itself (its id without a case, its own tags)."""
    definition = discovered.definition
    adapter = definition.adapter.name if definition.adapter is not None else None
    return {
        "id": discovered.eval_id,
        "kind": discovered.kind,
        "tags": list(definition.tags),
        "adapter": adapter,  # null: the experiment's adapter (or none) is used
        "file": relative(discovered.file, root),
        "description": definition.description,
        "attempts": definition.attempts,
        "judge": bool(definition.judge),
        "cases": len(definition.cases) if definition.cases is not None else None,
    }


def case_record(discovered: DiscoveredEval, root: Path) -> dict[str, Any]:
    """One case eval (`list --cases`): its id `<eval id>[<case id>]`, the eval's and its own tags."""
    record = eval_record(discovered, root)
    case = discovered.case
    record.update(
        id=discovered.id,
        tags=list(discovered.tags),
        cases=None,
        eval_id=discovered.eval_id,
        case_id=case.id if case is not None else None,
        metadata=dict(case.metadata) if case is not None and case.metadata is not None else None,
    )
    return record


def _grouped(evals: list[DiscoveredEval]) -> list[DiscoveredEval]:
    """The first case eval of each eval stands for it (discovery keeps an eval's cases together)."""
    first: dict[str, DiscoveredEval] = {}
    for discovered in evals:
        first.setdefault(discovered.eval_id, discovered)
    return list(first.values())


def experiment_record(
    project: ProjectConfig, experiment_id: str, evals: list[DiscoveredEval], *, cases: bool = False
) -> dict[str, Any]:
    """`selected_evals` names what the listing lists: evals (one with any case selected), or case evals."""
    from ..config import experiment_selects_eval, resolve_slot_settings

    experiment = project.experiments[experiment_id]
    chosen = [e for e in evals if experiment_selects_eval(experiment, e.id, e.tags)]
    selected = [e.id for e in chosen] if cases else [e.eval_id for e in _grouped(chosen)]
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
        "selected_cases": sum(e.case is not None for e in chosen),
    }


def list_project(project: ProjectConfig, *, cases: bool = False) -> ProjectListing:
    """Discover the project's evals and resolve each experiment's selection and settings."""
    from ..authoring import positional_warning
    from ..discovery import discover

    evals = discover(project.eval_roots, project.root)
    grouped = _grouped(evals)
    if cases:
        records = [case_record(e, project.root) for e in evals]
    else:
        records = [eval_record(e, project.root) for e in grouped]
    return ProjectListing(
        evals=records,
        experiments=[experiment_record(project, eid, evals, cases=cases) for eid in project.experiments],
        where=", ".join(relative(r, project.root) for r in project.eval_roots),
        warnings=[positional_warning(e.eval_id) for e in grouped if e.definition.positional_case_ids],
        cases=cases,
    )
