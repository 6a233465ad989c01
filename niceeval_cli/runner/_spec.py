"""A slot as plain data (`SlotSpec`), and the live objects it needs kept beside it (`LiveHandles`).

The spec is what crosses a process boundary: ids, where to re-import the eval, the frozen
settings as plain data, the fingerprint. A worker elsewhere (a Ray actor, a subprocess) rebuilds
the live objects from the spec alone with `resolve_handles`; the in-process executor is handed
the driver's own handles instead (same objects, no re-import).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from .._fingerprint import digest
from .._states import EvalKind, PlanReason
from ..adapters import load_adapter
from ..authoring import Adapter, Case, EvalDefinition, Registration
from ..config import SlotSettings
from ..discovery import import_eval_file
from ._plan import PlannedSlot

#: (registration, match, material) → awaitable that settles `registration.result`.
JudgeGrader = Callable[[Registration, Any, Any], Any]


@dataclass(frozen=True, slots=True)
class SlotSpec:
    """One slot to execute, serialisable (every field is plain data; `to_json`-able)."""

    run_id: str
    experiment_id: str
    eval_id: str
    ordinal: int
    kind: EvalKind
    eval_file: str  # absolute path of the eval module: re-imported by path, never by sys.path
    eval_attr: str  # the module attribute holding the EvalDefinition
    project_root: str
    adapter_ref: str | None  # the experiment's `adapter` ("http", "module:attr"); None = none
    eval_has_adapter: bool  # the eval brings its own adapter (define_eval(adapter=...))
    model: str | None
    options: Mapping[str, Any]  # the experiment's options, plain JSON data
    settings: Mapping[str, Any]  # SlotSettings as plain JSON data
    fingerprint: str
    fingerprint_json: str
    plan_reason: PlanReason
    price: Mapping[str, float | None] | None = None  # [prices."MODEL"] of the model, plain data
    case_id: str | None = None  # a case of an eval with cases (datasets.md); eval_id is "<eval>[<case>]"
    case_json: str | None = None  # the case value's canonical JSON: what a worker elsewhere passes the test
    case_metadata_json: str | None = None  # the case's metadata (stored and shown, never fingerprinted)
    keep_sandbox: str | None = None  # `--keep-sandbox failed|all`; the sandbox itself is in `settings`
    eval_module: str | None = None  # the eval's identity (authoring.md): module id and definition name
    eval_name: str | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.experiment_id, self.eval_id, self.ordinal)

    def slot_settings(self) -> SlotSettings:
        return SlotSettings.model_validate(dict(self.settings))


@dataclass(frozen=True, slots=True)
class LiveHandles:
    """What a spec cannot carry: the test function's definition, the adapter, the judge glue."""

    definition: EvalDefinition
    adapter: Adapter | None
    settings: SlotSettings
    grader: JudgeGrader | None = None
    options: Mapping[str, Any] | None = None  # the experiment's options, read-only; None = the spec's
    case: Case | None = None  # the case the test receives (the very value, not a JSON copy)


class SpecMaker:
    """Builds the specs of one run; what many slots share (an eval's attribute, a settings
    object's plain form, an experiment's options) is worked out once, not per slot."""

    def __init__(self, run_id: str, project_root: Path, prices: Mapping[str, Any] | None = None,
                 keep_sandbox: str | None = None) -> None:
        self.run_id = run_id
        self.keep_sandbox = keep_sandbox
        self.project_root = project_root
        self._prices = {model: dict(p) if isinstance(p, Mapping) else p.model_dump()
                        for model, p in (prices or {}).items()}
        self._files: dict[Path, str] = {}  # an eval file as found → resolved (once per file)
        self._settings: dict[int, Mapping[str, Any]] = {}
        self._options: dict[str, Mapping[str, Any]] = {}
        self._modules: dict[str, ModuleType | None] = {}  # by resolved eval file
        self._names: dict[str, dict[int, str]] = {}

    def __call__(self, slot: PlannedSlot) -> SlotSpec:
        definition = slot.eval.definition
        file = self._files.get(slot.eval.file)
        if file is None:
            file = self._files[slot.eval.file] = str(Path(slot.eval.file).resolve())
        settings = self._settings.get(id(slot.settings))
        if settings is None:
            settings = self._settings[id(slot.settings)] = slot.settings.model_dump(mode="json")
        options = self._options.get(slot.experiment.id)
        if options is None:
            options = self._options[slot.experiment.id] = slot.experiment.options_dict()
        case = slot.eval.case
        fingerprint_json = slot.fingerprint_json  # rendered once: the slot holds no fingerprint
        return SlotSpec(
            run_id=self.run_id,
            experiment_id=slot.experiment.id,
            eval_id=slot.eval.id,
            ordinal=slot.ordinal,
            kind=definition.kind,
            eval_file=file,
            eval_attr=self._attribute_of(file, definition),
            project_root=str(self.project_root),
            adapter_ref=slot.experiment.adapter,
            eval_has_adapter=definition.adapter is not None,
            model=slot.experiment.model,
            options=options,
            settings=settings,
            fingerprint=digest(fingerprint_json),
            fingerprint_json=fingerprint_json,
            plan_reason=slot.reason,
            price=self._prices.get(slot.experiment.model) if slot.experiment.model else None,
            case_id=case.id if case is not None else None,
            case_json=case.canonical_json if case is not None else None,
            case_metadata_json=_metadata_json(case.metadata) if case is not None else None,
            keep_sandbox=self.keep_sandbox,
            eval_module=slot.eval.module.base,
            eval_name=definition.name,
        )

    def _attribute_of(self, file: str, definition: EvalDefinition) -> str:
        """The name the eval module binds the definition to."""
        if file not in self._modules:
            self._modules[file] = _loaded_module(Path(file))
        module = self._modules[file]
        if module is None:
            return definition.name
        if getattr(module, definition.name, None) is definition:
            return definition.name  # bound to its own name, as most are: no map of the module
        names = self._names.get(file)
        if names is None:  # the module's bindings by object, once per module (not per eval)
            names = self._names[file] = {}
            for attr, value in vars(module).items():
                names.setdefault(id(value), attr)
        bound = names.get(id(definition))
        if bound is None:
            return definition.name
        if getattr(module, bound, None) is definition:
            return bound
        return next((a for a, v in vars(module).items() if v is definition), definition.name)  # rebound since


def spec_of(slot: PlannedSlot, run_id: str, project_root: Path) -> SlotSpec:
    """One slot's spec (a run makes many: use a SpecMaker)."""
    return SpecMaker(run_id, project_root)(slot)


def _loaded_module(path: Path) -> ModuleType | None:
    """The loaded module whose file is `path` (resolved): only modules of the same file name are
    resolved, not all of `sys.modules` (hundreds of paths to resolve)."""
    name, target = path.name, str(path)
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(name) and os.path.basename(file) == name:
            if str(Path(file).resolve()) == target:
                return module
    return None


def handles_of(slot: PlannedSlot, grader: JudgeGrader | None = None) -> LiveHandles:
    return LiveHandles(
        slot.eval.definition, slot.adapter, slot.settings, grader, slot.experiment.options, slot.eval.case
    )


def import_eval_module(path: Path, project_root: Path) -> ModuleType:
    """The eval module at `path`: the loaded one when this process has it (the driver, a worker
    that ran it before), else imported as discovery imports it (`import_eval_file`)."""
    module = _loaded_module(path)
    if module is not None:
        return module
    root = str(project_root)
    if root not in sys.path:
        sys.path.insert(0, root)
    return import_eval_file(path, project_root)


class HandleCache:
    """A long-lived worker's live objects, resolved once per eval and per experiment (a Ray worker
    has thousands of modules loaded: finding an eval module among them per attempt would cost more
    than a trivial attempt). The case is looked up per spec: it is the spec's, not the eval's."""

    def __init__(self) -> None:
        self._definitions: dict[tuple[str, str], EvalDefinition] = {}
        self._adapters: dict[tuple[str, str], Adapter] = {}
        self._cases: dict[tuple[str, str], dict[str, Case]] = {}

    def cases(self, spec: SlotSpec, definition: EvalDefinition) -> dict[str, Case]:
        where = (spec.eval_file, spec.eval_attr)
        found = self._cases.get(where)
        if found is None:
            found = self._cases[where] = _cases_by_id(definition)
        return found

    def definition(self, spec: SlotSpec) -> EvalDefinition:
        where = (spec.eval_file, spec.eval_attr)
        found = self._definitions.get(where)
        if found is None:
            found = self._definitions[where] = _definition_of(spec)
        return found

    def adapter(self, spec: SlotSpec) -> Adapter | None:
        assert spec.adapter_ref is not None
        key = (spec.experiment_id, spec.adapter_ref)
        found = self._adapters.get(key)
        if found is None:
            found = self._adapters[key] = load_adapter(spec.adapter_ref, spec.options, spec.experiment_id,
                                                       root=Path(spec.project_root))
        return found


def _definition_of(spec: SlotSpec) -> EvalDefinition:
    module = import_eval_module(Path(spec.eval_file), Path(spec.project_root))
    definition = getattr(module, spec.eval_attr, None)
    if not isinstance(definition, EvalDefinition):
        raise LookupError(f"{spec.eval_file} has no eval {spec.eval_attr!r} (for {spec.eval_id})")
    return definition


def resolve_handles(spec: SlotSpec, grader: JudgeGrader | None = None,
                    cache: HandleCache | None = None) -> LiveHandles:
    """Rebuild a spec's live objects in a worker: re-import the eval by path, load the adapter, find
    the case as the dataset holds it. The one way every executor resolves a spec (`cache` reuses
    what a long-lived worker resolved before)."""
    definition = cache.definition(spec) if cache is not None else _definition_of(spec)
    adapter = definition.adapter
    if adapter is None and spec.adapter_ref is not None:
        if cache is not None:
            adapter = cache.adapter(spec)
        else:
            adapter = load_adapter(spec.adapter_ref, spec.options, spec.experiment_id, root=Path(spec.project_root))
    options = MappingProxyType(dict(spec.options))
    index = cache.cases(spec, definition) if cache is not None and spec.case_id is not None else None
    case = _case_of(spec, definition, index)
    return LiveHandles(definition, adapter, spec.slot_settings(), grader, options, case)


def _case_of(spec: SlotSpec, definition: EvalDefinition,
             index: Mapping[str, Case] | None = None) -> Case | None:
    """The spec's case, as the re-imported dataset holds it; from its JSON when the data changed
    since planning (the fingerprint covered the planned value, so that is the one to run)."""
    if spec.case_id is None or spec.case_json is None:
        return None
    if index is None:
        index = _cases_by_id(definition)
    case = index.get(spec.case_id)
    if case is not None and case.canonical_json == spec.case_json:
        return case
    metadata = json.loads(spec.case_metadata_json) if spec.case_metadata_json else None
    return Case(spec.case_id, json.loads(spec.case_json), metadata=metadata if isinstance(metadata, dict) else None)


def _cases_by_id(definition: EvalDefinition) -> dict[str, Case]:
    return {case.id: case for case in definition.cases or ()}


def _metadata_json(metadata: object) -> str | None:
    """A case's metadata as JSON text (anything not JSON is shown by its repr, never an error)."""
    if not metadata:
        return None
    try:
        return json.dumps(metadata, ensure_ascii=False, sort_keys=True, default=repr, allow_nan=False)
    except (ValueError, TypeError):  # NaN, keys that are not strings: shown as text
        return json.dumps(repr(metadata), ensure_ascii=False)
