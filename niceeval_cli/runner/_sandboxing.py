"""The runner's side of sandboxes (sandbox.md): fingerprint parts, the preflight before dispatch,
and one attempt's sandbox from creation to teardown (`AttemptScope`).

Kept here so that `_plan`, `_run` and `_attempt` each need one call: what a sandbox is and how it
is made lives in `niceeval_cli.sandbox`; when the runner makes and removes it lives here.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._redact import redact
from ..sandbox import AttemptSandbox, PrepareFailed, SandboxSpec, kind_for, sandbox_record, should_keep
from ._events import SetupFailure

if TYPE_CHECKING:
    from ._plan import PlannedSlot

__all__ = [
    "AttemptScope",
    "PrepareFailed",
    "SandboxFingerprints",
    "evals_by_experiment",
    "preflight_adapters_in_sandboxes",
    "preflight_sandbox_slots",
    "runs_in_sandbox",
    "sandbox_fingerprint",
]

_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


class SandboxFingerprints:
    """`fingerprint_view` per distinct spec, once per plan (a template digest reads every file)."""

    def __init__(self) -> None:
        self._views: dict[SandboxSpec, dict[str, Any]] = {}

    def __call__(self, spec: SandboxSpec | None) -> dict[str, Any] | None:
        if spec is None:
            return None
        view = self._views.get(spec)
        if view is None:
            view = self._views[spec] = spec.fingerprint_view(image_id=kind_for(spec).identity(spec))
        return view


def sandbox_fingerprint(spec: SandboxSpec | None) -> dict[str, Any] | None:
    """One spec's fingerprint part (use a `SandboxFingerprints` for a whole plan)."""
    return SandboxFingerprints()(spec)


async def preflight_sandbox_slots(slots: Sequence[PlannedSlot]) -> list[SetupFailure]:
    """Every distinct sandbox of the executing slots checked once, before dispatch; one setup
    failure per (experiment, sandbox) that cannot be made here (its slots are not dispatched)."""
    by_spec: dict[SandboxSpec, list[PlannedSlot]] = {}
    for slot in slots:
        spec = slot.settings.sandbox
        if spec is not None:
            by_spec.setdefault(spec, []).append(slot)
    if not by_spec:
        return []
    specs = list(by_spec)
    problems = await asyncio.gather(*(kind_for(spec).check(spec) for spec in specs))
    failures = []
    for spec, problem in zip(specs, problems, strict=True):
        if problem is None:
            continue
        failures += [SetupFailure(experiment_id, evals, _where(spec), None, problem, "sandbox")
                     for experiment_id, evals in evals_by_experiment(by_spec[spec]).items()]
    return failures


def evals_by_experiment(slots: Sequence[PlannedSlot]) -> dict[str, tuple[str, ...]]:
    """Each experiment's eval ids among `slots`, in order, once each: what a setup failure names."""
    found: dict[str, dict[str, None]] = {}
    for slot in slots:
        found.setdefault(slot.experiment.id, {})[slot.eval.id] = None
    return {experiment_id: tuple(evals) for experiment_id, evals in found.items()}


def _where(spec: SandboxSpec) -> str:
    return f"docker image {spec.image}" if spec.kind == "docker" else f"{spec.kind} sandbox"


#: How long an adapter's binary may take to say its version in a throwaway sandbox.
PROBE_TIMEOUT_MS = 30_000


def commands_run_here(spec: SandboxSpec | None) -> bool:
    """An attempt's programs run on this host: no sandbox, or one whose commands run here."""
    return spec is None or kind_for(spec).runs_on_host


def runs_in_sandbox(slot: PlannedSlot) -> bool:
    """The slot's adapter runs its own binary (a coding agent's CLI) in a sandbox whose commands do
    not run on this host: that binary is checked there, not on this host (integrations.md §3)."""
    return hasattr(slot.adapter, "preflight_in") and not commands_run_here(slot.settings.sandbox)


async def preflight_adapters_in_sandboxes(slots: Sequence[PlannedSlot]) -> list[SetupFailure]:
    """Each distinct (adapter, sandbox) of `slots` (all `runs_in_sandbox`) checked once, its binary
    run in a throwaway sandbox of the spec; one setup failure per experiment that cannot run it."""
    groups: dict[tuple[int, SandboxSpec], list[PlannedSlot]] = {}
    for slot in slots:
        assert slot.settings.sandbox is not None
        groups.setdefault((id(slot.adapter), slot.settings.sandbox), []).append(slot)

    async def check(slot: PlannedSlot) -> str | None:
        spec, adapter = slot.settings.sandbox, slot.adapter
        assert spec is not None and adapter is not None
        kind = kind_for(spec)

        async def probe(argv: list[str]) -> Any:
            return await kind.probe(spec, argv, timeout_ms=PROBE_TIMEOUT_MS)

        try:
            cause = await adapter.preflight_in(probe, _where(spec))  # type: ignore[attr-defined]
        except Exception as exc:  # its own failure is its answer, as for a preflight on this host
            cause = f"the preflight of adapter {adapter.name!r} raised {type(exc).__name__}: {exc}"
        return None if cause is None else redact(" ".join(str(cause).split()), [s for s in adapter.secrets if s])

    causes = await asyncio.gather(*(check(group[0]) for group in groups.values()))
    failures = []
    for group, cause in zip(groups.values(), causes, strict=True):
        if cause is None:
            continue
        adapter = group[0].adapter
        assert adapter is not None
        failures += [SetupFailure(experiment_id, evals, adapter.endpoint or adapter.name, None, cause, "adapter")
                     for experiment_id, evals in evals_by_experiment(group).items()]
    return failures


class AttemptScope:
    """One attempt's sandbox: `open` (create, template, prepare, baseline) inside the attempt's
    timeout; `close` after the verdict (kept or removed), whatever happened in between."""

    def __init__(self, spec: SandboxSpec | None, *, keep: str | None, label: str,
                 about: Mapping[str, str], overlap: bool = False) -> None:
        self.spec = spec
        self.keep = keep
        self.overlap = overlap  # remove a container in the background (the executor settles them)
        self.label = _NAME.sub("-", label)[:120]
        self.about = dict(about)
        self.sandbox: AttemptSandbox | None = None

    async def open(self) -> AttemptSandbox | None:
        """None without a sandbox; raises `PrepareFailed` or the kind's error (the attempt's)."""
        if self.spec is None:
            return None
        self.sandbox = await AttemptSandbox.open(self.spec, kind_for(self.spec), label=self.label, about=self.about,
                                                 overlap=self.overlap)
        await self.sandbox.prepare()
        return self.sandbox

    async def close(self, state: str | None) -> str | None:
        """Tear down (kept when `--keep-sandbox` says so for `state`); `attempts.sandbox` JSON."""
        if self.spec is None:
            return None
        if self.sandbox is None:  # never created (cancelled or failed before): say what it was
            return sandbox_record(self.spec, kind_for(self.spec).identity(self.spec))
        await self.sandbox.close(keep=should_keep(self.keep, state), overlap=self.overlap)
        return self.sandbox.record()
