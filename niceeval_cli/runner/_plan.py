"""Planning: which slots a run has, and for each whether it executes (and why) or reuses."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from .._fingerprint import PartsTemplate, digest, eval_options_view, fingerprint_parts
from .._selectors import matches_any
from .._shards import ShardSpec
from .._states import AttemptState, GateState, PlanReason
from ..adapters import AdapterLoadError, check_experiment, load_adapter
from ..authoring import Adapter
from ..config import (
    DEFAULT_TRACE_FLUSH_MS,
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
from ..outcomes import IntervalRule
from ..sandbox import should_keep
from ..store import EvalRef, LatestAttempt, Store
from ._calibration import calibration_of
from ._sandboxing import SandboxFingerprints, commands_run_here
from ._sut import SutIdentities

if TYPE_CHECKING:
    from ..judge import Calibration

T = TypeVar("T")


class RerunMode(str, Enum):
    DEFAULT = "default"
    RERUN = "rerun"  # run again what did not pass
    ALL = "all"  # run everything


class SlotShape(NamedTuple):
    """What the slots of one eval share in one experiment, with every eval alike in what makes
    them: held once per shape, not once per slot (20 000 evals of one module are one shape)."""

    settings: SlotSettings
    adapter: Adapter | None
    parts: PartsTemplate  # the fingerprint parts its slots share (a slot's are rendered on demand)
    config_only: bool = False  # its system under test is identified by configuration only (`_sut.py`)


class PlannedSlot:
    """One slot of the plan: an `ExecutingSlot` or a `ReusedSlot`. Nothing changes it after
    planning. Two slots are equal only when they are the same slot object.

    A run keeps one per slot for its whole length, so each holds its few references and
    nothing it can work out again: its fingerprint is rendered and hashed from the shape's
    template when asked (once per executed slot, by its spec)."""

    __slots__ = ("eval", "experiment", "ordinal", "shape")

    execute: bool  # a class attribute: read for every slot of a plan
    reason: PlanReason
    changed: tuple[str, ...]  # FINGERPRINT_CHANGED: the parts that changed since the previous attempt

    def __init__(self, experiment: ExperimentConfig, eval: DiscoveredEval, ordinal: int, shape: SlotShape) -> None:
        self.experiment = experiment  # not the shape's: the per-slot loops of a re-run read it
        self.eval = eval
        self.ordinal = ordinal
        self.shape = shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label}, {self.reason})"

    @property
    def reuse_attempt_id(self) -> str | None:
        """A ReusedSlot's: the attempt it reuses (and that attempt's run, state and gate)."""
        return None

    @property
    def reuse_run_id(self) -> str | None:
        return None

    @property
    def reuse_state(self) -> str | None:
        return None

    @property
    def reuse_gate(self) -> str | None:
        return None

    @property
    def settings(self) -> SlotSettings:
        return self.shape.settings

    @property
    def adapter(self) -> Adapter | None:
        return self.shape.adapter

    @property
    def parts(self) -> PartsTemplate:
        return self.shape.parts

    @property
    def fingerprint_json(self) -> str:
        """The canonical JSON of the parts, stored on the attempt: rendered when asked, so a
        plan of 20 000 slots holds one shared template, not 20 000 texts."""
        case = self.eval.case
        return self.parts.render(eval_id=self.eval.identity_id, ordinal=self.ordinal,
                                 case_json=case.fingerprint_json if case is not None else None)

    @property
    def fingerprint(self) -> str:
        """The slot's fingerprint, hashed when asked (a reused slot's is its attempt's)."""
        return digest(self.fingerprint_json)

    @property
    def label(self) -> str:
        return f"{self.experiment.id} · {self.eval.id}#{self.ordinal}"


class ExecutingSlot(PlannedSlot):
    """A slot that executes, and why (`reason`)."""

    __slots__ = ("changed", "reason")

    execute = True

    def __init__(self, experiment: ExperimentConfig, eval: DiscoveredEval, ordinal: int, shape: SlotShape,
                 reason: PlanReason, changed: tuple[str, ...] = ()) -> None:
        self.experiment = experiment  # PlannedSlot.__init__'s, inline: a plan makes 20 000
        self.eval = eval
        self.ordinal = ordinal
        self.shape = shape
        self.reason = reason
        self.changed = changed


#: (run id, state, gate) of a reused attempt: the slots reusing attempts of one run and outcome
#: share one tuple (`_Shapes.priors`), as they share their shape.
_Prior = tuple[str, str, str | None]


class ReusedSlot(PlannedSlot):
    """A slot that reuses an earlier attempt (PlanReason.REUSED): that attempt's id, and its run,
    state and gate."""

    __slots__ = ("_prior", "attempt_id")

    execute = False
    reason = PlanReason.REUSED
    changed = ()

    def __init__(self, experiment: ExperimentConfig, eval: DiscoveredEval, ordinal: int, shape: SlotShape,
                 attempt_id: str, prior: _Prior) -> None:
        self.experiment = experiment  # PlannedSlot.__init__'s, inline: a re-run makes 20 000
        self.eval = eval
        self.ordinal = ordinal
        self.shape = shape
        self.attempt_id = attempt_id
        self._prior = prior

    @property
    def reuse_attempt_id(self) -> str:
        return self.attempt_id

    @property
    def reuse_run_id(self) -> str:
        return self._prior[0]

    @property
    def reuse_state(self) -> str:
        return self._prior[1]

    @property
    def reuse_gate(self) -> str | None:
        return self._prior[2]


#: A scored attempt's gates a `--rerun` adopts (it runs again what did not pass).
_GATES_ADOPTED_ON_RERUN = (GateState.PASSED, GateState.NONE)


def decide(
    previous: LatestAttempt | None, fingerprint: str, timeout_ms: int | None, mode: RerunMode
) -> PlanReason:
    """Why a slot executes, or PlanReason.REUSED (config.md, "Reuse"); `previous` is the slot's
    latest sealed attempt. For FINGERPRINT_CHANGED, `changed_parts_of` names what changed."""
    if previous is None:
        return PlanReason.NEW
    if mode is RerunMode.ALL:
        return PlanReason.RERUN
    if previous.fingerprint != fingerprint:
        return PlanReason.FINGERPRINT_CHANGED
    state, gate = previous.state, previous.gate
    if state == AttemptState.ERRORED:
        return PlanReason.PREVIOUS_ERRORED
    if state == AttemptState.UNRANKABLE or gate == GateState.UNAVAILABLE:
        return PlanReason.PREVIOUS_UNRANKABLE
    if timeout_ms is not None and previous.duration_ms > timeout_ms:
        return PlanReason.TIMEOUT_CHANGED
    if mode is RerunMode.RERUN and not (
        state == AttemptState.PASSED or (state == AttemptState.SCORED and gate in _GATES_ADOPTED_ON_RERUN)
    ):
        return PlanReason.RERUN
    return PlanReason.REUSED


def changed_parts_of(previous_parts_json: str | None, parts_json: str) -> tuple[str, ...]:
    """The parts a changed fingerprint differs in (the previous attempt's stored parts, when read)."""
    from .._fingerprint import changed_parts

    return tuple(changed_parts(json.loads(previous_parts_json or "{}"), json.loads(parts_json)))


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
    #: The discovered evals are the run's to let go of: at its release point (planned and
    #: recorded) the runner empties `evals`, whose records the planned slots now hold, so a
    #: 20 000-eval run's discovery records go with the slots instead of sitting under the end of
    #: the run. `app.run.build_request` hands them over; a caller that runs a request twice does not.
    hand_over_evals: bool = False
    until_decided: UntilDecided | None = None  # `--until-decided` (statistics.md)


@dataclass(frozen=True)
class UntilDecided:
    """`run --until-decided`: a unit whose numeric pass_rule lies inside its Wilson interval at
    `confidence` gets one more attempt, up to `max_attempts` attempts in all."""

    max_attempts: int
    confidence: float


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
    experiment: ExperimentConfig, discovered: DiscoveredEval, cache: dict[str, Adapter | None], root: Path
) -> Adapter | None:
    if discovered.definition.adapter is not None:
        return discovered.definition.adapter
    if experiment.id not in cache:
        adapter = load_adapter(experiment.adapter, experiment.options_dict(), experiment.id, root=root) \
            if experiment.adapter else None
        if adapter is not None:
            check_experiment(adapter, experiment.id, experiment.model)
        cache[experiment.id] = adapter
    return cache[experiment.id]


def _judge_version(settings: JudgeSettings | None) -> str | None:
    if settings is None:
        return None
    from ..judge import JUDGE_SCALE_VERSION, PROMPT_VERSION

    return f"prompt-{PROMPT_VERSION}/scale-{JUDGE_SCALE_VERSION}"


#: Slot shapes kept while planning (each holds a fingerprint template: a few short texts).
_SHAPES_KEPT = 256


def plan(request: RunRequest, store: Store | None) -> list[PlannedSlot]:
    """Every (experiment, eval, ordinal) slot of the run, each decided: execute (why) or reuse."""
    project = request.project
    shapes = _Shapes(request, store)
    slots: list[PlannedSlot] = []
    for experiment in select_experiments(project, request.experiments):
        for batch in _batches(_selected(request, experiment), _LOOKUP_BATCH):
            refs = [_ref(d) for d in batch]  # made once per batch: each eval's id is made when read
            ids = [ref.eval_id for ref in refs]
            latest = store.latest_attempts(experiment.id, refs) if store is not None else {}
            _plan_batch(store, experiment, batch, ids, latest, shapes.of, shapes.priors, request, slots)
    if not slots:
        raise ConfigError(explain_nothing_selected(
            project, {d.id: d.tags for d in request.evals},
            experiments=request.experiments, eval_prefixes=request.eval_prefixes, tags=request.tags,
        ))
    return slots


def _ref(discovered: DiscoveredEval) -> EvalRef:
    """Its id in this run and its identity, under which its history is found (authoring.md)."""
    case = discovered.case
    return tuple.__new__(EvalRef, (discovered.id, discovered.module.base, discovered.definition.name,
                                   case.id if case is not None else None))  # no Python frame per eval


#: Evals whose previous attempts are looked up at once: a 20 000-eval re-run holds a batch of
#: previous attempts at a time, not all of them (its peak memory stays under the fresh run's).
_LOOKUP_BATCH = 512


def _selected(request: RunRequest, experiment: ExperimentConfig) -> Iterator[DiscoveredEval]:
    prefixes, tags = request.eval_prefixes, request.tags
    selects_all = experiment.evals is None and experiment.tags is None
    if not prefixes and not tags and selects_all:
        yield from request.evals  # no id made (an eval's id is made when read)
        return
    for discovered in request.evals:
        eval_id = discovered.id
        if prefixes and not matches_any(prefixes, eval_id):
            continue
        if tags and not any(tag in discovered.tags for tag in tags):
            continue
        if not selects_all and not experiment_selects_eval(experiment, eval_id, discovered.tags):
            continue
        yield discovered


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def plan_ordinal(request: RunRequest, store: Store, known: Sequence[PlannedSlot], ordinal: int) -> list[PlannedSlot]:
    """One slot at `ordinal` for the eval of each slot in `known` (all of one experiment), decided
    as `plan` decides that ordinal, in the shape of the slot given: `run --until-decided` adds
    an ordinal a round, and neither plans the ordinals before it again nor reads their history
    (each round paid for every earlier one: a run quadratic in its attempts), nor makes again
    what the run's start made once (settings, adapter, the system under test's identity)."""
    slots: list[PlannedSlot] = []
    if not known:
        return slots
    experiment = known[0].experiment
    shapes = {id(s.eval): s.shape for s in known}
    for batch in _batches((s.eval for s in known), _LOOKUP_BATCH):
        refs = [_ref(d) for d in batch]
        latest = store.latest_attempts(experiment.id, refs, ordinal)
        _plan_batch(store, experiment, batch, [ref.eval_id for ref in refs], latest,
                    lambda _, discovered: shapes[id(discovered)], {}, request, slots, range(ordinal, ordinal + 1))
    return slots


def _plan_batch(
    store: Store | None, experiment: ExperimentConfig, batch: Sequence[DiscoveredEval], ids: Sequence[str],
    latest: dict[tuple[str, int], LatestAttempt], shape_of: Callable[[ExperimentConfig, DiscoveredEval], SlotShape],
    shared_priors: dict[_Prior, _Prior], request: RunRequest, slots: list[PlannedSlot],
    ordinals: range | None = None,
) -> None:
    """Decide the slots of `batch` (the experiment's evals, whose ids are `ids` and whose
    previous attempts are `latest`): each eval's configured ordinals, or `ordinals`."""
    priors = shared_priors.setdefault  # what reused slots repeat (run, state, gate): held once, not per slot
    keep = request.keep_sandbox  # `--keep-sandbox`: what it would keep is run again, not reused
    mode = request.mode
    for discovered, eval_id in zip(batch, ids, strict=True):
        shape = shape_of(experiment, discovered)
        parts, timeout_ms = shape.parts, shape.settings.timeout_ms
        case_json = discovered.case.fingerprint_json if discovered.case is not None else None
        for ordinal in range(shape.settings.attempts) if ordinals is None else ordinals:
            # Taken out as it is used: its memory goes to the slots planned next, not to the peak.
            previous = latest.pop((eval_id, ordinal), None)
            if previous is None:  # seen first: nothing to compare, so nothing rendered or hashed
                slots.append(ExecutingSlot(experiment, discovered, ordinal, shape, PlanReason.NEW))
                continue
            parts_json = parts.render(eval_id=discovered.identity_id, ordinal=ordinal, case_json=case_json)
            reason = decide(previous, digest(parts_json), timeout_ms, mode)
            if reason is PlanReason.REUSED and keep is not None and shape.settings.sandbox is not None \
                    and should_keep(keep, previous.state):
                reason = PlanReason.KEEP_SANDBOX  # a reused attempt has no workspace to keep: make one
            if reason is PlanReason.REUSED:
                prior: _Prior = (previous.run_id, previous.state, previous.gate)
                slots.append(ReusedSlot(experiment, discovered, ordinal, shape, previous.id, priors(prior, prior)))
                continue
            changed: tuple[str, ...] = ()
            if store is not None and reason is PlanReason.FINGERPRINT_CHANGED:
                changed = changed_parts_of(store.fingerprint_parts_of(previous.id), parts_json)
            slots.append(ExecutingSlot(experiment, discovered, ordinal, shape, reason, changed))


class _Shapes:
    """Each eval's SlotShape in an experiment, made once per distinct shape: settings, adapter
    and fingerprint template, from the eval's options, source, tags and kind."""

    def __init__(self, request: RunRequest, store: Store | None) -> None:
        self.request = request
        self.store = store
        self.calibration: Calibration | None = None  # the gate's figures, read once if a judge turns the gate on
        self.adapters: dict[str, Adapter | None] = {}
        self.settings: dict[tuple[Any, ...], SlotSettings] = {}  # evals that resolve alike share settings
        self.shapes: dict[tuple[Any, ...], SlotShape] = {}
        self.sandbox_views = SandboxFingerprints()  # a template's digest is read once per plan
        self.sut = SutIdentities(request.project, request.store_path or request.project.store)
        self.priors: dict[_Prior, _Prior] = {}  # what ReusedSlots share

    def _cleared(self, judge: JudgeSettings) -> list[str]:
        if self.calibration is None:
            from ..judge import Calibration

            read = calibration_of(self.store, (judge,)) if self.store is not None else None
            self.calibration = read or Calibration()
        return list(self.calibration.cleared(judge))

    def of(self, experiment: ExperimentConfig, discovered: DiscoveredEval) -> SlotShape:
        definition = discovered.definition
        # Everything a shape is made of, in one key (the kind is a str enum: it keys like its
        # value). The adapter is the eval's own, else the experiment's.
        key = (experiment.id, definition.attempts, definition.timeout_ms, repr(definition.pass_rule),
               repr(definition.judge), id(definition.sandbox), id(definition.adapter), definition.kind,
               discovered.source_sha256, discovered.tags)
        shape = self.shapes.get(key)
        if shape is None:
            if len(self.shapes) >= _SHAPES_KEPT:  # evals that differ in everything: keep few
                self.shapes.clear()
            shape = self.shapes[key] = self._make(experiment, discovered, key[:6])
        return shape

    def _make(
        self, experiment: ExperimentConfig, discovered: DiscoveredEval, settings_key: tuple[Any, ...]
    ) -> SlotShape:
        project = self.request.project
        definition = discovered.definition
        settings = self.settings.get(settings_key)
        if settings is None:
            options = _EvalOptions(
                discovered.eval_id, definition.attempts, definition.timeout_ms, definition.pass_rule,
                definition.judge, definition.sandbox,
            )
            settings = resolve_slot_settings(project, experiment, options, self.request.overrides)
            deciding = self.request.until_decided
            if deciding is not None and isinstance(settings.pass_rule, float):
                # decided by its interval (statistics.md): the slots store the rule the run folds by
                settings = settings.model_copy(
                    update={"pass_rule": IntervalRule(settings.pass_rule, deciding.confidence)})
            self.settings[settings_key] = settings
        try:
            adapter = _adapter_for(experiment, discovered, self.adapters, project.root)
        except AdapterLoadError as exc:
            raise ConfigError(f"{project.file or 'niceeval.toml'}: {exc}") from None
        sut = self.sut.of(experiment, adapter, own=definition.adapter is not None,
                          on_host=commands_run_here(settings.sandbox))
        shared = fingerprint_parts(
            eval_id=discovered.identity_id,  # its identity, not its displayed id (authoring.md)
            eval_kind=str(definition.kind),
            sources=dict(discovered.sources),
            eval_options=eval_options_view(tags=discovered.tags, judge=definition.judge),
            experiment_id=experiment.id,
            adapter_identity=adapter.identity if adapter is not None else {},
            model=experiment.model,
            options=experiment.options_dict(),
            judge=settings.judge.fingerprint_view() if settings.judge is not None else None,
            judge_version=_judge_version(settings.judge),
            ordinal=0,
            sut=sut.parts,
        )
        if settings.sandbox is not None:  # only sandboxed evals: the others' fingerprints stay
            shared["sandbox"] = self.sandbox_views(settings.sandbox)
        if settings.traces is not None:  # what a turn observes changes: earlier attempts are not reused
            shared["traces"] = settings.traces
            if settings.trace_flush_ms != DEFAULT_TRACE_FLUSH_MS:
                # A span that ends later than this leaves the trace incomplete, and the tool
                # assertions unavailable. (Left out at the default: those results keep their fingerprint.)
                shared["trace_flush_ms"] = settings.trace_flush_ms
        if settings.judge is not None and settings.judge.min_human_kappa is not None:
            # The gate lets a judge decide by the labels in the store when the run starts: a
            # result is reused only while the identities its judge cleared still clear it.
            shared["calibration"] = self._cleared(settings.judge)
        return SlotShape(settings, adapter, PartsTemplate(shared), sut.config_only)
