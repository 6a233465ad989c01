"""Planning: which slots a run has, and for each whether it executes (and why) or reuses."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from .._fingerprint import PartsTemplate, digest, eval_options_view, fingerprint_parts
from .._selectors import matches_any
from .._shards import ShardSpec
from .._states import AttemptState, GateState, PlanReason
from ..adapters import AdapterLoadError, load_adapter
from ..authoring import Adapter
from ..config import (
    ConfigError,
    ExperimentConfig,
    JudgeSettings,
    ProjectConfig,
    RunOverrides,
    SlotSettings,
    experiment_selects_eval,
    explain_nothing_selected,
    resolve_slot_settings,
    select_experiments,
)
from ..discovery import DiscoveredEval
from ..store import LatestAttempt, Store
from ._sandboxing import SandboxFingerprints


class RerunMode(str, Enum):
    DEFAULT = "default"
    RERUN = "rerun"  # run again what did not pass
    ALL = "all"  # run everything


@dataclass(frozen=True, slots=True)
class PlannedSlot:
    experiment: ExperimentConfig
    eval: DiscoveredEval
    ordinal: int
    settings: SlotSettings
    adapter: Adapter | None
    fingerprint: str
    parts: PartsTemplate  # the parts it shares with its eval's other slots (rendered on demand)
    reason: PlanReason
    reuse_attempt_id: str | None = None
    reuse_run_id: str | None = None
    reuse_state: str | None = None
    reuse_gate: str | None = None
    changed: tuple[str, ...] = field(default=())

    @property
    def execute(self) -> bool:
        return self.reuse_attempt_id is None

    @property
    def fingerprint_json(self) -> str:
        """The canonical JSON of the parts, stored on the attempt: rendered when asked, so a
        plan of 20 000 slots holds one shared template, not 20 000 texts."""
        case = self.eval.case
        return self.parts.render(eval_id=self.eval.id, ordinal=self.ordinal,
                                 case_json=case.canonical_json if case is not None else None)

    @property
    def label(self) -> str:
        return f"{self.experiment.id} · {self.eval.id}#{self.ordinal}"


@dataclass(frozen=True)
class PreviousAttempt:
    """What reuse needs of the latest sealed attempt of a slot."""

    id: str
    run_id: str
    state: str
    gate: str | None
    fingerprint: str
    fingerprint_json: str  # parsed only when the fingerprint changed (to name the changed parts)
    duration_ms: float


def decide(
    previous: PreviousAttempt | None,
    fingerprint: str,
    parts_json: str,
    timeout_ms: int | None,
    mode: RerunMode,
) -> tuple[PlanReason, tuple[str, ...]]:
    """Why a slot executes, or PlanReason.REUSED (config.md, "Reuse")."""
    from .._fingerprint import changed_parts

    if previous is None:
        return PlanReason.NEW, ()
    if mode is RerunMode.ALL:
        return PlanReason.RERUN, ()
    if previous.fingerprint != fingerprint:
        old_parts = json.loads(previous.fingerprint_json)
        return PlanReason.FINGERPRINT_CHANGED, tuple(changed_parts(old_parts, json.loads(parts_json)))
    if previous.state == AttemptState.ERRORED:
        return PlanReason.PREVIOUS_ERRORED, ()
    if previous.state == AttemptState.UNRANKABLE or previous.gate == GateState.UNAVAILABLE:
        return PlanReason.PREVIOUS_UNRANKABLE, ()
    if timeout_ms is not None and previous.duration_ms > timeout_ms:
        return PlanReason.TIMEOUT_CHANGED, ()
    adoptable_on_rerun = previous.state == AttemptState.PASSED or (
        previous.state == AttemptState.SCORED and previous.gate in (GateState.PASSED, GateState.NONE)
    )
    if mode is RerunMode.RERUN and not adoptable_on_rerun:
        return PlanReason.RERUN, ()
    return PlanReason.REUSED, ()


def count_by_reason(slots: Sequence[PlannedSlot]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for slot in slots:
        counts[str(slot.reason)] = counts.get(str(slot.reason), 0) + 1
    return counts


@dataclass(frozen=True)
class RunRequest:
    project: ProjectConfig
    evals: Sequence[DiscoveredEval]
    eval_prefixes: tuple[str, ...] = ()
    experiments: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    overrides: RunOverrides = field(default_factory=RunOverrides)
    mode: RerunMode = RerunMode.DEFAULT
    dry: bool = False
    store_path: Path | None = None
    argv: tuple[str, ...] = ()
    version: str = ""
    shard: ShardSpec | None = None  # --shard K/N: execute only this part of the full plan
    group_id: str | None = None  # --group (or NICEEVAL_RUN_GROUP); default the plan digest
    executor: str | None = None  # --executor / [run] executor; None: the in-process default
    executor_options: Mapping[str, Any] = field(default_factory=dict)  # e.g. ray_address, retry_lost
    budget_usd: float | None = None  # `--budget`: no new attempt once the run's spend reaches it
    keep_sandbox: str | None = None  # `--keep-sandbox failed|all` (docs/sandbox.md)


@dataclass(frozen=True)
class _EvalOptions:
    """An eval's own options as config precedence reads them."""

    id: str
    attempts: int | None
    timeout_ms: int | None
    pass_rule: object | None
    judge: Any
    sandbox: Any = None


def _adapter_for(
    experiment: ExperimentConfig, discovered: DiscoveredEval, cache: dict[str, Adapter | None]
) -> Adapter | None:
    if discovered.definition.adapter is not None:
        return discovered.definition.adapter
    if experiment.id not in cache:
        cache[experiment.id] = (
            load_adapter(experiment.adapter, experiment.options_dict(), experiment.id)
            if experiment.adapter else None
        )
    return cache[experiment.id]


def _judge_version(settings: JudgeSettings | None) -> str | None:
    if settings is None:
        return None
    from ..judge import JUDGE_SCALE_VERSION, PROMPT_VERSION

    return f"prompt-{PROMPT_VERSION}/scale-{JUDGE_SCALE_VERSION}"


#: Fingerprint templates kept while planning (each holds a few short texts).
_TEMPLATES_KEPT = 256


def plan(request: RunRequest, store: Store | None) -> list[PlannedSlot]:
    """Every (experiment, eval, ordinal) slot of the run, each decided: execute (why) or reuse."""
    project = request.project
    experiments = select_experiments(project, request.experiments)
    adapters: dict[str, Adapter | None] = {}
    settings_cache: dict[tuple[Any, ...], SlotSettings] = {}  # evals that resolve alike share settings
    templates: dict[tuple[Any, ...], PartsTemplate] = {}  # the fingerprint parts an eval's slots share
    sandbox_views = SandboxFingerprints()  # a template's digest is read once per plan
    slots: list[PlannedSlot] = []
    for experiment in experiments:
        previous_by_slot = store.latest_attempts(experiment.id) if store is not None else {}
        for discovered in request.evals:
            definition = discovered.definition
            if request.eval_prefixes and not matches_any(request.eval_prefixes, discovered.id):
                continue
            if request.tags and not any(tag in discovered.tags for tag in request.tags):
                continue
            if not experiment_selects_eval(experiment, discovered.id, discovered.tags):
                continue
            judge_repr = repr(definition.judge)
            key = (experiment.id, definition.attempts, definition.timeout_ms, repr(definition.pass_rule),
                   judge_repr, id(definition.sandbox))
            settings = settings_cache.get(key)
            if settings is None:
                options = _EvalOptions(
                    discovered.eval_id, definition.attempts, definition.timeout_ms, definition.pass_rule,
                    definition.judge, definition.sandbox,
                )
                settings = settings_cache[key] = resolve_slot_settings(project, experiment, options, request.overrides)
            try:
                adapter = _adapter_for(experiment, discovered, adapters)
            except AdapterLoadError as exc:
                raise ConfigError(f"{project.file or 'niceeval.toml'}: {exc}") from None
            # Everything the shared parts are made of: evals of one module alike in kind, tags,
            # judge, settings and adapter share one template (20 000 evals, a handful of them).
            template_key = (experiment.id, str(definition.kind), discovered.source_sha256, discovered.tags,
                            judge_repr, id(settings), id(adapter))
            template = templates.get(template_key)
            if template is None:
                shared = fingerprint_parts(
                    eval_id=discovered.id,
                    eval_kind=str(definition.kind),
                    source_sha256=discovered.source_sha256,
                    eval_options=eval_options_view(tags=discovered.tags, judge=definition.judge),
                    experiment_id=experiment.id,
                    adapter_identity=adapter.identity if adapter is not None else {},
                    model=experiment.model,
                    options=experiment.options_dict(),
                    judge=settings.judge.fingerprint_view() if settings.judge is not None else None,
                    judge_version=_judge_version(settings.judge),
                    ordinal=0,
                )
                if settings.sandbox is not None:  # only sandboxed evals: the others' fingerprints stay
                    shared["sandbox"] = sandbox_views(settings.sandbox)
                if len(templates) >= _TEMPLATES_KEPT:  # evals that differ in everything: keep few
                    templates.clear()
                template = templates[template_key] = PartsTemplate(shared)
            case_json = discovered.case.canonical_json if discovered.case is not None else None
            for ordinal in range(settings.attempts):
                parts_json = template.render(eval_id=discovered.id, ordinal=ordinal, case_json=case_json)
                fp = digest(parts_json)
                previous = _previous(previous_by_slot, discovered.id, ordinal)
                if previous is not None and previous.fingerprint != fp and store is not None:
                    previous = dataclasses.replace(
                        previous, fingerprint_json=store.fingerprint_parts_of(previous.id) or "{}")
                reason, changed = decide(previous, fp, parts_json, settings.timeout_ms, request.mode)
                reuse = previous if reason is PlanReason.REUSED else None
                slots.append(PlannedSlot(
                    experiment=experiment,
                    eval=discovered,
                    ordinal=ordinal,
                    settings=settings,
                    adapter=adapter,
                    fingerprint=fp,
                    parts=template,
                    reason=reason,
                    reuse_attempt_id=reuse.id if reuse else None,
                    reuse_run_id=reuse.run_id if reuse else None,
                    reuse_state=reuse.state if reuse else None,
                    reuse_gate=reuse.gate if reuse else None,
                    changed=changed,
                ))
    if not slots:
        raise ConfigError(explain_nothing_selected(
            project, {d.id: d.tags for d in request.evals},
            experiments=request.experiments, eval_prefixes=request.eval_prefixes, tags=request.tags,
        ))
    return slots



def _previous(latest: dict[tuple[str, int], LatestAttempt], eval_id: str, ordinal: int) -> PreviousAttempt | None:
    # Taken out as it is used: its memory goes to the slots planned next, not to the peak.
    row = latest.pop((eval_id, ordinal), None)
    if row is None:
        return None
    return PreviousAttempt(  # the texts every slot repeats are interned: a plan holds them per slot
        id=row.id,
        run_id=sys.intern(row.run_id),
        state=sys.intern(str(row.state)),
        gate=sys.intern(str(row.gate)) if row.gate is not None else None,
        fingerprint=row.fingerprint,
        fingerprint_json="{}",  # read only when the fingerprint changed (`plan`)
        duration_ms=row.duration_ms,
    )
